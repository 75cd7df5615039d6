"""Physical lines of a stream, all of them or only those containing a literal.

Both generators yield ``(lineno, head, size)`` and keep ``counter[0]`` at the number of
lines consumed so far, so a caller interrupted by a broken stream still knows how far it
got.  ``head`` is the whole line (terminator included) when ``size <= MAX_LINE_BYTES``;
for a longer line it is its first ``MAX_LINE_BYTES + 1`` bytes and the rest is skipped
without ever being held in memory.

:func:`candidate_lines` is the literal prefilter: it reads 1 MiB blocks, finds each
literal with ``bytes.find`` (C speed, like ``grep -F``), and yields only the lines holding
one; every other line is counted but never split, decoded or parsed.  Over-long lines are
always yielded so the caller can quarantine them.

Line terminators: a line ends at ``\n``, ``\r\n`` or a lone ``\r`` (the three of
Python's universal newlines; old Mac OS and some device consoles end lines with ``\r``
alone).  :class:`Terminators` rewrites a stream so that every terminator is ``\n``; both
generators here split on ``\n`` only, so callers hand them such a stream.  A terminator
counts as one byte in ``size``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

MAX_LINE_BYTES = 1 << 20  # longer lines are quarantined, not parsed
_BLOCK = MAX_LINE_BYTES  # a line inside one block can never exceed the limit
_CHUNK = 1 << 16

Numbered = Iterator[tuple[int, bytes, int]]


class Terminators:
    """A binary stream whose ``\r\n`` and lone ``\r`` terminators read as ``\n``.

    Only ``read``/``read1`` are offered (what the line generators use).  A ``\r`` at the
    end of a chunk is held back until the next byte shows whether a ``\n`` follows, so a
    ``\r\n`` split between two reads still counts once.  Chunks without ``\r`` (nearly
    all of them) pass through after one ``memchr``.
    """

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self._read = getattr(fh, "read1", fh.read)
        self._cr = False  # a \r ended the previous chunk

    def read(self, size: int = -1) -> bytes:
        """Up to about ``size`` bytes (one more when a held ``\r`` is released)."""
        data = self._read(size if size > 0 else 1 << 20)
        if self._cr:
            self._cr = False
            if not data:
                return b"\n"
            if data[:1] != b"\n":
                data = b"\n" + data
        if b"\r" not in data:
            return data
        if data.endswith(b"\r"):
            data, self._cr = data[:-1], True
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not data and self._cr:  # a lone held \r: look one read further
            return self.read(size)
        return data

    read1 = read

    def close(self) -> None:
        """Close the underlying stream."""
        self._fh.close()

    def __enter__(self) -> Terminators:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def all_lines(fh: BinaryIO, counter: list[int], *, skip_blank: bool = False) -> Numbered:
    """Every physical line of ``fh``, numbered from 1 (split on ``\n``).

    With ``skip_blank`` the empty lines (``b"\n"`` alone) are counted but not yielded, and a
    block of nothing but newlines costs one comparison: a file of a billion empty lines
    streams through at C speed.
    """
    read = getattr(fh, "read1", fh.read)
    carry = b""
    limit = MAX_LINE_BYTES
    while True:
        block = read(_BLOCK)
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) <= limit:
                carry = data
                continue
            size, head, rest = skip_long_line(read, data)
            counter[0] += 1
            yield counter[0], head, size
            carry = rest
            while (cut := carry.find(b"\n")) >= 0:  # the complete lines read past it
                counter[0] += 1
                yield counter[0], carry[: cut + 1], cut + 1
                carry = carry[cut + 1:]
            continue
        carry = data[cut + 1:]
        seg = data[: cut + 1]
        if skip_blank and not seg.strip(b"\n"):
            counter[0] += len(seg)
            continue
        # splitlines cuts at \r too: only used when there is none
        for line in _split_lf(seg) if b"\r" in seg else seg.splitlines(keepends=True):
            counter[0] += 1
            if skip_blank and line == b"\n":
                continue
            size = len(line)
            yield counter[0], line if size <= limit else line[: limit + 1], size
    if carry:  # a last line without terminator
        counter[0] += 1
        yield counter[0], carry[: limit + 1], len(carry)


def _split_lf(data: bytes) -> list[bytes]:
    """``data`` cut after every ``\n`` only (``bytes.splitlines`` also cuts at ``\r``)."""
    parts = data.split(b"\n")
    parts.pop()  # data ends with \n
    return [p + b"\n" for p in parts]


def _hits(seg: bytes, literals: tuple[bytes, ...]) -> list[int]:
    """Sorted start offsets of the lines of ``seg`` that contain any literal."""
    starts: set[int] = set()
    find, rfind = seg.find, seg.rfind
    for lit in literals:
        i = find(lit)
        while i >= 0:
            starts.add(rfind(b"\n", 0, i) + 1)
            end = find(b"\n", i)
            if end < 0:
                break
            i = find(lit, end + 1)
    return sorted(starts)


def _segment(seg: bytes, base: int, literals: tuple[bytes, ...]) -> Numbered:
    """Candidate lines of ``seg`` (complete lines; only its first may be over-long)."""
    first = seg.find(b"\n") + 1 or len(seg)
    offset = 0
    if first > MAX_LINE_BYTES:
        yield base + 1, seg[: MAX_LINE_BYTES + 1], first
        offset, base = first, base + 1
    seen = offset
    count = 0
    for start in _hits(seg[offset:] if offset else seg, literals):
        start += offset
        count += seg.count(b"\n", seen, start)
        seen = start
        end = seg.find(b"\n", start)
        end = len(seg) if end < 0 else end + 1
        yield base + count + 1, seg[start:end], end - start


def skip_long_line(read: Callable[[int], bytes], data: bytes) -> tuple[int, bytes, bytes]:
    """Consume the rest of an over-long line that starts ``data`` (which holds no newline).

    Returns its total size in bytes (terminator included), its first
    ``MAX_LINE_BYTES + 1`` bytes, and whatever was read past its end.
    """
    size, head = len(data), data[: MAX_LINE_BYTES + 1]
    step = max(_CHUNK, MAX_LINE_BYTES)  # a 5 GB line is 5,000 reads, none of them kept
    while True:
        more = read(step)
        nl = more.find(b"\n")
        if not more or nl >= 0:
            size += nl + 1 if nl >= 0 else 0
            return size, head, more[nl + 1:] if nl >= 0 else b""
        size += len(more)


def candidate_lines(fh: BinaryIO, literals: tuple[bytes, ...], counter: list[int]) -> Numbered:
    """Lines of ``fh`` that contain one of ``literals`` (plus every over-long line).

    Invariant: ``carry`` (the unfinished last line) never holds a newline, so in
    ``carry + block`` only the first line can be longer than one block.
    """
    carry = b""
    read = getattr(fh, "read1", fh.read)  # read1: a broken stream loses at most one chunk
    while True:
        block = read(_BLOCK)
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) <= MAX_LINE_BYTES:
                carry = data
                continue
            size, head, rest = skip_long_line(read, data)
            counter[0] += 1
            yield counter[0], head, size
            # keep the invariant "carry holds no newline": the complete lines read past the
            # long one (at most _CHUNK bytes, so none over-long) are scanned right away
            cut = rest.rfind(b"\n")
            if cut >= 0:
                yield from _segment(rest[: cut + 1], counter[0], literals)
                counter[0] += rest.count(b"\n", 0, cut + 1)
            carry = rest[cut + 1:]
            continue
        seg, carry = data[: cut + 1], data[cut + 1:]
        yield from _segment(seg, counter[0], literals)
        counter[0] += seg.count(b"\n")
    if carry:  # a last line without terminator
        yield from _segment(carry, counter[0], literals)
        counter[0] += 1
