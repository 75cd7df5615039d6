"""Memory of the attribution on a large job table: no Python object per job where a few shared
ones say the same.

A million-job ``sacct -P`` capture has a handful of end states; the outcome, reason and state
of each job are one of a few sentences, so a per-job copy of the text (``numpy.full`` with a
string fill value makes one ``str`` per element; Arrow to ``object`` makes one per row) costs
~50-70 bytes a job for nothing.  The job rows follow ``sacct(1)`` (Slurm 25.11)
``--parsable2`` output.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np

import reliab
from reliab.taxonomy._policy import decide

STATES = ["COMPLETED"] * 8 + ["FAILED", "NODE_FAIL", "TIMEOUT", "CANCELLED by 123"]


def _sacct(path: Path, n: int) -> Path:
    """``n`` sacct jobs, a quarter of them unsuccessful, ending on the hour."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|NNodes|NodeList\n")
        for i in range(n):
            d, h = 1 + i % 27, i % 24
            fh.write(f"{700_000 + i}|job-{i % 50}|user{i % 30}|train|{STATES[i % 12]}|0:0|2024-06-{d:02d}T{h:02d}:00:00|"
                     f"2024-06-{d:02d}T{h:02d}:05:00|2024-06-{d:02d}T{h:02d}:55:00|1|node{i % 200:04d}\n")
    return path


def test_decide_shares_one_string_per_sentence() -> None:
    n = 12_000
    state = np.asarray(["COMPLETED", "FAILED", "NODE_FAIL", "TIMEOUT"] * (n // 4), dtype=object)
    infra = np.arange(n) % 8 == 1  # half the FAILED jobs have infrastructure evidence
    outcome, reason = decide("fleet", state, np.ones(n, bool), infra, np.zeros(n, bool))
    # 3 outcomes (interruption, user failure, not an interruption); reasons: one per state and case
    assert len({id(x) for x in outcome}) <= 3
    assert len({id(x) for x in reason}) <= 6
    assert set(outcome[state == "COMPLETED"]) == {"not_interruption"}
    assert set(outcome[state == "NODE_FAIL"]) == {"interruption"}


def _heap_peak(tmp_path: Path, n: int) -> int:
    """Peak Python heap (numpy arrays included, Arrow buffers not) of job_outcomes on n jobs."""
    res = reliab.ingest(_sacct(tmp_path / f"sacct{n}.txt", n), source="sacct")
    assert len(res.jobs) == n
    tracemalloc.start()
    try:
        out = reliab.job_outcomes(res.signals, res.jobs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out.outcomes) == n
    return peak


def test_job_outcomes_holds_no_python_string_per_job(tmp_path: Path) -> None:
    # the heap per added job (the rules and the few shared sentences cancel out): int64 codes,
    # positions and masks, object arrays of shared sentences; one str per job adds >= 50 B
    # (the code with per-job strings measured 260 B/job here)
    n = 6_000
    per_job = (_heap_peak(tmp_path, 2 * n) - _heap_peak(tmp_path, n)) / n
    assert per_job < 215, f"{per_job:.0f} B/job"  # ~175 now; one more str per job: > 225
