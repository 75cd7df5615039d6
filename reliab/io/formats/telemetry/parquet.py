"""Telemetry already stored as Parquet (a site's own exports), with a column mapping.

The same naming rules as the generic CSV reader apply (``time``/``timestamp`` or epoch
``t_unix``; ``host``; ``gpu``; measurement columns need a unit suffix or a ``columns=``
mapping).  Accounting counts *rows* as lines: a row whose time cannot be read is malformed
(quarantined with its 1-based row number); the rest are parsed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from reliab import schema
from reliab.errors import ParseError
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.telemetry.delimited import _generic_name


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    try:
        with open(path, "rb") as fh:
            return 0.95 if fh.read(4) == b"PAR1" else 0.0
    except OSError:
        return 0.0


def _times(values: pd.Series, epoch: bool) -> pd.Series:
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values):
        return values.dt.tz_localize("UTC")
    if epoch or pd.api.types.is_numeric_dtype(values):
        return pd.to_datetime(pd.to_numeric(values, errors="coerce") * 1e6, unit="us", utc=True, errors="coerce")
    return pd.to_datetime(values.astype("string"), format="ISO8601", utc=True, errors="coerce")


@register_parser("telemetry_parquet", sniff=_sniff, table="telemetry")
def read_telemetry_parquet(path: str, *, columns: Mapping[str, str] | None = None, host: str | None = None,
                           strict: bool = False) -> FileResult:
    """Generic telemetry Parquet file (time, host, gpu, unit-suffixed measurements) -> telemetry."""
    try:
        raw = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise ParseError(f"unreadable Parquet file: {exc}") from None
    rename = _generic_name(columns or {})
    names = {c: rename(str(c)) for c in raw.columns}
    time_col = next((c for c, n in names.items() if n in ("time", "t_unix")), None)
    if time_col is None:
        raise ParseError("no time column (time, timestamp, t_unix) in the Parquet schema")
    out = pd.DataFrame({"time": _times(raw[time_col], names[time_col] == "t_unix")})
    host_col = next((c for c, n in names.items() if n == "host"), None)
    out["host"] = raw[host_col].astype("string") if host_col is not None else (host or Path(path).name.split(".")[0])
    gpu_col = next((c for c, n in names.items() if n == "gpu"), None)
    out["gpu"] = raw[gpu_col].astype("string") if gpu_col is not None else pd.NA
    notes = []
    for col, name in names.items():
        if name in (None, "time", "t_unix", "host", "gpu"):
            if name is None:
                notes.append(f"column {col!r} skipped: no unit suffix (map it with columns=)")
            continue
        out[name] = pd.to_numeric(raw[col], errors="coerce").astype("float64")
    bad = out["time"].isna().to_numpy()
    rows = np.flatnonzero(bad) + 1
    if strict and len(rows):
        raise ParseError(f"row {rows[0]} has no readable time in {path}")
    quarantine = [(str(path), int(r), "telemetry_parquet", f"{time_col!r} is not a time", None) for r in rows]
    frame = schema.conform(out[~bad].reset_index(drop=True), "telemetry")
    n = len(out)
    return FileResult(path=str(path), source="telemetry_parquet", lines=n, parsed=n - len(rows), irrelevant=0,
                      malformed=len(rows), tables={"telemetry": frame}, quarantine=quarantine_frame(quarantine),
                      notes=tuple(notes))
