"""Scale-out ingest on a Dask cluster: tasks of whole files, the same per-file reader as ``ingest``.

:func:`ingest_distributed` discovers and sniffs the files locally (sniffing reads only each
file's first lines), then submits tasks — one per file, or one per batch of small files in
discovery order (``batch_bytes``) — that call :func:`reliab.io._driver.read_file` on each file,
the very function the local driver loops over, so both drivers produce identical per-file
results.  Results come back either as
:class:`~reliab.io._registry.FileResult` objects, or, with ``output=``, as Parquet
partitions ``output/<table>/part-<n>.parquet`` written by the workers (only the line
accounting travels back), which are read back in file order.  Attribution runs locally on
the assembled tables, so the result equals ``ingest()``'s on the same files.

Dask is an optional dependency: ``pip install reliab[distributed]``.  Workers must be able
to import ``reliab`` and read the input paths (and write ``output``); parsers registered
only in the client session are unknown to them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from reliab import schema
from reliab.io._driver import (
    _concat,
    _defaults,
    accounting_of,
    check_arguments,
    choose_source,
    file_tables,
    finish,
    plan_notes,
    read_entry,
    read_file,
    run_keys,
    sources_of,
)
from reliab.io._plan import prepare
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice

#: tables written as partitions when ``output`` is given
PARTITIONED = ("signals", "jobs", "telemetry", "quarantine")


def _dask() -> Any:
    """``dask.distributed``, or an ImportError saying how to install it."""
    try:
        import dask.distributed
    except ImportError as exc:
        raise ImportError("ingest_distributed needs dask.distributed: "
                          "pip install 'reliab[distributed]'") from exc
    return dask.distributed


def read_batch(items: list[tuple[str, SourceChoice | None, dict[str, Any]]], strict: bool,
               output: str | None, part: int) -> tuple[list[FileResult], dict[str, str]]:
    """One task: :func:`reliab.io._driver.read_file` on each ``(path, choice, options)``, in order.

    Without ``output`` the full per-file results come back (and no paths).  With
    ``output`` the batch's tables, concatenated in file order, are written to
    ``output/<table>/part-<part>.parquet`` (temporary name, then renamed) and only the
    line accounting travels back, with the written paths.
    """
    results = [read_file(path, choice, options, strict) for path, choice, options in items]
    if output is None:
        return results, {}
    written: dict[str, str] = {}
    for table, frame in file_tables(results).items():
        if not len(frame):
            continue
        folder = Path(output) / table
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"part-{part:06d}.parquet"
        tmp = folder / f".part-{part:06d}.parquet.tmp"
        schema.write_parquet(frame, str(tmp), table)
        os.replace(tmp, target)
        written[table] = str(target)
    return [replace(r, tables={}, quarantine=None) for r in results], written


def batches(files: list[Path], batch_bytes: int | None) -> list[list[int]]:
    """File positions grouped, in order, into tasks of at most ``batch_bytes`` on-disk bytes.

    A file larger than ``batch_bytes`` is a task of its own; ``None`` gives one task per file.
    """
    if batch_bytes is None:
        return [[i] for i in range(len(files))]
    groups: list[list[int]] = []
    size = 0
    for i, f in enumerate(files):
        n = f.stat().st_size
        if not groups or size + n > batch_bytes:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += n
    return groups


def _read_parts(written: list[dict[str, str]]) -> dict[str, pd.DataFrame]:
    """The Parquet partitions of every task, concatenated in task order, per table."""
    return {table: _concat([schema.read_parquet(w[table], table) for w in written if table in w], table)
            for table in PARTITIONED}


def ingest_distributed(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    client: Any = None,
    output: str | os.PathLike[str] | None = None,
    batch_bytes: int | None = 8 << 20,
    source: str | None = None,
    recursive: bool = True,
    strict: bool = False,
    manifest: bool | str | os.PathLike[str] = True,
    policy: str | None = None,
    job_name: str | list[str] | None = None,
    rules: Any = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: Any = None,
    **options: Any,
) -> IngestResult:
    """:func:`reliab.ingest` with one Dask task per file.

    Parameters
    ----------
    paths : path, directory, or iterable of them
        As for :func:`~reliab.ingest`; they must be readable by the workers.
    client : dask.distributed.Client, optional
        The cluster to use; by default the current client, else a temporary
        ``LocalCluster`` that is closed afterwards.
    output : path, optional
        Folder (shared with the workers) where each task writes its files' tables as
        ``<table>/part-<n>.parquet`` (``n``: task number, in discovery order); they are
        read back to assemble the result.  Without it, per-file results travel back
        through the scheduler.
    batch_bytes : int or None
        Small files are grouped, in order, into tasks of up to this many bytes (a larger
        file is a task of its own), which keeps the per-task overhead of thousands of small
        logs low; ``None`` submits exactly one task per file.
    source, recursive, strict, manifest, policy, job_name, rules, before, after, job_filter, **options
        As for :func:`~reliab.ingest` (live ``scheme://`` sources are read by the client).

    Returns
    -------
    IngestResult
        Equal to ``ingest(paths, ...)`` on the same files.

    Raises
    ------
    ImportError
        dask.distributed is not installed.
    """
    distributed = _dask()
    check_arguments(source, options)
    plan = prepare(paths, source=source, recursive=recursive, strict=strict, manifest=manifest,
                   options=options, run_keys=run_keys())
    attribution = plan.run_values({"policy": policy, "job_name": job_name, "rules": rules, "before": before,
                                   "after": after, "job_filter": job_filter}, _defaults())
    remote = [e for e in plan.entries if e.result is None and not e.url]
    files = [Path(e.path) for e in remote]
    forced = {e.path: plan.file_options(e.path) for e in remote}
    choices: dict[str, SourceChoice | None] = {
        e.path: choose_source(Path(e.path), forced[e.path][0], strict, forced[e.path][1]) for e in remote}
    out = None if output is None else str(Path(output).resolve())
    own = None
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError:
            own = distributed.Client(distributed.LocalCluster(processes=True))
            client = own
    try:
        token = uuid.uuid4().hex[:12]
        futures = [client.submit(read_batch, [(remote[i].path, choices[remote[i].path], forced[remote[i].path][2])
                                              for i in group],
                                 strict, out, n, key=f"reliab-read-{token}-{n}", pure=False)
                   for n, group in enumerate(batches(files, batch_bytes))]
        gathered = client.gather(futures)
    finally:
        if own is not None:
            cluster = own.cluster
            own.close()
            cluster.close()
    read = iter(r for batch, _ in gathered for r in batch)
    results: list[FileResult] = []
    local: list[FileResult] = []
    for entry in plan.entries:  # in input order, set-aside rows and live sources in place
        if entry.result is None and not entry.url:
            results.append(next(read))
            continue
        for result, choice in read_entry(plan, entry, strict):
            results.append(result)
            choices[result.path] = choice
            if entry.url:
                local.append(result)
    if out is None:
        tables = file_tables(results)
    else:  # the remote files' rows come from the partitions; live sources' rows travel back
        tables = _read_parts([w for _, w in gathered])
        if local:
            extra = file_tables(local)
            tables = {t: _concat([tables[t], extra[t]], t) for t in PARTITIONED}
    return finish(tables, accounting_of(results), sources_of(results, choices), notes=plan_notes(plan),
                  **attribution)


__all__ = ["ingest_distributed", "read_batch", "batches", "PARTITIONED"]
