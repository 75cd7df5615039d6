"""The host groups' tasks of the telemetry reduction on a Dask cluster.

Each host group's files are cut into runs that follow each other in time
(:func:`reliab.fleet._chunk.time_runs`) and each run is reduced by
:func:`reliab.fleet._chunk.reduce_run`, continuing the run before it (its ``carry``): a
chain of tasks per group, the chains of different groups independent.  With at least two
groups per worker thread the chains keep every thread busy, and a run is one task that
reads its files and finishes their windows.  With fewer groups (a fleet of one pod on two
workers is one chain) a run is two tasks: one reads its files and cuts them into partials
(:func:`reliab.fleet._chunk.file_piece`, which needs nothing of the runs before), one
finishes them from those pieces and the carry of the run before.  The runs are dealt to
the workers' threads in turn and both tasks of a run go to the same worker (another takes
them if that one leaves), so the pieces, much larger than a carry, never move: while one
worker finishes a run, the others read the next ones.  A worker is given the next run once
its run is finished, so the cluster holds the pieces of one run per thread, not of the
fleet, and a finishing task never waits behind a read.  The finishing task computes what
the one-task run computes, from the same pieces, so the windows are the same bit for bit.

The split is chosen by measurement (``benchmarks/bench_fleet_windows.py``, 2 single-threaded
workers on 2 cores, wall time as a multiple of a pyarrow read of the same files, medians of
7 rounds): on an idle machine a fleet of one pod (2,048 GPUs x 30 days) took 2.33x split
against 3.17x as one chain of one-task runs, 64 hosts x 60 days 2.46x against 3.28x, for
0.3-0.4x of the read more CPU; with other jobs holding about a core it lost by 0.2-1.1x,
the two workers' reads then sharing one core.

A group whose runs used sampling intervals other than the group's has those runs reduced
again with the group's intervals (:func:`reliab.fleet._chunk.check_intervals`, a task per
group); the runs' windows and the groups' checks come back in one gather.
"""

from __future__ import annotations

import operator
import uuid
from pathlib import Path
from typing import Any

from reliab.fleet._chunk import Key, Rows, Spec, check_intervals, file_piece, reduce_run, time_runs
from reliab.fleet._local import Plan

__all__ = ["read_run", "run_groups_on_dask"]

#: host groups per worker thread from which a run is one task (fewer: a read task and a finishing task)
GROUPS_PER_THREAD = 2

#: a run as submitted: its files, the carry future it continues, its task's future, its output file
Submitted = tuple[list[str], Any, Any, "str | None"]


def read_run(files: list[str], spec: Spec) -> list[tuple[list[Key], Rows]]:
    """The partials of each file of a run (:func:`reliab.fleet._chunk.file_piece`), in order."""
    return [file_piece(path, spec) for path in files]


def _interval_part(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("names", "per", "gaps", "used")}


def _check(parts: list[dict[str, Any]]) -> tuple[dict[Key, float] | None, list[int]]:
    """:func:`reliab.fleet._chunk.check_intervals` of a group's runs; the intervals only when
    a run is to be reduced again (else they need not travel)."""
    intervals, redo = check_intervals(parts)
    return (intervals if redo else None), redo


def _places(client: Any) -> list[str | None]:
    """A worker address per thread of the cluster (a worker of n threads n times), sorted."""
    threads = client.nthreads()
    return [w for w in sorted(threads) for _ in range(threads[w])] or [None]


def _submit(client: Any, cut: list[list[list[str]]], spec: Spec, folder: Path | None, token: str,
            split: bool) -> list[list[Submitted]]:
    """Submit every group's runs, each continuing the one before; with ``split`` (see the
    module doc) a run's read and its finishing as two tasks on one worker, runs dealt a round
    of groups at a time (every group's first run, then every group's second, ...)."""
    from distributed import wait

    runs: list[list[Submitted]] = [[] for _ in cut]
    carries: list[Any] = [None] * len(cut)
    order = [(r, g) for g, group in enumerate(cut) for r in range(len(group))]
    places = _places(client)
    unfinished: list[Any] = []
    for i, (r, g) in enumerate(sorted(order) if split else order):
        run, last = cut[g][r], r == len(cut[g]) - 1
        target = None if folder is None else str(folder / f"part-{g:05d}-{r:04d}.parquet")
        pieces, where = None, {}
        if split:
            if len(unfinished) >= len(places):
                unfinished = list(wait(unfinished, return_when="FIRST_COMPLETED").not_done)
            place = places[i % len(places)]
            # tasks submitted within the scheduler's FIFO timeout share a priority: a falling
            # one makes a worker run them as submitted, a run's finishing before the next read
            where = {"priority": -2 * i} if place is None else \
                {"workers": [place], "allow_other_workers": True, "priority": -2 * i}
            pieces = client.submit(read_run, run, spec, key=f"reliab-pieces-{g}-{r}-{token}", pure=False, **where)
            where["priority"] = -2 * i - 1
        fut = client.submit(reduce_run, run, carries[g], spec, last=last, output=target, pieces=pieces,
                            key=f"reliab-windows-{g}-{r}-{token}", pure=False, **where)
        runs[g].append((run, carries[g], fut, target))
        unfinished.append(fut)
        if not last:
            carries[g] = client.submit(operator.getitem, fut, "carry", key=f"reliab-carry-{g}-{r}-{token}",
                                       pure=False)
    return runs


def run_groups_on_dask(client: Any, found: Plan, spec: Spec, span_ns: int | None, folder: Path | None,
                       direct: bool | None) -> list[Any]:
    """The windows of every run (frames, or output paths with ``folder``), host groups in order
    and a group's runs in time order; ``None`` for a run without finished windows.

    A run is read and finished by separate tasks when there are fewer than two host groups
    per worker thread (see the module doc); ``direct`` is passed to ``client.gather``.
    """
    token = uuid.uuid4().hex[:8]
    groups, spans, rows = found
    cut = [time_runs(files, [spans[f] for f in files], span_ns, [rows[f] for f in files]) for files in groups]
    runs = _submit(client, cut, spec, folder, token, split=len(groups) < GROUPS_PER_THREAD * len(_places(client)))
    checks = {g: client.submit(_check, [client.submit(_interval_part, fut, key=f"reliab-sketch-{g}-{r}-{token}")
                                        for r, (_, _, fut, _) in enumerate(plan)],
                               key=f"reliab-intervals-{g}-{token}", pure=False)
              for g, plan in enumerate(runs) if len(plan) > 1}
    outputs = [client.submit(operator.getitem, fut, "windows", key=f"reliab-output-{g}-{r}-{token}")
               for g, plan in enumerate(runs) for r, (_, _, fut, _) in enumerate(plan)]
    got = client.gather([*checks.values(), *outputs], direct=direct)  # one round trip
    windows, first = got[len(checks):], [0]
    for plan in runs:
        first.append(first[-1] + len(plan))
    again = []
    for g, (intervals, redo) in zip(checks, got[:len(checks)], strict=True):
        for r in redo:
            run, carry, _, target = runs[g][r]
            fut = client.submit(reduce_run, run, carry, spec, last=r == len(runs[g]) - 1, given=intervals,
                                output=target, key=f"reliab-windows-{g}-{r}-again-{token}", pure=False)
            again.append((first[g] + r, client.submit(operator.getitem, fut, "windows",
                                                      key=f"reliab-output-{g}-{r}-again-{token}")))
    for i, w in zip([i for i, _ in again], client.gather([f for _, f in again], direct=direct), strict=True):
        windows[i] = w
    return windows
