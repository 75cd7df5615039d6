"""Render a :class:`~reliab.report.document.Report` to PDF through WeasyPrint.

The PDF is the HTML page of :func:`reliab.report.html.render_html` laid out with the print
rules of the same stylesheet (A4, page numbers, table headers repeated, figures kept whole),
so the two outputs cannot drift apart.  The page references no external resource; the URL
fetcher only accepts ``data:`` URLs so that rendering never touches the network or disk.
"""

from __future__ import annotations

from pathlib import Path

from reliab.report.document import Report
from reliab.report.html import render_html


def render_pdf(report: Report) -> bytes:
    """Render ``report`` to PDF bytes.

    Parameters
    ----------
    report : Report
        The document to render.

    Returns
    -------
    bytes
        A PDF document (starts with ``%PDF-``).
    """
    # imported here: WeasyPrint loads pango/cairo, which HTML-only users do not need
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    fetcher = URLFetcher(allowed_protocols=("data",))
    document = HTML(string=render_html(report), base_url=None, url_fetcher=fetcher)
    pdf = document.write_pdf()
    if pdf is None:  # pragma: no cover - write_pdf returns bytes when no target is given
        raise RuntimeError("WeasyPrint returned no PDF")
    return pdf


def write_pdf(report: Report, path: str | Path) -> Path:
    """Write the PDF of ``report`` to ``path``, creating parent folders.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render_pdf(report))
    return out


__all__ = ["render_pdf", "write_pdf"]
