"""Canonical tables of reliab as column specifications, validated once at the boundary.

Every table that crosses a module boundary (``signals``, ``jobs``, ``interruptions``,
``exposure``, ``telemetry``, ``failures`` (failure records: unit, start, repair) and the ingest bookkeeping tables ``quarantine`` and
``accounting``) is described here as a tuple of :class:`Column`.  :func:`validate` checks a
frame against its spec and reports *every* problem in one :class:`~reliab.errors.SchemaError`
(column, check, count, example).  :func:`conform` casts a frame to the declared dtypes.

Conventions: timestamps are tz-aware UTC, durations are float hours,
units are in column names.  Every ``string`` column that :func:`conform`, :func:`empty` or
:func:`read_parquet` hands out is backed by Arrow (:data:`STRING`, whose name is still
``"string"``): one buffer per column instead of one Python object per value, which keeps a
large signals table small.  :func:`validate` accepts either backing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from reliab._rowcheck import TIME_RANGE, bad_time, conform_rows, frame_of, safe_repr
from reliab._tables import (
    ACCOUNTING,
    COMPONENTS,
    EXPOSURE,
    FAILURES,
    INTERRUPTIONS,
    JOBS,
    LIFETIMES,
    PY_STRING,
    QUARANTINE,
    SEVERITIES,
    SIGNALS,
    STRING,
    TABLES,
    TELEMETRY,
    TELEMETRY_UNITS,
    UTC,
    Column,
    as_string,
    conform,
    dtype_of,
    empty,
    empty_view,
)
from reliab.errors import SchemaError

#: Parquet metadata key listing the columns stored as ``surrogateescape`` bytes
_SURROGATE_KEY = b"reliab.surrogateescape"


def to_arrow(df: pd.DataFrame) -> Any:
    """``df`` as a ``pyarrow.Table``; text columns with lone surrogates become binary.

    Such a column is stored as its ``surrogateescape``-encoded bytes (the original file
    name bytes) and listed in the schema metadata, so :func:`from_arrow` restores it exactly.
    """
    import json

    import pyarrow as pa

    try:
        return pa.Table.from_pandas(df, preserve_index=False)
    except UnicodeEncodeError:
        pass
    escaped = []
    out = df.copy()
    for name in df.columns:
        s = df[name]
        if s.dtype == object or (isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "python"):
            try:
                pa.array(s.astype(object), from_pandas=True)
            except (UnicodeEncodeError, pa.ArrowException):
                out[name] = s.astype(object).map(
                    lambda v: v.encode("utf-8", "surrogateescape") if isinstance(v, str) else None)
                escaped.append(name)
    table = pa.Table.from_pandas(out, preserve_index=False)
    meta = {**(table.schema.metadata or {}), _SURROGATE_KEY: json.dumps(escaped).encode()}
    return table.replace_schema_metadata(meta)


def from_arrow(table: Any) -> pd.DataFrame:
    """A ``pyarrow.Table`` from :func:`to_arrow` (or any) back to pandas, escaped text restored."""
    import json

    df = table.to_pandas()
    for name in json.loads((table.schema.metadata or {}).get(_SURROGATE_KEY, b"[]")):
        df[name] = df[name].map(lambda v: v.decode("utf-8", "surrogateescape") if v is not None else pd.NA,
                                na_action=None).astype(PY_STRING)
    return df


def _problems(df: pd.DataFrame, columns: tuple[Column, ...]) -> list[tuple]:
    problems: list[tuple] = []
    for col in columns:
        if col.name not in df.columns:
            problems.append((col.name, "present", len(df), None))
            continue
        s = df[col.name]
        if str(s.dtype) != col.dtype:
            problems.append((col.name, f"dtype == {col.dtype}", len(s), str(s.dtype)))
            continue
        na = s.isna()
        if not col.nullable and na.any():
            problems.append((col.name, "no missing values", int(na.sum()), None))
        if col.check is not None and len(s):
            present = s[~na] if na.any() else s  # no copy of a column without missing values
            ok = col.check(present)
            bad = ~ok.fillna(False).astype(bool)
            if bad.any():
                name = getattr(col.check, "__name__", "check").lstrip("_")
                problems.append((col.name, f"value check {name}", int(bad.sum()), present[bad].iloc[0]))
    return problems


def _telemetry_problems(df: pd.DataFrame) -> list[tuple]:
    problems = []
    for name in df.columns:
        if name in ("time", "host", "gpu") or name.startswith("_"):
            continue
        if not any(name.endswith(u) for u in TELEMETRY_UNITS) and name not in ("phase", "source", "origin", "pstate"):
            problems.append((name, "unit suffix in name", len(df), name))
        elif name not in ("phase", "source", "origin") and not pd.api.types.is_numeric_dtype(df[name]):
            problems.append((name, "numeric dtype", len(df), str(df[name].dtype)))
    return problems


def validate(df: pd.DataFrame, table: str) -> pd.DataFrame:
    """Return ``df`` unchanged if it matches the spec of ``table``; else raise once.

    Raises
    ------
    SchemaError
        With a ``problems`` frame (column, check, n_failing, example) listing every failure.
    """
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
    problems = _problems(df, TABLES[table])
    if table == "telemetry":
        problems += _telemetry_problems(df)
    if problems:
        frame = pd.DataFrame(problems, columns=["column", "check", "n_failing", "example"])
        raise SchemaError(table, frame)
    return df


def describe(table: str) -> pd.DataFrame:
    """The spec of ``table`` as a frame (for docs and reports)."""
    rows = [(c.name, c.dtype, c.nullable, c.doc) for c in TABLES[table]]
    return pd.DataFrame(rows, columns=["column", "dtype", "nullable", "doc"])


def write_parquet(df: pd.DataFrame, path: str, table: str, *, check: bool = True) -> None:
    """Validate and write a canonical table to Parquet (dtypes and UTC kept).

    Text that Arrow cannot hold (file names of non-UTF-8 bytes) is stored as bytes and
    restored by :func:`read_parquet` (see :func:`to_arrow`).  ``check=False`` skips the
    validation, for rows of a table the caller validated whole.
    """
    if check:
        validate(df, table)
    try:
        df.to_parquet(path, index=False)
    except UnicodeEncodeError:
        import pyarrow.parquet as pq

        pq.write_table(to_arrow(df), path)


def read_parquet(path: str, table: str) -> pd.DataFrame:
    """Read a canonical table from Parquet and validate it (``string`` columns as :data:`STRING`)."""
    import pyarrow.parquet as pq

    return from_parquet_arrow(pq.read_table(path), table)


def from_parquet_arrow(arrow: Any, table: str) -> pd.DataFrame:
    """The validated table of ``arrow``, read from a file of :func:`write_parquet` (or rows of such files).

    Declared ``string`` columns stored as Arrow text become :data:`STRING` directly: through
    ``to_pandas`` they were one Python string per cell first (~540 bytes a signal row).
    """
    import pyarrow as pa

    names = arrow.column_names
    text = {col.name for col in TABLES[table] if col.dtype == "string" and col.name in names
            and (pa.types.is_string(arrow.schema.field(col.name).type)
                 or pa.types.is_large_string(arrow.schema.field(col.name).type))}
    df = from_arrow(arrow.drop_columns(sorted(text)) if text else arrow)
    for at, name in enumerate(names):  # in place, at its position: no copy of the other columns
        if name in text:
            df.insert(at, name, pd.Series(STRING.__from_arrow__(arrow[name]), index=df.index, copy=False))
    for col in TABLES[table]:
        if col.name in df.columns and col.dtype == "string" and df[col.name].dtype != STRING:
            df[col.name] = as_string(df[col.name])
    return validate(df, table)


__all__ = ["Column", "STRING", "TABLES", "SIGNALS", "JOBS", "INTERRUPTIONS", "EXPOSURE", "TELEMETRY", "FAILURES",
           "QUARANTINE", "ACCOUNTING", "dtype_of", "empty", "conform", "conform_rows", "frame_of", "safe_repr",
           "validate", "describe", "write_parquet", "read_parquet", "from_parquet_arrow", "to_arrow", "from_arrow", "PY_STRING",
           "UTC", "SEVERITIES", "COMPONENTS", "LIFETIMES", "TELEMETRY_UNITS", "TIME_RANGE", "bad_time", "empty_view",
           "as_string"]

