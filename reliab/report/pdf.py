"""Render a :class:`~reliab.report.document.Report` to PDF through WeasyPrint.

The PDF is the HTML page of :func:`reliab.report.html.render_html` laid out with the print
rules of the same stylesheet (A4, page numbers, table headers repeated, figures kept whole),
so the two outputs cannot drift apart.  The page it lays out is the ``"print"`` rendering:
the same document with figures as PNG images at print resolution (WeasyPrint paints inline
SVG element by element, which took most of the PDF's time) and without the HTML-only
listings; each figure is drawn once for both outputs (:mod:`reliab.report.figures`).  The page references no external resource; the URL
fetcher only accepts ``data:`` URLs so that rendering never touches the network or disk.

The PDF of :func:`reliab.run_report` is laid out by a second process while the first
finishes the run (:class:`PdfProcess`): WeasyPrint's layout is pure Python, so in the process
that also draws the screen page's SVG figures and writes the archive and tables it could only
run after them, on one core.  The process is started before the analyses (it imports
WeasyPrint meanwhile), is handed the print page once the figures are drawn and lays it out
exactly as :func:`render_pdf` does (same renderer, no base URL, only ``data:`` URLs fetched),
so the bytes are the same.  A process that cannot start, fails or returns no PDF never fails
the run: :meth:`PdfProcess.pdf` returns ``None`` and the caller renders in process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
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


#: the second process's program: the print page on stdin, the PDF on stdout.  WeasyPrint
#: writes each PNG into the PDF as the image data of Pillow's own PNG encoding of it
#: (``RasterImage._get_png_data``), one image after the other once the layout is done; here
#: every figure of the page is encoded so on two threads while the layout runs (Pillow's
#: encoder releases the GIL), and WeasyPrint is handed the result for the same PNG bytes:
#: the same function of the same input, so the same bytes.  Its stderr counts the reuses.
SCRIPT = """\
import base64, io, re, sys
from concurrent.futures import ThreadPoolExecutor
from PIL import Image
from weasyprint import HTML
from weasyprint.images import RasterImage
from weasyprint.urls import URLFetcher
page = sys.stdin.buffer.read().decode("utf-8")
encode = getattr(RasterImage, "_get_png_data", None)
ready, reused = {}, []
if encode is not None:
    pool = ThreadPoolExecutor(2)
    for m in set(re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)):
        raw = base64.b64decode(m)
        ready[raw] = pool.submit(lambda raw=raw: encode(Image.open(io.BytesIO(raw))))
    def reuse(image):
        fp = getattr(image, "fp", None)
        raw = fp.getvalue() if isinstance(fp, io.BytesIO) else None
        if raw in ready:
            reused.append(1)
            return ready[raw].result()
        return encode(image)
    RasterImage._get_png_data = staticmethod(reuse)
fetcher = URLFetcher(allowed_protocols=("data",))
sys.stdout.buffer.write(HTML(string=page, base_url=None, url_fetcher=fetcher).write_pdf())
sys.stderr.write(f"reused {len(reused)} of {len(ready)} images\\n")
"""


class PdfProcess:
    """A WeasyPrint process started now, given a print page later (module docstring).

    Use as a context manager (or call :meth:`close`): a run that fails before its PDF stops
    the process.
    """

    def __init__(self) -> None:
        self._out: tuple[bytes, bytes] | None = None
        self._talk: threading.Thread | None = None
        try:  # -I: neither the working folder nor PYTHON* variables change what it imports
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-c", SCRIPT], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError:
            self._proc = None

    def send(self, page: str) -> None:
        """Hand over the print page; returns at once (a thread feeds the pipe)."""
        proc = self._proc
        if proc is None or self._talk is not None:
            return
        data = page.encode("utf-8")

        def talk() -> None:
            try:
                self._out = proc.communicate(data)
            except (OSError, ValueError):  # the process died or was stopped
                self._out = None

        self._talk = threading.Thread(target=talk, name="reliab-pdf", daemon=True)
        self._talk.start()

    def input_fds(self) -> tuple[int, ...]:
        """The write end of the process's input while it is open: a forked copy of this
        process closes it (the layout starts at its end of file)."""
        proc = self._proc
        return (proc.stdin.fileno(),) if proc is not None and proc.stdin and not proc.stdin.closed else ()

    def pdf(self) -> bytes | None:
        """The PDF of the page sent, or ``None`` when the process gave none."""
        if self._talk is None or self._proc is None:
            return None
        self._talk.join()
        out = self._out
        if out is None or self._proc.returncode != 0 or not out[0].startswith(b"%PDF-"):
            return None
        return out[0]

    def close(self) -> None:
        """Stop the process if it still runs."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if self._talk is not None:
            self._talk.join()

    def __enter__(self) -> PdfProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["SCRIPT", "PdfProcess", "render_pdf", "write_pdf"]
