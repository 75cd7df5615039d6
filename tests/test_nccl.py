"""Training-log parser: ProcessGroupNCCL watchdog lines, CUDA errors, glog years, fuzzing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io.formats._timestamps import resolve_tz
from reliab.io.formats.nccl import job_from_path, parse_nccl_line, read_nccl, sniff_nccl

# glog lines of a real 2-rank capture (domain.md §5.2), around job log lines and a traceback
LOG = """\
2024-12-18 20:00:00,123 INFO step 100 loss 2.31
[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.
[rank1]:[E1218 20:27:21.484903450 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 547, last completed work: -1
[rank1]:[E1218 20:27:21.484941868 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled.
[rank0]:[E1218 20:27:21.486305774 ProcessGroupNCCL.cpp:1895] [PG ID 1 PG GUID 1 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(...) ran for 600081 milliseconds before timing out.
terminate called after throwing an instance of 'c10::DistBackendError'
Traceback (most recent call last):
  File "train.py", line 10, in <module>
    loss.backward()
RuntimeError: CUDA error: an illegal memory access was encountered
[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered
[rank2]: RuntimeError: CUDA error: out of memory
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def test_watchdog_and_cuda_signals(tmp_path: Path) -> None:
    res = read_nccl(_write(tmp_path, "slurm-4242.out", LOG))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (12, 5, 7, 0)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["nccl:watchdog_timeout", "nccl:failure_detected",
                                      "cuda:illegal_memory_access", "cuda:uncorrectable_ecc", "cuda:error"]
    assert sig["time"].tolist() == [_ts("2024-12-18 20:27:21.426415540"), _ts("2024-12-18 20:27:21.484903450"),
                                    *[_ts("2024-12-18 20:27:21.486305774")] * 3]
    assert sig["message"].iloc[0] == (
        "rank 0: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST,"
        " NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds")
    assert sig["message"].iloc[1] == "rank 1: failure detected by watchdog at work sequence id: 1"
    assert sig["message"].iloc[3] == "rank 3: CUDA error: uncorrectable ECC error encountered"
    assert set(sig["job_id"]) == {"4242"}
    assert sig["host"].isna().all() and sig["gpu"].isna().all()
    assert sig["severity"].tolist() == ["error", "error", "error", "critical", "error"]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["2", "3", "10", "11", "12"]


def test_plain_glog_form_and_job_option(tmp_path: Path) -> None:
    text = ("2024-06-03 14:00:00,000 INFO start\n"
            "E0603 14:02:11.426415 12345 ProcessGroupNCCL.cpp:629] [Rank 7] Watchdog caught collective"
            " operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,"
            " Timeout(ms)=600000) ran for 600500 milliseconds before timing out.\n")
    res = read_nccl(_write(tmp_path, "train.log", text), job_id="77")
    row = res.tables["signals"].iloc[0]
    assert row["time"] == _ts("2024-06-03 14:02:11.426415")
    assert row["job_id"] == "77" and row["message"].startswith("rank 7: ")


def test_glog_year_sources(tmp_path: Path) -> None:
    glog = "[rank0]:[E0101 00:00:05.000000000 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1) ran for 5 milliseconds\n"
    # rollover: ISO Dec 31 then glog Jan 1 -> next year
    res = read_nccl(_write(tmp_path, "slurm-1.out", "2023-12-31 23:59:59,000 INFO x\n" + glog))
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-01-01 00:00:05")
    # the file's first ISO line when none precedes
    res = read_nccl(_write(tmp_path, "slurm-2.out", glog + "2024-01-01 00:01:00,000 INFO x\n"))
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-01-01 00:00:05")
    # year= option; else the file's modification time, said in the notes
    path = _write(tmp_path, "slurm-3.out", glog)
    assert read_nccl(path, year=2025).tables["signals"]["time"].iloc[0] == _ts("2025-01-01 00:00:05")
    stamp = _ts("2025-03-02 10:00:00").timestamp()
    os.utime(path, (stamp, stamp))
    res = read_nccl(path)
    assert (res.parsed, res.malformed) == (1, 0)
    assert res.tables["signals"]["time"].iloc[0] == _ts("2025-01-01 00:00:05")
    assert "inferred from the file's modification time" in res.notes[0] and "lines 1" in res.notes[0]
    stamp = _ts("2025-12-31 23:00:00").timestamp()  # a glog date later in the calendar: last year
    path = _write(tmp_path, "slurm-4.out", glog.replace("E0101", "E1231"))
    os.utime(path, (_ts("2026-01-02").timestamp(),) * 2)
    assert read_nccl(path).tables["signals"]["time"].iloc[0] == _ts("2025-12-31 00:00:05")


def test_untimed_lines_take_the_nearest_time_else_the_mtime(tmp_path: Path) -> None:
    """Before any dated line: the first time after it; with none at all: the file's mtime."""
    text = ("RuntimeError: CUDA error: misaligned address\n"
            "2024-06-03 14:00:00,000 INFO x\n")
    res = read_nccl(_write(tmp_path, "slurm-5.out", text))
    assert res.tables["signals"]["time"].tolist() == [_ts("2024-06-03 14:00:00")] and not res.notes
    path = _write(tmp_path, "slurm-6.out", "RuntimeError: CUDA error: misaligned address\n")
    os.utime(path, (_ts("2024-07-01 08:00:00").timestamp(),) * 2)
    res = read_nccl(path)
    assert (res.parsed, res.malformed) == (1, 0)
    assert res.tables["signals"]["time"].tolist() == [_ts("2024-07-01 08:00:00")]
    assert "inferred from the file's modification time" in res.notes[0]


def test_time_zone_option(tmp_path: Path) -> None:
    text = "2024-06-03 16:00:00,000 INFO x\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    res = read_nccl(_write(tmp_path, "slurm-7.out", text), tz="Europe/Berlin")
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-06-03 14:00:00")


def test_job_and_sniff() -> None:
    assert job_from_path("train/slurm-123456.out") == "123456"
    assert job_from_path("x.log") is None
    assert sniff_nccl("slurm-1.out", []) == 0.9
    assert sniff_nccl("a.txt", ["[rank0]:[E1218 20:27:21.4 ProcessGroupNCCL.cpp:629] x"]) == 0.8
    assert sniff_nccl("a.txt", ["hello"]) == 0.0


LOGISH = st.sampled_from([
    "[rank0]:", "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] ", "Watchdog caught collective operation timeout: ",
    "WorkNCCL(SeqNum=1, Timeout(ms)=6) ran for 5 milliseconds", "failure detected by watchdog at work sequence id: ",
    "CUDA error: ", "2024-12-18 20:00:00,123 ", "\n", "RuntimeError: ", "[Rank 3]", "E0230 ", "9999-99-99 99:99:99 ",
])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOGISH, st.text(max_size=10)), max_size=12).map("".join))
def test_fuzz_parse_line_text(text: str) -> None:
    ctx = LineContext(path="f", source="nccl", state={"tz": resolve_tz(None), "job_id": None})
    for line in text.split("\n"):
        try:
            parse_nccl_line(line, ctx)
        except ParseError:
            pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOGISH.map(str.encode), st.binary(max_size=16)), max_size=20).map(b"".join),
       st.sampled_from([None, 2024]))
def test_fuzz_read_nccl_bytes(data: bytes, year: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "slurm-9.out")
        with open(path, "wb") as fh:
            fh.write(data)
        res = read_nccl(path, year=year)
    assert res.lines == res.parsed + res.irrelevant + res.malformed
    assert len(res.quarantine) == res.malformed
