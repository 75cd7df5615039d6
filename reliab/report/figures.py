"""Serialise the report's matplotlib figures: inline SVG for the page, PNG for the PDF.

Each figure is laid out and drawn at most once per format, whichever output asks first:
one Agg draw at print resolution gives the PNG *and* the figure's tight bounding box, and
the SVG is written inside that same box without a second layout pass.  The results are
kept (weakly, per figure object) so the HTML page and the PDF of one report, or a page
rendered twice, never draw a figure again.  Document figures are never changed after they
are placed in a :class:`~reliab.report.document.Figure` (see there), which is what makes
keeping them sound; the one change made here, before the first draw, is that every text
from the data is drawn literally and bounded in length (:mod:`reliab.report._figtext`).

Why PNG in the PDF: WeasyPrint lays out and paints an inline SVG element by element
(thousands of paths and text runs per chart) and computes CSS styles for each; an image
is one box.  At 200 dpi the charts print sharp at their printed size (under 17 cm wide).
"""

from __future__ import annotations

import io
import re
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import matplotlib
import numpy as np
from markupsafe import escape
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

from reliab.report._figtext import bound_figure_text, plot_label

#: resolution of the PNG figures in the PDF (dots per inch of the figure's own size)
PRINT_DPI = 200
#: white space kept around a figure's drawn content, inches (matplotlib's ``savefig.pad_inches``)
PAD_IN = 0.1
#: an artist with more points than this is rasterized inside the SVG (a browser, too, is
#: slower with thousands of path elements than with one embedded image)
DENSE = 150

_SVG_IDS = re.compile(r'\sid="([^"]+)"')
_SVG_REFS = re.compile(r'(\sid="|href="#|url\(#)([^")]+)')


@dataclass
class Rendered:
    """A figure's serialised forms, made on first use.

    Attributes
    ----------
    bbox : Bbox
        The drawn area in inches (tight box, padded), shared by both formats.
    png : bytes
        PNG at :data:`PRINT_DPI`.
    svg : str or None
        ``<svg>`` element (no prolog) once asked for.
    """

    bbox: Bbox
    png: bytes
    svg: str | None = None
    draws: dict[str, int] = field(default_factory=dict)

    @property
    def size_pt(self) -> tuple[float, float]:
        """Width and height of the drawn area in points (1/72 inch)."""
        return 72.0 * self.bbox.width, 72.0 * self.bbox.height


_CACHE: weakref.WeakKeyDictionary[MplFigure, Rendered] = weakref.WeakKeyDictionary()


def _dense_artists(fig: MplFigure) -> list[Any]:
    out = []
    for ax in fig.axes:
        for artist in ax.get_children():
            if isinstance(artist, Line2D) and len(artist.get_xdata()) > DENSE:
                out.append(artist)
            elif isinstance(artist, Collection):
                n = len(artist.get_offsets()) + sum(len(p.vertices) for p in artist.get_paths())
                if n > DENSE and not artist.get_rasterized():
                    out.append(artist)
    return out


@contextmanager
def _no_layout(fig: MplFigure) -> Iterator[None]:
    """Keep the positions a previous draw laid out: no second layout pass, no extra draw.

    ``set_layout_engine("none")`` would leave a placeholder engine, for which ``savefig``
    still draws the figure once before drawing it again; matplotlib itself clears the engine
    the same way while it prints (``backend_bases.FigureCanvasBase.print_figure``).
    """
    engine = fig.get_layout_engine()
    fig._layout_engine = None  # noqa: SLF001 - see above
    try:
        yield
    finally:
        fig._layout_engine = engine  # noqa: SLF001


def _png(image: Any) -> bytes:
    """RGB PNG, quickly compressed: WeasyPrint decodes and recompresses it for the PDF stream
    anyway, and an alpha channel would cost it a second image (the mask)."""
    from PIL import Image

    if image.mode == "RGBA" and image.getchannel("A").getextrema()[0] == 255:
        image = image.convert("RGB")  # opaque (the usual figure): nothing to flatten
    elif image.mode != "RGB":
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba).convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", compress_level=1)
    return buf.getvalue()


