"""The ``store=`` mode of :func:`reliab.ingest`: each input the pipeline's loop hands over is
planned against the store's ledger, read if it has new content (in process, or by a Dask
runner ahead of the ledger walk) and added; the store is committed and its whole content
handed back, to be attributed afresh (:mod:`reliab.io._store`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.io._discover import Entry
from reliab.io._finish import Merged, Rows, Session, plan_notes
from reliab.io._merge import file_tables
from reliab.io._plan import ReadEntry, RunPlan
from reliab.io._store import LEDGER, STORE_TABLES, Plan, Store, family
from reliab.io._storecheck import locked, wipe

__all__ = ["stored"]


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
            return [(entry.result, None)]
        st, early = self.st, self.planned.get(entry.path)
        todo = early if early is not None and family(entry.path) not in self.touched else st.plan(entry.path)
        if todo.read:
            rows = read(plan, entry, strict)  # (read ahead if the early plan said so)
            if early is not None and early.read and todo != early:  # planned again: read it again, now
                rows = read(plan, entry, strict)
            (result, choice), = rows
            result = st.add(todo, result, choice)
        else:
            result, choice = st.skip(todo), st.choice(todo)
        if todo.read or todo.record is not None:  # the ledger may have changed for its kin
            self.touched.add(family(entry.path))
        self.statuses.append(todo.status)
        return [(result, choice)]

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        """Commit the new rows (``accounting`` was checked before); the whole store's tables."""
        self.st.commit(file_tables)
        accounting["status"] = pd.Series(self.statuses, dtype="string", index=accounting.index)
        return Merged(self.st.tables(), accounting, (*self.notes, *plan_notes(self.run_plan)), "store=")
