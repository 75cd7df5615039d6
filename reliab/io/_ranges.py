"""One large plain log read as several byte ranges, with exactly the whole-file result.

A log of many gigabytes is one file but need not be one task.  The work of reading a
kernel log is mostly the literal prefilter (:mod:`reliab.io._prefilter`): every line is
looked at, about one in twenty holds a literal and is handed to the parser.  That part is
split; the parse is not:

1. :func:`spans` cuts the file into ranges of about ``range_bytes`` bytes, each moved
   forward to the start of a line, so every line lies in exactly one range (a line is
   never cut, however long, and ``\r\n`` is never split from its ``\n``);
2. one task per range runs the file's reader in *collect* mode (:func:`collecting`):
   :func:`reliab.io._lines.scan_lines` reads only that range, keeps its candidate lines
   (numbered within the range) and its line count, and parses nothing;
3. one task gets every range's candidates, renumbers them by the line counts of the
   ranges before (so ``file:line`` in origins and the quarantine is the line of the whole
   file), and runs the reader again in *feed* mode (:func:`feeding`): ``scan_lines``
   takes the candidates instead of reading the file, and the parser sees the very lines,
   in the very order, with the very numbers of a whole-file read.

Parser state that spans lines (years, boot anchors, multi-line reports) is therefore kept
exactly, because the parser itself is never split.  Only readers whose whole work is one
literal-prefiltered ``scan_lines`` pass gain from this (:data:`RANGE_SOURCES`); if a
reader turns the prefilter off for a file (a ``dmesg --reltime`` capture reads every
line), the collect pass says so and the file is read whole.  Compressed files are never
split: a gzip, bzip2, xz or zstd stream cannot be entered in the middle.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliab.io import _prefilter
from reliab.io._fastscan import BULK_ROWS, fast_candidates
from reliab.io._files import compression_of
from reliab.io._registry import FileResult

if TYPE_CHECKING:
    import polars as pl

__all__ = ["RANGE_SOURCES", "RANGE_BYTES", "Span", "SpanHits", "spans", "splittable", "collecting",
           "feeding", "active"]

#: sources whose reader is one literal-prefiltered ``scan_lines`` pass (split-safe)
RANGE_SOURCES = frozenset({"kernel"})
#: default size of one byte range
RANGE_BYTES = 256 << 20
_PROBE = 1 << 16
#: whether a lone ``\r`` ends a line on the line routes (it does once ``Terminators`` exists)
_CR_ENDS = hasattr(_prefilter, "Terminators")


@dataclass(frozen=True)
class Span:
    """Bytes ``[start, stop)`` of ``path``: whole lines; ``index`` of ``count`` ranges."""

    path: str
    start: int
    stop: int
    index: int
    count: int


@dataclass
class SpanHits:
    """What the collect pass found in one span.

    ``lines`` is the number of lines of the span; ``linenos`` (1-based, within the span),
    ``texts`` and ``sizes`` describe its candidate lines in order (``texts`` are ``str``,
    or ``bytes`` where the text is not valid UTF-8 or the line is over-long).  ``split`` is
    False when the reader did not use the literal prefilter for this file, and ``error``
    names a read error of the span: either way the file is read whole instead.
    """

    span: Span
    lines: int = 0
    linenos: list[int] = field(default_factory=list)
    texts: list[str | bytes] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    split: bool = True
    error: str | None = None


def _next_line_start(fh: Any, cut: int, size: int) -> int:
    """Offset of the first line that starts at or after ``cut`` (``size`` if none does).

    A line starts after ``\n``, after ``\r\n``, and after a ``\r`` not followed by ``\n``
    (the terminators of :class:`reliab.io._prefilter.Terminators`).
    """
    if cut <= 0:
        return 0
    pos = cut - 1  # the byte before the cut decides whether a line starts at the cut
    fh.seek(pos)
    while pos < size:
        block = fh.read(_PROBE)
        if not block:
            break
        nl, cr = block.find(b"\n"), block.find(b"\r") if _CR_ENDS else -1
        hits = [i for i in (nl, cr) if i >= 0]
        if not hits:
            pos += len(block)
            continue
        i = min(hits)
        if block[i:i + 1] == b"\n":
            return min(pos + i + 1, size)
        if i + 1 < len(block):  # a \r: a \n right after it belongs to it
            return min(pos + i + (2 if block[i + 1:i + 2] == b"\n" else 1), size)
        fh.seek(pos + i + 1)
        after = fh.read(1)
        return min(pos + i + (2 if after == b"\n" else 1), size)
    return size


def spans(path: str, range_bytes: int = RANGE_BYTES) -> list[Span]:
    """The byte ranges of ``path``: about ``range_bytes`` each, every one whole lines.

    A file of at most ``range_bytes`` (or compressed) is one span.  A line longer than a
    range makes its range longer: cuts that fall inside it move to its end.
    """
    if range_bytes < 1:
        raise ValueError(f"range_bytes must be positive, got {range_bytes}")
    size = os.path.getsize(path)
    if size <= range_bytes or compression_of(path) is not None:
        return [Span(path, 0, size, 0, 1)]
    bounds = [0]
    with open(path, "rb") as fh:
        for cut in range(range_bytes, size, range_bytes):
            start = _next_line_start(fh, max(cut, bounds[-1]), size)
            if start > bounds[-1] and start < size:
                bounds.append(start)
    bounds.append(size)
    pairs = list(zip(bounds[:-1], bounds[1:], strict=True))
    return [Span(path, a, b, i, len(pairs)) for i, (a, b) in enumerate(pairs)]


def splittable(path: str, source: str, range_bytes: int = RANGE_BYTES) -> bool:
    """Whether ``path``, read by ``source``, is worth reading as several ranges."""
    try:
        return (source in RANGE_SOURCES and os.path.getsize(path) > range_bytes
                and compression_of(path) is None)
    except OSError:
        return False


class _Window:
    """``read(n)`` over bytes ``[start, stop)`` of a file (the span the collect pass sees)."""

    def __init__(self, path: str, start: int, stop: int) -> None:
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._fh.seek(start)
        self._left = stop - start

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        want = self._left if size is None or size < 0 else min(size, self._left)
        data = self._fh.read(want)
        self._left -= len(data)
        return data

    read1 = read

    def close(self) -> None:
        self._fh.close()


@dataclass
class _Mode:
    """The task's instruction to ``scan_lines`` for one path: collect a span, or feed hits."""

    path: str
    span: Span | None = None
    hits: SpanHits | None = None
    feed: list[SpanHits] | None = None
    used: bool = False

    def collect(self, literals: tuple[bytes, ...] | None, source: str) -> FileResult:
        """Collect the candidate lines of the span (an empty result for the reader to return)."""
        assert self.span is not None
        hits = SpanHits(self.span)
        self.hits, self.used = hits, True
        if not literals:
            hits.split = False
        else:
            counter = [0]
            fh = _Window(self.span.path, self.span.start, self.span.stop)
            try:
                stream = _prefilter.Terminators(fh) if _CR_ENDS else fh  # type: ignore[attr-defined]
                for lineno, raw, size in fast_candidates(stream, literals, counter):  # type: ignore[arg-type]
                    hits.linenos.append(lineno)
                    hits.texts.append(raw)
                    hits.sizes.append(size)
            except OSError as exc:  # read the file whole: that read reports it as usual
                hits.error = f"{type(exc).__name__}: {exc}"
            finally:
                fh.close()
            hits.lines = counter[0]
        return FileResult(path=self.path, source=source, lines=0, parsed=0, irrelevant=0, malformed=0)

    def candidates(self, counter: list[int], bulk: Callable[[pl.DataFrame], tuple[pl.DataFrame, pl.DataFrame]] | None,
                   sink: Callable[[pl.DataFrame], None]) -> Iterator[tuple[int, str | bytes, int]]:
        """The fed candidate lines, numbered in the whole file, as the line routes yield them.

        With ``bulk``, runs of clean candidates (text, not over-long) go to it in groups
        first, as on the polars route, and its rows to ``sink``; the others are yielded.
        ``counter[0]`` ends at the file's line count.
        """
        assert self.feed is not None
        self.used = True
        group: list[tuple[int, str]] = []

        def flush() -> Iterator[tuple[int, str | bytes, int]]:
            if not group:
                return
            rows, rest = bulk(_frame(group))  # type: ignore[misc]
            group.clear()
            if rows.height:
                sink(rows)
            for i, text in rest.iter_rows():
                yield int(i) + 1, text, len(text)

        base = 0
        limit = _prefilter.MAX_LINE_BYTES
        for part in self.feed:
            for lineno, raw, size in zip(part.linenos, part.texts, part.sizes, strict=True):
                n = base + lineno
                if bulk is not None and isinstance(raw, str) and size <= limit:
                    group.append((n - 1, raw))
                    if len(group) >= BULK_ROWS:
                        yield from flush()
                    continue
                yield from flush()
                yield n, raw, size
            base += part.lines
            counter[0] = base
        yield from flush()
        counter[0] = base


