"""Two-parameter Weibull maximum likelihood with right censoring and left truncation.

Own vectorized solver.  With ``r`` failures, durations ``t_i`` and entry times ``e_i`` the
log-likelihood in scale ``alpha`` and shape ``beta`` is (Lawless 2003, *Statistical Models and
Methods for Lifetime Data*, 2nd ed., §5.2, with delayed entry as in §2.4)::

    l(alpha, beta) = r ln beta - r beta ln alpha + (beta - 1) sum_F ln t_i
                     - alpha^-beta S(beta),     S(beta) = sum_i (t_i^beta - e_i^beta).

For fixed ``beta`` the scale has the closed form ``alpha(beta) = (S(beta) / r)^(1/beta)``, so the
MLE solves the one-dimensional profile score with safeguarded Newton steps and analytic first
and second derivatives.  Times are scaled by their maximum to keep ``t^beta`` finite.

Intervals
---------
*Likelihood-ratio (profile)* intervals (Meeker & Escobar 1998, *Statistical Methods for
Reliability Data*, §8.3): for the shape, the roots of ``l_p(beta) = l_max - chi2_1(level) / 2``;
for the scale, B10 life and mean life, the extremes of the quantity over the likelihood region.
For a given ``beta`` the region's section in ``alpha`` has closed-form ends through the Lambert
W function, so each extreme is a bounded one-dimensional search over ``beta``.
*Wald* intervals use the observed information on the log scale of each quantity (delta method,
Meeker & Escobar 1998, §8.4).  Profile intervals are computed on first access and cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from reliab._checks import Check, contains, finite, in_range, positive
from reliab._deprecation import warn_renamed
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models import _interval
from reliab.models._interval_fits import bounds_from, weibull_fields, weibull_limits
from reliab.models._probplot import probability_plot
from reliab.models._survival_input import Lifetimes, as_lifetimes, check_conf_level

_MAX_SHAPE = 1e4


def _exp(x: float) -> float:
    """``exp(x)``, with ``inf`` past the float range (a tiny shape makes the mean life
    ``Gamma(1 + 1/shape)`` times the scale, which no float holds)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf
_LN_B10 = math.log(-math.log(0.9))


@dataclass(frozen=True)
class _Profile:
    """Log-times scaled by ``c = max(t)``: ``x = ln(t / c)``, ``y = ln(e / c)`` for ``e > 0``."""

    x: NDArray[np.float64]
    x2: NDArray[np.float64]
    y: NDArray[np.float64]
    y2: NDArray[np.float64]
    r: int
    sum_xf: float
    log_c: float
    x_entered: NDArray[np.float64]  # x of the units with e > 0, aligned with y
    x_not_entered: NDArray[np.float64]  # x of the units with e = 0

    def s0_paired(self, beta: float) -> float:
        """``S(beta)`` summed unit by unit as ``t^b (1 - (e/t)^b)``: no cancellation at small b."""
        if not self.y.size:
            return float(np.exp(beta * self.x).sum())
        w = np.exp(beta * self.x_entered)
        late = -float(w @ np.expm1(beta * (self.y - self.x_entered)))
        return float(np.exp(beta * self.x_not_entered).sum()) + late

    def sums(self, beta: float, order: int) -> tuple[float, float, float]:
        """``S(beta)`` and its first ``order`` derivatives in scaled units."""
        if order == 0:
            return self.s0_paired(beta), 0.0, 0.0
        w = np.exp(beta * self.x)
        s0, s1, s2 = float(w.sum()), 0.0, 0.0
        if order >= 1:
            s1 = float(self.x @ w)
        if order >= 2:
            s2 = float(self.x2 @ w)
        if self.y.size:
            v = np.exp(beta * self.y)
            s0 -= float(v.sum())
            s1 -= float(self.y @ v) if order >= 1 else 0.0
            s2 -= float(self.y2 @ v) if order >= 2 else 0.0
        return s0, s1, s2

    def loglik(self, beta: float, s0: float | None = None) -> float:
        """Profile log-likelihood ``l(alpha(beta), beta)`` in the data's time units."""
        s0 = self.sums(beta, 0)[0] if s0 is None else s0
        r = self.r
        if s0 <= 0.0:
            return -math.inf
        return (r * math.log(beta) - r * math.log(s0 / r) + (beta - 1.0) * self.sum_xf
                - r * self.log_c - r)

    def log_scale(self, beta: float, s0: float) -> float:
        """``ln alpha(beta)`` in the data's units."""
        return self.log_c + (math.log(s0) - math.log(self.r)) / beta


