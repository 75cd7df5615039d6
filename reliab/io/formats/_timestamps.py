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
                          ``journalctl -o short``; local time, **no year**.  ``-o
                          short-precise`` adds microseconds (``14:02:11.123456``,
                          ``fraction``); SONiC's rsyslog template a severity word before
                          the tag (``host INFO kernel: msg``).
``logread``               ``Sun Apr 27 05:48:33 2025 kern.info kernel: msg``: OpenWrt
                          ``logread`` (ubox ``log/logread.c``), local time, optional host
                          before ``facility.level``.
``console_iso``           ``[2023-06-22 21:55:31.352444][5975153.869131] msg``: a serial-
                          console logger's wall clock glued to the printk time (no zone:
                          local time); the printk time is ``monotonic``.
``dmesg_raw``             ``[12345.678901] msg``: printk time, seconds since boot
                          (kernel ``printk_time``; dmesg(1) without ``-T``).
``kmsg``                  ``6,3964,206764307,-;msg``: ``/dev/kmsg`` records (Linux
                          ``Documentation/ABI/testing/dev-kmsg``: priority, sequence,
                          microseconds since boot, flags); the time is ``monotonic``.
``dmesg_reltime``         ``[Jun26 06:24] msg`` then ``[  +0.000001] msg``: ``dmesg -H`` /
                          ``--reltime`` (util-linux ``dmesg.c`` ``print_record``): a line
                          whose local minute differs from the previous one prints
                          ``[%b%d %H:%M]`` (no seconds, no year), every other line the
                          seconds since the previous record (``[  %+8.06f]``, newer
                          releases without the padding).  ``partial`` holds the minute,
                          ``delta`` the increment.
========================  ==============================================================

Any of them may be preceded by the ``facility:level :`` columns of ``dmesg --decode``
(``kern  :warn  : 2025-01-21T04:41:44,283302+00:00 msg``).  A message that itself starts
with a printk time (``host kernel: [12345.678] msg``) yields that time as ``monotonic``
beside the wall-clock time, which anchors the boot time of the file.

The syslog HOSTNAME may be an IP address (RFC 5424 §6.2.4, RFC 3164 §4.1.2); IPv6 literals
(``2001:db8::7``) are read as hosts, not as a program tag.  Every wall-clock time is checked
against the range a ``datetime64[ns]`` column can hold (:func:`out_of_range`): a year 9999,
1600 or 0001 gives ``error``, never a wrapped or clipped value.

Local times (no offset in the text) follow the one DST rule of every reader,
:func:`localize` (:mod:`reliab.io._localtime`): an ambiguous time is the earlier instant
(counted in a per-file note), a time skipped by a DST change is an unreadable timestamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo

from reliab.errors import ParseError
from reliab.io._localtime import (  # noqa: F401 - the DST rule and the tz= option, re-exported
    localize,
    localize_series,
    resolve_tz,
)

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
#: month abbreviations of syslog lines written in other locales (journalctl and rsyslog use
#: the C library's ``%b``: ``jan.``, ``févr.``, ``Mär``, ``okt``): lower case, dot removed
LOCAL_MONTHS = {
    **{m.lower(): i for m, i in MONTHS.items()},
    "janv": 1, "ene": 1, "gen": 1, "févr": 2, "fevr": 2, "mär": 3, "mrz": 3, "mrt": 3, "mars": 3,
    "avr": 4, "abr": 4, "mai": 5, "mei": 5, "maj": 5, "mag": 5, "juin": 6, "giu": 6, "juil": 7,
    "lug": 7, "août": 8, "aout": 8, "ago": 8, "sept": 9, "set": 9, "okt": 10, "ott": 10,
    "déc": 12, "dez": 12, "dic": 12, "des": 12,
    # Polish, Portuguese and Russian %b
    "sty": 1, "lut": 2, "kwi": 4, "cze": 6, "lip": 7, "sie": 8, "wrz": 9, "paź": 10, "paz": 10,
    "lis": 11, "gru": 12, "fev": 2, "out": 10, "янв": 1, "фев": 2, "мар": 3, "апр": 4, "май": 5,
    "мая": 5, "июн": 6, "июл": 7, "авг": 8, "сен": 9, "окт": 10, "ноя": 11, "дек": 12,
}

