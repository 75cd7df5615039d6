"""Fast literal prefilter: polars (Rust) finds the candidate lines of large files.

:func:`path_candidates` is the main route for plain and gzip files: one streaming polars
query (``pl.scan_lines`` on the path, which also decompresses gzip) numbers every line,
keeps the text of the lines holding a literal (plus the over-long ones) and hands them over
in batches while it keeps scanning in its own threads, so the caller's parsing overlaps the
scan.  An optional *bulk* hook takes each batch first, parses the lines it recognises
column-wise and returns the others.  Whatever polars cannot do exactly like the reference
(invalid UTF-8, a line at or near ``MAX_LINE_BYTES``, a broken or padded gzip stream) makes
the file restart on the block route below, which skips the lines already handed out.

:func:`fast_candidates` yields the same ``(lineno, raw, size)`` triples as
:func:`reliab.io._prefilter.candidate_lines` — the lines holding a literal plus every
over-long line — but finds them with a single pass per block: ``pl.scan_lines`` splits the
block into lines and one regex alternation of the literals (Rust ``regex``, SIMD literal
search) keeps the hits, instead of one ``bytes.find`` pass per literal.  ``raw`` is the
decoded ``str`` for a line found by polars and ``bytes`` for one found by the pure-Python
fallback, which handles a block that polars rejects (invalid UTF-8) or that holds an
over-long line; the caller decodes bytes and strips the terminator in either case.

:func:`open_stream` reads gzip with ``zlib`` in large chunks (``gzip.open`` decompresses in
small pieces); other inputs go through :func:`reliab.io._files.open_binary`.  Both hand out
the stream through :class:`reliab.io._prefilter.Terminators`, so ``\r\n`` and a lone ``\r``
end lines as ``\n`` does.  polars splits on ``\n`` (dropping the ``\r`` of ``\r\n``), so a
line holding any other ``\r`` sends the file to the block route.

Line numbers are Python integers on every route (the polars route counts batch heights
rather than using polars' 32-bit row index), so a file of more than 2**32 lines is numbered
and counted exactly.  polars holds a whole line in memory, so the route by path is only
taken when no line can be huge: a plain file whose every window of ``MAX_LINE_BYTES // 2``
bytes holds a newline (:func:`lines_are_short`, a few page reads), or a gzip file whose
stated size is not that of a bomb (:func:`gzip_is_plausible`).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from reliab.io import _prefilter
from reliab.io._files import compression_of, open_binary

if TYPE_CHECKING:
    import polars as pl

#: bytes read (or decompressed) per block
BLOCK = 8 << 20
#: files smaller than this on disk use the pure-Python prefilter (no polars import)
FAST_MIN_BYTES = 4 << 20
_GZ_CHUNK = 1 << 20
#: rows per batch of the streaming polars query of :func:`path_candidates`
BATCH_ROWS = 25_000
#: polars line-reader settings during the scan, unless the environment sets them (they are
#: removed again afterwards): its defaults (chunks of ~16 MiB, 4 read ahead) cost ~150 MiB
#: more peak RSS at the same speed
POLARS_ENV = {"POLARS_NDJSON_CHUNK_SIZE": "1000000", "POLARS_LINES_CHUNK_PREFETCH_LIMIT": "1"}

Hit = tuple[int, bytes | str, int]
Numbered = Iterator[Hit]
Finder = Callable[[bytes], tuple[int, list[tuple[int, str]]] | None]
#: bulk(hits) -> (rows, rest): ``hits`` has columns ``i`` (0-based line) and ``line``, ``rest``
#: the same columns for the hits it did not parse
Bulk = Callable[["pl.DataFrame"], tuple["pl.DataFrame", "pl.DataFrame"]]


def use_fast_path(path: str) -> bool:
    """Whether ``path`` is large enough for the polars prefilter, and polars is importable.

    A compressed file always is: a few hundred KB of Zstandard can hold tens of millions of
    lines, which only the bulk parser reads in bounded memory.
    """
    try:
        if os.path.getsize(path) < FAST_MIN_BYTES and compression_of(path) is None:
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
    """Binary reader of ``path`` with a ``read(n)`` method: gzip via zlib, else ``open_binary``.

    Line terminators read as ``\n`` (:class:`reliab.io._prefilter.Terminators`).
    """
    fh = open_binary(path)  # raises InputFileError for a missing or unreadable file
    if compression_of(path) != "gzip":
        return _prefilter.Terminators(fh)
    fh.close()
    return _prefilter.Terminators(_GzipBlocks(path))  # type: ignore[arg-type]


#: gzip files whose stated size is more than this many times their own are read on the
#: block route (logs compress 5-30x; a run of one byte 1000x)
GZIP_MAX_RATIO = 128


def lines_are_short(path: str, window: int | None = None) -> bool:
    """Whether every ``window`` bytes of the plain file ``path`` hold a newline.

    Then no line is longer than ``2 * window``.  Reads about one page per window (the
    newline is near the window start in any log), so a 100 MiB file costs ~200 reads.
    """
    window = window or _prefilter.MAX_LINE_BYTES // 2
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        for start in range(0, size, window):
            fh.seek(start)
            got = 0
            while got < window:
                piece = fh.read(min(4096 if got == 0 else 65536, window - got))
                if not piece:
                    return True
                if b"\n" in piece or b"\r" in piece:
                    break
                got += len(piece)
            else:
                return False
    return True


def gzip_is_plausible(path: str) -> bool:
    """Whether a gzip file's stated size (ISIZE, RFC 1952) is at most GZIP_MAX_RATIO times its own.

    ISIZE is the last member's size modulo 2**32, so a crafted file can understate it; such
    a file still reads correctly on the polars route, only with its lines held whole.
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 8:
            return False
        fh.seek(size - 4)
        stated = int.from_bytes(fh.read(4), "little")
    return stated <= GZIP_MAX_RATIO * size


