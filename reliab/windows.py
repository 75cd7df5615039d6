"""Telemetry reduced to time windows per GPU, host, rack or the cluster, in mergeable parts.

The reduction runs in three pure steps so that a partitioned run (one task per file on
Dask) gives the same table as a run over everything at once:

1. :func:`window_partials` turns any slice of the ``telemetry`` table into per-series
   (``host``, ``gpu``), per-window sums, counts, minima, maxima and first/last sample
   times — quantities that add up across slices (no means of means);
2. :func:`combine_partials` merges partial tables (sum the sums and counts, min the minima,
   max the maxima and last times);
3. :func:`finalize_windows` derives means, coverage hours and hours above a threshold per
   series and rolls the series up to the requested level.

The sampling interval of a series is the median over its windows of
``(last - first) / (n - 1)``, so it is computed from combined partials, never per slice.
A window's observed hours are ``n × interval`` (capped at the window length): a gap inside
the window lowers them instead of being bridged.  :func:`telemetry_windows` runs the three
steps; :func:`count_events` adds failure (or power-swing) counts per window and reports the
events it could not place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from reliab.align import clean_times, epoch_s, issues_frame, key_codes

Level = Literal["gpu", "host", "rack", "cluster"]
SERIES = ("host", "gpu")
#: columns summed across the series of a host/rack/cluster (power adds up; temperature does not)
SUM_SUFFIXES = ("_w", "_kw", "_mw")
_RESERVED = ("time", "host", "gpu", "window", "origin", "source", "phase")


def window_freq(frame: pd.DataFrame, freq: str | None) -> str:
    """The window length: ``freq`` if given, else the one recorded in ``frame.attrs``.

    Raises ``ValueError`` when neither is known (e.g. windows read back from Parquet), rather
    than guessing a length and misplacing events.
    """
    found = freq or frame.attrs.get("freq")
    if not found:
        raise ValueError("the window length is unknown (no freq= and none recorded in "
                         "attrs); pass freq=, e.g. freq='1h'")
    return str(found)


def measurement_columns(telemetry: pd.DataFrame, columns: Sequence[str] | None) -> list[str]:
    """The measurement columns of ``telemetry``: ``columns`` (each checked to be there), or
    every numeric, non-boolean column that is not a key (time, host, gpu…) or hidden."""
    if columns is not None:
        missing = [c for c in columns if c not in telemetry.columns]
        if missing:
            raise ValueError(f"columns {missing} not in the telemetry table "
                             f"(has {list(telemetry.columns)})")
        return list(columns)
    return [c for c in telemetry.columns if c not in _RESERVED and not c.startswith("_")
            and pd.api.types.is_numeric_dtype(telemetry[c])
            and not pd.api.types.is_bool_dtype(telemetry[c])]


def window_partials(
    telemetry: pd.DataFrame,
    *,
    freq: str = "1h",
    columns: Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Mergeable per-series, per-window partial sums of a slice of telemetry.

    Parameters
    ----------
    telemetry : pandas.DataFrame
        Canonical ``telemetry`` rows (``time`` UTC, ``host``, ``gpu``, measurements).
    freq : str
        Window length as a pandas frequency (``"1h"``, ``"15min"``, ``"1D"``); windows start
        at multiples of it since the epoch, so every slice uses the same boundaries.
    columns : sequence of str, optional
        Measurements to reduce; default every numeric measurement column.
    thresholds : mapping, optional
        Column -> level; samples strictly above it are counted (``{c}__above``).

    Returns
    -------
    pandas.DataFrame
        Keys ``host, gpu, window`` and ``n, first, last`` plus, per column ``c``,
        ``c__n, c__sum, c__min, c__max`` (and ``c__above``).
    """
    cols = measurement_columns(telemetry, columns)
    thr = dict(thresholds or {})
    bad = [c for c in thr if c not in cols]
    if bad:
        raise ValueError(f"thresholds name column(s) {bad} that are not reduced ({cols})")
    missing = [c for c in ("time", *SERIES) if c not in telemetry.columns]
    if missing:
        raise ValueError(f"telemetry is missing column(s) {missing}")
    t = telemetry["time"]
    if not isinstance(t.dtype, pd.DatetimeTZDtype):
        raise ValueError("telemetry 'time' must be tz-aware UTC (see reliab.align.clean_times)")
    step = pd.Timedelta(pd.tseries.frequencies.to_offset(freq)).value
    tns = pd.DatetimeIndex(t).as_unit("ns").asi8
    series = key_codes(telemetry, list(SERIES))
    key = tns // step  # window index since the epoch (floor, also before 1970)
    order = np.lexsort((tns, key, series))
    series, key, tns = series[order], key[order], tns[order]
    new = np.r_[True, (series[1:] != series[:-1]) | (key[1:] != key[:-1])] if len(order) else \
        np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    first_rows = order[starts]
    out = pd.DataFrame({
        "host": telemetry["host"].iloc[first_rows].astype("string").to_numpy(),
        "gpu": telemetry["gpu"].iloc[first_rows].astype("string").to_numpy(),
        "window": pd.to_datetime(key[starts] * step, unit="ns", utc=True),
        "n": np.diff(np.r_[starts, len(order)]).astype(np.int64),
        "first": pd.to_datetime(tns[starts], unit="ns", utc=True),
        "last": pd.to_datetime(np.maximum.reduceat(tns, starts) if len(starts) else tns,
                               unit="ns", utc=True)})
    for c in cols:
        x = telemetry[c].to_numpy(dtype=float)[order]
        ok = ~np.isnan(x)
        out[f"{c}__n"] = _reduce(np.add, ok.astype(np.int64), starts)
        out[f"{c}__sum"] = _reduce(np.add, np.where(ok, x, 0.0), starts)
        out[f"{c}__min"] = _reduce(np.fmin, x, starts)
        out[f"{c}__max"] = _reduce(np.fmax, x, starts)
        if c in thr:
            out[f"{c}__above"] = _reduce(np.add, (x > float(thr[c])).astype(np.int64), starts)
    out.attrs["thresholds"] = thr
    out.attrs["freq"] = freq
    return out


