"""Time alignment of telemetry, throughput steps and failures: checked, cleaned and reported.

Two series only line up when their clocks agree.  Before any join, :func:`clean_times`
looks at a table's time axis and *reports* every problem it finds, next to what it did:

* times without a time zone are refused (``assume_tz=`` names the zone the source used),
  zones other than UTC are converted;
* rows without a time are dropped and counted;
* unsorted rows are sorted (per key, e.g. per host and GPU) and counted;
* duplicate timestamps of one key are merged (mean of numeric columns), kept (first/last)
  or refused, and counted;
* gaps longer than ``max_gap`` (default: five times the key's median sampling interval)
  are listed by :func:`find_gaps`; they are never bridged silently — an as-of join with a
  tolerance shorter than the gap leaves the rows inside it unmatched.

:func:`align_asof` then joins two cleaned tables with :func:`pandas.merge_asof`, keeps
every left row (unmatched rows get missing values, never a far-away sample) and records
for each row how far its match lay (``asof_lag_s``).  The issues of both tables and the
match counts come back in :class:`Alignment`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from reliab.models._result import ResultMixin

Duplicates = Literal["mean", "first", "last", "error", "keep"]
Direction = Literal["backward", "forward", "nearest"]
ISSUE_COLUMNS = ("table", "check", "rows", "action", "detail")


def _issue(table: str, check: str, rows: int, action: str, detail: str = "") -> dict:
    return {"table": table, "check": check, "rows": int(rows), "action": action, "detail": detail}


def issues_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Issue records as a frame with the columns of :data:`ISSUE_COLUMNS`."""
    return pd.DataFrame(list(rows), columns=list(ISSUE_COLUMNS)).astype({"rows": "int64"})


def issue_notes(issues: pd.DataFrame) -> list[str]:
    """One sentence per issue, for the ``notes`` of a result."""
    return [f"{r.table}: {r.check} ({r.rows} row(s)) - {r.action}"
            for r in issues.itertuples(index=False)]


def _keys(by: str | Sequence[str] | None) -> list[str]:
    return [] if by is None else [by] if isinstance(by, str) else list(by)


def utc_times(values: pd.Series, *, name: str, assume_tz: str | None = None
              ) -> tuple[pd.Series, dict | None]:
    """``values`` as tz-aware UTC timestamps, and an issue record when anything was changed.

    Raises
    ------
    ValueError
        Naive timestamps without ``assume_tz``, or values that are not times.
    """
    s = values
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        raise ValueError(f"{name}: times are numbers ({s.dtype}); convert epoch values first, "
                         "e.g. pd.to_datetime(x, unit='s', utc=True)")
    mixed = None
    if not isinstance(s.dtype, pd.DatetimeTZDtype) and not pd.api.types.is_datetime64_dtype(s):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # mixed offsets: handled below
                s = pd.to_datetime(s, format="mixed")
            if s.dtype == object:  # several UTC offsets in one column
                s, mixed = pd.to_datetime(values, format="mixed", utc=True), "several zones"
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{name}: cannot read times ({exc})") from exc
    if not isinstance(s.dtype, pd.DatetimeTZDtype):
        if assume_tz is None:
            raise ValueError(f"{name}: times have no time zone; pass assume_tz= with the zone "
                             "the source wrote them in (e.g. 'UTC' or 'America/Los_Angeles')")
        s = s.dt.tz_localize(assume_tz, ambiguous="NaT", nonexistent="NaT").dt.tz_convert("UTC")
        return s, _issue(name, "time zone", len(s), f"localized as {assume_tz}, converted to UTC",
                         "times had no zone")
    if mixed:
        return s, _issue(name, "time zone", len(s), "converted to UTC", "times carried " + mixed)
    zone = str(s.dt.tz)
    if zone != "UTC":
        return s.dt.tz_convert("UTC"), _issue(name, "time zone", len(s), "converted to UTC",
                                              f"zone was {zone}")
    return s, None


def epoch_s(times: pd.Series | pd.DatetimeIndex) -> np.ndarray:
    """Seconds since 1970-01-01 UTC of tz-aware timestamps, as float64."""
    return pd.DatetimeIndex(times).as_unit("ns").asi8 / 1e9


