"""The quarantine of one file: malformed lines kept in full up to a limit, the rest counted.

A file of a billion malformed lines must not cost a billion quarantine rows (at ~700 B
each).  :class:`Quarantine` keeps the ``limit`` malformed lines with the *lowest* line
numbers in full (path, line, source, reason, text) and, for the others, only their number,
their first and last line, and the count of their most frequent reasons; they become one
summary row whose ``lineno`` is the first line left out and whose reason starts with
:data:`OMITTED`.  The accounting still counts every malformed line, so for each file::

    malformed == (quarantine rows that are not summaries) + (count in its summary row)

The limit is :data:`QUARANTINE_LIMIT` unless a caller sets another with
:func:`quarantine_limit` (``reliab.ingest(..., quarantine_limit=N)`` does, per run).
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import pandas as pd

from reliab import schema

#: malformed lines of one file kept in full by default
QUARANTINE_LIMIT = 1000
#: the reason of a summary row starts with this
OMITTED = "quarantine_limit"
#: distinct reasons counted in a summary row (the others are lumped together)
_REASONS = 5
_LIMIT: ContextVar[int] = ContextVar("reliab_quarantine_limit", default=QUARANTINE_LIMIT)
_COUNT = re.compile(rf"^{OMITTED}=\d+: (\d+) more malformed line")


@contextmanager
def quarantine_limit(limit: int | None) -> Iterator[None]:
    """Keep at most ``limit`` malformed lines per file in full inside the block.

    ``None`` keeps the current limit.

    Raises
    ------
    ValueError
        If ``limit`` is not a non-negative integer.
    """
    if limit is None:
        yield
        return
    check_limit(limit)
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def check_limit(limit: object) -> None:
    """Raise ``ValueError`` unless ``limit`` is ``None`` or a non-negative integer."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"quarantine_limit must be a non-negative integer, not {limit!r}")


def current_limit() -> int:
    """The quarantine limit in force (see :func:`quarantine_limit`)."""
    return _LIMIT.get()


class Quarantine:
    """Malformed lines of one file (see the module docstring)."""

    def __init__(self, path: str, source: str, limit: int | None = None) -> None:
        self.path, self.source = path, source
        self.limit = current_limit() if limit is None else limit
        self.count = 0
        self._kept: list[tuple[int, int, str, str | None]] = []  # (-lineno, -seq, reason, text)
        self._seq = 0
        self._omitted = 0
        self._first: int | None = None
        self._last: int | None = None
        self._reasons: Counter[str] = Counter()

    def add(self, lineno: int, reason: str, text: str | None = None) -> None:
        """Count one malformed line; keep it in full if it is among the first ``limit``."""
        self.count += 1
        self._seq += 1
        item = (-int(lineno), -self._seq, reason, None if text is None else text[:2000])
        if len(self._kept) < self.limit:
            heapq.heappush(self._kept, item)
            return
        if self.limit and item > self._kept[0]:  # a lower line number than the highest kept
            item = heapq.heapreplace(self._kept, item)
        self._omit(-item[0], item[2])

    def _omit(self, lineno: int, reason: str) -> None:
        self._omitted += 1
        self._first = lineno if self._first is None else min(self._first, lineno)
        self._last = lineno if self._last is None else max(self._last, lineno)
        key = reason[:120]
        if key in self._reasons or len(self._reasons) < _REASONS:
            self._reasons[key] += 1
        else:
            self._reasons["other reasons"] += 1

    def rows(self) -> list[tuple]:
        """Quarantine rows ``(path, lineno, source, reason, text)`` in line order."""
        kept = sorted(self._kept, key=lambda it: (-it[0], -it[1]))
        out = [(self.path, -ln, self.source, reason, text) for ln, _, reason, text in kept]
        if self._omitted:
            top = "; ".join(f"{r} (x{n})" for r, n in self._reasons.most_common())
            out.append((self.path, self._first, self.source,
                        f"{OMITTED}={self.limit}: {self._omitted} more malformed line(s) not kept"
                        f" (lines {self._first}-{self._last}): {top}", None))
            out.sort(key=lambda r: r[1])
        return out

    def frame(self) -> pd.DataFrame:
        """The rows as a conformed ``quarantine`` table."""
        return quarantine_frame(self.rows())


def quarantine_frame(rows: list[tuple]) -> pd.DataFrame:
    """Quarantine rows ``(path, lineno, source, reason, text)`` as a QUARANTINE table."""
    if not rows:  # nearly every file: a new frame over the shared empty columns (no copy)
        return schema.empty_view("quarantine")
    df = pd.DataFrame(rows, columns=["path", "lineno", "source", "reason", "text"])
    return schema.conform(df, "quarantine")


def quarantined_lines(quarantine: pd.DataFrame) -> int:
    """Malformed lines a quarantine table stands for: its rows, summaries counted in full."""
    if quarantine.empty:
        return 0
    omitted = quarantine["reason"].astype(str).str.extract(_COUNT, expand=False).dropna()
    return len(quarantine) - len(omitted) + int(omitted.astype("int64").sum())


__all__ = ["Quarantine", "quarantine_frame", "quarantine_limit", "quarantined_lines", "current_limit", "check_limit",
           "QUARANTINE_LIMIT", "OMITTED"]
