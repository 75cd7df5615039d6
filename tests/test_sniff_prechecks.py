"""The cheap pre-checks and early exits of the sniffers decide exactly what the full checks
decide: a line the kernel pre-check turns away has no usable timestamp, a line that is not
turned away by the ``--reltime`` pre-check is the only kind that can be a ``--reltime`` line,
and stopping once half of the lines miss gives the score of reading them all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats import kernel
from reliab.io.formats._timestamps import STYLE_WEIGHT, parse_header
from reliab.io.formats.slurm import _headerless_row, _is_header, _mostly_headerless
from reliab.io.formats.slurm import _sniff as sniff_sacct

REAL = Path(__file__).parent / "reference" / "real_world"
#: pieces of every timestamp style (and of near misses) that random lines are built from
_PIECES = ["[", "]", "+", " ", ".", ":", ",", "-", "T", "Z", "<13>1 ", "<6>", "kern  :warn  : ", "daemon:info: ",
           "[  +0.000001] ", "[Jun26 06:24] ", "[Mon Jun  3 14:02:11 2024] ", "[12345.678901] ",
           "2024-06-03T14:02:11.123456+00:00 ", "2024-06-03T14:02:11,123456+00:00 ", "Jun  3 14:02:11 ",
           "6,3964,206764307,-;", "host kernel: ", "NVRM: Xid", "²", "é", "_", "\t", "0", "9", "févr. ",
           "1655360|FAILED|127:0", "|", "COMPLETED", "4312001.batch"]
_PIECES += ["JobID", "JOBID", "State", "STATE", "jobid|state", "------------ ", "\u0130", "\u212a", "sacct"]
_LINE = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join) | st.text(max_size=40)


def _corpus_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(REAL.rglob("*")):
        if path.is_file() and not path.name.endswith(".toml"):
            lines += path.read_text(errors="replace").splitlines()[:60]
    return lines


def _weight(line: str) -> float:
    h = parse_header(line)
    return STYLE_WEIGHT[h.style] if h.error is None and h.body.strip() else 0.0


def _kernel_score(lines: list[str], weight: Callable[[str], float] = _weight) -> float:
    """``sniff_kernel`` as it was: every line weighed (by a full parse, by default), repeats included."""
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return 0.0
    if sum(ln.startswith(kernel._NO_CLOCK) for ln in lines) * 2 >= len(lines):
        return 0.5
    hits = [w for w in map(weight, lines) if w > 0]
    frac = len(hits) / len(lines)
    if frac < 0.5:
        return 0.0
    bonus = 0.05 if any("kernel" in ln or "NVRM" in ln for ln in lines) else 0.0
    return min(1.0, frac * max(hits) + bonus)


def test_corpus_lines_agree() -> None:
    lines = _corpus_lines()
    assert len(lines) > 1000
    for line in lines:
        assert kernel._stamp_weight(line) == _weight(line), line
        if parse_header(line).style == "dmesg_reltime":
            assert kernel._RELTIME_START.match(line), line


@settings(max_examples=400, deadline=None)
@given(_LINE)
def test_pre_checks_never_turn_away_a_timestamp(line: str) -> None:
    assert kernel._stamp_weight(line) == _weight(line)
    full, bare = parse_header(line), parse_header(line, tail=False)  # what sniffing reads is the same
    assert (bare.style, bare.when, bare.partial, bare.body, bare.error) == (
        full.style, full.when, full.partial, full.body, full.error)
    if parse_header(line).style == "dmesg_reltime":
        assert kernel._RELTIME_START.match(line)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=20))
def test_early_exits_keep_the_score(lines: list[str]) -> None:
    assert kernel.sniff_kernel("x.log", lines) == _kernel_score(lines)
    rows = [ln for ln in lines if ln.strip()]
    if rows:
        assert _mostly_headerless(rows) == (sum(map(_headerless_row, rows)) * 2 >= len(rows))


def _sacct_score(path: str, lines: list[str]) -> float:
    """The sacct sniffer as it was: every row and every header candidate checked in full."""
    for line in lines[:3]:
        if "|" in line and _is_header(line.split("|")):
            return 0.95
    rows = [ln for ln in lines if ln.strip()]
    if rows and sum(_headerless_row(ln) for ln in rows) * 2 >= len(rows):
        return 0.6
    for first, second in zip(lines[:3], lines[1:4], strict=False):
        words = {w.lower() for w in first.split()}
        if {"jobid", "state"} <= words and second.strip() and set(second.strip()) <= {"-", " "}:
            return 0.95
    if "sacct" in path.lower() and any(line.count("|") >= 3 for line in lines):
        return 0.5
    return 0.0


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=8))
def test_sacct_pre_checks_keep_the_score(lines: list[str]) -> None:
    assert sniff_sacct("sacct.txt", lines) == _sacct_score("sacct.txt", lines)


#: head lines of several styles, some repeated by the draws below
_HEAD_LINES = ["[Fri Jun  7 12:13:51 2024] mlx5_core 0000:8c:00.1: failed", "[Fri Jun  7 12:13:51 2024] ",
               "2024-06-03T14:02:11.123456+00:00 node1 kernel: NVRM: Xid 79", "Jun  3 14:02:11 node1 kernel: x",
               "[12345.678901] nvme nvme0: I/O error", "random text", "", "   ", "[  +0.000001] y", "<6>kernel: z"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_HEAD_LINES), max_size=20))
def test_repeated_lines_keep_the_score(lines: list[str]) -> None:
    """The kernel sniffer weighs a repeated head line once: the score is that of weighing every line."""
    assert kernel.sniff_kernel("x.log", lines) == _kernel_score(lines, kernel._stamp_weight)
