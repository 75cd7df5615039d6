"""Fast literal prefilter: big blocks, one multi-literal scan per block in polars (Rust).

:func:`fast_candidates` yields the same ``(lineno, raw, size)`` triples as
:func:`reliab.ingest._prefilter.candidate_lines` — the lines holding a literal plus every
over-long line — but finds them with a single pass per block: ``pl.scan_lines`` splits the
block into lines and one regex alternation of the literals (Rust ``regex``, SIMD literal
search) keeps the hits, instead of one ``bytes.find`` pass per literal.  ``raw`` is the
decoded ``str`` for a line found by polars and ``bytes`` for one found by the pure-Python
fallback, which handles a block that polars rejects (invalid UTF-8) or that holds an
over-long line; the caller decodes bytes and strips the terminator in either case.

:func:`open_stream` reads gzip with ``zlib`` in large chunks (``gzip.open`` decompresses in
small pieces); other inputs go through :func:`reliab.ingest._io.open_binary`.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from reliab.ingest import _prefilter
from reliab.ingest._io import compression_of, open_binary

#: bytes read (or decompressed) per block
BLOCK = 8 << 20
#: files smaller than this on disk use the pure-Python prefilter (no polars import)
FAST_MIN_BYTES = 4 << 20
_GZ_CHUNK = 1 << 20

Hit = tuple[int, bytes | str, int]
Numbered = Iterator[Hit]
Finder = Callable[[bytes], tuple[int, list[tuple[int, str]]] | None]


def use_fast_path(path: str) -> bool:
    """Whether ``path`` is large enough for the polars prefilter, and polars is importable."""
    try:
        if os.path.getsize(path) < FAST_MIN_BYTES:
            return False
        import polars  # noqa: F401
    except (OSError, ImportError):
        return False
    return True


class _GzipBlocks:
    """A gzip file decompressed with ``zlib`` in large chunks (multi-member aware).

    Like :mod:`gzip`: members may follow each other, zero padding after the last one is
    ignored, other trailing bytes raise :class:`OSError`; a stream cut short raises
    :class:`EOFError` after the data before the cut was returned, corrupt data (or a bad
    CRC) raises :class:`zlib.error`.
    """

    def __init__(self, path: str) -> None:
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._dec = zlib.decompressobj(wbits=31)
        self._feed = b""
        self._done = False

    def _next_member(self) -> bool:
        """Start the member after the finished one; ``False`` at the end of the file."""
        rest = self._dec.unused_data.lstrip(b"\x00")
        while len(rest) < 2:
            more = self._fh.read(_GZ_CHUNK)
            if not more:
                if rest:
                    raise OSError("trailing data after the gzip stream is not a gzip member")
                return False
            rest = (rest + more).lstrip(b"\x00")
        if not rest.startswith(b"\x1f\x8b"):
            raise OSError("trailing data after the gzip stream is not a gzip member")
        self._dec = zlib.decompressobj(wbits=31)
        self._feed = rest
        return True

    def read(self, size: int) -> bytes:
        """Up to ``size`` decompressed bytes; ``b""`` at the end of the stream."""
        out: list[bytes] = []
        got = 0
        while got < size and not self._done:
            if self._dec.eof:
                if got:  # a member ended: the next call starts the next one (or fails)
                    break
                if not self._next_member():
                    self._done = True
                    break
            data = self._feed or self._fh.read(_GZ_CHUNK)
            if not data:
                if got:  # hand out what was decompressed; the next call raises
                    break
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
            piece = self._dec.decompress(data, size - got)
            self._feed = self._dec.unconsumed_tail
            out.append(piece)
            got += len(piece)
        return out[0] if len(out) == 1 else b"".join(out)

    def close(self) -> None:
        """Close the underlying file."""
        self._fh.close()

    def __enter__(self) -> _GzipBlocks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_stream(path: str) -> Any:
    """Binary reader of ``path`` with a ``read(n)`` method: gzip via zlib, else ``open_binary``."""
    fh = open_binary(path)  # raises InputFileError for a missing or unreadable file
    if compression_of(path) != "gzip":
        return fh
    fh.close()
    return _GzipBlocks(path)


def polars_finder(literals: tuple[bytes, ...]) -> Finder:
    """``find(seg) -> (lines, [(index, text), …])`` with polars, ``None`` if it cannot.

    ``None`` means the segment is not valid UTF-8 or holds a line of at least
    ``MAX_LINE_BYTES - 1`` bytes (whose exact size polars does not keep).
    """
    import polars as pl

    pattern = "|".join(re.escape(lit.decode("utf-8")) for lit in literals)
    limit = _prefilter.MAX_LINE_BYTES - 1
    line = pl.col("line")
    keep = line.str.contains(pattern) | (line.str.len_bytes() >= limit)

    def find(seg: bytes) -> tuple[int, list[tuple[int, str]]] | None:
        try:
            frame = pl.scan_lines(seg).collect()
        except pl.exceptions.ComputeError:
            return None
        hits = frame.with_row_index("i").filter(keep)
        if hits.height and hits["line"].str.len_bytes().max() >= limit:  # type: ignore[operator]
            return None
        rows: list[tuple[int, str]] = hits.rows()
        return frame.height, rows

    return find


def python_segment(seg: bytes, base: int, literals: tuple[bytes, ...]) -> tuple[int, list[Hit]]:
    """Line count and candidate lines of ``seg`` (whole lines, the last maybe unterminated)."""
    limit = _prefilter.MAX_LINE_BYTES
    lines = seg.split(b"\n")
    closed = seg.endswith(b"\n")
    if closed:
        lines.pop()
    last = len(lines) - 1
    out: list[Hit] = []
    for i, line in enumerate(lines):
        size = len(line) + (i < last or closed)
        if size > limit:
            out.append((base + i + 1, line[: limit + 1], size))
        elif any(lit in line for lit in literals):
            out.append((base + i + 1, line, size))
    return len(lines), out


def _segment(seg: bytes, base: int, literals: tuple[bytes, ...], finder: Finder) -> tuple[int, list[Hit]]:
    found = finder(seg)
    if found is None:
        return python_segment(seg, base, literals)
    return found[0], [(base + i + 1, text, len(text)) for i, text in found[1]]


def fast_candidates(fh: BinaryIO, literals: tuple[bytes, ...], counter: list[int],
                    finder: Finder | None = None) -> Numbered:
    """Lines of ``fh`` that contain one of ``literals`` (plus every over-long line).

    Same output as :func:`reliab.ingest._prefilter.candidate_lines` (up to ``raw`` being
    ``str`` or ``bytes`` without its terminator); ``counter[0]`` is kept at the number of
    lines consumed, so a broken stream still reports how far it got.
    """
    if finder is None:
        finder = polars_finder(literals)
    limit = _prefilter.MAX_LINE_BYTES
    chunk = _prefilter._CHUNK
    read = fh.read
    carry = b""
    while True:
        block = read(BLOCK)
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) <= limit:
                carry = data
                continue
            size, head = len(data), data[: limit + 1]
            rest = b""
            while True:  # skip to the end of the over-long line
                more = read(chunk)
                nl = more.find(b"\n")
                if not more or nl >= 0:
                    size += nl + 1 if nl >= 0 else 0
                    rest = more[nl + 1:] if nl >= 0 else b""
                    break
                size += len(more)
            counter[0] += 1
            yield counter[0], head, size
            carry = rest
            continue
        seg, carry = data[: cut + 1], data[cut + 1:]
        count, hits = _segment(seg, counter[0], literals, finder)
        yield from hits
        counter[0] += count
    if carry:  # the last line(s), the very last without terminator
        count, hits = _segment(carry, counter[0], literals, finder)
        yield from hits
        counter[0] += count
