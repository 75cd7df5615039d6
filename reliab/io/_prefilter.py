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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

MAX_LINE_BYTES = 1 << 20  # longer lines are quarantined, not parsed
_BLOCK = MAX_LINE_BYTES  # a line inside one block can never exceed the limit
_CHUNK = 1 << 16

Numbered = Iterator[tuple[int, bytes, int]]


def all_lines(fh: BinaryIO, counter: list[int]) -> Numbered:
    """Every physical line of ``fh``, numbered from 1."""
    readline = fh.readline
    limit = MAX_LINE_BYTES + 1
    while True:
        raw = readline(limit)
        if not raw:
            return
        size = len(raw)
        if size == limit and not raw.endswith(b"\n"):
            while True:
                more = readline(_CHUNK)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    break
        counter[0] += 1
        yield counter[0], raw, size


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
    while True:
        more = read(_CHUNK)
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
