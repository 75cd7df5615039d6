"""The host groups' tasks of the telemetry reduction on a Dask cluster.

Each host group's files are cut into runs that follow each other in time
(:func:`reliab.fleet._chunk.time_runs`) and each run is reduced by one task,
:func:`reliab.fleet._chunk.reduce_run`, continuing the run before it (its ``carry``): a
chain of tasks per group, the chains of different groups independent.  This is the route
for Parquet files with host ranges in their footers whatever the number of groups: a fleet
of one pod is one chain, which one worker runs while the others idle, and still takes a
few times the read where the shuffle of pandas partials by host took 80 times.

Splitting a run into a task that reads its files (:func:`reliab.fleet._chunk.file_piece`)
and one that finishes them, so that the other workers read the next runs, was measured on
2 workers sharing 2 cores with other jobs: it lost on every fleet tried (one, two and four
pods), by 0.2-1.1 times the read, the two workers' reads contending for the same cores.

A group whose runs used sampling intervals other than the group's has those runs reduced
again with the group's intervals (:func:`reliab.fleet._chunk.check_intervals`, a task per
group); the runs' windows and the groups' checks come back in one gather.
"""

from __future__ import annotations

import operator
import uuid
from pathlib import Path
from typing import Any

from reliab.fleet._chunk import Key, Spec, check_intervals, reduce_run, time_runs
from reliab.fleet._local import Plan

__all__ = ["run_groups_on_dask"]

#: a run as submitted: its files, the carry future it continues, its task's future, its output file
Submitted = tuple[list[str], Any, Any, "str | None"]


def _interval_part(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("names", "per", "gaps", "used")}


def _check(parts: list[dict[str, Any]]) -> tuple[dict[Key, float] | None, list[int]]:
    """:func:`reliab.fleet._chunk.check_intervals` of a group's runs; the intervals only when
    a run is to be reduced again (else they need not travel)."""
    intervals, redo = check_intervals(parts)
    return (intervals if redo else None), redo


def _submit(client: Any, cut: list[list[list[str]]], spec: Spec, folder: Path | None,
            token: str) -> list[list[Submitted]]:
    """Submit every group's runs, each continuing the one before."""
    runs: list[list[Submitted]] = []
    for g, group in enumerate(cut):
        carry, plan = None, []
        for r, run in enumerate(group):
            last = r == len(group) - 1
            target = None if folder is None else str(folder / f"part-{g:05d}-{r:04d}.parquet")
            fut = client.submit(reduce_run, run, carry, spec, last=last, output=target,
                                key=f"reliab-windows-{g}-{r}-{token}", pure=False)
            plan.append((run, carry, fut, target))
            if not last:
                carry = client.submit(operator.getitem, fut, "carry", key=f"reliab-carry-{g}-{r}-{token}", pure=False)
        runs.append(plan)
    return runs


def run_groups_on_dask(client: Any, found: Plan, spec: Spec, span_ns: int | None, folder: Path | None,
                       direct: bool | None) -> list[Any]:
    """The windows of every run (frames, or output paths with ``folder``), host groups in order
    and a group's runs in time order; ``None`` for a run without finished windows
    (``direct`` is passed to ``client.gather``)."""
    token = uuid.uuid4().hex[:8]
    groups, spans, rows = found
    cut = [time_runs(files, [spans[f] for f in files], span_ns, [rows[f] for f in files]) for files in groups]
    runs = _submit(client, cut, spec, folder, token)
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
