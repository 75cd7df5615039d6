"""Text from logs is data in figures too: host names and period labels that matplotlib
would parse as mathtext (``$\\x$``) or that are 10,000 characters long."""

from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.artist import Artist

import reliab

_HUGE = "h" * 10_000


def _sample_with_hostile_hosts(root: Path) -> Path:
    """The bundled sample with its top lemon candidate renamed in every text file to
    ``n$\\x$`` followed by 10,000 characters."""
    folder = root / "logs"
    shutil.copytree(reliab.sample_path(), folder)
    for f in folder.rglob("*"):
        if f.is_file() and f.suffix in (".log", ".out", ".sel", ".txt", ".csv", ".json", ""):
            try:
                text = f.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            f.write_text(text.replace("node1100", "n$\\x$" + _HUGE), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_report_with_mathtext_and_huge_host_names(tmp_path: Path) -> None:
    """Regression: host ``n$\\x$`` stopped ``reliab report`` with ``error: \\x`` (mathtext), a
    10,000-character host with DecompressionBombError; nothing was written."""
    out = tmp_path / "out"
    reliab.run_report(_sample_with_hostile_hosts(tmp_path), out=out, pdf=True)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert (out / "report.pdf").read_bytes()[:5] == b"%PDF-"
    lemons = page.split("Lemon candidates", 1)[1]
    svg = lemons[lemons.index("<svg"):lemons.index("</svg>")]
    assert "n$\\x$" + "h" * 34 + "\u2026" in svg and "h" * 40 not in svg  # as text, no mathtext; truncated
    assert "figure not drawn" not in page


def test_plot_label_escapes_and_truncates() -> None:
    from reliab.report.figures import plot_label

    assert plot_label("n$\\x$") == "n\\$\\x\\$"
    assert plot_label("a" * 100) == "a" * 39 + "\u2026"
    assert plot_label("node0001") == "node0001"


@pytest.mark.parametrize("host", ["n$\\x$", "h" * 10_000, "$\\frac{$"])
def test_figure_with_a_hostile_category_draws(host: str) -> None:
    from reliab.report.figures import figure_to_svg, rendered

    fig, ax = plt.subplots()
    ax.barh(["node1", host], [1, 2], label=host)
    ax.set_title(f"failures on {host}")
    ax.legend()
    try:
        png = rendered(fig).png
        svg = figure_to_svg(fig)
    finally:
        plt.close(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 2_000_000
    assert "h" * 200 not in svg


class _BrokenArtist(Artist):
    """An artist whose drawing raises, as a figure that cannot be drawn does."""

    def draw(self, renderer: object) -> None:
        raise ValueError("boom")


@pytest.mark.parametrize("target", ["screen", "print"])
def test_a_figure_that_fails_to_draw_is_a_note(target: str) -> None:
    from matplotlib.figure import Figure as MplFigure

    from reliab.report.document import Figure, Report, Section
    from reliab.report.html import render_html

    fig = MplFigure()
    fig.add_subplot().add_artist(_BrokenArtist())
    report = Report(title="t", sections=(Section("S", (Figure("Failures per day", fig),)),))
    html = render_html(report, target=target)
    assert "Failures per day: figure not drawn: ValueError: boom" in html
