"""Time windows of the live sources: parsing ``start``/``end`` and cutting them into chunks."""

from __future__ import annotations

from datetime import datetime

import pandas as pd

Moment = str | datetime | pd.Timestamp


def utc(value: Moment | None, name: str, *, default_now: bool = False) -> pd.Timestamp:
    """``value`` as an aware UTC timestamp (naive values are UTC); ``None`` -> now or error.

    Raises
    ------
    ValueError
        ``value`` is missing (and not defaulted) or is not a time; the message names ``name``.
    """
    if value is None:
        if default_now:
            return pd.Timestamp.now(tz="UTC").floor("s")
        raise ValueError(f"{name}= is required (an ISO time such as '2024-06-01T00:00:00Z')")
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name}={value!r} is not a time (ISO 8601, e.g. '2024-06-01T00:00:00Z')") from exc
    if pd.isna(ts):
        raise ValueError(f"{name}={value!r} is not a time")
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def duration(value: str | pd.Timedelta | float, name: str) -> pd.Timedelta:
    """A positive duration from ``'1D'``, ``'6h'``, a Timedelta or seconds.

    Raises
    ------
    ValueError
        Not a positive duration; the message names ``name``.
    """
    try:
        td = pd.Timedelta(seconds=value) if isinstance(value, int | float) else pd.Timedelta(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name}={value!r} is not a duration such as '1D' or '15s'") from exc
    if pd.isna(td) or td <= pd.Timedelta(0):
        raise ValueError(f"{name}={value!r} must be a positive duration")
    return td


def window(start: Moment | None, end: Moment | None) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The UTC window ``[start, end]``; ``end`` defaults to now.

    Raises
    ------
    ValueError
        A bound is not a time, or ``end`` is not after ``start``.
    """
    a, b = utc(start, "start"), utc(end, "end", default_now=True)
    if b <= a:
        raise ValueError(f"end={b.isoformat()} must be after start={a.isoformat()}")
    return a, b


def chunks(start: pd.Timestamp, end: pd.Timestamp, size: pd.Timedelta) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """Consecutive ``[a, b)`` pieces of at most ``size`` covering ``[start, end)``."""
    out = []
    a = start
    while a < end:
        b = min(a + size, end)
        out.append((a, b))
        a = b
    return out


def iso(ts: pd.Timestamp) -> str:
    """``2024-06-01T00:00:00`` (UTC, seconds, no offset): the form sacct and URLs take."""
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S")
