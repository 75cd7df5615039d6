"""The modes of :func:`reliab.ingest`: who runs the reads, and where the tables go.

Two small interfaces, one implementation per mode:

* a :class:`Runner` runs the reads: :class:`InProcess` (one file after the other in this
  process) or :class:`Dask` (tasks on a Dask cluster, :mod:`reliab.io.distributed`);
* a :class:`Sink` takes the tables: :class:`Memory` (the result holds them),
  :class:`Output` (partitioned Parquet, ``output=``: :mod:`reliab.io._streamed`,
  :mod:`reliab.io._partitioned`) or :class:`Store` (the incremental store, ``store=``:
  :mod:`reliab.io._storerun`, :mod:`reliab.io._store`).

:meth:`Sink.ingest` runs a planned run with the pipeline's :class:`~reliab.io._steps.Steps`
and a runner.  The pipeline (:mod:`reliab.io._driver`) reaches the modes only through
:func:`runner_for` and :func:`sink_for`; no mode imports the pipeline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

from reliab.io._finish import finish, plan_notes, sources_of
from reliab.io._merge import TableParts, progress
from reliab.io._plan import RunPlan
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice
from reliab.io._rowtable import batching
from reliab.io._steps import Steps

__all__ = ["Runner", "InProcess", "Dask", "Sink", "Memory", "Output", "Store", "runner_for", "sink_for"]


class Runner(Protocol):
    """Who runs the reads: ``engine`` names it, ``client`` is its Dask client (or ``None``)."""

    engine: str
    client: Any


@dataclass(frozen=True)
class InProcess:
    """The files read one after the other in this process (``engine="local"``)."""

    engine: str = "local"
    client: Any = None


@dataclass(frozen=True)
class Dask:
    """The files read by tasks on a Dask cluster (``engine="dask"``; ``client`` or a local one)."""

    client: Any = None
    engine: str = "dask"


def runner_for(engine: str, client: Any) -> Runner:
    """The runner of ``engine=`` and ``client=`` (``ValueError`` on a bad pair)."""
    if engine not in ("local", "dask"):
        raise ValueError(f"engine must be 'local' or 'dask', got {engine!r}")
    if engine == "local" and client is not None:
        raise ValueError("client= goes with engine='dask'")
    return InProcess() if engine == "local" else Dask(client)


class Sink(Protocol):
    """Where the tables go: runs a planned run with the pipeline's steps and a runner."""

    def ingest(self, plan: RunPlan, steps: Steps, runner: Runner, attribution: dict[str, Any], *,
               strict: bool, progress: bool) -> IngestResult:
        """The run's result (its tables in memory, or read back from where they went)."""


@dataclass(frozen=True)
class Memory:
    """The tables kept in the result (no ``store=``, no ``output=``)."""

    def ingest(self, plan: RunPlan, steps: Steps, runner: Runner, attribution: dict[str, Any], *,
               strict: bool, progress: bool) -> IngestResult:
        if runner.engine == "dask":
            from reliab.io.distributed import ingest_dask

            return ingest_dask(plan, attribution, steps, strict=strict, client=runner.client, progress=progress)
        return read_in_process(plan, steps, attribution, strict=strict, show=progress)


@dataclass(frozen=True)
class Output:
    """The tables written as partitioned Parquet under ``folder`` (``output=``)."""

    folder: str | os.PathLike[str]

    def ingest(self, plan: RunPlan, steps: Steps, runner: Runner, attribution: dict[str, Any], *,
               strict: bool, progress: bool) -> IngestResult:
        if runner.engine == "dask":
            from reliab.io.distributed import ingest_dask

            return ingest_dask(plan, attribution, steps, strict=strict, client=runner.client, output=self.folder,
                               progress=progress)
        from reliab.io._streamed import ingest_output

        return ingest_output(plan, attribution, steps, output=self.folder, strict=strict, progress=progress)


@dataclass(frozen=True)
class Store:
    """The tables added to the incremental store under ``folder`` (``store=``; ``rebuild``)."""

    folder: str | os.PathLike[str]
    rebuild: bool = False

    def ingest(self, plan: RunPlan, steps: Steps, runner: Runner, attribution: dict[str, Any], *,
               strict: bool, progress: bool) -> IngestResult:
        from reliab.io._storerun import ingest_into

        return ingest_into(self.folder, plan, steps, strict=strict, progress=progress, attribution=attribution,
                           rebuild=self.rebuild, engine=runner.engine, client=runner.client)


def sink_for(store: str | os.PathLike[str] | None, output: str | os.PathLike[str] | None,
             rebuild: bool) -> Sink:
    """The sink of ``store=``, ``output=`` and ``rebuild=`` (``ValueError`` on a bad combination)."""
    if store is not None:
        if output is not None:
            raise ValueError("store= keeps the tables in the store; output= is for a run without one")
        return Store(store, rebuild)
    if rebuild:
        raise ValueError("rebuild=True needs store=")
    return Memory() if output is None else Output(output)


def read_in_process(plan: RunPlan, steps: Steps, attribution: dict[str, Any], *, strict: bool,
                    show: bool) -> IngestResult:
    """The in-process run kept in memory: each input read in turn, its tables gathered."""
    results: list[FileResult] = []
    choices: dict[str, SourceChoice | None] = {}
    parts = TableParts()
    advance, close = progress(len(plan.entries), show)
    try:
        with batching():  # plain rows of many files converted to Arrow at once (TableParts)
            for entry in plan.entries:
                for result, choice in steps.read(plan, entry, strict):
                    results.append(parts.take(result))
                    choices[result.path] = choice
                advance()
    finally:
        close()
    return finish(parts.tables(), steps.accounting(results), sources_of(results, choices), notes=plan_notes(plan),
                  **attribution)
