"""A run whose files hold disjoint windows, finished file by file instead of joined first.

Telemetry written per day (or any span that ends on a window edge) gives files whose
windows no other file of the run shares: no partial of one file merges with another's.  The
run is then reduced piece by piece: the carried window, then each file's partials in time
order.  Each piece takes its power-swing steps from the piece before it (the last sample
of each series carried in per-series arrays), and gives its sampling-interval values and
the first time of each series' last window to the next; once every piece has given its
values, the run's interval per series is their median, and each piece is folded to host (or
GPU) windows on its own.  The folded pieces are put in host then window order by one
stable sort of the window rows (a host's windows come in piece order, pieces in time order).

The arithmetic per window is that of :mod:`reliab.fleet._rows` on the same rows in the same
order, so the windows are bitwise those of the joined run; what is saved is the join: the
counting sort of every partial column of the run, the merge pass and the copies of the
finished rows.  Runs whose files share windows (a file cut inside a window) are joined as
before (:func:`reliab.fleet._chunk.reduce_run`).

Counts, sums and extremes are distributive aggregates and the windows' means algebraic
ones, so they can be finished per piece; the sampling interval is a median, a holistic
aggregate, which is why the pieces' interval values are collected before any piece is
folded (Gray et al., "Data Cube: A Relational Aggregation Operator Generalizing Group-By,
Cross-Tab, and Sub-Totals", Data Mining and Knowledge Discovery 1(1), 1997, §3.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from reliab.fleet import _rows
from reliab.fleet._rows import Rows

__all__ = ["disjoint", "reduce_pieces"]


def _ordered(rows: Rows) -> bool:
    """Rows strictly by series then window (one row per series and window)."""
    s, w = rows["series"], rows["window"]
    return bool(((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (w[1:] > w[:-1]))).all())


def disjoint(held: Rows, parts: Sequence[Rows]) -> bool:
    """Whether every window of each of ``parts`` (rows coded for the run) comes before every
    window of the next, the ``held`` window before all of them, and each part holds one row
    per series and window in order."""
    if not parts:
        return False
    before = int(held["window"].max()) if _rows.size(held) else None
    for p in parts:
        w = p["window"]
        if before is not None and int(w.min()) <= before:
            return False
        if not _ordered(p):
            return False
        before = int(w.max())
    return True


def _starts(series: np.ndarray) -> np.ndarray:
    """Index of each series' first row (rows by series)."""
    new = np.ones(len(series), dtype=bool)
    new[1:] = series[1:] != series[:-1]
    return np.flatnonzero(new)


