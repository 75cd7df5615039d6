"""Render a :class:`~reliab.report.document.Report` as one self-contained HTML page.

The page needs nothing else: the stylesheet is inlined, figures are inline SVG (PNG
``data:`` images in the page the PDF is made from), there are no scripts and no external URLs.  Text from the data (category names, log lines) is escaped by
jinja2's autoescaping; only the figures drawn here and the package's own CSS are trusted.
Rendering only: nothing here computes a statistic.
"""

from __future__ import annotations

import base64
import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import jinja2
import numpy as np
from markupsafe import Markup

from reliab._atomic import write_atomic
from reliab.report.document import Block, Callout, Figure, Report, Table, Text
from reliab.report.figures import PRINT_DPI, figure_to_svg, rendered

#: ``"screen"``: the page (inline SVG figures, every table); ``"print"``: the page WeasyPrint
#: lays out for the PDF (PNG figures at print resolution, no HTML-only listings)
Target = Literal["screen", "print"]

_CI = re.compile(r"^(.*\S) (\[[^\]]*\])$")
def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _cell(value: Any, column: str, table: Table) -> dict[str, Any]:
    text = "" if value is None else str(value)
    classes = []
    ci = ""
    if column in table.numeric:
        classes.append("num")
        m = _CI.match(text)
        if m:
            text, ci = m.group(1), m.group(2)
    if column in table.monospace:
        classes.append("mono")
    if text.startswith("✓"):
        classes.append("ok")
    elif text.startswith("✗"):
        classes.append("bad")
    swatch = dict(table.swatches).get(text) if column == table.swatch_column else None
    return {"text": text, "ci": ci, "cls": " ".join(classes), "swatch": swatch}


def interval_bars(values: tuple[tuple[float, float, float], ...]) -> list[dict[str, float] | None]:
    """Positions (percent of the cell) of each row's interval and estimate on the column's
    common scale: logarithmic when every value is positive, else linear.  ``None`` for a row
    without a finite interval."""
    arr = np.array(values, dtype=float).reshape(-1, 3)
    lo_all, hi_all = arr[:, 1], arr[:, 2]
    finite = np.isfinite(arr)
    vals = arr[finite]
    if not vals.size:
        return [None] * len(arr)
    use_log = bool(np.all(vals > 0))
    f = np.log10 if use_log else (lambda x: x)
    top_all = np.where(np.isfinite(hi_all), hi_all, np.nan)
    lows = lo_all[np.isfinite(lo_all)]
    highs = top_all[np.isfinite(top_all)]
    if not (lows.size and highs.size):  # no finite bound at all: nothing to draw a bar against
        return [None] * len(arr)
    lo_v, hi_v = lows.min(), highs.max()
    a, b = f(max(lo_v, vals[vals > 0].min()) if use_log else lo_v), f(hi_v)
    span = (b - a) or 1.0
    out: list[dict[str, float] | None] = []
    for est, lo, hi in arr:
        if not (np.isfinite(lo) and (np.isfinite(hi) or hi == np.inf)):
            out.append(None)
            continue
        x0 = 0.0 if (use_log and lo <= 0) else float(np.clip((f(lo) - a) / span, 0, 1))
        x1 = 1.0 if not np.isfinite(hi) else float(np.clip((f(hi) - a) / span, 0, 1))
        xe = float(np.clip((f(est) - a) / span, 0, 1)) if np.isfinite(est) and (est > 0 or not use_log) else None
        out.append({"left": round(100 * x0, 1), "width": round(max(100 * (x1 - x0), 0.8), 1),
                    "dot": None if xe is None else round(100 * xe, 1), "open": not np.isfinite(hi)})
    return out


def _table_view(table: Table) -> dict[str, Any]:
    cols = [str(c) for c in table.data.columns]
    kinds = table.row_kinds or ("",) * len(table.data)
    bars = {name: interval_bars(vals) for name, vals in table.intervals}
    rows = []
    for i, (rec, kind) in enumerate(zip(table.data.itertuples(index=False, name=None), kinds, strict=True)):
        cells = []
        for v, c in zip(rec, cols, strict=True):
            cell = _cell(v, c, table)
            cell["bar"] = bars[c][i] if c in bars and i < len(bars[c]) else None
            cells.append(cell)
        rows.append({"cls": kind, "cells": cells})
    headers = [{"text": c, "cls": "num" if c in table.numeric else ""} for c in cols]
    return {
        "kind": "table",
        "title": table.title,
        "caption": table.caption,
        "headers": headers,
        "rows": rows,
        "screen_only": table.screen_only,
    }


