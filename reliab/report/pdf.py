"""Render a :class:`~reliab.report.document.Report` to PDF through WeasyPrint.

The PDF is the HTML page of :func:`reliab.report.html.render_html` laid out with the print
rules of the same stylesheet (A4, page numbers, table headers repeated, figures kept whole),
so the two outputs cannot drift apart.  The page it lays out is the ``"print"`` rendering:
the same document with figures as PNG images at print resolution (WeasyPrint paints inline
SVG element by element, which took most of the PDF's time) and without the HTML-only
listings; each figure is drawn once for both outputs (:mod:`reliab.report.figures`).  The page references no external resource; the URL
fetcher only accepts ``data:`` URLs so that rendering never touches the network or disk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliab._atomic import write_atomic
from reliab.report.document import Report
from reliab.report.html import render_html


def render_pdf(report: Report, *, url_fetcher: Callable[[str], Any] | None = None) -> bytes:
    """Render ``report`` to PDF bytes.

    Parameters
    ----------
    report : Report
        The document to render.
    url_fetcher : callable, optional
        WeasyPrint URL fetcher; the default refuses every scheme but ``data:``, so nothing
        on disk or the network is ever read (log text that names a URL stays text).

    Returns
    -------
    bytes
        A PDF document (starts with ``%PDF-``).
    """
    # imported here: WeasyPrint loads pango/cairo, which HTML-only users do not need
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    fetcher = url_fetcher if url_fetcher is not None else URLFetcher(allowed_protocols=("data",))
    document = HTML(string=render_html(report, target="print"), base_url=None, url_fetcher=fetcher)
    pdf = document.write_pdf()
    if pdf is None:  # pragma: no cover - write_pdf returns bytes when no target is given
        raise RuntimeError("WeasyPrint returned no PDF")
    return pdf


def write_pdf(report: Report, path: str | Path, *, url_fetcher: Callable[[str], Any] | None = None
              ) -> Path:
    """Write the PDF of ``report`` to ``path`` atomically, creating parent folders (``url_fetcher`` as
    in :func:`render_pdf`).

    Returns
    -------
    pathlib.Path
        The path written.
    """
    return write_atomic(path, render_pdf(report, url_fetcher=url_fetcher))


__all__ = ["render_pdf", "write_pdf"]
