"""Telemetry already stored as Parquet (a site's own exports), with a column mapping.

The same naming rules as the generic CSV reader apply (``time``/``timestamp`` or epoch
``t_unix``; ``host``; ``gpu``; measurement columns need a unit suffix or a ``columns=``
mapping).  Accounting counts *rows* as lines: a row whose time cannot be read is malformed
(quarantined with its 1-based row number); the rest are parsed.  The file is read in
batches, never whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab import schema
from reliab.errors import ParseError
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.telemetry.delimited import _generic_name


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    raw = getattr(first_lines, "raw", b"")  # the driver's Head carries the first bytes
    if len(raw) >= 4:
        return 0.95 if raw[:4] == b"PAR1" else 0.0
    try:
        with open(path, "rb") as fh:
            return 0.95 if fh.read(4) == b"PAR1" else 0.0
    except OSError:
        return 0.0


#: rows converted at a time
BATCH_ROWS = 65_536
#: a row group whose metadata states more uncompressed bytes than this is refused
MAX_ROW_GROUP_BYTES = 256 << 20
#: epoch seconds a ``datetime64[ns]`` holds (about 2262-04-11)
_EPOCH_LIMIT = 9.2e9


def _arrow_times(col: Any) -> pd.Series | None:
    """A timestamp/date column (pyarrow) as UTC ns; out-of-range values null (never wrapped)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_date(col.type):
        col = pc.cast(col, pa.timestamp("s"))
    if not pa.types.is_timestamp(col.type):
        return None
    unit, tz = col.type.unit, col.type.tz
    lo, hi = (pa.scalar(int(t.as_unit(unit).asm8.view("i8")), pa.int64()) for t in schema.TIME_RANGE)
    raw = pc.cast(col, pa.int64())
    inside = pc.and_(pc.greater_equal(raw, lo), pc.less_equal(raw, hi))
    safe = pc.if_else(inside, col, pa.scalar(None, col.type))
    ns = pc.cast(safe, pa.timestamp("ns", tz=tz))
    values = ns.to_pandas()
    return values.dt.tz_convert("UTC") if tz else values.dt.tz_localize("UTC")


def _times(values: pd.Series, epoch: bool) -> pd.Series:
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values):
        return values.dt.tz_localize("UTC")
    if epoch or pd.api.types.is_numeric_dtype(values):
        seconds = pd.to_numeric(values, errors="coerce").astype("float64")
        seconds = seconds.where(seconds.abs() < _EPOCH_LIMIT)  # never wrapped past 2262
        return pd.to_datetime(seconds * 1e6, unit="us", utc=True, errors="coerce")
    return pd.to_datetime(values.astype("string"), format="ISO8601", utc=True, errors="coerce")


def _open(path: str) -> Any:
    """The Parquet file, refused if a row group would not fit the memory budget.

    Raises
    ------
    ParseError
        If pyarrow cannot read the footer, or a row group states more than
        :data:`MAX_ROW_GROUP_BYTES` uncompressed bytes.
    """
    import pyarrow.parquet as pq  # (imported here: reliab.io imports fast)

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a broken file
        raise ParseError(f"unreadable Parquet file: {exc}") from None
    meta = pf.metadata
    for i in range(meta.num_row_groups):
        size = meta.row_group(i).total_byte_size
        if size > MAX_ROW_GROUP_BYTES:
            raise ParseError(f"Parquet row group {i} holds {size} uncompressed bytes, more than the"
                             f" {MAX_ROW_GROUP_BYTES >> 20} MiB read at once; rewrite it with smaller row groups")
    return pf


@register_parser("telemetry_parquet", sniff=_sniff, table="telemetry", lines=False)
def read_telemetry_parquet(path: str, *, columns: Mapping[str, str] | None = None, host: str | None = None,
                           strict: bool = False) -> FileResult:
    """Generic telemetry Parquet file (time, host, gpu, unit-suffixed measurements) -> telemetry.

    Read in batches of :data:`BATCH_ROWS` rows; row groups over :data:`MAX_ROW_GROUP_BYTES`
    (uncompressed, as the footer states) are refused.  A row whose time cannot be read (or
    lies outside 1677-2262), or whose values the table cannot hold (an infinite
    measurement), is malformed.
    """
    pf = _open(str(path))
    rename = _generic_name(columns or {})
    names = {c: rename(str(c)) for c in pf.schema_arrow.names}
    time_col = next((c for c, n in names.items() if n in ("time", "t_unix")), None)
    if time_col is None:
        raise ParseError("no time column (time, timestamp, t_unix) in the Parquet schema")
    host_col = next((c for c, n in names.items() if n == "host"), None)
    gpu_col = next((c for c, n in names.items() if n == "gpu"), None)
    notes = [f"column {col!r} skipped: no unit suffix (map it with columns=)" for col, n in names.items() if n is None]
    wanted = [c for c, n in names.items() if n is not None]
    quarantine = Quarantine(str(path), "telemetry_parquet")
    parts: list[pd.DataFrame] = []
    n = 0
    try:
        batches = pf.iter_batches(batch_size=BATCH_ROWS, columns=wanted)
        for batch in batches:
            base, n = n, n + batch.num_rows
            arrow_time = _arrow_times(batch.column(time_col))
            raw = batch.drop_columns([time_col]).to_pandas()
            out = pd.DataFrame({"time": arrow_time if arrow_time is not None
                                else _times(batch.column(time_col).to_pandas(), names[time_col] == "t_unix")})
            out["host"] = (raw[host_col].astype("string") if host_col is not None
                           else (host or Path(path).name.split(".")[0]))
            out["gpu"] = raw[gpu_col].astype("string") if gpu_col is not None else pd.NA
            for col, name in names.items():
                if name not in (None, "time", "t_unix", "host", "gpu"):
                    out[name] = pd.to_numeric(raw[col], errors="coerce").astype("float64")
            bad = out["time"].isna().to_numpy()
            for r in np.flatnonzero(bad) + base + 1:
                if strict:
                    raise ParseError(f"row {r} has no readable time in {path}")
                quarantine.add(int(r), f"{time_col!r} is not a time (1677-2262)")
            rows = np.flatnonzero(~bad) + base + 1
            frame, refused = schema.conform_rows(out[~bad], "telemetry")
            for pos, why in refused.items():
                if strict:
                    raise ParseError(f"row {rows[pos]}: {why} in {path}")
                quarantine.add(int(rows[pos]), why)
            parts.append(frame)
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - a page that does not decode: rows after it are lost
        quarantine.add(n + 1, f"Parquet data unreadable after row {n}: {type(exc).__name__}: {str(exc)[:200]}")
        n += 1
    frames = [f for f in parts if len(f)]
    frame = (schema.conform(pd.concat(frames, ignore_index=True), "telemetry") if len(frames) > 1
             else frames[0] if frames else schema.empty("telemetry"))
    malformed = quarantine.count
    return FileResult(path=str(path), source="telemetry_parquet", lines=n, parsed=len(frame), irrelevant=n - len(frame) - malformed,
                      malformed=malformed, tables={"telemetry": frame}, quarantine=quarantine.frame(),
                      notes=tuple(notes))
