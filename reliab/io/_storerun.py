"""The ``store=`` mode of :func:`reliab.ingest`: each file planned against the store's ledger,
those with new content read (in process, or on a Dask cluster ahead of the ledger walk) and
committed, and the whole store attributed afresh (:mod:`reliab.io._store`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.io._finish import finish, plan_notes, sources_of
from reliab.io._merge import file_tables
from reliab.io._merge import progress as progress_bar
from reliab.io._plan import RunPlan
from reliab.io._readfile import choose_source, read_file
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice
from reliab.io._steps import Steps
from reliab.io._store import LEDGER, STORE_TABLES, Plan, Store, family
from reliab.io._storecheck import locked, wipe

__all__ = ["ingest_into", "Fetch"]


def ingest_into(store: str | os.PathLike[str], plan: RunPlan, steps: Steps, *, strict: bool, progress: bool,
                attribution: dict[str, Any], rebuild: bool = False, engine: str = "local",
                client: Any = None) -> IngestResult:
    """The incremental driver behind ``ingest(..., store=...)``.

    Plans every file against the ledger, reads those with new content through the shared
    per-file reader (with ``engine="dask"`` on the cluster, see :func:`_prefetch`), commits
    the new rows and returns the attributed whole store with this run's accounting
    (column ``status``).
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
        if engine != "dask":
            return _ingest_locked(st, plan, steps, strict=strict, progress=progress, attribution=attribution,
                                  notes=(*notes, *st.notes))
        from reliab.io.distributed import dask_client

        with dask_client(client) as c:
            planned, fetch = _prefetch(st, plan, strict, c, progress)
            return _ingest_locked(st, plan, steps, strict=strict, progress=False, attribution=attribution,
                                  notes=(*notes, *st.notes), planned=planned, fetch=fetch)


#: a read started ahead of the ledger walk: returns the file's result and source choice
Fetch = Callable[[], tuple[FileResult, SourceChoice]]


def _prefetch(st: Store, run: RunPlan, strict: bool, client: Any, progress: bool
              ) -> tuple[dict[str, Plan], dict[str, Fetch]]:
    """Plan every file against the ledger as it is now, and read on the cluster those to read.

    The ledger walk of :func:`_ingest_locked` then reuses a plan unless an earlier file of
    the run changed a record of the same rotation family (then it plans that file again, and
    reads it here if the new plan needs it): the result is that of the one-by-one walk.
    """
    from reliab.io._tasks import Item
    from reliab.io.distributed import read_many

    planned = {e.path: st.plan(e.path) for e in run.entries if e.result is None}
    items = [Item(path, *run.file_options(path)) for path, plan in planned.items() if plan.read]
    return planned, read_many(client, items, strict, progress=progress)


def _ingest_locked(st: Store, run: RunPlan, steps: Steps, *, strict: bool, progress: bool,
                   attribution: dict[str, Any], notes: tuple[str, ...] = (),
                   planned: dict[str, Plan] | None = None, fetch: dict[str, Fetch] | None = None) -> IngestResult:
    """:func:`ingest_into` once the store is locked.

    ``planned`` and ``fetch`` (from :func:`_prefetch`) hold plans made before the walk and
    reads started for them; a plan is reused while no earlier file of the run touched a
    record of its rotation family.
    """
    results: list[FileResult] = []
    statuses: list[str] = []
    choices: dict[str, SourceChoice | None] = {}
    touched: set[tuple[str, str]] = set()
    advance, close = progress_bar(len(run.entries), progress)
    try:
        for entry in run.entries:
            if entry.result is not None:
                result, choice, status = entry.result, None, "set aside"
            else:
                early = (planned or {}).get(entry.path)
                plan = early if early is not None and family(entry.path) not in touched else st.plan(entry.path)
                if plan.read:
                    if plan == early and fetch and entry.path in fetch:
                        read, choice = fetch[entry.path]()
                    else:
                        forced, why, options = run.file_options(entry.path)
                        choice = choose_source(Path(entry.path), forced, strict, why)
                        read = read_file(entry.path, choice, options, strict)
                    result = st.add(plan, read, choice)
                else:
                    result, choice = st.skip(plan), st.choice(plan)
                if plan.read or plan.record is not None:  # the ledger may have changed for its kin
                    touched.add(family(entry.path))
                status = plan.status
            choices[result.path] = choice
            results.append(result)
            statuses.append(status)
            advance()
    finally:
        close()
    accounting = steps.accounting(results)  # checked before anything is committed
    st.commit(file_tables)
    accounting["status"] = pd.Series(statuses, dtype="string", index=accounting.index)
    return finish(st.tables(), accounting, sources_of(results, choices), notes=(*notes, *plan_notes(run)),
                  **attribution)
