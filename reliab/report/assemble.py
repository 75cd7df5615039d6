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
from reliab.report.catalog import SECTIONS, Entry, place, reading
from reliab.report.document import Block, Figure, Report, Section, Text
from reliab.report.generic import result_blocks
from reliab.report.methods import methods_section
from reliab.report.quality import quality_section
from reliab.report.summary import summary_section, taxonomy_section

#: result types whose figures show the same data whatever the method (one figure is enough)
SAME_FIGURE = frozenset({"TrendTestResult"})


def _generic(spec: Any, placed: list[tuple[str, str, str, tuple[str, ...], Any]]) -> Section | None:
    blocks: list[Block] = []
    drawn: set[str] = set()
    for _key, title, caption, columns, result in placed:
        kind = type(result).__name__
        blocks += result_blocks(result, title, caption=caption, reading=reading(result),
                                columns=columns, figure=kind not in drawn or kind not in SAME_FIGURE)
        drawn.add(kind)
    return Section(spec.title, tuple(blocks), key=spec.key, intro=spec.intro) if blocks else None


def _trend_lead(placed: list[tuple[str, str, str, tuple[str, ...], Any]], ingest: Any) -> list[Block]:
    """The answer first: the trend tests' verdicts in one sentence, and the timeline."""
    tests = [r for *_, r in placed if type(r).__name__ == "TrendTestResult"]
    blocks: list[Block] = []
    if tests:
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
        by_section.setdefault(section, []).append((key, rtitle, caption, columns, result))
        titles[key], flat[key] = rtitle, result
    sections: list[Section] = []
    for spec in SECTIONS:
        placed = by_section.get(spec.key, [])
        if spec.key == "summary":
            sec = summary_section(flat) if "rates" in flat else None
        elif spec.key == "taxonomy":
            sec = taxonomy_section(flat, reference)
        elif spec.key == "data-quality":
            sec = (quality_section(ingest, max_quarantine, failed)
                   if ingest is not None or failed else None)
        elif spec.key == "methods":
            sec = methods_section(flat, titles, fleet=fleet, ingest=ingest, reference=reference,
                                  inputs=inputs, config=config)
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
