"""Text from logs drawn in a figure as plain, bounded text.

Host names, categories and period labels come from the data.  Matplotlib parses any text
with an even number of unescaped ``$`` as mathtext (``Text.set_parse_math``; "Writing
mathematical expressions" in its documentation), so a host ``n$\\x$`` stops the drawing
with a parse error, and a 10,000-character tick label widens the figure beyond what the
image library accepts.  Every text of a figure passes through :func:`plot_label` before it
is drawn: tick labels through a formatter wrapper (they are made at draw time), the other
texts (titles, legends, annotations) by turning math parsing off and bounding their length.
Numeric tick formatters (scalar, log) are left alone: their mathtext is matplotlib's own.
"""

from __future__ import annotations

from typing import Any

from matplotlib import ticker
from matplotlib.figure import Figure as MplFigure
from matplotlib.legend import Legend
from matplotlib.text import Text

#: longest tick label or legend entry, characters (an ellipsis replaces the rest)
MAX_LABEL_CHARS = 40
#: longest line of a title, axis label or annotation
MAX_TEXT_CHARS = 100
#: formatters whose output is numbers matplotlib may write as mathtext itself
_NUMERIC = (ticker.ScalarFormatter, ticker.LogFormatter, ticker.NullFormatter)


def _truncate(text: str, limit: int) -> str:
    lines = text.splitlines() or [""]
    out = [line if len(line) <= limit else line[: limit - 1] + "\u2026" for line in lines[:5]]
    return "\n".join(out) + ("\n\u2026" if len(lines) > 5 else "")


def plot_label(text: object, max_chars: int = MAX_LABEL_CHARS) -> str:
    """``text`` as a label matplotlib draws literally: ``$`` escaped, at most ``max_chars``
    characters per line (the last one an ellipsis), at most five lines.

    Parameters
    ----------
    text : object
        A host name, category, period label or any other value from the data.
    max_chars : int
        Characters kept per line.

    Returns
    -------
    str
        With every ``$`` written ``\\$``: matplotlib then finds no math in it and shows
        each ``\\$`` as ``$`` (``Text._preprocess_math``).
    """
    return _truncate(str(text), max_chars).replace("$", "\\$")


class _DataLabels(ticker.Formatter):
    """Delegates to a formatter of data labels (categories, fixed labels) and bounds its output."""

    def __init__(self, inner: ticker.Formatter) -> None:
        self.inner = inner

    def set_axis(self, axis: Any) -> None:  # noqa: D102
        self.axis = axis
        self.inner.set_axis(axis)

    def set_locs(self, locs: Any) -> None:  # noqa: D102
        self.locs = locs
        self.inner.set_locs(locs)

    def __call__(self, x: Any, pos: int | None = None) -> str:
        return plot_label(self.inner(x, pos))

    def format_ticks(self, values: Any) -> list[str]:  # noqa: D102
        return [plot_label(s) for s in self.inner.format_ticks(values)]

    def get_offset(self) -> str:  # noqa: D102
        return plot_label(self.inner.get_offset())

    def format_data(self, value: Any) -> str:  # noqa: D102
        return self.inner.format_data(value)

    def format_data_short(self, value: Any) -> str:  # noqa: D102
        return self.inner.format_data_short(value)


def _tick_texts(fig: MplFigure) -> set[int]:
    """Ids of the tick label and offset texts: their formatter writes them at draw time."""
    ids: set[int] = set()
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            ids.add(id(axis.offsetText))
            for tick in [*axis.majorTicks, *axis.minorTicks]:
                ids.update((id(tick.label1), id(tick.label2)))
            for which in ("major", "minor"):
                fmt = axis.get_major_formatter() if which == "major" else axis.get_minor_formatter()
                if not isinstance(fmt, (*_NUMERIC, _DataLabels)):
                    setter = axis.set_major_formatter if which == "major" else axis.set_minor_formatter
                    setter(_DataLabels(fmt))
    return ids


def bound_figure_text(fig: MplFigure) -> None:
    """Make every text of ``fig`` from the data plain and bounded (idempotent).

    Legend entries are cut at :data:`MAX_LABEL_CHARS`, other texts at
    :data:`MAX_TEXT_CHARS` per line; none is parsed as mathtext.
    """
    texts = fig.findobj(Text)  # first: this makes the ticks of every tick location
    ticks = _tick_texts(fig)
    legend_texts = {id(t) for legend in fig.findobj(Legend) for t in legend.get_texts()}
    for text in texts:
        if id(text) in ticks:
            continue
        text.set_parse_math(False)
        limit = MAX_LABEL_CHARS if id(text) in legend_texts else MAX_TEXT_CHARS
        raw = text.get_text()
        short = _truncate(raw, limit)
        if short != raw:
            text.set_text(short)


__all__ = ["MAX_LABEL_CHARS", "bound_figure_text", "plot_label"]