_DECODE = re.compile(r"([a-z0-9]+)\s*:\s*([a-z]+)\s*: ")
#: the node in front of ``talosctl dmesg`` records (``192.168.11.119: kern: warning: [<RFC 3339>]: …``,
#: Talos ``cmd/talosctl/cmd/talos/dmesg.go``): a host, then facility and level, then a bracketed stamp
#: (one possessive run covers names and IPv4 addresses alike: an RFC 3339 stamp fails at once)
_NODE = re.compile(r"([A-Za-z0-9][A-Za-z0-9.-]*+): (?=[a-z0-9]+: +[a-z]+: \[[0-9]{4}-)")
#: a bracketed RFC 3339 stamp (``talosctl dmesg``) and the message after it
_BRACKET_ISO = re.compile(r"\[([0-9]{4}-[0-9]{2}-[0-9]{2}T[^\]\s]+)\]:? ?(.*)", re.S)
_ISO = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T\S+) ?(.*)", re.S)
_RFC5424 = re.compile(r"<\d{1,3}>1 (\S+) (\S+) (\S+) (\S+) (\S+) (?:-|\[.*?\]) ?(.*)", re.S)
#: ``dmesg -T`` (util-linux formats it with the C library's ``%a %b``: localized names such as
#: ``[Ter Set 19 06:01:41 2017]`` or ``[mar. févr. 6 …]``)
_CTIME = re.compile(r"\[(?:[^\W\d_]{1,5}\.? )?([^\W\d_]{3,5}\.?|[0-9]{1,2}[月월]) +([0-9]{1,2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})\] ?(.*)",
                    re.S)
_CTIME_LOOSE = re.compile(r"\[[A-Za-z]{3} [A-Za-z]{3} [^\]]*\] ?(.*)", re.S)
_RAW = re.compile(r"\[\s*([0-9]+)\.([0-9]+)\] ?(.*)", re.S)
#: RFC 3164 / journalctl short: the C library's ``%b`` month, localized too (``jan.``, ``Mär``, and
#: the zh/ja ``6月``, ko ``6월`` of CJK locales)
_RFC3164 = re.compile(r"(?:<[0-9]{1,3}>)?([^\W\d_]{3,5}\.?|[0-9]{1,2}[月월]) +([0-9]{1,2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
                      r"(\.[0-9]{1,9})? (.*)", re.S)
#: OpenWrt ``logread`` (ubox ``log/logread.c``): ``%a %b %e %T %Y`` without brackets, an optional
#: host, ``facility.level``, then ``tag: msg``
_LOGREAD = re.compile(r"[^\W\d_]{3} ([^\W\d_]{3}) +([0-9]{1,2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4}) "
                      r"(?:(\S+) )?[a-z0-9]+\.[a-z]+ (.*)", re.S)
#: a console logger's wall clock glued to the printk time (``[2023-06-22 21:55:31.352444][5975153.869131] msg``);
#: without the printk time a bracketed date is some collector's prefix, not a kernel line
_BRACKET_DATETIME = re.compile(r"\[([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)\]"
                               r"(?=\[ *[0-9]+\.[0-9]+\])(.*)", re.S)
#: ``HOSTNAME [SEVERITY ]TAG[[pid]]: MSG``; the severity word is SONiC's rsyslog template
#: (``%syslogseverity-text:::uppercase%``, sonic-buildimage ``files/image_config/rsyslog``)
_TAG = re.compile(r"(?:([^\s:\[\]]+) )?(?:(?:EMERG|ALERT|CRIT|ERR|WARNING|NOTICE|INFO|DEBUG) )?"
                  r"([^\s:\[\]]+)(?:\[(\d+)\])?: ?(.*)", re.S)
#: an IPv6 literal as syslog HOSTNAME (at least two colons, hex digits, dots of an embedded IPv4)
_IPV6_TAG = re.compile(r"((?=[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]*[0-9A-Fa-f](?:%\w+)?) "
                       r"([^\s:\[\]]+)(?:\[(\d+)\])?: ?(.*)", re.S)
