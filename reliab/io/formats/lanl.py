"""LANL failure records 1996–2005 (LA-UR-05-7318): fleet history from HPC centres.

Each record is a node outage with its start, end, downtime and a blame column (Facilities,
Hardware, Human Error, Network, Undetermined, Software) holding the sub-cause, as released
by Los Alamos and analysed by Schroeder & Gibson, "A large-scale study of failures in
high-performance computing systems" (DSN 2006).  Records become signals ``lanl:<blame>``
whose message is ``"<Blame>: <sub-cause>"``; the taxonomy maps them onto reliab's
categories.  :func:`read_lanl` returns the outages as a plain table for survival work.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from reliab import schema
from reliab.errors import ParseError
from reliab.io._files import open_binary
from reliab.io._prefilter import MAX_LINE_BYTES, Terminators, all_lines
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser

BLAME_COLUMNS = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")
_REQUIRED = ("System", "nodenumz", "Prob Started", "Prob Fixed", "Down Time")
_TIME_FORMAT = "%m/%d/%Y %H:%M"


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    if not first_lines:
        return 0.0
    header = first_lines[0]
    return 0.97 if all(c in header for c in ("Prob Started", "Prob Fixed", "nodenumz")) else 0.0


#: records converted at a time (the file is streamed, never held whole)
CHUNK_RECORDS = 50_000


@dataclass
class _Scan:
    """Streaming pass over a LANL file: record chunks, plus the lines that are not records."""

    path: str
    quarantine: Quarantine
    strict: bool = False
    header: list[str] | None = None
    lines: int = 0

    def bad(self, lineno: int, reason: str, text: str | None) -> None:
        if self.strict:
            raise ParseError(f"{reason} at {self.path}:{lineno}")
        self.quarantine.add(lineno, reason, text)

    def chunks(self) -> Iterator[pd.DataFrame]:
        """Frames of up to CHUNK_RECORDS records (text cells, plus ``lineno``).

        Blank lines are irrelevant; a line with another number of fields than the header,
        or longer than ``MAX_LINE_BYTES``, is malformed.  Lines end at ``\n``, ``\r\n`` or
        ``\r``.

        Raises
        ------
        ParseError
            If the header lacks one of the required columns.
        """
        counter = [0]
        numbers: list[int] = []
        cells: list[list[str]] = []
        given = False
        with Terminators(open_binary(self.path)) as fh:
            for lineno, raw, size in all_lines(fh, counter, skip_blank=True):  # type: ignore[arg-type]
                self.lines = lineno
                if size > MAX_LINE_BYTES:
                    self.bad(lineno, f"line of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit",
                             raw[:200].decode("utf-8", "replace"))
                    continue
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not text.strip():
                    continue
                try:
                    row = next(csv.reader([text]), [])
                except csv.Error as exc:
                    self.bad(lineno, f"CSV error: {exc}", text[:2000])
                    continue
                if self.header is None:
                    self.header = [c.strip() for c in row]
                    missing = [c for c in _REQUIRED if c not in self.header]
                    if missing:
                        raise ParseError(f"LANL file without column(s) {missing}")
                    continue
                if len(row) != len(self.header):
                    self.bad(lineno, f"{len(row)} fields for a {len(self.header)}-column header", text[:2000])
                    continue
                numbers.append(lineno)
                cells.append(row)
                if len(cells) >= CHUNK_RECORDS:
                    yield self._frame(numbers, cells)
                    numbers, cells, given = [], [], True
        self.lines = counter[0]
        if cells or not given:
            yield self._frame(numbers, cells)

    def _frame(self, numbers: list[int], cells: list[list[str]]) -> pd.DataFrame:
        names = self.header or list(_REQUIRED)
        df = (pd.DataFrame(cells, columns=names, dtype=str) if cells
              else pd.DataFrame({c: pd.Series(dtype=str) for c in names}))
        df["lineno"] = np.asarray(numbers, dtype=np.int64)
        return df


def _blame(df: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    blame = pd.Series(pd.NA, index=df.index, dtype="string")
    sub = pd.Series(pd.NA, index=df.index, dtype="string")
    for col in BLAME_COLUMNS:
        if col not in df.columns:
            continue
        has = df[col].str.strip().ne("") & blame.isna()
        blame[has] = col
        sub[has] = df.loc[has, col].str.strip()
    # 453 records of the release name no blame at all: they are outages all the same
    none = blame.isna()
    blame[none] = "Unrecorded"
    sub[none] = "no root cause recorded"
    return blame, sub


def _start(df: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_datetime(df[column].str.strip(), format=_TIME_FORMAT, errors="coerce", utc=True)


def read_lanl(path: str | Path) -> pd.DataFrame:
    """LANL outages as a table: system, node, start, end (UTC as recorded), downtime_h, blame.

    Returns
    -------
    DataFrame
        Columns ``system``, ``node``, ``host``, ``start``, ``end``, ``downtime_h``, ``blame``,
        ``cause``, ``purpose``, ``lineno``; rows whose start cannot be read are dropped here
        (the registered reader quarantines them instead).

    Raises
    ------
    ParseError
        If the header lacks a required column.
    """
    scan = _Scan(str(path), Quarantine(str(path), "lanl"))
    parts = []
    for df in scan.chunks():
        blame, sub = _blame(df)
        out = pd.DataFrame({
            "system": df["System"].str.strip(),
            "node": df["nodenumz"].str.strip(),
            "host": "lanl-sys" + df["System"].str.strip() + "-n" + df["nodenumz"].str.strip(),
            "start": _start(df, "Prob Started"), "end": _start(df, "Prob Fixed"),
            "downtime_h": pd.to_numeric(df["Down Time"], errors="coerce") / 60.0,
            "blame": blame, "cause": sub,
            "purpose": df.get("purpose", pd.Series("", index=df.index)).str.strip(),
            "lineno": df["lineno"],
        })
        parts.append(out[out["start"].notna()])
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)


def _failures(df: pd.DataFrame, path: str, ok: np.ndarray, host: pd.Series, blame: pd.Series,
              sub: pd.Series, start: pd.Series) -> pd.DataFrame:
    """The chunk's records as rows of the canonical ``failures`` table.

    The repair time is the release's ``Down Time`` (minutes, as recorded: it follows local
    clock changes that ``Prob Fixed - Prob Started`` does not); ``system_units`` is the
    ``nodes`` column (nodes in the system).  Category and component are left empty: the taxonomy
    gives them (:func:`reliab.taxonomy.classify_failures`, which :func:`reliab.ingest` applies),
    from the signals of the same records.
    """
    down = pd.to_numeric(df["Down Time"], errors="coerce") / 60.0
    units = pd.to_numeric(df["nodes"], errors="coerce") if "nodes" in df.columns else pd.Series(np.nan, index=df.index)
    out = pd.DataFrame({
        "unit": host[ok], "system": df["System"].str.strip()[ok], "start": start[ok],
        "end": _start(df, "Prob Fixed")[ok], "repair_h": down[ok].where(down[ok] >= 0),
        "cause": blame[ok], "detail": sub[ok], "category": None, "component": None, "severity": "error",
        "system_units": units[ok].where(units[ok] >= 0).round().astype("Int64"),
        "origin": [f"{path}:{n}" for n in df["lineno"].to_numpy()[ok]],
    })
    frame, _ = schema.conform_rows(out, "failures")
    return frame


def _signals(df: pd.DataFrame, path: str, scan: _Scan) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Signals and failures of one chunk; records with an unreadable start are quarantined."""
    blame, sub = _blame(df)
    start = _start(df, "Prob Started")
    bad = start.isna().to_numpy()
    for i in np.flatnonzero(bad):
        scan.bad(int(df["lineno"].iat[i]), "unreadable 'Prob Started' (want mm/dd/yyyy hh:mm, 1677-2262)",
                 ",".join(df.iloc[i, :-1].tolist())[:500])
    ok = ~bad
    host = "lanl-sys" + df["System"].str.strip() + "-n" + df["nodenumz"].str.strip()
    signals = pd.DataFrame({
        "time": start[ok], "host": host[ok], "gpu": None, "job_id": None, "source": "lanl",
        "signal": "lanl:" + blame[ok].str.lower().str.replace(" ", "_"),
        "severity": "error", "message": blame[ok] + ": " + sub[ok],
        "origin": [f"{path}:{n}" for n in df["lineno"].to_numpy()[ok]],
    })
    frame, refused = schema.conform_rows(signals, "signals")
    lines = df["lineno"].to_numpy()[ok]
    for i, why in sorted(refused.items()):
        scan.bad(int(lines[i]), why, None)
    failures = _failures(df, path, ok, host, blame, sub, start)
    if refused:  # the same records as the signals kept
        kept = set(frame["origin"].tolist())
        failures = failures[failures["origin"].isin(kept)].reset_index(drop=True)
    return frame, failures


