"""Fits of censored-data maximum likelihood (:mod:`reliab.models._interval`) as reliab results.

The Weibull fit becomes a :class:`~reliab.models.weibull.WeibullFit` whose likelihood-ratio
intervals are profile-likelihood roots over the general likelihood (Meeker & Escobar 1998,
*Statistical Methods for Reliability Data*, §8.3); the other families report Wald intervals,
on the log scale for positive parameters (§8.4), as the lifelines-backed fits do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special, stats

from reliab.models import _interval
from reliab.models._survival_input import Lifetimes

_LN_B10 = math.log(-math.log(0.9))
#: family -> names of theta's coordinates; a name in _LOG is the exp of its coordinate
NAMES: dict[str, tuple[str, ...]] = {
    "weibull": ("scale", "shape"), "exponential": ("scale",), "lognormal": ("mu", "sigma"),
    "loglogistic": ("scale", "shape"), "gamma": ("scale", "shape")}
_LOG = frozenset({"scale", "shape", "sigma"})


def bounds_from(durations: ArrayLike, observed: ArrayLike | None, upper: ArrayLike,
                entry: ArrayLike | None) -> _interval.Bounds:
    """Bounds from lower ends ``durations``, ``upper`` ends and right-censoring flags."""
    lo = np.asarray(durations, dtype=float)
    hi = np.asarray(upper, dtype=float).copy()
    if observed is not None:
        obs = np.asarray(observed, dtype=float)
        if obs.shape != lo.shape or not np.isin(obs, (0.0, 1.0)).all():
            raise ValueError("observed must hold one 0/1 value per duration")
        if hi.shape == lo.shape:
            hi[obs == 0] = np.inf
    return _interval.as_bounds(lo, hi, entry)


def _shift(name: str, log_shape: float) -> float:
    """``h`` with ``ln q = ln scale + h(shape)`` for the Weibull quantities."""
    beta = math.exp(log_shape)
    if name == "b10_life":
        return _LN_B10 / beta
    if name == "mean_life":
        return float(special.gammaln(1 + 1 / beta))
    return 0.0


def weibull_limits(mle: _interval.MLE, name: str, level: float) -> tuple[float, float]:
    """Profile-likelihood interval of the Weibull shape, scale, B10 or mean life."""
    la, lb = (float(x) for x in mle.theta_scaled)
    se = np.sqrt(np.diag(mle.cov))
    if name == "shape":
        lo, hi = mle.profile_limits(lambda v, f: np.array([f, v]), lb, la, float(se[1]), level)
        return math.exp(lo), math.exp(hi)
    h0 = _shift(name, lb)
    lo, hi = mle.profile_limits(lambda v, f: np.array([v - _shift(name, f), f]), la + h0, lb,
                                float(se[0]), level)
    c = math.log(mle.lik.c)
    return math.exp(lo + c), math.exp(hi + c)


def wald_params(mle: _interval.MLE, level: float) -> pd.DataFrame:
    """Estimates with Wald intervals (log scale for positive parameters)."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    rows = {}
    for i, name in enumerate(NAMES[mle.lik.family]):
        est, half = float(mle.theta[i]), z * math.sqrt(float(mle.cov[i, i]))
        if name in _LOG:
            rows[name] = (math.exp(est), math.exp(est - half), math.exp(est + half))
        else:
            rows[name] = (est, est - half, est + half)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "low", "high"])


def plotting_data(data: _interval.Bounds) -> Lifetimes:
    """Lifetimes for a probability plot: interval midpoints as failures, right-censored kept."""
    mid = np.where(data.right, data.lower, np.where(data.left, data.upper / 2,
                                                    (data.lower + data.upper) / 2))
    return Lifetimes(mid, ~data.right, data.entry, bool((data.entry > 0).any()))


def weibull_fields(data: _interval.Bounds) -> dict[str, Any]:
    """The fields of a :class:`~reliab.models.weibull.WeibullFit` from censored-data maximum
    likelihood, but its Wald table (``reliab.models.weibull.fit_weibull_bounds`` adds it)."""
    mle = _interval.fit("weibull", data)
    scale, shape = (math.exp(float(x)) for x in mle.theta)
    return dict(  # noqa: C408 - the dataclass's field names
        scale=scale, shape=shape, log_likelihood=mle.log_likelihood,
        aic=4.0 - 2.0 * mle.log_likelihood, n=data.n, n_failures=data.n_failures,
        exposure=float(np.sum(plotting_data(data).durations - data.entry)),
        iterations=mle.iterations, cov_log=mle.cov,
        method=("maximum likelihood with interval terms ln(F(b) - F(a)) (Nelder-Mead, Newton "
                "polish); LR (profile) and Wald intervals"),
        notes=(f"censored data: {data.counts()}",), _data=plotting_data(data),
        _interval=mle)
