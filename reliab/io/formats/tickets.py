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
import lzma
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, Origin, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import unexpected
from reliab.io._localtime import localize, noting
from reliab.io._prefilter import MAX_LINE_BYTES, Terminators, all_lines
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._hostpath import named_for

SOURCE = "tickets"
TIME_COLUMNS = ("incident_time", "opened_at")
_SEVERITY = {"incident": "error", "maintenance": "info"}
_TYPE = re.compile(r"[^a-z0-9]+")

csv.field_size_limit(max(csv.field_size_limit(), 4 << 20))  # long root causes (records are capped below)


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
    return localize(value, tz)  # naive: local time in tz, by the one DST rule


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
    if named_for(path, "ticket") and header & set(TIME_COLUMNS):
        return 0.6
    return 0.0


#: a record (all its physical lines) longer than this is malformed
MAX_RECORD_BYTES = MAX_LINE_BYTES


def ends_quoted(line: str, inside: bool = False) -> bool:
    """Whether a CSV record is inside a quoted field after ``line`` (no terminator).

    Follows the ``csv`` module's default (Excel) dialect: a ``"`` opens a quoted field only
    as the first character of a field, ``""`` inside one is a quote, and a ``"`` ends it.
    ``inside`` says whether the line starts within a quoted field (a continuation line).
    """
    i, at_start = 0, not inside
    while True:
        if inside:
            j = line.find('"', i)
            if j < 0:
                return True
            if line.startswith('"', j + 1):
                i = j + 2
                continue
            inside, at_start, i = False, False, j + 1
        if at_start and line.startswith('"', i):
            inside, i = True, i + 1
            continue
        k = line.find(",", i)
        if k < 0:
            return False
        i, at_start = k + 1, True


@dataclass
class _Record:
    """The physical lines of one CSV record being assembled."""

    first: int
    lines: list[str] = field(default_factory=list)
    size: int = 0
    skipping: bool = False  # too long: its lines are only counted


