"""Synchronised power swings: step changes of GPU, node or cluster power, labelled and counted.

Llama 3 (arXiv 2407.21783, §3.3.4) reports that tens of thousands of GPUs raising or lowering
their power together — all waiting for a checkpoint or a collective, or the whole job
starting or stopping — swing the data centre's draw "on the order of tens of megawatts".
:func:`detect_power_swings` finds such steps in any power series; :func:`label_power_swings`
names their cause from the job timeline; :func:`analyze_power_swings` scales, labels and
counts them against a grid limit in MW and MW/s.

Detection uses one number from the user, ``min_step_w``.  The series is cut into legs by a
zig-zag filter with reversal ``min_step_w`` (a leg ends at an extreme once the series has
moved back from it by at least ``min_step_w``), so noise on a plateau never makes a swing
and every leg is a move of at least ``min_step_w`` (a staircase without reversal is one
move).  The level at each end of a leg is the median of the plateau its extreme sits on
(the samples around it within ``min_step_w / 2``), so a noisy extreme does not set it, and
``delta_w`` is the difference of the levels.  The ramp runs between the 10 % and 90 %
reference levels of the move (the transition-duration convention of IEEE Std 181-2011):
from the last sample still within 10 % of the old level to the first sample beyond 90 %.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.rates import confint_poisson

from reliab._checks import Check, contains, equal, in_range
from reliab._result import ResultMixin
from reliab.align import clean_series, epoch_s, issue_notes, issues_frame
from reliab.errors import InsufficientDataError
from reliab.models.environment.swing_labels import FAILURE_STATES, LABELS, label_power_swings, utc

SWING_COLUMNS = ("start", "end", "direction", "delta_w", "ramp_w_per_s", "level_before_w",
                 "level_after_w", "duration_s", "across_gap")


def _zigzag(x: list[float], r: float) -> list[int]:
    """Pivot indices of the zig-zag with reversal ``r``; consecutive pivots differ by >= r."""
    i_max = i_min = 0
    direction, ext = 0, 0
    pivots: list[int] = []
    for i in range(1, len(x)):
        v = x[i]
        if direction == 0:
            if v > x[i_max]:
                i_max = i
            if v < x[i_min]:
                i_min = i
            if x[i_max] - x[i_min] >= r:
                pivots.append(min(i_max, i_min))
                direction, ext = (1, i_max) if i_max > i_min else (-1, i_min)
        elif direction > 0:
            if v > x[ext]:
                ext = i
            elif x[ext] - v >= r:
                pivots.append(ext)
                direction, ext = -1, i
        else:
            if v < x[ext]:
                ext = i
            elif v - x[ext] >= r:
                pivots.append(ext)
                direction, ext = 1, i
    if direction != 0:
        pivots.append(ext)
    return pivots


def _ramp(x: np.ndarray, a: int, b: int, l0: float, l1: float) -> tuple[int, int]:
    """10 %–90 % ramp of the leg from pivot ``a`` to pivot ``b`` between levels ``l0``/``l1``."""
    seg = x[a:b + 1]
    move = l1 - l0
    d = 1.0 if x[b] > x[a] else -1.0
    if d * move <= 0:  # levels disagree with the leg: fall back to the pivots themselves
        l0, move = x[a], x[b] - x[a]
    end = int(np.flatnonzero(d * (seg - (l0 + 0.9 * move)) >= 0)[0])
    old = np.flatnonzero(d * (seg[:end + 1] - (l0 + 0.1 * move)) <= 0)
    start = int(old[-1]) if old.size else 0
    return a + min(start, max(end - 1, 0)), a + end


def _pivot_level(x: np.ndarray, p: int, half: float) -> float:
    """Median of the samples around pivot ``p`` that stay within ``half`` of it: the plateau
    the extreme sits on, whatever its own noise."""
    lo = p
    while lo > 0 and abs(x[lo - 1] - x[p]) < half:
        lo -= 1
    hi = p
    while hi + 1 < len(x) and abs(x[hi + 1] - x[p]) < half:
        hi += 1
    return float(np.median(x[lo:hi + 1]))


def _legs(x: np.ndarray, pivots: list[int], step: float
          ) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Ramp (start, end) of every leg and the level at every pivot."""
    levels = np.array([_pivot_level(x, p, step / 2) for p in pivots])
    ramps = [_ramp(x, a, b, levels[k], levels[k + 1])
             for k, (a, b) in enumerate(zip(pivots[:-1], pivots[1:], strict=True))]
    return ramps, levels


