"""``reliab.ingest(..., output=)`` on job tables: the in-memory run's tables, in memory that grows slowly.

The manifest keeps where each part's rows were in the task's table (:mod:`reliab.io._partitioned`);
a job table whose rows alternate between end dates has one run of rows per job, which the
manifest must not hold as one ``[start, length]`` pair each.  Repeated job records are merged
once, while the held job files are written (:meth:`reliab.io._streamed.OutputWriter.jobs`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_streamed_output import assert_same, write_kernel_log

import reliab
from reliab.io import _partitioned

_HEAD = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList"
         "|Restarts|AllocTRES\n")
_STATES = ["COMPLETED"] * 8 + ["FAILED", "NODE_FAIL", "TIMEOUT", "CANCELLED by 123"]


def write_sacct(path: Path, ids: range, seed: int) -> None:
    """``sacct -P`` rows of the jobs ``ids``, each ending on a day of June 2024 that a hash of
    its id and ``seed`` picks (the same day for the same job in every export)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.write(_HEAD)
        for i in ids:
            d, h, k = 1 + ((i * 2_654_435_761 + seed) >> 11) % 27, i % 24, 1 << (i % 4)
            fh.write(f"{5_000_000 + i}|{5_000_000 + i}|job-{i % 50}|user{i % 30}|train|{_STATES[i % 12]}|0:0|"
                     f"2024-06-{d:02d}T{h:02d}:00:00|2024-06-{d:02d}T{h:02d}:05:00|2024-06-{d:02d}T{h:02d}:55:00|"
                     f"00:50:00|{k}|node[{i % 200:04d}-{i % 200 + k - 1:04d}]|0|cpu=224,gres/gpu={8 * k},node={k}\n")


@pytest.mark.parametrize("rows", [[7], [0, 1, 2, 3], [3, 4, 9], list(range(0, 400, 3)), [0, 1, 2**33]])
def test_part_positions_round_trip(rows: list[int]) -> None:
    record = {"table": "jobs", "rows": len(rows), "task": 0, **_partitioned._located(np.asarray(rows, np.int64))}
    assert _partitioned.positions(record).tolist() == rows
    if all(r < 1000 for r in rows):  # (no 2**33-long array of new positions)
        moved = _partitioned.remap(record, np.arange(1000, dtype=np.int64) * 2)
        assert _partitioned.positions(moved).tolist() == [2 * r for r in rows]


def test_positions_of_a_manifest_with_runs_are_read() -> None:
    """A folder committed by an earlier version (``runs`` only) reads as it did."""
    record = {"table": "signals", "rows": 5, "task": 2, "runs": [[3, 2], [9, 1], [20, 2]]}
    assert _partitioned.positions(record).tolist() == [3, 4, 9, 20, 21]
    assert _partitioned.parts_in_order([record, {**record, "runs": [[0, 1]]}])[0]["runs"] == [[0, 1]]


def test_jobs_alternating_dates_make_a_small_manifest(tmp_path: Path) -> None:
    """5,400 jobs ending on random days: every job is a run of its date's part.  Held as
    ``[start, length]`` pairs the manifest took ~35 bytes a row (indented JSON); the gaps,
    compressed, take under 2."""
    path = tmp_path / "in" / "sacct.txt"
    write_sacct(path, range(5_400), seed=1)
    memory = reliab.ingest(path)
    streamed = reliab.ingest(path, output=tmp_path / "out")
    assert len(memory.jobs) == 5_400 and len(memory.signals) == 5_400
    assert_same(memory, streamed)
    size = (tmp_path / "out" / _partitioned.MANIFEST).stat().st_size
    assert size < 4 * (len(memory.jobs) + len(memory.signals)), size