class _TicketReader:
    """Assembles physical lines into records and records into signals, with the accounting."""

    def __init__(self, path: str, tz: str, strict: bool) -> None:
        self.path, self.tz, self.strict = path, tz, strict
        self.header: list[str] | None = None
        self.rows: list[dict[str, Any]] = []
        self.quarantine = Quarantine(path, SOURCE)
        self.parsed = 0
        self.open: _Record | None = None

    def bad(self, lineno: int, reason: str, text: str | None) -> None:
        if self.strict:
            raise ParseError(reason, Origin(self.path, lineno, text or ""))
        self.quarantine.add(lineno, reason, text)

    def looks_like_record(self, text: str) -> bool:
        """Whether ``text`` alone is a complete record: it ends an unclosed quote before it."""
        if (self.header is None or text.count(",") < len(self.header) - 1 or ends_quoted(text)
                or '"' in text[:1]):
            return False
        cells = next(csv.reader([text]), [])
        if len(cells) != len(self.header) or not cells[0].strip():
            return False
        record = dict(zip(self.header, cells, strict=True))
        when = record.get("incident_time", "").strip() or record.get("opened_at", "").strip()
        try:
            return bool(when) and any(c.isdigit() for c in when) and not pd.isna(pd.Timestamp(when))
        except (ValueError, OverflowError, TypeError):
            return False

    def broken(self, rec: _Record, where: str) -> None:
        self.bad(rec.first, f"unclosed quote: the quoted field opened on line {rec.first} is still open"
                 f" {where}; the record is left out", rec.lines[0][:2000] if rec.lines else None)

    def line(self, lineno: int, text: str, size: int) -> None:
        """Take one physical line (without terminator)."""
        rec = self.open
        if rec is not None:
            if self.looks_like_record(text):
                if not rec.skipping:  # (a skipped record was quarantined already)
                    self.broken(rec, f"at line {lineno}, which is a complete record")
                self.open = rec = None
            elif rec.skipping or rec.size + size > MAX_RECORD_BYTES:
                if not rec.skipping:
                    self.bad(rec.first, f"record longer than {MAX_RECORD_BYTES} bytes (a quoted field"
                             f" opened on line {rec.first} does not close)", rec.lines[0][:2000])
                    rec.skipping, rec.lines = True, []
                if not ends_quoted(text, True):
                    self.open = None  # the field closed at last: the next line is a record
                return
            else:
                rec.lines.append(text)
                rec.size += size
                if not ends_quoted(text, True):
                    self.open = None
                    self.record(rec)
                return
        if not text.strip():
            return
        rec = _Record(first=lineno, lines=[text], size=size)
        if ends_quoted(text):
            self.open = rec
        else:
            self.record(rec)

    def over_long(self, lineno: int, size: int, head: str) -> None:
        """A physical line too long to hold: malformed; it also ends an open record."""
        if self.open is not None and not self.open.skipping:
            self.broken(self.open, f"at line {lineno}, a line of {size} bytes")
        self.open = None
        self.bad(lineno, f"line of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit", head)

    def end(self) -> None:
        """The file ended: an open record is malformed."""
        if self.open is not None and not self.open.skipping:
            self.broken(self.open, "at the end of the file")
        self.open = None

    def record(self, rec: _Record) -> None:
        try:
            cells = next(csv.reader([line + "\n" for line in rec.lines]), [])
            if self.header is None:
                self.header = _header(cells)
                return
            if len(cells) > len(self.header):
                raise ParseError(f"{len(cells)} fields for a {len(self.header)}-column header")
            row = ticket_signal(dict(zip(self.header, cells, strict=False)), self.tz)
        except csv.Error as exc:
            self.bad(rec.first, f"CSV error: {exc}", ",".join(rec.lines)[:2000])
            return
        except ParseError as exc:
            self.bad(rec.first, exc.message, "\n".join(rec.lines)[:2000])
            return
        row["origin"] = f"{self.path}:{rec.first}"
        row["_lineno"] = rec.first
        self.rows.append(row)
        self.parsed += 1


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_tickets(path: str, *, tz: str = "UTC", strict: bool = False) -> FileResult:
    """Incident-ticket CSV -> ``ticket:<type>`` signals (one per ticket).

    Parameters
    ----------
    path : str
        CSV with a header row (possibly compressed).
    tz : str
        Zone of times written without an offset (DST rule of
        :func:`reliab.io._localtime.localize`).
    strict : bool
        Raise the first malformed record instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["signals"]``.  Accounting is by physical line: the header and blank lines
        are irrelevant; a record spanning *k* lines counts 1 parsed (or malformed) and
        *k* - 1 irrelevant.

    Notes
    -----
    The file is streamed line by line (lines end at ``\n``, ``\r\n`` or ``\r``).  A
    quoted field that never closes ends at the next line that is a complete record on its
    own (right number of fields, a readable time): the broken record is quarantined and
    reading resumes there, so one stray quote never swallows the tickets after it.  A
    record longer than :data:`MAX_RECORD_BYTES` is quarantined without being held.

    References
    ----------
    RFC 4180 (CSV); docs/raw-formats.md (``tickets/incidents.csv``).
    """
    reader = _TicketReader(str(path), tz, strict)
    counter = [0]
    with noting() as local_times:
        try:
            with Terminators(open_binary(path)) as fh:
                for lineno, raw, size in all_lines(fh, counter):  # type: ignore[arg-type]
                    if size > MAX_LINE_BYTES:
                        reader.over_long(lineno, size, raw[:200].decode("utf-8", "replace"))
                        continue
                    text = raw.decode("utf-8", "replace").rstrip("\r\n")
                    try:
                        reader.line(lineno, text, size)
                    except ParseError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - one bad record never ends the run
                        reader.open = None
                        reader.bad(lineno, unexpected(exc), text[:2000])
            reader.end()
            lines = counter[0]
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            lines = counter[0]
            reason = f"stream ended abnormally after line {lines}: {exc}"
            if strict:
                raise InputFileError(f"{path}: {reason}") from exc
            reader.quarantine.add(lines + 1, reason, None)
            lines += 1
    linenos = [row.pop("_lineno") for row in reader.rows]
    frame, refused = schema.conform_rows(reader.rows, "signals")
    for i, why in sorted(refused.items()):
        reader.bad(linenos[i], why, None)
    parsed = reader.parsed - len(refused)
    malformed = reader.quarantine.count
    notes = tuple(n for n in (local_times.note(),) if n)
    return FileResult(
        path=str(path), source=SOURCE, lines=lines, parsed=parsed,
        irrelevant=lines - parsed - malformed, malformed=malformed,
        tables={"signals": frame}, quarantine=reader.quarantine.frame(), notes=notes,
    )


def _header(cells: list[str]) -> list[str]:
    names = [c.strip().lstrip("\ufeff").lower() for c in cells]
    if not set(names) & set(TIME_COLUMNS):
        raise ParseError(f"ticket header has neither {' nor '.join(TIME_COLUMNS)}")
    return names


__all__ = ["read_tickets", "ticket_signal", "parse_ticket_time"]