_KMSG = re.compile(r"[0-9]{1,3},[0-9]+,([0-9]{1,20}),[^;]*;(.*)", re.S)
_REL_MINUTE = re.compile(r"\[([A-Z][a-z]{2})([0-9]{2}) ([0-9]{2}):([0-9]{2})\] ?(.*)", re.S)
_REL_DELTA = re.compile(r"\[ *\+([0-9]+)\.([0-9]+)\] ?(.*)", re.S)
#: the times a ``datetime64[ns]`` column can hold (pandas ``Timestamp.min``/``max``, whole days)
TIME_MIN = datetime(1677, 9, 22, tzinfo=UTC)
TIME_MAX = datetime(2262, 4, 11, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Header:
    """The parts of one log line around its message.

    ``when`` is an aware UTC datetime when the line states a full wall-clock time.
    ``partial`` is ``(month, day, hour, minute, second)`` for RFC 3164 lines (no year);
    ``monotonic`` is seconds since boot for printk times; ``delta`` the seconds since the
    previous record of a ``dmesg --reltime`` line (its ``partial`` minute line has
    ``partial`` with seconds 0); ``fraction`` the sub-second part of an RFC 3164 stamp that
    prints one (``journalctl -o short-precise``, SONiC).  ``error`` says why a timestamp-shaped prefix could not
    be read.  ``message`` follows the program tag;
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
    delta: float | None = None
    fraction: float | None = None


def out_of_range(when: datetime) -> str | None:
    """Why an aware ``when`` cannot be stored in a ``datetime64[ns]`` column, or ``None``."""
    if TIME_MIN <= when < TIME_MAX:
        return None
    return (f"time {when.isoformat()} is outside the range a timestamp column holds"
            f" ({TIME_MIN.date()} to {TIME_MAX.date()})")


def shifted(when: datetime, seconds: float) -> tuple[datetime | None, str | None]:
    """``when + seconds`` and ``None``, or ``None`` and why that time cannot be stored."""
    try:
        out = when + timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        return None, f"{when.isoformat()} + {seconds:.6g} s is not a representable time"
    error = out_of_range(out)
    return (None, error) if error else (out, None)


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
    m = _IPV6_TAG.match(rest) if ":" in rest[:48] and rest[:1] in _HEX else None
    if m is None:
        m = _TAG.match(rest)
    if m is None:
        mono, msg = _split_monotonic(rest)
        return Header(style, msg, rest, when, monotonic=mono, **extra)  # type: ignore[arg-type]
    mono, msg = _split_monotonic(m.group(4))
    return Header(style, msg, rest, when, host=m.group(1), tag=m.group(2), monotonic=mono,
                  **extra)  # type: ignore[arg-type]


_HEX = frozenset("0123456789abcdefABCDEF:")


def _iso(stamp: str, tz: tzinfo) -> tuple[datetime | None, str | None]:
    try:
        when = _aware(datetime.fromisoformat(stamp), tz)
    except (ValueError, OverflowError) as exc:  # OverflowError: 0001-01-01T00:00+01:00 in UTC
        return None, f"unreadable timestamp {stamp!r} ({exc})"
    except ParseError as exc:  # a local time skipped by a DST change
        return None, exc.message
    error = out_of_range(when)
    return (None, error) if error else (when, None)


def month_number(token: str) -> int | None:
    """1-12 for a month as a C library's ``%b`` prints it in any supported locale, else ``None``:
    ``Jun``, ``jun.``, ``févr.``, ``Mär``, ``Set`` (:data:`LOCAL_MONTHS`), ``6月``/``6월`` (CJK)."""
    mon = MONTHS.get(token.title()) or LOCAL_MONTHS.get(token.rstrip(".").lower())
    if mon is None and token[-1:] in ("月", "월") and token[:-1].isascii() and token[:-1].isdigit():
        mon = int(token[:-1]) if 1 <= int(token[:-1]) <= 12 else None
    return mon


def parse_header(line: str, tz: tzinfo = UTC, *, tail: bool = True) -> Header:
    """Split ``line`` into time, host, tag and message, whatever its timestamp style.

    Parameters
    ----------
    line : str
        One decoded log line without its line terminator.
    tz : tzinfo
        Zone of timestamps printed without an offset (``dmesg -T``, RFC 3164, naive ISO).
    tail : bool
        ``False``: the HOSTNAME and TAG of a syslog line are not split off its body (``host``,
        ``tag`` and ``monotonic`` stay empty, ``message`` is the body); style, times, body
        and error are the same.  Sniffing, which weighs only the timestamp, needs no more.

    Returns
    -------
    Header
        Style ``"none"`` (and the whole line as message) when no known prefix is found.
    """
    node = _NODE.match(line)
    if node is not None:
        line = line[node.end():]
    m = _DECODE.match(line)
    if m is not None:
        line = line[m.end():]
    head = line[:1]
    if head == "[" and node is not None:
        m = _BRACKET_ISO.match(line)
        if m is not None:
            when, error = _iso(m.group(1), tz)
            return Header("bracket_iso", m.group(2), m.group(2), when, host=node.group(1), error=error)
    if head.isdigit():
        m = _ISO.match(line)
        if m is not None:
            stamp, rest = m.group(1), m.group(2)
            when, error = _iso(stamp, tz)
            if "," in stamp:
                mono, msg = _split_monotonic(rest)
                return Header("dmesg_iso", msg, rest, when, monotonic=mono, error=error)
            if not tail:
                return Header("rfc3339", rest, rest, when, error=error)
            return _syslog_tail("rfc3339", rest, when, error=error)
        m = _KMSG.match(line)
        if m is not None:
            return Header("kmsg", m.group(2), m.group(2), monotonic=int(m.group(1)) / 1e6)
    elif head == "[":
        return _bracketed(line, tz)
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
        mon = month_number(m.group(1))
        if mon is not None:
            return _rfc3164(m, mon, line, tail)
    m = _LOGREAD.match(line) if head.isalpha() else None
    if m is not None:
        return _logread(m, tz, tail)
    return Header("none", line, line, error="no recognisable timestamp")


def _rfc3164(m: re.Match[str], mon: int, line: str, tail: bool) -> Header:
    """An RFC 3164 / ``journalctl -o short[-precise]`` line whose month ``mon`` was read.

    ``-o short-precise`` and SONiC's template print microseconds after the seconds
    (journalctl(1) "short-precise"); they are kept in ``fraction``.
    """
    day, hh, mm, ss = (int(m.group(i)) for i in range(2, 6))
    ok = 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 61
    error = None if ok else f"unreadable syslog timestamp {line[:15]!r}"
    partial = (mon, day, hh, mm, ss) if ok else None
    fraction = float(m.group(6)) if m.group(6) and ok else None
    if not tail:
        return Header("rfc3164", m.group(7), m.group(7), partial=partial, error=error, fraction=fraction)
    return _syslog_tail("rfc3164", m.group(7), None, partial=partial, error=error, fraction=fraction)


def _ctime_time(m: re.Match[str], tz: tzinfo, what: str) -> tuple[datetime | None, str | None]:
    """The UTC time of a ``%b %e %T %Y`` stamp (groups 1-6: month, day, h, m, s, year) and
    ``None``, or ``None`` and why it cannot be read (``what`` names the style)."""
    mon = month_number(m.group(1))
    try:
        if mon is None:
            raise ValueError(f"unknown month {m.group(1)!r}")
        when = _aware(datetime(int(m.group(6)), mon, int(m.group(2)), int(m.group(3)),
                               int(m.group(4)), int(m.group(5))), tz)
    except (ValueError, OverflowError) as exc:
        return None, f"unreadable {what} timestamp ({exc})"
    except ParseError as exc:  # a local time skipped by a DST change
        return None, exc.message
    error = out_of_range(when)
    return (None, error) if error else (when, None)


def _logread(m: re.Match[str], tz: tzinfo, tail: bool) -> Header:
    """An OpenWrt ``logread`` line: ``Sun Apr 27 05:48:33 2025 [host ]kern.info kernel: msg``.

    ubox ``log/logread.c`` prints the record's time with ``ctime``-like ``%a %b %e %T %Y``
    (local time), the host only when configured, then ``facility.level`` and the tag.
    """
    rest, host = m.group(8), m.group(7)
    when, error = _ctime_time(m, tz, "logread")
    if not tail:
        return Header("logread", rest, rest, when, host=host, error=error)
    header = _syslog_tail("logread", rest, when, error=error)
    return replace(header, host=host) if host is not None else header


def _bracketed(line: str, tz: tzinfo) -> Header:
    """Lines starting with ``[``: raw printk time, ``dmesg -T``, ``dmesg --reltime`` and a
    console logger's ``[YYYY-MM-DD HH:MM:SS.ffffff]`` wall clock."""
    m = _RAW.match(line)
    if m is not None:
        return Header("dmesg_raw", m.group(3), m.group(3), monotonic=float(f"{m.group(1)}.{m.group(2)}"))
    m = _BRACKET_DATETIME.match(line)
    if m is not None:
        when, error = _iso(f"{m.group(1)}T{m.group(2)}", tz)
        mono, msg = _split_monotonic(m.group(3))
        return Header("console_iso", msg, m.group(3), when, monotonic=mono, error=error)
    m = _CTIME.match(line)
    if m is not None:
        when, error = _ctime_time(m, tz, "dmesg -T")
        return Header("dmesg_ctime", m.group(7), m.group(7), when, error=error)
    m = _REL_DELTA.match(line)
    if m is not None:
        return Header("dmesg_reltime", m.group(3), m.group(3), delta=float(f"{m.group(1)}.{m.group(2)}"))
    m = _REL_MINUTE.match(line)
    if m is not None and m.group(1) in MONTHS:
        day, hh, mm = int(m.group(2)), int(m.group(3)), int(m.group(4))
        ok = 1 <= day <= 31 and hh < 24 and mm < 60
        return Header("dmesg_reltime", m.group(5), m.group(5),
                      partial=(MONTHS[m.group(1)], day, hh, mm, 0) if ok else None,
                      error=None if ok else f"unreadable dmesg --reltime minute {line[:14]!r}")
    m = _CTIME_LOOSE.match(line)
    if m is not None:
        return Header("dmesg_ctime", m.group(1), m.group(1), error="unreadable dmesg -T timestamp")
    return Header("none", line, line, error="no recognisable timestamp")


#: how strongly each style suggests a kernel capture, for sniffing
STYLE_WEIGHT = {"console_iso": 0.9, "logread": 0.8, "rfc3339": 0.8, "dmesg_iso": 0.9, "bracket_iso": 0.9, "rfc5424": 0.8, "dmesg_ctime": 0.9,
                "rfc3164": 0.7, "dmesg_raw": 0.9, "dmesg_reltime": 0.9, "kmsg": 0.9, "none": 0.0}
