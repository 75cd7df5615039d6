"""Line prefixes of kernel and syslog captures: timestamp style, host and program tag.

One function, :func:`parse_header`, recognises per line which of the common shapes a
kernel message was written in and splits it into time, host, tag and message:

========================  ==============================================================
style                     example and source
========================  ==============================================================
``rfc3339``               ``2024-06-03T14:02:11.123456+00:00 host kernel: msg``: rsyslog
                          ``RSYSLOG_FileFormat`` template (rsyslog docs, "templates"), and
                          ``journalctl -o short-iso`` (``…+0000 host kernel: msg``,
                          journalctl(1)).
``dmesg_iso``             ``2024-06-03T14:02:11,123456+00:00 msg``: ``dmesg --time-format
                          iso`` (dmesg(1): "YYYY-MM-DD<T>HH:MM:SS,<microseconds>±<tz>").
``rfc5424``               ``<13>1 2024-06-03T14:02:11.003Z host kernel - - - msg``: RFC 5424
                          §6 (PRI VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG).
``dmesg_ctime``           ``[Mon Jun  3 14:02:11 2024] msg``: ``dmesg -T/--ctime``, local time.
``rfc3164``               ``Jun  3 14:02:11 host kernel: msg``: RFC 3164 §4.1.2 and
                          ``journalctl -o short``; local time, **no year**.
``dmesg_raw``             ``[12345.678901] msg``: printk time, seconds since boot
                          (kernel ``printk_time``; dmesg(1) without ``-T``).
========================  ==============================================================

Any of them may be preceded by the ``facility:level :`` columns of ``dmesg --decode``
(``kern  :warn  : 2025-01-21T04:41:44,283302+00:00 msg``).  A message that itself starts
with a printk time (``host kernel: [12345.678] msg``) yields that time as ``monotonic``
beside the wall-clock time, which anchors the boot time of the file.

Local times (no offset in the text) follow the one DST rule of every reader,
:func:`localize` (:mod:`reliab.io._localtime`): an ambiguous time is the earlier instant
(counted in a per-file note), a time skipped by a DST change is an unreadable timestamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo

from reliab.errors import ParseError
from reliab.io._localtime import localize, localize_series  # noqa: F401 - the DST rule, re-exported

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}

_DECODE = re.compile(r"([a-z0-9]+)\s*:\s*([a-z]+)\s*: ")
_ISO = re.compile(r"(\d{4}-\d\d-\d\dT\S+) ?(.*)", re.S)
_RFC5424 = re.compile(r"<\d{1,3}>1 (\S+) (\S+) (\S+) (\S+) (\S+) (?:-|\[.*?\]) ?(.*)", re.S)
_CTIME = re.compile(r"\[(?:[A-Za-z]{3} )?([A-Za-z]{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\] ?(.*)", re.S)
_CTIME_LOOSE = re.compile(r"\[[A-Za-z]{3} [A-Za-z]{3} [^\]]*\] ?(.*)", re.S)
_RAW = re.compile(r"\[\s*(\d+)\.(\d+)\] ?(.*)", re.S)
_RFC3164 = re.compile(r"(?:<\d{1,3}>)?([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (.*)", re.S)
_TAG = re.compile(r"(?:([^\s:\[\]]+) )?([^\s:\[\]]+)(?:\[(\d+)\])?: ?(.*)", re.S)


@dataclass(frozen=True, slots=True)
class Header:
    """The parts of one log line around its message.

    ``when`` is an aware UTC datetime when the line states a full wall-clock time.
    ``partial`` is ``(month, day, hour, minute, second)`` for RFC 3164 lines (no year);
    ``monotonic`` is seconds since boot for printk times.  ``error`` says why a
    timestamp-shaped prefix could not be read.  ``message`` follows the program tag;
    ``body`` is everything after the timestamp (host and tag included), which is what
    signal patterns search, so a misread tag never hides a signal.
    """

    style: str
    message: str
    body: str
    when: datetime | None = None
    host: str | None = None
    tag: str | None = None
    monotonic: float | None = None
    partial: tuple[int, int, int, int, int] | None = None
    error: str | None = None


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


def _aware(dt: datetime, tz: tzinfo) -> datetime:
    """``dt`` in UTC; a naive ``dt`` is local time in ``tz`` (DST rule of :func:`localize`)."""
    return localize(dt, tz)


def _split_monotonic(message: str) -> tuple[float | None, str]:
    if message.startswith("["):
        m = _RAW.match(message)
        if m:
            return float(f"{m.group(1)}.{m.group(2)}"), m.group(3)
    return None, message


def _syslog_tail(style: str, rest: str, when: datetime | None, **extra: object) -> Header:
    m = _TAG.match(rest)
    if m is None:
        mono, msg = _split_monotonic(rest)
        return Header(style, msg, rest, when, monotonic=mono, **extra)  # type: ignore[arg-type]
    mono, msg = _split_monotonic(m.group(4))
    return Header(style, msg, rest, when, host=m.group(1), tag=m.group(2), monotonic=mono,
                  **extra)  # type: ignore[arg-type]


def _iso(stamp: str, tz: tzinfo) -> tuple[datetime | None, str | None]:
    try:
        return _aware(datetime.fromisoformat(stamp), tz), None
    except (ValueError, OverflowError) as exc:  # OverflowError: 0001-01-01T00:00+01:00 in UTC
        return None, f"unreadable timestamp {stamp!r} ({exc})"
    except ParseError as exc:  # a local time skipped by a DST change
        return None, exc.message


def parse_header(line: str, tz: tzinfo = UTC) -> Header:
    """Split ``line`` into time, host, tag and message, whatever its timestamp style.

    Parameters
    ----------
    line : str
        One decoded log line without its line terminator.
    tz : tzinfo
        Zone of timestamps printed without an offset (``dmesg -T``, RFC 3164, naive ISO).

    Returns
    -------
    Header
        Style ``"none"`` (and the whole line as message) when no known prefix is found.
    """
    m = _DECODE.match(line)
    if m is not None:
        line = line[m.end():]
    head = line[:1]
    if head.isdigit():
        m = _ISO.match(line)
        if m is not None:
            stamp, rest = m.group(1), m.group(2)
            when, error = _iso(stamp, tz)
            if "," in stamp:
                mono, msg = _split_monotonic(rest)
                return Header("dmesg_iso", msg, rest, when, monotonic=mono, error=error)
            return _syslog_tail("rfc3339", rest, when, error=error)
    elif head == "[":
        m = _RAW.match(line)
        if m is not None:
            return Header("dmesg_raw", m.group(3), m.group(3), monotonic=float(f"{m.group(1)}.{m.group(2)}"))
        m = _CTIME.match(line)
        if m is not None:
            mon = MONTHS.get(m.group(1).title())
            try:
                if mon is None:
                    raise ValueError(f"unknown month {m.group(1)!r}")
                when = _aware(datetime(int(m.group(6)), mon, int(m.group(2)), int(m.group(3)),
                                       int(m.group(4)), int(m.group(5))), tz)
            except (ValueError, OverflowError) as exc:
                return Header("dmesg_ctime", m.group(7), m.group(7), error=f"unreadable dmesg -T timestamp ({exc})")
            except ParseError as exc:  # a local time skipped by a DST change
                return Header("dmesg_ctime", m.group(7), m.group(7), error=exc.message)
            return Header("dmesg_ctime", m.group(7), m.group(7), when)
        m = _CTIME_LOOSE.match(line)
        if m is not None:
            return Header("dmesg_ctime", m.group(1), m.group(1), error="unreadable dmesg -T timestamp")
    elif head == "<":
        m = _RFC5424.match(line)
        if m is not None:
            when, error = _iso(m.group(1), tz)
            host = None if m.group(2) == "-" else m.group(2)
            tag = None if m.group(3) == "-" else m.group(3)
            mono, msg = _split_monotonic(m.group(6))
            return Header("rfc5424", msg, m.group(6), when, host=host, tag=tag, monotonic=mono, error=error)
    m = _RFC3164.match(line)
    if m is not None:
        mon = MONTHS.get(m.group(1))
        if mon is not None:
            day, hh, mm, ss = (int(m.group(i)) for i in range(2, 6))
            ok = 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 61
            error = None if ok else f"unreadable syslog timestamp {line[:15]!r}"
            partial = (mon, day, hh, mm, ss) if ok else None
            return _syslog_tail("rfc3164", m.group(6), None, partial=partial, error=error)
    return Header("none", line, line, error="no recognisable timestamp")


#: how strongly each style suggests a kernel capture, for sniffing
STYLE_WEIGHT = {"rfc3339": 0.8, "dmesg_iso": 0.9, "rfc5424": 0.8, "dmesg_ctime": 0.9,
                "rfc3164": 0.7, "dmesg_raw": 0.9, "none": 0.0}
