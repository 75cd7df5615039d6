"""Every axis of every figure in the sample's report carries its unit (issue 20 item 6).

The report is built from the bundled sample's analyses, as ``reliab demo`` builds it.  An
axis is checked when it shows numbers: its label must be non-empty and hold a unit in
parentheses or brackets ("time (h)", "rate (per 1,000 GPU-days)", "count (interruptions)",
"shape (dimensionless)"), and no column name ("rate_per_1k_gpu_days").  An axis is categorical, and exempt, when its tick labels name
things (categories, nodes, components) rather than numbers; an axis with no tick labels
shown is exempt too, and a twin axes shares the label of its twin.  Regression test.
"""

from __future__ import annotations

import json
import re

import pytest

import reliab
from reliab.report.document import Figure

UNIT = re.compile(r"\([^()]*[^\s()][^()]*\)|\[[^\[\]]+\]")
#: a column name shown as a label ("rate_per_1k_gpu_days") is not a unit
RAW = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b")
NUMBER = re.compile(r"^[\s\u2212+\-−]*[\d.,]+(?:[eE][+\-−]?\d+)?\s*%?$|^\$.*\$$")


def _figures(sample_ingest) -> list[tuple[str, object]]:
    from reliab.report import build_report
    from reliab.study import analyze, fleet_facts

    meta = json.loads((reliab.sample_path() / "cluster.json").read_text())
    fleet = fleet_facts(jobs=sample_ingest.jobs, signals=sample_ingest.signals, gpus=meta["n_gpus"],
                        window=(meta["start"], meta["end"]),
                        gpus_per_node=int(meta.get("gpus_per_node", 8)))
    results = analyze(sample_ingest, fleet, policy=sample_ingest.policy)
    report = build_report(results, ingest=sample_ingest, fleet=fleet)
    out = []
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Figure):
                out.append((f"{section.key}: {block.title or block.alt}", block.figure))
    return out


def _categorical(axis) -> bool:
    """Tick labels that are words, not numbers (or an axis showing no tick labels)."""
    labels = [t.get_text() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
    if not labels:
        return True
    return any(not NUMBER.match(text) for text in labels)


def _problems(name: str, fig) -> list[str]:
    fig.canvas.draw()  # tick labels exist only once drawn
    out = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        for which, axis, label in (("x", ax.xaxis, ax.get_xlabel()), ("y", ax.yaxis, ax.get_ylabel())):
            if _categorical(axis):
                continue
            shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
            labels = [label] + [(a.get_xlabel() if which == "x" else a.get_ylabel())
                                for a in shared.get_siblings(ax)]  # a twin axes shares its label
            if not any(UNIT.search(text or "") for text in labels) or RAW.search(label or ""):
                out.append(f"{name} [axes {i}] {which}: {label!r}")
    return out


def test_unit_check_catches_a_bare_label() -> None:
    """The check itself: a numeric axis labelled without a unit fails, categories pass."""
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure()
    ax = fig.add_subplot()
    ax.barh(["Faulty GPU", "Network"], [3, 4])
    ax.set_xlabel("interruptions")
    assert _problems("bare", fig) == ["bare [axes 0] x: 'interruptions'"]
    ax.set_xlabel("interruptions (count)")
    assert _problems("unit", fig) == []
    ax.set_xlabel("rate_per_1k_gpu_days (95% interval)")
    assert len(_problems("raw", fig)) == 1


@pytest.mark.slow
def test_every_report_figure_axis_has_a_unit(sample_ingest) -> None:
    figures = _figures(sample_ingest)
    assert len(figures) >= 10
    problems = [p for name, fig in figures for p in _problems(name, fig)]
    assert not problems, "\n".join(problems)
