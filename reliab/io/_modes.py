"""The modes of :func:`reliab.ingest`: who runs the reads, and where the tables go.

Two small interfaces, one implementation per mode:

* a :class:`Runner` runs the reads: :class:`InProcess` (one file after the other in this
  process) or :class:`Dask` (tasks on a Dask cluster, :mod:`reliab.io.distributed`);
* a :class:`Sink` takes the tables: :func:`memory` (the result holds them), Output
  (partitioned Parquet, ``output=``, with either runner: :mod:`reliab.io._streamed`,
  :mod:`reliab.io._partitioned`) or Store (the incremental store, ``store=``:
  :mod:`reliab.io._storerun`, :mod:`reliab.io._store`); a sink is the function that opens
  its session.

The pipeline (:mod:`reliab.io._driver`) owns the one loop over the planned inputs: it opens
the sink (a :class:`~reliab.io._finish.Session`), hands it every input in
order (:meth:`Session.add`, which has it read with the runner's reader and keeps its tables),
finishes what the session merged (:meth:`Session.close`, then
:func:`reliab.io._finish.finish`) and lets the session commit the result
(:meth:`Session.commit`); the reads are the runner's (:meth:`Runner.reads`; with Dask its
tasks batch small files, split large ones, and join or write their tables on the workers).
The pipeline reaches the modes only through :func:`runner_for` and :func:`sink_for`; no
mode imports the pipeline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import pandas as pd

from reliab.io._discover import Entry
from reliab.io._finish import Merged, Rows, Session, plan_notes
from reliab.io._merge import TableParts
from reliab.io._plan import ReadEntry, RunPlan
from reliab.io._rowtable import batching

__all__ = ["Runner", "InProcess", "Dask", "Sink", "Session", "memory", "runner_for", "sink_for"]


class Runner(Protocol):
    """Who runs the reads: ``engine`` names it, ``client`` is its Dask client (or ``None``)."""

    engine: str
    client: Any

    def reads(self, plan: RunPlan, read: ReadEntry, session: Session, *,
              strict: bool) -> AbstractContextManager[ReadEntry]:
        """The reader the loop hands ``session``: per input, in input order, its ``(result, choice)`` rows."""


@dataclass(frozen=True)
class InProcess:
    """The files read one after the other in this process (``engine="local"``)."""

    engine: str = "local"
    client: Any = None

    @contextmanager
    def reads(self, plan: RunPlan, read: ReadEntry, session: Session, *, strict: bool) -> Iterator[ReadEntry]:
        yield read


@dataclass(frozen=True)
class Dask:
    """The files read by tasks on a Dask cluster (``engine="dask"``; ``client`` or a local one).

    Every file is submitted at once (:func:`reliab.io.distributed.read_ahead`: small files
    batched, large kernel logs split), and each input's result handed out in input order.
    """

    client: Any = None
    engine: str = "dask"

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


def sink_for(store: str | os.PathLike[str] | None, output: str | os.PathLike[str] | None,
             rebuild: bool) -> Sink:
    """The sink of ``store=``, ``output=`` and ``rebuild=`` (``ValueError`` on a bad combination):
    :func:`memory`, the Output sink (:func:`reliab.io._streamed.written`, partitioned Parquet
    written as read, or by a Dask runner's tasks) or the Store sink
    (:func:`reliab.io._storerun.stored`, the incremental store; ``rebuild``)."""
    if store is not None:
        if output is not None:
            raise ValueError("store= keeps the tables in the store; output= is for a run without one")
        from reliab.io._storerun import stored

        return partial(stored, store, rebuild=rebuild)
    if rebuild:
        raise ValueError("rebuild=True needs store=")
    if output is None:
        return memory
    from reliab.io._streamed import written

    return lambda plan, runner: written(plan, output, by_tasks=runner.engine == "dask")
