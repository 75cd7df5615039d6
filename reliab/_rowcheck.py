"""The row boundary of the canonical tables: values a table cannot hold quarantine their row,
never the table (:func:`conform_rows`; re-exported by :mod:`reliab.schema`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from reliab._tables import TABLES, TELEMETRY_UNITS, UTC, Column, conform, dtype_of, empty
from reliab._tables import as_string as _as_string
from reliab._tables import nonempty as _nonempty

__all__ = ["TIME_RANGE", "safe_repr", "bad_time", "frame_of", "conform_rows"]


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

