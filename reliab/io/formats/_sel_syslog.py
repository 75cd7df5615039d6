"""SEL records that reach syslog: OpenBMC's ``sel-logger`` journal lines and ``/var/log/ipmi_sel``.

An OpenBMC BMC adds a SEL record by logging it to its journal (phosphor-sel-logger
``selAddSystemRecord``): the message of a threshold record is::

    <sensor> sensor crossed a <warning|critical> <low|high> threshold going <low|high>. Reading=<r> Threshold=<t>.

(``threshold_event_monitor.hpp``; the sensor is its D-Bus name, or in older versions its whole
D-Bus path), and the journal line as syslog prints it, forwarded to a remote server like any
other, is ``<stamp> <host> sel-logger[<pid>]: <message>``.  The record is asserted when the
reading goes past the threshold (a low threshold going low, a high one going high); a warning
threshold is IPMI's non-critical one.  OpenBMC's rsyslog writes the same records'
``IPMI_SEL_*`` fields to ``/var/log/ipmi_sel``::

    <RFC 3339 time> <record id>,<record type>,<event data>,<generator id>,<D-Bus sensor path>,<assert>

which intel-ipmi-oem reads back for ``Get SEL Entry``: record type 2 is a system event
record, the low nibble of event data byte 1 the threshold offset (IPMI v2.0 table 42-2) and
the sensor type the path's namespace (intel-ipmi-oem ``sdrutils.hpp``: ``power`` is "Other
Units-based Sensor").

Keys follow :func:`reliab.io.formats.sel.event_key` (``sel:voltage_lower_critical``); a
``sel-logger`` line that names the sensor but not its type is ``sel:other`` with the
severity the line states.  :func:`record` reads one line, :func:`bulk` a group of them
column-wise (storms of forwarded SEL; :mod:`._sel_syslog_bulk`) and must give the same rows.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import LineContext, Row
from reliab.io.formats._sel_keys import event_key, repeated, severity_of

__all__ = ["LITERALS", "record", "sniff_line", "written_at", "logger_signal", "ipmi_sel_signal"]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
#: RFC 3164 (no year, no zone) and RFC 3339 stamps as rsyslog writes them
_S3164 = (rf"({'|'.join(_MONTHS)}) ([ 0-9]?[0-9]) ([0-9]{{2}}):([0-9]{{2}}):([0-9]{{2}})")
_S3339 = (r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
          r"(Z|[+-][0-9]{2}:[0-9]{2})")
#: a run of characters that are no blank to Python (``str.isspace``) nor to the bulk route's regex
#: engine (Unicode White_Space, which lacks the separators U+001C-U+001F)
_WORD = r"[^\s\x1c-\x1f]"
_LOGGER_TAIL = (rf" ({_WORD}+) sel-logger(?:\[[0-9]+\])?: (({_WORD}+) sensor crossed a (warning|critical)"
                rf" (low|high) threshold going (low|high)\. Reading={_WORD}+ Threshold={_WORD}+)")
#: (pattern, stamp style) of the three shapes; the groups after the stamp's are the record's
LOGGER_3164 = _S3164 + _LOGGER_TAIL
LOGGER_3339 = _S3339 + _LOGGER_TAIL
IPMI_SEL = _S3339 + r" ([0-9]+),([0-9A-Fa-f]{1,2}),([0-9A-Fa-f]*),([0-9A-Fa-f]+),(/[^,\s\x1c-\x1f]*),([01])"
_LOGGER_3164, _LOGGER_3339, _IPMI_SEL = (re.compile(p) for p in (LOGGER_3164, LOGGER_3339, IPMI_SEL))
#: the literal every such line holds (for the line prefilter; ``ipmi_sel`` lines hold a comma)
LITERALS = (b"sensor crossed a ",)

#: D-Bus sensor namespaces of threshold sensors -> ipmitool's sensor type name (intel-ipmi-oem)
_PATH_TYPES = {"temperature": "Temperature", "voltage": "Voltage", "current": "Current", "fan_tach": "Fan",
               "fan_pwm": "Fan", "power": "Other Units-based Sensor"}
#: threshold event offsets (IPMI v2.0 table 42-2)
_OFFSETS = tuple(f"{side} {level} going {way}" for side in ("Lower", "Upper")
                 for level in ("Non-critical", "Critical", "Non-recoverable") for way in ("low", "high"))
_LEVELS = {"warning": "Non-critical", "critical": "Critical"}
_SIDES = {"low": "Lower", "high": "Upper"}


def _path_type(path: str) -> tuple[str | None, str]:
    """(ipmitool sensor type, sensor name) of ``/xyz/openbmc_project/sensors/<ns>/<name>``."""
    parts = path.rsplit("/", 2)
    if len(parts) == 3 and parts[0].endswith("/sensors"):
        return _PATH_TYPES.get(parts[1]), parts[2]
    return None, path


def logger_signal(sensor: str, level: str, side: str, way: str) -> tuple[str, str]:
    """(signal, severity) of a ``sel-logger`` threshold line's pieces."""
    kind, _ = _path_type(sensor) if sensor.startswith("/") else (None, sensor)
    key = event_key(kind, f"{_SIDES[side]} {_LEVELS[level]} going {side}") if kind else "other"
    if way != side:
        return f"sel:{key}_deasserted", "info"
    return f"sel:{key}", severity_of(key) if kind else ("critical" if level == "critical" else "warning")


