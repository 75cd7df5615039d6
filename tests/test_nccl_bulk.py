"""The NCCL reader's column-wise route for storms gives what its per-line route gives.

Large and compressed training logs are read by :mod:`reliab.io.formats._nccl_bulk`: every
line goes to the bulk hook, which drops quiet NCCL lines column-wise, takes glog records and
NCCL failure lines apart with one regex per group and leaves every other line to the
per-line parser, holding the rows until the end of the file.  Small files are read line by
line (``_fastscan.FAST_MIN_BYTES``), so the two routes are compared on the same files with
that size moved: on random mixes of the real-world corpus's NCCL/PyTorch lines and of storm
shapes, cut into many small groups (state carried across them), and on whole corpus files.
"""

from __future__ import annotations

import glob
import gzip
from pathlib import Path
from typing import Any

import pytest
from _routes import assert_same_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_nccl_storm import write_storm
from reliab.io import _fastscan
from reliab.io.formats import nccl
from tests.test_nccl_info_shortcut import _CORPUS, _CORPUS_LINES, _DECLINED, _INFO, _OTHER

_SAMPLE = Path(__file__).resolve().parents[1] / "data" / "llama3-54d" / "train"
#: storm shapes (bench_nccl_storm) and their near misses
_STORM = [
    "[rank3]:[E1203 12:00:05.000005 ProcessGroupNCCL.cpp:1414] [PG 0 Rank 3] Watchdog caught collective"
    " operation timeout: WorkNCCL(SeqNum=103, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
    " ran for 600003 milliseconds before timing out.",
    "[rank3]:[E1203 12:20:05.000005 ProcessGroupNCCL.cpp:1414] [PG 0 Rank 3] Watchdog caught collective"
    " operation timeout: WorkNCCL(SeqNum=103, OpType=ALLREDUCE) ran for 600003 milliseconds before timing out.",
    "node03:1003:2003 [3] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer"
    " 10.0.0.3<40003> with status=12 opcode=0",
    "node05:1005:2005 [5] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer"
    " 10.0.0.5<40005> with status=12 opcode=0",
    "I1203 12:00:00.000004 1003 ProcessGroupNCCL.cpp:803] [Rank 3] ProcessGroupNCCL initialization options: size: 8",
    "E1203 12:00:01.5 1003 ProcessGroupNCCL.cpp:803] [Rank 3] failure detected by watchdog at work sequence id: 7",
    "[rank1]: [E1330 25:61:61.1234567890 x.cpp:1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"
    " ran for 5 milliseconds",
    "node01:1001:2001 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via P2P/IPC",
    "node01:1001:2001 [1] NCCL INFO Channel 01/0 : a long chatter line over a hundred characters, not ended like"
    " a sentence so a terminal",
    "node01:1001:2001 [1] NCCL WARN Cuda failure 'out of memory'",
    "node01:1001:2001 [1] misc/socket.cc:50 NCCL WARN socket error 2024-12-03 12:00:00 peer gone",
    "[rank2]:[W1203 12:00:09.000000 ProcessGroupNCCL.cpp:1] checkpoint saved at step 3",
    "[rank2]:[E1203 12:00:09.000000 ProcessGroupNCCL.cpp:1] caf\u00e9 Watchdog caught collective operation timeout:"
    " WorkNCCL(SeqNum=4) ran for 9 milliseconds",
    "\tat some.frame(File.java:1)",
    "",
]
_MIX = st.lists(st.sampled_from(_CORPUS_LINES + _STORM + _INFO + _DECLINED + _OTHER), min_size=1, max_size=80)


def _result(path: Path, bulk: bool, monkeypatch: pytest.MonkeyPatch, year: int | None = 2024) -> tuple[Any, ...]:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if bulk else 1 << 62)
    res = nccl.read_nccl(str(path), year=year)
    return (res.lines, res.parsed, res.irrelevant, res.malformed, res.notes), res.tables["signals"], res.quarantine


def _assert_same(path: Path, monkeypatch: pytest.MonkeyPatch, year: int | None = 2024) -> tuple[Any, ...]:
    fast = _result(path, True, monkeypatch, year)
    slow = _result(path, False, monkeypatch, year)
    assert_same_reads(fast, slow, path)
    return fast


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_MIX, st.sampled_from([2024, None]), st.sampled_from([3, 7, 1000]))
def test_bulk_route_equals_per_line_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          lines: list[str], year: int | None, group: int) -> None:
    """Random mixes, cut into groups of ``group`` lines (batches of 5 lines)."""
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 5)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", group)
    path = tmp_path / "slurm-77.out"
    path.write_text("\n".join(lines) + "\n")
    _assert_same(path, monkeypatch, year)


