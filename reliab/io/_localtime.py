"""Local wall-clock times -> UTC: the one rule every reader follows around DST changes.

Logs written in local time without an offset (``dmesg -T``, RFC 3164 syslog, Slurm's
default ``SLURM_TIME_FORMAT``, nvidia-smi, tickets, PyTorch glog lines) cannot name an
instant on the two days a year a daylight-saving zone changes its offset:

* **ambiguous** (the repeated hour when clocks go back, e.g. 01:30 on 2024-11-03 in
  ``America/New_York`` happens at 05:30 and at 06:30 UTC): read as the **earlier** instant
  (PEP 495 ``fold=0``: the offset in force before the change), and counted; the file's
  result carries one note saying how many times were read that way and the first of them.
* **nonexistent** (the hour skipped when clocks go forward, e.g. 02:30 on 2024-03-10 in
  ``America/New_York``): no instant has that wall time, so the line is **malformed**
  (quarantined with a reason naming the zone), never shifted silently.

Times with an explicit offset, and zones without DST changes (UTC, fixed offsets), are
never affected.  The rule is PEP 495's default (``fold=0``) for ambiguous times, which is
also what ``datetime.replace(tzinfo=...)`` does, so readers that compare a wall time with a
``zoneinfo`` time agree with it; only the gap, which ``zoneinfo`` would silently map to
another wall time, is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from reliab.errors import ParseError

T = TypeVar("T", datetime, pd.Timestamp)


@dataclass
class LocalTimeLog:
    """Ambiguous local times met while reading one file (see :func:`noting`)."""

    ambiguous: int = 0
    first: str | None = None
    zone: str | None = None

    def add(self, wall: datetime, tz: tzinfo, count: int = 1) -> None:
        """Count ``count`` ambiguous times (``wall`` the first of them)."""
        if self.first is None:
            self.first, self.zone = wall.isoformat(sep=" "), str(tz)
        self.ambiguous += count

    def note(self) -> str | None:
        """The per-file note, or ``None`` when no time was ambiguous."""
        if not self.ambiguous:
            return None
        return (f"{self.ambiguous} local time(s) fell in the repeated hour of a DST change in"
                f" {self.zone} and were read as the earlier instant (first: {self.first})")


_LOG: ContextVar[LocalTimeLog | None] = ContextVar("reliab_local_time_log", default=None)


@contextmanager
def noting() -> Iterator[LocalTimeLog]:
    """Collect the ambiguous local times converted inside the block (one file's read)."""
    log = LocalTimeLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def resolve_tz(tz: str | tzinfo | None) -> tzinfo:
    """``tzinfo`` for the ``tz=`` option (IANA name, tzinfo, or ``None`` for UTC)."""
    if tz is None:
        return UTC
    if isinstance(tz, tzinfo):
        return tz
    if not isinstance(tz, str):
        raise TypeError(f"tz must be an IANA zone name or a tzinfo, not {type(tz).__name__}")
    if tz.upper() in ("UTC", "Z"):
        return UTC
    try:
        return ZoneInfo(tz)
    except (KeyError, ValueError) as exc:
        raise ValueError(f"unknown time zone {tz!r}") from exc


def _fixed(tz: tzinfo) -> bool:
    return tz is UTC or isinstance(tz, timezone)


def _offset(wall: datetime, tz: tzinfo) -> timedelta:
    """UTC offset of the naive ``wall`` in ``tz`` under the rule; ParseError in a gap."""
    before = wall.replace(tzinfo=tz, fold=0).utcoffset()
    after = wall.replace(tzinfo=tz, fold=1).utcoffset()
    if before is None or after is None:
        raise ValueError(f"time zone {tz!r} gives no UTC offset for {wall}")
    if before == after:
        return before
    if before < after:  # clocks went forward: this wall time was skipped
        raise ParseError(f"local time {wall.isoformat(sep=' ')} does not exist in {tz}"
                         " (skipped when clocks went forward for DST)")
    log = _LOG.get()
    if log is not None:
        log.add(wall, tz)
    return before  # ambiguous: the earlier instant


def localize(value: T, tz: str | tzinfo | None) -> T:
    """A local time -> the same instant in UTC, by the rule of this module.

    Parameters
    ----------
    value : datetime or pandas.Timestamp
        Naive local wall time in ``tz`` (an aware value is only converted to UTC).
        Nanoseconds of a Timestamp are kept.
    tz : str, tzinfo or None
        IANA zone name, tzinfo, or ``None``/``"UTC"``.

    Returns
    -------
    datetime or pandas.Timestamp
        Aware, in UTC, of the type given.

    Raises
    ------
    ParseError
        When the wall time does not exist in ``tz`` (skipped by a DST change).
    """
    zone = resolve_tz(tz)
    if value.tzinfo is not None:
        return value.astimezone(UTC) if not isinstance(value, pd.Timestamp) else value.tz_convert("UTC")
    if _fixed(zone):
        off = zone.utcoffset(None) or timedelta(0)
    else:
        wall = value.to_pydatetime(warn=False) if isinstance(value, pd.Timestamp) else value
        off = _offset(wall, zone)
    try:
        if isinstance(value, pd.Timestamp):
            return (value - off).tz_localize("UTC")
        return (value - off).replace(tzinfo=UTC)
    except (OverflowError, ValueError) as exc:  # 0001-01-01 00:00 at UTC+1 has no UTC time
        raise ParseError(f"local time {value} in {zone} is out of range ({exc})") from None


def localize_series(values: pd.Series, tz: str | tzinfo | None) -> tuple[pd.Series, dict[int, str]]:
    """Naive local times (datetime64) -> UTC, by the rule; vectorized but for DST edges.

    Returns
    -------
    times : Series
        ``datetime64[ns, UTC]`` (NaT where the input is NaT or the time does not exist).
    problems : dict
        Position -> reason for the times that do not exist in ``tz``.
    """
    zone = resolve_tz(tz)
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC"), {}
    if _fixed(zone):
        off = zone.utcoffset(None) or timedelta(0)
        return (values - off).dt.tz_localize("UTC"), {}
    out = values.dt.tz_localize(zone, ambiguous="NaT", nonexistent="NaT").dt.tz_convert("UTC")
    odd = np.flatnonzero((out.isna() & values.notna()).to_numpy())
    problems: dict[int, str] = {}
    if len(odd):
        fixed: list[Any] = []
        for i in odd:
            try:
                fixed.append(localize(values.iloc[i], zone))
            except ParseError as exc:
                problems[int(i)] = exc.message
                fixed.append(pd.NaT)
        out = out.copy()
        out.iloc[odd] = pd.Series(fixed, dtype="datetime64[ns, UTC]").to_numpy()
    return out, problems


__all__ = ["localize", "localize_series", "resolve_tz", "noting", "LocalTimeLog"]
