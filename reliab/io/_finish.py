"""The end of every ingest: the merged tables sorted and validated, interruptions attributed.

:func:`finish` turns the merged tables, accounting and source choices of a run into its
:class:`~reliab.io._result.IngestResult`; :func:`attribute_run` is the attribution step
(:func:`reliab.job_outcomes`), which the ``output=`` engine also calls on the signals it
reads back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from reliab import schema
from reliab.io._forced import forced_notes
from reliab.io._plan import RunPlan
from reliab.io._registry import FileResult
from reliab.io._repeats import drop_repeated_jobs
from reliab.io._result import IngestResult, SourceChoice, failures_not_kept, not_read_notes

__all__ = ["plan_notes", "sources_of", "finish", "lifetimes_of", "attribute_run"]


def plan_notes(plan: RunPlan) -> tuple[str, ...]:
    """Run-level notes of ``plan``: the manifests applied."""
    return tuple(f"hand-over manifest applied: {m.path}" for m in plan.all_manifests())


def finish(tables: dict[str, pd.DataFrame], accounting: pd.DataFrame,
           sources: dict[str, SourceChoice], notes: tuple[str, ...] = (), **attribution: Any) -> IngestResult:
    """Sort signals by time, validate every table and attribute interruptions.

    ``tables`` holds signals, jobs, telemetry and quarantine, already conformed; ``notes``
    are run-level remarks, to which a count of the files not read is added.
    """
    # the signals leave the (caller's) dict: sorted below, they are held once, not twice
    jobs, signals, repeated = drop_repeated_jobs(tables["jobs"], tables.pop("signals"))
    tables = {**tables, "jobs": jobs}
    notes = (*notes, repeated) if repeated else notes
    notes = (*notes, *forced_notes(sources))
    if not signals["time"].is_monotonic_increasing:  # a stable sort keeps sorted rows as they are
        signals = signals.sort_values("time", kind="stable")
    if not (isinstance(signals.index, pd.RangeIndex) and signals.index.start == 0
            and signals.index.step == 1):
        signals = signals.reset_index(drop=True)
    failures = tables.get("failures")
    if failures is None:  # a mode that does not carry failure records says so (never silent)
        failures, dropped = schema.empty("failures"), failures_not_kept(accounting, "store= (or output= with a distributed engine)")
        notes = (*notes, dropped) if dropped else notes
    tables = {**tables, "failures": failures}
    for name in ("jobs", "telemetry", "quarantine", "failures"):
        schema.validate(tables[name], name)
    schema.validate(signals, "signals")
    lifetimes, notes = lifetimes_of(tables, accounting, notes)
    return IngestResult(signals=signals, jobs=tables["jobs"], telemetry=tables["telemetry"], lifetimes=lifetimes,
                        failures=tables["failures"],
                        quarantine=tables["quarantine"], accounting=schema.validate(accounting, "accounting"),
                        sources=sources, **attribute_run(signals, tables["jobs"], accounting, notes, **attribution))


def lifetimes_of(tables: dict[str, pd.DataFrame], accounting: pd.DataFrame,
                 notes: tuple[str, ...]) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The validated ``lifetimes`` table, and ``notes`` with a warning when lifetimes files were
    read but the ingest mode (``store=``, ``output=``) does not carry their table."""
    if "lifetimes" in tables:
        return schema.validate(tables["lifetimes"], "lifetimes"), notes
    read = int(accounting.loc[accounting["source"].eq("lifetimes"), "parsed"].sum()) if len(accounting) else 0
    if read:
        notes = (*notes, f"Warning: {read} unit lives read from inventory files are not kept by this "
                 "ingest mode (store= or output=); ingest those files without it to analyse them")
    return schema.empty("lifetimes"), notes


def attribute_run(signals: pd.DataFrame, jobs: pd.DataFrame, accounting: pd.DataFrame,
                  notes: tuple[str, ...] = (), **attribution: Any) -> dict[str, Any]:
    """The :class:`IngestResult` fields the attribution decides: interruptions, user_failures,
    policy and notes (the policy's, the run's ``notes``, the count of files not read).

    ``signals`` may be only the rows :func:`reliab.job_outcomes` can use, in table order
    (the local engine with ``output=`` reads back no more, :mod:`reliab.io._streamed`).
    """
    from reliab.models.jobs import with_costs
    from reliab.taxonomy import job_outcomes

    # attribution names cause and evidence; the costs are a models step after it
    outcomes = with_costs(job_outcomes(signals, jobs, sources=accounting["source"].unique(), **attribution),
                          jobs, signals)

    def conformed(frame: pd.DataFrame) -> pd.DataFrame:
        # the same (Arrow) string backing as every other table, e.g. after a Parquet trip
        return schema.validate(schema.conform(frame, "interruptions"), "interruptions")

    return {"interruptions": conformed(outcomes.interruptions), "user_failures": conformed(outcomes.user_failures),
            "policy": outcomes.policy,
            "notes": (outcomes.method, *outcomes.notes, *notes, *not_read_notes(accounting))}


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
