"""Window partials of telemetry as integer-coded numpy arrays: build, merge, finalise.

The arithmetic of :mod:`reliab.windows` (per series and window: sample count, first and
last time, per measurement count / sum / min / max / samples above a threshold; means,
observed hours ``min(n × interval, width)`` and hours above; the roll-up to hosts) and of
the power-swing counts of :mod:`reliab.fleet.telemetry`, on parallel arrays keyed by an
integer series code and an integer window index instead of pandas frames keyed by strings.
A "rows" table is a ``dict`` of equal-length arrays: ``series``, ``window``, ``n``,
``first``, ``last`` (int64 ns) and ``{c}__n``, ``{c}__sum``, ``{c}__min``, ``{c}__max``,
``{c}__above``, ``{c}__steps``, ``{c}__vfirst``, ``{c}__vlast``.

The sampling interval of a series is the median over its windows of
``(last − first) / (n − 1)`` (else of the spacing of the windows' first samples), as
:func:`reliab.windows.finalize_windows` computes it; :func:`interval_values` gives the values
whose median it is, so that a reduction cut by time can check that the medians of its
pieces are the median of the whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from reliab.fleet._levels import above, steps_at_least
from reliab.fleet._segments import Blocks, Segments

Rows = dict[str, np.ndarray]


class OverlapError(ValueError):
    """A series comes in pieces that overlap in time, so the power-swing steps between them are undefined."""

_SUM = ("n", "__n", "__sum", "__above", "__steps")


def _how(name: str) -> str:
    if name in ("series", "window"):
        return "key"
    if name == "first":
        return "min"
    if name == "last":
        return "max"
    if name.endswith("__min"):
        return "fmin"
    if name.endswith("__max"):
        return "fmax"
    if name.endswith("__vfirst"):
        return "head"
    if name.endswith("__vlast"):
        return "tail"
    if name == "n" or name.endswith(_SUM):
        return "sum"
    raise ValueError(f"no merge rule for partial column {name!r}")


def _at(starts: np.ndarray, size: int) -> np.ndarray:
    return np.r_[starts[1:], size] - 1 if len(starts) else starts


def take(rows: Rows, index: np.ndarray) -> Rows:
    return {k: v[index] for k, v in rows.items()}


def size(rows: Rows) -> int:
    return len(rows["series"]) if rows else 0


def file_rows(tns: np.ndarray, series: np.ndarray, values: Mapping[str, np.ndarray], *, step: int,
              columns: Sequence[str], thresholds: Mapping[str, float], swings: Mapping[str, float]) -> Rows:
    """Partials of samples sorted by series then strictly increasing time (one file):
    sums, extremes and threshold counts of ``columns``, steps of the ``swings`` columns."""
    key = tns // step  # floor: window index since the epoch
    total = len(tns)
    if not total:
        return {}
    new = np.ones(total, dtype=bool)
    new[1:] = (series[1:] != series[:-1]) | (key[1:] != key[:-1])
    seg = Segments(np.flatnonzero(new), total)
    out: Rows = {"series": seg.first(series), "window": seg.first(key), "n": seg.counts,
                 "first": seg.first(tns), "last": seg.last(tns)}
    for c in columns:
        x = values[c]  # float32 or float64: sums in float64, comparisons with float64 levels
        total_c = seg.sum(x, dtype=np.float64)  # NaN where a segment holds a NaN sample
        if np.isnan(total_c).any():
            nan = np.isnan(x)
            out[f"{c}__n"] = seg.count(~nan)
            out[f"{c}__sum"] = seg.sum(np.where(nan, x.dtype.type(0), x), dtype=np.float64)
        else:
            out[f"{c}__n"] = seg.counts.copy()
            out[f"{c}__sum"] = total_c
        out[f"{c}__min"] = seg.fmin(x).astype(np.float64)
        out[f"{c}__max"] = seg.fmax(x).astype(np.float64)
        if c in thresholds:
            out[f"{c}__above"] = seg.count(above(x, thresholds[c]))  # float32 compared exactly, no cast
    for c, level in swings.items():
        x = values[c]
        inside = np.zeros(total, dtype=bool)
        inside[1:] = steps_at_least(x, level)  # NaN compares False: no step across a gap
        inside[seg.starts] = False  # a segment's first sample steps from another series or window
        out[f"{c}__steps"] = seg.count(inside)
        out[f"{c}__vfirst"] = seg.first(x, np.float64)
        out[f"{c}__vlast"] = seg.last(x, np.float64)
    return out


def stack(parts: Sequence[Rows], n_codes: int) -> tuple[Rows, np.ndarray]:
    """Rows of ``parts`` (each by series; parts in time order) by series, each series' rows
    in the order of the parts, and which rows come from ``parts[1:]``: a counting sort on
    the series codes, each column written once."""
    parts = [p if (np.diff(p["series"]) >= 0).all() else take(p, np.argsort(p["series"], kind="stable"))
             for p in parts]
    counts = [np.bincount(p["series"], minlength=n_codes) for p in parts]
    if all((c == c[0]).all() and c[0] for c in counts):  # every part holds each series as often
        shape = [(n_codes, int(c[0])) for c in counts]
        edges = np.cumsum([0] + [n for _, n in shape])
        rows = {}
        for k in parts[0]:  # each part's block of columns written in place (no concatenate)
            grid = np.empty((n_codes, int(edges[-1])), dtype=parts[0][k].dtype)
            for p, n, a, b in zip(parts, shape, edges[:-1], edges[1:], strict=True):
                grid[:, a:b] = p[k].reshape(n)
            rows[k] = grid.reshape(-1)
        return rows, np.concatenate([np.zeros(shape[0], bool)] + [np.ones(n, bool) for n in shape[1:]],
                                    axis=1).reshape(-1)
    total = np.sum(counts, axis=0)
    before = np.cumsum(total) - total  # where each series' rows start
    out = {k: np.empty(int(total.sum()), dtype=v.dtype) for k, v in parts[0].items()}
    fresh = np.ones(len(out["series"]), dtype=bool)
    for i, (p, c) in enumerate(zip(parts, counts, strict=True)):
        s = p["series"]
        pos = before[s] + np.arange(len(s)) - (np.cumsum(c) - c)[s]
        for k, v in p.items():
            out[k][pos] = v
        if i == 0:
            fresh[pos] = False
        before = before + c
    return out, fresh


def series_order(series: np.ndarray, first: np.ndarray) -> np.ndarray | None:
    """Order of rows by series, then first time (``None``: they are in it already): a stable
    sort of the series codes when the rows of each series already come in time (pieces
    concatenated in time, each sorted by series), else a sort on both keys."""
    ds = np.diff(series)
    if ((ds > 0) | ((ds == 0) & (first[1:] >= first[:-1]))).all():
        return None
    order = np.argsort(series, kind="stable")
    s, f = series[order], first[order]
    if ((s[1:] == s[:-1]) & (f[1:] < f[:-1])).any():
        order = np.lexsort((first, series))
    return order


def add_boundary_steps(rows: Rows, fresh: np.ndarray, swings: Mapping[str, float],
                       tail_last: np.ndarray, tail_value: Mapping[str, np.ndarray], names: Sequence[str],
                       ordered: bool = False) -> Rows:
    """Sort by series and first time (unless ``ordered``: they come so); add to each fresh row
    the step from the row (or tail) before it.

    ``tail_last``/``tail_value`` give, per series code, the last time and value before these
    rows (an earlier piece of the series; ``tail_last`` < 0: none).  Raises ``ValueError``
    when a fresh row starts before the previous piece of its series ends.
    """
    order = None if ordered else series_order(rows["series"], rows["first"])
    if order is not None:
        rows, fresh = take(rows, order), fresh[order]
    s = rows["series"]
    total = len(s)
    same = np.zeros(total, dtype=bool)
    same[1:] = s[1:] == s[:-1]
    prev_last = np.where(same, np.r_[-1, rows["last"][:-1]], tail_last[s])
    has_prev = same | (tail_last[s] >= 0)
    overlap = fresh & has_prev & (rows["first"] < prev_last)
    if overlap.any():
        i = int(np.flatnonzero(overlap)[0])
        host, gpu = names[int(s[i])]
        raise OverlapError(f"telemetry of series host={host} gpu={gpu} comes in partitions that overlap in time; "
                         "power swings need the partitions of a series to follow each other")
    for c, level in swings.items():
        prev = np.where(same, np.r_[np.nan, rows[f"{c}__vlast"][:-1]], tail_value[c][s])
        jump = fresh & has_prev & (np.abs(rows[f"{c}__vfirst"] - prev) >= float(level))
        rows[f"{c}__steps"] = rows[f"{c}__steps"] + jump.astype(np.int64)
    return rows


def merge(rows: Rows) -> Rows:
    """One row per series and window (pieces combined), sorted by series, window."""
    if not size(rows):
        return rows
    s, w, f = rows["series"], rows["window"], rows["first"]
    ordered = (np.diff(s) > 0) | ((np.diff(s) == 0) & ((np.diff(w) > 0) | ((np.diff(w) == 0) & (np.diff(f) >= 0))))
    if not ordered.all():  # already in order after add_boundary_steps
        rows = take(rows, np.lexsort((f, w, s)))
        s, w = rows["series"], rows["window"]
    new = np.ones(len(s), dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (w[1:] != w[:-1])
    if new.all():
        return rows
    starts = np.flatnonzero(new)
    ends = _at(starts, len(s))
    out: Rows = {}
    for k, v in rows.items():
        how = _how(k)
        out[k] = (v[starts] if how in ("key", "head") else v[ends] if how == "tail"
                  else {"sum": np.add, "min": np.minimum, "max": np.maximum, "fmin": np.fmin,
                        "fmax": np.fmax}[how].reduceat(v, starts))
    return out


Sketch = tuple[np.ndarray, np.ndarray, np.ndarray]


def sketch(codes: np.ndarray, values: np.ndarray, starts: np.ndarray | None = None) -> Sketch:
    """``values`` per code as distinct ``(code, value, count)`` triples (NaN dropped): what a
    median needs, a few triples per series when sampling is regular (``starts``: where each
    code's values start, when the codes come sorted)."""
    nan = np.isnan(values)
    if nan.any():
        codes, values = codes[~nan], values[~nan]
        starts = None
    if len(codes) and (starts is not None or (codes[1:] >= codes[:-1]).all()):
        # grouped by code: each code's first value (the usual one) is counted without a sort
        if starts is None:
            new = np.ones(len(codes), dtype=bool)
            new[1:] = codes[1:] != codes[:-1]
            starts = np.flatnonzero(new)
        if (values == values[0]).all():  # one value throughout (regular sampling): counts only
            return codes[starts], np.full(len(starts), values[0]), np.diff(np.r_[starts, len(codes)]).astype(np.int64)
        ref = np.repeat(values[starts], np.diff(np.r_[starts, len(codes)]))
        common = values == ref
        count = np.add.reduceat(common.astype(np.int64), starts)
        rest = _distinct(codes[~common], values[~common])
        return tuple(np.concatenate([a, b]) for a, b in  # type: ignore[return-value]
                     zip((codes[starts], values[starts], count), rest, strict=True))
    return _distinct(codes, values)


def _distinct(codes: np.ndarray, values: np.ndarray) -> Sketch:
    order = np.lexsort((values, codes))
    codes, values = codes[order], values[order]
    new = np.ones(len(codes), dtype=bool)
    new[1:] = (codes[1:] != codes[:-1]) | (values[1:] != values[:-1])
    starts = np.flatnonzero(new)
    return codes[starts], values[starts], np.diff(np.r_[starts, len(codes)]).astype(np.int64)


def _group_median(part: Sketch, n_codes: int) -> np.ndarray:
    """Median per code in ``range(n_codes)`` of the values a sketch counts; NaN for none."""
    codes, values, counts = part
    order = np.lexsort((values, codes))
    codes, values, counts = codes[order], values[order], counts[order]
    total = np.bincount(codes, weights=counts, minlength=n_codes).astype(np.int64)
    cum = np.cumsum(counts)
    start = np.r_[0, np.cumsum(total)[:-1]]
    out = np.full(n_codes, np.nan)
    has = total > 0
    lo = np.searchsorted(cum, start[has] + (total[has] - 1) // 2, side="right")
    hi = np.searchsorted(cum, start[has] + total[has] // 2, side="right")
    out[has] = (values[lo] + values[hi]) / 2.0
    return out


def interval_values(rows: Rows, prev_first: np.ndarray) -> tuple[Sketch, Sketch]:
    """Sketches (:func:`sketch`) of, per row (sorted by series, window), ``(last − first)/(n − 1)``
    in s and the spacing in s of its first sample from the series' previous window
    (``prev_first``: per series code, first time in s of the window before these; NaN none)."""
    first = rows["first"] / 1e9
    span = rows["last"] / 1e9
    span -= first
    steps = np.subtract(rows["n"], 1.0)  # the count cast to float64 in the subtraction
    per = np.full(len(steps), np.nan)
    np.divide(span, steps, out=per, where=steps > 0)
    s = rows["series"]
    same = np.zeros(len(s), dtype=bool)
    same[1:] = s[1:] == s[:-1]
    before = np.where(same, np.r_[np.nan, first[:-1]], prev_first[s])
    return sketch(s, per), sketch(s, first - before)


def intervals(per: Sketch, gaps: Sketch, n_codes: int) -> np.ndarray:
    """Sampling interval (s) per series code: median of ``per``, else median of ``gaps``."""
    within = _group_median(per, n_codes)
    across = _group_median(gaps, n_codes)
    return np.where(np.isnan(within), across, within)


def _keys(names: np.ndarray, plain: bool) -> object:
    """Key column as the local reduction gives it: pandas strings, or objects (missing: NaN)
    once swing counts are merged in on the keys."""
    text = pd.array(names, dtype="string")
    if not plain:
        return text
    out = np.asarray(text.astype(object))
    out[pd.isna(out)] = np.nan
    return out


def host_codes(names: Sequence[tuple[str, str | None]]) -> np.ndarray:
    """Per series name the rank of its host among the distinct hosts."""
    return np.unique(np.array([h for h, _ in names], dtype=object), return_inverse=True)[1]


def _blocks(host_code: np.ndarray, s: np.ndarray, w: np.ndarray) -> Blocks | None:
    """:class:`Blocks` of rows sorted by series then window when every host has as many
    series and every series the same consecutive windows (each host's windows are then the
    fold of its series' rows, no sort needed); ``None`` otherwise."""
    if not len(s):
        return None
    n_series = int(s[-1]) - int(s[0]) + 1
    if len(s) % n_series:
        return None
    width = len(s) // n_series
    codes = np.arange(int(s[0]), int(s[0]) + n_series)
    if not (s.reshape(n_series, width) == codes[:, None]).all():
        return None
    lo = int(w[0])
    if not (w.reshape(n_series, width) == np.arange(lo, lo + width)).all():
        return None
    per_host = np.bincount(host_code[codes])
    per_host = per_host[per_host > 0]
    if (per_host != per_host[0]).any():
        return None
    return Blocks(len(per_host), int(per_host[0]), width)


def finalize(rows: Rows, names: Sequence[tuple[str, str | None]], interval: np.ndarray, *, step: int,
             level: str, columns: Sequence[str], thresholds: Mapping[str, float], swings: Mapping[str, float],
             summed: Sequence[str]) -> pd.DataFrame:
    """Windows at ``level`` ("host" or "gpu") from merged rows sorted by series then window.

    The columns and their arithmetic are those of :func:`reliab.windows.finalize_windows`
    plus ``{c}_swings`` (mean over the series of the window of their steps).
    """
    out = fold(rows, names, interval, step=step, level=level, columns=columns, thresholds=thresholds,
               swings=swings, summed=summed)
    return frame(out, names, step=step, level=level, swings=swings)


def frame(out: Rows, names: Sequence[tuple[str, str | None]], *, step: int, level: str,
          swings: Mapping[str, float]) -> pd.DataFrame:
    """The windows frame of :func:`fold`'s arrays: keys from the names of each row's first
    series (``series``), window start times from ``window``."""
    s = out["series"]
    # the keys made once per series name, then taken per window row
    cols: dict[str, object] = {"host": _keys(np.array([h for h, _ in names], dtype=object), bool(swings))[s]}
    if level == "gpu":
        cols["gpu"] = _keys(np.array([g for _, g in names], dtype=object), bool(swings))[s]
    # window starts as UTC times: the int64 ns viewed as datetime64 (no parsing)
    start = np.multiply(out["window"], step, dtype=np.int64)
    cols["window"] = pd.DatetimeIndex(start.view("M8[ns]")).tz_localize("UTC")
    cols.update((k, v) for k, v in out.items() if k not in ("series", "window"))
    return pd.DataFrame(cols)


def fold(rows: Rows, names: Sequence[tuple[str, str | None]], interval: np.ndarray, *, step: int,
         level: str, columns: Sequence[str], thresholds: Mapping[str, float], swings: Mapping[str, float],
         summed: Sequence[str], host_code: np.ndarray | None = None) -> Rows:
    """The arithmetic of :func:`finalize` as arrays: per window at ``level``, ``series`` (the
    code of its first series), ``window`` (index) and the measured columns (``host_code``:
    :func:`host_codes` of ``names``, when already made)."""
    width_s = step / 1e9
    s = rows["series"]
    ival = interval[s]
    # observed hours min(n × interval, width) / 3600 per series and window, the largest per
    # window: both steps are monotone, so the largest n × interval is capped and scaled instead
    exposure = rows["n"] * ival
    w = rows["window"]
    seg: Segments | None = None
    if level == "host":
        host_code = host_codes(names) if host_code is None else host_code
        seg = _blocks(host_code, s, w)
        if seg is not None:
            def at(v: np.ndarray) -> np.ndarray:
                return v
        else:
            # rows come by series (host-major) then window: a stable sort on (host, window)
            # keeps each window's series in order
            lo = int(w.min()) if len(w) else 0
            group = host_code[s]
            order = np.argsort(group * (int(w.max()) - lo + 1 if len(w) else 1) + (w - lo), kind="stable")
            group, w = group[order], w[order]

            def at(v: np.ndarray) -> np.ndarray:
                return v[order]
    else:
        group = s

        def at(v: np.ndarray) -> np.ndarray:
            return v
    if seg is None:
        new = np.ones(len(s), dtype=bool)
        new[1:] = (group[1:] != group[:-1]) | (w[1:] != w[:-1])
        seg = Segments(np.flatnonzero(new), len(s))
    out: Rows = {"series": seg.first(at(s)), "window": seg.first(w)}
    out["hours"] = np.minimum(seg.fmax(at(exposure)), width_s) / 3600.0
    out["n_series"] = seg.counts
    out["n_samples"] = seg.sum(at(rows["n"]))

    def nansum(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ok = ~np.isnan(x)
        if ok.all():
            return seg.sum(x), seg.counts
        return seg.sum(np.where(ok, x, 0.0)), seg.count(ok)

    ival_o = at(ival)
    for c in columns:
        n_c = at(rows[f"{c}__n"])
        tot_n = seg.sum(n_c)
        measured = bool(n_c.min() > 0) if len(n_c) else True  # every row has a value of c
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"{c}_mean"] = np.where(tot_n > 0, seg.sum(at(rows[f"{c}__sum"])) / tot_n, np.nan)
            out[f"{c}_min"] = seg.fmin(at(rows[f"{c}__min"]))
            out[f"{c}_max"] = seg.fmax(at(rows[f"{c}__max"]))
            if c in thresholds:
                above = np.minimum(at(rows[f"{c}__above"]) * ival_o, width_s) / 3600.0
                tot, cnt = nansum(above if measured else np.where(n_c > 0, above, np.nan))
                out[f"{c}_hours_above"] = np.where(cnt > 0, tot / cnt, np.nan)
            if c in summed:
                mean = at(rows[f"{c}__sum"]) / n_c
                mean = mean if measured else np.where(n_c > 0, mean, np.nan)
                tot, cnt = nansum(mean)
                out[f"{c}_total"] = np.where(cnt > 0, tot, np.nan)
    for c in swings:
        out[f"{c}_swings"] = seg.sum(at(rows[f"{c}__steps"])) / seg.counts
    return out
