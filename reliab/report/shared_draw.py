"""Draw a report's figures on two cores: a forked copy of this process draws every other one.

Drawing the figures (:mod:`reliab.report.figures`: one Agg draw per figure for the PNG and
its box, then the SVG inside that box) is pure Python in matplotlib, so threads cannot share
it, and the PDF cannot be laid out before every PNG exists.  A copy of the process made by
``fork`` (POSIX ``fork(2)``) holds the very same figure objects, style settings and font
caches, so what it draws is byte for byte what this process would draw; it draws its share
(every second figure, in document order), sends each one's box, PNG and draw counts as soon
as its PNGs are done, then its SVGs, and exits.  This process draws the other share
meanwhile and keeps what the copy sent exactly as if it had drawn it
(:func:`reliab.report.figures.rendered`).  Nothing here changes a byte of either output: a
figure the copy could not draw, or everything when there is no ``fork`` (Windows) or the
copy fails or takes too long, is drawn here as before, and a figure that cannot be drawn
still becomes a note in its section.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import threading
import warnings
from contextlib import suppress
from types import TracebackType
from typing import Any

import numpy as np
from matplotlib.figure import Figure as MplFigure
from matplotlib.transforms import Bbox

from reliab.report import figures as _figures
from reliab.report.document import Figure, Report

#: seconds to wait for the copy's PNGs, then its SVGs, before drawing its share here (a
#: report's figures take a few seconds; a copy that hangs costs at most this)
WAIT_S = 120.0
_HEADER = struct.Struct("!Q")


def report_figures(report: Report) -> list[MplFigure]:
    """The matplotlib figures of ``report`` in document order, each once."""
    seen: dict[int, MplFigure] = {}
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Figure) and isinstance(block.figure, MplFigure):
                seen.setdefault(id(block.figure), block.figure)
    return list(seen.values())


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _child(fd: int, share: list[tuple[int, MplFigure]]) -> None:
    """In the copy: PNGs of ``share``, sent; then their SVGs, sent (index -> values)."""
    drawn = {}
    for i, fig in share:
        try:
            entry = _figures.rendered(fig)
        except Exception:  # noqa: BLE001,S112 - drawn again in the parent, which notes the error
            continue
        drawn[i] = (entry.bbox.get_points(), entry.png, dict(entry.draws))
    _send(fd, drawn)
    with suppress(OSError):  # the PDF's layout now waits on no figure: it goes first on the cores
        os.nice(5)
    svgs = {}
    for i, fig in share:
        entry = _figures._CACHE.get(fig)  # noqa: SLF001 - the module's own cache
        if entry is None:
            continue
        try:
            svgs[i] = (_figures._svg_of(fig, entry), dict(entry.draws))  # noqa: SLF001
        except Exception:  # noqa: BLE001,S112 - drawn again in the parent
            continue
    _send(fd, svgs)


class SharedDraw:
    """Draw ``figures`` here and in a forked copy (module docstring).

    Parameters
    ----------
    figures : list of matplotlib Figure
        In document order (:func:`report_figures`).
    close_in_copy : tuple of int
        File descriptors the copy closes first: the write end of another process's input
        (that process waits for its end of file, which the copy's duplicate would hold back).
    """

    def __init__(self, figures: list[MplFigure], *, close_in_copy: tuple[int, ...] = ()) -> None:
        todo = [(i, f) for i, f in enumerate(figures) if f not in _figures._CACHE]  # noqa: SLF001
        self._mine = [f for n, (_, f) in enumerate(todo) if n % 2 == 0]
        self._theirs = {i: f for n, (i, f) in enumerate(todo) if n % 2 == 1}
        self._pid = 0
        self._messages: queue.Queue[Any] = queue.Queue()
        if self._theirs and hasattr(os, "fork"):
            self._fork(close_in_copy)
        if not self._pid:
            self._mine = [f for _, f in todo]

    def _fork(self, close_in_copy: tuple[int, ...]) -> None:
        read, write = os.pipe()
        try:
            with warnings.catch_warnings():  # Python 3.12+ warns of fork beside threads: the
                # copy takes no lock another thread could hold (matplotlib, PIL, pickle, a pipe)
                warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
                pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the copy: never returns into the caller's code
            try:
                os.close(read)
                for fd in close_in_copy:
                    with suppress(OSError):
                        os.close(fd)
                _child(write, sorted(self._theirs.items()))
            finally:
                os._exit(0)
        os.close(write)
        self._pid = pid
        threading.Thread(target=self._receive, args=(read,), name="reliab-figures", daemon=True).start()

    def _receive(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            while True:
                head = pipe.read(_HEADER.size)
                if len(head) < _HEADER.size:
                    break
                (size,) = _HEADER.unpack(head)
                body = pipe.read(size)
                if len(body) < size:
                    break
                self._messages.put(pickle.loads(body))  # noqa: S301 - our own forked copy
        self._messages.put(None)

    def _next(self) -> dict[int, Any] | None:
        try:
            message = self._messages.get(timeout=WAIT_S)
        except queue.Empty:
            message = None
        if message is None:
            self.close()
        return message

    def pngs(self) -> None:
        """Draw this process's share; keep the copy's PNGs and boxes."""
        for fig in self._mine:
            with suppress(Exception):  # a figure that fails is drawn again, and noted, later
                _figures.rendered(fig)
        if not self._pid:
            return
        drawn = self._next() or {}
        for i, (points, png, draws) in drawn.items():
            fig = self._theirs[i]
            if fig not in _figures._CACHE:  # noqa: SLF001
                _figures._CACHE[fig] = _figures.Rendered(  # noqa: SLF001
                    bbox=Bbox(np.asarray(points)), png=png, draws=draws)

    def svgs(self) -> None:
        """Draw this process's share of SVGs; keep the copy's."""
        for fig in self._mine:
            with suppress(Exception):  # a figure that fails is drawn again, and noted, later
                _figures.figure_to_svg(fig)
        if not self._pid:
            return
        for i, (svg, draws) in (self._next() or {}).items():
            entry = _figures._CACHE.get(self._theirs[i])  # noqa: SLF001
            if entry is not None and entry.svg is None:
                entry.svg, entry.draws = svg, draws
        self.close()

    def close(self) -> None:
        """Stop and reap the copy if it still runs."""
        pid, self._pid = self._pid, 0
        if pid:
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with suppress(OSError):
                os.waitpid(pid, 0)

    def __enter__(self) -> SharedDraw:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["SharedDraw", "report_figures"]
