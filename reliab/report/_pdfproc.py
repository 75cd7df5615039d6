"""Lay the PDF out in a second process while this one finishes the run.

WeasyPrint's layout is pure Python, so in the process that also draws the screen page's SVG
figures and writes the archive and tables it can only run after them, on one core.
:class:`PdfProcess` starts a Python process at once (it imports WeasyPrint while this one
builds the document), hands it the print page of :func:`reliab.report.html.render_html`
(figures already drawn) and collects the PDF at the end.  The process lays the page out
exactly as :func:`reliab.report.pdf.render_pdf` does (same renderer, no base URL, a URL
fetcher that accepts only ``data:`` URLs), so the bytes are the same.  A process that cannot
start, fails or returns no PDF never fails the run: :meth:`PdfProcess.pdf` then returns
``None`` and the caller lays the PDF out itself.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from types import TracebackType

#: the second process's program: the print page on stdin, the PDF on stdout
SCRIPT = """\
import sys
from weasyprint import HTML
from weasyprint.urls import URLFetcher
page = sys.stdin.buffer.read().decode("utf-8")
fetcher = URLFetcher(allowed_protocols=("data",))
sys.stdout.buffer.write(HTML(string=page, base_url=None, url_fetcher=fetcher).write_pdf())
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


__all__ = ["SCRIPT", "PdfProcess"]
