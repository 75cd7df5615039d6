"""The NCCL reader's shortcut for NCCL ``INFO`` chatter gives exactly what its per-line parser gives.

NCCL's own lines start ``<host>:<pid>:<tid> [<dev>] NCCL INFO`` (NCCL ``src/debug.cc``); in a
storm most of a job's lines are such set-up and return-code chatter.  One without a failure
or checkpoint word carries no time and no signal: the per-line parser only forgets the
record a terminal may have wrapped.  The lines below are real ones (tests/reference/
real_world/pytorch) mixed at random with watchdog storms, glog records (one long and
unpunctuated, so the next line may continue it) and dated lines; ``parse_nccl_line`` and
``parse_line_fully`` must agree row by row, after ``finish``, and on the state they leave.
"""

from __future__ import annotations

import glob
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io.formats._nccl_bulk_info import info_line
from tests._nccl_shortcuts import (
    assert_files_same_without,
    assert_same_as_per_line,
    context,
)

_CORPUS = Path(__file__).resolve().parent / "reference" / "real_world" / "pytorch"
_CORPUS_FILES = sorted(glob.glob(str(_CORPUS / "*.log")))
#: every line of the corpus's NCCL and PyTorch watchdog logs (those naming NCCL)
_CORPUS_LINES = sorted({line for f in _CORPUS_FILES
                        for text in [Path(f).read_text(errors="replace")]
                        if "NCCL" in text or "ProcessGroupNCCL" in text
                        for line in text.splitlines()})

_INFO = [
    "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO include/net.h:26 -> 6",
    "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6",
    "babel-0-31:2324238:2324238 [2] NCCL INFO Bootstrap : Using ibs8:172.16.1.17<0>",
    "babel-0-31:2324238:2324238 [2] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open"
    " shared object file: No such file or directory : when loading libnccl-net.so",
    "babel-0-31:2324239:2324522 [3] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels",
    "A03-R28-I49-2-6000166:104934:105018 [0] NCCL INFO proxy.cc:3 -> 6",
    "I0101:1:2 [0] NCCL INFO a host named like a glog level",
    "babel-0-31:2324238:2324238 [2] NCCL INFO started 2024-05-11 14:10:52 on this rank",
]
#: lines the shortcut must leave to the per-line parser
_DECLINED = [
    "babel-0-31:2324238:2324238 [2] NCCL INFO Error while creating a checkpoint",
    "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<40000>"
    " with status=12 opcode=0",
    "(train_rft pid=2657296) n176-080-198:1:2 [0] NCCL INFO Bootstrap : Using eth0",
    "\x1b[32mbabel-0-31:2324238:2324238 [2] NCCL INFO colour\x1b[0m",
    "2024-05-11 14:10:52.224 n176-080-198:1:2 [0] NCCL INFO Bootstrap : Using eth0",
]
_OTHER = [
    "2024-06-03 14:00:00,123 INFO [trainer] step 1 | loss 2.0 |",
    "[rank1]:[E1203 12:00:01.000000 ProcessGroupNCCL.cpp:1414] [PG 0 Rank 1] Watchdog caught collective"
    " operation timeout: WorkNCCL(SeqNum=101, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
    " ran for 600001 milliseconds before timing out.",
    "[rank2]:[E1203 12:30:01.000000 ProcessGroupNCCL.cpp:1414] [PG 0 Rank 2] Watchdog caught collective"
    " operation timeout: WorkNCCL(SeqNum=102, OpType=ALLREDUCE) ran for 600002 milliseconds before timing out.",
    "I0101 00:00:01.000000 123 trainer.cpp:10] a long glog record (over 100 characters) that a terminal"
    " wrapped in the middle of a wor",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "[E ProcessGroupNCCL.cpp:737] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9)"
    " ran for 1800000 milliseconds before timing out.",
]
_LINES = st.lists(st.sampled_from(_INFO + _DECLINED + _OTHER), min_size=1, max_size=40)
_TZ = st.sampled_from([UTC, timezone(timedelta(hours=-5))])


def test_info_line_takes_plain_nccl_info_chatter() -> None:
    ctx = context(UTC)
    ctx.lineno = 5
    for text in _INFO:
        assert info_line(text, ctx), text
    for text in _DECLINED:
        assert not info_line(text, ctx), text
    ctx.state["prev"] = (4, None)  # the line before was a long glog record: this may continue it
    assert not info_line(_INFO[0], ctx)
    ctx.state["prev"] = (3, None)  # not just before: forgotten, as the per-line parser forgets it
    assert info_line(_INFO[0], ctx) and ctx.state["prev"] is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES, _TZ)
def test_info_shortcut_equals_per_line_parser(lines: list[str], tz: Any) -> None:
    assert_same_as_per_line(lines, tz)


def test_info_line_after_wrapped_record_left_to_parser() -> None:
    """A long unfinished glog record, then a long INFO line: the per-line parser reads the
    two as one wrapped record and keeps it for the next line; the shortcut must not differ."""
    lines = [_OTHER[3], _INFO[3], _INFO[0]]
    for tail in (lines, lines[:2]):
        assert_same_as_per_line(tail, UTC)  # (rows, rows after finish, state)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_CORPUS_LINES), min_size=1, max_size=60), _TZ)
def test_corpus_line_mixes_equal_per_line_parser(lines: list[str], tz: Any) -> None:
    """Random mixes of the real-world corpus's NCCL/PyTorch log lines, shortcut or not."""
    assert_same_as_per_line(lines, tz)


def test_corpus_files_equal_without_info_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole corpus files: signals, accounting, quarantine and notes equal with and without
    the INFO shortcut, and the shortcut takes lines of them."""
    assert len(_CORPUS_LINES) > 300
    _, taken = assert_files_same_without("info_line", _CORPUS_FILES, monkeypatch)
    assert sum(taken) > 50
