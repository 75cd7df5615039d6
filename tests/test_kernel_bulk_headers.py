"""The kernel reader's bulk route on every header style and every kernel shape of the real-world corpus.

The bulk route (``_bulk_route.kernel_rows``) must give what the per-line parser gives, whatever the
header (rsyslog RFC 3339, ``journalctl -o short-iso``, ``dmesg -T``, RFC 3164, raw printk) and
whatever the message: the messages are sampled from ``tests/reference/real_world/kernel/``.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io import _fastscan
from reliab.io._lines import LineContext
from reliab.io.formats._timestamps import parse_header
from reliab.io.formats.kernel import _bulk_route, read_kernel

CORPUS = Path(__file__).parent / "reference" / "real_world" / "kernel"
T0 = 1717423331.0  # 2024-06-03T14:02:11Z


@cache
def corpus_messages() -> tuple[str, ...]:
    """Every distinct kernel message of the corpus (the text after its header, tag and printk time)."""
    seen: dict[str, None] = {}
    for path in sorted(CORPUS.glob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            header = parse_header(line)
            text = header.message if header.style != "none" else line
            if text.strip():
                seen.setdefault(text, None)
    return tuple(seen)


def with_header(style: str, t: float, host: str, message: str) -> str:
    """``message`` as a line of ``style`` written at UTC epoch ``t`` by ``host``."""
    g = time.gmtime(t)
    if style == "rfc3339":
        return time.strftime("%Y-%m-%dT%H:%M:%S", g) + f".{int(t * 1e6) % 1000000:06d}+00:00 {host} kernel: {message}"
    if style == "short-iso":
        return time.strftime("%Y-%m-%dT%H:%M:%S+0000", g) + f" {host} kernel: {message}"
    if style == "rfc3164":
        return time.strftime("%b ", g) + f"{g.tm_mday:2d} " + time.strftime("%H:%M:%S", g) + f" {host} kernel: {message}"
    if style == "ctime":
        return time.strftime("[%a %b ", g) + f"{g.tm_mday:2d} " + time.strftime("%H:%M:%S %Y] ", g) + message
    return f"[{t - T0 + 12.5:12.6f}] {message}"


STYLES = ("rfc3339", "short-iso", "ctime", "rfc3164", "printk")


def _hits(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"i": list(range(len(lines))), "line": lines}, schema={"i": pl.UInt32, "line": pl.String})


FILLER = "2024-06-03T15:00:00Z n9 kernel: EDAC MC0: 1 CE filler"


@pytest.mark.parametrize("style", ["ctime", "short-iso"])
def test_bulk_takes_signal_lines_of_other_headers(style: str) -> None:
    """``dmesg -T`` and ``journalctl -o short-iso`` lines of the common shapes are read in bulk,
    with the time their header states (UTC) and the host the file gives (``dmesg -T``) or names."""
    messages = ["NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                "EDAC MC1: 262 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0)",
                "mce: [Hardware Error]: Machine check events logged",
                "pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5"]
    lines = [with_header(style, T0 + k, "node7", m) for k, m in enumerate(messages)]
    lines += [FILLER] * (_bulk_route._AER_LINES + 1)  # the tail of a group is always left to the per-line parser
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "file-host"})
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rest["i"].to_list() == list(range(4, len(lines)))
    assert rest["line"].to_list() == lines[4:]
    assert rows["signal"].to_list() == ["xid:79", "edac:correctable", "mce:events_logged", "pcie:aer_corrected"]
    assert rows["time"].to_list() == [datetime(2024, 6, 3, 14, 2, 11 + k, tzinfo=UTC) for k in range(4)]
    assert set(rows["host"].to_list()) == {"file-host" if style == "ctime" else "node7"}


def test_dmesg_t_left_to_the_per_line_parser_in_a_zone_with_dst() -> None:
    """A ``dmesg -T`` time in a zone with summer time is local: those lines stay with the per-line parser."""
    from zoneinfo import ZoneInfo

    lines = [with_header("ctime", T0, "n", "mce: [Hardware Error]: Machine check events logged")]
    lines += [FILLER] * (_bulk_route._AER_LINES + 1)
    ctx = LineContext(path="x", source="kernel", state={"tz": ZoneInfo("Europe/Berlin"), "host": "h"})
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rows.height == 0 and rest["line"].to_list()[0] == lines[0]


def _result(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if fast else 1 << 60)
    res = read_kernel(str(path), year=2024)
    signals = res.tables["signals"].astype(str).values.tolist()
    return (res.lines, res.parsed, res.irrelevant, res.malformed, signals,
            res.quarantine.astype(str).values.tolist(), res.notes)


@st.composite
def _corpus_log(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A log of one header style: corpus messages, random hosts, forward times, repeats."""
    style = draw(st.sampled_from(STYLES))
    messages = corpus_messages()
    picks = draw(st.lists(st.tuples(st.integers(0, len(messages) - 1), st.integers(1, 3),
                                    st.sampled_from(["node1", "gpu-a7", "n3"]), st.integers(0, 90)),
                          min_size=1, max_size=40))
    t, lines = T0, []
    for index, repeat, host, step in picks:
        t += step
        lines += [with_header(style, t, host, messages[index])] * repeat
    return style, lines


@settings(max_examples=int(os.environ.get("KBULK_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_corpus_log())
def test_bulk_route_equals_per_line_route_on_corpus_mixes(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path_factory: pytest.TempPathFactory,
                                                           log: tuple[str, list[str]]) -> None:
    """The reader with the bulk route == the pure per-line reader (rows, accounting, quarantine,
    notes) on random mixes of every kernel message of the corpus, in every header style."""
    _, lines = log
    path = tmp_path_factory.mktemp("k") / "node7.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _result(path, True, monkeypatch) == _result(path, False, monkeypatch)


#: corpus messages of shapes the bulk route reads since issue 24, and the row the per-line matcher
#: gives each (written by hand from ``_kmsg``'s wording)
_NEW_SHAPES = [
    ("{35}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4",
     "apei:hardware_error", "error", "Hardware error from APEI Generic Hardware Error Source: 4"),
    ("igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Down", "nic:link_down", "warning", "eth0: Link is Down"),
    ("mt7530-mdio mdio-bus:1f lan: Link is Down", "nic:link_down", "warning", "lan: Link is Down"),
    ("nvme nvme2: Removing after probe failure status: -19", "nvme:removed", "critical",
     "nvme2: Removing after probe failure status: -19"),
    ("mlx5_core 0000:1a:00.0: mlx5_pcie_event:299:(pid 9): Detected insufficient power on the PCIe slot (27W).",
     "nic:pcie_power", "warning", "0000:1a:00.0: Detected insufficient power on the PCIe slot (27W)."),
]


def test_bulk_takes_more_corpus_shapes() -> None:
    """APEI report heads, Intel/phylib ``Link is Down``, nvme removal and mlx5 slot power lines are
    read in bulk, each with the row the per-line matcher gives."""
    lines = [with_header("rfc3339", T0 + k, "node7", shape[0]) for k, shape in enumerate(_NEW_SHAPES)]
    lines += [FILLER] * (_bulk_route._AER_LINES + 1)
    ctx = LineContext(path="x", source="kernel", state={"tz": UTC, "host": "h"})
    rows, rest = _bulk_route.kernel_rows(_hits(lines), ctx)
    assert rest["i"].to_list() == list(range(len(_NEW_SHAPES), len(lines)))
    assert rows.select("signal", "severity", "message").rows() == [s[1:] for s in _NEW_SHAPES]
    assert rows["host"].to_list() == ["node7"] * len(_NEW_SHAPES)
