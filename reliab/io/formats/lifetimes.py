"""Unit inventories and replacement logs (CSV) -> the ``lifetimes`` table.

Format (docs/raw-formats.md, "Unit lifetimes"): an RFC 4180 CSV with a header naming at least
a serial column and an install column; columns are matched case-insensitively by the names
below, and ``columns={"their name": "our name"}`` (``--columns THEIR=OURS``) maps any other
header.

========== ============================================================================
role        header names recognised
========== ============================================================================
serial      serial, serial_number, sn, unit, unit_id, asset, asset_tag, uuid
kind        kind, type, part, part_type, device_type, component
installed   installed, install, install_date, install_time, installed_at, in_service, insert
removed     removed, removal, removal_date, removal_time, removed_at, replaced_at, remove
reason      reason, removal_reason, replacement_reason, failure_reason
failed      failed, failure, is_failure (1/0, true/false, yes/no)
location    location, site, datacenter, dc, room, cage, row, rack, chassis, node, host,
            slot, bay, position (each kept as its own column; joined by ``/`` in order)
========== ============================================================================

Every other column (batch, model, vendor, firmware...) is kept as text, for use as a
covariate.  A ``location`` column whose every value is a Cray component name (cname)
``c<col>-<row>c<cage>s<slot>n<node>`` (e.g. ``c13-5c2s2n1``, the cabinet at column 13, row
5, cage 2, slot 2, node 1; Cray XC/XK system documentation, "component names") is also split
into ``col``, ``row``, ``cage``, ``slot`` and ``node`` columns.

**The unit of analysis is a life**: one row per (serial, install).  A serial on several rows
with different installs has several successive lives (re-installed after repair, or moved);
they are numbered ``life = 1, 2, ...`` by install time.  Successive units of one slot are
lives of different serials that share a location.  A row repeating the (serial, install) of
an earlier row is an update of that life: the later row wins and the earlier one counts as
irrelevant (a log that writes the install, then the removal, gives one life).

**What is a failure.**  A ``failed`` column decides when present.  Otherwise a life without a
removal is in service (censored).  With ``failure_reasons`` (``--failure-reasons DBE,OTB``)
a removal is a failure exactly when its reason is one of them (case-insensitive), and every
other removal — a move, the system's shutdown — is censored.  Without it, a removal whose
reason names a planned cause (upgrade, decommission, retirement, refresh, migration, move,
rebalance, lease end, spare, no fault found) is censored and every other removal, including
one with no reason, is a failure.  This
follows the field-data practice of counting unit replacements as failures unless they are
known to be planned (Schroeder & Gibson, "Disk failures in the real world", FAST 2007, §3;
Meeker & Escobar 1998, §1.1 on censoring by removal for other causes).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from reliab import schema
from reliab.errors import ParseError
from reliab.io._files import open_binary
from reliab.io._localtime import localize_series, noting
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser

SOURCE = "lifetimes"
ROLES: dict[str, tuple[str, ...]] = {
    "serial": ("serial", "serial_number", "serialnumber", "serial_no", "sn", "unit", "unit_id",
               "asset", "asset_tag", "uuid"),
    "kind": ("kind", "type", "part", "part_type", "device_type", "component"),
    "installed": ("installed", "install", "install_date", "install_time", "installed_at",
                  "installation_date", "in_service", "insert", "inserted"),
    "removed": ("removed", "removal", "removal_date", "removal_time", "removed_at", "replaced_at",
                "replacement_date", "out_of_service", "remove"),
    "reason": ("reason", "removal_reason", "replacement_reason", "failure_reason"),
    "failed": ("failed", "failure", "is_failure"),
}
LOCATION_FIELDS = ("location", "site", "datacenter", "dc", "room", "cage", "row", "rack", "chassis",
                   "node", "host", "slot", "bay", "position")
PLANNED = re.compile(r"upgrad|decommission|retir|refresh|migrat|relocat|\bmove|rebalanc|planned|"
                     r"end[ _-]?of[ _-]?(?:life|lease)|lease|spare|repurpos|no[ _-]?fault|\bnff\b",
                     re.IGNORECASE)
CNAME = re.compile(r"^c(?P<col>\d+)-(?P<row>\d+)c(?P<cage>\d+)s(?P<slot>\d+)n(?P<node>\d+)$")
_TRUE = frozenset({"1", "true", "t", "yes", "y"})
_FALSE = frozenset({"0", "false", "f", "no", "n", ""})


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def resolve_columns(header: Sequence[str], columns: Mapping[str, str] | None = None) -> list[str]:
    """Our name for each header field: a role (``serial``, ``installed``...), a location field
    or the field's own normalised name; ``columns`` maps their names to ours first.

    Raises
    ------
    ParseError
        If no serial or no install column is found, or two fields take one role.
    """
    given = {_key(k): _key(v) for k, v in (columns or {}).items()}
    synonyms = {s: role for role, names in ROLES.items() for s in names}
    out = []
    for field in header:
        k = _key(field)
        out.append(given.get(k) or synonyms.get(k, k))
    for role in ("serial", "installed"):
        if role not in out:
            raise ParseError(f"no {role} column in the header {list(header)!r}; name it one of "
                             f"{', '.join(ROLES[role])} or map it with columns (--columns THEIR={role})")
    dup = sorted({n for n in out if out.count(n) > 1})
    if dup:
        raise ParseError(f"header fields {dup} appear twice (after mapping); map one elsewhere with columns")
    return out


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    if not first_lines:
        return 0.0
    try:
        header = next(csv.reader([first_lines[0]]), [])
    except csv.Error:
        return 0.0
    keys = {_key(h) for h in header}
    has = [bool(keys & set(ROLES[r])) for r in ("serial", "installed")]
    return 0.9 if all(has) and len(header) >= 2 else 0.0


def _times(text: pd.Series, tz: str) -> tuple[pd.Series, dict[int, str]]:
    """UTC times of ``text``; a naive time is local in ``tz`` by the one DST rule of every reader
    (:func:`reliab.io._localtime.localize_series`: the repeated hour is the earlier instant, a
    skipped time is not a time).  Also the reasons, by position, of the skipped times."""
    t = pd.to_datetime(text, errors="coerce", format="mixed")
    if getattr(t.dt, "tz", None) is None:
        return localize_series(t, tz)
    return t.dt.tz_convert("UTC"), {}


def failed_of(frame: pd.DataFrame, failure_reasons: Sequence[str] | None = None) -> pd.Series:
    """Whether each life ended in a failure (module docstring: the ``failed`` column, else the
    removal and its reason, against ``failure_reasons`` when given)."""
    if "failed" in frame.columns:
        return frame["failed"].fillna("").astype(str).str.strip().str.lower().isin(_TRUE)
    removed = frame["removed"].notna() if "removed" in frame.columns else pd.Series(False, index=frame.index)
    reason = frame["reason"].fillna("").astype(str) if "reason" in frame.columns else pd.Series("", index=frame.index)
    if failure_reasons is not None:
        wanted = {r.strip().lower() for r in failure_reasons}
        return removed & reason.str.strip().str.lower().isin(wanted)
    return removed & ~reason.str.contains(PLANNED)


def _records(path: str) -> tuple[list[int], list[list[str]], int]:
    """(first line number, fields) per non-blank CSV record, and the count of physical lines."""
    with open_binary(path) as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text)
        starts, rows, last = [], [], 0
        for row in reader:
            if any(c.strip() for c in row):
                starts.append(last + 1)
                rows.append(row)
            last = reader.line_num
    return starts, rows, last


@register_parser(SOURCE, sniff=_sniff, table="lifetimes")
def read_lifetimes(path: str, *, columns: Mapping[str, str] | None = None, tz: str = "UTC",
                   failure_reasons: Sequence[str] | None = None, strict: bool = False) -> FileResult:
    """Unit inventory or replacement log (CSV) -> the ``lifetimes`` table, one row per life.

    Parameters
    ----------
    path : str
        CSV with a header naming a serial and an install column (module docstring).
    columns : mapping, optional
        ``{"their name": "our name"}``, e.g. ``{"SN": "serial", "Swap Date": "removed"}``.
    tz : str
        Zone of naive install and removal times (default UTC).
    failure_reasons : sequence of str, optional
        Removal reasons that are failures (e.g. ``DBE,OTB``); any other removal is censored.
    strict : bool
        Raise on the first malformed row instead of quarantining it.
    """
    if isinstance(failure_reasons, str):  # "DBE,OTB" from a command line or a manifest
        failure_reasons = [r for r in failure_reasons.split(",") if r.strip()]
    starts, rows, lines = _records(path)
    if not rows:
        return FileResult(path=str(path), source=SOURCE, lines=lines, parsed=0, irrelevant=lines,
                          malformed=0, tables={SOURCE: schema.empty(SOURCE)})
    names = resolve_columns(rows[0], columns)
    quarantine = Quarantine(str(path), SOURCE)
    good_rows, good_starts = [], []
    for lineno, row in zip(starts[1:], rows[1:], strict=True):
        if len(row) != len(names):
            if strict:
                raise ParseError(f"{len(row)} fields for a {len(names)}-column header at {path}:{lineno}")
            quarantine.add(lineno, f"{len(row)} fields for a {len(names)}-column header", ",".join(row)[:2000])
            continue
        good_rows.append(row)
        good_starts.append(lineno)
    with noting() as local_times:
        frame, bad = _frame(good_rows, good_starts, names, tz, str(path), failure_reasons)
    for lineno, reason in bad:
        if strict:
            raise ParseError(f"{reason} at {path}:{lineno}")
        quarantine.add(lineno, reason, None)
    frame, repeated = _lives(frame)
    notes = _notes(frame, repeated, failure_reasons is not None or "failed" in names)
    if local_times.note():
        notes = (*notes, local_times.note())
    malformed = quarantine.count
    return FileResult(path=str(path), source=SOURCE, lines=lines, parsed=len(frame),
                      irrelevant=lines - len(frame) - malformed, malformed=malformed,
                      tables={SOURCE: frame}, quarantine=quarantine.frame(), notes=notes)


def _frame(rows: list[list[str]], starts: list[int], names: list[str], tz: str, path: str,
           failure_reasons: Sequence[str] | None) -> tuple[pd.DataFrame, list[tuple[int, str]]]:
    """Typed lives, and (line, reason) of the rows that cannot be lives."""
    raw = pd.DataFrame(rows, columns=names, dtype=str)
    raw["lineno"] = starts
    for c in names:  # a blank cell is a missing value
        raw[c] = raw[c].str.strip().replace("", pd.NA)
    raw["serial"] = raw["serial"].fillna("")
    installed, skipped = _times(raw["installed"], tz)
    removed, skipped_r = (_times(raw["removed"], tz) if "removed" in raw.columns
                          else (pd.Series(pd.NaT, index=raw.index, dtype=schema.UTC), {}))
    blank_removed = raw["removed"].isna() if "removed" in raw.columns else True
    why = pd.Series(pd.NA, index=raw.index, dtype=object)
    why[raw["serial"].eq("")] = "no serial"
    for pos, reason in (*skipped.items(), *skipped_r.items()):  # a local time a DST change skipped
        if pd.isna(why.iloc[pos]):
            why.iloc[pos] = reason
    why[why.isna() & installed.isna()] = "install time missing or not a date/time"
    why[why.isna() & removed.isna() & ~blank_removed] = "removal time not a date/time"
    why[why.isna() & (removed < installed)] = "removed before installed"
    bad = [(int(n), str(w)) for n, w in zip(raw["lineno"], why, strict=True) if isinstance(w, str)]
    keep = why.isna().to_numpy()
    raw = raw.loc[keep]
    out = raw.drop(columns=[c for c in ("installed", "removed", "failed") if c in raw.columns])
    out["installed"], out["removed"] = installed[keep], removed[keep]
    out["failed"] = failed_of(raw.assign(removed=removed[keep]), failure_reasons).to_numpy(dtype=bool)
    loc = [c for c in names if c in LOCATION_FIELDS]
    out["location"] = (out[loc].fillna("").agg("/".join, axis=1) if loc
                       else pd.Series(pd.NA, index=out.index, dtype=object))
    out["origin"] = [f"{path}:{n}" for n in out["lineno"]]
    out = _cname_fields(out)
    extra = [c for c in out.columns if c not in {col.name for col in schema.LIFETIMES} | {"lineno"}]
    out[extra] = out[extra].astype(schema.STRING)
    return out, bad


def _cname_fields(out: pd.DataFrame) -> pd.DataFrame:
    """``col``, ``row``, ``cage``, ``slot``, ``node`` from a location column of Cray cnames."""
    if "location" not in out.columns or not len(out):
        return out
    parts = out["location"].astype(str).str.extract(CNAME)
    fields = [c for c in parts.columns if c not in out.columns]
    if parts.isna().any().any() or not fields:
        return out
    return out.assign(**{c: parts[c] for c in fields})


def _lives(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One row per (serial, install), the later row winning; ``life`` numbered by install."""
    n = len(frame)
    frame = frame.drop_duplicates(["serial", "installed"], keep="last")
    frame = frame.sort_values(["serial", "installed"], kind="stable")
    frame["life"] = frame.groupby("serial").cumcount() + 1
    frame = frame.sort_values("lineno", kind="stable").drop(columns="lineno").reset_index(drop=True)
    return schema.conform(frame, SOURCE), n - len(frame)


def _notes(frame: pd.DataFrame, repeated: int, explicit: bool) -> tuple[str, ...]:
    notes = []
    if repeated:
        notes.append(f"{repeated} row(s) repeat the serial and install of a later row: the later row is the life")
    several = int((frame["life"] > 1).groupby(frame["serial"]).any().sum()) if len(frame) else 0
    if several:
        notes.append(f"{several} serial(s) have several lives (re-installed)")
    if len(frame) and not explicit:
        blank = int((frame["removed"].notna() & frame["reason"].isna()).sum())
        if blank:
            notes.append(f"{blank} removal(s) without a reason counted as failures")
    return tuple(notes)


__all__ = ["LOCATION_FIELDS", "PLANNED", "ROLES", "failed_of", "read_lifetimes", "resolve_columns"]
