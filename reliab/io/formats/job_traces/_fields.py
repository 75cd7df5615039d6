"""Field readers shared by the public job-trace formats: times, counts, states, CSV rows.

Each trace prints its times, counts and states its own way; these helpers turn one cell
into the value of a ``jobs`` column or raise :class:`~reliab.errors.ParseError` naming the
column, so a bad row is quarantined with its line and the rest of the file is read.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io._localtime import localize, resolve_tz
from reliab.io.formats._timestamps import out_of_range

#: cells that mean "no value" in the traces (pandas writes NaN, Philly's notebook None)
_UNSET = frozenset({"", "none", "nan", "null", "nat"})
_MAX_INT = 2**63 - 1


def zone(tz: str, option: str = "tz") -> tzinfo:
    """The zone of a reader's ``tz`` option; ``ValueError`` naming the option if unknown."""
    try:
        return resolve_tz(tz)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{option}={tz!r} is not an IANA time zone ({exc})") from None


def unset(text: Any) -> bool:
    """Whether a cell holds no value (``None``, empty, ``None``/``NaN`` text)."""
    return text is None or (isinstance(text, str) and text.strip().lower() in _UNSET)


def wall_time(text: Any, tz: tzinfo, column: str, naive: list[int] | None = None) -> datetime | None:
    """An ISO-like time cell (``2020-06-09 18:41:01``, ``…+08:00``) -> aware UTC, or ``None``.

    A time without an offset is local time in ``tz`` (DST rule of
    :mod:`reliab.io._localtime`); each such time adds one to ``naive[0]`` when given.
    """
    if unset(text):
        return None
    if not isinstance(text, str):
        raise ParseError(f"{column} {text!r} is not a time")
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ParseError(f"{column} {text.strip()[:40]!r} is not a time YYYY-MM-DD HH:MM:SS") from None
    if value.tzinfo is None:
        if naive is not None:
            naive[0] += 1
        offset = _hour_offset(tz, value.replace(minute=0, second=0, microsecond=0))
        if offset is not None:  # the common case: an hour with one offset, no DST change in it
            return _in_range((value - offset).replace(tzinfo=UTC), column)
    value = localize(value, tz).astimezone(UTC)
    return _in_range(value, column)


@lru_cache(maxsize=1 << 16)
def _hour_offset(tz: tzinfo, hour: datetime) -> timedelta | None:
    """The UTC offset of every wall time of the naive ``hour`` in ``tz``, or ``None`` when
    the hour holds a DST change (then :func:`localize` decides each time by its rule)."""
    ends = (hour, hour + timedelta(minutes=59, seconds=59, microseconds=999999))
    offsets = {t.replace(tzinfo=tz, fold=f).utcoffset() for t in ends for f in (0, 1)}
    return offsets.pop() if len(offsets) == 1 else None


def offset_time(text: str, origin: datetime, column: str) -> datetime | None:
    """Seconds after ``origin`` (``4550879.0``) -> aware UTC; ``0`` and empty are ``None``
    (not reached: the PAI release writes 0 for a time that never came)."""
    if unset(text):
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise ParseError(f"{column} {text.strip()[:40]!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ParseError(f"{column} {text.strip()[:40]!r} is not a non-negative number of seconds")
    if seconds == 0:
        return None
    try:
        value = origin + timedelta(seconds=seconds)
    except OverflowError:
        raise ParseError(f"{column} {text.strip()[:40]!r} s is beyond any date") from None
    return _in_range(value, column)


def _in_range(value: datetime, column: str) -> datetime:
    error = out_of_range(value)
    if error is not None:
        raise ParseError(f"{column}: {error}")
    return value


def count(text: Any, column: str) -> int | None:
    """A non-negative whole count (``8``, ``8.0``) or ``None`` for an empty cell."""
    if unset(text):
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParseError(f"{column} {str(text).strip()[:40]!r} is not a count") from None
    if not math.isfinite(value) or value < 0 or not value.is_integer() or value > _MAX_INT:
        raise ParseError(f"{column} {str(text).strip()[:40]!r} is not a non-negative whole number")
    return int(value)


def state_of(raw: Any, vocabulary: Mapping[str, str], source: str) -> str:
    """A trace's state word -> the Slurm-style state of the ``jobs`` table.

    Raises
    ------
    ParseError
        For a word outside the trace's documented vocabulary (the message lists it).
    """
    word = raw.strip() if isinstance(raw, str) else ""
    if word in vocabulary:
        return vocabulary[word]
    known = ", ".join(vocabulary)
    raise ParseError(f"state {str(raw)[:40]!r} is not one of the {source} states ({known})")


def text(value: Any) -> str | None:
    """A cell as stripped text, ``None`` when empty."""
    if value is None:
        return None
    out = str(value).strip()
    return out or None


def csv_cells(line: str) -> list[str]:
    """One CSV record of one physical line (RFC 4180 quoting; the traces quote nothing)."""
    return next(csv.reader([line]))


RowMaker = Callable[[dict[str, str], dict[str, Any]], dict[str, Any]]


def csv_line_parser(headers: Sequence[Sequence[str]], required: Sequence[str], make: RowMaker
                    ) -> Callable[[str, LineContext], dict[str, Any] | None]:
    """A ``scan_lines`` line parser for a CSV trace.

    A line equal to one of ``headers`` (or any line naming every ``required`` column) sets
    the column names; rows before any header use ``ctx.state["fields"]`` (a headerless
    release).  Each row becomes ``make(values, ctx.options)``.
    """
    known = {tuple(h) for h in headers}

    def parse(line: str, ctx: LineContext) -> dict[str, Any] | None:
        if not line.strip():
            return None
        cells = [c.strip() for c in csv_cells(line)]
        names = [c.lower() for c in cells]
        if tuple(names) in known or all(r in names for r in required):
            ctx.state["fields"] = names
            return None
        fields = ctx.state.get("fields")
        if fields is None:
            raise ParseError(f"row before a header naming {', '.join(required)}")
        if len(cells) != len(fields):
            raise ParseError(f"expected {len(fields)} comma-separated fields, got {len(cells)}")
        return make(dict(zip(fields, cells, strict=True)), ctx.options)

    return parse


def header_score(line: str, required: Sequence[str], excluded: Sequence[str] = ()) -> bool:
    """Whether ``line`` is a CSV header naming every ``required`` column and no ``excluded`` one."""
    if "," not in line:
        return False
    names = {c.strip().lower() for c in line.split(",")}
    return all(r in names for r in required) and not any(e in names for e in excluded)


__all__ = ["zone", "unset", "wall_time", "offset_time", "count", "state_of", "text", "csv_cells",
           "csv_line_parser", "header_score"]