def ipmi_sel_signal(rtype: str, data: str, path: str, asserted: str) -> tuple[str, str, str]:
    """(signal, severity, message) of an ``ipmi_sel`` record's fields."""
    kind, name = _path_type(path)
    offset = int(data[1], 16) if len(data) >= 2 else -1
    event = _OFFSETS[offset] if kind is not None and int(rtype, 16) == 2 and offset < len(_OFFSETS) else ""
    key = event_key(kind, event) if event else "other"
    message = f"{name} | {event or f'record type {rtype}, event data {data}'}"
    if asserted == "0":
        return f"sel:{key}_deasserted", "info", message
    return f"sel:{key}", severity_of(key), message


def written_at(ctx: LineContext) -> datetime:
    """When the file was last written (UTC), the time RFC 3164 stamps take their year from."""
    written = ctx.state.get("_written")
    if written is None:
        try:
            written = datetime.fromtimestamp(os.stat(ctx.path).st_mtime, UTC)
        except (OSError, ValueError) as exc:
            raise ParseError("RFC 3164 stamp without a year and no file time to take it from: pass year=") from exc
        ctx.state["_written"] = written
    return written


def _year(month: int, day: int, ctx: LineContext) -> int:
    """The year of an RFC 3164 stamp: ``year=``, else the file's last write's (the year
    before when the month and day come after it)."""
    year = ctx.options.get("year")
    if year is not None:
        return year
    written = written_at(ctx)
    return written.year if (month, day) <= (written.month, written.day) else written.year - 1


def _when(g: tuple[str | None, ...], style: int, ctx: LineContext) -> datetime:
    """The UTC time of a stamp's groups (``style`` 3164 or 3339)."""
    try:
        if style == 3164:
            month, day = _MONTHS.index(g[0]) + 1, int(g[1])  # type: ignore[arg-type]
            zone = ctx.options.get("tz") or UTC
            local = datetime(_year(month, day, ctx), month, day, int(g[2]), int(g[3]), int(g[4]))  # type: ignore[arg-type]
            return local.replace(tzinfo=zone).astimezone(UTC)
        frac, off = g[6] or "", g[7] or "Z"
        when = datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]),  # type: ignore[arg-type]
                        int(frac.ljust(6, "0")) if frac else 0, tzinfo=UTC)
    except ValueError as exc:
        raise ParseError(f"syslog SEL record with an impossible time: {exc}") from exc
    if off != "Z":
        minutes = int(off[1:3]) * 60 + int(off[4:6])
        when -= timedelta(minutes=minutes if off[0] == "+" else -minutes)
    return when


def record(text: str, ctx: LineContext) -> tuple[bool, Row | None]:
    """One line -> (whether it is a ``sel-logger`` or ``ipmi_sel`` line, its signal row;
    ``None`` for an ``ipmi_sel`` record written twice)."""
    import pandas as pd

    m = _LOGGER_3164.fullmatch(text) if "sensor crossed a " in text else None
    style = 3164
    if m is None and "sensor crossed a " in text:
        m, style = _LOGGER_3339.fullmatch(text), 3339
    if m is not None:
        n = 5 if style == 3164 else 8
        g = m.groups()
        when = _when(g[:n], style, ctx)
        signal, severity = logger_signal(g[n + 2], g[n + 3], g[n + 4], g[n + 5])
        return True, _row(pd.Timestamp(when), g[n], signal, severity, g[n + 1])
    m = _IPMI_SEL.fullmatch(text) if "," in text else None
    if m is None:
        return False, None
    g = m.groups()
    when = _when(g[:8], 3339, ctx)
    if _repeated(g[8], text, ctx.state):
        return True, None
    signal, severity, message = ipmi_sel_signal(g[9], g[10], g[12], g[13])
    return True, _row(pd.Timestamp(when), ctx.options["host"], signal, severity, message)


def _row(when: Any, host: str, signal: str, severity: str, message: str) -> Row:
    return {"time": when, "host": host, "gpu": None, "job_id": None, "source": "sel", "signal": signal,
            "severity": severity, "message": message}


def _repeated(rid: str, text: str, st: dict[str, Any]) -> bool:
    """An ``ipmi_sel`` record written twice (same id, same text) is one record."""
    # (a record of the shape has one blank, between the stamp and the fields: the text is the key)
    return repeated(st.setdefault("seen_ipmi_sel", {}), rid, text)


def sniff_line(line: str) -> bool:
    """Whether ``line`` is a ``sel-logger`` threshold line or an ``ipmi_sel`` record."""
    if "sensor crossed a " in line:
        return bool(_LOGGER_3164.fullmatch(line) or _LOGGER_3339.fullmatch(line))
    return "," in line and _IPMI_SEL.fullmatch(line) is not None
