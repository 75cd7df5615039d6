"""Diurnal cycle of throughput (or any series): amplitude, hour of the minimum, share due to heat.

Llama 3 (arXiv 2407.21783, §3.3.4) saw "a diurnal 1-2% throughput variation based on
time-of-day", caused by higher mid-day temperatures acting on GPU clock scaling.
:func:`diurnal_amplitude` measures it:

1. the series is averaged onto a regular grid (``freq``) aligned to whole periods;
2. STL (Cleveland, Cleveland, McRae & Terpenning 1990, *J. Official Statistics* 6, 3–73;
   statsmodels ``STL``) or MSTL with a weekly period as well (Bandara, Hyndman & Bergmeir
   2021, arXiv 2107.13462; statsmodels ``MSTL``) gives the trend;
3. the detrended series, relative to the mean level, is cut into days; the mean day is the
   diurnal profile and its peak-to-trough range is the amplitude in percent;
4. days are resampled with replacement — a block bootstrap whose blocks are whole periods
   (non-overlapping blocks, Carlstein 1986, *Annals of Statistics* 14, 1171–1179; Lahiri
   2003, *Resampling Methods for Dependent Data*, §2.5) — for a percentile interval of the
   amplitude and of the share of the profile explained by the temperature profile (R² of
   the throughput profile regressed on the temperature profile).

Gaps are interpolated for the decomposition only and left out of the profile; the share of
missing grid points is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from reliab._checks import Check, contains, finite, in_range
from reliab._result import ResultMixin
from reliab.align import clean_series, issue_notes
from reliab.errors import InsufficientDataError


@dataclass(frozen=True)
class DiurnalResult(ResultMixin):
    """Diurnal amplitude (peak-to-trough, % of level) with a day-block bootstrap interval."""

    report_section = "environment"  # placement in the report (reliab.report.catalog)

    amplitude_pct: float
    amplitude_low: float
    amplitude_high: float
    hour_of_min: float
    hour_of_max: float
    temperature_amplitude_c: float
    share_explained: float
    share_low: float
    share_high: float
    slope_pct_per_c: float
    level: float
    n: int
    cycles: int
    missing_share: float
    period_h: float
    tz: str
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    profile: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    components: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def summary(self) -> pd.DataFrame:
        """One row per quantity: estimate and interval (amplitude, temperature share, ...)."""
        rows = [("amplitude_pct", self.amplitude_pct, self.amplitude_low, self.amplitude_high),
                ("hour_of_min", self.hour_of_min, np.nan, np.nan),
                ("hour_of_max", self.hour_of_max, np.nan, np.nan),
                ("temperature_amplitude_c", self.temperature_amplitude_c, np.nan, np.nan),
                ("share_explained_by_temperature", self.share_explained, self.share_low,
                 self.share_high),
                ("profile_slope_pct_per_c", self.slope_pct_per_c, np.nan, np.nan)]
        return pd.DataFrame(rows, columns=["quantity", "estimate", "low", "high"])

    def invariants(self) -> tuple[Check, ...]:
        """Estimates finite (the temperature rows NaN only without temperature: not
        estimable); amplitude >= 0 and share in [0, 1], each inside its interval; hours of the
        day in [0, 24)."""
        temp = (self.temperature_amplitude_c, self.share_explained, self.slope_pct_per_c)
        shown = [self.amplitude_pct, self.hour_of_min, self.hour_of_max]
        return (finite("estimates_finite", shown + ([] if all(np.isnan(temp)) else list(temp))),
                in_range("amplitude_nonnegative", self.amplitude_pct, 0),
                contains("amplitude_in_interval", self.amplitude_low, self.amplitude_pct,
                         self.amplitude_high),
                in_range("share_in_unit_interval", [self.share_explained, self.share_low,
                                                    self.share_high], 0, 1, allow_nan=True),
                contains("share_in_interval", self.share_low, self.share_explained,
                         self.share_high),
                in_range("hours_of_day", [self.hour_of_min, self.hour_of_max], 0, 24))

    def plot(self, ax: Any = None) -> Any:
        """Mean daily profile (% of level) with its bootstrap band, and temperature."""
        from reliab.models.environment._figures import diurnal_figure

        return diurnal_figure(self, ax=ax)


def _grid(series: pd.Series, freq: str, period: pd.Timedelta) -> tuple[pd.Series, int]:
    """Mean per grid step on whole periods (UTC-aligned); missing steps are NaN."""
    step = pd.Timedelta(freq)
    per = int(round(period / step))
    if per < 4 or abs(per * step - period) > pd.Timedelta(0):
        raise ValueError(f"period ({period}) must be a whole multiple (>= 4) of freq ({freq})")
    binned = series.groupby(series.index.floor(step)).mean()
    start = series.index[0].floor(period)
    stop = series.index[-1].floor(period) + period
    index = pd.date_range(start, stop, freq=step, inclusive="left")
    return binned.reindex(index), per


def _trend(y: pd.Series, per: int, method: str) -> NDArray[np.float64]:
    from statsmodels.tsa.seasonal import MSTL, STL

    filled = y.interpolate(limit_direction="both").to_numpy(dtype=float)
    if method == "mstl" and len(filled) >= 2 * 7 * per:
        return np.asarray(MSTL(filled, periods=(per, 7 * per)).fit().trend)
    return np.asarray(STL(filled, period=per, robust=True).fit().trend)


def _covering(estimate: float, bounds: np.ndarray, what: str, notes: list[str]
              ) -> tuple[float, float]:
    """The percentile bounds, or NaN with a note when they miss the estimate: a statistic at a
    bound (a share near 1) or biased by resampling (a range) can have every replicate on one
    side of it (Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §5.3),
    and an interval beside its estimate is no interval for it."""
    lo, hi = (float(v) for v in bounds)
    if lo <= estimate <= hi or not np.isfinite(estimate):
        return lo, hi
    notes.append(f"the percentile bootstrap interval of the {what} ({lo:.6g}, {hi:.6g}) does "
                 "not contain the estimate (the replicates all lie on one side of it): no "
                 "interval is given")
    return math.nan, math.nan


def _profile_stats(w: NDArray[np.float64], d: NDArray[np.float64], mask: NDArray[np.float64],
                   dt: NDArray[np.float64] | None, mask_t: NDArray[np.float64] | None
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Weighted mean profiles for bootstrap weights ``w`` (B x days)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        prof = (w @ d) / (w @ mask)
        prof_t = (w @ dt) / (w @ mask_t) if dt is not None else None
    return prof, prof_t


def _share(prof: NDArray[np.float64], prof_t: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """R² and slope of the throughput profile on the temperature profile, per row."""
    y = prof - np.nanmean(prof, axis=-1, keepdims=True)
    x = prof_t - np.nanmean(prof_t, axis=-1, keepdims=True)
    sxy, sxx, syy = (np.nansum(x * y, axis=-1), np.nansum(x * x, axis=-1),
                     np.nansum(y * y, axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy**2 / (sxx * syy), sxy / sxx


def _day_matrix(y: pd.Series, trend: NDArray[np.float64], per: int, relative: bool
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    level = float(np.mean(trend))
    dev = (y.to_numpy(dtype=float) - trend) / (level if relative else 1.0)
    mask = np.isfinite(dev).astype(float)
    return (np.nan_to_num(dev).reshape(-1, per), mask.reshape(-1, per), level)


def diurnal_amplitude(
    series: pd.Series,
    *,
    temperature: pd.Series | None = None,
    period: str = "24h",
    freq: str = "1h",
    method: Literal["stl", "mstl"] = "stl",
    tz: str = "UTC",
    conf_level: float = 0.95,
    n_boot: int = 1000,
    seed: int | None = 0,
    min_cycles: int = 3,
    max_missing: float = 0.5,
) -> DiurnalResult:
    """Peak-to-trough diurnal amplitude of a series, in % of its level, with an interval.

    Parameters
    ----------
    series : pandas.Series
        E.g. training throughput, indexed by UTC timestamps.  Mark idle or down periods as
        missing (NaN) rather than zero.
    temperature : pandas.Series, optional
        Temperature (°C) on the same clock; gives the temperature profile, its amplitude and
        the share of the throughput profile it explains.
    period, freq : str
        Cycle length and grid step (pandas offsets); ``period / freq`` points per cycle.
    method : {"stl", "mstl"}
        Trend from STL with the daily period, or MSTL with daily and weekly periods.
    tz : str
        Time zone in which ``hour_of_min`` / ``hour_of_max`` are given (default UTC).
    conf_level : float
        Level of the percentile day-block bootstrap intervals.
    n_boot : int
        Bootstrap replicates.
    seed : int, optional
        Seed of the bootstrap generator.
    min_cycles : int
        Fewest whole cycles accepted.
    max_missing : float
        Largest share of missing grid points accepted.

    Returns
    -------
    DiurnalResult

    Raises
    ------
    InsufficientDataError
        Fewer than ``min_cycles`` cycles, or more than ``max_missing`` missing.
    """
    if not 0 < conf_level < 1:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if method not in ("stl", "mstl"):
        raise ValueError(f"method must be 'stl' or 'mstl', got {method!r}")
    if n_boot < 10:
        raise ValueError(f"n_boot must be >= 10, got {n_boot}")
    s, issues = clean_series(series, name="series")
    if len(s) < 4:
        raise InsufficientDataError(f"series has {len(s)} usable value(s)")
    period_td = pd.Timedelta(period)
    y, per = _grid(s, freq, period_td)
    cycles = len(y) // per
    missing = float(y.isna().mean())
    if cycles < min_cycles:
        raise InsufficientDataError(f"{cycles} whole cycle(s) of {period}; need {min_cycles}")
    if missing > max_missing:
        raise InsufficientDataError(f"{missing:.0%} of the {freq} grid is missing "
                                    f"(max_missing={max_missing:.0%})")
    trend = _trend(y, per, method)
    d, mask, level = _day_matrix(y, trend, per, relative=True)
    dt = mask_t = None
    temp_grid = None
    if temperature is not None:
        tser, t_issues = clean_series(temperature, name="temperature")
        issues = pd.concat([issues, t_issues], ignore_index=True)
        temp_grid = tser.groupby(tser.index.floor(pd.Timedelta(freq))).mean().reindex(y.index)
        if temp_grid.notna().sum() < per * min_cycles // 2:
            raise InsufficientDataError("temperature does not overlap the series")
        dt, mask_t, _ = _day_matrix(temp_grid, _trend(temp_grid, per, method), per,
                                    relative=False)
    ones = np.ones((1, cycles))
    prof, prof_t = _profile_stats(ones, d, mask, dt, mask_t)
    rng = np.random.default_rng(seed)
    w = np.stack([np.bincount(rng.integers(0, cycles, cycles), minlength=cycles)
                  for _ in range(n_boot)]).astype(float)
    bprof, bprof_t = _profile_stats(w, d, mask, dt, mask_t)
    amp = 100 * float(np.nanmax(prof) - np.nanmin(prof))
    bamp = 100 * (np.nanmax(bprof, axis=1) - np.nanmin(bprof, axis=1))
    a = (1 - conf_level) / 2
    notes: list[str] = []
    lo, hi = _covering(amp, np.nanquantile(bamp, [a, 1 - a]), "amplitude", notes)
    step_h = pd.Timedelta(freq) / pd.Timedelta(hours=1)
    shift = _tz_shift(y.index, tz)
    hours = (np.arange(per) * step_h + shift) % (period_td / pd.Timedelta(hours=1))
    share = share_lo = share_hi = slope = t_amp = np.nan
    notes[:0] = [f"{cycles} cycles of {period} on a {freq} grid; {missing:.1%} of grid points "
                 "missing (interpolated for the trend only)"]
    if prof_t is not None:
        r2, b = _share(prof[0], prof_t[0])
        share, slope = float(r2), 100 * float(b)
        bs, _ = _share(bprof, bprof_t)
        share_lo, share_hi = _covering(share, np.nanquantile(bs, [a, 1 - a]),
                                       "share explained by temperature", notes)
        t_amp = float(np.nanmax(prof_t) - np.nanmin(prof_t))
    notes += issue_notes(issues)
    bias = float(np.nanmean(bamp) - amp)
    notes.append(f"bootstrap mean minus estimate: {bias:+.3g} pp (a peak-to-trough range of a "
                 "noisy profile is biased upward; large values mean too few cycles)")
    profile = pd.DataFrame({"hour": hours, "deviation_pct": 100 * prof[0],
                            "low_pct": 100 * np.nanquantile(bprof, a, axis=0),
                            "high_pct": 100 * np.nanquantile(bprof, 1 - a, axis=0)})
    if prof_t is not None:
        profile["temperature_dev_c"] = prof_t[0]
    comp = pd.DataFrame({"time": y.index, "observed": y.to_numpy(), "trend": trend})
    if temp_grid is not None:
        comp["temperature"] = temp_grid.to_numpy()
    return DiurnalResult(
        amplitude_pct=amp, amplitude_low=lo, amplitude_high=hi,
        hour_of_min=float(hours[int(np.nanargmin(prof))]),
        hour_of_max=float(hours[int(np.nanargmax(prof))]), temperature_amplitude_c=t_amp,
        share_explained=share, share_low=share_lo, share_high=share_hi, slope_pct_per_c=slope,
        level=level, n=int(s.size), cycles=cycles, missing_share=missing,
        period_h=period_td / pd.Timedelta(hours=1), tz=tz, conf_level=conf_level,
        method=f"{method.upper()} trend; mean detrended cycle; percentile bootstrap over whole "
               f"cycles ({n_boot} replicates)", notes=tuple(notes),
        profile=profile.sort_values("hour", ignore_index=True), components=comp)


def _tz_shift(index: pd.DatetimeIndex, tz: str) -> float:
    """Hours to add to UTC clock hours to get local hours (at the middle of the series)."""
    mid = index[len(index) // 2]
    offset = mid.tz_convert(tz).utcoffset()
    return (offset.total_seconds() if offset is not None else 0.0) / 3600.0


__all__ = ["diurnal_amplitude", "DiurnalResult"]
