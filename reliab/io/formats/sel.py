"""IPMI System Event Log (``ipmitool sel list`` / ``sel elist``, FreeIPMI ``ipmi-sel``) -> ``sel:*`` signals.

Format (``ipmitool`` ``lib/ipmi_sel.c``, event strings from ``include/ipmitool/ipmi_sel.h``)::

      1a | 06/03/2024 | 14:01:55 | Power Supply #0xfb | Power Supply AC lost | Asserted
      2b | 06/03/2024 | 14:05:10 UTC | Temperature GPU3_Temp | Upper Critical going high | Asserted | Reading 92 > Threshold 90 degrees C

Fields are record id, date (``MM/DD/YYYY``), time (some BMCs append a zone: ``UTC``,
``SAST``, ``+02:00``), sensor (``<type> #0xNN`` in ``sel list``, ``<type> <SDR name>`` in
``sel elist``), event description, direction, and in ``elist`` an optional reading.

FreeIPMI ``ipmi-sel`` prints a header (``ID | Date | Time | Name | Type | [State |] Event``),
the sensor type in its own column and dates as ``Jul-20-2017``; its ``State`` column
(``Nominal``, ``Warning``, ``Critical``) is the record's severity.  With
``--comma-separated-output`` the same columns are separated by commas (``ID,Date,Time,Name,
Type,State,Event``; FreeIPMI ``ipmi-sel(8)``, as Prometheus' ipmi_exporter runs it), with or
without the header (``--no-header-output``: the layout is then told by the field count and
the ``State`` word); commas beyond the last column belong to the event text.  ``ipmitool -c
sel list`` separates the ``sel list`` cells by commas (hexadecimal id, ``MM/DD/YYYY``,
``Asserted``/``Deasserted`` in the sixth cell) and is read like them.  Dates, zones and the
records of a BMC whose clock was not set (``Pre-Init``, ``PostInit``, 01/01/2000): see
:mod:`reliab.io.formats._sel_time` — such records are quarantined with that reason, never
dated 2000.  A record printed twice (the same id and text, e.g. where ``head`` and ``tail``
outputs overlap) is one event.

Only ``Asserted`` events are warning/critical signals.  ``Deasserted`` events are kept with
severity ``info`` and a ``_deasserted`` suffix on the key, so that rules never take the end of
a condition for its cause.  Critical records are those of failed parts (power supply failure
or AC lost, processor IERR or uncorrectable machine check, uncorrectable ECC, bus fatal
errors), OS critical stops (``OS Critical Stop | Run-time critical stop``: the OS crashed)
and any sensor's transition to, or threshold crossing of, a critical or non-recoverable
level.  An empty SEL (``SEL has no entries``) is a SEL with no events.  The host comes from
the file name (``ipmi/node0421.sel``) or the ``host=`` option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._hostpath import host_from_path as path_host
from reliab.io.formats._sel_keys import (
    EVENT_KEYS,
    event_key,
    repeated,
    sensor_type,
    severity_of,
)
from reliab.io.formats._sel_syslog import LITERALS as SYSLOG_LITERALS
from reliab.io.formats._sel_syslog import record as syslog_record
from reliab.io.formats._sel_syslog import sniff_line
from reliab.io.formats._sel_syslog_bulk import make_bulk
from reliab.io.formats._sel_time import parse_sel_time, unset_clock

SOURCE = "sel"
_STATES = {"critical": "critical", "warning": "warning", "nominal": "info"}
_FILE_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".sel", ".log", ".txt", ".out")


#: FreeIPMI ``ipmi-sel --comma-separated-output --no-header-output`` columns, without and with
#: ``--output-event-state``
_CSV_LAYOUTS = (("id", "date", "time", "name", "type", "event"),
                ("id", "date", "time", "name", "type", "state", "event"))
#: ``ipmitool -c sel list``: the cells of the ``|`` layout (record, date, time, sensor, event,
#: direction[, reading]) separated by commas (ipmitool ``lib/ipmi_sel.c``, ``csv_output``)
IPMITOOL_CSV: tuple[str, ...] = ()
_FREEIPMI_DATE = re.compile(r"[A-Za-z]{3}-[0-9]{2}-[0-9]{4}|PostInit|Post-Init")
_IPMITOOL_DATE = re.compile(r"[0-9]{2}/[0-9]{2}/[0-9]{2,4}|Pre-Init")
_DIRECTIONS = frozenset({"asserted", "deasserted"})


def _csv_layout(cells: list[str]) -> tuple[str, ...] | None:
    """The column layout of a headerless comma-separated SEL record, else ``None``.

    FreeIPMI (``ipmi-sel --comma-separated-output``): a decimal id, a FreeIPMI date
    (``Jul-20-2017``, ``PostInit``), at least six cells; a sixth cell that is a ``State`` word
    (``Nominal``, ``Warning``, ``Critical``) before a seventh means ``--output-event-state``.
    ipmitool (``ipmitool -c sel list``): a hexadecimal record id, ``MM/DD/YYYY`` or
    ``Pre-Init``, and ``Asserted``/``Deasserted`` in the sixth cell (:data:`IPMITOOL_CSV`).
    """
    if len(cells) < 6:
        return None
    if re.fullmatch(r"[0-9A-Fa-f]+", cells[0]) and _IPMITOOL_DATE.fullmatch(cells[1]) \
            and cells[5].lower() in _DIRECTIONS:
        return IPMITOOL_CSV
    if not cells[0].isdigit() or not _FREEIPMI_DATE.fullmatch(cells[1]):
        return None
    return _CSV_LAYOUTS[1] if len(cells) >= 7 and cells[5].lower() in _STATES else _CSV_LAYOUTS[0]


def _is_csv_header(cells: list[str]) -> bool:
    names = [c.lower() for c in cells]
    return names[:3] == ["id", "date", "time"] and "event" in names


def _fields(text: str, ctx: LineContext) -> list[str] | None:
    """The cells of a record or header line: ``|``-separated (ipmitool, ``ipmi-sel``) or
    ``ipmi-sel --comma-separated-output``; ``None`` for any other line."""
    if "|" in text:
        return [f.strip() for f in text.split("|")]
    if "," not in text:
        return None
    cols = ctx.state.get("freeipmi")
    if ctx.state.get("sep") == ",":
        return [f.strip() for f in text.split(",", len(cols) - 1 if cols else -1)]
    cells = [f.strip() for f in text.split(",")]
    if _is_csv_header(cells):
        ctx.state["sep"] = ","
        return cells
    layout = _csv_layout(cells)
    if layout is None:
        return None
    ctx.state["sep"] = ","
    if layout == IPMITOOL_CSV:
        return cells
    ctx.state["freeipmi"] = {name: i for i, name in enumerate(layout)}
    return [f.strip() for f in text.split(",", len(layout) - 1)]


def _freeipmi_header(fields: list[str], ctx: LineContext) -> bool:
    """``ID | Date | Time | Name | Type | [State |] Event``: remember the column positions."""
    names = [f.lower() for f in fields]
    if names[:3] == ["id", "date", "time"] and "event" in names:
        ctx.state["freeipmi"] = {n: i for i, n in enumerate(names)}
        return True
    return False


def _freeipmi_record(fields: list[str], cols: dict[str, int]) -> tuple[str, str, str, str, str, list[str], str | None]:
    """(record, date, clock, sensor, event, rest, severity) of an ``ipmi-sel`` row."""
    if len(fields) != len(cols):
        raise ParseError(f"ipmi-sel record with {len(fields)} fields, header has {len(cols)}")
    get = fields.__getitem__
    kind, name = get(cols["type"]) if "type" in cols else "", get(cols["name"]) if "name" in cols else ""
    state = _STATES.get(get(cols["state"]).lower()) if "state" in cols else None
    return get(0), get(1), get(2), f"{kind} {name}".strip(), get(cols["event"]), [], state


def _seen_before(record: str, text: str, ctx: LineContext) -> bool:
    """A record printed twice (same id, same text) is one event."""
    return repeated(ctx.state.setdefault("seen", {}), record, " ".join(text.split()))


#: a SEL record forwarded by a BMC to a remote syslog server: the receiver's stamp (RFC 3339 or
#: RFC 3164) and the sender's host name in front of the record id (NVIDIA BlueField BMC)
_FORWARDED = re.compile(r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
                        r"|[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}) +(\S+) +([0-9A-Fa-f]+)")


def _forwarded(record: str) -> tuple[str, str | None]:
    """(record id, sender host) of a record cell; the host is ``None`` unless syslog forwarded it."""
    if " " not in record:
        return record, None
    hit = _FORWARDED.fullmatch(record)
    return (hit.group(2), hit.group(1)) if hit else (record, None)


def parse_sel_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    """One ``sel list``/``elist``/``ipmi-sel`` line (or a record that reached syslog, see
    :mod:`._sel_syslog`) -> a signal row; ``None`` for non-record lines."""
    mine, row = syslog_record(text, ctx)
    if mine:
        return row
    fields = _fields(text, ctx)
    if fields is None:
        return None  # 'SEL has no entries', 'sel info' output, blank lines, wrapper text
    if _freeipmi_header(fields, ctx):
        return None
    state: str | None = None
    if "freeipmi" in ctx.state:
        record, date, clock, sensor, event, rest, state = _freeipmi_record(fields, ctx.state["freeipmi"])
    else:
        if 2 <= len(fields) < 5 and fields[1].lower().startswith("oem record"):
            return None  # an OEM record without a timestamp (record type e0h-ffh): no event to date
        if len(fields) < 5:
            raise ParseError(f"SEL record with {len(fields)} '|'-separated fields (need 5 or more)")
        record, date, clock, sensor, event = fields[:5]
        rest = fields[5:]
    record, sender = _forwarded(record)
    if not record or not sensor:
        raise ParseError("SEL record without a record id or sensor")
    if _seen_before(record if sender is None else f"{sender} {record}", text, ctx):
        return None
    if unset_clock(date):
        raise ParseError(f"record stamped {date!r} (logged before the BMC clock was set): no wall-clock time")
    when = parse_sel_time(date, clock, ctx.options["tz"])
    direction = rest[0].lower() if rest else ""
    key = event_key(sensor, event)
    deasserted = direction == "deasserted"
    message = " | ".join([sensor, event, *[r for r in rest[1:] if r]])
    return {
        "time": when,
        "host": sender or ctx.options["host"],
        "gpu": None,
        "job_id": None,
        "source": SOURCE,
        "signal": f"sel:{key}_deasserted" if deasserted else f"sel:{key}",
        "severity": "info" if deasserted else state or severity_of(key),
        "message": message,
    }


def host_from_path(path: str) -> str:
    """``ipmi/node0421.sel`` (or ``.sel.gz``, ``.log``) and ``node0421/sel.txt`` -> ``node0421``."""
    return path_host(path, _FILE_SUFFIXES)


#: the date cell of an ``ipmitool sel list`` record (an unset BMC clock reads Pre-Init)
_SNIFF_DATE = re.compile(r"\s*(?:[0-9]{2}/[0-9]{2}/[0-9]{2,4}|[A-Za-z]{3}-[0-9]{2}-[0-9]{4}|Pre-Init|PostInit)\s*")


#: the first cell of every comma-separated SEL line: the header's ``ID`` or a record id
_CSV_FIRST = re.compile(r"\s*(?:[Ii][Dd]|[0-9A-Fa-f]+)\s*,")


def _sniff(path: str, lines: Sequence[str]) -> float:
    # SEL records that reached syslog (OpenBMC sel-logger, /var/log/ipmi_sel): a file of them, not
    # a syslog file that holds a few among other daemons' lines (the kernel reader's)
    shaped = sum(1 for line in lines if "|" not in line and sniff_line(line))
    if shaped and 2 * shaped >= sum(1 for line in lines if line.strip()):
        return 0.9
    for line in lines:  # one record or header line decides
        if "|" not in line:
            if _CSV_FIRST.match(line) is None:  # (no other line can be a comma-separated record or header)
                continue
            cells = [c.strip() for c in line.split(",")]
            if _is_csv_header(cells) and len(cells) >= 6 or _csv_layout(cells) is not None:
                return 0.9  # ipmi-sel --comma-separated-output
            continue
        fields = line.split("|")
        if len(fields) >= 5 and _SNIFF_DATE.fullmatch(fields[1]):
            return 0.9
        if len(fields) >= 6 and [f.strip().lower() for f in fields[:3]] == ["id", "date", "time"]:
            return 0.9  # the ipmi-sel header
    text = [line.strip() for line in lines if line.strip()]
    if text and (text[0] == "SEL has no entries" or text[0] == "SEL Information"):
        return 0.9  # an empty SEL, or ``ipmitool sel info``: a SEL capture without events
    return 0.3 if path.lower().endswith((".sel", ".sel.gz")) else 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_sel(path: str, *, host: str | None = None, tz: str | None = None, year: int | None = None,
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
    year : int, optional
        Year of RFC 3164 syslog stamps (``Apr 25 15:16:36``, no year); by default the year of
        the file's last write (the year before for a month and day after it).
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
    if year is not None and (not isinstance(year, int) or isinstance(year, bool)):
        raise TypeError(f"year must be an int, not {type(year).__name__}")
    options = {"host": host or host_from_path(path), "tz": zone, "year": year}
    return scan_lines(path, SOURCE, parse_sel_line, table="signals", options=options,
                      literals=(b"|", b",", *SYSLOG_LITERALS), strict=strict, bulk=_BULK)


#: the bulk hook (storms of SEL records in syslog: :mod:`._sel_syslog_bulk`)
_BULK = make_bulk()


__all__ = ["read_sel", "parse_sel_line", "parse_sel_time", "event_key", "host_from_path",
           "EVENT_KEYS", "sensor_type", "severity_of"]