def clean_times(
    frame: pd.DataFrame,
    *,
    time: str = "time",
    by: str | Sequence[str] | None = None,
    duplicates: Duplicates = "mean",
    assume_tz: str | None = None,
    name: str = "table",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return ``frame`` with a clean UTC time axis, and the issues found on the way.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table with a time column.
    time : str
        Name of the time column.
    by : str or sequence of str, optional
        Key columns of independent series (``"host"``, ``["host", "gpu"]``): sorting and
        duplicates are judged per key.
    duplicates : {"mean", "first", "last", "error", "keep"}
        What to do with rows of one key that share a timestamp: average the numeric columns
        (first value of the others), keep the first or last, raise, or keep them all
        (events such as steps or failures may share a time; samples should not).
    assume_tz : str, optional
        Zone of naive timestamps; without it naive timestamps raise ``ValueError``.
    name : str
        Table name used in the issues and messages.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The cleaned table sorted by ``by`` then ``time`` (index reset), and the issues
        (columns ``table, check, rows, action, detail``; empty when nothing was wrong).
    """
    if duplicates not in ("mean", "first", "last", "error", "keep"):
        raise ValueError("duplicates must be 'mean', 'first', 'last', 'error' or 'keep', got "
                         f"{duplicates!r}")
    keys = _keys(by)
    missing = [c for c in [time, *keys] if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: column(s) {missing} not found (has {list(frame.columns)})")
    issues: list[dict] = []
    t, issue = utc_times(frame[time], name=name, assume_tz=assume_tz)
    if issue:
        issues.append(issue)
    out = frame.assign(**{time: t})
    nat = out[time].isna()
    if nat.any():
        issues.append(_issue(name, "missing time", int(nat.sum()), "dropped",
                             f"first at row {int(np.flatnonzero(nat.to_numpy())[0])}"))
        out = out[~nat.to_numpy()]
    order_cols = [*keys, time]
    codes = key_codes(out, keys)
    tns = pd.DatetimeIndex(out[time]).asi8
    same = codes[1:] == codes[:-1]
    unsorted = int(((tns[1:] < tns[:-1]) & same).sum())
    if unsorted:
        issues.append(_issue(name, "unsorted", unsorted, "sorted by " + ", ".join(order_cols),
                             "rows earlier than the row before them (same key)"))
        order = np.lexsort((tns, codes))  # stable: keeps the input order of equal stamps
        out, codes, tns = out.take(order), codes[order], tns[order]
    elif len(codes) > 1 and (np.diff(codes) < 0).any():
        order = np.argsort(codes, kind="stable")
        out, codes, tns = out.take(order), codes[order], tns[order]
    out = out.reset_index(drop=True)
    twin = (codes[1:] == codes[:-1]) & (tns[1:] == tns[:-1])
    if twin.any():
        dup = np.zeros(len(out), dtype=bool)
        dup[1:] |= twin
        dup[:-1] |= twin
        n_rows, n_stamps = int(dup.sum()), int(dup.sum() - twin.sum())
        example = out.loc[dup, order_cols].iloc[0].to_dict()
        detail = f"{n_stamps} timestamp(s) repeated, e.g. {example}"
        if duplicates == "error":
            raise ValueError(f"{name}: {n_rows} rows share a timestamp with another row of the "
                             f"same key ({detail}); pass duplicates='mean', 'first' or 'last'")
        action = "kept" if duplicates == "keep" else f"merged ({duplicates}) into {n_stamps} row(s)"
        if duplicates != "keep":
            out = _merge_duplicates(out, order_cols, duplicates)
        issues.append(_issue(name, "duplicate timestamps", n_rows, action, detail))
    return out, issues_frame(issues)


def clean_series(
    series: pd.Series,
    *,
    name: str = "series",
    duplicates: Duplicates = "mean",
    assume_tz: str | None = "UTC",
) -> tuple[pd.Series, pd.DataFrame]:
    """A numeric Series indexed by time, cleaned like :func:`clean_times` (missing values dropped).

    A lone series has nothing to misalign with, so naive timestamps are taken to be in
    ``assume_tz`` (UTC, the convention of :func:`reliab.schema.conform`) and the issues
    table says so; pass ``assume_tz=None`` to refuse them instead.

    Returns the Series (float, sorted, unique UTC index) and the issues table.
    """
    if not isinstance(series, pd.Series):
        raise TypeError(f"{name} must be a pandas Series indexed by timestamps, got "
                        f"{type(series).__name__}")
    if not isinstance(series.index, pd.DatetimeIndex):
        raise ValueError(f"{name} must be indexed by timestamps (a DatetimeIndex), got "
                         f"{type(series.index).__name__}")
    values = pd.to_numeric(series, errors="coerce")
    frame = pd.DataFrame({"time": series.index, "value": values.to_numpy(dtype=float)})
    clean, issues = clean_times(frame, duplicates=duplicates, assume_tz=assume_tz, name=name)
    nan = clean["value"].isna()
    if nan.any():
        issues = pd.concat([issues, issues_frame([_issue(
            name, "missing value", int(nan.sum()), "dropped", "NaN or non-numeric values")])],
            ignore_index=True)
        clean = clean[~nan.to_numpy()]
    out = pd.Series(clean["value"].to_numpy(), index=pd.DatetimeIndex(clean["time"]),
                    name=series.name)
    return out, issues


def key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Integer code per row of the key columns, ordered like the sorted keys (missing last)."""
    codes = np.zeros(len(frame), dtype=np.int64)
    for k in keys:
        c, uniq = pd.factorize(frame[k], sort=True, use_na_sentinel=True)
        c = np.where(c < 0, len(uniq), c)  # missing keys sort after every value
        codes = codes * (len(uniq) + 1) + c
    return codes


def _merge_duplicates(frame: pd.DataFrame, keys: list[str], how: str) -> pd.DataFrame:
    if how in ("first", "last"):
        return frame.drop_duplicates(keys, keep=how).reset_index(drop=True)
    numeric = [c for c in frame.columns if c not in keys
               and pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]
    other = [c for c in frame.columns if c not in keys and c not in numeric]
    g = frame.groupby(keys, sort=False, dropna=False, observed=True)
    parts = [g[numeric].mean()] if numeric else []
    if other:
        parts.append(g[other].first())
    merged = pd.concat(parts, axis=1).reset_index() if parts else g.size().reset_index()[keys]
    return merged[list(frame.columns)].reset_index(drop=True)


def find_gaps(
    frame: pd.DataFrame,
    *,
    time: str = "time",
    by: str | Sequence[str] | None = None,
    max_gap: str | pd.Timedelta | None = None,
) -> pd.DataFrame:
    """Gaps in a cleaned (sorted, UTC) table: consecutive samples further apart than ``max_gap``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`clean_times` (sorted by ``by`` then ``time``).
    max_gap : str or Timedelta, optional
        Longest normal spacing; default five times the median spacing of each key.

    Returns
    -------
    pandas.DataFrame
        One row per gap: the key columns, ``start`` (last sample before), ``end`` (first
        sample after), ``gap_s`` and ``typical_s`` (the key's median spacing).
    """
    keys = _keys(by)
    cols = [*keys, "start", "end", "gap_s", "typical_s"]
    if len(frame) < 2:
        return pd.DataFrame(columns=cols)
    t = epoch_s(frame[time])
    dt = np.diff(t)
    same = np.ones(len(dt), dtype=bool)
    codes = np.zeros(len(frame), dtype=np.int64)
    if keys:
        codes = frame.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
        same = codes[1:] == codes[:-1]
    typical = pd.Series(dt[same]).groupby(codes[1:][same]).median()
    limit = (pd.Timedelta(max_gap).total_seconds() if max_gap is not None else 5.0 * typical)
    lim = (np.full(len(dt), float(limit)) if np.isscalar(limit)
           else pd.Series(codes[1:]).map(limit).to_numpy(dtype=float))
    hit = same & (dt > lim)
    idx = np.flatnonzero(hit)
    out = frame.iloc[idx][keys].reset_index(drop=True) if keys else pd.DataFrame(index=range(len(idx)))
    out["start"] = frame[time].iloc[idx].to_numpy()
    out["end"] = frame[time].iloc[idx + 1].to_numpy()
    out["gap_s"] = dt[idx]
    out["typical_s"] = pd.Series(codes[1:][idx]).map(typical).to_numpy(dtype=float)
    out["start"] = pd.to_datetime(out["start"], utc=True)
    out["end"] = pd.to_datetime(out["end"], utc=True)
    return out[cols]


def gap_issues(gaps: pd.DataFrame, name: str) -> pd.DataFrame:
    """One issue row summarising ``find_gaps`` output (empty frame if no gap)."""
    if gaps.empty:
        return issues_frame([])
    big = gaps.loc[gaps["gap_s"].idxmax()]
    return issues_frame([_issue(name, "gaps", len(gaps), "kept (not interpolated)",
                                f"gaps span {gaps['gap_s'].sum() / 3600:.3g} h in total; longest "
                                f"{big['gap_s']:.4g} s from {big['start']}")])


@dataclass(frozen=True)
class Alignment(ResultMixin):
    """An as-of join of two tables with the report of how well they lined up.

    ``data`` holds every left row (sorted by key and time) with the matched right columns
    and ``asof_lag_s`` (right time minus left time, seconds; missing when unmatched).
    ``issues`` lists what cleaning did to each table and the rows left unmatched.
    """

    data: pd.DataFrame = field(repr=False)
    issues: pd.DataFrame = field(repr=False)
    n: int
    n_matched: int
    tolerance_s: float
    direction: str
    method: str = "pandas.merge_asof on cleaned UTC time axes"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The issues table (``table, check, rows, action, detail``)."""
        return self.issues.copy()


def align_asof(
    left: pd.DataFrame,
    right: pd.DataFrame,
    *,
    tolerance: str | pd.Timedelta,
    on: str = "time",
    left_on: str | None = None,
    right_on: str | None = None,
    by: str | Sequence[str] | None = None,
    direction: Direction = "backward",
    duplicates: Duplicates = "mean",
    assume_tz: str | None = None,
    suffix: str = "_right",
) -> Alignment:
    """As-of join: for each left row, the nearest right row in time within ``tolerance``.

    Parameters
    ----------
    left, right : pandas.DataFrame
        E.g. throughput steps (left) and GPU telemetry (right), or failures and telemetry.
    tolerance : str or Timedelta
        Largest allowed distance between the two times (e.g. ``"200ms"``, ``"5min"``).
        Rows with no right sample that close stay unmatched (missing values).
    on, left_on, right_on : str
        Time columns (``left_on``/``right_on`` override ``on`` for one side).
    by : str or sequence of str, optional
        Columns that must match exactly (``"host"``, ``["host", "gpu"]``).
    direction : {"backward", "forward", "nearest"}
        Take the last right sample at or before, the first at or after, or the nearest.
    duplicates : {"mean", "first", "last", "error"}
        Policy for repeated timestamps of the *right* table (samples); repeated left
        timestamps (events) are kept and reported.
    assume_tz : str, optional
        Zone of naive timestamps in either table.
    suffix : str
        Added to right columns whose names clash with left columns.

    Returns
    -------
    Alignment

    Examples
    --------
    >>> import pandas as pd
    >>> steps = pd.DataFrame({"time": pd.to_datetime(["2024-01-01 00:00:01"], utc=True)})
    >>> tel = pd.DataFrame({"time": pd.to_datetime(["2024-01-01 00:00:00"], utc=True),
    ...                     "temp_c": [55.0]})
    >>> align_asof(steps, tel, tolerance="2s").data["temp_c"].tolist()
    [55.0]
    """
    if direction not in ("backward", "forward", "nearest"):
        raise ValueError(f"direction must be 'backward', 'forward' or 'nearest', got {direction!r}")
    tol = pd.Timedelta(tolerance)
    if tol < pd.Timedelta(0):
        raise ValueError(f"tolerance must be non-negative, got {tolerance!r}")
    lt, rt = left_on or on, right_on or on
    keys = _keys(by)
    if duplicates == "keep":
        raise ValueError("duplicates='keep' would make the right side ambiguous; choose 'mean', "
                         "'first', 'last' or 'error'")
    lc, li = clean_times(left, time=lt, by=keys, duplicates="keep", assume_tz=assume_tz,
                         name="left")
    rc, ri = clean_times(right, time=rt, by=keys, duplicates=duplicates, assume_tz=assume_tz,
                         name="right")
    rgaps = gap_issues(find_gaps(rc, time=rt, by=keys), "right")
    clash = [c for c in rc.columns if c in lc.columns and c not in keys and c != rt]
    stamp = "_asof_right_time"
    rc = rc.rename(columns={c: c + suffix for c in clash}).rename(columns={rt: stamp})
    lc = lc.sort_values(lt, kind="stable").reset_index(drop=True)
    rc = rc.sort_values(stamp, kind="stable").reset_index(drop=True)
    merged = pd.merge_asof(lc, rc, left_on=lt, right_on=stamp, by=keys or None,
                           tolerance=tol, direction=direction, allow_exact_matches=True)
    lag = (merged[stamp] - merged[lt]).dt.total_seconds()
    merged = merged.drop(columns=[stamp]).assign(asof_lag_s=lag.to_numpy())
    merged = merged.sort_values([*keys, lt], kind="stable").reset_index(drop=True)
    matched = int(lag.notna().sum())
    extra = []
    if matched < len(merged):
        extra.append(_issue("left", "unmatched", len(merged) - matched,
                            "kept with missing right values",
                            f"no right sample within {tol} ({direction})"))
    issues = pd.concat([li, ri, rgaps, issues_frame(extra)], ignore_index=True)
    return Alignment(data=merged, issues=issues, n=len(merged), n_matched=matched,
                     tolerance_s=tol.total_seconds(), direction=direction)


__all__ = ["Alignment", "align_asof", "issue_notes", "key_codes", "clean_series", "clean_times", "epoch_s", "find_gaps", "gap_issues", "issues_frame",
           "utc_times", "ISSUE_COLUMNS"]