def _profile_from(data: Lifetimes) -> _Profile:
    log_c = float(np.log(data.durations.max()))
    x = np.log(data.durations) - log_c
    entered = data.entry > 0
    y = np.log(data.entry[entered]) - log_c
    return _Profile(x=x, x2=x * x, y=y, y2=y * y, r=data.n_failures,
                    sum_xf=float(x[data.observed].sum()), log_c=log_c, x_entered=x[entered],
                    x_not_entered=x[~entered])


def _check_identifiable(data: Lifetimes) -> None:
    r, n = data.n_failures, data.n
    if r < 2:
        raise InsufficientDataError(
            f"{r} failure(s) among {n} units; a Weibull fit needs at least 2 failures")
    t = data.durations
    if np.all(t == t[0]):
        raise InsufficientDataError(
            f"all {n} durations are identical ({t[0]:g}); the Weibull shape is not identifiable")
    if np.all(t[data.observed] == t.max()):
        raise InsufficientDataError(
            f"all {r} failures occur at the largest duration ({t.max():g}) with no later "
            "censoring; the Weibull shape MLE is infinite")
    if not np.any(t > data.entry):
        raise InsufficientDataError(f"none of the {n} units has time at risk (entry == duration)")


def _start_shape(p: _Profile, observed: NDArray[np.bool_]) -> float:
    """Moment start from the spread of log failure times (Gumbel sd = pi / (sqrt 6 beta))."""
    sd = float(np.std(p.x[observed]))
    return float(np.clip(math.pi / math.sqrt(6.0) / sd, 0.05, 50.0)) if sd > 0 else 1.0


def _solve_shape(p: _Profile, beta: float) -> tuple[float, int]:
    """Root of the profile score by Newton steps kept inside a shrinking bracket."""
    lo, hi, r = 0.0, math.inf, p.r
    for it in range(1, 201):
        s0, s1, s2 = p.sums(beta, 2)
        score = r / beta + p.sum_xf - r * s1 / s0
        slope = -r / beta**2 - r * (s2 * s0 - s1 * s1) / (s0 * s0)
        if score > 0:
            lo = beta
        else:
            hi = beta
        new = beta - score / slope if slope < 0 else math.nan
        if not (lo < new < hi):
            new = 2.0 * beta if math.isinf(hi) else (math.sqrt(lo * hi) if lo > 0 else hi / 2)
        if abs(new - beta) <= 1e-12 * beta or score == 0.0:
            return new, it
        if new > _MAX_SHAPE:
            raise InsufficientDataError(
                f"the Weibull shape estimate diverges (> {_MAX_SHAPE:g}) for {r} failures; "
                "the data do not identify the shape")
        beta = new
    raise InsufficientDataError(f"Weibull shape did not converge in 200 steps (last {beta:g})")


def _observed_information(p: _Profile, beta: float) -> NDArray[np.float64]:
    """Observed information of ``(ln alpha, ln beta)`` at the MLE, from the profile sums."""
    s0, s1, s2 = p.sums(beta, 2)
    r = p.r
    la = (math.log(s0) - math.log(r)) / beta  # ln(alpha / c)
    k = r / s0  # alpha^-beta in scaled units
    z1 = k * (s1 - la * s0)
    z2 = k * (s2 - 2 * la * s1 + la * la * s0)
    h_aa = -beta * beta * r
    h_ab = beta * z1
    h_bb = -r / beta**2 - z2
    hess = np.array([[h_aa, beta * h_ab], [beta * h_ab, beta * beta * h_bb]])
    return -hess


