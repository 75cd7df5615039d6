"""Time between failures per system, from failure records: renewal fits and point-process trends.

Each system's failures (any unit) form one point process.  As a renewal process the gaps are
fitted with a two-parameter Weibull (:func:`reliab.fit_weibull`), as Schroeder & Gibson
("A large-scale study of failures in high-performance computing systems", DSN 2006, §5.2) fit
the LANL systems (shape 0.7-0.8: a decreasing hazard).  As a point process the failure times
are tested for a trend (Laplace, Cox & Lewis 1966; NIST/SEMATECH e-Handbook §8.2.3.4) and fitted
with the Crow-AMSAA power law (MIL-HDBK-189), counted from the system's first failure and
time-terminated at its last repair.

Records written to the minute give gaps of zero when two units fail in the same minute.  Time
resolution is data: the resolution of each system's stamps is inferred
(:func:`reliab.models.resolution.infer_resolution`) and, unless it is negligible against the
gaps, every gap ``g`` is the interval ``(max(g - r, 0), g + r)`` between two stamps of
resolution ``r`` (a zero gap ``(0, r)``), fitted by the interval likelihood of
:func:`reliab.fit_weibull` (``upper=``).  The count of zero gaps is given per system
(``zero_gaps``) and the method in the notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._checks import Check, contains, in_range
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models.growth import fit_crow_amsaa
from reliab.models.resolution import gap_bounds, infer_resolution, negligible
from reliab.models.trend import trend_test
from reliab.models.weibull import WeibullFit, fit_weibull

#: gaps a system needs for its fits
MIN_GAPS = 10


@dataclass(frozen=True)
class FailureGaps(ResultMixin):
    """Per system: the Weibull of the times between failures and the trend of the failure times.

    ``fits`` maps each system to its :class:`~reliab.models.weibull.WeibullFit`.
    """

    table: pd.DataFrame = field(repr=False)
    fits: Mapping[str, WeibullFit] = field(repr=False)
    n: int
    zero_gaps: int
    conf_level: float
    since: str | None = None
    method: str = ("gaps between consecutive failures of a system (any unit), Weibull by maximum likelihood"
                   " with profile-likelihood intervals; Laplace trend test and Crow-AMSAA on the failure"
                   " times from the system's first failure to its last repair (time-terminated)")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row per system: ``failures``, ``gaps``, ``zero_gaps``, ``shape`` (+ bounds), ``scale_h``,
        ``mean_gap_h``, ``laplace_p``, ``trend``, ``crow_beta`` (+ bounds)."""
        return self.table.copy()

    def trends(self) -> FailureTrends:
        """The point-process view of the same systems: trend test and Crow-AMSAA beta."""
        cols = ["system", "failures", "laplace_p", "trend", "crow_beta", "crow_beta_low", "crow_beta_high"]
        return FailureTrends(table=self.table[cols].copy(), n=self.n, conf_level=self.conf_level,
                             notes=("tied failure times (same minute) count once",))

    def invariants(self) -> tuple[Check, ...]:
        t = self.table
        return (contains("gap_shape_interval", t["shape_low"], t["shape"], t["shape_high"]),
                in_range("gap_shape_positive", t["shape"], 0.0),
                in_range("laplace_p_in_unit_interval", t["laplace_p"], 0.0, 1.0, allow_nan=True))


