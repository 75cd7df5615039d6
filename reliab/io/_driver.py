"""Raw files -> canonical tables: the ingest pipeline.

:func:`ingest` plans the inputs (:func:`reliab.io._plan.prepare`), reads each one
(:func:`read_entry`, the unit of work of every runner), lets the sink's session merge the
tables in input order, finishes them (:func:`finish`: sort, validate, attribute, cost) and
lets the session commit the result.  Who runs the reads and where the
tables go are the run's modes (:mod:`reliab.io._modes`).  Parsers register themselves on
import; the imports below fix the registration order used to break sniffing ties.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pandas as pd

import reliab.io.formats  # noqa: F401
import reliab.io.sources  # noqa: F401  (registers slurm://, prometheus://, journald://)
from reliab import schema
from reliab.errors import ReliabError
from reliab.io._discover import Entry
from reliab.io._forced import forced_notes
from reliab.io._merge import accounting_of
from reliab.io._modes import runner_for, sink_for
from reliab.io._plan import Merged, Rows, RunPlan, prepare
from reliab.io._readfile import (
    canonical_result,
    check_arguments,
    choose_source,
    failed_file,
    read_file,
)
from reliab.io._redact import hide_password
from reliab.io._registry import FileResult, get_source, options_for, parsers, url_scheme
from reliab.io._registry import sources as live_sources
from reliab.io._repeats import drop_repeated_jobs
from reliab.io._result import FAILURE_SOURCES, IngestResult, SourceChoice, not_read_notes

__all__ = ["ingest", "available_sources", "discover", "read_entry", "read_url", "run_keys", "finish", "sources_of"]


def available_sources() -> pd.DataFrame:
    """Registered parsers: ``name``, the ``table`` each mainly produces, a one-line ``summary``.

    Live sources (``scheme://`` paths) follow as ``name`` ``<scheme>://``, table ``live``.
    """
    rows = [(p.name, p.table, p.summary) for p in parsers()]
    rows += [(f"{s.scheme}://", "live", s.summary) for s in live_sources()]
    return pd.DataFrame(rows, columns=["name", "table", "summary"]).astype("string")


def discover(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
             recursive: bool = True, manifest: bool | str | os.PathLike[str] = True) -> list[Path]:
    """The files ``ingest`` opens for ``paths``, in a deterministic order.

    Folders are walked in sorted order; hidden files and folders, documentation files of
    exact names (``README``, ``LICENSE.txt``, ``SOURCE.md``…), Python cache folders and the
    ``skip`` globs of a hand-over manifest are left out (``ingest`` lists each of them with
    source ``skipped``), as are FIFOs, sockets and devices (source ``special``).  Files
    named explicitly are always read.  See :mod:`reliab.io._discover`.

    Raises
    ------
    InputFileError
        If a path does not exist.
    """
    plan = prepare(paths, recursive=recursive, manifest=manifest)
    return [Path(e.path) for e in plan.entries if e.result is None and not e.url]

def ingest(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str | None = None,
    recursive: bool = True,
    strict: bool = False,
    manifest: bool | str | os.PathLike[str] = True,
    store: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
    policy: str | None = None,
    job_name: str | list[str] | None = None,
    rules: Any = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: Any = None,
    progress: bool = False,
    engine: Literal["local", "dask"] = "local",
    client: Any = None,
    output: str | os.PathLike[str] | None = None,
    **options: Any,
) -> IngestResult:
    """Read raw log files into validated canonical tables and attribute interruptions.

    A run never stops at a file: every path given or found gets an accounting row.  Files
    no reader recognises (source ``unrecognized``), binary files (``binary``), empty files
    (``empty``), FIFOs, sockets and devices (``special``, never opened), files or folders
    that cannot be read (``unreadable``) and files skipped by name (``skipped``: hidden
    files, exact documentation names, manifest ``skip`` globs) are listed with the reason,
    their lines counted; any error inside a reader becomes that file's row (one
    quarantined pseudo-line naming the error).  :meth:`IngestResult.not_read` lists them.

    Parameters
    ----------
    paths : path, folder, ``scheme://`` URL, or an iterable of them
        Files to read; folders are walked in sorted order (see :func:`discover`); a path
        starting with ``scheme://`` is read by the live source registered for that scheme
        (:func:`reliab.io.register_source`).
    source : str, optional
        Force one parser (see :func:`available_sources`) instead of sniffing each file.
    recursive : bool
        Walk sub-folders.
    strict : bool
        Fail instead of setting aside: :class:`~reliab.errors.ParseError` (naming file and
        line) at the first malformed line, :class:`~reliab.errors.UnknownFormatError` for a
        file no reader recognises (or binary), :class:`~reliab.errors.InputFileError` for
        a broken, special or unreadable file.  Empty and skipped files are not failures.
    manifest : bool or path
        The hand-over manifest (:mod:`reliab.io._manifest`): ``True`` (default) uses a
        ``reliab.toml`` found in any folder walked (for that folder's subtree, the nearest
        one winning), ``False`` none, a path that file for every input.  It sets per-glob source and reader options, skip globs and run-level
        keywords of this function; what is passed here overrides it.
    store : path, optional
        Incremental mode: a folder that keeps the canonical tables and a ledger of every
        file content read so far (:mod:`reliab.io._store`).  Files already read are
        skipped, grown files and rotated copies (``messages.1``, ``messages.2.gz``,
        ``messages-20240603``) contribute only their new lines, and the result holds the
        *whole* store, attributed afresh.  ``accounting`` then covers this run only (new
        lines per file) with a ``status`` column: new, appended, unchanged, rotated,
        rewritten or set aside.
    rebuild : bool
        With ``store``: discard the store's tables and ledger and read every file afresh
        (the fix for a store reported missing or corrupt).
    policy : {"fleet", "training-run"} or None
        What counts as an interruption (:func:`reliab.job_outcomes`).  ``None`` or
        ``"fleet"`` (the default of a shared cluster, Kokolis et al. HPCA 2025): NODE_FAIL
        or BOOT_FAIL, or FAILED with infrastructure evidence near the job's end; FAILED
        without it is a user failure (``user_failures``); CANCELLED, TIMEOUT, OOM and
        COMPLETED are not interruptions.  ``"training-run"`` (Llama 3): every end of one
        training run other than COMPLETED.  The result's ``policy`` and first note say which.
    job_name : str, optional
        The training run for ``policy="training-run"`` (default: the job name with the
        most GPU-hours).
    rules, before, after, job_filter
        Passed to :func:`reliab.job_outcomes` (rules file, attribution window around the
        job end, which interrupted jobs to keep).
    progress : bool
        Show a rich progress bar over the files (nothing is printed otherwise).
    engine : {"local", "dask"}
        ``"local"`` reads the files one after the other in this process; ``"dask"`` reads
        them on a Dask cluster, one task per batch of small files or per byte range of a
        large plain kernel log (:mod:`reliab.io.distributed`), with the same result.
        Works with ``store``.
    client : dask.distributed.Client, optional
        The cluster of ``engine="dask"``; default the current client, else a
        ``LocalCluster`` of one single-threaded worker process per core, closed afterwards.
    output : path, optional
        A folder where the tables read from files are written as Parquet partitioned by
        table, source and date, with the derived tables and a manifest written last (the
        commit point; a failed run commits nothing; :mod:`reliab.io._partitioned`).
        Locally each file's tables are written as soon as it is read, and a large kernel
        log's rows in batches while it is read (:mod:`reliab.io._streamed`), so memory
        stays bounded whatever the input size: the result is then an
        :class:`~reliab.io._result.OutputIngestResult` whose ``signals`` and ``telemetry``
        are read from the folder when first used (the same tables, rows and order as an
        in-memory run); ``summary()``, ``to_dict()`` and ``not_read()`` read nothing.
        With ``engine="dask"`` the workers write the tables and only the line accounting
        travels back through the scheduler; that result (an ``OutputIngestResult`` too)
        holds every table.
    **options
        Reader options (``year``, ``tz``, ``boot_time``, ``host``, ``job_id``, ``fields``,
        column mappings…; :func:`reliab.io._options.reader_options` lists them), each
        passed to the readers that accept it; ``quarantine_limit=N``
        keeps at most N malformed lines per file in full and counts the rest in one
        summary row (default :data:`reliab.io._quarantine.QUARANTINE_LIMIT`).

    Returns
    -------
    IngestResult
        Tables, quarantine, per-file accounting and per-file source choices.

    Raises
    ------
    InputFileError
        A path does not exist, or with ``strict=True`` a file cannot be read.
    UnknownFormatError
        ``source`` names no parser, a URL's scheme no live source, or (``strict=True``)
        no reader recognises a file.
    ManifestError
        The manifest cannot be used; the message names file, line and key.
    TypeError
        An option that no reader accepts.
    """
    check_arguments(source, options)
    plan = prepare(paths, source=source, recursive=recursive, strict=strict, manifest=manifest,
                   options=options, run_keys=run_keys(), exclude=(store, output))
    attribution = plan.run_values({"policy": policy, "job_name": job_name, "rules": rules, "before": before,
                                   "after": after, "job_filter": job_filter}, _defaults())
    runner = runner_for(engine, client)
    sink = sink_for(store, output, rebuild)
    with sink(plan, runner) as session:
        rows: Rows = []
        with (_progress_bar(len(plan.entries), progress) as advance,
              runner.reads(plan, read_entry, session, strict=strict) as read):
            for entry in plan.entries:  # the one loop over the planned inputs, in input order
                rows += session.add(plan, entry, strict, read)
                advance()
        merged = session.close(accounting_of([r for r, _ in rows]), attribution)  # the sink's merged tables
        return session.commit(finish(merged, sources_of(rows), **attribution))


@contextmanager
def _progress_bar(total: int, enabled: bool) -> Iterator[Callable[[], None]]:
    """The ``advance`` callback of an optional rich progress bar, shown while the block runs."""
    if not enabled:
        yield lambda: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("ingest", total=total)
        yield lambda: bar.advance(task)


def read_entry(plan: RunPlan, entry: Entry, strict: bool) -> list[tuple[FileResult, SourceChoice]]:
    """Read one input of ``plan``: ``(result, choice)`` per accounting row it yields."""
    if entry.result is not None:
        r = entry.result
        return [(r, SourceChoice(r.source, 0.0, r.reason or ""))]
    if entry.url:
        return read_url(entry.path, dict(plan.options), strict)
    forced, why, options = plan.file_options(entry.path)
    choice = choose_source(Path(entry.path), forced, strict, why)
    return [(read_file(entry.path, choice, options, strict), choice)]


def read_url(url: str, options: dict[str, Any], strict: bool) -> list[tuple[FileResult, SourceChoice]]:
    """Read a ``scheme://`` input with its live source: one row per chunk it yields.

    A :class:`~reliab.errors.ReliabError` from the source (server down, bad URL) or a
    ``ValueError``/``TypeError`` (a bad window or option) fails the run with its one-line
    message, before anything is written; any other error becomes the URL's accounting row.
    """
    scheme = url_scheme(url) or ""
    handler = get_source(scheme)
    why = f"live source {scheme}://"
    try:
        results = list(handler.read(url, **options_for(handler.read, {**options, "strict": strict})))
    except Exception as exc:  # noqa: BLE001 - a failing chunk is its row, not the run's end
        if strict or isinstance(exc, ReliabError | ValueError | TypeError):  # source down, or bad arguments
            raise
        shown = hide_password(url)  # the location's password is for its server only
        results = [failed_file(shown, f"{scheme}://",
                               hide_password(f"source failed ({type(exc).__name__}: {exc})"))]
    return [(canonical_result(r), SourceChoice(r.source, 1.0, why)) for r in results]


_EXCLUDED_RUN_KEYS = frozenset({"paths", "source", "recursive", "strict", "manifest", "store", "rebuild",
                                "progress", "job_filter", "engine", "client", "output"})


def run_keys() -> tuple[str, ...]:
    """Keywords of :func:`ingest` a manifest may set at its top level (``rules``, ``before``…)."""
    return tuple(k for k in _defaults() if k not in _EXCLUDED_RUN_KEYS)


def _defaults() -> dict[str, Any]:
    """The keywords of :func:`ingest` (every one has a default) and their defaults."""
    return {p.name: p.default for p in inspect.signature(ingest).parameters.values()
            if p.default is not inspect.Parameter.empty}


def finish(merged: Merged, sources: dict[str, SourceChoice], **attribution: Any) -> IngestResult:
    """Sort signals by time, validate every table, attribute interruptions and cost them.

    Attribution (:func:`reliab.job_outcomes`) names each interruption's cause and evidence;
    the costs (:func:`reliab.models.jobs.with_costs`: downtime, restart, lost work, lost
    GPU-hours) are a models step after it.
    """
    from reliab.models.jobs import with_costs
    from reliab.taxonomy import classify_failures, job_outcomes

    # the signals leave the session's tables: sorted below, they are held once, not twice
    tables, accounting = merged.tables, merged.accounting
    tables["jobs"], signals, repeated = drop_repeated_jobs(tables["jobs"], tables.pop("signals"))
    notes = (*merged.notes, *([repeated] if repeated else []), *forced_notes(sources))
    if not signals["time"].is_monotonic_increasing:  # a stable sort keeps sorted rows as they are
        signals = signals.sort_values("time", kind="stable")
    if not (isinstance(signals.index, pd.RangeIndex) and signals.index.start == 0
            and signals.index.step == 1):
        signals = signals.reset_index(drop=True)
    def parsed(sources: tuple[str, ...]) -> int:
        return int(accounting.loc[accounting["source"].isin(sources), "parsed"].sum())

    if "failures" not in tables:  # a sink that does not keep failure records says so (never silent)
        tables["failures"] = schema.empty("failures")
        if n := parsed(FAILURE_SOURCES):
            notes = (*notes, f"Warning: {n:,} failure records (with repair times) were read as signals, but"
                     f" {merged.kept_by} does not keep the failures table yet: ingest without store= or output="
                     " for MTTR, availability and the other failure-record analyses")
    if "lifetimes" not in tables:
        tables["lifetimes"] = schema.empty("lifetimes")
        if read := parsed(("lifetimes",)):
            notes = (*notes, f"Warning: {read} unit lives read from inventory files are not kept by this "
                     "ingest mode (store= or output=); ingest those files without it to analyse them")
    tables["failures"] = classify_failures(tables["failures"], signals)  # the classes of their lines' signals
    for name in ("jobs", "telemetry", "quarantine", "failures", "lifetimes"):
        schema.validate(tables[name], name)
    schema.validate(signals, "signals")
    accounting = schema.validate(accounting, "accounting")
    outcomes = with_costs(job_outcomes(signals, tables["jobs"], sources=accounting["source"].unique(), **attribution),
                          tables["jobs"], signals)

    def conformed(frame: pd.DataFrame) -> pd.DataFrame:
        # the same (Arrow) string backing as every other table, e.g. after a Parquet trip
        return schema.validate(schema.conform(frame, "interruptions"), "interruptions")

    return IngestResult(signals=signals, jobs=tables["jobs"], telemetry=tables["telemetry"],
                        lifetimes=tables["lifetimes"], failures=tables["failures"], quarantine=tables["quarantine"],
                        accounting=accounting, sources=sources, interruptions=conformed(outcomes.interruptions),
                        user_failures=conformed(outcomes.user_failures), policy=outcomes.policy,
                        notes=(outcomes.method, *outcomes.notes, *notes, *not_read_notes(accounting)))


def sources_of(rows: Rows) -> dict[str, SourceChoice]:
    """Per path, the source choice with the parser's notes appended to its reason."""
    sources: dict[str, SourceChoice] = {}
    for r, choice in rows:
        if r.notes:
            choice = dataclasses.replace(choice, reason=f"{choice.reason}; {'; '.join(r.notes)}",
                                         notes=tuple(r.notes))
        sources[r.path] = choice
    return sources