def by_path_ok(path: str, compression: str | None) -> bool:
    """Whether the polars route by path may read ``path`` in bounded memory."""
    try:
        if compression is None:
            return lines_are_short(path)
        return compression == "gzip" and gzip_is_plausible(path)
    except OSError:
        return False


def polars_finder(literals: tuple[bytes, ...]) -> Finder:
    """``find(seg) -> (lines, [(index, text), …])`` with polars, ``None`` if it cannot.

    ``None`` means the segment is not valid UTF-8 or holds a line of at least
    ``MAX_LINE_BYTES - 1`` bytes (whose exact size polars does not keep).
    """
    import polars as pl

    limit = _prefilter.MAX_LINE_BYTES - 1
    line = pl.col("line")
    keep = line.str.contains(_pattern(literals)) | (line.str.len_bytes() >= limit)

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
        ended = i < last or closed
        size = len(line) + ended
        if size > limit:  # the head keeps its terminator when it fits, as in the reference
            head = line[: limit + 1]
            out.append((base + i + 1, head + b"\n" if ended and len(head) <= limit else head, size))
        elif any(lit in line for lit in literals):
            out.append((base + i + 1, line, size))
    return len(lines), out


def _segment(seg: bytes, base: int, literals: tuple[bytes, ...], finder: Finder) -> tuple[int, list[Hit]]:
    found = finder(seg)
    if found is None:
        return python_segment(seg, base, literals)
    return found[0], [(base + i + 1, text, len(text)) for i, text in found[1]]


