"""Results -> :class:`~reliab.report.document.Report`: the one generic assembly path.

``assemble`` walks :data:`~reliab.report.catalog.SECTIONS` in order.  The executive summary,
the root-cause table, data quality and methods have builders of their own (they read the
rates result, the ingest accounting and the run's facts); every other section is the
generic blocks (:func:`~reliab.report.generic.result_blocks`) of the results placed in it by
:func:`~reliab.report.catalog.place`.  A section with nothing to show is left out; a result
that could not be computed shows as "not available: <why>".  Nothing here estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from reliab import plots
from reliab._checks import Check, verify
from reliab._result import NotAvailable
from reliab._version import __version__
from reliab.report.catalog import RATE_COLUMNS, SECTIONS, Entry, place, reading
from reliab.report.document import Block, Figure, Report, Section, Text
from reliab.report.generic import frame_table, result_blocks
from reliab.report.methods import methods_section
from reliab.report.quality import quality_section
from reliab.report.summary import summary_section, taxonomy_section

#: result types whose figures show the same data whatever the method (one figure is enough)
SAME_FIGURE = frozenset({"TrendTestResult"})
#: result types the section lead shows (not repeated as a generic block)
LEAD_ONLY = frozenset({"TrendVerdict"})


def _generic(spec: Any, placed: list[tuple[str, str, str, tuple[str, ...], Any]],
             lead: tuple[Block, ...] = ()) -> Section | None:
    blocks: list[Block] = list(lead)
    drawn: set[str] = set()
    for _key, title, caption, columns, result in placed:
        kind = type(result).__name__
        if kind in LEAD_ONLY:
            continue
        blocks += result_blocks(result, title, caption=caption, reading=reading(result),
                                columns=columns, figure=kind not in drawn or kind not in SAME_FIGURE)
        drawn.add(kind)
    return Section(spec.title, tuple(blocks), key=spec.key, intro=spec.intro) if blocks else None


def _verdict(results: Mapping[str, Any]) -> Any | None:
    """The one verdict on the interruption rate (:func:`reliab.trend_verdict`), if given."""
    return next((r for r in results.values() if type(r).__name__ == "TrendVerdict"), None)


def _trend_lead(placed: list[tuple[str, str, str, tuple[str, ...], Any]], ingest: Any) -> list[Block]:
    """The answer first: the one verdict with its evidence (else the trend tests' verdicts in
    one sentence), and the timeline."""
    verdict = next((r for *_, r in placed if type(r).__name__ == "TrendVerdict"), None)
    tests = [r for *_, r in placed if type(r).__name__ == "TrendTestResult"]
    blocks: list[Block] = []
    if verdict is not None:
        blocks.append(Text(verdict.statement, items=verdict.disagreements))
        blocks.append(Text("The times between interruptions of a repairable fleet are analysed "
                           "as a point process first (the trend tests and Crow-AMSAA below: does "
                           "the rate change over the window?) and as a renewal process second (the "
                           "Weibull and distribution fits of the gaps: how spread are the gaps?)."))
        blocks.append(frame_table(verdict.summary(), "Evidence for the verdict",
                                  caption="Trend tests: statistic and two-sided p-value; Crow-AMSAA "
                                  "beta and Weibull shape: estimate and interval (1 = constant "
                                  "rate, Poisson gaps)."))
        blocks.append(Figure("", verdict.plot(), "Crow-AMSAA beta (does the rate change over the "
                             "window?) and the Weibull shape of the gaps (how spread are they?) "
                             "against 1. Method: " + verdict.method + ".",
                             alt="Shape parameters of the verdict's evidence against 1"))
    elif tests:
        verdicts = {r.trend for r in tests}
        if verdicts == {"none"}:
            answer = "Neither: no test finds a trend, so a constant rate describes the window."
        elif "worsening" in verdicts and "improving" not in verdicts:
            answer = "Wearing out: the interruption rate rises over the window."
        elif "improving" in verdicts and "worsening" not in verdicts:
            answer = "Burning in: the interruption rate falls over the window."
        else:
            answer = "The tests disagree; read each below."
        blocks.append(Text(answer + " " + "; ".join(f"{r.method}: {r.trend}" for r in tests) + "."))
    inter = getattr(ingest, "interruptions", None)
    if inter is not None and len(inter):
        blocks.append(Figure("Interruptions over time", plots.plot_timeline(inter),
                             "Each tick is one interruption on the row of its category; colour is "
                             "the component class, grey planned work.",
                             alt="Event plot of interruptions per category over time"))
    return blocks


def _covered(results: Mapping[str, Any]) -> bool:
    """Whether the exposure covers enough of the fleet for GPU-level MTBF (or is not judged)."""
    cov = results.get("exposure_coverage")
    return cov is None or isinstance(cov, NotAvailable) or bool(cov.adequate)


def _tbi_lead(verdict: Any) -> tuple[Block, ...]:
    """The Weibull section reads the renewal fit against the one verdict, never on its own."""
    return (Text("Is the interruption rate falling, flat or rising? " + verdict.statement
                 + " The fits below are renewal fits of the gaps, second to that verdict: they "
                 "say how spread the gaps are, not whether the rate changes.",
                 items=verdict.disagreements, kind="note"),)


def _expand(results: Mapping[str, Any]) -> dict[str, Any]:
    """Composite results (``results``: pairs of name and result, ``skipped``: pairs of name and
    reason, as :class:`EnvironmentStudy` has) become one entry per part, in the parent's section."""
    out: dict[str, Any] = {}
    for key, value in results.items():
        parts = getattr(value, "results", None)
        if isinstance(parts, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in parts):
            section = place(key, value)[0]
            for name, part in parts:
                out[f"{key}.{name}"] = Entry(part, section=section, title=str(name).replace("_", " ").capitalize())
            for name, why in getattr(value, "skipped", ()):
                out[f"{key}.{name}"] = Entry(NotAvailable(str(name), str(why)), section=section,
                                             title=str(name).replace("_", " ").capitalize())
            continue
        out[key] = value
    return out