def test_corpus_files_equal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole real-world files (plain, and gzip: the streamed route) and the bundled sample."""
    files = sorted(glob.glob(str(_CORPUS / "*.log"))) + sorted(glob.glob(str(_SAMPLE / "slurm-*.out")))[::16]
    assert len(files) > 80
    signals = 0
    for f in files:
        signals += len(_assert_same(Path(f), monkeypatch, None)[1])
    for f in files[::6]:
        packed = tmp_path / (Path(f).name + ".gz")
        packed.write_bytes(gzip.compress(Path(f).read_bytes()))
        _assert_same(packed, monkeypatch, None)
    assert signals > 100


def test_storm_lines_skip_the_per_line_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the benchmark's storm only the dated first line reaches ``parse_line_fully``; NCCL
    lines right after a long unpunctuated glog record (a terminal's wrap) are read with it
    from their pieces, and they are there."""
    path = tmp_path / "slurm-7.out"
    write_storm(path, 3000, 7)
    lines = path.read_text().splitlines()
    wraps = sum(1 for before, line in zip(lines, lines[1:], strict=False)
                if before.startswith("I1203") and len(before) >= 100 and line.startswith("node"))
    assert wraps > 100
    full, calls = nccl.parse_line_fully, [0]

    def counted(text: str, ctx: Any) -> Any:
        calls[0] += 1
        return full(text, ctx)

    monkeypatch.setattr(nccl, "parse_line_fully", counted)
    fast = _assert_same(path, monkeypatch)
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    calls[0] = 0
    nccl.read_nccl(str(path), year=2024)
    assert calls[0] == 1 and len(fast[1]) > 0


@pytest.mark.parametrize("damage", [b"\r\n", b"\xff\xfe", b"\r"])
def test_polars_fallbacks_keep_the_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes) -> None:
    """A carriage return or invalid UTF-8 part-way sends the rest of the file to the per-line
    parser (polars cannot read it exactly): the rows read in bulk before and the state they
    left must still give the per-line route's result."""
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 50)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", 40)
    path = tmp_path / "slurm-9.out"
    write_storm(path, 400, 3)
    lines = path.read_bytes().split(b"\n")
    lines[300] = lines[300] + damage
    path.write_bytes(b"\n".join(lines))
    fast = _assert_same(path, monkeypatch)
    assert len(fast[1]) > 10


def _watchdog(rank: int, second: int) -> str:
    return (f"[rank{rank}]:[E1203 {12 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000000"
            f" ProcessGroupNCCL.cpp:1414] [PG 0 Rank {rank}] Watchdog caught collective operation timeout:"
            f" WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.")


def test_repeat_windows_and_eviction_under_the_bulk_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One rank's watchdog timeout repeated (1) every 10 lines at one time for 11,000 lines: a
    new row once the last kept one is more than 5,000 lines back (lines 2, 5012, 10022); (2)
    once a second for 1,300 seconds: a new row past 600 s (3 rows); (3) between NET/IB
    statements, which push the kept one out of the last 256 statements."""
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 1000)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", 700)
    lines = ["2024-12-03 12:00:00,000 INFO [trainer] step 1"]
    lines += [_watchdog(1, 0) if n % 10 == 0 else _STORM[7] for n in range(11_000)]
    lines += [_watchdog(2, 3600 + s) for s in range(1300)]
    lines += [_watchdog(3, 7200) if n % 2 else _STORM[2] for n in range(1200)]
    path = tmp_path / "slurm-5.out"
    path.write_text("\n".join(lines) + "\n")
    fast = _assert_same(path, monkeypatch)
    table = fast[1]
    origin = [int(o.rsplit(":", 1)[1]) for o in table.loc[table["signal"] == "nccl:watchdog_timeout", "origin"]]
    first = [o for o in origin if o <= 11_001]
    assert first == [2, 5012, 10022]
    assert len([o for o in origin if 11_001 < o <= 12_301]) == 3  # seconds 0, 601, 1202
    assert len([o for o in origin if o > 12_301]) >= 3
