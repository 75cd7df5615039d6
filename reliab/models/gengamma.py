"""The generalized gamma distribution in Prentice's parametrisation, fitted by maximum likelihood.

With ``w = (log t - mu) / sigma`` and ``Q != 0`` the density is (Prentice 1974, *Biometrika*
61, 539–544; Cox, Chu, Schneider & Muñoz 2007, *Statistics in Medicine* 26, 4352–4374, eq. 1;
the parametrisation of flexsurv's ``gengamma``)::

    f(t) = |Q| (Q^-2)^(Q^-2) / (sigma t Gamma(Q^-2)) * exp(Q^-2 (Q w - exp(Q w)))

and ``S(t) = 1 - P(Q^-2, Q^-2 exp(Q w))`` for ``Q > 0``, ``P(Q^-2, Q^-2 exp(Q w))`` for
``Q < 0`` (``P`` the regularised lower incomplete gamma function); ``Q = 0`` is the lognormal
``(mu, sigma)``.  Special cases: ``Q = 1`` the Weibull (shape ``1/sigma``, scale ``e^mu``),
``Q = sigma`` the gamma (shape ``Q^-2``), ``Q = 0`` the lognormal — so the fit tells which of
the three the data prefer (a likelihood-ratio test of each against it).  Exact, right-, left-
and interval-censored times and delayed entry, as :mod:`reliab.models._interval`.  Maximum by
BFGS from the Weibull, lognormal and gamma corners, polished by Newton steps on
Richardson-extrapolated central differences (Hessian and gradient), whose Hessian's inverse
gives the Wald covariance of ``(mu, log sigma, Q)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from reliab._checks import Check, contains, equal, finite
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models import _interval
from reliab.models._interval_fits import bounds_from
from reliab.models._survival_input import as_lifetimes, check_conf_level

F64 = NDArray[np.float64]
_Q0 = 1e-8  # |Q| below this: the lognormal limit (the Q != 0 formula loses all digits)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def log_pdf(mu: float, sigma: float, q: float, t: F64) -> F64:
    """Log density of the generalized gamma at ``t > 0``."""
    lt = np.log(t)
    w = (lt - mu) / sigma
    if abs(q) < _Q0:
        return -0.5 * w * w - _HALF_LOG_2PI - math.log(sigma) - lt
    k = q ** -2
    with np.errstate(over="ignore"):
        return (math.log(abs(q)) + k * math.log(k) - math.log(sigma) - lt
                - float(special.gammaln(k)) + k * (q * w - np.exp(q * w)))


def log_sf_cdf(mu: float, sigma: float, q: float, t: F64) -> tuple[F64, F64]:
    """``(log S(t), log F(t))`` (``t`` may be 0 or inf)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        w = (np.log(t) - mu) / sigma
        if abs(q) < _Q0:
            return special.log_ndtr(-w), special.log_ndtr(w)
        k = q ** -2
        u = k * np.exp(q * w)
        lo, hi = special.gammainc(k, u), special.gammaincc(k, u)
        s, f = (hi, lo) if q > 0 else (lo, hi)
        # log of a probability near 1 from its small complement (keeps the relative digits)
        return (np.where(s > 0.5, np.log1p(-f), np.log(s)),
                np.where(f > 0.5, np.log1p(-s), np.log(f)))


def loglik(theta: F64, data: _interval.Bounds) -> float:
    """Censored-data log-likelihood at ``theta = (mu, log sigma, Q)``."""
    mu, sigma, q = float(theta[0]), math.exp(float(theta[1])), float(theta[2])
    total = 0.0
    ex, rt, lf, iv = data.exact, data.right, data.left, data.interval
    if ex.any():
        total += float(np.sum(log_pdf(mu, sigma, q, data.lower[ex])))
    if rt.any():
        total += float(np.sum(log_sf_cdf(mu, sigma, q, data.lower[rt])[0]))
    if lf.any():
        total += float(np.sum(log_sf_cdf(mu, sigma, q, data.upper[lf])[1]))
    if iv.any():
        s_lo = np.exp(log_sf_cdf(mu, sigma, q, data.lower[iv])[0])
        s_hi = np.exp(log_sf_cdf(mu, sigma, q, data.upper[iv])[0])
        with np.errstate(divide="ignore"):
            total += float(np.sum(np.log(s_lo - s_hi)))
    en = data.entry > 0
    if en.any():
        total -= float(np.sum(log_sf_cdf(mu, sigma, q, data.entry[en])[0]))
    return total if math.isfinite(total) else -math.inf