def assemble(
    results: Mapping[str, Any],
    *,
    ingest: Any = None,
    title: str = "Cluster reliability report",
    subtitle: str | None = None,
    meta: Mapping[str, Any] | None = None,
    reference: pd.DataFrame | None = None,
    fleet: Any = None,
    inputs: pd.DataFrame | None = None,
    config: str | None = None,
    max_quarantine: int = 20,
    job_costs: Any | None = None,
    replay: Any | None = None,
    job_mttf: Any | None = None,
    plan: Any | None = None,
    failed_checks: Sequence[tuple[str, Check]] = (),
    raise_on_failure: bool | None = None,
) -> Report:
    """Build the report document; see :func:`reliab.report.build_report`.

    Every result's invariants are checked (:func:`reliab._checks.verify`) before anything is
    rendered: a result that fails one is shown as "not shown: failed check <name>" in its
    section, and the failure (with ``failed_checks``, found earlier in the run) is listed in
    the data-quality section.
    """
    by_section: dict[str, list[tuple[str, str, str, tuple[str, ...], Any]]] = {}
    titles: dict[str, str] = {}
    flat: dict[str, Any] = {}
    placed_all = {key: place(key, value) for key, value in _expand(results).items()}
    shown, failed = verify({k: p[-1] for k, p in placed_all.items()},
                           raise_on_failure=raise_on_failure)
    failed = (*failed_checks, *failed)
    for key, (section, rtitle, caption, columns, _) in placed_all.items():
        result = shown[key]
        if key in ("rates", "rates_by_component") and not _covered(results):
            columns = tuple(c for c in (columns or RATE_COLUMNS) if not c.startswith("mtbf_gpu"))
        by_section.setdefault(section, []).append((key, rtitle, caption, columns, result))
        titles[key], flat[key] = rtitle, result
    sections: list[Section] = []
    for spec in SECTIONS:
        placed = by_section.get(spec.key, [])
        if spec.key == "summary":
            sec = summary_section(flat, ingest) if "rates" in flat else None
        elif spec.key == "taxonomy":
            sec = taxonomy_section(flat, reference)
        elif spec.key == "data-quality":
            sec = (quality_section(ingest, max_quarantine, failed)
                   if ingest is not None or failed else None)
        elif spec.key == "methods":
            sec = methods_section(flat, titles, fleet=fleet, ingest=ingest, reference=reference,
                                  inputs=inputs, config=config)
        elif spec.key == "tbi" and placed and _verdict(flat) is not None:
            sec = _generic(spec, placed, lead=_tbi_lead(_verdict(flat)))
        elif spec.key == "trends" and placed:
            base = _generic(spec, placed)
            lead = _trend_lead(placed, ingest)
            sec = Section(spec.title, (*lead, *(base.blocks if base else ())), key=spec.key)
        else:
            sec = _generic(spec, placed)
        if sec is not None and sec.blocks:
            sections.append(sec)
    meta_s = tuple((str(k), str(v)) for k, v in (meta or {}).items())
    if not any(k == "reliab version" for k, _ in meta_s):
        meta_s += (("reliab version", __version__),)
    if not sections:
        sections.append(Section("Results", (Text("No results were given."),), key="results"))
    return Report(title=title, sections=tuple(sections), subtitle=subtitle, meta=meta_s)


__all__ = ["assemble", "NotAvailable"]