def _reduce(ufunc: np.ufunc, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return ufunc.reduceat(values, starts) if len(starts) else values[:0]


def combine_partials(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Merge partial tables of :func:`window_partials` (any split of the telemetry)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        raise ValueError("no partial tables to combine")
    allp = pd.concat(parts, ignore_index=True)
    how: dict[str, str] = {}
    for c in allp.columns:
        if c in ("host", "gpu", "window"):
            continue
        how[c] = ("min" if c == "first" or c.endswith("__min")
                  else "max" if c == "last" or c.endswith("__max") else "sum")
    out = allp.groupby(["host", "gpu", "window"], dropna=False, sort=True).agg(how).reset_index()
    out.attrs = dict(parts[0].attrs)
    return out


def _series_interval(p: pd.DataFrame) -> pd.Series:
    """Sampling interval (s) per row: median over the series' windows of span / (n - 1).

    A series with at most one sample per window (e.g. 15-minute samples in 15-minute
    windows) falls back to the median spacing of its windows' first samples.
    """
    first = epoch_s(p["first"])
    span = epoch_s(p["last"]) - first
    steps = p["n"].to_numpy(dtype=float) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(steps > 0, span / steps, np.nan)
    key = (p["host"].astype("string").fillna("\0") + "|"
           + p["gpu"].astype("string").fillna("\0")).to_numpy()
    within = pd.Series(per, index=p.index).groupby(key).transform("median")
    order = np.lexsort((first, key))
    gaps = np.full(len(p), np.nan)
    same = key[order][1:] == key[order][:-1]
    gaps[order[1:]] = np.where(same, np.diff(first[order]), np.nan)
    across = pd.Series(gaps, index=p.index).groupby(key).transform("median")
    return within.fillna(across)


def _rack_of(hosts: pd.Series, racks: Mapping[str, str] | Callable[[str], str] | None) -> pd.Series:
    if racks is None:
        raise ValueError("level='rack' needs racks= (a mapping or function host -> rack)")
    mapped = hosts.map(racks) if isinstance(racks, Mapping) else hosts.map(lambda h: racks(h))
    if mapped.isna().any():
        raise ValueError(f"racks= has no rack for host(s) {sorted(hosts[mapped.isna()].unique())[:5]}")
    return mapped.astype("string")


def finalize_windows(
    partials: pd.DataFrame,
    *,
    level: Level = "host",
    racks: Mapping[str, str] | Callable[[str], str] | None = None,
    sum_columns: Sequence[str] | None = None,
    freq: str | None = None,
) -> pd.DataFrame:
    """Means, observed hours and hours above thresholds per window at ``level``.

    Parameters
    ----------
    partials : pandas.DataFrame
        Output of :func:`window_partials` / :func:`combine_partials`.
    level : {"gpu", "host", "rack", "cluster"}
        Aggregation level: one row per series, host, rack or the whole cluster per window.
    racks : mapping or callable, optional
        Host -> rack, for ``level="rack"``.
    sum_columns : sequence of str, optional
        Columns whose series means are summed into ``{c}_total`` (default: those ending in
        ``_w``, ``_kw`` or ``_mw``: power adds up across GPUs, temperature does not).
    freq : str, optional
        Window length of the partials; default the one :func:`window_partials` recorded in
        ``attrs`` (required when the partials lost it, e.g. after a Parquet round trip).

    Returns
    -------
    pandas.DataFrame
        Key columns, ``window``, ``hours`` (observed hours: the largest of the series'),
        ``n_series``, ``n_samples`` and per column ``{c}_mean`` (sample-weighted),
        ``{c}_min``, ``{c}_max``, ``{c}_hours_above`` (mean over series) and ``{c}_total``.
    """
    if level not in ("gpu", "host", "rack", "cluster"):
        raise ValueError(f"level must be 'gpu', 'host', 'rack' or 'cluster', got {level!r}")
    if partials.empty:
        raise ValueError("no telemetry windows to finalize")
    p = partials.copy()
    cols = [c for c in dict.fromkeys(c.split("__")[0] for c in p.columns if c.endswith("__sum"))]
    freq = window_freq(partials, freq)
    width_s = pd.Timedelta(pd.tseries.frequencies.to_offset(freq)).total_seconds()
    interval = _series_interval(p)
    p["hours"] = np.minimum(p["n"] * interval, width_s).to_numpy() / 3600.0
    summed = list(sum_columns) if sum_columns is not None else [c for c in cols if c.endswith(SUM_SUFFIXES)]
    for c in cols:
        with np.errstate(divide="ignore", invalid="ignore"):
            p[f"{c}__mean"] = p[f"{c}__sum"] / p[f"{c}__n"].where(p[f"{c}__n"] > 0)
        if f"{c}__above" in p:
            hrs = np.minimum(p[f"{c}__above"] * interval, width_s) / 3600.0
            p[f"{c}__hours_above"] = hrs.where(p[f"{c}__n"] > 0)
    keys = {"gpu": ["host", "gpu"], "host": ["host"], "rack": ["rack"], "cluster": []}[level]
    if level == "rack":
        p["rack"] = _rack_of(p["host"].astype("string"), racks)
    groups = p.groupby([*keys, "window"], dropna=False, sort=True)
    out = groups.agg(hours=("hours", "max"), n_series=("n", "size"), n_samples=("n", "sum"))
    for c in cols:
        tot_n = groups[f"{c}__n"].sum()
        out[f"{c}_mean"] = groups[f"{c}__sum"].sum() / tot_n.where(tot_n > 0)
        out[f"{c}_min"] = groups[f"{c}__min"].min()
        out[f"{c}_max"] = groups[f"{c}__max"].max()
        if f"{c}__hours_above" in p:
            out[f"{c}_hours_above"] = groups[f"{c}__hours_above"].mean()
        if c in summed:
            out[f"{c}_total"] = groups[f"{c}__mean"].sum(min_count=1)
    out = out.reset_index()
    out.attrs = {"level": level, "freq": freq,
                 "thresholds": p.attrs.get("thresholds", {})}
    return out


def telemetry_windows(
    telemetry: pd.DataFrame,
    *,
    freq: str = "1h",
    level: Level = "host",
    columns: Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    racks: Mapping[str, str] | Callable[[str], str] | None = None,
    sum_columns: Sequence[str] | None = None,
    duplicates: Literal["mean", "first", "last", "error"] = "mean",
) -> pd.DataFrame:
    """Reduce telemetry to windows per GPU, host, rack or cluster (clean → partials → finalize).

    Parameters
    ----------
    telemetry : pandas.DataFrame
        Canonical ``telemetry`` table.
    freq, columns, thresholds
        See :func:`window_partials`.
    level, racks, sum_columns
        See :func:`finalize_windows`.
    duplicates : {"mean", "first", "last", "error"}
        Policy for repeated timestamps of one series (:func:`reliab.align.clean_times`).

    Returns
    -------
    pandas.DataFrame
        One row per key and window (columns of :func:`finalize_windows`);
        ``attrs["issues"]`` (records; :func:`reliab.align.issues_frame` makes them a table)
        lists what cleaning found (time zones, unsorted rows,
        duplicates) and hosts that mix GPU rows with host-level rows.

    Examples
    --------
    >>> import pandas as pd
    >>> tel = pd.DataFrame({"time": pd.date_range("2024-06-01", periods=120, freq="1min", tz="UTC"),
    ...                     "host": "node0001", "gpu": "0", "temp_c": 60.0})
    >>> w = telemetry_windows(tel, thresholds={"temp_c": 55})
    >>> w[["host", "hours", "temp_c_mean", "temp_c_hours_above"]].round(3).to_dict("records")[0]
    {'host': 'node0001', 'hours': 1.0, 'temp_c_mean': 60.0, 'temp_c_hours_above': 1.0}
    """
    tel = telemetry.copy()
    if "gpu" not in tel.columns:
        tel["gpu"] = pd.Series(pd.NA, index=tel.index, dtype="string")
    # factorize the series keys once: every later sort and group works on integer codes
    tel["host"] = tel["host"].astype("category")
    tel["gpu"] = tel["gpu"].astype("category")
    clean, issues = clean_times(tel, by=list(SERIES), duplicates=duplicates, name="telemetry")
    no_gpu = clean["gpu"].isna().to_numpy()
    hosts = sorted(set(pd.unique(clean["host"][no_gpu])) & set(pd.unique(clean["host"][~no_gpu])),
                   key=str)
    extra = []
    if hosts:
        extra.append({"table": "telemetry", "check": "mixed levels", "rows": len(hosts),
                      "action": "kept: host means pool GPU rows and host-level rows",
                      "detail": f"host(s) with both GPU and host-level rows, e.g. {hosts[:3]}"})
    parts = window_partials(clean, freq=freq, columns=columns, thresholds=thresholds)
    out = finalize_windows(parts, level=level, racks=racks, sum_columns=sum_columns)
    # records, not a frame: pandas compares attrs with == when it combines frames
    out.attrs["issues"] = pd.concat([issues, issues_frame(extra)],
                                    ignore_index=True).to_dict("records")
    return out


def count_events(
    windows: pd.DataFrame,
    events: pd.DataFrame,
    *,
    name: str = "failures",
    time: str = "time",
    host: str = "host",
    freq: str | None = None,
) -> pd.DataFrame:
    """Add to host windows the number of events (failures, power swings) in each.

    Parameters
    ----------
    windows : pandas.DataFrame
        Host-level windows (``host``, ``window``), e.g. from :func:`telemetry_windows`.
    events : pandas.DataFrame
        One row per event with a UTC ``time`` and a ``host`` column; a comma-separated
        ``hosts`` column (the ``interruptions`` table) counts once for each host named.
    name : str
        Name of the count column added.
    time, host : str
        Columns of ``events``; ``host`` falls back to ``hosts`` when absent.
    freq : str, optional
        Window length; default ``windows.attrs["freq"]`` (an error if neither is known).

    Returns
    -------
    pandas.DataFrame
        ``windows`` with an int64 column ``name``; ``attrs["unplaced"]`` counts the events
        whose host/window has no telemetry window (they are not silently dropped:
        ``attrs["issues"]`` says how many and gives an example).
    """
    freq = window_freq(windows, freq)
    col = host if host in events.columns else "hosts" if "hosts" in events.columns else None
    if col is None or time not in events.columns:
        raise ValueError(f"events need a {time!r} column and a {host!r} (or 'hosts') column")
    ev = events[[time, col]].dropna(subset=[col]).rename(columns={col: "host", time: "time"})
    no_host = len(events) - len(ev)
    ev = ev.assign(host=ev["host"].astype(str).str.split(",")).explode("host")
    ev["host"] = ev["host"].str.strip().astype("string")
    ev["window"] = pd.to_datetime(ev["time"], utc=True).dt.floor(freq)
    counts = ev.groupby(["host", "window"]).size().rename(name)
    keyed = windows.set_index(["host", "window"])
    placed = counts.index.isin(keyed.index)
    out = windows.copy()
    out[name] = counts.reindex(pd.MultiIndex.from_frame(windows[["host", "window"]])
                               ).fillna(0).astype("int64").to_numpy()
    n_unplaced = int(counts[~placed].sum())
    rows = []
    if n_unplaced:
        ex = counts[~placed].index[0]
        rows.append({"table": name, "check": "outside windows", "rows": n_unplaced,
                     "action": "not counted", "detail": f"no telemetry window for e.g. {ex}"})
    if no_host:
        rows.append({"table": name, "check": "no host", "rows": no_host, "action": "not counted",
                     "detail": "events without a host cannot be placed on a node"})
    out.attrs = {**windows.attrs, "unplaced": n_unplaced + no_host,
                 "issues": [*windows.attrs.get("issues", []), *rows]}
    return out


def lag_windows(windows: pd.DataFrame, columns: Sequence[str], *, periods: int = 1,
                by: str = "host", freq: str | None = None) -> pd.DataFrame:
    """Add ``{c}_lag{periods}``: the value of ``c`` in the window ``periods`` steps earlier.

    A covariate measured in the same window as a failure is partly caused by it (a failed
    job idles its nodes, so they cool down and stop swinging power); the window before is
    not.  Only a window exactly ``periods × freq`` earlier of the same ``by`` key counts; a
    missing one gives NaN.
    """
    if periods < 1:
        raise ValueError(f"periods must be >= 1, got {periods}")
    step = pd.Timedelta(pd.tseries.frequencies.to_offset(window_freq(windows, freq)))
    cols = list(columns)
    prev = windows[[by, "window", *cols]].copy()
    prev["window"] = prev["window"] + periods * step
    prev = prev.rename(columns={c: f"{c}_lag{periods}" for c in cols})
    out = windows.merge(prev, on=[by, "window"], how="left")
    out.attrs = dict(windows.attrs)
    return out


def counting_process_rows(windows: pd.DataFrame, *, event: str = "failures",
                          origin: pd.Timestamp | None = None) -> pd.DataFrame:
    """Host windows as ``(start, stop]`` rows in hours for a Cox model with time-varying covariates.

    ``start``/``stop`` are hours since ``origin`` (default the first window) and ``event``
    becomes 0/1 (a window with several failures counts one: the Andersen–Gill rows then
    carry the window's covariates).  Feed the result to :func:`reliab.fit_cox` with
    ``start="start", stop="stop", event=event, id="host"``.
    """
    w = windows.sort_values(["host", "window"], kind="stable").reset_index(drop=True)
    t0 = origin if origin is not None else w["window"].min()
    start = (w["window"] - t0) / pd.Timedelta(hours=1)
    return w.assign(start=start.to_numpy(), stop=start.to_numpy() + w["hours"].to_numpy(),
                    **{event: (w[event] > 0).astype(int)})


__all__ = ["window_freq", "measurement_columns", "window_partials", "combine_partials", "finalize_windows",
           "telemetry_windows", "count_events", "lag_windows", "counting_process_rows", "SUM_SUFFIXES"]
