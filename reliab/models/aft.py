"""Accelerated-failure-time (AFT) regression: Weibull, exponential, lognormal, log-logistic.

``log T = x' beta + sigma * W`` with ``W`` standard extreme-value (Weibull; the exponential
fixes ``sigma = 1``), normal (lognormal) or logistic (log-logistic): a covariate multiplies
every quantile of the lifetime by ``exp(beta_j)`` (Kalbfleisch & Prentice 2002, *The
Statistical Analysis of Failure Time Data*, §2.3.3; Meeker & Escobar 1998, *Statistical
Methods for Reliability Data*, ch. 17).  Right, interval and left censoring, delayed entry
(left truncation) and case weights; covariates by formula (``C(x)`` categorical, treatment
contrasts named ``x[T.level]``, as :mod:`reliab.models.formula`).  Estimates by Newton–Raphson
on the log-location-scale likelihood (:mod:`._aft_core`), the parametrisation and the
covariance of R's ``survreg`` (intercept, covariates, ``log(scale)``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, contains, equal, finite, in_range, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models import _aft_core as core
from reliab.models._survival_input import check_conf_level
from reliab.models.formula import Design, design_matrix

AFTDistribution = Literal["weibull", "exponential", "lognormal", "loglogistic"]
INTERCEPT = "(Intercept)"


@dataclass(frozen=True)
class AFTFit(ResultMixin):
    """AFT fit: coefficient table, scale, likelihood, AIC and predictions for new rows."""

    distribution: str
    table: pd.DataFrame = field(repr=False)
    scale: float
    log_scale: float
    log_scale_se: float
    log_likelihood: float
    log_likelihood_null: float
    aic: float
    n: int
    n_events: int
    conf_level: float
    iterations: int
    cov: pd.DataFrame = field(repr=False)
    method: str = "log-location-scale maximum likelihood, Newton-Raphson; Wald intervals"
    notes: tuple[str, ...] = ()
    _design: Design | None = field(default=None, repr=False, compare=False)

    @property
    def n_params(self) -> int:
        """Coefficients plus the scale (none for the exponential)."""
        return len(self.table) + (self.distribution != "exponential")

    def summary(self) -> pd.DataFrame:
        """term, coef, se, z, p, low, high, time_ratio (``exp(coef)``) per coefficient."""
        return self.table.reset_index(names="term")

    def invariants(self) -> tuple[Check, ...]:
        """Estimates finite, se > 0, intervals contain estimates, p in [0, 1], scale > 0,
        AIC = 2k - 2 log L, the fit at least as likely as the intercept-only model."""
        tb = self.table
        return (finite("coef_se_finite", [*tb["coef"], *tb["se"], self.log_likelihood,
                                          self.log_scale]),
                positive("se_positive", tb["se"]),
                contains("interval_contains_coef", tb["low"], tb["coef"], tb["high"]),
                in_range("p_in_unit_interval", tb["p"], 0, 1),
                positive("scale_positive", [self.scale]),
                equal("aic_is_2k_minus_2loglik", self.aic,
                      2.0 * self.n_params - 2.0 * self.log_likelihood, rtol=1e-12),
                in_range("fit_not_below_null", [self.log_likelihood - self.log_likelihood_null],
                         -1e-8 * abs(self.log_likelihood_null)))

    def plot(self, ax: Any = None) -> Figure:
        """Time ratio ``exp(coef)`` of each covariate with its interval (log axis; 1 = no effect)."""
        tb = self.table.drop(index=INTERCEPT)
        fig, ax = new_figure(ax, (6, 0.45 * max(len(tb), 1) + 1.6))
        y = np.arange(len(tb))
        r, lo, hi = (np.exp(tb[c].to_numpy()) for c in ("coef", "low", "high"))
        ax.errorbar(r, y, xerr=[r - lo, hi - r], fmt="o", color="#4c78a8")
        ax.axvline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, list(tb.index))
        ax.set_xscale("log")
        ax.set_xlabel(f"time ratio (AFT {self.distribution}, {self.conf_level:.0%} interval)")
        return fig

    def _linear(self, new: pd.DataFrame) -> NDArray[np.float64]:
        x = _new_design(self._design, new, list(self.table.index))
        return x @ self.table["coef"].to_numpy()

    def quantiles(self, new: pd.DataFrame, p: Sequence[float] = (0.5,)) -> pd.DataFrame:
        """Lifetime quantiles for each row of ``new`` (columns ``q0.5`` ...): ``exp(x'b + s z_p)``."""
        pp = np.asarray(p, dtype=float)
        if np.any((pp <= 0) | (pp >= 1)):
            raise ValueError(f"quantile probabilities must lie in (0, 1), got {list(pp)}")
        eta = self._linear(new)
        z = core.q0(core.BASE[self.distribution], pp)
        q = np.exp(eta[:, None] + self.scale * z[None, :])
        return pd.DataFrame(q, index=new.index, columns=[f"q{v:g}" for v in pp])

    def median(self, new: pd.DataFrame) -> NDArray[np.float64]:
        """Median lifetime for each row of ``new``."""
        return self.quantiles(new, (0.5,)).iloc[:, 0].to_numpy()

    def survival(self, new: pd.DataFrame, t: ArrayLike) -> pd.DataFrame:
        """Survival probability at time(s) ``t`` (columns) for each row of ``new`` (rows)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        if np.any(tt <= 0):
            raise ValueError("survival times must be > 0")
        z = (np.log(tt)[None, :] - self._linear(new)[:, None]) / self.scale
        s = core.s0(core.BASE[self.distribution], z)
        return pd.DataFrame(s, index=new.index, columns=list(tt))


def _new_design(design: Design | None, new: pd.DataFrame, names: list[str]) -> NDArray[np.float64]:
    """Design rows for ``new`` coded as at fit time (unknown levels are an error)."""
    if design is None:
        raise ValueError("this fit carries no design; refit with fit_aft")
    cols: dict[str, np.ndarray] = {INTERCEPT: np.ones(len(new))}
    for term in design.terms:
        if term.name not in new.columns:
            raise ValueError(f"new rows lack the model column {term.name!r}")
        s = new[term.name]
        if term.name not in design.levels:
            cols[term.name] = s.to_numpy(dtype=float)
            continue
        text = s.astype(object).map(str).to_numpy()
        unknown = sorted(set(text) - set(design.levels[term.name]))
        if unknown:
            raise ValueError(f"level(s) {unknown} of {term.name!r} were not in the fitted data "
                             f"(levels {list(design.levels[term.name])})")
        for level in design.levels[term.name]:
            if level != design.references[term.name]:
                cols[f"{term.name}[T.{level}]"] = (text == level).astype(float)
    return np.column_stack([cols[n] for n in names])


def _column(df: pd.DataFrame, name: str | None, what: str) -> NDArray[np.float64] | None:
    if name is None:
        return None
    if name not in df.columns:
        raise ValueError(f"{what} column {name!r} not in the data (columns: {list(df.columns)})")
    v = df[name].to_numpy(dtype=float)
    if np.isnan(v).any():
        raise ValueError(f"{what} column {name!r} has {int(np.isnan(v).sum())} missing value(s)")
    return v


def _aft_data(df: pd.DataFrame, x: NDArray[np.float64], duration: str, event: str | None,
              upper: str | None, entry: str | None, weights: str | None) -> core.AFTData:
    time = _column(df, duration, "duration")
    n = time.size
    ev = _column(df, event, "event")
    ev = np.ones(n, bool) if ev is None else ev.astype(bool)
    up = _column(df, upper, "upper")
    up = np.full(n, np.inf) if up is None else up
    en = _column(df, entry, "entry")
    en = np.zeros(n) if en is None else en
    w = _column(df, weights, "weights")
    w = np.ones(n) if w is None else w
    iv = ev & np.isfinite(up) & (up > time)
    if np.any(up < time):
        raise ValueError("upper must be >= duration in every row")
    if np.any(time[~iv] <= 0) or np.any(time[iv] < 0):
        raise ValueError("durations must be > 0 (log-time model; an interval-censored row may "
                         "start at 0: left-censored)")
    if np.any(en < 0) or np.any(en > time):
        raise ValueError("entry times must lie in [0, duration]")
    if np.any(w <= 0):
        raise ValueError("case weights must be > 0")
    # a left-censored row (0, u]: log S0 at log(1e-300) is 0 to double precision
    time = np.where(iv, np.maximum(time, 1e-300), time)
    ev, up = ev & ~iv, np.where(iv, up, np.inf)
    return core.AFTData(x=x, time=time, event=ev, upper=up, entry=en, weight=w)


def fit_aft(
    data: pd.DataFrame,
    formula: str | None = None,
    *,
    duration: str,
    event: str | None = None,
    covariates: Sequence[str] = (),
    distribution: AFTDistribution = "weibull",
    entry: str | None = None,
    weights: str | None = None,
    upper: str | None = None,
    reference: Mapping[str, object] | None = None,
    conf_level: float = 0.95,
) -> AFTFit:
    """Fit an accelerated-failure-time regression model by maximum likelihood.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per unit.
    formula : str, optional
        Covariate terms joined by ``+`` (``"age + C(celltype)"``); or give ``covariates``.
        Without either, the intercept-only model (a univariate fit).
    duration, event : str
        Time column (> 0) and event column (1 failure, 0 censored; default all failures).
    covariates : sequence of str
        Numeric covariate columns (used when ``formula`` is None).
    distribution : {"weibull", "exponential", "lognormal", "loglogistic"}
    entry : str, optional
        Delayed-entry (left-truncation) time column; 0 for units observed from the start.
    weights : str, optional
        Case-weight column (as R's ``survreg(weights=)``).
    upper : str, optional
        Upper end of the failure time: a failure row (``event`` 1) with ``upper > duration``
        failed in ``(duration, upper]`` (interval censoring; ``duration`` 0: left-censored),
        as ``fit_parametric(upper=)``; censored rows and ``upper == duration`` are unaffected.
    reference : mapping, optional
        Reference level per categorical column (default: first in sorted order).
    conf_level : float
        Level of the Wald intervals.

    Returns
    -------
    AFTFit
        ``table`` indexed by term (``(Intercept)``, ``x``, ``x[T.level]``); ``scale`` (R's
        ``Scale``; Weibull shape = 1 / scale).

    References
    ----------
    Kalbfleisch & Prentice (2002), §3.6 and §6.2; Lawless (2003), ch. 6.
    """
    if distribution not in core.BASE:
        raise ValueError(f"distribution must be one of {tuple(core.BASE)}, got {distribution!r}")
    level = check_conf_level(conf_level)
    if formula is None:
        formula = " + ".join(covariates) if covariates else None
    design = (design_matrix(data, formula, reference) if formula is not None
              else Design(pd.DataFrame(index=data.index), (), {}, {}))
    names = [INTERCEPT, *design.matrix.columns]
    x = np.c_[np.ones(len(data)), design.matrix.to_numpy(dtype=float)]
    d = _aft_data(data, x, duration, event, upper, entry, weights)
    fixed = distribution == "exponential"
    base = core.BASE[distribution]
    n_events = int(d.event.sum())
    if n_events + int(d.interval.sum()) < x.shape[1] + (not fixed):
        raise InsufficientDataError(f"{n_events} failure(s) for {x.shape[1] + (not fixed)} "
                                    "parameters")
    theta, ll, cov, iters = core.newton(base, d, fixed)
    null = core.AFTData(np.ones((d.time.size, 1)), d.time, d.event, d.upper, d.entry, d.weight)
    ll0 = core.newton(base, null, fixed)[1] if x.shape[1] > 1 else ll
    p = x.shape[1]
    se = np.sqrt(np.diag(cov))
    zq = float(stats.norm.ppf(0.5 + level / 2))
    coef = theta[:p]
    table = pd.DataFrame({"coef": coef, "se": se[:p], "z": coef / se[:p],
                          "p": 2 * stats.norm.sf(np.abs(coef / se[:p])),
                          "low": coef - zq * se[:p], "high": coef + zq * se[:p],
                          "time_ratio": np.exp(coef)}, index=pd.Index(names, name="term"))
    labels = names + ([] if fixed else ["Log(scale)"])
    log_s = 0.0 if fixed else float(theta[p])
    k = p + (not fixed)
    notes = (*design.notes(), *([f"formula: {formula}"] if formula else []),
             *(["delayed entry: likelihood conditional on survival to entry"] if entry else []))
    return AFTFit(distribution=distribution, table=table, scale=math.exp(log_s), log_scale=log_s,
                  log_scale_se=0.0 if fixed else float(se[p]), log_likelihood=ll,
                  log_likelihood_null=ll0, aic=2.0 * k - 2.0 * ll, n=d.time.size,
                  n_events=n_events, conf_level=level, iterations=iters,
                  cov=pd.DataFrame(cov, index=labels, columns=labels), notes=notes,
                  _design=design)


__all__ = ["AFTFit", "fit_aft"]
