"""IPMI System Event Log (``ipmitool sel list`` / ``sel elist``) -> ``sel:*`` signals.

Format (``ipmitool`` ``lib/ipmi_sel.c``, event strings from ``include/ipmitool/ipmi_sel.h``)::

      1a | 06/03/2024 | 14:01:55 | Power Supply #0xfb | Power Supply AC lost | Asserted
      2b | 06/03/2024 | 14:05:10 UTC | Temperature GPU3_Temp | Upper Critical going high | Asserted | Reading 92 > Threshold 90 degrees C

Fields are record id, date (``MM/DD/YYYY``), time (some BMCs append a zone: ``UTC``,
``SAST``, ``+02:00``), sensor (``<type> #0xNN`` in ``sel list``, ``<type> <SDR name>`` in
``sel elist``), event description, direction, and in ``elist`` an optional reading.

Only ``Asserted`` events are warning/critical signals.  ``Deasserted`` events are kept with
severity ``info`` and a ``_deasserted`` suffix on the key, so that rules never take the end of
a condition for its cause.  The host comes from the file name (``ipmi/node0421.sel``) or the
``host=`` option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._timestamps import localize

SOURCE = "sel"
_UTC_NAMES = frozenset({"UTC", "GMT", "Z", "UT"})
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?$")
_THRESHOLD = re.compile(r"\b(lower|upper) (non-critical|critical|non-recoverable) going (low|high)\b")
_THRESHOLD_SENSORS = ("temperature", "voltage", "current", "fan")
_LEVEL = {"non-critical": "noncritical", "critical": "critical", "non-recoverable": "nonrecoverable"}
_FILE_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".sel", ".log", ".txt", ".out")

#: (sensor type prefix, event substring, key), first match wins; event text per ipmi_sel.h
EVENT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("power supply", "ac lost", "power_supply_ac_lost"),
    ("power supply", "out-of-range", "power_supply_ac_out_of_range"),
    ("power supply", "failure detected", "power_supply_failure"),
    ("power supply", "predictive failure", "power_supply_predictive_failure"),
    ("power unit", "ac lost", "power_unit_ac_lost"),
    ("power unit", "failure detected", "power_unit_failure"),
    ("processor", "ierr", "processor_ierr"),
    ("processor", "uncorrectable machine check", "processor_mce"),
    ("processor", "correctable machine check", "processor_correctable_mce"),
    ("processor", "thermal trip", "processor_thermal_trip"),
    ("processor", "throttled", "processor_throttled"),
    ("memory", "uncorrectable ecc", "memory_uncorrectable_ecc"),
    ("memory", "correctable ecc", "memory_correctable_ecc"),
    ("critical interrupt", "bus correctable", "critical_interrupt_correctable"),
    ("critical interrupt", "", "critical_interrupt"),
)
_CRITICAL = frozenset({
    "power_supply_ac_lost", "power_supply_failure", "power_unit_ac_lost", "power_unit_failure",
    "processor_ierr", "processor_mce", "processor_thermal_trip", "memory_uncorrectable_ecc",
    "critical_interrupt",
})


def event_key(sensor: str, event: str) -> str:
    """The signal key (without ``sel:``) of a sensor and event description.

    Threshold events of temperature, voltage, current and fan sensors give
    ``<sensor type>_<lower|upper>_<noncritical|critical|nonrecoverable>``; the others follow
    :data:`EVENT_KEYS`; anything else (including ``Log area reset/cleared``) is ``other``.
    """
    s, e = sensor.strip().lower(), event.strip().lower()
    m = _THRESHOLD.search(e)
    if m is not None:
        for kind in _THRESHOLD_SENSORS:
            if s.startswith(kind):
                return f"{kind}_{m[1]}_{_LEVEL[m[2]]}"
    for prefix, needle, key in EVENT_KEYS:
        if s.startswith(prefix) and needle in e:
            return key
    return "other"


def _severity(key: str) -> str:
    if key in _CRITICAL or key.endswith(("_critical", "_nonrecoverable")):
        return "critical"
    if key == "other":
        return "info"
    return "warning"


def _zone(name: str, fallback: tzinfo | None) -> tzinfo:
    """The zone of a time-field suffix: UTC names, numeric offsets, IANA names or ``fallback``."""
    if name.upper() in _UTC_NAMES:
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
    if fallback is not None:
        return fallback
    raise ParseError(f"time zone {name!r} is not UTC or an offset; give tz= for this BMC")


def parse_sel_time(date: str, clock: str, tz: tzinfo | None) -> datetime:
    """``06/03/2024`` + ``14:01:55 [zone]`` -> aware UTC datetime.

    A time without a zone is in ``tz`` (UTC when ``None``); a named zone other than UTC/GMT
    that is not an IANA name is read in ``tz``, and is malformed when ``tz`` is ``None``.
    """
    parts = clock.split()
    if len(parts) not in (1, 2):
        raise ParseError(f"time field {clock!r} is not HH:MM:SS [zone]")
    zone = _zone(parts[1], tz) if len(parts) == 2 else (tz or UTC)
    fmt = "%m/%d/%Y" if len(date.strip()) > 8 else "%m/%d/%y"
    try:
        naive = datetime.strptime(f"{date.strip()} {parts[0]}", f"{fmt} %H:%M:%S")
    except ValueError:
        raise ParseError(f"date/time {date.strip()!r} {parts[0]!r} is not MM/DD/YYYY HH:MM:SS") from None
    return localize(naive, zone)


def parse_sel_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    """One ``sel list``/``elist`` line -> a signal row; ``None`` for non-record lines."""
    if "|" not in text:
        return None  # 'SEL has no entries', 'sel info' output, blank lines
    fields = [f.strip() for f in text.split("|")]
    if len(fields) < 5:
        raise ParseError(f"SEL record with {len(fields)} '|'-separated fields (need 5 or more)")
    record, date, clock, sensor, event = fields[:5]
    rest = fields[5:]
    if not record or not sensor:
        raise ParseError("SEL record without a record id or sensor")
    if date.lower() == "pre-init":
        raise ParseError("Pre-Init timestamp (seconds since BMC start): no wall-clock time")
    when = parse_sel_time(date, clock, ctx.options["tz"])
    direction = rest[0].lower() if rest else ""
    key = event_key(sensor, event)
    deasserted = direction == "deasserted"
    message = " | ".join([sensor, event, *[r for r in rest[1:] if r]])
    return {
        "time": when,
        "host": ctx.options["host"],
        "gpu": None,
        "job_id": None,
        "source": SOURCE,
        "signal": f"sel:{key}_deasserted" if deasserted else f"sel:{key}",
        "severity": "info" if deasserted else _severity(key),
        "message": message,
    }


def host_from_path(path: str) -> str:
    """``ipmi/node0421.sel`` (or ``.sel.gz``, ``.log``) -> ``node0421``."""
    name = Path(path).name
    stripped = True
    while stripped:
        stripped = False
        for suffix in _FILE_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[: -len(suffix)], True
    return name


def _sniff(path: str, lines: Sequence[str]) -> float:
    hits = 0
    for line in lines:
        fields = line.split("|")
        if len(fields) >= 5 and re.fullmatch(r"\s*\d{2}/\d{2}/\d{2,4}\s*", fields[1]):
            hits += 1
    if hits:
        return 0.9
    return 0.3 if path.lower().endswith((".sel", ".sel.gz")) else 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_sel(path: str, *, host: str | None = None, tz: str | None = None,
             strict: bool = False) -> FileResult:
    """IPMI SEL (``ipmitool sel list``/``sel elist``) of one host -> ``sel:*`` signals.

    Parameters
    ----------
    path : str
        One host's SEL capture (possibly compressed).
    host : str, optional
        Host name; by default the file name without its suffixes.
    tz : str, optional
        IANA zone of times printed without a zone, and of zone names the parser cannot resolve
        (``SAST``).  ``None``: zone-less times are UTC and unresolved names are malformed.
    strict : bool
        Raise the first malformed line instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["signals"]`` with keys such as ``sel:power_supply_ac_lost``,
        ``sel:temperature_upper_critical``, ``sel:critical_interrupt``, ``sel:other``.

    References
    ----------
    ipmitool ``include/ipmitool/ipmi_sel.h`` (event strings) and ``lib/ipmi_sel.c``
    (``sel list`` layout); IPMI v2.0 spec table 42-3 (sensor types).
    """
    zone: tzinfo | None = None
    if tz is not None:
        try:
            zone = ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"tz={tz!r} is not an IANA time zone") from exc
    options = {"host": host or host_from_path(path), "tz": zone}
    return scan_lines(path, SOURCE, parse_sel_line, table="signals", options=options,
                      literals=(b"|",), strict=strict)


__all__ = ["read_sel", "parse_sel_line", "parse_sel_time", "event_key", "host_from_path",
           "EVENT_KEYS"]
