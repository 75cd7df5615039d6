"""Canonical tables of reliab as column specifications, validated once at the boundary.

Every table that crosses a module boundary (``signals``, ``jobs``, ``interruptions``,
``exposure``, ``telemetry`` and the ingest bookkeeping tables ``quarantine`` and
``accounting``) is described here as a tuple of :class:`Column`.  :func:`validate` checks a
frame against its spec and reports *every* problem in one :class:`~reliab.errors.SchemaError`
(column, check, count, example).  :func:`conform` casts a frame to the declared dtypes.

Conventions (ARCHITECTURE.md): timestamps are tz-aware UTC, durations are float hours,
units are in column names.  Every ``string`` column that :func:`conform`, :func:`empty` or
:func:`read_parquet` hands out is backed by Arrow (:data:`STRING`, whose name is still
``"string"``): one buffer per column instead of one Python object per value, which keeps a
large signals table small.  :func:`validate` accepts either backing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reliab.errors import SchemaError

UTC = "datetime64[ns, UTC]"
#: the pandas dtype of every declared ``string`` column (``str(STRING) == "string"``)
STRING = pd.StringDtype("pyarrow")
SEVERITIES = ("info", "warning", "error", "critical")
COMPONENTS = ("GPU", "Host", "Network", "Dependency", "Unplanned Maintenance", "Unknown", "Planned")


@dataclass(frozen=True)
class Column:
    """One column of a canonical table."""

    name: str
    dtype: str
    nullable: bool = False
    check: Callable[[pd.Series], pd.Series] | None = None
    doc: str = ""


def _nonneg(s: pd.Series) -> pd.Series:
    return s >= 0


def _in(values: tuple[str, ...]) -> Callable[[pd.Series], pd.Series]:
    def check(s: pd.Series) -> pd.Series:
        return s.isin(values) | s.isna()

    check.__name__ = f"in {values}"
    return check


def _nonempty(s: pd.Series) -> pd.Series:
    return s.str.len() > 0


SIGNALS = (
    Column("time", UTC, doc="when the evidence was logged (UTC)"),
    Column("host", "string", nullable=True, doc="host name, when the line names one"),
    Column("gpu", "string", nullable=True, doc="GPU index or PCI bus id, when known"),
    Column("job_id", "string", nullable=True, doc="scheduler job id, when the source names one"),
    Column("source", "string", doc="parser that produced the row"),
    Column("signal", "string", check=_nonempty, doc="normalized key, e.g. 'xid:79'"),
    Column("severity", "string", check=_in(SEVERITIES), doc="info, warning, error, critical"),
    Column("message", "string", nullable=True, doc="free text of the evidence"),
    Column("origin", "string", doc="file:line the row was parsed from"),
)

JOBS = (
    Column("job_id", "string", doc="scheduler job id (JobID, steps excluded)"),
    Column("name", "string", nullable=True),
    Column("user", "string", nullable=True),
    Column("partition", "string", nullable=True),
    Column("state", "string", doc="normalized end state, e.g. NODE_FAIL, CANCELLED"),
    Column("state_raw", "string", nullable=True, doc="state as printed, e.g. 'CANCELLED by 0'"),
    Column("exit_code", "string", nullable=True, doc="'exit:signal'"),
    Column("submit", UTC, nullable=True),
    Column("start", UTC, nullable=True),
    Column("end", UTC, nullable=True),
    Column("nnodes", "Int64", nullable=True, check=_nonneg),
    Column("ngpus", "Int64", nullable=True, check=_nonneg),
    Column("nodelist", "string", nullable=True, doc="Slurm hostlist, e.g. node[0001-0016]"),
    Column("failed_node", "string", nullable=True),
    Column("restarts", "Int64", nullable=True, check=_nonneg),
    Column("origin", "string"),
)

INTERRUPTIONS = (
    Column("time", UTC, doc="when the job was interrupted (job end)"),
    Column("job_id", "string"),
    Column("hosts", "string", nullable=True, doc="comma-separated hosts of the root-cause evidence"),
    Column("gpu", "string", nullable=True, doc="GPU of the root-cause evidence, when known"),
    Column("planned", "bool"),
    Column("category", "string", doc="Table-5-level category, 'Planned' or 'Unclassified'"),
    Column("component", "string", check=_in(COMPONENTS)),
    Column("root_signal", "string", nullable=True, doc="signal key that decided the category"),
    Column("evidence", "string", nullable=True, doc="origins (file:line) of all evidence, ';'-joined"),
    Column("attribution", "string", doc="which rule decided, e.g. 'rule:xid-79'"),
    Column("evidence_kind", "string", nullable=True, check=_in(("hardware", "other", "nccl", "none")),
           doc="strongest evidence: hardware, other (software, dependency, operator), nccl only, none"),
    Column("job_state", "string", nullable=True),
    Column("downtime_h", "float64", nullable=True, check=_nonneg),
    Column("lost_gpu_hours", "float64", nullable=True, check=_nonneg),
)

EXPOSURE = (
    Column("unit", "string", doc="unit id, e.g. node0001/gpu3"),
    Column("kind", "string", doc="gpu, node, link, ..."),
    Column("entry", UTC, doc="start of the period at risk"),
    Column("exit", UTC, doc="end of the period at risk"),
    Column("hours", "float64", check=_nonneg),
    Column("failed", "bool", doc="the period ended in a failure"),
    Column("truncated", "bool", doc="unit was in service before the window (left truncation)"),
)

TELEMETRY = (
    Column("time", UTC),
    Column("host", "string"),
    Column("gpu", "string", nullable=True),
)

QUARANTINE = (
    Column("path", "string"),
    Column("lineno", "Int64", check=_nonneg),
    Column("source", "string", nullable=True),
    Column("reason", "string"),
    Column("text", "string", nullable=True),
)

ACCOUNTING = (
    Column("path", "string"),
    Column("source", "string"),
    Column("lines", "int64", check=_nonneg),
    Column("parsed", "int64", check=_nonneg),
    Column("irrelevant", "int64", check=_nonneg),
    Column("malformed", "int64", check=_nonneg),
    Column("reason", "string", nullable=True, doc="why a file was set aside (not read), else NA"),
)

TABLES: dict[str, tuple[Column, ...]] = {
    "signals": SIGNALS,
    "jobs": JOBS,
    "interruptions": INTERRUPTIONS,
    "user_failures": INTERRUPTIONS,  # FAILED jobs the fleet policy sets apart (same columns)
    "exposure": EXPOSURE,
    "telemetry": TELEMETRY,
    "quarantine": QUARANTINE,
    "accounting": ACCOUNTING,
}

# telemetry is open-ended: measurement columns must be numeric and carry a unit suffix
TELEMETRY_UNITS = ("_c", "_w", "_mhz", "_pct", "_j", "_mj", "_count", "_ms", "_s", "_gbps",
                   "_mib", "_gib", "_bytes", "_tflops", "_per_s", "_hz", "_v", "_a", "_flag", "_mbps", "_us", "_code", "_raw", "_mw", "_kw")


_EMPTY: dict[str, pd.DataFrame] = {}


def dtype_of(col: Column) -> str | pd.StringDtype:
    """The pandas dtype :func:`conform` gives ``col``: :data:`STRING` for ``"string"``."""
    return STRING if col.dtype == "string" else col.dtype


def empty(table: str) -> pd.DataFrame:
    """An empty frame with the columns and dtypes of ``table`` (a fresh copy each call)."""
    if table not in _EMPTY:
        _EMPTY[table] = pd.DataFrame({c.name: pd.Series(dtype=dtype_of(c)) for c in TABLES[table]})
    return _EMPTY[table].copy()


def conform(df: pd.DataFrame, table: str) -> pd.DataFrame:
    """Return a copy of ``df`` with the declared columns cast to their dtypes.

    Missing nullable columns are added as all-NA; extra columns are kept at the end.
    Naive timestamps are taken to be UTC; aware ones are converted to UTC.  ``string``
    columns become :data:`STRING` (Arrow-backed) whatever their backing was; a column that
    already has its dtype is copied as it is (an Arrow array is immutable: its copy shares
    the buffers).
    """
    out = df.copy()
    for col in TABLES[table]:
        dtype = dtype_of(col)
        if col.name not in out.columns:
            if col.nullable:
                out[col.name] = pd.Series(pd.NA, index=out.index, dtype=dtype if col.dtype != UTC else "object")
            else:
                continue
        s = out[col.name]
        if col.dtype == UTC:
            s = pd.to_datetime(s, utc=True, format="mixed") if not isinstance(s.dtype, pd.DatetimeTZDtype) else s.dt.tz_convert("UTC")
            out[col.name] = s.astype(UTC)
        elif s.dtype != dtype:
            out[col.name] = _as_string(s) if col.dtype == "string" else s.astype(dtype)
    names = [c.name for c in TABLES[table]]
    return out[[n for n in names if n in out.columns] + [c for c in out.columns if c not in names]]


#: Python-backed ``string``: holds text Arrow cannot (lone surrogates, see :func:`_as_string`)
PY_STRING = pd.StringDtype("python")
#: Parquet metadata key listing the columns stored as ``surrogateescape`` bytes
_SURROGATE_KEY = b"reliab.surrogateescape"


def _as_string(s: pd.Series) -> pd.Series:
    """``s`` as :data:`STRING`, or as :data:`PY_STRING` if it holds lone surrogates.

    A file name of bytes that are not UTF-8 reaches Python as ``surrogateescape`` text
    (:func:`os.fsdecode`), which ``open()`` takes back; Arrow refuses it, so a column that
    holds such a name (a path, an origin) keeps Python storage and the name stays exact.
    """
    try:
        return s.astype(STRING)
    except UnicodeEncodeError:
        return s.astype(PY_STRING)


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
            ok = col.check(s[~na])
            bad = ~ok.fillna(False).astype(bool)
            if bad.any():
                name = getattr(col.check, "__name__", "check").lstrip("_")
                problems.append((col.name, f"value check {name}", int(bad.sum()), s[~na][bad].iloc[0]))
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


def write_parquet(df: pd.DataFrame, path: str, table: str) -> None:
    """Validate and write a canonical table to Parquet (dtypes and UTC kept).

    Text that Arrow cannot hold (file names of non-UTF-8 bytes) is stored as bytes and
    restored by :func:`read_parquet` (see :func:`to_arrow`).
    """
    validate(df, table)
    try:
        df.to_parquet(path, index=False)
    except UnicodeEncodeError:
        import pyarrow.parquet as pq

        pq.write_table(to_arrow(df), path)


def read_parquet(path: str, table: str) -> pd.DataFrame:
    """Read a canonical table from Parquet and validate it (``string`` columns as :data:`STRING`)."""
    import pyarrow.parquet as pq

    df = from_arrow(pq.read_table(path))
    for col in TABLES[table]:
        if col.name in df.columns and col.dtype == "string" and df[col.name].dtype != STRING:
            df[col.name] = _as_string(df[col.name])
    return validate(df, table)


__all__ = ["Column", "STRING", "TABLES", "SIGNALS", "JOBS", "INTERRUPTIONS", "EXPOSURE", "TELEMETRY",
           "QUARANTINE", "ACCOUNTING", "dtype_of", "empty", "conform", "validate", "describe",
           "write_parquet", "read_parquet", "to_arrow", "from_arrow", "PY_STRING"]
