"""Training-log lines that carry nothing skip the per-line parser on the NCCL bulk route.

Traceback frames, CUDA's hints and other lines without a clock (no ``HH:MM:SS``, no date),
without a failure or checkpoint word, short, ended like a sentence or no glog record (so no
terminal can have wrapped them into the next line) change nothing in the reader's state but the record a
terminal may have wrapped, which they forget; the line after a long unfinished record still
goes to the per-line parser (it may continue that record).  Lines from the real-world corpus
(``tests/reference/real_world/pytorch``); expectations counted by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io import _fastscan
from reliab.io.formats import nccl
from tests.test_nccl_bulk import _assert_same
from tests.test_nccl_info_shortcut import _CORPUS, _CORPUS_LINES

#: (line, reaches the per-line parser)
_LINES = [
    ("2024-12-03 12:00:00,000 INFO [trainer] step 1", True),  # the file's first dated line
    ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1.", False),
    ("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", False),
    ("frame #4: <unknown function> + 0x94ac3 (0x7f7d3c294ac3 in /lib/x86_64-linux-gnu/libc.so.6)", False),
    # a long untimed glog record not ended like a sentence: a terminal may wrap it (read from its
    # pieces: an untimed glog record, see test_untimed_glog_records_are_taken_apart_in_bulk)
    ("[W ProcessGroupNCCL.cpp:1856] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this"
     " environment variable is", False),
    ("ignored and will be removed in a later release.", True),  # (its continuation)
    ("frame #5: clone + 0x44 (0x7f7d3c326a04 in /lib/x86_64-linux-gnu/libc.so.6)", False),
    # long and not ended like a sentence, but no glog record (no '[E ' level tag): nothing to wrap
    ("Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635"
     " (most recent call first):", False),
    ("(RayWorkerWrapper pid=14390) INFO 06-12 12:00:01 worker.py:10] init", True),  # a clock
    ("CUDA kernel errors might be asynchronously reported at some other API call", True),  # 'rror'
]
#: near misses of the shape: clocks, dates, checkpoint words, long unfinished lines, colour codes
_NEAR = [
    "frame #1: a long traceback frame line with no clock and no failure word that runs past one hundred chars and on",
    "then a lower-case line that would continue a wrapped record",
    "[rank0]: step 10 | checkpoint saved",
    "Epoch 1 done at 12:00:09 after 3 steps.",
    "see 2024-12-03 for details.",
    "ESC[36m(pid=1)ESC[0m hello.",
    "[rank1]: [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=880,"
    " OpType=BROADCAST) ran for 1800496 milliseconds before timing out.",
    "  [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout.",
    "[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout.",
    "[rank2]:[W ProcessGroupNCCL.cpp:1856] Warning: an untimed record that is not ended like a sentence and runs"
    " past one hundred characters, this",
    "[rank2]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 2] ProcessGroupNCCL preparing to dump debug info.",
    "[I ProcessGroupNCCL.cpp:9]",
    "   ",
    "",
]


def test_lines_without_clock_or_words_skip_the_per_line_parser(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "slurm-3.out"
    path.write_text("\n".join(line for line, _ in _LINES) + "\n")
    full, calls = nccl.parse_line_fully, []

    def counted(text: str, ctx: Any) -> Any:
        calls.append(text)
        return full(text, ctx)

    monkeypatch.setattr(nccl, "parse_line_fully", counted)
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    nccl.read_nccl(str(path), year=2024)
    assert calls == [line for line, per_line in _LINES if per_line]
    _assert_same(path, monkeypatch)


#: untimed glog records of PyTorch 1.x/2.0 (``[E ProcessGroupNCCL.cpp:475] …``, c10 ``LogMessage``
#: without a stamp), optionally behind ``[rankN]:``: the corpus's lines of the shape
_UNTIMED = sorted({line for p in _CORPUS.glob("*.log") for line in p.read_text(errors="replace").splitlines()
                   if re.match(r"(?:\[rank[0-9]+\]: ?)?\[[IWEF] [^\s\]]+:[0-9]+\]", line)})


def test_untimed_glog_records_are_taken_apart_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Their prefix, rank and message come from the columnar pass: ``split_line`` is not called
    for them (the dated line alone goes through it), and the rows are the per-line route's."""
    assert len(_UNTIMED) >= 20
    path = tmp_path / "slurm-4.out"
    near = ["[rank1]: [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout:"
            " WorkNCCL(SeqNum=880, OpType=BROADCAST) ran for 1800496 milliseconds before timing out.",
            "  [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout.",
            "[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout."]
    path.write_text("\n".join(["2024-12-03 12:00:00,000 INFO [trainer] step 1", *_UNTIMED, *near]) + "\n")
    calls = []
    real = nccl.split_line

    def counted(text: str) -> Any:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(nccl, "split_line", counted)
    table = _assert_same(path, monkeypatch)[1]
    calls.clear()
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    nccl.read_nccl(str(path), year=2024)
    assert calls == ["2024-12-03 12:00:00,000 INFO [trainer] step 1", *near[1:]]
    assert (table["signal"] == "nccl:watchdog_timeout").sum() >= 5


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_CORPUS_LINES + [line for line, _ in _LINES] + _NEAR), min_size=1, max_size=60),
       st.sampled_from([2024, None]), st.sampled_from([3, 1000]))
def test_bulk_route_equals_per_line_route_on_inert_mixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         lines: list[str], year: int | None, group: int) -> None:
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 5)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", group)
    path = tmp_path / "slurm-78.out"
    path.write_text("\n".join(lines) + "\n")
    _assert_same(path, monkeypatch, year)
