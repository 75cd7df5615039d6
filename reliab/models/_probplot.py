"""Probability plots for lifetime distributions: probability paper, as Weibull++ or JMP draw it.

The y axis is the distribution's linearizing scale of the unreliability ``F`` (for the
Weibull, ``ln(-ln(1 - F))``) labelled in percent; the x axis is time on a log scale (linear
for the exponential).  Plotting positions are median ranks: Benard's approximation
``(r - 0.3) / (n + 0.4)`` at Johnson's adjusted rank ``r`` of each failure, which spreads the
suspensions (right-censored units) over the later failures (Johnson 1964, *The Statistical
Treatment of Fatigue Experiments*, Elsevier; Abernethy 2006, *The New Weibull Handbook*, 5th
ed., §2.11 and §2.15).  With delayed entry (left truncation), ranks have no meaning; the
positions are then the Kaplan–Meier estimate taken half-way between its values just before
and at each failure (Meeker & Escobar 1998, *Statistical Methods for Reliability Data*,
§6.4.2).  The fitted model is a line on the paper; where the fit gives a covariance, the
pointwise confidence band of ``F(t)`` is drawn around it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray
from scipy import special, stats

from reliab._result import new_figure
from reliab.models._survival_input import Lifetimes
from reliab.models.nonparametric import km_curve, risk_table

Scale = Literal["weibull", "exponential", "lognormal", "loglogistic"]
Band = Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]]
#: unreliability ticks of the probability paper, percent
TICKS_PCT = (0.1, 0.5, 1, 2, 5, 10, 20, 30, 50, 63.2, 80, 90, 99, 99.9)


def johnson_ranks(durations: Any, observed: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Failure times and Johnson's adjusted ranks (suspensions spread over later failures).

    Units are ordered by time, a failure before a suspension at the same time; each failure's
    rank is ``r_prev + (n + 1 - r_prev) / (1 + reverse rank)``, the reverse rank being the
    number of units at or after it in that order (Johnson 1964; Abernethy 2006, §2.11).
    """
    t = np.asarray(durations, dtype=float)
    f = np.asarray(observed, dtype=bool)
    order = np.lexsort((~f, t))  # by time, failures first among ties
    t, f = t[order], f[order]
    n = t.size
    reverse = n - np.arange(n)
    ranks = np.empty(int(f.sum()))
    prev, k = 0.0, 0
    for i in np.flatnonzero(f):
        prev += (n + 1 - prev) / (1 + reverse[i])
        ranks[k] = prev
        k += 1
    return t[f], ranks


def plotting_positions(data: Lifetimes) -> tuple[NDArray[np.float64], NDArray[np.float64], str]:
    """Failure times, their plotting positions ``F_i`` and the name of the rule used."""
    if not data.has_entry:
        t, r = johnson_ranks(data.durations, data.observed)
        return t, (r - 0.3) / (data.n + 0.4), "median ranks (Benard, Johnson's adjusted ranks)"
    rt = risk_table(data.durations, data.observed.astype(np.intp), data.entry, 2)
    surv = km_curve(rt, 1.0)[0]
    before = np.r_[1.0, surv[:-1]]
    keep = rt.counts[:, 1] > 0
    return rt.times[keep], 1.0 - 0.5 * (before[keep] + surv[keep]), "Kaplan-Meier midpoints"


def paper(scale: Scale) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """The linearizing transform of the unreliability ``F`` for ``scale``."""
    if scale == "weibull":
        return lambda p: np.log(-np.log1p(-p))
    if scale == "exponential":
        return lambda p: -np.log1p(-p)
    if scale == "lognormal":
        return stats.norm.ppf
    return special.logit


def probability_plot(
    data: Lifetimes,
    cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    scale: Scale,
    title: str,
    ax: Any = None,
    *,
    band: Band | None = None,
    time_unit: str = "h",
    conf_level: float | None = None,
) -> Figure:
    """Probability paper with the plotting positions, the fitted ``cdf`` and its band.

    Parameters
    ----------
    data : Lifetimes
        The fitted data.
    cdf : callable
        Fitted unreliability ``F(t)``.
    scale : {"weibull", "exponential", "lognormal", "loglogistic"}
        The paper.
    title : str
        Axes title.
    ax : matplotlib Axes, optional
        Where to draw.
    band : callable, optional
        ``t -> (F_low, F_high)``: pointwise confidence bounds of ``F(t)``.
    time_unit : str
        Unit of the durations, shown on the x axis.
    conf_level : float, optional
        Level of ``band``, for its legend.
    """
    t, f, rule = plotting_positions(data)
    fy = paper(scale)
    fig, ax = new_figure(ax, (6, 4.5))
    ax.scatter(t, fy(f), s=14, color="C0", label=f"failures ({rule})", zorder=3)
    lo = float(np.min(t)) if t.size else float(np.min(data.durations[data.durations > 0]))
    hi = float(np.max(data.durations))
    grid = np.geomspace(max(lo, 1e-12) / 1.5, hi * 1.5, 200)
    p = np.clip(cdf(grid), 1e-12, 1 - 1e-12)
    ax.plot(grid, fy(p), color="C3", label="fitted model")
    if band is not None:
        f_lo, f_hi = (np.clip(b, 1e-12, 1 - 1e-12) for b in band(grid))
        level = f"{conf_level:.0%} " if conf_level else ""
        ax.plot(grid, fy(f_lo), color="C3", ls="--", lw=0.9, label=f"{level}pointwise bounds")
        ax.plot(grid, fy(f_hi), color="C3", ls="--", lw=0.9)
    if scale != "exponential":
        ax.set_xscale("log")
    _probability_ticks(ax, fy, np.r_[f, p])
    ax.set_xlabel(f"time ({time_unit})")
    ax.set_ylabel("unreliability F(t) (%)")
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def _probability_ticks(ax: Any, fy: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                       shown: NDArray[np.float64]) -> None:
    """Percent ticks of the unreliability inside the range drawn."""
    top = max(float(np.nanmax(shown)), 0.9) if shown.size else 0.999
    bottom = min(float(np.nanmin(shown)), 0.05) if shown.size else 0.001
    ticks = np.array([q for q in TICKS_PCT if bottom * 100 / 2 <= q <= min(top * 100 * 1.02, 99.9)])
    ax.set_ylim(fy(np.array([max(bottom / 2, 1e-4)]))[0], fy(np.array([min(top, 0.9995)]))[0])
    ax.set_yticks(fy(ticks / 100.0), [f"{q:g}" for q in ticks])
