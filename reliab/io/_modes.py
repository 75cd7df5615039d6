"""The modes of :func:`reliab.ingest`: who runs the reads, and where the tables go.

A :class:`Runner` runs the reads: :class:`InProcess` (one file after the other) or
:class:`Dask` (tasks on a cluster, :mod:`reliab.io.distributed`).  A :class:`Sink` is the
function that opens the run's :class:`~reliab.io._plan.Session`: :func:`memory` (the
result holds the tables), Output (partitioned Parquet, :func:`reliab.io._streamed.written`)
or :func:`stored` (the incremental store, :mod:`reliab.io._store`).  The pipeline
(:mod:`reliab.io._driver`) reaches them only through :func:`runner_for` and :func:`sink_for`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from reliab.io._discover import Entry
from reliab.io._merge import TableParts
from reliab.io._plan import Merged, ReadEntry, Rows, RunPlan, Session, plan_notes
from reliab.io._rowtable import batching
from reliab.io._store import LEDGER, STORE_TABLES, Plan, Store
from reliab.io._storecheck import locked, wipe
from reliab.io._storecontent import family

__all__ = ["Runner", "InProcess", "Dask", "Sink", "memory", "stored", "runner_for", "sink_for"]


class Runner(Protocol):
    """Who runs the reads."""

    def reads(self, plan: RunPlan, read: ReadEntry, session: Session, *,
              strict: bool) -> AbstractContextManager[ReadEntry]:
        """The reader the loop hands ``session``: per input, in input order, its ``(result, choice)`` rows."""


class InProcess:
    """The files read one after the other in this process (``engine="local"``)."""

    @contextmanager
    def reads(self, plan: RunPlan, read: ReadEntry, session: Session, *, strict: bool) -> Iterator[ReadEntry]:
        yield read


@dataclass(frozen=True)
class Dask:
    """The files read by tasks on a Dask cluster (``engine="dask"``; ``client`` or a local one):
    :func:`reliab.io.distributed.read_ahead`."""

    client: Any = None

    def reads(self, plan: RunPlan, read: ReadEntry, session: Session, *,
              strict: bool) -> AbstractContextManager[ReadEntry]:
        from reliab.io.distributed import read_ahead

        return read_ahead(session.ahead(plan), read, session, strict=strict, client=self.client)


def runner_for(engine: str, client: Any) -> Runner:
    """The runner of ``engine=`` and ``client=`` (``ValueError`` on a bad pair)."""
    if engine not in ("local", "dask"):
        raise ValueError(f"engine must be 'local' or 'dask', got {engine!r}")
    if engine == "local" and client is not None:
        raise ValueError("client= goes with engine='dask'")
    return InProcess() if engine == "local" else Dask(client)


class Sink(Protocol):
    """Where the tables go: called with the run's plan and runner, a :class:`Session` for the
    pipeline's loop (the run undone if the loop fails)."""

    def __call__(self, plan: RunPlan, runner: Runner) -> AbstractContextManager[Session]: ...


class _Kept(Session):
    """The Memory session: each file's tables gathered in input order (:class:`TableParts`)."""

    def __init__(self, plan: RunPlan) -> None:
        self.plan, self.parts = plan, TableParts()

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read: ReadEntry) -> Rows:
        return [(self.parts.take(result), choice) for result, choice in read(plan, entry, strict)]

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        return Merged(self.parts.tables(), accounting, plan_notes(self.plan))


@contextmanager
def memory(plan: RunPlan, runner: Runner) -> Iterator[Session]:
    """The Memory sink: the tables kept in the result (no ``store=``, no ``output=``)."""
    with batching():  # plain rows of many files converted to Arrow at once (TableParts)
        yield _Kept(plan)


@contextmanager
def stored(store: str | os.PathLike[str], plan: RunPlan, runner: Any = None, *,
           rebuild: bool = False) -> Iterator[_Stored]:
    """The Store sink: the session behind ``ingest(..., store=...)`` (with either ``runner``),
    the store locked while it lasts."""
    if any(e.url for e in plan.entries):
        raise ValueError("store= takes files only: live sources (scheme://) are read without a store")
    directory = Path(store)
    with locked(directory):
        notes = []
        if rebuild:
            removed = wipe(directory, STORE_TABLES, LEDGER)
            notes.append(f"store {directory} rebuilt from the raw files ({removed} stored file(s) discarded)")
        st = Store(directory)
        yield _Stored(st, plan, (*notes, *st.notes))


class _Stored(Session):
    """The Store session: each input planned against the ledger, read if needed, added.

    A Dask runner reads ahead the files that :meth:`ahead` planned as new; the walk
    (:meth:`add`) reuses such a plan while no earlier file of the run touched a record of
    its rotation family, and otherwise plans the file again (and reads it afresh if the new
    plan needs it): the result is that of the one-by-one walk.
    """

    tasks = None  # each file's own tables: the ledger trims and tags them file by file

    def __init__(self, st: Store, run: RunPlan, notes: tuple[str, ...] = ()) -> None:
        self.st, self.run_plan, self.notes = st, run, notes
        self.planned: dict[str, Plan] = {}
        self.statuses: list[str] = []
        self.touched: set[tuple[str, str]] = set()

    def ahead(self, plan: RunPlan) -> RunPlan:
        """The files the ledger, as it is now, says have new content."""
        self.planned = {e.path: self.st.plan(e.path) for e in plan.entries if e.result is None}
        return replace(plan, entries=[e for e in plan.entries if e.result is None and self.planned[e.path].read])

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read: ReadEntry) -> Rows:
        if entry.result is not None:
            self.statuses.append("set aside")
            return read(plan, entry, strict)
        st, early = self.st, self.planned.get(entry.path)
        todo = early if early is not None and family(entry.path) not in self.touched else st.plan(entry.path)
        if todo.read:
            rows = read(plan, entry, strict)  # (read ahead if the early plan said so)
            if early is not None and early.read and todo != early:  # planned again: read it again, now
                rows = read(plan, entry, strict)
            (result, choice), = rows
            result = st.add(todo, result, choice)
        else:
            result, choice = st.skip(todo)
        self.touched.add(family(entry.path))  # the ledger may have changed for its kin
        self.statuses.append(todo.status)
        return [(result, choice)]

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        """Commit the new rows (``accounting`` was checked before); the whole store's tables."""
        self.st.commit()
        accounting["status"] = pd.Series(self.statuses, dtype="string", index=accounting.index)
        return Merged(self.st.tables(), accounting, (*self.notes, *plan_notes(self.run_plan)), "store=")


def sink_for(store: str | os.PathLike[str] | None, output: str | os.PathLike[str] | None,
             rebuild: bool) -> Sink:
    """The sink of ``store=``, ``output=`` and ``rebuild=`` (``ValueError`` on a bad combination):
    :func:`memory`, Output (:func:`reliab.io._streamed.written`) or :func:`stored`."""
    if store is not None:
        if output is not None:
            raise ValueError("store= keeps the tables in the store; output= is for a run without one")
        return partial(stored, store, rebuild=rebuild)
    if rebuild:
        raise ValueError("rebuild=True needs store=")
    if output is None:
        return memory
    from reliab.io._streamed import written

    return lambda plan, runner: written(plan, output, by_tasks=isinstance(runner, Dask))