def _bulk_finder(literals: tuple[bytes, ...], bulk: Bulk, sink: Callable[[pl.DataFrame], None]) -> Finder:
    """A :data:`Finder` whose hits go to ``bulk`` first: its rows to ``sink``, the rest returned.

    The hits keep the segment's 0-based line index in ``i``; the caller adds the lines
    before the segment (:func:`fast_candidates` passes them through ``base``).
    """
    import polars as pl

    limit = _prefilter.MAX_LINE_BYTES - 1
    line = pl.col("line")
    keep = line.str.contains(_pattern(literals)) | (line.str.len_bytes() >= limit)
    base = [0]

    def find(seg: bytes) -> tuple[int, list[tuple[int, str]]] | None:
        try:
            frame = pl.scan_lines(seg).collect()
        except pl.exceptions.ComputeError:
            return None
        hits = frame.with_row_index("i").filter(keep)
        if hits.height and hits["line"].str.len_bytes().max() >= limit:  # type: ignore[operator]
            return None
        height = frame.height
        del frame
        hits = hits.with_columns(pl.col("i").cast(pl.Int64) + base[0])
        rows, rest = bulk(hits)
        if rows.height:
            sink(rows)
        return height, [(i - base[0], text) for i, text in rest.iter_rows()]

    find.base = base  # type: ignore[attr-defined]
    return find


def fast_candidates(fh: BinaryIO, literals: tuple[bytes, ...], counter: list[int],
                    finder: Finder | None = None, bulk: Bulk | None = None,
                    sink: Callable[[pl.DataFrame], None] | None = None) -> Numbered:
    """Lines of ``fh`` that contain one of ``literals`` (plus every over-long line).

    Same output as :func:`reliab.io._prefilter.candidate_lines` (up to ``raw`` being
    ``str`` or ``bytes`` without its terminator); ``counter[0]`` is kept at the number of
    lines consumed, so a broken stream still reports how far it got.  With ``bulk`` and
    ``sink`` the candidate lines of each block go to ``bulk`` first, as on the route by
    path (:func:`path_candidates`), and only the lines it did not parse are yielded: so
    a compressed stream is read in bounded memory too.
    """
    if finder is None:
        finder = polars_finder(literals) if bulk is None or sink is None else _bulk_finder(literals, bulk, sink)
    base = getattr(finder, "base", None)
    limit = _prefilter.MAX_LINE_BYTES
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
            size, head, rest = _prefilter.skip_long_line(read, data)
            counter[0] += 1
            yield counter[0], head, size
            carry = rest
            continue
        seg, carry = data[: cut + 1], data[cut + 1:]
        if base is not None:
            base[0] = counter[0]
        count, hits = _segment(seg, counter[0], literals, finder)
        yield from hits
        counter[0] += count
    if carry:  # the last line(s), the very last without terminator
        if base is not None:
            base[0] = counter[0]
        count, hits = _segment(carry, counter[0], literals, finder)
        yield from hits
        counter[0] += count


class _Fallback(Exception):
    """The polars route cannot read this file exactly like the reference."""


def _pattern(literals: tuple[bytes, ...]) -> str:
    return "|".join(re.escape(lit.decode("utf-8")) for lit in literals)


#: candidate lines gathered before the bulk parser runs (each call compiles its regexes and
#: costs ~30 ms at this size, competing with the scan for the cores)
BULK_ROWS = 32768


