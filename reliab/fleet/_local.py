"""The host groups' tasks of the telemetry reduction run in this process, on its cores.

Without a cluster, Parquet telemetry whose footers give each file's host range is reduced
by the tasks the Dask route submits (:mod:`reliab.fleet._chunk`): the files are cut into
host groups that share no host (:func:`group_by_hosts`), each group's files into runs of
a task span (:func:`reliab.fleet._chunk.time_runs`), and each run reduced by
:func:`reliab.fleet._chunk.reduce_run`, continuing the run before it; a group whose runs used
sampling intervals other than the group's has those runs reduced again
(:func:`reliab.fleet._chunk.check_intervals`).  The work runs on threads: reading the
files (Parquet decoding, pyarrow) and the numpy passes over their samples release the GIL
for most of their time (a sampling profiler, py-spy ``--gil``, saw the GIL held in about a
quarter of the serial reduction's samples).  Each file is read and cut into partials
(:func:`reliab.fleet._chunk.file_piece`) by itself; a run is finished once its files are
read and the run before it in its group is finished.  Every task computes what it computes
on Dask, from the same inputs, so the windows do not depend on the number of threads and
equal the Dask route's bit for bit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pandas as pd

from reliab.fleet._chunk import (
    Spec,
    check_intervals,
    file_piece,
    footer_ranges,
    reduce_run,
    time_runs,
)
from reliab.fleet._frames import parquet_files

__all__ = ["group_by_hosts", "plan", "run_groups", "default_workers", "Plan"]

#: host groups of files, each file's time range (ns) and its rows, from its footer
Plan = tuple[list[list[str]], dict[str, "tuple[int, int] | None"], dict[str, int]]


def group_by_hosts(files: Sequence[str], ranges: Sequence[tuple[str, str]]) -> list[list[str]]:
    """``files`` cut into groups whose host ranges (smallest, largest host) do not overlap."""
    order = sorted(range(len(files)), key=lambda i: ranges[i])
    groups: list[list[str]] = []
    high = ""
    for i in order:
        low, top = ranges[i]
        if groups and low <= high:
            groups[-1].append(files[i])
            high = max(high, top)
        else:
            groups.append([files[i]])
            high = top
    return [sorted(g) for g in groups]


def plan(telemetry: Any) -> Plan | None:
    """Host groups of Parquet input and each file's time range, or ``None`` when the input is
    not Parquet files or a footer lacks the host range (the reduction then reads the rows)."""
    if not isinstance(telemetry, str | os.PathLike | list | tuple):
        return None
    try:
        files = parquet_files(telemetry)
        ranges = {f: footer_ranges(f) for f in files}
    except Exception:  # noqa: BLE001 - unreadable footers: the other routes read the data itself
        return None
    if any(h is None for h, _, _ in ranges.values()):
        return None
    groups = group_by_hosts(files, [ranges[f][0] for f in files])  # type: ignore[misc]
    return groups, {f: r[1] for f, r in ranges.items()}, {f: r[2] for f, r in ranges.items()}


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _group(runs: list[list[str]], spec: Spec) -> list[pd.DataFrame]:
    """One host group's runs in time order, each continuing the one before; the runs whose
    sampling intervals differ from the group's reduced again with the group's (one thread)."""
    results, carries = [], [None]
    for r, run in enumerate(runs):
        got = reduce_run(run, carries[-1], spec, last=r == len(runs) - 1)
        carries.append(got["carry"])
        results.append(got)
    return _checked(runs, results, carries, spec)


def _checked(runs: list[list[str]], results: list[dict[str, Any]], carries: list[Any], spec: Spec
             ) -> list[pd.DataFrame]:
    """The windows of a group's runs, those whose intervals differ from the group's reduced again."""
    if len(runs) > 1:
        intervals, redo = check_intervals(results)
        for r in redo:
            results[r] = reduce_run(runs[r], carries[r], spec, last=r == len(runs) - 1, given=intervals)
    return [got["windows"] for got in results if got["windows"] is not None]


def run_groups(found: Plan, spec: Spec, span_ns: int | None, workers: int) -> list[pd.DataFrame]:
    """The windows of every task, host groups in order and a group's runs in time order.

    With more than one worker, ``workers`` threads read files (:func:`file_piece`: decoding
    and per-file partials, which need nothing of the run before) and ``workers`` threads
    finish runs, each run once its files are read and the run before it in its group is
    finished; runs are opened a round of groups at a time (every group's first run, then
    every group's second, ...), at most ``workers + 1`` open at once, so memory holds a few
    runs, not the fleet.  A single host group's runs so overlap too: the next runs are read
    while one is finished.
    """
    groups, spans, rows = found
    cut = [time_runs(files, [spans[f] for f in files], span_ns, [rows[f] for f in files]) for files in groups]
    if workers <= 1:
        return [w for runs in cut for w in _group(runs, spec)]
    order = sorted(((r, g) for g, runs in enumerate(cut) for r in range(len(runs))))
    slots = threading.BoundedSemaphore(workers + 1)
    done: dict[tuple[int, int], Future] = {}

    def finish(g: int, r: int, reads: list[Future]) -> dict[str, Any]:
        try:
            carry = done[g, r - 1].result()["carry"] if r else None
            return reduce_run(cut[g][r], carry, spec, last=r == len(cut[g]) - 1, pieces=[f.result() for f in reads])
        finally:
            slots.release()

    with ThreadPoolExecutor(workers, thread_name_prefix="reliab-read") as readers, \
            ThreadPoolExecutor(workers, thread_name_prefix="reliab-finish") as finishers:
        try:
            for r, g in order:  # a run's predecessor is submitted before it: no finisher waits on a queued one
                slots.acquire()
                reads = [readers.submit(file_piece, f, spec) for f in cut[g][r]]
                done[g, r] = finishers.submit(finish, g, r, reads)
            results = {k: f.result() for k, f in done.items()}
        except BaseException:
            readers.shutdown(cancel_futures=True)
            finishers.shutdown(cancel_futures=True)
            raise
        carries = {k: got["carry"] for k, got in results.items()}
        checked = [finishers.submit(_checked, runs, [results[g, r] for r in range(len(runs))],
                                    [None] + [carries[g, r] for r in range(len(runs) - 1)], spec)
                   for g, runs in enumerate(cut)]
        return [w for f in checked for w in f.result()]
