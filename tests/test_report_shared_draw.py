"""A forked copy draws every second figure: both pages are byte for byte those drawn in one
process, the copy's share is never drawn here, and every failure falls back to drawing here."""

from __future__ import annotations

import os
import select
from collections import Counter

import matplotlib
import numpy as np
import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure as MplFigure

import reliab.report.shared_draw as shared_draw
from reliab.report import Report, Section, Text, render_html
from reliab.report.document import Figure
from reliab.report.shared_draw import SharedDraw, report_figures

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


class _Broken(Artist):
    def draw(self, renderer):
        raise RuntimeError("cannot draw this")


def _figures(broken: bool = False) -> list[MplFigure]:
    out = []
    for i, layout in enumerate((None, "constrained", None, "constrained", None)):
        fig = MplFigure(figsize=(4.0 + i / 2, 2.5), layout=layout)
        ax = fig.add_subplot()
        x = np.linspace(0, 10, 50 + 200 * (i % 2))  # some dense enough to be rasterized in the SVG
        ax.plot(x, np.sin(x + i), label=f"series {i}")
        ax.set_title(f"chart {i}: host n$0{i}$")
        if i == 2:  # reaches past its figure: drawn twice for the PNG
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        if broken and i == 3:
            fig.add_artist(_Broken())
        out.append(fig)
    return out


def _report(figs: list[MplFigure]) -> Report:
    blocks = (Text("intro"), *(Figure(f"chart {i}", f, "caption") for i, f in enumerate(figs)))
    return Report("Figures", (Section("Charts", blocks, key="charts"),))


def _pages(report: Report, shared: bool, **kw) -> tuple[str, str]:
    with matplotlib.rc_context({"svg.hashsalt": "fixed"}):  # SVG ids otherwise random per draw
        if shared:
            with SharedDraw(report_figures(report), **kw) as draw:
                draw.pngs()
                draw.svgs()
        return render_html(report, target="print"), render_html(report)


def test_pages_are_those_of_one_process_and_half_is_drawn_by_the_copy(draws: Counter) -> None:
    alone = _pages(_report(_figures()), shared=False)
    figs = _figures()
    draws.clear()
    both = _pages(_report(figs), shared=True)
    assert both[0] == alone[0]  # the PNGs, byte for byte
    assert both[1] == alone[1]  # the SVGs
    here = [draws[id(f)] for f in figs]
    assert here[1::2] == [0, 0]  # the copy's share: never drawn in this process
    assert here[0::2] == [2, 3, 2]  # PNG (twice when past its figure) and SVG, here


def test_a_figure_that_cannot_be_drawn_is_noted_as_before() -> None:
    alone = _pages(_report(_figures(broken=True)), shared=False)
    both = _pages(_report(_figures(broken=True)), shared=True)
    assert "chart 3: figure not drawn: RuntimeError: cannot draw this" in alone[0]
    assert both == alone


def test_without_fork_everything_is_drawn_here(monkeypatch: pytest.MonkeyPatch, draws: Counter) -> None:
    alone = _pages(_report(_figures()), shared=False)

    def no_fork() -> int:
        raise OSError("fork not permitted")

    monkeypatch.setattr(os, "fork", no_fork)
    figs = _figures()
    draws.clear()
    assert _pages(_report(figs), shared=True) == alone
    assert all(draws[id(f)] >= 2 for f in figs)


def test_a_copy_that_dies_leaves_its_share_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    alone = _pages(_report(_figures()), shared=False)

    def dies(fd, share):
        raise SystemExit(3)  # in the copy: it exits without sending anything

    monkeypatch.setattr(shared_draw, "_child", dies)
    assert _pages(_report(_figures()), shared=True) == alone


def test_the_copy_closes_the_descriptors_it_is_given() -> None:
    read, write = os.pipe()
    try:
        with SharedDraw(_figures(), close_in_copy=(write,)) as draw:
            draw.pngs()
            os.close(write)  # the copy's duplicate is closed too: end of file, not a hang
            write = -1
            assert select.select([read], [], [], 30)[0] == [read]  # not a hang
            assert os.read(read, 1) == b""
            draw.svgs()
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