def _path_batches(path: str, literals: tuple[bytes, ...]) -> Iterator[tuple[int, pl.DataFrame]]:
    """``(lines so far, hits)`` per group of batches of a streaming polars scan of ``path``.

    polars scans in its own threads while the caller works on the previous group.  ``hits``
    holds ``i`` (0-based line number, Int64) and ``line`` of the candidate lines, at least
    :data:`BULK_ROWS` of them per group but in the last; their texts are copied out of the
    batch, whose string buffers hold every line of the batch (a few batches kept that way
    would add up to hundreds of MiB).  Raises :class:`_Fallback` when polars fails (invalid
    UTF-8, corrupt or padded gzip), meets a line too long to be sized exactly or a line
    holding a ``\r`` (polars drops the ``\r`` of ``\r\n`` only; a lone one ends a line on
    the other routes).  A group
    is handed out only once a later batch has arrived (or the stream ended cleanly), so a
    failing stream never hands out lines that polars might have made of its broken tail.
    Line numbers are counted in Python from the batch heights: no 32-bit limit.
    """
    import numpy as np
    import polars as pl

    line = pl.col("line")
    limit = _prefilter.MAX_LINE_BYTES - 1
    # (a separate literal test for \r: inside the alternation it halves the regex speed)
    bad = (line.str.len_bytes() >= limit) | line.str.contains("\r", literal=True)
    query = (pl.scan_lines(os.path.abspath(path), glob=False)
             .select(pl.when(line.str.contains(_pattern(literals))).then(line).alias("line"), bad.alias("bad")))
    schema = {"i": pl.Int64, "line": pl.String}
    ready: tuple[int, pl.DataFrame] | None = None  # a full group, waiting for the next batch
    numbers: list[np.ndarray] = []
    texts: list[Any] = []  # Arrow arrays of candidate lines, copied out of their batches
    held = 0
    lines = 0
    ours = [key for key in POLARS_ENV if key not in os.environ]
    os.environ.update({key: POLARS_ENV[key] for key in ours})  # read by polars' line reader
    try:
        for batch in query.collect_batches(chunk_size=BATCH_ROWS):
            if not batch.height:
                continue
            if ready is not None:
                yield ready
                ready = None
            base, lines = lines, lines + batch.height  # Python ints: no 2**32 limit
            if batch.get_column("bad").any():
                raise _Fallback("a line too long for the polars route, or a carriage return")
            col = batch.get_column("line")
            if col.null_count() == col.len():
                continue
            # Series operations: no query plan per batch; to_arrow copies the texts out (into
            # one large_string buffer holding just them: ~40 % cheaper than Python strings)
            numbers.append(np.flatnonzero(col.is_not_null().to_numpy()) + base)
            texts.append(col.drop_nulls().to_arrow())
            held += len(texts[-1])
            if held >= BULK_ROWS:
                ready = lines, _group(numbers, texts, schema)
                numbers, texts, held = [], [], 0
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise _Fallback(str(exc)) from exc
    finally:  # leave the user's own polars scans alone
        for key in ours:
            os.environ.pop(key, None)
    if ready is not None:
        yield ready
    yield lines, _group(numbers, texts, schema)


def _group(numbers: list[Any], texts: list[Any], schema: dict[str, Any]) -> pl.DataFrame:
    """One frame of candidate lines from the line numbers and texts (Arrow arrays) of several batches."""
    import numpy as np
    import polars as pl
    import pyarrow as pa

    if not texts:
        return pl.DataFrame(schema=schema)
    line = pl.Series("line", pa.chunked_array(texts).combine_chunks(), dtype=pl.String)
    return pl.DataFrame({"i": np.concatenate(numbers), "line": line}, schema=schema)


def path_candidates(path: str, literals: tuple[bytes, ...], counter: list[int],
                    bulk: Bulk | None = None,
                    sink: Callable[[pl.DataFrame], None] | None = None) -> Numbered:
    """Candidate lines of the plain or gzip file ``path``, found by one polars query.

    Same lines, numbers and count as :func:`fast_candidates` (``raw`` is always ``str``),
    except those ``bulk`` parsed: it gets each group of candidate lines first, and its rows
    go to ``sink``.  If polars fails part-way the file is read again with
    :func:`fast_candidates`, handing out only the lines after those already given.
    """
    done = 0
    try:
        for lines, hits in _path_batches(path, literals):
            rest = hits
            if bulk is not None and hits.height:
                rows, rest = bulk(hits)
                if rows.height and sink is not None:
                    sink(rows)
            for i, text in rest.iter_rows():
                yield i + 1, text, len(text)
            counter[0] = done = lines
        return
    except _Fallback:
        pass
    counter[0] = 0
    with open_stream(path) as fh:
        for hit in fast_candidates(fh, literals, counter):
            if hit[0] > done:
                yield hit
