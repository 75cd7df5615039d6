"""The NCCL reader's quiet-line shortcut gives exactly what its per-line parser gives.

``parse_nccl_line`` skips the full parse of dated lines that only move the clock
(``reliab.io.formats._nccl_quiet``); ``parse_line_fully`` is the parser without that
shortcut.  Both are run over the same line sequences (signals, glog lines whose year comes
from the dated lines, untimed lines that take the last time, checkpoint lines without a
stamp, launcher prefixes, colour codes, impossible dates, offsets and DST zones) and must
agree row by row, on what they raise, and on the state they leave for ``finish``.
"""

from __future__ import annotations

import glob
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io.formats import _nccl_quiet
from tests._nccl_shortcuts import assert_files_same_without, assert_same_as_per_line

_SAMPLE = Path(__file__).resolve().parents[1] / "data" / "llama3-54d" / "train"

_DATE = st.tuples(st.sampled_from([2023, 2024, 2025, 1677, 2262]), st.integers(1, 13), st.integers(1, 31),
                  st.integers(0, 24), st.integers(0, 60), st.integers(0, 60))
_FRAC = st.sampled_from(["", ",123", ".5", ",123456789", ".0001"])
_OFFSET = st.sampled_from(["", "", "", "Z", "+05:30", "-0800", "+99:99"])
_TAIL = st.sampled_from([
    " INFO [trainer] step 350001 | loss 1.8421 | lr 1.50e-05 |",
    " INFO [checkpoint] saved step 350278 to /ckpt/step_00350278 in 60.0s",
    " INFO [trainer] model and optimizer state loaded for step 350000",
    " ERROR [rank3] uncaught exception, aborting",
    " WARNING NCCL WARN Cuda failure 'unspecified launch failure'",
    " [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran"
    " for 600012 milliseconds before timing out.",
    " INFO Saving model checkpoint to out/checkpoint-500",
    "] iteration 100/ 2000 | lm loss: 2.5 |",
    ",7 INFO step", "x INFO not a stamp end", "",
])
_OTHER = st.sampled_from([
    "[rank0]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE) ran for 600081 milliseconds before timing out.",
    "[rank1]:[E1218 20:27:21.484903450 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  failure detected"
    " by watchdog at work sequence id: 3 PG status: last enqueued work: 5",
    "[E ProcessGroupNCCL.cpp:737] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9)"
    " ran for 1800000 milliseconds before timing out.",
    "I0101 00:00:01.000000 123 trainer.cpp:10] a long glog record (over 100 characters) that a terminal"
    " wrapped in the middle of a wor",
    "d and went on",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "  successfully saved checkpoint from iteration     845 to /ckpt [ t 1/1, p 1/1 ]",
    " [2024-08-01 09:44:55] iteration      100/    2000 | lm loss: 2.5 |",
    "0: 2024-06-03 14:00:00,123 INFO [trainer] step 1 | loss 2.0 |",
    "10.0.0.7: 2024-06-03 14:00:00 INFO step 2",
    "\x1b[32m2024-06-03 14:00:00,123\x1b[0m INFO [trainer] step 3 |",
    "Traceback (most recent call last):",
    "srun: error: node017: task 3: Exited with exit code 1",
    "2024-06-03 14:00:00,123 INFO step 4 \x1b[0m",
    "２０２４-06-03 14:00:00 INFO full-width digits",
])


@st.composite
def _iso_line(draw: st.DrawFn) -> str:
    y, mo, d, hh, mm, ss = draw(_DATE)
    sep = draw(st.sampled_from([" ", "T", "_"]))
    return (f"{y:04d}-{mo:02d}-{d:02d}{sep}{hh:02d}:{mm:02d}:{ss:02d}"
            f"{draw(_FRAC)}{draw(_OFFSET)}{draw(_TAIL)}")


_LINES = st.lists(st.one_of(_iso_line(), _iso_line(), _OTHER), min_size=1, max_size=30)
_TZ = st.sampled_from([UTC, timezone(timedelta(hours=-5)), ZoneInfo("America/New_York"),
                       ZoneInfo("Australia/Lord_Howe")])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES, _TZ)
def test_shortcut_equals_per_line_parser(lines: list[str], tz: Any) -> None:
    assert_same_as_per_line(lines, tz)


