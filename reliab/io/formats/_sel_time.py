"""Dates and times of IPMI SEL records as ipmitool and FreeIPMI print them.

``ipmitool sel list`` prints ``MM/DD/YYYY | HH:MM:SS`` (``lib/ipmi_sel.c``); some BMCs and
ipmitool builds give two-digit years (``06/10/22``), a 12-hour clock (``06:12:15 PM``) or a
zone name after the time (``19:31:43 CEST``, ``17:12:16 UTC``).  FreeIPMI ``ipmi-sel`` prints
``Jul-20-2017 | 10:29:49``.  A record logged before the BMC's clock was set has no wall-clock
time: ipmitool prints ``Pre-Init`` and the seconds since the BMC started, FreeIPMI
``PostInit``, and a BMC whose clock was reset dates its records 01/01/2000 (or 1970, the IPMI
and Unix epochs).  :func:`parse_sel_time` raises :class:`ParseError` for those, with that
reason: they are flagged, never dated 2000.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reliab.errors import ParseError
from reliab.io.formats._timestamps import localize, out_of_range

_UTC_NAMES = frozenset({"UTC", "GMT", "Z", "UT"})
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])([0-9]{1,2}):?([0-9]{2})?$")
#: zone abbreviations with one meaning (hours east of UTC); ambiguous ones (CST, IST, BST…)
#: need the ``tz=`` option
ZONE_NAMES = {
    "CET": 1, "CEST": 2, "MET": 1, "MEST": 2, "WET": 0, "WEST": 1, "EET": 2, "EEST": 3, "MSK": 3,
    "SAST": 2, "JST": 9, "KST": 9, "HKT": 8, "SGT": 8, "AWST": 8, "AEST": 10, "AEDT": 11,
    "NZST": 12, "NZDT": 13, "PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CDT": -5, "EST": -5,
    "EDT": -4, "AKST": -9, "AKDT": -8, "HST": -10,
}
_UNSET = frozenset({"pre-init", "postinit", "post-init"})
#: records before this date come from a BMC whose clock was never set or was reset
CLOCK_SET_AFTER = datetime(2001, 1, 1, tzinfo=UTC)
_DATE_FORMATS = (("%m/%d/%Y", re.compile(r"[0-9]{2}/[0-9]{2}/[0-9]{4}")),
                 ("%m/%d/%y", re.compile(r"[0-9]{2}/[0-9]{2}/[0-9]{2}")),
                 ("%b-%d-%Y", re.compile(r"[A-Za-z]{3}-[0-9]{2}-[0-9]{4}")))


def zone_of(name: str, fallback: tzinfo | None) -> tzinfo:
    """The zone of a time-field suffix: UTC names, offsets, IANA names, unambiguous
    abbreviations, else ``fallback`` (the ``tz=`` option); malformed without one."""
    upper = name.upper()
    if upper in _UTC_NAMES:
        return UTC
    m = _OFFSET.match(name)
    if m is not None:
        hours, minutes = int(m[2]), int(m[3] or 0)
        if hours > 23 or minutes > 59:
            raise ParseError(f"time zone offset {name!r} is out of range")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(delta if m[1] == "+" else -delta)
    if "/" in name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    if upper in ZONE_NAMES:
        return timezone(timedelta(hours=ZONE_NAMES[upper]), upper)
    if fallback is not None:
        return fallback
    raise ParseError(f"time zone {name!r} is ambiguous or unknown; give tz= for this BMC")


def unset_clock(date: str) -> bool:
    """Whether a SEL date field says the BMC had no clock yet (``Pre-Init``, ``PostInit``)."""
    return date.strip().lower() in _UNSET


def _clock_parts(clock: str) -> tuple[str, str | None]:
    """``06:12:15 PM CST`` -> (``18:12:15``, ``CST``)."""
    parts = clock.split()
    if parts and len(parts) >= 2 and parts[1].upper() in ("AM", "PM"):
        hh, _, rest = parts[0].partition(":")
        if not (hh.isascii() and hh.isdigit()) or not 1 <= int(hh) <= 12:
            raise ParseError(f"time field {clock!r} is not a 12-hour clock")
        hour = int(hh) % 12 + (12 if parts[1].upper() == "PM" else 0)
        parts = [f"{hour:02d}:{rest}", *parts[2:]]
    if len(parts) not in (1, 2):
        raise ParseError(f"time field {clock!r} is not HH:MM:SS [AM|PM] [zone]")
    return parts[0], parts[1] if len(parts) == 2 else None


def parse_sel_time(date: str, clock: str, tz: tzinfo | None) -> datetime:
    """``06/03/2024`` + ``14:01:55 [AM|PM] [zone]`` -> aware UTC datetime.

    A time without a zone is in ``tz`` (UTC when ``None``); a zone name that is not UTC, an
    offset or an unambiguous abbreviation is read in ``tz``, and is malformed without it.

    Raises
    ------
    ParseError
        Unreadable fields, a time out of range, or a record of a BMC whose clock was not
        set (``Pre-Init``, ``PostInit``, dates before 2001).
    """
    day = date.strip()
    if unset_clock(day):
        raise ParseError(f"record stamped {day!r} (logged before the BMC clock was set): no wall-clock time")
    when = _plain_utc(day, clock) if tz is None else None
    if when is None:
        when = _general(day, clock, tz)
    error = out_of_range(when)
    if error is not None:
        raise ParseError(error)
    if when < CLOCK_SET_AFTER:
        hms = _clock_parts(clock)[0]  # (read once already: it cannot fail here)
        raise ParseError(f"record dated {day} {hms}: the BMC clock was not set (reset to its default"
                         " date); no wall-clock time")
    return when


def _general(day: str, clock: str, tz: tzinfo | None) -> datetime:
    """:func:`parse_sel_time` of any date and clock (12-hour clocks, zones, ``tz``), in UTC."""
    hms, zone_name = _clock_parts(clock)
    zone = zone_of(zone_name, tz) if zone_name else (tz or UTC)
    fmt = next((f for f, shape in _DATE_FORMATS if shape.fullmatch(day)), None)
    try:
        if fmt is None or not hms.isascii():
            raise ValueError(day)
        return localize(datetime.strptime(f"{day} {hms}", f"{fmt} %H:%M:%S"), zone)  # the one DST rule
    except (ValueError, OverflowError):
        raise ParseError(f"date/time {day!r} {hms!r} is not MM/DD/YYYY HH:MM:SS") from None


def _plain_utc(day: str, clock: str) -> datetime | None:
    """The UTC time of the common record, ``MM/DD/YYYY`` and ``HH:MM:SS`` in ASCII digits
    without a zone (no ``tz=``), from integers; ``None`` for any other shape or a date or
    time the calendar refuses, which :func:`_general` then reads (or refuses) as before."""
    if (len(day) != 10 or len(clock) != 8 or day[2] != "/" or day[5] != "/" or clock[2] != ":"
            or clock[5] != ":"):
        return None
    digits = day[:2] + day[3:5] + day[6:] + clock[:2] + clock[3:5] + clock[6:]
    if not (digits.isascii() and digits.isdigit()):
        return None
    try:
        return datetime(int(day[6:]), int(day[:2]), int(day[3:5]), int(clock[:2]), int(clock[3:5]),
                        int(clock[6:]), tzinfo=UTC)
    except ValueError:
        return None