@register_parser("lanl", sniff=_sniff, table="signals")
def read_lanl_signals(path: str, *, strict: bool = False) -> FileResult:
    """LANL failure/interrupt records (LA-UR-05-7318 CSV) -> ``lanl:<blame>`` signals.

    Accounting: the header line and blank lines are irrelevant, every record is parsed or
    malformed (a start time that is not ``mm/dd/yyyy hh:mm``, a wrong number of fields).
    Records with no blame column filled become ``lanl:unrecorded``.  Each record is also a
    row of the ``failures`` table (unit, start, end, repair time, cause; its category and
    component from :func:`reliab.taxonomy.classify_failures`).  The file is streamed
    in chunks of :data:`CHUNK_RECORDS` records.
    """
    scan = _Scan(str(path), Quarantine(str(path), "lanl"), strict=strict)
    pairs = [_signals(df, str(path), scan) for df in scan.chunks()]
    frames = [f for f, _ in pairs if len(f)]
    signals = (schema.conform(pd.concat(frames, ignore_index=True), "signals") if len(frames) > 1
               else frames[0] if frames else schema.empty("signals"))
    records = [f for _, f in pairs if len(f)]
    failures = (schema.conform(pd.concat(records, ignore_index=True), "failures") if len(records) > 1
                else records[0] if records else schema.empty("failures"))
    malformed = scan.quarantine.count
    return FileResult(path=str(path), source="lanl", lines=scan.lines, parsed=len(signals),
                      irrelevant=scan.lines - len(signals) - malformed, malformed=malformed,
                      tables={"signals": signals, "failures": failures}, quarantine=scan.quarantine.frame())