def _draw_png(fig: MplFigure) -> Rendered:
    """One Agg draw at :data:`PRINT_DPI`: the tight box and the PNG cut out of the canvas."""
    from PIL import Image

    old_canvas, old_dpi = fig.canvas, fig.dpi
    canvas = FigureCanvasAgg(fig)
    try:
        fig.set_dpi(PRINT_DPI)
        canvas.draw()
        renderer = canvas.get_renderer()
        tight = fig.get_tightbbox(renderer)
        rgba = np.asarray(canvas.buffer_rgba())
        height_px = rgba.shape[0]
        full = fig.bbox_inches
        inside = (tight.x0 >= full.x0 and tight.y0 >= full.y0 and tight.x1 <= full.x1
                  and tight.y1 <= full.y1)
        # the padding may not reach past the canvas: what lies there is blank anyway
        bbox = (Bbox.intersection(tight.padded(PAD_IN), full) if inside else None) or tight.padded(PAD_IN)
        if inside:
            x0, x1 = int(np.floor(bbox.x0 * PRINT_DPI)), int(np.ceil(bbox.x1 * PRINT_DPI))
            top = height_px - int(np.ceil(bbox.y1 * PRINT_DPI))
            bottom = height_px - int(np.floor(bbox.y0 * PRINT_DPI))
            crop = rgba[max(top, 0):bottom, max(x0, 0):x1]
            png, draws = _png(Image.fromarray(crop, "RGBA")), 1
        else:  # content drawn outside the figure (a legend placed beside it): let savefig grow it
            buf = io.BytesIO()
            with _no_layout(fig):
                fig.savefig(buf, format="png", dpi=PRINT_DPI, bbox_inches=bbox)
            png, draws = _png(Image.open(buf)), 2
    finally:
        fig.set_dpi(old_dpi)
        fig.set_canvas(old_canvas)
    return Rendered(bbox=bbox, png=png, draws={"agg": draws})


def rendered(fig: MplFigure) -> Rendered:
    """The kept :class:`Rendered` of ``fig`` (drawn now if it never was)."""
    out = _CACHE.get(fig)
    if out is None:
        bound_figure_text(fig)  # text from the data: drawn literally, bounded in length
        out = _CACHE[fig] = _draw_png(fig)
    return out


def figure_to_png(fig: MplFigure) -> bytes:
    """PNG of ``fig`` at :data:`PRINT_DPI`, cut to the drawn area (drawn once per figure)."""
    return rendered(fig).png


def _svg_of(fig: MplFigure, entry: Rendered) -> str:
    buf = io.BytesIO()
    dense = _dense_artists(fig)
    for artist in dense:  # drawn as one embedded PNG each: a few KB instead of thousands of paths
        artist.set_rasterized(True)
    try:
        with matplotlib.rc_context({"svg.fonttype": "none"}), _no_layout(fig):  # text as <text>
            fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches=entry.bbox, dpi=150)
    finally:
        for artist in dense:
            artist.set_rasterized(False)
    entry.draws["svg"] = entry.draws.get("svg", 0) + 1
    svg = buf.getvalue().decode("utf-8")
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S).strip()


def figure_to_svg(fig: MplFigure, *, id_prefix: str = "", alt: str = "") -> str:
    """Serialise a matplotlib figure to an inline ``<svg>`` element (drawn once per figure).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (left unchanged).
    id_prefix : str
        Prepended to every ``id`` and internal reference, so that several figures can live
        in one page without their clip paths and glyph definitions colliding.
    alt : str
        Accessible name (``aria-label``) of the image.

    Returns
    -------
    str
        An ``<svg>`` element without XML prolog, doctype or metadata.
    """
    entry = rendered(fig)
    if entry.svg is None:
        entry.svg = _svg_of(fig, entry)
    svg = entry.svg
    if id_prefix:
        ids = set(_SVG_IDS.findall(svg))
        svg = _SVG_REFS.sub(
            lambda m: m.group(1) + (id_prefix + m.group(2) if m.group(2) in ids else m.group(2)),
            svg,
        )
    return svg.replace("<svg ", f'<svg role="img" aria-label="{escape(alt)}" class="chart" ', 1)


__all__ = ["DENSE", "PRINT_DPI", "Rendered", "figure_to_png", "figure_to_svg", "plot_label", "rendered"]