def _figure_view(block: Figure, prefix: str, target: Target) -> dict[str, Any]:
    """The figure drawn for ``target``; a figure that fails to draw is a note in its section."""
    try:
        return _drawn_figure_view(block, prefix, target)
    except Exception as exc:  # noqa: BLE001 - one figure never fails the report
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        name = block.title or block.alt or "figure"
        return {"kind": "text", "body": f"{name}: figure not drawn: {reason}", "items": (), "note": True,
                "title": ""}


def _drawn_figure_view(block: Figure, prefix: str, target: Target) -> dict[str, Any]:
    alt = block.alt or block.title
    if target == "print":
        data = base64.b64encode(rendered(block.figure).png).decode("ascii")
        # trusted: a PNG we drew, as a data: URL (the only scheme the PDF renderer fetches);
        # image-resolution gives it the figure's size in inches (WeasyPrint honours it)
        image = Markup('<img class="chart" src="data:image/png;base64,{}" alt="{}" '
                       'style="image-resolution: {}dpi">').format(Markup(data), alt, PRINT_DPI)
    else:
        # trusted: SVG written by matplotlib from our own figure; its text is escaped there
        image = Markup(figure_to_svg(block.figure, id_prefix=prefix, alt=alt))
    return {"kind": "figure", "title": block.title, "caption": block.caption, "svg": image}


def _blocks_view(blocks: tuple[Block, ...], prefix: str, target: Target = "screen"
                 ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        if isinstance(block, Callout):
            if out and out[-1]["kind"] == "callouts":
                out[-1]["items"].append(block)
            else:
                out.append({"kind": "callouts", "items": [block]})
        elif isinstance(block, Table):
            if not (block.screen_only and target == "print"):
                out.append(_table_view(block))
        elif isinstance(block, Figure):
            out.append(_figure_view(block, f"{prefix}f{i}-", target))
        elif isinstance(block, Text):
            out.append(
                {
                    "kind": "code" if block.kind == "code" else "text",
                    "body": block.body,
                    "items": block.items,
                    "note": block.kind == "note",
                    "title": block.title,
                }
            )
        else:
            raise TypeError(f"cannot render a {type(block).__name__} block")
    return out


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("reliab.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def stylesheet() -> str:
    """The report's CSS (screen and print rules in one sheet)."""
    return files("reliab.report").joinpath("templates", "report.css").read_text(encoding="utf-8")


def render_html(report: Report, *, target: Target = "screen") -> str:
    """Render ``report`` as one self-contained HTML5 document.

    Parameters
    ----------
    report : Report
        The document to render.
    target : {"screen", "print"}
        ``"screen"``: figures as inline SVG, every table.  ``"print"``: the page the PDF is
        made from: figures as PNG ``data:`` images at print resolution, tables marked
        HTML-only left out.  Either way each figure is drawn once
        (:mod:`reliab.report.figures`).

    Returns
    -------
    str
        ``<!DOCTYPE html>`` page with inline CSS and inline SVG figures; no scripts, no
        external references.

    Examples
    --------
    >>> from reliab.report.document import Report, Section, Text
    >>> page = render_html(Report("Demo", (Section("Notes", (Text("<b>safe</b>"),)),)))
    >>> "&lt;b&gt;safe&lt;/b&gt;" in page
    True
    """
    sections = []
    seen: set[str] = set()
    for n, s in enumerate(report.sections):
        anchor = _slug(s.key or s.title)
        if anchor in seen:
            anchor = f"{anchor}-{n}"
        seen.add(anchor)
        sections.append(
            {"title": s.title, "anchor": anchor, "intro": s.intro,
             "blocks": _blocks_view(s.blocks, prefix=f"s{n}", target=target)}
        )
    template = _environment().get_template("page.html.j2")
    # the stylesheet is our own file; marking it safe keeps quotes intact inside <style>
    page = template.render(
        title=report.title,
        subtitle=report.subtitle,
        meta=report.meta,
        sections=sections,
        css=Markup(stylesheet()),
    )
    # file names need not be UTF-8 (kept as surrogateescape text): their bytes shown as \xNN
    return page.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def write_html(report: Report, path: str | Path) -> Path:
    """Write ``render_html(report)`` to ``path`` (UTF-8, atomically), creating parent folders.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    return write_atomic(path, render_html(report))


__all__ = ["figure_to_svg", "render_html", "stylesheet", "write_html"]
