"""Power-law NHPP for several repairable systems with unit covariates (proportional intensity).

Unit ``q`` with covariates ``x_q`` is observed on its own window ``(s_q, e_q]`` of system age
and has failure intensity ``λ(t | x) = (β/θ)(t/θ)^(β−1) exp(x'γ)`` (Crow 1974, "Reliability
analysis for complex, repairable systems", *Reliability and Biometry*, SIAM, 379–410, for
the multiple-system power law; Lawless 1987, "Regression methods for Poisson process data",
JASA 82, 808–815, and Rigdon & Basu 2000, *Statistical Methods for the Reliability of
Repairable Systems*, Wiley, §5, for covariates).  The log-likelihood is

``ℓ = Σ_q Σ_i [ln β − ln θ + (β−1)(ln X_qi − ln θ) + x_q'γ]
      − Σ_q exp(x_q'γ) [(e_q/θ)^β − (s_q/θ)^β]``.

It is maximised by Newton's method with step halving in ``(β, η, γ)``, ``η = −β ln θ``
(for fixed β the problem is a Poisson regression, concave in ``(η, γ)``), on times divided
by the largest window end so that ``t^β`` cannot overflow.  Standard errors from the
inverse observed information, moved to ``(β, ln θ, γ)`` by the delta method; Wald
intervals, on the log scale for β and θ.  Without covariates and with every window starting
at 0 the MLE is Crow's closed form ``β̂ = N / Σ_q Σ_i ln(e_q / X_qi)``,
``θ̂ = (Σ_q e_q^β̂ / N)^(1/β̂)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, finite, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models.mcf import _inputs


@dataclass(frozen=True)
class PowerLawNHPPResult(ResultMixin):
    """Power-law NHPP fit with covariates; times in the unit of the input."""

    params: pd.DataFrame = field(repr=False)
    cov: pd.DataFrame = field(repr=False)
    loglik: float
    n: int
    n_units: int
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()

    @property
    def beta(self) -> float:
        """Shape β (> 1: failures come faster with age)."""
        return float(self.params.loc["beta", "estimate"])

    @property
    def theta(self) -> float:
        """Scale θ: the age at which a unit with x = 0 expects one failure."""
        return float(self.params.loc["theta", "estimate"])

    def summary(self) -> pd.DataFrame:
        """Columns ``parameter``, ``estimate``, ``se``, ``low``, ``high`` (rows beta, theta, then
        one per covariate: ``exp`` of it is the intensity ratio per unit of the covariate)."""
        return self.params.reset_index()

    def invariants(self) -> tuple[Check, ...]:
        """β, θ > 0; estimates and SEs finite; each estimate inside its interval."""
        p = self.params
        return (positive("shape_scale_positive", p.loc[["beta", "theta"], "estimate"]),
                finite("estimates_finite", p[["estimate", "se"]].to_numpy()),
                contains("interval_contains_estimate", p["low"], p["estimate"], p["high"]))

    def expected_failures(self, start: float, end: float, x: Any = None) -> float:
        """Expected failures of a unit with covariates ``x`` (default 0) on ``(start, end]``."""
        g = self.params["estimate"].iloc[2:].to_numpy()
        lin = 0.0 if x is None else float(np.dot(np.asarray(x, dtype=float), g))
        b, th = self.beta, self.theta
        return math.exp(lin) * ((end / th) ** b - (start / th) ** b)

    def plot(self, ax: Any = None) -> Any:
        """Intensity ratios ``exp(γ)`` with their intervals (a forest plot) on a log axis."""
        fig, ax = new_figure(ax)
        g = self.params.iloc[2:]
        y = np.arange(len(g))
        est, lo, hi = (np.exp(g[c].to_numpy(dtype=float)) for c in ("estimate", "low", "high"))
        ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt="o", capsize=3)
        ax.axvline(1.0, color="grey", ls="--")
        ax.set(yticks=y, yticklabels=list(g.index), xscale="log",
               xlabel="failure intensity ratio (per unit of covariate)",
               title=f"power-law NHPP, β = {self.beta:.3g}, θ = {self.theta:.3g} h")
        return fig


def _parts(beta: float, e: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, ...]:
    """``D = e^β − s^β`` and its first two β-derivatives (``s = 0`` terms are 0)."""
    le = np.log(e)
    ls = np.log(np.where(s > 0, s, 1.0))
    eb = e**beta
    sb = np.where(s > 0, s**beta, 0.0)
    return eb - sb, eb * le - sb * ls, eb * le**2 - sb * ls**2


def _loglik(beta: float, delta: np.ndarray, z: np.ndarray, n_q: np.ndarray, sum_log: float,
            e: np.ndarray, s: np.ndarray) -> float:
    d = _parts(beta, e, s)[0]
    lin = z @ delta
    return float(n_q.sum() * math.log(beta) + (beta - 1) * sum_log + n_q @ lin
                 - np.sum(np.exp(lin) * d))


def _newton(z: np.ndarray, n_q: np.ndarray, sum_log: float, e: np.ndarray, s: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, int]:
    n = float(n_q.sum())
    beta = 1.0
    delta = np.zeros(z.shape[1])
    delta[0] = math.log(n / float(np.sum(e - s)))
    ll = _loglik(beta, delta, z, n_q, sum_log, e, s)
    for it in range(1, 201):
        d, d1, d2 = _parts(beta, e, s)
        w = np.exp(z @ delta)
        g = np.r_[n / beta + sum_log - w @ d1, z.T @ (n_q - w * d)]
        h = np.empty((z.shape[1] + 1,) * 2)
        h[0, 0] = -n / beta**2 - w @ d2
        h[0, 1:] = h[1:, 0] = -(z.T @ (w * d1))
        h[1:, 1:] = -(z.T * (w * d)) @ z
        step = np.linalg.solve(h, -g)
        k = 1.0
        while True:
            nb, nd = beta + k * step[0], delta + k * step[1:]
            if nb > 0:
                new = _loglik(nb, nd, z, n_q, sum_log, e, s)
                if np.isfinite(new) and new >= ll - 1e-12 * abs(ll):
                    break
            k /= 2
            if k < 1e-10:
                raise RuntimeError("power-law NHPP: Newton step found no increase")
        beta, delta, ll = nb, nd, new
        if np.max(np.abs(k * step)) < 1e-11:
            return np.r_[beta, delta], h, it
    raise RuntimeError("power-law NHPP: no convergence in 200 Newton steps")


def fit_power_law_nhpp(events: pd.DataFrame, observation: pd.DataFrame, *,
                       covariates: list[str] | tuple[str, ...] = (), unit: str = "unit",
                       time: str = "time", start: str = "start", end: str = "end",
                       conf_level: float = 0.95) -> PowerLawNHPPResult:
    """Fit a power-law NHPP with proportional unit covariates to several systems.

    Parameters
    ----------
    events : pandas.DataFrame
        One row per failure: ``unit`` and ``time`` (system age, > 0, float).
    observation : pandas.DataFrame
        One row per unit: ``unit``, ``start`` and ``end`` of its window of age (``start`` may be
        0), and the ``covariates`` columns (numbers, constant over the window).
    covariates : sequence of str
        Covariate columns of ``observation``; none fits the common power law.
    unit, time, start, end : str
        Column names.
    conf_level : float
        Two-sided confidence level of the Wald intervals.

    Returns
    -------
    PowerLawNHPPResult
        ``params`` (rows beta, theta, one per covariate; columns estimate, se, low, high),
        ``cov`` of (beta, log_theta, covariates), ``loglik``.

    Raises
    ------
    InsufficientDataError
        No failures.
    ValueError
        Missing columns, timestamps instead of ages, an event time <= 0 or outside its
        window, a covariate that is not a finite number, ``conf_level`` outside (0, 1).

    Notes
    -----
    Model, likelihood and method in the module docstring (Crow 1974; Lawless 1987).
    """
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    covariates = list(covariates)
    missing = [c for c in covariates if c not in observation.columns]
    if missing:
        raise ValueError(f"observation is missing covariate column(s) {missing}")
    if pd.api.types.is_datetime64_any_dtype(observation[start]):
        raise ValueError("the power law is in system age: give start/end/time as numbers, "
                         "not timestamps")
    pos, t, s, e, _ = _inputs(events, observation, unit, time, start, end)
    if t.size == 0:
        raise InsufficientDataError(f"no failures among {len(s)} unit(s)")
    if np.any(t <= 0) or np.any(s < 0):
        raise ValueError("event times must be > 0 and window starts >= 0 (system age)")
    x = observation[covariates].to_numpy(dtype=float).reshape(len(s), len(covariates))
    if not np.all(np.isfinite(x)):
        raise ValueError(f"covariates {covariates} must be finite numbers")
    scale = float(e.max())
    n_q = np.bincount(pos, minlength=len(s)).astype(float)
    z = np.column_stack([np.ones(len(s)), x])
    est, h, iters = _newton(z, n_q, float(np.sum(np.log(t / scale))), e / scale, s / scale)
    beta, eta = est[0], est[1]
    jac = np.eye(est.size)
    jac[1, :2] = [eta / beta**2, -1.0 / beta]  # d ln θ / d(β, η)
    cov = jac @ np.linalg.inv(-h) @ jac.T
    se = np.sqrt(np.diag(cov))
    log_theta = -eta / beta + math.log(scale)
    zq = stats.norm.ppf(0.5 + conf_level / 2)
    g, g_se = est[2:], se[2:]
    theta = math.exp(log_theta)
    params = pd.DataFrame(
        {"estimate": np.r_[beta, theta, g],
         "se": np.r_[se[0], theta * se[1], g_se],
         "low": np.r_[beta * math.exp(-zq * se[0] / beta), math.exp(log_theta - zq * se[1]),
                      g - zq * g_se],
         "high": np.r_[beta * math.exp(zq * se[0] / beta), math.exp(log_theta + zq * se[1]),
                       g + zq * g_se]},
        index=pd.Index(["beta", "theta", *covariates], name="parameter"))
    names = ["beta", "log_theta", *covariates]
    lin = x @ g
    loglik = float(np.sum(np.log(beta) - log_theta + (beta - 1) * (np.log(t) - log_theta)
                          + lin[pos])
                   - np.sum(np.exp(lin) * (np.exp(beta * (np.log(e) - log_theta))
                                           - np.exp(beta * (np.log(np.where(s > 0, s, 1.0))
                                                            - log_theta)) * (s > 0))))
    return PowerLawNHPPResult(
        params=params, cov=pd.DataFrame(cov, index=names, columns=names), loglik=loglik,
        n=int(t.size), n_units=len(s), conf_level=conf_level,
        method=(f"power-law NHPP MLE, {len(covariates)} unit covariate(s); Newton "
                f"({iters} steps); Wald intervals from the observed information (β, θ on the "
                "log scale)"))


__all__ = ["PowerLawNHPPResult", "fit_power_law_nhpp"]