def _gradient(fn, x: F64, h: float = 1e-3) -> F64:  # noqa: ANN001
    """Central differences at ``h`` and ``h/2`` combined by Richardson: error O(h^4)."""
    return (4.0 * _interval.gradient(fn, x, h / 2) - _interval.gradient(fn, x, h)) / 3.0


def _hessian(fn, x: F64, h: float = 2e-3) -> F64:  # noqa: ANN001
    """Central-difference Hessians at ``h`` and ``h/2`` combined by Richardson: error O(h^4),
    rounding ~1e-13 |l| / h^2 (a step of 1e-4 alone leaves ~1e-5 |l| / h^2 of the two)."""
    return (4.0 * _interval.hessian(fn, x, h / 2) - _interval.hessian(fn, x, h)) / 3.0


def maximise(data: _interval.Bounds, starts: list[F64]) -> tuple[F64, float, F64]:
    """BFGS from each start, the best polished by Newton: (theta, loglik, covariance)."""
    def nll(th: F64) -> float:
        v = loglik(th, data)
        return -v if math.isfinite(v) else 1e300

    best = None
    for x0 in starts:
        res = optimize.minimize(nll, x0, method="BFGS", options={"gtol": 1e-8, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    theta = np.asarray(best.x, dtype=float)
    for _ in range(30):
        try:
            step = np.linalg.solve(_hessian(nll, theta), _gradient(nll, theta))
        except np.linalg.LinAlgError:
            break
        # near the maximum the likelihood is flat to rounding: trust the gradient's zero
        if float(np.max(np.abs(step))) > 1e-4 and not nll(theta - step) <= nll(theta):
            break
        theta = theta - step
        if float(np.max(np.abs(step))) < 1e-11:
            break
    info = _hessian(nll, theta)
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError as exc:
        raise InsufficientDataError("the generalized gamma information matrix is singular") from exc
    if not np.all(np.isfinite(cov)) or np.any(np.diag(cov) <= 0):
        raise InsufficientDataError("the generalized gamma likelihood is flat or not concave at "
                                    "its maximum: too few failures for three parameters")
    return theta, -nll(theta), cov


@dataclass(frozen=True)
class GenGammaFit(ResultMixin):
    """Generalized gamma fit: ``mu``, ``sigma``, ``Q`` with Wald intervals, likelihood, AIC."""

    params: pd.DataFrame = field(repr=False)
    mu: float
    sigma: float
    q: float
    log_likelihood: float
    aic: float
    n: int
    n_failures: int
    conf_level: float
    cov: pd.DataFrame = field(repr=False)
    time_max: float = math.nan
    method: str = "generalized gamma (Prentice 1974) maximum likelihood; Wald intervals"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Parameter table: estimate, se, low, high (``sigma`` on the log scale)."""
        return self.params.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Finite estimates and likelihood; intervals contain estimates; AIC = 6 - 2 log L."""
        p = self.params
        return (finite("estimates_finite", [*p["estimate"], *p["se"], self.log_likelihood]),
                contains("interval_contains_estimate", p["low"], p["estimate"], p["high"]),
                equal("aic_is_2k_minus_2loglik", self.aic, 6.0 - 2.0 * self.log_likelihood,
                      rtol=1e-12))

    def sf(self, t: ArrayLike) -> F64:
        """Fitted survival at ``t``."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        return np.exp(log_sf_cdf(self.mu, self.sigma, self.q, tt)[0])

    def plot(self, ax: Any = None) -> Figure:
        """Fitted survival function up to the largest time of the data."""
        fig, ax = new_figure(ax)
        t = np.linspace(0.0, self.time_max, 200)[1:]
        ax.plot(t, self.sf(t), color="#4c78a8")
        ax.set_xlabel("time")
        ax.set_ylabel("survival")
        ax.set_title(f"generalized gamma: mu {self.mu:.3g}, sigma {self.sigma:.3g}, Q {self.q:.3g}")
        return fig

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """Columns time, survival, cdf."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        s = self.sf(tt)
        return pd.DataFrame({"time": tt, "survival": s, "cdf": 1.0 - s})


def _starts(data: _interval.Bounds) -> list[F64]:
    """Weibull-like, lognormal-like and gamma-like starting points from log-time moments."""
    rep = np.where(data.right, data.lower, np.where(data.left, data.upper / 2,
                                                    (data.lower + data.upper) / 2))
    x = np.log(rep[rep > 0])
    m, ls = float(x.mean()), math.log(float(x.std()) or 1.0)
    return [np.array([m, ls, 1.0]), np.array([m, ls, 0.01]), np.array([m, ls, -0.5]),
            np.array([m, ls, math.exp(ls)])]


def fit_gengamma(
    durations: ArrayLike,
    observed: ArrayLike | None = None,
    *,
    entry: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    conf_level: float = 0.95,
) -> GenGammaFit:
    """Fit the generalized gamma distribution (Prentice's ``mu, sigma, Q``) by maximum likelihood.

    Parameters
    ----------
    durations, observed, entry, upper
        As in :func:`reliab.models.fit_parametric` (``upper``: interval and left censoring).
    conf_level : float
        Level of the Wald intervals (``sigma``'s on the log scale).

    Returns
    -------
    GenGammaFit
        ``notes`` say whether the Weibull (``Q = 1``) or the lognormal (``Q = 0``) lies inside
        the Wald interval of ``Q``.

    References
    ----------
    Prentice (1974); Cox et al. (2007); Lawless (2003), *Statistical Models and Methods for
    Lifetime Data*, §5.3.
    """
    level = check_conf_level(conf_level)
    if upper is None:
        lt = as_lifetimes(durations, observed, entry, positive=True)
        data = _interval.as_bounds(lt.durations, np.where(lt.observed, lt.durations, np.inf),
                                   lt.entry)
    else:
        data = bounds_from(durations, observed, upper, entry)
    if data.n_failures < 3:
        raise InsufficientDataError(f"{data.n_failures} failure(s) among {data.n} units; a "
                                    "generalized gamma fit needs at least 3")
    theta, ll, cov = maximise(data, _starts(data))
    z = float(stats.norm.ppf(0.5 + level / 2))
    se = np.sqrt(np.diag(cov))
    mu, log_s, q = (float(v) for v in theta)
    params = pd.DataFrame({"estimate": [mu, math.exp(log_s), q],
                           "se": [se[0], math.exp(log_s) * se[1], se[2]],
                           "low": [mu - z * se[0], math.exp(log_s - z * se[1]), q - z * se[2]],
                           "high": [mu + z * se[0], math.exp(log_s + z * se[1]), q + z * se[2]]},
                          index=["mu", "sigma", "Q"])
    notes = tuple(f"{name} (Q = {q0:g}) inside the {level:.0%} interval of Q"
                  for name, q0 in (("Weibull", 1.0), ("lognormal", 0.0))
                  if q - z * se[2] <= q0 <= q + z * se[2])
    labels = ["mu", "log_sigma", "Q"]
    return GenGammaFit(params=params, mu=mu, sigma=math.exp(log_s), q=q, log_likelihood=ll,
                       aic=6.0 - 2.0 * ll, n=data.n, n_failures=data.n_failures,
                       conf_level=level, cov=pd.DataFrame(cov, index=labels, columns=labels),
                       time_max=float(np.max(np.where(np.isfinite(data.upper), data.upper,
                                                      data.lower))), notes=notes)


__all__ = ["GenGammaFit", "fit_gengamma", "log_pdf", "log_sf_cdf"]