def test_parquet_text_read_without_a_python_string_per_cell(tmp_path: Path) -> None:
    """Signals read back from Parquet (``output=``'s attribution, ``read_table``): the text columns
    go from Arrow to Arrow-backed ``string`` directly.  Through Python strings (one object per
    cell, ~540 bytes a signal row) the read-back of 1M sacct signals peaked ~500 MiB above its
    Arrow table.  The values and dtypes are those of the table written."""
    import tracemalloc

    from reliab import schema

    n = 20_000
    signals = schema.conform(pd.DataFrame({
        "time": pd.date_range("2024-06-01", periods=n, freq="s", tz="UTC"),
        "host": [f"node{i % 97:04d}" for i in range(n)], "gpu": None,
        "job_id": [str(5_000_000 + i) for i in range(n)], "source": "sacct",
        "signal": "slurm:completed", "severity": "info", "message": "COMPLETED",
        "origin": [f"/data/sacct.txt:{i + 2}" for i in range(n)]}), "signals")
    schema.write_parquet(signals, str(tmp_path / "s.parquet"), "signals")
    import pyarrow.parquet as pq

    arrow = pq.read_table(tmp_path / "s.parquet")
    tracemalloc.start()
    try:
        back = schema.from_parquet_arrow(arrow, "signals")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    pd.testing.assert_frame_equal(back, signals)
    assert peak < 40 * n, peak  # the time column (8 bytes a row) and the checks' masks; no text


def test_job_files_around_a_log_with_repeated_jobs(tmp_path: Path) -> None:
    """Two sacct exports (the second repeats 500 jobs of the first) with a kernel log between
    them: two held tasks, repeated records merged once, their signals dropped, Xid lines at
    failed jobs' ends attributed; the folder and the result equal the in-memory run."""
    logs = tmp_path / "logs"
    write_sacct(logs / "a_sacct.txt", range(3_000), seed=2)
    write_sacct(logs / "c_sacct.txt", range(2_500, 4_000), seed=2)
    first = reliab.ingest(logs / "a_sacct.txt").jobs
    failed = first.loc[first["state"].astype(str) == "FAILED"].head(20)
    events = [(end - pd.Timedelta(minutes=1), f"node{int(j) % 4:04d}") for j, end in zip(
        failed["job_id"].astype(int) - 5_000_000, failed["end"], strict=True)]
    write_kernel_log(logs / "b_kern.log", 1_500, seed=3, events=events)
    memory = reliab.ingest(logs)
    streamed = reliab.ingest(logs, output=tmp_path / "out")
    assert len(memory.jobs) == 4_000 and any("repeated by another input" in n for n in memory.notes)
    assert memory.signals["source"].astype(str).value_counts().to_dict()["sacct"] == 4_000
    assert len(memory.interruptions) + len(memory.user_failures) > 0
    assert_same(memory, streamed)


_CHILD = """
import sys
import polars, pyarrow, pyarrow.parquet  # noqa: F401 - imported before the baseline is read
import reliab
def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key)) * 1024
before = status("VmRSS:")
result = reliab.ingest(sys.argv[1], output=sys.argv[2])
assert len(result.jobs) == int(sys.argv[3]), len(result.jobs)
print(status("VmHWM:") - before)
"""


def _peak(tmp_path: Path, n: int) -> int:
    """Peak RSS above the interpreter's (bytes) of an ``output=`` ingest of ``n`` sacct jobs."""
    import reliab as package

    path = tmp_path / f"sacct{n}" / "sacct.txt"
    write_sacct(path, range(n), seed=7)
    env = {**os.environ, "PYTHONPATH": str(Path(package.__file__).parents[1])}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(tmp_path / f"out{n}"), str(n)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_output_memory_per_job(tmp_path: Path) -> None:
    """``output=`` on 100,000 and 300,000 sacct jobs: the peak grows by under 1,250 bytes a job
    (the slope, so the interpreter's and Parquet's fixed costs do not count).  Before: 1,526
    (the manifest's per-row runs, the job files' tables copied, their signals read back
    through Python strings); now ~960 (~710 from 250k to 1M jobs): the jobs table the result
    holds and the signals attribution reads (for sacct, one per job), reordered once, with the
    attribution's working memory (``benchmarks/bench_hostile_memory.py``, ``sacct_1m_jobs_output``)."""
    low, high = _peak(tmp_path, 100_000), _peak(tmp_path, 300_000)
    per_job = (high - low) / 200_000
    assert per_job < 1_250, per_job
