"""A sink's :class:`Session` (what the pipeline's loop hands each input to) and :func:`finish`,
which turns what the session merged into the run's :class:`~reliab.io._result.IngestResult`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reliab import schema
from reliab.io._discover import Entry
from reliab.io._forced import forced_notes
from reliab.io._plan import ReadEntry, RunPlan
from reliab.io._registry import FileResult
from reliab.io._repeats import drop_repeated_jobs
from reliab.io._result import FAILURE_SOURCES, IngestResult, SourceChoice, not_read_notes
from reliab.io._tasks import COMBINE, Mode

__all__ = ["Merged", "Session", "Rows", "plan_notes", "sources_of", "finish"]

#: one input's accounting rows: ``(result, choice)`` each, the result without its tables
Rows = list[tuple[FileResult, SourceChoice | None]]


@dataclass
class Merged:
    """What a sink's session merged, for :func:`finish`.

    ``tables`` holds signals, jobs, telemetry and quarantine, conformed, and ``failures`` and
    ``lifetimes`` where the sink keeps them (``kept_by`` names the sink in the note that says
    it does not).  ``signals`` may be only the rows :func:`reliab.job_outcomes` can use, in
    table order (:mod:`reliab.io._streamed`).  ``notes`` are run-level remarks.
    """

    tables: dict[str, pd.DataFrame]
    accounting: pd.DataFrame
    notes: tuple[str, ...] = ()
    kept_by: str = ""


class Session:
    """One run of a sink: it takes each planned input, hands back what it merged, commits the result.

    With a Dask runner the tasks read the inputs of :meth:`ahead` and do with their tables
    as :attr:`tasks` (:data:`reliab.io._tasks.Mode`) says: join them per task (this default),
    keep each file's own (``None``), or write them to a folder as parts of run :attr:`run`,
    calling :meth:`written` with their records.
    """

    tasks: Mode = COMBINE
    run: str = ""

    def ahead(self, plan: RunPlan) -> RunPlan:
        """The inputs a runner may read before the loop asks for them (default: every one)."""
        return plan

    def written(self, parts: list[dict[str, Any]]) -> None:
        """Take the manifest records of the parts the tasks wrote (``tasks`` a folder)."""

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read: ReadEntry) -> Rows:
        """Have ``entry`` read with ``read`` (or not, when the sink knows it), keep its tables."""
        raise NotImplementedError

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        """The merged tables, with the pipeline's ``accounting`` of the rows :meth:`add` returned."""
        raise NotImplementedError

    def commit(self, result: IngestResult) -> IngestResult:
        """The run's result, once :func:`finish` made it (default: as it is)."""
        return result


def plan_notes(plan: RunPlan) -> tuple[str, ...]:
    """Run-level notes of ``plan``: the manifests applied."""
    return tuple(f"hand-over manifest applied: {m.path}" for m in plan.all_manifests())


def finish(merged: Merged, sources: dict[str, SourceChoice], **attribution: Any) -> IngestResult:
    """Sort signals by time, validate every table, attribute interruptions and cost them.

    Attribution (:func:`reliab.job_outcomes`) names each interruption's cause and evidence;
    the costs (:func:`reliab.models.jobs.with_costs`: downtime, restart, lost work, lost
    GPU-hours) are a models step after it.
    """
    from reliab.models.jobs import with_costs
    from reliab.taxonomy import classify_failures, job_outcomes

    # the signals leave the session's tables: sorted below, they are held once, not twice
    tables, accounting, notes = merged.tables, merged.accounting, merged.notes
    jobs, signals, repeated = drop_repeated_jobs(tables["jobs"], tables.pop("signals"))
    tables = {**tables, "jobs": jobs}
    notes = (*notes, repeated) if repeated else notes
    notes = (*notes, *forced_notes(sources))
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


def sources_of(results: list[FileResult],
               choices: dict[str, SourceChoice | None]) -> dict[str, SourceChoice]:
    """Per path, the source choice with the parser's notes appended to its reason."""
    sources: dict[str, SourceChoice] = {}
    for r in results:
        choice = choices.get(r.path) or SourceChoice(r.source, 0.0, r.reason or "")
        if r.notes:
            choice = dataclasses.replace(choice, reason=f"{choice.reason}; {'; '.join(r.notes)}",
                                         notes=tuple(r.notes))
        sources[r.path] = choice
    return sources
