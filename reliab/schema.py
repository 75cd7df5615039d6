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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reliab._hostnames import HOST_COLUMNS, canonical_hosts
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
    check.values = values  # type: ignore[attr-defined] - read by _arrow_check
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
            out[col.name] = _as_string(s) if col.dtype == "string" else s.astype(dtype)
        if col.name in HOST_COLUMNS:  # untrusted text: one machine, one name (bidi, zero-width, NFKC)
            out[col.name] = canonical_hosts(out[col.name])
    names = [c.name for c in TABLES[table]]
    return out[[n for n in names if n in out.columns] + [c for c in out.columns if c not in names]]


# --- the row boundary: values a table cannot hold quarantine their row, never the table

#: instants a ``datetime64[ns]`` column can hold (pandas' ``Timestamp.min``/``max``)
TIME_RANGE = (pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC"))
_INT64 = (-(1 << 63), (1 << 63) - 1)


def safe_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, whatever the value (huge ints, cycles)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ or a too deep structure
        try:
            text = str(value)
        except Exception as exc:  # noqa: BLE001
            return f"<unprintable {type(value).__name__}: {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show_time(value: object) -> str:
    try:
        return str(value.isoformat())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not a datetime, or one that cannot print
        return safe_repr(value)


def bad_time(value: object) -> str | None:
    """Why ``value`` cannot be a UTC ``datetime64[ns]`` (``None`` if it can or is missing)."""
    if value is None or value is pd.NaT:
        return None
    try:
        if pd.isna(value):  # type: ignore[arg-type]
            return None
    except (TypeError, ValueError):
        pass
    try:
        ts = pd.Timestamp(value)  # type: ignore[arg-type]
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        if not TIME_RANGE[0] <= ts <= TIME_RANGE[1]:
            raise OverflowError("outside the range")
        ts.as_unit("ns")
    except Exception:  # noqa: BLE001 - every way a value can fail to be a time
        return (f"{_show_time(value)} is not a time a table can hold"
                f" ({TIME_RANGE[0]:%Y-%m-%d} to {TIME_RANGE[1]:%Y-%m-%d} UTC)")
    return None


def _bad_int(value: object) -> str | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    try:
        number = int(value)  # type: ignore[call-overload]
        ok = (not isinstance(value, str | bytes)) and number == value and _INT64[0] <= number <= _INT64[1]
    except Exception:  # noqa: BLE001
        ok = False
    return None if ok else f"{safe_repr(value)} is not a 64-bit integer"


def _bad_float(value: object) -> str | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001
        return f"{safe_repr(value)} is not a number"
    if number in (float("inf"), float("-inf")):
        return f"{safe_repr(value)} is not a finite number"
    return None


def _bad_string(value: object) -> str | None:
    """(Lone surrogates are fine: they are file names of non-UTF-8 bytes, kept exactly.)"""
    if value is None or value is pd.NA:
        return None
    try:
        str(value)
    except Exception as exc:  # noqa: BLE001 - e.g. an int of more than 4,300 digits
        return f"{safe_repr(value)} cannot be stored as text ({type(exc).__name__})"
    return None


def _elementwise(s: pd.Series, dtype: str) -> list[str | None]:
    check = {UTC: bad_time, "Int64": _bad_int, "int64": _bad_int, "float64": _bad_float,
             "string": _bad_string}.get(dtype)
    if check is None:
        return [None] * len(s)
    return [check(v) for v in s.tolist()]


def _measurements(df: pd.DataFrame) -> list[str]:
    """Telemetry columns that must hold finite numbers (see :func:`_telemetry_problems`)."""
    return [c for c in df.columns if isinstance(c, str) and c not in ("time", "host", "gpu", "phase", "source",
                                                                       "origin") and not c.startswith("_")
            and c.endswith(TELEMETRY_UNITS + ("pstate",))]


def _row_checks(df: pd.DataFrame, table: str, reasons: list[str | None]) -> None:
    """Rows of the conformed ``df`` that :func:`validate` would refuse: note why in ``reasons``.

    Each test first asks whether *any* row fails (one vectorized call per test); rows are
    only looked at one by one when one does, so a clean frame costs a handful of calls.
    """
    def mark(mask: np.ndarray, why: Callable[[int], str]) -> None:
        for i in np.flatnonzero(mask):
            if reasons[i] is None:
                reasons[i] = why(int(i))

    if len(df) == 0:
        return
    spec = [c for c in TABLES[table]  # only the columns a row can fail on
            if c.name in df.columns and (not c.nullable or c.check is not None or c.dtype == "float64")]
    for col in spec:
        s = df[col.name]
        arrow = _arrow_of(s)
        if not col.nullable and (arrow.null_count > 0 if arrow is not None else s.hasnans):
            mark(s.isna().to_numpy(), lambda i, c=col.name: f"no {c}")
        if col.check is not None and arrow is not None and _arrow_check(col.check, arrow):
            continue  # (the fast test passed; the float test below is not for text)
        if col.dtype == "float64":
            arr = s.to_numpy(dtype="float64", na_value=np.nan)
            inf = np.isinf(arr)
            if inf.any():
                mark(inf, lambda i, c=col.name, a=arr: f"{c} {a[i]!r} is not a finite number")
        if col.check is not None:
            ok = col.check(s)
            arr = ok.to_numpy(dtype=bool, na_value=True) if hasattr(ok, "to_numpy") else np.asarray(ok, dtype=bool)
            if not arr.all():
                bad = ~arr & ~s.isna().to_numpy()
                check = getattr(col.check, "__name__", "check").lstrip("_")
                mark(bad, lambda i, c=col.name, s=s, k=check: f"{c} {safe_repr(s.iloc[i])} fails the check {k}")
    if table == "telemetry":
        for name in _measurements(df):
            values = df[name]
            if not pd.api.types.is_float_dtype(values.dtype) and not pd.api.types.is_integer_dtype(values.dtype):
                values = pd.to_numeric(values, errors="coerce")
            arr = values.to_numpy(dtype="float64", na_value=np.nan)
            odd = np.isinf(arr)
            if values is not df[name]:
                odd |= np.isnan(arr) & df[name].notna().to_numpy()
            if odd.any():
                mark(odd, lambda i, c=name: f"{c} {safe_repr(df[c].iloc[i])} is not a finite number")


def _arrow_of(s: pd.Series) -> object | None:
    """The Arrow array behind an Arrow-backed text column (``None`` for other columns)."""
    if isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow":
        return s.array.__arrow_array__()
    return None


def _arrow_check(check: Callable[[pd.Series], pd.Series], arrow: object) -> bool:
    """Whether the text check passes for every non-null value, tested with pyarrow.compute.

    ``False`` means "failed or not known here": the caller then runs the check itself.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if check is _nonempty:
        shortest = pc.min(pc.utf8_length(arrow)).as_py()  # type: ignore[arg-type]
        return shortest is None or shortest > 0
    values = getattr(check, "values", None)
    if values is not None:
        inside = pc.is_in(arrow, value_set=pa.array(values, pa.string()))  # type: ignore[arg-type]
        return bool(pc.all(pc.or_kleene(inside, pc.is_null(arrow))).as_py())  # type: ignore[arg-type]
    return False


def frame_of(rows: list[dict]) -> pd.DataFrame:
    """``pd.DataFrame(rows)``, or object columns when pandas cannot infer a dtype (huge ints)."""
    try:
        return pd.DataFrame(rows)
    except Exception:  # noqa: BLE001 - e.g. OverflowError on an int beyond float range
        names = list(dict.fromkeys(k for row in rows for k in row))
        return pd.DataFrame({k: pd.Series([row.get(k) for row in rows], dtype=object) for k in names})


def conform_rows(df: pd.DataFrame | list[dict], table: str) -> tuple[pd.DataFrame, dict[int, str]]:
    """:func:`conform`, refusing *rows* instead of failing the table.

    A row is refused when one of its values cannot be held by its column (a time outside
    the nanosecond range 1677-2262, an integer beyond 64 bits or of more than 4,300 digits,
    an infinite number, text that cannot be UTF-8) or would fail :func:`validate` (a
    missing required value, a failed value check, a non-numeric or infinite telemetry
    measurement).  Values are never wrapped or clipped.

    Parameters
    ----------
    df : DataFrame or list of dict
        Rows of ``table`` as a reader made them (any index).
    table : str
        Name of the canonical table.

    Returns
    -------
    frame : DataFrame
        The conformed good rows (RangeIndex, in order).
    refused : dict of int to str
        Position in ``df`` -> reason, for every refused row.
    """
    if isinstance(df, list):
        if not df:
            return empty(table), {}
        df = frame_of(df)
    n = len(df)
    df = df.reset_index(drop=True)
    reasons: list[str | None] = [None] * n
    for col in TABLES[table]:  # pandas wraps out-of-range non-ns Timestamps silently: look first
        if col.dtype == UTC and col.name in df.columns and df[col.name].dtype == object:
            for i in _coarse_times(df[col.name]):
                why = bad_time(df[col.name].iat[i])
                if why is not None:
                    reasons[i] = f"{col.name}: {why}"
    # (list.count and range run at C speed: a clean table of 100,000 rows costs no Python loop)
    positions = list(range(n)) if reasons.count(None) == n else [i for i in range(n) if reasons[i] is None]
    part = df if len(positions) == n else df.iloc[positions].reset_index(drop=True)
    try:
        out = conform(part, table)
    except Exception:  # noqa: BLE001 - find the rows that made it fail, column by column
        for col in TABLES[table]:
            if col.name not in part.columns:
                continue
            try:
                _cast_one(part[col.name], col)
            except Exception:  # noqa: BLE001
                for j, why in enumerate(_elementwise(part[col.name], col.dtype)):
                    if why is not None and reasons[positions[j]] is None:
                        reasons[positions[j]] = f"{col.name}: {why}"
        keep = [j for j, i in enumerate(positions) if reasons[i] is None]
        try:
            out = conform(part.iloc[keep].reset_index(drop=True), table)
        except Exception as exc:  # noqa: BLE001 - last resort: refuse the rest, keep the run
            why = f"row cannot be stored in {table}: {type(exc).__name__}: {str(exc)[:200]}"
            return empty(table), {i: reasons[i] or why for i in range(n)}
        positions = [positions[j] for j in keep]
    sub: list[str | None] = [None] * len(positions)
    _row_checks(out, table, sub)
    if sub.count(None) != len(sub):
        for j, r in enumerate(sub):
            if r is not None:
                reasons[positions[j]] = r
        out = out.iloc[[j for j, r in enumerate(sub) if r is None]].reset_index(drop=True)
    return out, ({} if reasons.count(None) == n else {i: r for i, r in enumerate(reasons) if r is not None})


def _coarse_times(s: pd.Series) -> list[int]:
    """Positions of values that pandas may wrap on their way to nanoseconds.

    ``pd.Timestamp("9999-01-01")`` and ``pd.Timestamp(10**16, unit="ms")`` are Timestamps of
    second or millisecond resolution; casting a column holding one to ``datetime64[ns]``
    overflows without an error (pandas 2.x).  Python datetimes and ns Timestamps are safe.
    """
    out = []
    for i, v in enumerate(s.tolist()):
        if isinstance(v, pd.Timestamp):
            if v.unit != "ns":
                out.append(i)
        elif isinstance(v, np.datetime64) and np.datetime_data(v.dtype)[0] != "ns":
            out.append(i)
    return out


def _cast_one(s: pd.Series, col: Column) -> None:
    """Cast one column the way :func:`conform` does (raises what conform would)."""
    if col.dtype == UTC:
        if not isinstance(s.dtype, pd.DatetimeTZDtype):
            pd.to_datetime(s, utc=True, format="mixed").astype(UTC)
    elif s.dtype != dtype_of(col):
        _as_string(s) if col.dtype == "string" else s.astype(dtype_of(col))


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
    """The validated table of ``arrow``, read from a file of :func:`write_parquet` (or rows of such files)."""
    df = from_arrow(arrow)
    for col in TABLES[table]:
        if col.name in df.columns and col.dtype == "string" and df[col.name].dtype != STRING:
            df[col.name] = _as_string(df[col.name])
    return validate(df, table)


__all__ = ["Column", "STRING", "TABLES", "SIGNALS", "JOBS", "INTERRUPTIONS", "EXPOSURE", "TELEMETRY", "FAILURES",
           "QUARANTINE", "ACCOUNTING", "dtype_of", "empty", "conform", "conform_rows", "frame_of", "safe_repr",
           "validate", "describe", "write_parquet", "read_parquet", "from_parquet_arrow", "to_arrow", "from_arrow", "PY_STRING"]
