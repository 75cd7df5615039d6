"""Where each canonical table came from: its sources and the time window it covers.

One row per (table, source): a live source is named by its location without the query
(``slurm://``, ``prometheus://host:9090``) and the window it was asked for (the query
parameters ``start``/``end`` of its accounting rows); files by their folder and format.  Rows
of ``signals`` and ``jobs`` are traced through their ``origin`` (``location:line``); the
telemetry table carries no origin, so it is attributed to the telemetry sources of the
accounting as a whole.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import parse_qs, urlsplit

import pandas as pd

from reliab.report.formatting import DASH, fmt_int

#: accounting sources whose rows feed the telemetry table (besides registered telemetry parsers)
_LIVE_TELEMETRY = ("prometheus",)


def _root(path: str, folder_root: str) -> tuple[str, str, str]:
    """(label, requested start, requested end) of one accounting path."""
    parts = urlsplit(path) if "://" in path else None
    if parts is not None and parts.scheme:
        q = parse_qs(parts.query)
        return f"{parts.scheme}://{parts.netloc}{parts.path}", q.get("start", [""])[0], q.get("end", [""])[0]
    rel = os.path.relpath(path, folder_root) if folder_root else path
    return (os.path.dirname(rel) or ".") + "/", "", ""


def _window(lo: pd.Timestamp | None, hi: pd.Timestamp | None) -> str:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return DASH
    return f"{lo:%Y-%m-%d %H:%M} – {hi:%Y-%m-%d %H:%M} UTC"


def _telemetry_sources() -> set[str]:
    from reliab.io import parsers

    return {p.name for p in parsers() if p.table == "telemetry"} | set(_LIVE_TELEMETRY)


def origin_spans(df: pd.DataFrame, time_cols: tuple[str, str]) -> pd.DataFrame:
    """Per input file named in ``origin`` (``location:line``): ``path``, ``rows``, ``lo``, ``hi``.

    ``lo`` is the earliest ``time_cols[0]``, ``hi`` the latest ``time_cols[1]`` of its rows.
    """
    path = df["origin"].astype(str).str.rsplit(":", n=1).str[0]
    both = pd.DataFrame({"path": path, "lo": pd.to_datetime(df[time_cols[0]], utc=True),
                         "hi": pd.to_datetime(df[time_cols[1]], utc=True)}).groupby("path", sort=False)
    return pd.DataFrame({"rows": both.size(), "lo": both["lo"].min(), "hi": both["hi"].max()}).reset_index()


def provenance(accounting: pd.DataFrame, tables: dict[str, pd.DataFrame | None],
               spans: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Per table and source: rows, data window, and the window a live source was asked for.

    ``spans`` gives, for a table not held whole, its :func:`origin_spans` instead.
    """
    acc = accounting if accounting is not None else pd.DataFrame(columns=["path", "source"])
    paths = [str(p) for p in acc["path"]]
    files = [p for p in paths if "://" not in p]
    folder_root = os.path.commonpath(files) if len(files) > 1 else os.path.dirname(files[0]) if files else ""
    info = {p: (*_root(p, folder_root), str(s)) for p, s in zip(paths, acc["source"], strict=True)}
    rows: list[dict[str, str]] = []
    for name, time_cols in (("signals", ("time", "time")), ("jobs", ("start", "end"))):
        per_file = (spans or {}).get(name)
        if per_file is None:
            df = tables.get(name)
            if df is None or not len(df) or "origin" not in df:
                continue
            per_file = origin_spans(df, time_cols)
        if not len(per_file):
            continue
        path = per_file["path"]
        labels = {p: (f"{info[p][0]} ({info[p][3]})" if p in info else p) for p in path.unique()}
        key = path.map(labels)
        for label, idx in key.groupby(key, sort=True).groups.items():
            asked = sorted({(info[p][1], info[p][2]) for p in set(path[idx]) if p in info and info[p][1]})
            rows.append({"Table": name, "From": label, "Rows": fmt_int(int(per_file["rows"][idx].sum())),
                         "Window of the data": _window(per_file["lo"][idx].min(), per_file["hi"][idx].max()),
                         "Window asked": f"{asked[0][0]} – {asked[-1][1]}" if asked else DASH})
    tel = tables.get("telemetry")
    if tel is not None and len(tel):
        wanted = _telemetry_sources()
        src = sorted({f"{info[p][0]} ({info[p][3]})" for p in paths if info[p][3] in wanted})
        asked = sorted({(info[p][1], info[p][2]) for p in paths if info[p][3] in wanted and info[p][1]})
        t = pd.to_datetime(tel["time"], utc=True)
        rows.append({"Table": "telemetry", "From": "; ".join(src) or DASH, "Rows": fmt_int(len(tel)),
                     "Window of the data": _window(t.min(), t.max()),
                     "Window asked": f"{asked[0][0]} – {asked[-1][1]}" if asked else DASH})
    return pd.DataFrame(rows, columns=["Table", "From", "Rows", "Window of the data", "Window asked"])
