"""The canonical tables' column specifications, their dtypes and :func:`conform`.

The specifications and conventions are described in :mod:`reliab.schema`, which re-exports
every name here; the row boundary is :mod:`reliab._rowcheck`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reliab._hostnames import HOST_COLUMNS, canonical_hosts

__all__ = ["UTC", "STRING", "SEVERITIES", "COMPONENTS", "Column", "nonempty", "SIGNALS", "JOBS", "INTERRUPTIONS",
           "EXPOSURE", "LIFETIMES", "FAILURES", "TELEMETRY", "QUARANTINE", "ACCOUNTING", "TABLES",
           "TELEMETRY_UNITS", "dtype_of", "empty", "empty_view", "conform", "PY_STRING", "as_string"]

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
    check.values = values  # type: ignore[attr-defined] - read by _arrow_check
    return check


def _nonempty(s: pd.Series) -> pd.Series:
    return s.str.len() > 0


#: the non-empty text and non-negative number checks, for the row boundary and the Arrow fast
#: path (:mod:`reliab.io._rowtable` recognises a column's check by identity with these)
nonempty = _nonempty
nonneg = _nonneg


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

LIFETIMES = (
    Column("serial", "string", check=_nonempty, doc="serial number (or asset id) of the unit"),
    Column("life", "Int64", check=_nonneg, doc="1, 2, ...: the unit's successive lives, by install"),
    Column("kind", "string", nullable=True, doc="gpu, dimm, psu, nic, disk, ..."),
    Column("location", "string", nullable=True, doc="location fields joined by '/', e.g. c3/r2/n14"),
    Column("installed", UTC, doc="start of the life (install)"),
    Column("removed", UTC, nullable=True, doc="end of the life (removal); NA: still in service"),
    Column("reason", "string", nullable=True, doc="removal reason as recorded"),
    Column("failed", "bool", doc="the removal was a failure (see reliab.io.formats.lifetimes)"),
    Column("origin", "string", doc="file:line the row was read from"),
)

FAILURES = (
    Column("unit", "string", doc="the unit that failed (node or host), as the record names it"),
    Column("system", "string", nullable=True, doc="system (cluster) of the unit, when the record names one"),
    Column("start", UTC, doc="when the failure began (UTC as recorded)"),
    Column("end", UTC, nullable=True, doc="when the unit was back in service (repair done)"),
    Column("repair_h", "float64", nullable=True, check=_nonneg, doc="time to repair, hours"),
    Column("cause", "string", nullable=True, doc="root-cause class as recorded, e.g. Hardware, Software"),
    Column("detail", "string", nullable=True, doc="sub-cause as recorded, e.g. Memory Dimm"),
    Column("category", "string", nullable=True, doc="reliab taxonomy category of the record"),
    Column("component", "string", nullable=True, check=_in(COMPONENTS)),
    Column("severity", "string", nullable=True, check=_in(SEVERITIES)),
    Column("system_units", "Int64", nullable=True, check=_nonneg,
           doc="units (nodes) of the system as the record states, for exposure"),
    Column("origin", "string", doc="file:line the record was read from"),
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
    "lifetimes": LIFETIMES,  # unit lives from inventories and replacement logs; extra columns kept
    "telemetry": TELEMETRY,
    "failures": FAILURES,
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


def empty_view(table: str) -> pd.DataFrame:
    """:func:`empty`, but its (empty, never written) column arrays shared, not copied:
    for the empty tables that most small files give."""
    if table not in _EMPTY:
        empty(table)
    return _EMPTY[table].copy(deep=False)


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
                missing = np.nan if col.dtype in ("float64", "float32") else pd.NA  # float64 holds no pd.NA
                out[col.name] = pd.Series(missing, index=out.index, dtype=dtype if col.dtype != UTC else "object")
            else:
                continue
        s = out[col.name]
        if col.dtype == UTC:
            s = pd.to_datetime(s, utc=True, format="mixed") if not isinstance(s.dtype, pd.DatetimeTZDtype) else s.dt.tz_convert("UTC")
            out[col.name] = s.astype(UTC)
        elif s.dtype != dtype:
            out[col.name] = as_string(s) if col.dtype == "string" else s.astype(dtype)
        if col.name in HOST_COLUMNS:  # untrusted text: one machine, one name (bidi, zero-width, NFKC)
            out[col.name] = canonical_hosts(out[col.name])
    names = [c.name for c in TABLES[table]]
    return out[[n for n in names if n in out.columns] + [c for c in out.columns if c not in names]]


#: Python-backed ``string``: holds text Arrow cannot (lone surrogates, see :func:`as_string`)
PY_STRING = pd.StringDtype("python")


def as_string(s: pd.Series) -> pd.Series:
    """``s`` as :data:`STRING`, or as :data:`PY_STRING` if it holds lone surrogates.

    A file name of bytes that are not UTF-8 reaches Python as ``surrogateescape`` text
    (:func:`os.fsdecode`), which ``open()`` takes back; Arrow refuses it, so a column that
    holds such a name (a path, an origin) keeps Python storage and the name stays exact.
    """
    try:
        return s.astype(STRING)
    except UnicodeEncodeError:
        return s.astype(PY_STRING)
