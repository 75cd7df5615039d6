"""LANL failure records 1996–2005 (LA-UR-05-7318): fleet history from HPC centres.

Each record is a node outage with its start, end, downtime and a blame column (Facilities,
Hardware, Human Error, Network, Undetermined, Software) holding the sub-cause, as released
by Los Alamos and analysed by Schroeder & Gibson, "A large-scale study of failures in
high-performance computing systems" (DSN 2006).  Records become signals ``lanl:<blame>``
whose message is ``"<Blame>: <sub-cause>"``; the taxonomy maps them onto reliab's
categories.  :func:`read_lanl` returns the outages as a plain table for survival work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from reliab import schema
from reliab.errors import ParseError
from reliab.io._files import open_binary
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_parser

BLAME_COLUMNS = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")
_REQUIRED = ("System", "nodenumz", "Prob Started", "Prob Fixed", "Down Time")
_TIME_FORMAT = "%m/%d/%Y %H:%M"


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    if not first_lines:
        return 0.0
    header = first_lines[0]
    return 0.97 if all(c in header for c in ("Prob Started", "Prob Fixed", "nodenumz")) else 0.0


def _load(path: str | Path) -> pd.DataFrame:
    with open_binary(path) as fh:
        df = pd.read_csv(fh, dtype=str, keep_default_na=False, skip_blank_lines=False)
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise ParseError(f"LANL file without column(s) {missing}")
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


def read_lanl(path: str | Path) -> pd.DataFrame:
    """LANL outages as a table: system, node, start, end (UTC as recorded), downtime_h, blame.

    Returns
    -------
    DataFrame
        Columns ``system``, ``node``, ``host``, ``start``, ``end``, ``downtime_h``, ``blame``,
        ``cause``, ``purpose``, ``lineno``; rows whose start cannot be read are dropped here
        (the registered reader quarantines them instead).
    """
    df = _load(path)
    blame, sub = _blame(df)
    start = pd.to_datetime(df["Prob Started"].str.strip(), format=_TIME_FORMAT, errors="coerce", utc=True)
    end = pd.to_datetime(df["Prob Fixed"].str.strip(), format=_TIME_FORMAT, errors="coerce", utc=True)
    out = pd.DataFrame({
        "system": df["System"].str.strip(),
        "node": df["nodenumz"].str.strip(),
        "host": "lanl-sys" + df["System"].str.strip() + "-n" + df["nodenumz"].str.strip(),
        "start": start, "end": end,
        "downtime_h": pd.to_numeric(df["Down Time"], errors="coerce") / 60.0,
        "blame": blame, "cause": sub,
        "purpose": df.get("purpose", pd.Series("", index=df.index)).str.strip(),
        "lineno": np.arange(len(df)) + 2,
    })
    return out[out["start"].notna()].reset_index(drop=True)


@register_parser("lanl", sniff=_sniff, table="signals")
def read_lanl_signals(path: str, *, strict: bool = False) -> FileResult:
    """LANL failure/interrupt records (LA-UR-05-7318 CSV) -> ``lanl:<blame>`` signals.

    Accounting: the header line is irrelevant, every record is parsed or malformed (a start
    time that is not ``mm/dd/yyyy hh:mm``).  Records with no blame column filled become
    ``lanl:unrecorded``.
    """
    df = _load(path)
    blame, sub = _blame(df)
    start = pd.to_datetime(df["Prob Started"].str.strip(), format=_TIME_FORMAT, errors="coerce", utc=True)
    lineno = np.arange(len(df)) + 2
    bad = start.isna()
    if strict and bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ParseError(f"LANL record with unreadable 'Prob Started' at {path}:{lineno[i]}")
    quarantine = [(str(path), int(lineno[i]), "lanl", "unreadable 'Prob Started' (want mm/dd/yyyy hh:mm)",
                   ",".join(df.iloc[i].tolist())[:500]) for i in np.flatnonzero(bad.to_numpy())]
    ok = ~bad
    host = "lanl-sys" + df["System"].str.strip() + "-n" + df["nodenumz"].str.strip()
    signals = pd.DataFrame({
        "time": start[ok], "host": host[ok], "gpu": None, "job_id": None, "source": "lanl",
        "signal": "lanl:" + blame[ok].str.lower().str.replace(" ", "_"),
        "severity": "error", "message": blame[ok] + ": " + sub[ok],
        "origin": [f"{path}:{n}" for n in lineno[ok.to_numpy()]],
    })
    signals = schema.conform(signals, "signals") if len(signals) else schema.empty("signals")
    n_lines = _count_lines(path)
    records = len(df)
    irrelevant = n_lines - records
    return FileResult(path=str(path), source="lanl", lines=n_lines, parsed=int(ok.sum()), irrelevant=irrelevant,
                      malformed=int(bad.sum()), tables={"signals": signals}, quarantine=quarantine_frame(quarantine))


def _count_lines(path: str | Path) -> int:
    n = 0
    last = b"\n"
    with open_binary(path) as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)
