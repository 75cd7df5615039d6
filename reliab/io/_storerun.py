"""The ``store=`` mode of :func:`reliab.ingest`: each input the pipeline's loop hands over is
planned against the store's ledger, read if it has new content (in process, or on a Dask
cluster ahead of the ledger walk) and added; the whole store is then attributed afresh
(:mod:`reliab.io._store`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.io._discover import Entry
from reliab.io._finish import finish, plan_notes, sources_of
from reliab.io._merge import file_tables
from reliab.io._plan import ReadEntry, RunPlan
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice
from reliab.io._store import LEDGER, STORE_TABLES, Plan, Store, family
from reliab.io._storecheck import locked, wipe

__all__ = ["stored", "Fetch"]


@contextmanager
def stored(store: str | os.PathLike[str], plan: RunPlan, *, strict: bool, progress: bool,
           rebuild: bool = False, engine: str = "local", client: Any = None) -> Iterator[_Stored]:
    """The session behind ``ingest(..., store=...)``, the store locked while it lasts.

    With ``engine="dask"`` every file is planned against the ledger first and those to read
    are read on the cluster (:func:`_prefetch`); the loop then commits them in input order.
    """
    if any(e.url for e in plan.entries):
        raise ValueError("store= takes files only: live sources (scheme://) are read without a store")
    directory = Path(store)
    with locked(directory):
        notes = []
        if rebuild:
            removed = wipe(directory, STORE_TABLES, LEDGER)
            notes.append(f"store {directory} rebuilt from the raw files ({removed} stored file(s) discarded)")
        st = Store(directory)
        notes += st.notes
        if engine != "dask":
            yield _Stored(st, plan, tuple(notes))
            return
        from reliab.io.distributed import dask_client

        with dask_client(client) as c:
            planned, fetch = _prefetch(st, plan, strict, c, progress)
            yield _Stored(st, plan, tuple(notes), planned, fetch)


#: a read started ahead of the ledger walk: returns the file's result and source choice
Fetch = Callable[[], tuple[FileResult, SourceChoice]]


def _prefetch(st: Store, run: RunPlan, strict: bool, client: Any, progress: bool
              ) -> tuple[dict[str, Plan], dict[str, Fetch]]:
    """Plan every file against the ledger as it is now, and read on the cluster those to read.

    The ledger walk (:meth:`_Stored.add`) then reuses a plan unless an earlier file of
    the run changed a record of the same rotation family (then it plans that file again, and
    reads it here if the new plan needs it): the result is that of the one-by-one walk.
    """
    from reliab.io._tasks import Item
    from reliab.io.distributed import read_many

    planned = {e.path: st.plan(e.path) for e in run.entries if e.result is None}
    items = [Item(path, *run.file_options(path)) for path, plan in planned.items() if plan.read]
    return planned, read_many(client, items, strict, progress=progress)


class _Stored:
    """The Store session: each input planned against the ledger, read if needed, added.

    ``planned`` and ``fetch`` (from :func:`_prefetch`) hold plans made before the walk and
    reads started for them; a plan is reused while no earlier file of the run touched a
    record of its rotation family.
    """

    def __init__(self, st: Store, run: RunPlan, notes: tuple[str, ...] = (),
                 planned: dict[str, Plan] | None = None, fetch: dict[str, Fetch] | None = None) -> None:
        self.st, self.run, self.notes, self.planned, self.fetch = st, run, notes, planned or {}, fetch or {}
        self.show = fetch is None  # with Dask the tasks' progress was shown
        self.ahead = False  # the ledger decides what is read (with Dask, ahead of the walk: _prefetch)
        self.statuses: list[str] = []
        self.touched: set[tuple[str, str]] = set()

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read: ReadEntry) -> list[tuple[FileResult, SourceChoice | None]]:
        if entry.result is not None:
            self.statuses.append("set aside")
            return [(entry.result, None)]
        st, early = self.st, self.planned.get(entry.path)
        todo = early if early is not None and family(entry.path) not in self.touched else st.plan(entry.path)
        if todo.read:
            if todo == early and entry.path in self.fetch:
                result, choice = self.fetch[entry.path]()
            else:
                (result, choice), = read(plan, entry, strict)
            result = st.add(todo, result, choice)
        else:
            result, choice = st.skip(todo), st.choice(todo)
        if todo.read or todo.record is not None:  # the ledger may have changed for its kin
            self.touched.add(family(entry.path))
        self.statuses.append(todo.status)
        return [(result, choice)]

    def finish(self, accounting: pd.DataFrame, results: list[FileResult], choices: dict[str, SourceChoice | None],
               attribution: dict[str, Any]) -> IngestResult:
        """Commit the new rows (``accounting`` was checked before) and attribute the whole store."""
        self.st.commit(file_tables)
        accounting["status"] = pd.Series(self.statuses, dtype="string", index=accounting.index)
        return finish(self.st.tables(), accounting, sources_of(results, choices),
                      notes=(*self.notes, *plan_notes(self.run)), **attribution)
