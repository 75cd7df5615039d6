"""Probability plots for lifetime distributions (plotting positions and linearizing scales).

Plotting positions for censored and truncated data come from the Kaplan–Meier estimate, taken
half-way between its values just before and at each failure time (Meeker & Escobar 1998,
*Statistical Methods for Reliability Data*, §6.4.2); for complete data this is Hazen's
``(i - 0.5) / n``.
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


def plotting_positions(data: Lifetimes) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Failure times and their KM-midpoint plotting positions ``F_i``."""
    rt = risk_table(data.durations, data.observed.astype(np.intp),
                    data.entry if data.has_entry else None, 2)
    surv = km_curve(rt, 1.0)[0]
    before = np.r_[1.0, surv[:-1]]
    keep = rt.counts[:, 1] > 0
    return rt.times[keep], 1.0 - 0.5 * (before[keep] + surv[keep])


def _axes_maps(scale: Scale) -> tuple[Callable[[NDArray[np.float64]], NDArray[np.float64]],
                                      Callable[[NDArray[np.float64]], NDArray[np.float64]], str]:
    """(x transform of time, y transform of probability, y-axis label)."""
    if scale == "weibull":
        return np.log, lambda p: np.log(-np.log1p(-p)), "ln(-ln(1 - F))"
    if scale == "exponential":
        return np.asarray, lambda p: -np.log1p(-p), "-ln(1 - F)"
    if scale == "lognormal":
        return np.log, stats.norm.ppf, "standard normal quantile of F"
    return np.log, special.logit, "logit(F)"


def probability_plot(
    data: Lifetimes,
    cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    scale: Scale,
    title: str,
    ax: Any = None,
) -> Figure:
    """Figure with the plotting positions and the fitted ``cdf`` on linearizing axes."""
    t, f = plotting_positions(data)
    fx, fy, ylabel = _axes_maps(scale)
    fig, ax = new_figure(ax, (6, 4.5))
    ax.scatter(fx(t), fy(f), s=14, color="C0", label="failures (KM plotting positions)")
    lo = float(np.min(t)) if t.size else float(np.min(data.durations[data.durations > 0]))
    hi = float(np.max(data.durations))
    grid = np.geomspace(max(lo, 1e-12) / 1.5, hi * 1.5, 200)
    p = np.clip(cdf(grid), 1e-12, 1 - 1e-12)
    ax.plot(fx(grid), fy(p), color="C3", label="fitted model")
    ax.set_xlabel("time" if scale == "exponential" else "ln(time)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="best")
    return fig