@pytest.mark.parametrize("tz", [UTC, ZoneInfo("America/New_York")])
def test_sample_shaped_sequence(tz: Any) -> None:
    """Each kind of line before and after quiet ones: a wrapped glog record, an untimed CUDA
    error, a checkpoint line without a stamp, a glog timeout dated by the lines before it."""
    lines = ["2024-12-31 23:59:59,999 INFO [trainer] step 1 | loss 2.0 |",
             "2024-12-31 23:59:59,999+01:00 INFO [trainer] step 2 | loss 2.0 |",
             "RuntimeError: CUDA error: an illegal memory access was encountered",
             "2025-01-01 00:00:01.5 INFO [trainer] step 3 | loss 2.0 |",
             "  successfully saved checkpoint from iteration     845 to /ckpt [ t 1/1, p 1/1 ]",
             "2025-01-01 00:00:02 INFO [trainer] step 4 | loss 2.0 |",
             "[rank0]:[E1231 23:59:58.903881913 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective"
             " operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE) ran for 600081 milliseconds before timing out.",
             "I0101 00:00:01.000000 123 trainer.cpp:10] a long glog record (over 100 characters) that a"
             " terminal wrapped in the middle of a wor",
             "2025-01-01 00:00:03 INFO [trainer] step 5 | loss 2.0 |"]
    fast = assert_same_as_per_line(lines, tz)
    assert [r is None for r in fast] == [True, True, False, True, False, True, False, True, True]


def test_quiet_line_takes_only_plain_dated_lines() -> None:
    st_: dict[str, Any] = {"tz": UTC, "first_iso": pd.Timestamp("2024-06-03", tz=UTC)}
    assert _nccl_quiet.quiet_line("2024-06-03 14:00:00,123 INFO [trainer] step 1 | loss 2.0 |", st_)
    _nccl_quiet.settle_clock(st_)
    assert st_["iso"] == pd.Timestamp("2024-06-03 14:00:00.123", tz=UTC)
    assert st_["last"] == ("time", st_["iso"]) and st_["progress_time"] == st_["iso"]
    for declined in ("2024-06-03 14:00:00 INFO [checkpoint] saved step 5 to /c in 1.0s",
                     "2024-06-03 14:00:00 ERROR NCCL error in: x.cpp:1, unhandled system error",
                     "[rank0]: 2024-06-03 14:00:00 INFO step 1", "2024-02-30 14:00:00 INFO step 1"):
        assert not _nccl_quiet.quiet_line(declined, st_)
    assert not _nccl_quiet.quiet_line("2024-06-03 14:00:00 INFO step", {"tz": UTC})  # first dated line
    assert not _nccl_quiet.quiet_line("2024-06-03 14:00:00 INFO step",
                                      {"tz": ZoneInfo("Europe/Berlin"), "first_iso": st_["iso"]})


def test_bundled_sample_files_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(glob.glob(str(_SAMPLE / "slurm-*.out")))[::8]
    assert len(files) >= 50
    fast, taken = assert_files_same_without("quiet_line", files, monkeypatch)
    assert sum(taken) > len(taken) / 2  # the shortcut takes most lines of the sample
    assert sum(len(a[5]) for a in fast) > 0


_PREFIX = st.sampled_from(["", "0: ", "12: ", "10.0.0.7: ", "2024: ", "[80746] ", "1234-", "[rank1]:", "2"])


@settings(max_examples=400, deadline=None)
@given(_PREFIX, _iso_line(), st.text(alphabet="0123456789-: ,.T[]Z+", max_size=12))
def test_split_line_dated_shortcut_equals_full_split(prefix: str, line: str, noise: str) -> None:
    from reliab.io.formats import _nccl_messages as msgs

    for text in (prefix + line, noise + line, noise, line[:30]):
        a, b = msgs.split_line(text), msgs._split_all(text)
        assert (a.rank, a.body, a.host, a.glog, a.glog_untimed, a.prefixed) == (
            b.rank, b.body, b.host, b.glog, b.glog_untimed, b.prefixed), text
        assert (a.iso is None) == (b.iso is None), text
        if a.iso is not None and b.iso is not None:
            assert (a.iso.span(), a.iso.groups()) == (b.iso.span(), b.iso.groups()), text
