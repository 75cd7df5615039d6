"""The host groups' tasks of the telemetry reduction run in this process, on its cores.

Without a cluster, Parquet telemetry whose footers give each file's host range is reduced
by the tasks the Dask route submits (:mod:`reliab.fleet._chunk`): the files are cut into
host groups that share no host (:func:`group_by_hosts`), each group's files into runs of
a task span (:func:`reliab.fleet._chunk.time_runs`), and each run reduced by
:func:`reliab.fleet._chunk.reduce_run`, continuing the run before it; a group whose runs used
sampling intervals other than the group's has those runs reduced again
(:func:`reliab.fleet._chunk.check_intervals`).  The groups run on a pool of threads (the
reading, decoding and numpy passes release the GIL for most of their time); each group's
runs stay in order in one thread, so the windows do not depend on the number of threads and
equal the Dask route's bit for bit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from reliab.fleet._chunk import Spec, check_intervals, footer_ranges, reduce_run, time_runs
from reliab.fleet._frames import parquet_files

__all__ = ["group_by_hosts", "plan", "run_groups", "default_workers", "Plan"]

#: host groups of files, and each file's time range (ns) from its footer
Plan = tuple[list[list[str]], dict[str, "tuple[int, int] | None"]]


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
    if any(h is None for h, _ in ranges.values()):
        return None
    groups = group_by_hosts(files, [ranges[f][0] for f in files])  # type: ignore[misc]
    return groups, {f: r[1] for f, r in ranges.items()}


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _group(runs: list[list[str]], spec: Spec) -> list[pd.DataFrame]:
    """One host group's runs in time order, each continuing the one before; the runs whose
    sampling intervals differ from the group's reduced again with the group's."""
    results, carries = [], [None]
    for r, run in enumerate(runs):
        got = reduce_run(run, carries[-1], spec, last=r == len(runs) - 1)
        carries.append(got["carry"])
        results.append(got)
    if len(runs) > 1:
        intervals, redo = check_intervals(results)
        for r in redo:
            results[r] = reduce_run(runs[r], carries[r], spec, last=r == len(runs) - 1, given=intervals)
    return [got["windows"] for got in results if got["windows"] is not None]


def run_groups(found: Plan, spec: Spec, span_ns: int | None, workers: int) -> list[pd.DataFrame]:
    """The windows of every task, host groups in order and a group's runs in time order, the
    groups reduced on ``workers`` threads."""
    groups, spans = found
    cut = [time_runs(files, [spans[f] for f in files], span_ns) for files in groups]
    if workers <= 1 or len(cut) == 1:
        done = [_group(runs, spec) for runs in cut]
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(cut)), thread_name_prefix="reliab-windows") as pool:
            done = list(pool.map(_group, cut, [spec] * len(cut)))
    return [w for windows in done for w in windows]