def _drop_transients(ramps: list[tuple[int, int]], levels: np.ndarray, t: np.ndarray,
                     min_s: float) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Remove pairs of opposite swings whose middle plateau is shorter than ``min_s``.

    Returns the kept ramps and their levels before and after.
    """
    kept: list[int] = []
    for k, r in enumerate(ramps):
        if min_s > 0 and kept and t[r[0]] - t[ramps[kept[-1]][1]] < min_s:
            kept.pop()  # the previous swing and this one bracket a short spike or dip
            continue
        kept.append(k)
    before = np.array([levels[k] for k in kept])
    after = np.array([levels[k + 1] for k in kept])
    # after a dropped spike the level before the next swing is the one the spike left
    for i in range(1, len(kept)):
        before[i] = after[i - 1] if kept[i] != kept[i - 1] + 1 else before[i]
    return [ramps[k] for k in kept], before, after


def detect_power_swings(
    power: pd.Series,
    *,
    min_step_w: float,
    min_duration_s: float = 0.0,
    max_gap_s: float | None = None,
) -> pd.DataFrame:
    """Step changes of a power series: onset, end, direction, size and ramp rate.

    Parameters
    ----------
    power : pandas.Series
        Power in watts indexed by UTC timestamps: one GPU, one node, or the cluster sum.
        Unsorted input is sorted, repeated timestamps averaged and missing values dropped;
        ``attrs["issues"]`` of the result reports each (records; see
        :func:`reliab.align.issues_frame`).
    min_step_w : float
        Smallest step reported, in watts (the only detection parameter).
    min_duration_s : float
        A new level must hold at least this long; a rise and a drop closer than this are a
        transient spike (or dip) and are both dropped.  Default 0: every step is kept.
    max_gap_s : float, optional
        Spacing above which two samples are not continuous; default five times the median
        spacing.  A ramp spanning such a gap has ``across_gap`` True and no ramp rate.

    Returns
    -------
    pandas.DataFrame
        One row per swing: ``start``, ``end`` (UTC), ``direction`` (``"drop"`` |
        ``"rise"``), ``delta_w`` (level after minus level before), ``ramp_w_per_s`` (change
        over the ramp / its duration), ``level_before_w``, ``level_after_w``,
        ``duration_s`` and ``across_gap``.

    Notes
    -----
    The ramp duration cannot be shorter than the sampling interval: with 1-minute samples
    a step that took one second reads as a 60-second ramp, so ``ramp_w_per_s`` is then a
    lower bound.  NVML power readings are themselves averaged over about a second.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.date_range("2024-06-01", periods=8, freq="1s", tz="UTC")
    >>> p = pd.Series([100, 101, 99, 700, 702, 698, 100, 101.0], index=t)
    >>> detect_power_swings(p, min_step_w=300)[["direction", "delta_w"]].round(0).values.tolist()
    [['rise', 600.0], ['drop', -600.0]]
    """
    if not np.isfinite(min_step_w) or min_step_w <= 0:
        raise ValueError(f"min_step_w must be a positive number of watts, got {min_step_w!r}")
    if min_duration_s < 0:
        raise ValueError(f"min_duration_s must be >= 0, got {min_duration_s!r}")
    series, issues = clean_series(power, name="power")
    empty = pd.DataFrame({c: pd.Series(dtype=d) for c, d in zip(
        SWING_COLUMNS, ["datetime64[ns, UTC]"] * 2 + ["string"] + ["float64"] * 5 + ["bool"],
        strict=True)})
    if len(series) < 2:
        empty.attrs["issues"] = issues.to_dict("records")
        return empty
    x = series.to_numpy(dtype=float)
    t = epoch_s(series.index)
    pivots = _zigzag(x.tolist(), float(min_step_w))
    ramps: list[tuple[int, int]] = []
    if len(pivots) > 1:
        legs, levels = _legs(x, pivots, float(min_step_w))
        ramps, before, after = _drop_transients(legs, levels, t, float(min_duration_s))
    if not ramps:
        empty.attrs["issues"] = issues.to_dict("records")
        return empty
    dt = np.diff(t)
    gap = float(max_gap_s) if max_gap_s is not None else 5.0 * float(np.median(dt))
    starts = np.array([r[0] for r in ramps])
    ends = np.array([r[1] for r in ramps])
    across = np.array([bool(np.any(dt[s:e] > gap)) for s, e in zip(starts, ends, strict=True)])
    dur = t[ends] - t[starts]
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = np.where(across | (dur <= 0), np.nan, (x[ends] - x[starts]) / dur)
    out = pd.DataFrame({
        "start": series.index[starts], "end": series.index[ends],
        "direction": pd.array(np.where(x[ends] > x[starts], "rise", "drop"), dtype="string"),
        "delta_w": after - before, "ramp_w_per_s": ramp, "level_before_w": before,
        "level_after_w": after, "duration_s": dur, "across_gap": across})
    if across.any():
        issues = pd.concat([issues, issues_frame([{
            "table": "power", "check": "gaps", "rows": int(across.sum()),
            "action": "ramp rate left missing",
            "detail": f"swing ramps spanning a gap longer than {gap:.4g} s"}])], ignore_index=True)
    out.attrs["issues"] = issues.to_dict("records")  # records: attrs are compared with ==
    return out


@dataclass(frozen=True)
class PowerSwingResult(ResultMixin):
    """Labelled power swings, scaled to the cluster, counted per day against a grid limit."""

    report_section = "environment"  # placement in the report (reliab.report.catalog)

    swings: pd.DataFrame = field(repr=False)
    per_day: pd.DataFrame = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    n: int
    days: float
    scale: float
    min_step_w: float
    grid_limit_mw: float | None
    grid_ramp_mw_per_s: float | None
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    issues: pd.DataFrame = field(default_factory=lambda: issues_frame([]), repr=False)
    power: pd.Series | None = field(default=None, repr=False, compare=False)

    def summary(self) -> pd.DataFrame:
        """Per label and in total: count, swings per day with exact Poisson interval, sizes
        and ramp rates (MW, MW/s) and the counts beyond the grid limits."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Counts >= 0, labels summing to the total; each rate per day inside its interval
        and = count / days."""
        t = self.table
        body, total = t[t["label"] != "Total"], t[t["label"] == "Total"]
        return (in_range("counts_nonnegative", t["count"], 0),
                equal("labels_sum_to_total", body["count"].sum(), total["count"].sum()),
                equal("rate_x_days_is_count", t["per_day"] * self.days,
                      t["count"].to_numpy(dtype=float), rtol=1e-6),
                contains("rate_in_interval", t["per_day_low"], t["per_day"], t["per_day_high"]))

    def plot(self, ax: Any = None) -> Any:
        """Power over time with the swings marked, and swing sizes against the grid limit."""
        from reliab.models.environment._figures import power_swing_figure

        return power_swing_figure(self, ax=ax)


def _per_day(sw: pd.DataFrame, t0: pd.Timestamp, t1: pd.Timestamp) -> pd.DataFrame:
    days = pd.date_range(t0.floor("D"), t1.floor("D"), freq="D", tz="UTC")
    day = utc(sw["start"]).dt.floor("D")
    table = pd.crosstab(day, sw["label"]).reindex(days, fill_value=0) if len(sw) else \
        pd.DataFrame(index=days)
    table.index.name = "day"
    table.columns.name = None
    table.insert(0, "swings", table.sum(axis=1).astype(int))
    for col in ("over_limit", "over_ramp"):
        if col in sw:
            table[col] = sw.groupby(day)[col].sum().reindex(days, fill_value=0).astype(int)
    return table.reset_index()


def _rate_row(name: str, sub: pd.DataFrame, days: float, level: float) -> dict:
    k = len(sub)
    lo, hi = confint_poisson(k, days, method="exact-c", alpha=1 - level)
    size = sub["delta_mw"].abs()
    return {"label": name, "count": k, "per_day": k / days, "per_day_low": float(lo),
            "per_day_high": float(hi),
            "median_abs_delta_mw": float(size.median()) if k else np.nan,
            "max_abs_delta_mw": float(size.max()) if k else np.nan,
            "median_ramp_mw_per_s": float(sub["ramp_mw_per_s"].abs().median()) if k else np.nan,
            "max_ramp_mw_per_s": float(sub["ramp_mw_per_s"].abs().max()) if k else np.nan,
            "over_limit": int(sub["over_limit"].sum()) if "over_limit" in sub else 0,
            "over_ramp": int(sub["over_ramp"].sum()) if "over_ramp" in sub else 0}


def analyze_power_swings(
    power: pd.Series,
    *,
    min_step_w: float,
    min_duration_s: float = 0.0,
    jobs: pd.DataFrame | None = None,
    interruptions: pd.DataFrame | None = None,
    scale: float = 1.0,
    grid_limit_mw: float | None = None,
    grid_ramp_mw_per_s: float | None = None,
    conf_level: float = 0.95,
    label_windows: dict[str, Any] | None = None,
) -> PowerSwingResult:
    """Detect, label, scale and count power swings; compare them with a grid limit.

    Parameters
    ----------
    power : pandas.Series
        Power in watts indexed by UTC timestamps (one GPU, a node, or the cluster sum).
    min_step_w, min_duration_s
        Passed to :func:`detect_power_swings` (in the units of ``power``, before scaling).
    jobs, interruptions : pandas.DataFrame, optional
        Canonical ``jobs`` and ``interruptions`` tables for :func:`label_power_swings`.
    scale : float
        Multiplier from the measured series to the power the grid sees, e.g. 16,384 to
        scale one GPU's steps to a 16k-GPU cluster swinging in sync (Llama 3 §3.3.4).
    grid_limit_mw, grid_ramp_mw_per_s : float, optional
        Limits on a step's size (MW) and ramp rate (MW/s); swings beyond either are counted.
    conf_level : float
        Level of the exact Poisson intervals on swings per day.
    label_windows : dict, optional
        Keyword arguments for :func:`label_power_swings` (``start_window``, ...).

    Returns
    -------
    PowerSwingResult
    """
    if not 0 < conf_level < 1:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive, got {scale!r}")
    for name, v in (("grid_limit_mw", grid_limit_mw), ("grid_ramp_mw_per_s", grid_ramp_mw_per_s)):
        if v is not None and not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")
    sw = detect_power_swings(power, min_step_w=min_step_w, min_duration_s=min_duration_s)
    issues = issues_frame(sw.attrs.get("issues", []))
    series, _ = clean_series(power, name="power")
    if len(series) < 2:
        raise InsufficientDataError(f"power has {len(series)} usable sample(s); need at least 2")
    sw = label_power_swings(sw, jobs=jobs, interruptions=interruptions, **(label_windows or {}))
    sw["delta_mw"] = sw["delta_w"] * scale / 1e6
    sw["ramp_mw_per_s"] = sw["ramp_w_per_s"] * scale / 1e6
    if grid_limit_mw is not None:
        sw["over_limit"] = sw["delta_mw"].abs() >= grid_limit_mw
    if grid_ramp_mw_per_s is not None:
        sw["over_ramp"] = sw["ramp_mw_per_s"].abs() >= grid_ramp_mw_per_s
    t0, t1 = series.index[0], series.index[-1]
    days = max((t1 - t0) / pd.Timedelta(days=1), 1e-9)
    rows = [_rate_row(lab, sw[sw["label"] == lab], days, conf_level) for lab in LABELS
            if (sw["label"] == lab).any()]
    rows.append(_rate_row("Total", sw, days, conf_level))
    step = f"{min_step_w / 1e6:.3g} MW" if min_step_w >= 1e5 else f"{min_step_w:.3g} W"
    notes = [f"{len(series):,} samples over {days * 24:,.0f} h; swings of at least "
             f"{step} in the measured series",
             "ramp rates are lower bounds when a step falls between two samples"]
    if scale != 1.0:
        notes.append(f"sizes scaled by {scale:g} (all units assumed to swing in sync)")
    if jobs is None:
        notes.append("no job timeline: only pauses (drop then rise) can be labelled")
    notes += issue_notes(issues)
    return PowerSwingResult(
        swings=sw, per_day=_per_day(sw, t0, t1), table=pd.DataFrame(rows), n=len(sw),
        days=float(days), scale=float(scale), min_step_w=float(min_step_w),
        grid_limit_mw=grid_limit_mw, grid_ramp_mw_per_s=grid_ramp_mw_per_s,
        conf_level=conf_level,
        method="zig-zag legs with reversal min_step_w, 10-90 % ramps (IEEE Std 181-2011); "
               "labels from the job timeline; exact Poisson intervals per day (Garwood 1936)",
        notes=tuple(notes), issues=issues, power=series)


__all__ = ["detect_power_swings", "label_power_swings", "analyze_power_swings",
           "PowerSwingResult", "SWING_COLUMNS", "LABELS", "FAILURE_STATES"]

