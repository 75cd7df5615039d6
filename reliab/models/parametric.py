"""Parametric lifetime distributions with censoring and delayed entry, and AIC comparison.

Weibull routes to reliab's own profile-likelihood solver (:func:`reliab.models.fit_weibull`),
the generalized gamma and the 3-parameter Weibull to :mod:`.gengamma` and :mod:`.weibull3`
(asked for by name: not in the default set);
exponential, lognormal and log-logistic use lifelines' maximum-likelihood fitters, kept
reachable as ``ParametricFit.backend``.  Model choice by Akaike's information criterion follows
Meeker & Escobar (1998), *Statistical Methods for Reliability Data*, §11, and the worked
comparison of the NIST/SEMATECH e-Handbook §8.4.1.3 (Weibull AIC 154.27 vs lognormal 154.39).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from lifelines import ExponentialFitter, LogLogisticFitter, LogNormalFitter
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, contains, equal, finite, in_range
from reliab._deprecation import warn_renamed
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models import _interval
from reliab.models._interval_fits import bounds_from, plotting_data, wald_params
from reliab.models._probplot import probability_plot
from reliab.models._survival_input import Lifetimes, as_lifetimes, check_conf_level
from reliab.models.gengamma import GenGammaFit, fit_gengamma
from reliab.models.weibull import WeibullFit, fit_weibull, fit_weibull_bounds
from reliab.models.weibull3 import Weibull3Fit, fit_weibull3

Distribution = Literal["weibull", "exponential", "lognormal", "loglogistic", "gamma", "gengamma",
                       "weibull3"]
DISTRIBUTIONS: tuple[Distribution, ...] = ("weibull", "exponential", "lognormal", "loglogistic",
                                           "gamma")
#: fitted when named, not by default (three parameters; the 3-parameter Weibull may have none)
EXTRA_DISTRIBUTIONS: tuple[Distribution, ...] = ("gengamma", "weibull3")
_KNOWN = DISTRIBUTIONS + EXTRA_DISTRIBUTIONS
#: free parameters of each family (the AIC's k)
N_PARAMS = {"exponential": 1, "weibull": 2, "lognormal": 2, "loglogistic": 2, "gamma": 2,
            "gengamma": 3, "weibull3": 3}
#: three-parameter family -> the families it contains (its likelihood is at least theirs)
_NESTED = {"gengamma": ("weibull", "lognormal", "gamma", "exponential"),
           "weibull3": ("weibull", "exponential")}

# distribution -> (lifelines class, {lifelines parameter: our name}, parameters that are > 0)
_LIFELINES: dict[str, tuple[type, dict[str, str], frozenset[str]]] = {
    "exponential": (ExponentialFitter, {"lambda_": "scale"}, frozenset({"lambda_"})),
    "lognormal": (LogNormalFitter, {"mu_": "mu", "sigma_": "sigma"}, frozenset({"sigma_"})),
    "loglogistic": (LogLogisticFitter, {"alpha_": "scale", "beta_": "shape"},
                    frozenset({"alpha_", "beta_"})),
}


@dataclass(frozen=True)
class ParametricFit(ResultMixin):
    """A fitted lifetime distribution: parameters, likelihood, AIC, survival and plot."""

    distribution: str
    params: pd.DataFrame = field(repr=False)
    log_likelihood: float
    aic: float
    n: int
    n_failures: int
    conf_level: float
    interval_method: str
    backend: Any = field(repr=False, compare=False)
    notes: tuple[str, ...] = ()
    _data: Lifetimes | None = field(default=None, repr=False, compare=False)

    @property
    def method(self) -> str:
        """How the fit was made: the likelihood and the interval method."""
        return f"{self.distribution} maximum likelihood; {self.interval_method} intervals"

    def summary(self) -> pd.DataFrame:
        """Parameter table: estimate, low, high."""
        return self.params.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Parameters and log-likelihood finite; each interval contains its estimate; AIC =
        2k - 2 log L with k the family's parameter count."""
        k = N_PARAMS[self.distribution]
        return (finite("estimates_finite", [*self.params["estimate"], self.log_likelihood,
                                            self.aic]),
                equal("aic_is_2k_minus_2loglik", self.aic, 2.0 * k - 2.0 * self.log_likelihood,
                      rtol=1e-10),
                contains("interval_contains_estimate", self.params["low"],
                         self.params["estimate"], self.params["high"]),
                finite("bounds_not_infinite", self.params[["low", "high"]].to_numpy(),
                       allow_nan=True))

    def _sf(self, t: ArrayLike) -> NDArray[np.float64]:
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        if isinstance(self.backend, WeibullFit):
            return self.backend._sf(tt)
        if isinstance(self.backend, (_interval.MLE, GenGammaFit, Weibull3Fit)):
            return self.backend.sf(tt)
        return np.asarray(self.backend.survival_function_at_times(tt), dtype=float)

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """The fitted distribution at time(s) ``t``: columns time, survival, cdf."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        s = self._sf(tt)
        return pd.DataFrame({"time": tt, "survival": s, "cdf": 1.0 - s})

    def survival(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["survival"]``."""
        warn_renamed("ParametricFit.survival(t)", 'ParametricFit.at(t)["survival"]')
        s = self._sf(t)
        return float(s[0]) if np.ndim(t) == 0 else s

    def plot(self, ax: Any = None) -> Figure:
        """Probability plot on this distribution's linearizing scale with the fitted line."""
        axes = {"gamma": "lognormal", "gengamma": "lognormal", "weibull3": "weibull"}.get(
            self.distribution, self.distribution)
        title = (f"{self.distribution} fit on {axes} probability axes"
                 if axes != self.distribution else f"{self.distribution} probability plot")
        return probability_plot(self._data, lambda g: 1.0 - self._sf(g),
                                axes, title, ax=ax)  # type: ignore[arg-type]