def _quantity_shift(name: str, beta: float) -> tuple[float, float]:
    """``h(beta)`` and ``beta h'(beta)`` where ``ln q = ln alpha + h(beta)``."""
    if name == "scale":
        return 0.0, 0.0
    if name == "b10_life":
        return _LN_B10 / beta, -_LN_B10 / beta
    if name == "mean_life":
        return float(special.gammaln(1 + 1 / beta)), -float(special.digamma(1 + 1 / beta)) / beta
    raise KeyError(name)


def _section(p: _Profile, beta: float, threshold: float) -> tuple[float, float]:
    """Ends of ``{ln alpha : l(alpha, beta) >= threshold}`` via the Lambert W function."""
    s0 = p.sums(beta, 0)[0]
    d = max((p.loglik(beta, s0) - threshold) / p.r, 0.0)
    arg = -math.exp(-1.0 - d)
    x_small = -special.lambertw(arg, 0).real
    x_large = -special.lambertw(arg, -1).real
    la = p.log_scale(beta, s0)
    return la - math.log(x_large) / beta, la - math.log(max(x_small, 1e-300)) / beta


def _shape_root(p: _Profile, beta_hat: float, threshold: float, se_log: float, side: int) -> float:
    """Profile-likelihood limit for the shape on one side (``side`` = -1 lower, +1 upper)."""
    def gap(b: float) -> float:
        return p.loglik(b) - threshold

    step = max(se_log, 1e-3)
    for _ in range(60):
        step *= 2.0
        edge = beta_hat * math.exp(side * step)
        if edge > _MAX_SHAPE * 10 or gap(edge) < 0:
            break
    if gap(edge) >= 0:
        return math.inf if side > 0 else 0.0
    a, b = sorted((beta_hat, edge))
    return float(optimize.brentq(gap, a, b, xtol=1e-13 * beta_hat, rtol=1e-14))


def _extreme(p: _Profile, name: str, bounds: tuple[float, float], threshold: float,
             side: int) -> float:
    """Smallest (side -1) or largest (side +1) value of quantity ``name`` on the LR region."""
    def objective(b: float) -> float:
        lo, hi = _section(p, b, threshold)
        return -side * ((hi if side > 0 else lo) + _quantity_shift(name, b)[0])

    lo_b, hi_b = bounds
    res = optimize.minimize_scalar(objective, bounds=(lo_b, hi_b), method="bounded",
                                   options={"xatol": 1e-10 * hi_b, "maxiter": 200})
    best = min(float(res.fun), objective(lo_b), objective(hi_b))
    return _exp(-side * best)


