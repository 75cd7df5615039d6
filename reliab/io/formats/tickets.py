"""Incident tickets (CSV) -> ``ticket:<type>`` signals.

Format (docs/raw-formats.md, ``tickets/incidents.csv``): RFC 4180 CSV with a header
``ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,resolution``.  Columns
are matched case-insensitively and may come in any order; only a time column
(``incident_time`` or ``opened_at``) is required.  Free-text fields may be quoted and span
several physical lines (Python's :mod:`csv` reads them).

Each ticket becomes one signal ``ticket:<type>`` (``ticket:incident`` when the type is
blank) at ``incident_time`` (falling back to ``opened_at``), with the host, job id and the
message ``title | root_cause``.  Operators' verdicts are evidence, not classification: the
taxonomy rules read the message.
"""

from __future__ import annotations

import csv
import io
import lzma
import re
import sys
import zlib
from collections.abc import Sequence
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, Origin, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_parser

SOURCE = "tickets"
TIME_COLUMNS = ("incident_time", "opened_at")
_SEVERITY = {"incident": "error", "maintenance": "info"}
_TYPE = re.compile(r"[^a-z0-9]+")

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # long free-text root causes


def parse_ticket_time(text: str, tz: str) -> pd.Timestamp:
    """A ticket time (ISO 8601 or anything pandas reads) -> UTC; naive times are in ``tz``.

    Raises
    ------
    ParseError
        If the text is empty or not a time.
    """
    text = text.strip()
    if not text:
        raise ParseError("ticket without incident_time or opened_at")
    if not any(c.isdigit() for c in text):  # pandas would read 'now' and 'today'
        raise ParseError(f"time {text[:60]!r} is not a date/time")
    try:
        value = pd.Timestamp(text)
    except (ValueError, OverflowError, TypeError) as exc:
        raise ParseError(f"time {text[:60]!r} is not a date/time ({exc})") from None
    if value is pd.NaT or pd.isna(value):
        raise ParseError(f"time {text[:60]!r} is not a date/time")
    if value.tzinfo is None:
        value = value.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
        if pd.isna(value):
            raise ParseError(f"time {text[:60]!r} does not exist in zone {tz}")
    return value.tz_convert("UTC")


def ticket_signal(record: dict[str, str], tz: str) -> dict[str, Any]:
    """One ticket (lower-case column -> text) -> a signal row (without origin)."""
    when = record.get("incident_time", "").strip() or record.get("opened_at", "")
    kind = _TYPE.sub("_", record.get("type", "").strip().lower()).strip("_") or "incident"
    title, cause = record.get("title", "").strip(), record.get("root_cause", "").strip()
    message = " | ".join(p for p in (title, cause) if p) or None
    return {
        "time": parse_ticket_time(when, tz),
        "host": record.get("host", "").strip() or None,
        "gpu": record.get("gpu", "").strip() or None,
        "job_id": record.get("job_id", "").strip() or None,
        "source": SOURCE,
        "signal": f"ticket:{kind}",
        "severity": _SEVERITY.get(kind, "warning"),
        "message": message,
    }


def _sniff(path: str, lines: Sequence[str]) -> float:
    if not lines:
        return 0.0
    header = {c.strip().strip('"').lower() for c in lines[0].split(",")}
    if "ticket_id" in header and header & set(TIME_COLUMNS):
        return 0.95
    if "ticket" in path.lower() and header & set(TIME_COLUMNS):
        return 0.6
    return 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_tickets(path: str, *, tz: str = "UTC", strict: bool = False) -> FileResult:
    """Incident-ticket CSV -> ``ticket:<type>`` signals (one per ticket).

    Parameters
    ----------
    path : str
        CSV with a header row (possibly compressed).
    tz : str
        Zone of times written without an offset.
    strict : bool
        Raise the first malformed record instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["signals"]``.  Accounting is by physical line: the header and blank lines
        are irrelevant; a record spanning *k* lines counts 1 parsed (or malformed) and
        *k* - 1 irrelevant.

    References
    ----------
    RFC 4180 (CSV); docs/raw-formats.md (``tickets/incidents.csv``).
    """
    rows: list[dict[str, Any]] = []
    bad: list[tuple] = []
    lines = parsed = malformed = 0
    header: list[str] | None = None
    try:
        with open_binary(path) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            reader = csv.reader(text)
            while True:
                first = lines + 1
                try:
                    cells = next(reader, None)
                    error = None
                except csv.Error as exc:
                    cells, error = [], f"CSV error: {exc}"
                lines = max(reader.line_num, lines)
                if cells is None:
                    break
                if error is None and not any(c.strip() for c in cells):
                    continue  # blank line
                try:
                    if error is not None:
                        raise ParseError(error)
                    if header is None:
                        header = _header(cells)
                        continue
                    if len(cells) > len(header):
                        raise ParseError(f"{len(cells)} fields for a {len(header)}-column header")
                    row = ticket_signal(dict(zip(header, cells, strict=False)), tz)
                except ParseError as exc:
                    if strict:
                        raise ParseError(exc.message, Origin(str(path), first, ",".join(cells))) from None
                    bad.append((str(path), first, SOURCE, exc.message, ",".join(cells)[:2000]))
                    malformed += 1
                    continue
                row["origin"] = f"{path}:{first}"
                rows.append(row)
                parsed += 1
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        reason = f"stream ended abnormally after line {lines}: {exc}"
        if strict:
            raise InputFileError(f"{path}: {reason}") from exc
        bad.append((str(path), lines + 1, SOURCE, reason, None))
        malformed += 1
        lines += 1
    frame = schema.conform(pd.DataFrame(rows), "signals") if rows else schema.empty("signals")
    return FileResult(
        path=str(path), source=SOURCE, lines=lines, parsed=parsed,
        irrelevant=lines - parsed - malformed, malformed=malformed,
        tables={"signals": frame}, quarantine=quarantine_frame(bad),
    )


def _header(cells: list[str]) -> list[str]:
    names = [c.strip().lstrip("\ufeff").lower() for c in cells]
    if not set(names) & set(TIME_COLUMNS):
        raise ParseError(f"ticket header has neither {' nor '.join(TIME_COLUMNS)}")
    return names


__all__ = ["read_tickets", "ticket_signal", "parse_ticket_time"]
