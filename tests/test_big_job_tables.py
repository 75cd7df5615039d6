"""Working memory of the end of an ingest on a big job table (repeated-job check, cost keys).

A 10M-job ``sacct -P`` capture peaks in the attribution and the costs, on top of the jobs and
signals tables; every int64 array per job there is 80 MB.  The job rows follow ``sacct(1)``
(Slurm 25.11) ``--parsable2`` output (:func:`test_attribution_memory._sacct`).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
from test_attribution_memory import _sacct

import reliab
from reliab.io._job_merge import _all_distinct
from reliab.models.jobs._timeline import needed_allocations


@pytest.mark.parametrize("values", [["7", "8", "9"], ["7", "8", "7"], ["7", None, "8"], ["7", None, None],
                                    [None], ["7 ", "7"]])
def test_job_ids_distinct_as_pandas_counts_them(values: list[str | None]) -> None:
    # missing ids count as one value (two missing ids are a repeat); no stripping here
    expected = len(set(values)) == len(values)
    halves = [pd.Series(values[:1], dtype="string[pyarrow]"), pd.Series(values[1:], dtype="string[pyarrow]")]
    ids = pd.concat(halves, ignore_index=True)  # two Arrow chunks
    assert _all_distinct(ids) is expected
    assert _all_distinct(ids.astype("string[python]")) is expected


def _cost_keys_heap(tmp_path: Path, n: int) -> int:
    """Peak Python heap (numpy arrays included) of the cost step's allocation choice on n jobs."""
    res = reliab.ingest(_sacct(tmp_path / f"sacct{n}.txt", n), source="sacct")
    out = reliab.taxonomy.job_outcomes(res.signals, res.jobs)
    tracemalloc.start()
    try:
        rows = needed_allocations(res.jobs, res.signals, [out.interruptions, out.user_failures])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows.dtype == bool and len(rows) == n and rows.any()
    return peak


def test_cost_keys_hold_few_int64_arrays_at_once(tmp_path: Path) -> None:
    # the keys built through a temporary per step, the sorted keys beside the unsorted ones and
    # every job's end and start times alive together: 109 B/job; in place, each array freed
    # when done, the ends of the asked allocations only: ~95 B/job
    n = 6_000
    per_job = (_cost_keys_heap(tmp_path, 2 * n) - _cost_keys_heap(tmp_path, n)) / n
    assert per_job < 102, f"{per_job:.0f} B/job"
