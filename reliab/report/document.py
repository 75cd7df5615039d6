"""The report as data: frozen document nodes that say *what* is shown, never *how*.

A :class:`Report` is a title, a few facts about the run and a tuple of :class:`Section`.
Each section holds blocks: :class:`Callout` (one headline number), :class:`Table`,
:class:`Figure` and :class:`Text`.  Nothing here computes a statistic or draws anything;
:mod:`reliab.report.assemble` fills the nodes in, :mod:`reliab.report.html` and
:mod:`reliab.report.pdf` render them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd
from matplotlib.figure import Figure as MplFigure

Tone = Literal["neutral", "good", "warn", "bad"]
RowKind = Literal["", "subtotal", "total", "flag"]


@dataclass(frozen=True)
class Callout:
    """One headline number in a summary box.

    Parameters
    ----------
    label : str
        What the number is, e.g. ``"Unexpected interruptions"``.
    value : str
        The number, already formatted, e.g. ``"419"`` or ``"3.09 h"``.
    detail : str
        A short second line: an interval, a share, a denominator.
    tone : {"neutral", "good", "warn", "bad"}
        Colour hint for the renderer.
    """

    label: str
    value: str
    detail: str = ""
    tone: Tone = "neutral"


@dataclass(frozen=True, eq=False)  # eq=False: a DataFrame has no single truth value
class Table:
    """A table of already-formatted cells.

    Parameters
    ----------
    title : str
        Heading shown above the table.
    data : pandas.DataFrame
        Cells as strings, in display order; the column names are the headers.  Interval
        cells read ``"estimate [low, high]"``; renderers may put the bracket on its own line.
    caption : str
        One or two sentences under the table.
    numeric : tuple of str
        Columns whose cells are numbers (right-aligned, tabular figures).
    row_kinds : tuple of str
        One entry per row: ``""``, ``"subtotal"``, ``"total"`` or ``"flag"`` (draws attention
        to a row that failed a check).  Empty means all plain rows.
    swatch_column : str or None
        Column whose cells get a colour swatch taken from ``swatches``.
    swatches : tuple of (str, str)
        ``(cell value, CSS colour)`` pairs for ``swatch_column``.
    monospace : tuple of str
        Columns shown in a fixed-width font (log text, ``file:line``).
    intervals : tuple of (str, tuple of (float, float, float))
        Per interval column, the numbers ``(estimate, low, high)`` of each row; renderers
        draw the interval's width (a bar on the column's common scale) beside the text.
    screen_only : bool
        Shown in the HTML page but left out of the PDF (long listings such as every input
        file's hash; the PDF says where the full listing is).
    """

    title: str
    data: pd.DataFrame
    caption: str = ""
    numeric: tuple[str, ...] = ()
    row_kinds: tuple[RowKind, ...] = ()
    swatch_column: str | None = None
    swatches: tuple[tuple[str, str], ...] = ()
    monospace: tuple[str, ...] = ()
    intervals: tuple[tuple[str, tuple[tuple[float, float, float], ...]], ...] = ()
    screen_only: bool = False


@dataclass(frozen=True, eq=False)  # compared by identity, like the matplotlib figure
class Figure:
    """A matplotlib figure with a title and a caption.

    Parameters
    ----------
    title : str
        Heading shown above the figure (none when empty: a titled :class:`Text` leads it).
    figure : matplotlib.figure.Figure
        The drawing; renderers serialise it (SVG) and never change it.
    caption : str
        What to look at in the figure.
    alt : str
        Text alternative for screen readers; defaults to the title when empty.
    """

    title: str
    figure: MplFigure
    caption: str = ""
    alt: str = ""


@dataclass(frozen=True)
class Text:
    """A paragraph, optionally followed by a bulleted list.

    Parameters
    ----------
    body : str
        Plain text (no markup; renderers escape it).  May be empty when only ``items`` is used.
    items : tuple of str
        Bullet points shown after the paragraph.
    kind : {"paragraph", "note", "code"}
        ``"note"`` renders as a highlighted aside (a caveat the reader must not miss);
        ``"code"`` as preformatted text (a configuration file).
    title : str
        A heading above the paragraph (a result's name, leading its figure and table).
    """

    body: str = ""
    items: tuple[str, ...] = ()
    kind: Literal["paragraph", "note", "code"] = "paragraph"
    title: str = ""


Block = Callout | Table | Figure | Text


@dataclass(frozen=True)
class Section:
    """A titled part of the report.

    Parameters
    ----------
    title : str
        Section heading (also used in the table of contents).
    blocks : tuple of Block
        Content in reading order.  Consecutive :class:`Callout` blocks are shown as one row
        of boxes.
    key : str
        Short stable identifier (HTML anchor), e.g. ``"summary"``.
    intro : str
        A lead paragraph under the heading.
    """

    title: str
    blocks: tuple[Block, ...]
    key: str = ""
    intro: str = ""


@dataclass(frozen=True)
class Report:
    """The whole report.

    Parameters
    ----------
    title : str
        Document title.
    sections : tuple of Section
        In reading order.
    subtitle : str or None
        A line under the title, e.g. the cluster and the period.
    meta : tuple of (str, str)
        Facts about the run shown in the header box (GPUs, window, version, inputs ...).
    """

    title: str
    sections: tuple[Section, ...]
    subtitle: str | None = None
    meta: tuple[tuple[str, str], ...] = field(default=())

    def section(self, key: str) -> Section:
        """Return the section whose ``key`` (or title) is ``key``.

        Raises
        ------
        KeyError
            If no section matches; the message lists the known keys.
        """
        for s in self.sections:
            if key in (s.key, s.title):
                return s
        known = ", ".join(s.key or s.title for s in self.sections)
        raise KeyError(f"no section {key!r}; sections: {known}")


__all__ = ["Block", "Callout", "Figure", "Report", "RowKind", "Section", "Table", "Text", "Tone"]