def _frame(group: list[tuple[int, str]]) -> pl.DataFrame:
    """A group of fed candidates as the polars route hands them to a bulk hook."""
    import polars as pl

    return pl.DataFrame({"i": [i for i, _ in group], "line": [t for _, t in group]},
                        schema={"i": pl.UInt32, "line": pl.String})


_MODE: contextvars.ContextVar[_Mode | None] = contextvars.ContextVar("reliab_range_mode", default=None)


def active(path: str) -> _Mode | None:
    """The range instruction for ``path`` in this context (``None``: read it as usual)."""
    mode = _MODE.get()
    return mode if mode is not None and mode.path == path else None


@contextmanager
def collecting(span: Span) -> Iterator[_Mode]:
    """Within the block, ``scan_lines`` on ``span.path`` collects that span's candidates."""
    mode = _Mode(span.path, span=span)
    token = _MODE.set(mode)
    try:
        yield mode
    finally:
        _MODE.reset(token)


@contextmanager
def feeding(path: str, parts: list[SpanHits]) -> Iterator[_Mode]:
    """Within the block, ``scan_lines`` on ``path`` parses the candidates of ``parts``."""
    mode = _Mode(path, feed=sorted(parts, key=lambda h: h.span.index))
    token = _MODE.set(mode)
    try:
        yield mode
    finally:
        _MODE.reset(token)
