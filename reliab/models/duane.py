"""Duane reliability-growth model: log cumulative MTBF against log cumulative test time.

Duane (1964, "Learning curve approach to reliability monitoring", IEEE Trans. Aerospace 2,
563–566) observed that the cumulative MTBF ``M_c(t) = t / N(t)`` of a system under a
test-analyse-and-fix programme is close to a straight line on log–log paper:
``ln M_c(t) = ln b + α ln t``.  The growth rate ``α`` is the slope (0 no growth; 0.3–0.6
typical of an active programme) and the instantaneous MTBF is ``M_c(t) / (1 − α)``
(MIL-HDBK-189C (2011) §5.2, "Duane postulate"; NIST/SEMATECH e-Handbook §8.1.9.2, where
the Duane slope α relates to the Crow–AMSAA shape by ``β = 1 − α``).

Fit: ordinary least squares of ``y_j = ln(t_j / N(t_j))`` on ``x_j = ln t_j`` over the
distinct failure times ``t_j`` (tied failures are one point with the cumulative count).
Intervals: the usual t intervals of the regression slope and intercept with ``k − 2``
degrees of freedom.  The cumulative points are not independent (each includes all earlier
failures), so these intervals are descriptive; the Crow–AMSAA maximum-likelihood fit
(:func:`reliab.models.fit_crow_amsaa`) has exact intervals for the same model and is the
one to use for decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, finite, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._times import failure_times


@dataclass(frozen=True)
class DuaneResult(ResultMixin):
    """Duane fit; times in the unit of the input (hours in reliab)."""

    params: pd.DataFrame = field(repr=False)
    r_squared: float
    mtbf_cumulative: float
    mtbf_instantaneous: float
    n: int
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    points: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def alpha(self) -> float:
        """Growth rate: the slope of log cumulative MTBF on log time."""
        return float(self.params.loc["alpha", "estimate"])

    @property
    def b(self) -> float:
        """Cumulative MTBF at t = 1 (the line's intercept, exponentiated)."""
        return float(self.params.loc["b", "estimate"])

    def summary(self) -> pd.DataFrame:
        """Columns ``parameter`` (``alpha``, ``b``), ``estimate``, ``se``, ``low``, ``high``
        (``b`` on the MTBF scale: its se is of ``ln b``)."""
        return self.params.reset_index()

    def at(self, t: Any) -> pd.DataFrame:
        """Fitted cumulative MTBF ``b t^α`` and instantaneous MTBF ``b t^α / (1 − α)``."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        with np.errstate(divide="ignore", over="ignore"):
            cum = np.exp(math.log(self.b) + self.alpha * np.log(tt))
        inst = cum / (1 - self.alpha) if self.alpha < 1 else np.full_like(cum, np.nan)
        return pd.DataFrame({"time": tt, "mtbf_cumulative": cum, "mtbf_instantaneous": inst})

    def invariants(self) -> tuple[Check, ...]:
        """Estimates finite, each inside its interval; R² in [0, 1]."""
        p = self.params
        return (finite("estimates_finite", p["estimate"]),
                contains("interval_contains_estimate", p["low"], p["estimate"], p["high"]),
                in_range("r_squared_in_unit_interval", self.r_squared, 0, 1 + 1e-12))

    def plot(self, ax: Any = None) -> Any:
        """Duane plot: cumulative MTBF points and the fitted line on log–log axes."""
        return plot_duane(self, ax)


def _points(t: np.ndarray) -> pd.DataFrame:
    uniq, tied = np.unique(t, return_counts=True)
    count = np.cumsum(tied)
    return pd.DataFrame({"time": uniq, "failures": count, "cumulative_mtbf": uniq / count})


def fit_duane(times: Any, *, conf_level: float = 0.95) -> DuaneResult:
    """Fit the Duane model to the failure times of one system (or of a fleet's pooled test time).

    Parameters
    ----------
    times : array-like of float
        Cumulative test times at failure (> 0), any order.
    conf_level : float
        Two-sided confidence level of the slope and intercept intervals.

    Returns
    -------
    DuaneResult
        ``params`` (rows ``alpha``, ``b``), ``r_squared``, cumulative and instantaneous MTBF at
        the last failure, and ``points`` (time, failures, cumulative_mtbf) that were fitted.

    Raises
    ------
    InsufficientDataError
        Fewer than 3 distinct failure times (no residual degrees of freedom).
    ValueError
        A time missing, infinite or not positive, or ``conf_level`` outside (0, 1).

    Notes
    -----
    Duane (1964); MIL-HDBK-189C §5.2; NIST/SEMATECH e-Handbook §8.1.9.2.  Least squares on
    dependent cumulative points: see the module docstring for what the interval means.
    """
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    t = failure_times(times)
    pts = _points(t)
    k = len(pts)
    if k < 3:
        raise InsufficientDataError(f"the Duane fit needs at least 3 distinct failure times, got {k}")
    x = np.log(pts["time"].to_numpy())
    y = np.log(pts["cumulative_mtbf"].to_numpy())
    xm, ym = x.mean(), y.mean()
    sxx = float(np.sum((x - xm) ** 2))
    slope = float(np.sum((x - xm) * (y - ym))) / sxx
    icpt = ym - slope * xm
    resid = y - icpt - slope * x
    s2 = float(np.sum(resid**2)) / (k - 2)
    se_slope = math.sqrt(s2 / sxx)
    se_icpt = math.sqrt(s2 * (1 / k + xm**2 / sxx))
    q = stats.t.ppf(0.5 + conf_level / 2, k - 2)
    syy = float(np.sum((y - ym) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / syy if syy > 0 else 1.0
    params = pd.DataFrame(
        {"estimate": [slope, math.exp(icpt)], "se": [se_slope, se_icpt],
         "low": [slope - q * se_slope, math.exp(icpt - q * se_icpt)],
         "high": [slope + q * se_slope, math.exp(icpt + q * se_icpt)]},
        index=pd.Index(["alpha", "b"], name="parameter"))
    m_cum = float(t[-1] / t.size)
    notes: list[str] = []
    if slope >= 1:
        notes.append(f"α = {slope:.3g} >= 1: the instantaneous MTBF M_c/(1 − α) is undefined")
    m_inst = m_cum / (1 - slope) if slope < 1 else math.nan
    if k < t.size:
        notes.append(f"{t.size - k} tied failure time(s): one point per distinct time")
    return DuaneResult(
        params=params, r_squared=r2, mtbf_cumulative=m_cum, mtbf_instantaneous=m_inst,
        n=int(t.size), conf_level=conf_level,
        method=(f"Duane: least squares of ln cumulative MTBF on ln time over {k} distinct "
                f"failure times; t intervals with {k - 2} df (descriptive: cumulative points "
                "are dependent)"),
        notes=tuple(notes), points=pts)



def plot_duane(result: DuaneResult, ax: Any = None) -> Any:
    """Duane plot: cumulative MTBF at each failure and the fitted ``b t^α`` on log–log axes.

    Parameters
    ----------
    result : DuaneResult
        A fit from :func:`reliab.models.fit_duane`.
    ax : matplotlib Axes, optional
        Draw here; a new pyplot-free Figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = new_figure(ax)
    pts = result.points
    ax.plot(pts["time"], pts["cumulative_mtbf"], "o", label="cumulative MTBF")
    grid = np.geomspace(float(pts["time"].iloc[0]), float(pts["time"].iloc[-1]), 200)
    fitted = result.at(grid)
    ax.plot(grid, fitted["mtbf_cumulative"],
            label=f"b t^α, α = {result.alpha:.3g} (R² = {result.r_squared:.3f})")
    if result.alpha < 1:
        ax.plot(grid, fitted["mtbf_instantaneous"], ls="--", label="instantaneous MTBF")
    ax.set(xscale="log", yscale="log", xlabel="cumulative test time (h)", ylabel="MTBF (h)",
           title="Duane")
    ax.legend()
    return fig


__all__ = ["DuaneResult", "fit_duane", "plot_duane"]