@dataclass(frozen=True)
class FailureTrends(ResultMixin):
    """Per system: is the failure rate falling, flat or rising?  Laplace test and Crow-AMSAA beta
    (below 1: failures thin out; above 1: they bunch up), from :func:`fit_failure_gaps`."""

    table: pd.DataFrame = field(repr=False)
    n: int
    conf_level: float
    method: str = ("Laplace test (Cox & Lewis 1966) and Crow-AMSAA power law (MIL-HDBK-189) on each system's"
                   " failure times from its first failure to its last repair (time-terminated)")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """``system``, ``failures``, ``laplace_p``, ``trend``, ``crow_beta`` (+ bounds)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        t = self.table
        return (contains("crow_beta_interval", t["crow_beta_low"], t["crow_beta"], t["crow_beta_high"]),
                in_range("laplace_p_in_unit_interval", t["laplace_p"], 0.0, 1.0))


def _gaps(starts: pd.Series) -> np.ndarray:
    """Hours between consecutive failure starts (sorted)."""
    t = np.sort(starts.to_numpy(dtype="datetime64[ns]"))
    return np.diff(t).astype("timedelta64[s]").astype(float) / 3600.0


def _system_row(name: str, starts: pd.Series, end: pd.Timestamp,
                conf_level: float) -> tuple[dict[str, Any], WeibullFit]:
    gaps = _gaps(starts)
    positive = gaps[gaps > 0]
    if positive.size < MIN_GAPS:
        raise InsufficientDataError(f"{positive.size} positive gap(s)")
    res = infer_resolution(starts)
    if negligible(gaps, res.hours):
        fit = fit_weibull(gaps, None, conf_level=conf_level)
    else:
        lower, upper = gap_bounds(gaps, res.hours)
        fit = fit_weibull(lower, None, upper=upper, conf_level=conf_level)
    lo, hi = fit.params.loc["shape", ["low", "high"]]
    times = np.cumsum(gaps)
    times = times[times > 0]
    window = max(float((end - starts.min()) / pd.Timedelta(hours=1)), float(times[-1]))
    lap = trend_test(times, end=window, method="laplace", conf_level=conf_level)
    crow = fit_crow_amsaa(times, end=window, conf_level=conf_level)
    b_lo, b_hi = crow.params.loc["beta", ["low", "high"]]
    return ({"system": name, "failures": int(starts.size), "gaps": int(gaps.size), "resolution": res.name,
             "zero_gaps": int((gaps == 0).sum()), "shape": fit.shape, "shape_low": float(lo),
             "shape_high": float(hi), "scale_h": fit.scale, "mean_gap_h": float(gaps.mean()),
             "laplace_p": lap.pvalue, "trend": lap.trend, "crow_beta": float(crow.params.loc["beta", "estimate"]),
             "crow_beta_low": float(b_lo), "crow_beta_high": float(b_hi)}, fit)


def fit_failure_gaps(failures: pd.DataFrame, *, since: Any = None, systems: Any = None,
                     conf_level: float = 0.95) -> FailureGaps:
    """Weibull of the times between failures and trend tests, per system.

    Parameters
    ----------
    failures : DataFrame
        Schema ``failures``.
    since : time, optional
        Only failures starting at or after this instant (e.g. ``"2003-01-01"``).
    systems : sequence, optional
        Only these systems.
    conf_level : float
        Level of every interval and of the trend decision.

    Returns
    -------
    FailureGaps
        Systems with fewer than :data:`MIN_GAPS` positive gaps are left out (named in the notes).
    """
    data = failures
    if since is not None:
        data = data[data["start"] >= pd.Timestamp(since, tz="UTC")]
    key = data["system"].astype("object").fillna("(none)")
    if systems is not None:
        data, key = data[key.isin([str(s) for s in systems])], key[key.isin([str(s) for s in systems])]
    rows, fits, few = [], {}, []
    for name, g in data.groupby(key, sort=False):
        try:
            last = g["end"].max() if g["end"].notna().any() else g["start"].max()
            row, fit = _system_row(str(name), g["start"], max(last, g["start"].max()), conf_level)
        except InsufficientDataError:
            few.append(str(name))
            continue
        rows.append(row)
        fits[str(name)] = fit
    if not rows:
        raise InsufficientDataError(f"no system has {MIN_GAPS} positive gaps between failures")
    table = pd.DataFrame(rows).sort_values("failures", ascending=False, kind="stable").reset_index(drop=True)
    zeros = int(table["zero_gaps"].sum())
    coarse = sorted(set(table["resolution"]) - {"nanosecond", "microsecond", "millisecond", "unknown"})
    notes = [f"times recorded to the {' / '.join(coarse) or 'second'}: each gap interval-censored to "
             f"within one unit either side where the resolution is not negligible against the gaps "
             f"({zeros} gap(s) of zero among them, none dropped); the trend tests count tied failures once"]
    if few:
        notes.append(f"{len(few)} system(s) with fewer than {MIN_GAPS} positive gaps not fitted: "
                     + ", ".join(sorted(few, key=str)[:12]))
    return FailureGaps(table=table, fits=fits, n=int(table["failures"].sum()), zero_gaps=zeros,
                       conf_level=conf_level, since=None if since is None else str(since), notes=tuple(notes))


__all__ = ["FailureGaps", "FailureTrends", "MIN_GAPS", "fit_failure_gaps"]
