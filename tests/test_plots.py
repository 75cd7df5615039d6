"""Tests of reliab.plots (regression/structure: what is drawn, not pixels)."""

from __future__ import annotations

import re
import subprocess
import sys

import matplotlib as mpl
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from reliab.plots import (
    COMPONENT_COLOURS,
    plot_category_bars,
    plot_daily_counts,
    plot_rates,
    plot_timeline,
)
from reliab.report.html import figure_to_svg


def _interruptions() -> pd.DataFrame:
    rows = (
        [("Faulty GPU", "GPU", False)] * 6
        + [("Software Bug", "Dependency", False)] * 3
        + [("NIC", "Host", False)]
        + [("Planned", "Planned", True)] * 2
    )
    cat, comp, planned = zip(*rows, strict=True)
    start = pd.Timestamp("2024-03-01", tz="UTC")
    return pd.DataFrame(
        {
            "time": [start + pd.Timedelta(hours=7 * i) for i in range(len(rows))],
            "category": pd.array(cat, dtype="string"),
            "component": pd.array(comp, dtype="string"),
            "planned": list(planned),
        }
    )


def _rates() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "category": ["Faulty GPU", "Software Bug", "NIC", "SSD", "Total"],
            "count": [6, 3, 1, 0, 10],
            "rate_per_1k_gpu_days": [0.6, 0.3, 0.1, 0.0, 1.0],
            "rate_per_1k_gpu_days_low": [0.22, 0.06, 0.0025, 0.0, 0.48],
            "rate_per_1k_gpu_days_high": [1.3, 0.88, 0.56, 0.37, 1.84],
        }
    )


def _colours(ax) -> set[str]:
    return {to_hex(line.get_color()) for line in ax.get_lines()}


def test_import_does_not_load_pyplot() -> None:
    """Regression: a library must not pick a backend or import pyplot at import time."""
    code = "import sys, reliab.plots; assert 'matplotlib.pyplot' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plots_leave_rcparams_alone() -> None:
    before = dict(mpl.rcParams)
    plot_timeline(_interruptions())
    plot_rates(_rates())
    assert dict(mpl.rcParams) == before


def test_timeline_rows_and_colours() -> None:
    fig = plot_timeline(_interruptions())
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("Faulty GPU") and "(6)" in labels[0]
    assert labels[-1].startswith("Planned")
    colours = _colours(ax)
    assert COMPONENT_COLOURS["GPU"].lower() in colours
    assert COMPONENT_COLOURS["Planned"].lower() in colours


def test_draws_on_given_axes() -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_timeline(_interruptions(), ax=ax) is fig
    assert plot_daily_counts(_interruptions(), ax=fig.add_subplot(212)) is fig


def test_daily_counts_add_up() -> None:
    df = _interruptions()
    fig = plot_daily_counts(df)
    heights = sum(p.get_height() for p in fig.axes[0].patches)
    assert heights == pytest.approx(len(df))


def test_daily_counts_empty() -> None:
    fig = plot_daily_counts(_interruptions().iloc[:0])
    assert "no interruptions" in [t.get_text() for t in fig.axes[0].texts]


def test_rates_log_axis_and_zero_count() -> None:
    comps = {"Faulty GPU": "GPU", "Software Bug": "Dependency", "NIC": "Host", "SSD": "Host"}
    fig = plot_rates(_rates(), components=comps, conf_level=0.9)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert "90%" in ax.get_xlabel()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1].startswith("Total") and labels[0].startswith("Faulty GPU")
    # SSD has no events: only an open upper-limit marker, no point estimate
    markers = [line.get_marker() for line in ax.get_lines()]
    assert "<" in markers
    assert COMPONENT_COLOURS["Dependency"].lower() in _colours(ax)


def test_category_bars_with_reference() -> None:
    ref = pd.DataFrame({"category": ["Faulty GPU", "NIC"], "count": [7, 1]})
    fig = plot_category_bars(_interruptions(), reference=ref)
    ax = fig.axes[0]
    assert len(ax.patches) == 3  # planned excluded
    assert any("published" in t.get_text() for t in ax.get_legend().get_texts())
    bar_colours = {to_hex(p.get_facecolor()) for p in ax.patches}
    assert COMPONENT_COLOURS["GPU"].lower() in bar_colours


def test_figure_to_svg_prefixes_ids() -> None:
    svg = figure_to_svg(plot_rates(_rates()), id_prefix="x1-", alt="rates <&>")
    assert svg.startswith("<svg") and "<?xml" not in svg
    ids = re.findall(r'\sid="([^"]+)"', svg)
    assert ids and all(i.startswith("x1-") for i in ids)
    refs = re.findall(r'(?:href="#|url\(#)([^")]+)', svg)
    assert all(r.startswith("x1-") for r in refs)
    assert 'aria-label="rates &lt;&amp;&gt;"' in svg
