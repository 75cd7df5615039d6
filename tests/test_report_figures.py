"""Figures in the report: drawn once, the same area in the page (SVG) and the PDF (PNG).

Regression tests for the PDF speed-up: WeasyPrint painted every inline SVG element of every
chart, and each chart was serialised again for the PDF.  Now the PDF page carries PNG images
and each figure is laid out and drawn once per format, whichever output asks first.
"""

from __future__ import annotations

import io
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure as MplFigure
from PIL import Image

from reliab.report import Report, Section, Table, Text, render_html
from reliab.report.document import Figure
from reliab.report.figures import PRINT_DPI, figure_to_png, figure_to_svg


def _chart(layout: str | None = None, legend_outside: bool = False) -> MplFigure:
    fig = MplFigure(figsize=(5.0, 3.0), layout=layout)
    ax = fig.add_subplot()
    if layout is None:
        fig.subplots_adjust(bottom=0.2)
    x = np.linspace(0, 10, 400)  # dense: rasterized inside the SVG
    ax.plot(x, np.sin(x), label="sine")
    ax.set_xlabel("hours")
    if legend_outside:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def _report(*figs: MplFigure) -> Report:
    listing = Table("Every input file", pd.DataFrame({"File": ["a.log"]}), screen_only=True)
    blocks = (Text("intro"), *(Figure(f"chart {i}", f, "caption") for i, f in enumerate(figs)), listing)
    return Report("Figures", (Section("Charts", blocks, key="charts"),))


def test_each_figure_drawn_once_per_format(draws: Counter) -> None:
    figs = [_chart(), _chart("constrained")]
    report = _report(*figs)
    render_html(report)
    first = Counter(draws)
    assert all(first[id(f)] == 2 for f in figs), first  # one Agg (PNG + box) and one SVG draw
    render_html(report, target="print")
    render_html(report)
    assert draws == first  # both pages again: nothing drawn again


def test_chart_reaching_past_its_figure_is_drawn_whole(draws: Counter) -> None:
    fig = _chart(legend_outside=True)
    render_html(_report(fig))
    assert draws[id(fig)] == 3  # the Agg draw finds the legend outside; PNG redrawn larger


def test_print_page_has_png_figures_and_no_html_only_listing() -> None:
    figs = [_chart(), _chart("constrained")]
    report = _report(*figs)
    screen, printed = render_html(report), render_html(report, target="print")
    assert screen.count("<svg") == 2 and "data:image/png" not in screen.split("<svg", 1)[0]
    assert "<svg" not in printed and printed.count('<img class="chart"') == 2
    assert "Every input file" in screen and "Every input file" not in printed
    assert f"image-resolution: {PRINT_DPI}dpi" in printed


@pytest.mark.parametrize("legend_outside", [False, True])
def test_png_and_svg_show_the_same_area(legend_outside: bool) -> None:
    fig = _chart(legend_outside=legend_outside)
    w_px, h_px = Image.open(io.BytesIO(figure_to_png(fig))).size
    svg = figure_to_svg(fig)
    w_pt, h_pt = (float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert abs(w_px / PRINT_DPI * 72 - w_pt) < 1.5 and abs(h_px / PRINT_DPI * 72 - h_pt) < 1.5
    # a legend beside the axes lies outside the figure: the picture grows to keep it
    assert (w_pt > 5.0 * 72) == legend_outside


def test_png_is_the_chart_not_a_blank() -> None:
    img = np.asarray(Image.open(io.BytesIO(figure_to_png(_chart()))).convert("L"), dtype=float)
    assert img.std() > 10 and (img < 100).mean() > 0.005  # axes, line and labels in dark ink


def test_rendering_leaves_the_figure_as_it_was() -> None:
    fig = _chart("constrained")
    engine, dpi, canvas = fig.get_layout_engine(), fig.dpi, fig.canvas
    figure_to_png(fig)
    figure_to_svg(fig, id_prefix="a-")
    assert fig.get_layout_engine() is engine and fig.dpi == dpi and fig.canvas is canvas


def test_png_flattens_onto_white_and_keeps_opaque_pixels() -> None:
    from reliab.report.figures import _png

    rgba = np.zeros((2, 2, 4), dtype=np.uint8)
    rgba[0, 0] = (200, 10, 30, 255)  # opaque: kept as it is
    rgba[0, 1] = (0, 0, 0, 0)  # transparent: white
    rgba[1, 0] = (0, 0, 0, 255)
    rgba[1, 1] = (0, 0, 0, 255)
    out = Image.open(io.BytesIO(_png(Image.fromarray(rgba, "RGBA"))))
    assert out.mode == "RGB"
    assert np.asarray(out).tolist() == [[[200, 10, 30], [255, 255, 255]], [[0, 0, 0], [0, 0, 0]]]
    opaque = rgba.copy()
    opaque[..., 3] = 255
    assert np.asarray(Image.open(io.BytesIO(_png(Image.fromarray(opaque, "RGBA"))))).tolist() == (
        opaque[..., :3].tolist())