def _after(x: np.ndarray, starts: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Per row the value of the row before it, and ``before`` at each series' first row."""
    out = np.empty_like(x)
    out[1:] = x[:-1]
    out[starts] = before
    return out


def _check_after(rows: Rows, starts: np.ndarray, tail_last: np.ndarray, names: Sequence[tuple[str, Any]]) -> None:
    """The check of :func:`reliab.fleet._rows.add_boundary_steps`: no row of a piece starts
    before the row (or the earlier piece) of its series before it ends."""
    s = rows["series"]
    head = tail_last[s[starts]]
    prev_last = _after(rows["last"], starts, head)
    overlap = rows["first"] < prev_last
    overlap[starts[head < 0]] = False  # the series' first row ever
    if overlap.any():
        i = int(np.flatnonzero(overlap)[0])
        host, gpu = names[int(s[i])]
        raise _rows.OverlapError(f"telemetry of series host={host} gpu={gpu} comes in partitions that overlap in time; "
                         "power swings need the partitions of a series to follow each other")


def _steps_after(rows: Rows, starts: np.ndarray, swings: Mapping[str, float], tail_last: np.ndarray,
                 tail_value: Mapping[str, np.ndarray]) -> Rows:
    """:func:`reliab.fleet._rows.add_boundary_steps` of a piece by series then window: each
    row's step from the row (or the earlier piece) of its series before it, the arithmetic
    of that function on the rows that have one."""
    s = rows["series"]
    none = starts[tail_last[s[starts]] < 0]  # first rows without an earlier sample
    out = dict(rows)
    for c, level in swings.items():
        prev = _after(rows[f"{c}__vlast"], starts, tail_value[c][s[starts]])
        jump = np.abs(rows[f"{c}__vfirst"] - prev) >= float(level)
        jump[none] = False
        out[f"{c}__steps"] = rows[f"{c}__steps"] + jump.astype(np.int64)
    return out


def _interval_values(done: Rows, starts: np.ndarray, prev_first: np.ndarray) -> tuple[_rows.Sketch, _rows.Sketch]:
    """:func:`reliab.fleet._rows.interval_values` of rows by series whose series start at ``starts``."""
    first = done["first"] / 1e9
    span = done["last"] / 1e9
    span -= first
    steps = np.subtract(done["n"], 1.0)
    per = np.full(len(steps), np.nan)
    np.divide(span, steps, out=per, where=steps > 0)
    s = done["series"]
    gap = first - _after(first, starts, prev_first[s[starts]])
    return _rows.sketch(s, per, starts), _rows.sketch(s, gap, starts)


def reduce_pieces(held: Rows, parts: Sequence[Rows], names: list[tuple[str, Any]], spec: Any, *, last: bool,
                  given: np.ndarray | None, tail_last: np.ndarray, tail_value: dict[str, np.ndarray],
                  prev_first: np.ndarray) -> dict[str, Any]:
    """The windows of a run whose ``parts`` are :func:`disjoint`, continuing the carried
    ``held`` rows and the per-series tails (``tail_last``/``tail_value``/``prev_first`` are
    updated in place to the run's end, as the next run sees it).

    Returns ``{"windows": frame or None, "held": rows of the window kept for the next run,
    "per"/"gaps": interval sketches, "used": intervals used (per code), "present": codes of
    the series with a finished window}``.
    """
    pieces = ([held] if _rows.size(held) else []) + list(parts)
    fresh_from = 1 if _rows.size(held) else 0
    top = int(parts[-1]["window"].max())
    keep_top = not last
    per: list[_rows.Sketch] = []
    gaps: list[_rows.Sketch] = []
    present: list[np.ndarray] = []
    done_pieces: list[Rows] = []
    new_held: Rows = {}
    for i, rows in enumerate(pieces):
        s = rows["series"]
        starts = _starts(s)
        if i >= fresh_from:
            _check_after(rows, starts, tail_last, names)
            if spec.swings:
                rows = _steps_after(rows, starts, spec.swings, tail_last, tail_value)
        ends = np.r_[starts[1:], len(s)] - 1
        tail_last[s[ends]] = rows["last"][ends]
        for c in spec.swings:
            tail_value[c][s[ends]] = rows[f"{c}__vlast"][ends]
        done = {k: rows[k] for k in ("series", "first", "last", "n")}
        if i == len(pieces) - 1:
            top_rows = rows["window"] == top if keep_top else np.zeros(len(s), bool)
            new_held = _rows.take(rows, np.flatnonzero(top_rows))  # empty columns on the last run, as joined
            if keep_top:
                done = _rows.take(done, np.flatnonzero(~top_rows))
                starts = _starts(done["series"])
        done_pieces.append(rows)
        if not _rows.size(done):
            continue
        p, g = _interval_values(done, starts, prev_first)
        per.append(p)
        gaps.append(g)
        dends = np.r_[starts[1:], len(done["series"])] - 1
        present.append(done["series"][dends])
        prev_first[done["series"][dends]] = done["first"][dends] / 1e9
    n_codes = len(names)
    none = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    per_all = _joined(per) if per else none
    gaps_all = _joined(gaps) if gaps else none
    used = _rows.intervals(per_all, gaps_all, n_codes) if given is None else given
    windows = None
    if present:
        windows = _windows(done_pieces, names, used, spec, top if keep_top else None)
    return {"windows": windows, "held": new_held, "per": per_all, "gaps": gaps_all, "used": used,
            "present": np.unique(np.concatenate(present)) if present else np.zeros(0, np.int64)}


def _joined(parts: list[_rows.Sketch]) -> _rows.Sketch:
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]


def _windows(pieces: list[Rows], names: list[tuple[str, Any]], used: np.ndarray, spec: Any,
             drop: int | None) -> pd.DataFrame:
    """Each piece folded to windows, the window ``drop`` left out, in key then window order."""
    kw = {"step": spec.step, "level": spec.level, "columns": spec.columns, "thresholds": spec.thresholds,
          "swings": spec.swings, "summed": spec.summed}
    host_code = _rows.host_codes(names) if spec.level == "host" else None
    folded = [_rows.fold(rows, names, used, **kw, host_code=host_code) for rows in pieces]
    if drop is not None:
        w = folded[-1]["window"]
        if (w == drop).any():
            folded[-1] = _rows.take(folded[-1], np.flatnonzero(w != drop))
    out = {k: np.concatenate([f[k] for f in folded]) for k in folded[0]}
    group = out["series"] if host_code is None else host_code[out["series"]]
    if len(folded) > 1:
        out = _rows.take(out, np.argsort(group, kind="stable"))
    return _rows.frame(out, names, step=spec.step, level=spec.level, swings=spec.swings)