def _lifelines_params(fitter: Any, names: dict[str, str], positive: frozenset[str],
                      level: float) -> pd.DataFrame:
    """Estimates with Wald intervals (log scale for positive parameters) from lifelines."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    cov = fitter.variance_matrix_
    rows = {}
    for raw, name in names.items():
        est = float(getattr(fitter, raw))
        se = math.sqrt(float(cov.loc[raw, raw]))
        if raw in positive:
            f = math.exp(z * se / est)
            rows[name] = (est, est / f, est * f)
        else:
            rows[name] = (est, est - z * se, est + z * se)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "low", "high"])


def _fit_bounds(data: _interval.Bounds, distribution: str, level: float) -> ParametricFit:
    """Censored-data maximum likelihood (interval and left censoring, and the gamma)."""
    shown = plotting_data(data)
    if distribution == "weibull":
        wf = fit_weibull_bounds(data, level)
        return ParametricFit(distribution="weibull", params=wf.params,
                             log_likelihood=wf.log_likelihood, aic=wf.aic, n=wf.n,
                             n_failures=wf.n_failures, conf_level=level,
                             interval_method="likelihood ratio (profile)", backend=wf,
                             notes=wf.notes, _data=shown)
    mle = _interval.fit(distribution, data)
    k = mle.theta.size
    return ParametricFit(distribution=distribution, params=wald_params(mle, level),
                         log_likelihood=mle.log_likelihood, aic=2.0 * k - 2.0 * mle.log_likelihood,
                         n=data.n, n_failures=data.n_failures, conf_level=level,
                         interval_method="Wald (log scale for positive parameters)",
                         backend=mle, notes=(f"censored data: {data.counts()}",), _data=shown)


def _wrap_three(fit: GenGammaFit | Weibull3Fit, distribution: str, level: float,
                shown: Lifetimes) -> ParametricFit:
    """A generalized gamma or 3-parameter Weibull fit as a ParametricFit (Wald intervals)."""
    if isinstance(fit, Weibull3Fit) and fit.status == "unbounded":
        raise InsufficientDataError(f"weibull3: {fit.notes[0]}")
    params = fit.params[["estimate", "low", "high"]]
    if isinstance(fit, Weibull3Fit) and fit.status == "at_lower_bound":
        params = params.drop(index="threshold")  # on its bound: no interval
    return ParametricFit(distribution=distribution, params=params,
                         log_likelihood=fit.log_likelihood, aic=fit.aic, n=fit.n,
                         n_failures=fit.n_failures, conf_level=level,
                         interval_method="Wald (log scale for positive parameters)",
                         backend=fit, notes=fit.notes, _data=shown)


def _fit_three(data: Lifetimes, distribution: str, level: float) -> ParametricFit:
    entry = data.entry if data.has_entry else None
    fn = fit_gengamma if distribution == "gengamma" else fit_weibull3
    return _wrap_three(fn(data.durations, data.observed, entry=entry, conf_level=level),
                       distribution, level, data)


def _fit_one(data: Lifetimes, distribution: str, level: float) -> ParametricFit:
    if distribution in EXTRA_DISTRIBUTIONS:
        return _fit_three(data, distribution, level)
    if distribution == "gamma":
        upper = np.where(data.observed, data.durations, np.inf)
        fit = _fit_bounds(_interval.as_bounds(data.durations, upper, data.entry), "gamma", level)
        return dataclasses.replace(fit, notes=(), _data=data)
    if distribution == "weibull":
        wf = fit_weibull(data.durations, data.observed,
                         entry=data.entry if data.has_entry else None, conf_level=level)
        return ParametricFit(distribution="weibull", params=wf.params, log_likelihood=wf.log_likelihood,
                             aic=wf.aic, n=wf.n, n_failures=wf.n_failures, conf_level=level,
                             interval_method="likelihood ratio (profile)", backend=wf, _data=data)
    cls, names, positive = _LIFELINES[distribution]
    fitter = cls().fit(data.durations, data.observed,
                       entry=data.entry if data.has_entry else None)
    return ParametricFit(distribution=distribution,
                         params=_lifelines_params(fitter, names, positive, level),
                         log_likelihood=float(fitter.log_likelihood_), aic=float(fitter.AIC_),
                         n=data.n, n_failures=data.n_failures, conf_level=level,
                         interval_method="Wald (log scale for positive parameters)",
                         backend=fitter, _data=data)


def _prepare(durations: ArrayLike, observed: ArrayLike | None, entry: ArrayLike | None,
             distribution: str) -> Lifetimes:
    if distribution not in _KNOWN:
        raise ValueError(f"distribution must be one of {_KNOWN}, got {distribution!r}")
    data = as_lifetimes(durations, observed, entry, positive=True)
    if data.n_failures < 1 or (distribution != "exponential" and data.n_failures < 2):
        need = 1 if distribution == "exponential" else 2
        raise InsufficientDataError(f"{data.n_failures} failure(s) among {data.n} units; a "
                                    f"{distribution} fit needs at least {need}")
    return data


def _fit_any(durations: ArrayLike, observed: ArrayLike | None, entry: ArrayLike | None,
             upper: ArrayLike | None, distribution: str, level: float) -> ParametricFit:
    if upper is None:
        return _fit_one(_prepare(durations, observed, entry, distribution), distribution, level)
    if distribution not in _KNOWN:
        raise ValueError(f"distribution must be one of {_KNOWN}, got {distribution!r}")
    if distribution == "weibull3":
        raise ValueError("the 3-parameter Weibull takes right-censored data only, not upper")
    if distribution == "gengamma":
        fit = fit_gengamma(durations, observed, entry=entry, upper=upper, conf_level=level)
        shown = plotting_data(bounds_from(durations, observed, upper, entry))
        return _wrap_three(fit, distribution, level, shown)
    return _fit_bounds(bounds_from(durations, observed, upper, entry), distribution, level)


def fit_parametric(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    entry: ArrayLike | None = None,
    distribution: Distribution = "weibull",
    conf_level: float = 0.95,
    upper: ArrayLike | None = None,
) -> ParametricFit:
    """Fit a lifetime distribution by maximum likelihood with censoring and delayed entry.

    Parameters
    ----------
    durations, observed, entry, upper
        As in :func:`reliab.models.fit_weibull`; with ``upper`` the data are interval-,
        left- or right-censored and every distribution is fitted by reliab's censored-data
        likelihood (:mod:`reliab.models._interval`).
    distribution
        ``"weibull"`` (own solver, LR intervals), ``"exponential"`` (parameter ``scale``, the
        mean life), ``"lognormal"`` (``mu``, ``sigma`` of log time), ``"loglogistic"``
        (``scale``, ``shape``), the three via lifelines, or ``"gamma"`` (``scale``,
        ``shape``: density ``t^(shape-1) exp(-t/scale) / (Gamma(shape) scale^shape)``,
        reliab's own likelihood); all but the Weibull with Wald intervals.  Named only:
        ``"gengamma"`` (``mu``, ``sigma``, ``Q``; :func:`reliab.models.fit_gengamma`) and
        ``"weibull3"`` (``threshold``, ``shape``, ``scale``; :func:`reliab.models.fit_weibull3`,
        right censoring only; raises InsufficientDataError where the likelihood has no maximum).
    conf_level
        Level of the parameter intervals.

    Returns
    -------
    ParametricFit

    References
    ----------
    Meeker & Escobar (1998), ch. 8 and 11; Lawless (2003), ch. 5–6.
    """
    level = check_conf_level(conf_level)
    return _fit_any(durations, observed, entry, upper, distribution, level)


@dataclass(frozen=True)
class DistributionComparison(ResultMixin):
    """Several distributions fitted to the same data, ranked by AIC (smallest first)."""

    fits: dict[str, ParametricFit] = field(repr=False)
    n: int
    n_failures: int
    conf_level: float = 0.95
    method: str = "maximum likelihood; ranked by AIC = 2k - 2 log L"
    notes: tuple[str, ...] = ()

    def plot(self, ax: Any = None) -> Figure:
        """AIC difference to the best distribution, one bar each (smaller is better)."""
        fig, ax = new_figure(ax, (6, 0.45 * len(self.fits) + 1.6))
        tb = self.summary().iloc[::-1]
        ax.barh(tb["distribution"], tb["delta_aic"], color="#4c78a8")
        ax.axvline(2.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("AIC - smallest AIC (dashed: 2, the usual 'no real difference' line)")
        ax.set_title("Distributions ranked by AIC")
        return fig

    def summary(self) -> pd.DataFrame:
        """Columns distribution, log_likelihood, aic, delta_aic, rank (1 = best)."""
        tb = pd.DataFrame({"distribution": list(self.fits),
                           "log_likelihood": [f.log_likelihood for f in self.fits.values()],
                           "aic": [f.aic for f in self.fits.values()]})
        tb = tb.sort_values("aic", kind="stable").reset_index(drop=True)
        tb["delta_aic"] = tb["aic"] - tb["aic"].iloc[0]
        tb["rank"] = np.arange(1, len(tb) + 1)
        return tb

    def invariants(self) -> tuple[Check, ...]:
        """AIC finite, differences to the best >= 0 (the best at 0), a three-parameter family's
        log-likelihood at least that of each family it contains, and every fit's own."""
        tb = self.summary()
        ll = {d: f.log_likelihood for d, f in self.fits.items()}
        gaps = [ll[big] - ll[small] for big, smalls in _NESTED.items() if big in ll
                for small in smalls if small in ll]
        nested = (in_range("three_parameter_not_below_nested", gaps, -1e-6),) if gaps else ()
        own = tuple(dataclasses.replace(c, name=f"{d}.{c.name}")
                    for d, f in self.fits.items() for c in f.invariants())
        return (finite("aic_finite", tb["aic"]), in_range("delta_aic_nonnegative",
                tb["delta_aic"], 0), in_range("best_delta_aic_zero", tb["delta_aic"].iloc[:1],
                                              0, 0), *nested, *own)

    @property
    def best(self) -> ParametricFit:
        """The fit with the smallest AIC."""
        return self.fits[str(self.summary()["distribution"].iloc[0])]


def compare_distributions(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    entry: ArrayLike | None = None,
    distributions: Sequence[Distribution] = DISTRIBUTIONS,
    conf_level: float = 0.95,
    upper: ArrayLike | None = None,
) -> DistributionComparison:
    """Fit each distribution to the same data and rank them by AIC.

    Parameters
    ----------
    durations, observed, entry, upper
        As in :func:`fit_parametric`.
    distributions
        Names to compare (default: the five two-parameter-or-fewer families); ``"gengamma"``
        and ``"weibull3"`` when named.  A 3-parameter Weibull without a maximum (shape < 1
        at the first failure) is left out and the notes say why.
    conf_level
        Level of each fit's parameter intervals.

    Returns
    -------
    DistributionComparison
        ``summary()`` has one row per distribution, best (smallest AIC) first.
    """
    if not distributions:
        raise ValueError("distributions is empty; give at least one distribution name")
    level = check_conf_level(conf_level)
    fits, left_out = {}, []
    for name in distributions:
        try:
            fits[name] = _fit_any(durations, observed, entry, upper, name, level)
        except InsufficientDataError as exc:
            if name != "weibull3" or len(distributions) == 1:
                raise
            left_out.append(f"weibull3 left out: {exc}")
    first = next(iter(fits.values()))
    return DistributionComparison(fits=fits, n=first.n, n_failures=first.n_failures,
                                  conf_level=level, notes=(*first.notes, *left_out))