@dataclass(frozen=True)
class WeibullFit(ResultMixin):
    """Two-parameter Weibull fit: estimates, intervals, derived lives, survival and hazard."""

    scale: float
    shape: float
    log_likelihood: float
    aic: float
    n: int
    n_failures: int
    exposure: float
    conf_level: float
    iterations: int
    params_wald: pd.DataFrame = field(repr=False)
    cov_log: NDArray[np.float64] = field(repr=False)
    method: str = "maximum likelihood (profile Newton); LR (profile) and Wald intervals"
    notes: tuple[str, ...] = ()
    #: what the durations are: ``"lifetimes"`` of units, or ``"gaps"`` between the failures of
    #: a repairable system (then the shape is read as a renewal fit only, never as ageing)
    durations: str = "lifetimes"
    _profile: _Profile | None = field(default=None, repr=False, compare=False)
    _data: Lifetimes | None = field(default=None, repr=False, compare=False)
    _interval: Any = field(default=None, repr=False, compare=False)  # censored-data MLE

    @cached_property
    def _threshold(self) -> float:
        return self.log_likelihood - 0.5 * float(stats.chi2.ppf(self.conf_level, 1))

    @cached_property
    def _shape_interval(self) -> tuple[float, float]:
        if self._interval is not None:
            return weibull_limits(self._interval, "shape", self.conf_level)
        se = math.sqrt(self.cov_log[1, 1])
        return (_shape_root(self._profile, self.shape, self._threshold, se, -1),
                _shape_root(self._profile, self.shape, self._threshold, se, +1))

    def _lr_interval(self, name: str) -> tuple[float, float]:
        bounds = self._shape_interval
        if not all(map(math.isfinite, bounds)):
            return math.nan, math.nan
        if self._interval is not None:
            return weibull_limits(self._interval, name, self.conf_level)
        return (_extreme(self._profile, name, bounds, self._threshold, -1),
                _extreme(self._profile, name, bounds, self._threshold, +1))

    def _estimate(self, name: str) -> float:
        return _exp(math.log(self.scale) + _quantity_shift(name, self.shape)[0])

    @cached_property
    def params(self) -> pd.DataFrame:
        """Scale and shape: estimate with likelihood-ratio (profile) interval."""
        lo_s, hi_s = self._lr_interval("scale")
        lo_b, hi_b = self._shape_interval
        return pd.DataFrame({"estimate": [self.scale, self.shape], "low": [lo_s, lo_b],
                             "high": [hi_s, hi_b]}, index=pd.Index(["scale", "shape"]))

    @cached_property
    def quantities(self) -> pd.DataFrame:
        """B10 life and mean life with LR (profile) and Wald (log-scale) intervals."""
        rows = {}
        for name in ("b10_life", "mean_life"):
            est = self._estimate(name)
            lo, hi = self._lr_interval(name)
            wl, wh = _wald(self.cov_log, self.shape, name, est, self.conf_level)
            rows[name] = {"estimate": est, "low": lo, "high": hi, "wald_low": wl, "wald_high": wh}
        return pd.DataFrame.from_dict(rows, orient="index")

    @cached_property
    def shape_meaning(self) -> str:
        """Reading of the shape from its LR interval: burn-in, random, or wear-out for lifetimes.

        For ``durations="gaps"`` the reading is of a renewal fit (more regular, clustered or
        Poisson-like gaps): a hazard fitted to a repairable system's gaps says nothing about
        whether the system ages (Ascher & Feingold 1984, *Repairable Systems Reliability*,
        ch. 2); that is the trend test's question.
        """
        lo, hi = self._shape_interval
        if self.durations == "gaps":
            if lo > 1.0:
                return "as a renewal fit, the gaps are more regular than Poisson gaps"
            if hi < 1.0:
                return "as a renewal fit, the gaps come in bursts (more clustered than Poisson gaps)"
            return "as a renewal fit, the gaps are consistent with Poisson (exponential) gaps"
        if hi < 1.0:
            return "burn-in / infant mortality (decreasing hazard)"
        if lo > 1.0:
            return "wear-out (increasing hazard)"
        return "random (constant hazard)"

    def _meta(self) -> dict[str, Any]:
        meta = super()._meta()
        meta["shape_meaning"] = self.shape_meaning
        return meta

    def summary(self) -> pd.DataFrame:
        """Scale, shape, B10 and mean life with LR (``low``/``high``) and Wald intervals."""
        par = self.params.join(self.params_wald[["low", "high"]], rsuffix="_wald")
        par = par.rename(columns={"low_wald": "wald_low", "high_wald": "wald_high"})
        out = pd.concat([par, self.quantities])
        out.index.name = "quantity"
        return out

    def invariants(self) -> tuple[Check, ...]:
        """Scale, shape, B10 and mean life finite and > 0, inside their LR and Wald intervals."""
        tb = self.summary()
        return (positive("estimates_positive", tb["estimate"]),
                contains("lr_interval_contains_estimate", tb["low"], tb["estimate"], tb["high"]),
                contains("wald_interval_contains_estimate", tb["wald_low"], tb["estimate"],
                         tb["wald_high"]),
                finite("log_likelihood_finite", self.log_likelihood),
                finite("bounds_not_infinite", tb[["low", "high", "wald_low", "wald_high"]]
                       .to_numpy(), allow_nan=True),
                in_range("failures_at_most_n", self.n_failures, 1, self.n))

    def _sf(self, t: ArrayLike) -> NDArray[np.float64]:
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(-((np.asarray(t, dtype=float) / self.scale) ** self.shape))

    def _hazard(self, t: ArrayLike) -> NDArray[np.float64]:
        tt = np.asarray(t, dtype=float)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            return self.shape / self.scale * (tt / self.scale) ** (self.shape - 1.0)

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """The fitted model at time(s) ``t``: columns time, survival ``S(t) = exp(-(t /
        scale)^shape)``, cdf ``1 - S``, hazard ``(shape / scale) (t / scale)^(shape - 1)``."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        s = self._sf(tt)
        return pd.DataFrame({"time": tt, "survival": s, "cdf": 1.0 - s, "hazard": self._hazard(tt)})

    def survival(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["survival"]``."""
        warn_renamed("WeibullFit.survival(t)", 'WeibullFit.at(t)["survival"]')
        s = self._sf(t)
        return float(s) if s.ndim == 0 else s

    def hazard(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["hazard"]``."""
        warn_renamed("WeibullFit.hazard(t)", 'WeibullFit.at(t)["hazard"]')
        h = self._hazard(t)
        return float(h) if h.ndim == 0 else h

    def band(self, t: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Pointwise bounds of ``F(t)``: Fisher-matrix (Wald) bounds of ``u = ln(-ln(1 - F))``.

        ``u = beta (ln t - ln alpha)`` with ``Var(u) = beta^2 V_aa - 2 beta u V_ab + u^2 V_bb``
        from the covariance of ``(ln alpha, ln beta)`` (delta method; Meeker & Escobar 1998,
        §8.4.3), so the bounds are hyperbolas about the fitted line on Weibull paper.
        """
        tt = np.asarray(t, dtype=float)
        u = self.shape * (np.log(tt) - math.log(self.scale))
        v = self.cov_log
        var = self.shape**2 * v[0, 0] - 2 * self.shape * u * v[0, 1] + u * u * v[1, 1]
        half = float(stats.norm.ppf(0.5 + self.conf_level / 2)) * np.sqrt(np.maximum(var, 0.0))
        with np.errstate(over="ignore"):
            return -np.expm1(-np.exp(u - half)), -np.expm1(-np.exp(u + half))

    def plot(self, ax: Any = None, *, time_unit: str = "h") -> Figure:
        """Weibull probability paper: median-rank positions (Benard, Johnson's adjusted ranks
        for censored data), the fitted line and its pointwise Fisher-matrix bounds."""
        return probability_plot(self._data, lambda g: 1.0 - self._sf(g), "weibull",
                                f"Weibull plot: scale {self.scale:.4g} {time_unit}, shape "
                                f"{self.shape:.4g}", ax=ax, band=self.band, time_unit=time_unit,
                                conf_level=self.conf_level)


def _wald(cov: NDArray[np.float64], beta: float, name: str, estimate: float,
          level: float) -> tuple[float, float]:
    """Wald interval of a positive quantity on the log scale (delta method)."""
    if name == "shape":
        grad = np.array([0.0, 1.0])
    else:
        grad = np.array([1.0, _quantity_shift(name, beta)[1]])
    se = math.sqrt(float(grad @ cov @ grad))
    z = float(stats.norm.ppf(0.5 + level / 2))
    if not math.isfinite(estimate):
        return math.nan, math.nan
    return estimate * _exp(-z * se), estimate * _exp(z * se)


def fit_weibull_bounds(data: _interval.Bounds, level: float) -> WeibullFit:
    """A :class:`WeibullFit` from censored-data maximum likelihood (interval, left, right)."""
    f = weibull_fields(data)
    cov, shape = f["cov_log"], f["shape"]
    wald = {k: _wald(cov, shape, k, f[k], level) for k in ("scale", "shape")}
    params_wald = pd.DataFrame({"estimate": [f["scale"], shape],
                                "low": [wald["scale"][0], wald["shape"][0]],
                                "high": [wald["scale"][1], wald["shape"][1]]},
                               index=pd.Index(["scale", "shape"]))
    return WeibullFit(conf_level=level, params_wald=params_wald, **f)


def fit_weibull(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    entry: ArrayLike | None = None,
    conf_level: float = 0.95,
    upper: ArrayLike | None = None,
) -> WeibullFit:
    """Fit a two-parameter Weibull by maximum likelihood.

    Parameters
    ----------
    durations
        Failure or censoring time per unit (> 0).
    observed
        1/True = failed at its duration, 0/False = right-censored (``None``: all failed).
    entry
        Delayed-entry (left-truncation) time per unit; the likelihood is conditional on
        survival to entry, i.e. the cumulative hazard at entry is subtracted.
    conf_level
        Level of all intervals.
    upper
        Interval censoring: each unit failed in ``(durations, upper]`` (``upper ==
        durations``: exactly at its duration; ``durations == 0``: left-censored, failed before
        ``upper``; ``upper = inf`` or ``observed == 0``: right-censored at ``durations``).
        Durations may then be zero.  The likelihood gains the terms ``ln(F(upper) -
        F(durations))`` and ``ln F(upper)`` and is maximised numerically
        (:mod:`reliab.models._interval`); without ``upper`` the profile solver above is used.

    Returns
    -------
    WeibullFit
        ``scale``, ``shape``, ``params`` (LR intervals), ``params_wald``, ``quantities``
        (B10 and mean life), ``log_likelihood``, ``aic``, ``shape_meaning``.

    Raises
    ------
    InsufficientDataError
        Fewer than 2 failures, identical durations, or a shape MLE at infinity.
    ValueError
        Negative or zero durations, entry after duration, non-0/1 events.

    References
    ----------
    Lawless (2003), §5.2; Meeker & Escobar (1998), §8.2–8.4; NIST/SEMATECH e-Handbook of
    Statistical Methods, §8.4.1.3 (worked censored example).
    """
    level = check_conf_level(conf_level)
    if upper is not None:
        return fit_weibull_bounds(bounds_from(durations, observed, upper, entry), level)
    data = as_lifetimes(durations, observed, entry, positive=True)
    _check_identifiable(data)
    prof = _profile_from(data)
    beta, iterations = _solve_shape(prof, _start_shape(prof, data.observed))
    s0 = prof.sums(beta, 0)[0]
    scale = math.exp(prof.log_scale(beta, s0))
    loglik = prof.loglik(beta, s0)
    cov = np.linalg.inv(_observed_information(prof, beta))
    wald = {name: _wald(cov, beta, name, est, level)
            for name, est in (("scale", scale), ("shape", beta))}
    params_wald = pd.DataFrame({"estimate": [scale, beta],
                                "low": [wald["scale"][0], wald["shape"][0]],
                                "high": [wald["scale"][1], wald["shape"][1]]},
                               index=pd.Index(["scale", "shape"]))
    return WeibullFit(scale=scale, shape=beta, log_likelihood=loglik, aic=4.0 - 2.0 * loglik,
                      n=data.n, n_failures=data.n_failures,
                      exposure=float(np.sum(data.durations - data.entry)), conf_level=level,
                      iterations=iterations, params_wald=params_wald, cov_log=cov,
                      _profile=prof, _data=data)
