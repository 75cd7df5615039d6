"""Three-parameter Weibull: a threshold (location) ``gamma`` below which no unit fails.

``F(t) = 1 - exp(-((t - gamma) / eta)^beta)`` for ``t > gamma``.  For fixed ``gamma`` and
``beta`` the scale has a closed form, ``eta^beta = (sum (t - gamma)^beta - sum (e - gamma)^beta)
/ r`` over all units (``e`` the entry times, ``r`` the failures), which leaves the profile
log-likelihood ``r log beta - r log(eta^beta) + (beta - 1) sum_failures log(t - gamma) - r``;
``beta`` is maximised for each ``gamma`` and ``gamma`` over ``[threshold_min, t_(1))``, ``t_(1)``
the smallest failure time (Cohen & Whitten 1982, *Communications in Statistics* 11, 2631–2656;
Lawless 2003, *Statistical Models and Methods for Lifetime Data*, §4.1.3; NIST/SEMATECH
e-Handbook of Statistical Methods §8.1.6.2).

The likelihood is always unbounded as ``gamma -> t_(1)`` with ``beta < 1`` (the density of
the first failure becomes infinite), so the estimate is the interior local maximum (Smith 1985,
*Biometrika* 72, 67–90: regular for ``beta > 2``, consistent but non-standard for
``1 < beta < 2``, none for ``beta < 1``).  The result says which case the data give:
``"interior"`` (a local maximum, Wald intervals from the observed information of
``(gamma, log beta, log eta)``), ``"at_lower_bound"`` (the profile falls from
``threshold_min``: the 2-parameter Weibull on ``t - threshold_min``) or ``"unbounded"`` (the
profile rises all the way to ``t_(1)``: the data point to ``beta < 1`` and no estimate exists;
every estimate is then NaN and the notes say so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, stats

from reliab._checks import Check, contains, equal, finite, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._survival_input import as_lifetimes, check_conf_level

F64 = NDArray[np.float64]
_GRID = 60  # profile points between threshold_min and t_(1), dense near t_(1)


def loglik(gamma: float, beta: float, eta: float, t: F64, d: NDArray[np.bool_], e: F64) -> float:
    """Closed-form log-likelihood (right censoring, delayed entry)."""
    if not gamma < float(np.min(t[d])) or beta <= 0 or eta <= 0:
        return -math.inf
    x, xe = np.clip(t - gamma, 0.0, None), np.clip(e - gamma, 0.0, None)
    lx = np.log(x[d])
    return float(np.sum(math.log(beta) - beta * math.log(eta) + (beta - 1.0) * lx)
                 - np.sum((x / eta) ** beta) + np.sum((xe / eta) ** beta))


def _profile_beta(gamma: float, t: F64, d: NDArray[np.bool_], e: F64) -> tuple[float, float]:
    """``(max over beta of the concentrated log-likelihood, beta)`` at threshold ``gamma``."""
    x, xe = np.clip(t - gamma, 0.0, None), np.clip(e - gamma, 0.0, None)
    r = int(d.sum())
    lx = np.log(x[d])
    top = float(np.max(x))

    def neg(lb: float) -> float:
        b = math.exp(lb)
        a = float(np.sum((x / top) ** b) - np.sum((xe / top) ** b))
        return -(r * lb - r * (math.log(a / r) + b * math.log(top)) + (b - 1.0) * float(lx.sum()) - r)

    res = optimize.minimize_scalar(neg, bounds=(math.log(0.02), math.log(200.0)),
                                   method="bounded", options={"xatol": 1e-12})
    return -float(res.fun), math.exp(float(res.x))


def _eta(gamma: float, beta: float, t: F64, d: NDArray[np.bool_], e: F64) -> float:
    x, xe = np.clip(t - gamma, 0.0, None), np.clip(e - gamma, 0.0, None)
    return float((np.sum(x ** beta) - np.sum(xe ** beta)) / d.sum()) ** (1.0 / beta)


@dataclass(frozen=True)
class Weibull3Fit(ResultMixin):
    """Three-parameter Weibull fit: threshold, shape, scale, and which case the data give."""

    status: str
    params: pd.DataFrame = field(repr=False)
    threshold: float
    shape: float
    scale: float
    log_likelihood: float
    aic: float
    n: int
    n_failures: int
    conf_level: float
    threshold_min: float
    method: str = "3-parameter Weibull maximum likelihood, profile over the threshold"
    notes: tuple[str, ...] = ()
    profile: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def plot(self, ax: Any = None) -> Figure:
        """Profile log-likelihood against the threshold (dashed: the first failure)."""
        fig, ax = new_figure(ax)
        pr = self.profile
        ax.plot(pr["threshold"], pr["log_likelihood"], color="#4c78a8", marker=".")
        ax.axvline(float(pr["first_failure"].iloc[0]), color="grey", ls="--", lw=0.8)
        if self.status != "unbounded":
            ax.axvline(self.threshold, color="#e45756", lw=0.8)
        ax.set_xlabel("threshold")
        ax.set_ylabel("profile log-likelihood")
        ax.set_title(f"3-parameter Weibull: {self.status.replace('_', ' ')}")
        return fig

    def summary(self) -> pd.DataFrame:
        """Parameter table: estimate, se, low, high (NaN where no estimate exists)."""
        return self.params.copy()

    def invariants(self) -> tuple[Check, ...]:
        """With an estimate: finite, shape and scale > 0, threshold in its range, intervals
        containing estimates, AIC = 6 - 2 log L; without one (unbounded) nothing is shown."""
        if self.status == "unbounded":
            return ()
        p = self.params
        return (finite("estimates_finite", [*p["estimate"], self.log_likelihood]),
                positive("shape_scale_positive", [self.shape, self.scale]),
                contains("interval_contains_estimate", p["low"], p["estimate"], p["high"]),
                equal("aic_is_2k_minus_2loglik", self.aic, 6.0 - 2.0 * self.log_likelihood,
                      rtol=1e-12))

    def sf(self, t: ArrayLike) -> F64:
        """Fitted survival at ``t`` (1 below the threshold)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        return np.exp(-(np.clip(tt - self.threshold, 0.0, None) / self.scale) ** self.shape)


def _nll(t: F64, d: NDArray[np.bool_], e: F64, unit: float):  # noqa: ANN202
    """Negative log-likelihood in (gamma / unit, log beta, log eta)."""
    def nll(th: F64) -> float:
        v = loglik(float(th[0]) * unit, math.exp(th[1]), math.exp(th[2]), t, d, e)
        return -v if math.isfinite(v) else 1e300
    return nll


def _grad(t: F64, d: NDArray[np.bool_], e: F64, unit: float):  # noqa: ANN202
    """Exact gradient of the negative log-likelihood in (gamma / unit, log beta, log eta)."""
    def grad(th: F64) -> F64:
        g, b, eta = float(th[0]) * unit, math.exp(th[1]), math.exp(th[2])
        x, xe = np.clip(t - g, 0.0, None) / eta, np.clip(e - g, 0.0, None) / eta
        xb, xeb = x ** b, xe ** b
        with np.errstate(divide="ignore", invalid="ignore"):  # x = 0: a unit gone before gamma
            lxe = np.where(xe > 0, np.log(xe), 0.0)
            xe1 = np.where(xe > 0, xe ** (b - 1.0), 0.0)
            x1 = np.where(x > 0, x ** (b - 1.0), 0.0)
        lx = np.log(x[d])
        dg = float(-(b - 1.0) * np.sum(1.0 / x[d]) + b * np.sum(x1) - b * np.sum(xe1)) / eta
        db = float(d.sum() + b * np.sum(lx) - b * np.sum(xb * np.log(x, where=x > 0,
                                                                     out=np.zeros_like(x)))
                   + b * np.sum(xeb * lxe))
        de = float(b * (-d.sum() + np.sum(xb) - np.sum(xeb)))
        return -np.array([dg * unit, db, de])
    return grad


def _polish(theta: F64, nll, grad) -> F64:  # noqa: ANN001
    """Newton steps on the exact gradient (the profile search leaves ~1e-7 in gamma)."""
    for _ in range(30):
        try:
            step = np.linalg.solve(_jacobian(grad, theta), grad(theta))
        except np.linalg.LinAlgError:
            break
        if float(np.max(np.abs(step))) > 1e-4 and not nll(theta - step) <= nll(theta):
            break
        theta = theta - step
        if float(np.max(np.abs(step))) < 1e-12:
            break
    return theta


def _jacobian(grad, x: F64, h: float = 1e-6) -> F64:  # noqa: ANN001
    """Hessian as central differences of the exact gradient (symmetrised)."""
    eye = np.eye(x.size) * h
    jac = np.array([(grad(x + v) - grad(x - v)) / (2 * h) for v in eye])
    return 0.5 * (jac + jac.T)


def _table(theta: F64, grad, unit: float, level: float,  # noqa: ANN001
           with_gamma: bool) -> pd.DataFrame:
    """Wald rows of threshold, shape, scale from the observed information in
    (gamma, log beta, log eta); the threshold's row NaN when it sits on its bound."""
    h = _jacobian(grad, theta)
    k = 0 if with_gamma else 1
    cov = np.linalg.inv(h[k:, k:])
    se = np.r_[[math.nan] * k, np.sqrt(np.diag(cov))]
    z = float(stats.norm.ppf(0.5 + level / 2))
    g, sg = float(theta[0]) * unit, se[0] * unit
    rows = {"threshold": (g, sg, g - z * sg, g + z * sg)}
    for name, lv, s in (("shape", theta[1], se[1]), ("scale", theta[2], se[2])):
        rows[name] = (math.exp(lv), math.exp(lv) * s, math.exp(lv - z * s), math.exp(lv + z * s))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "se", "low", "high"])


def _search(t: F64, d: NDArray[np.bool_], e: F64, lo: float
            ) -> tuple[str, float, pd.DataFrame]:
    """Scan the profile over [lo, t_(1)) (dense near t_(1)); (status, threshold, scan)."""
    t1 = float(np.min(t[d]))
    grid = t1 - (t1 - lo) * np.logspace(0.0, -8.0, _GRID)
    prof = np.array([_profile_beta(g, t, d, e)[0] for g in grid])
    best = int(np.argmax(prof))
    scan = pd.DataFrame({"threshold": grid, "log_likelihood": prof, "first_failure": t1})
    interior = [j for j in range(1, _GRID - 1) if prof[j] >= prof[j - 1] and prof[j] >= prof[j + 1]]
    if interior:
        j = max(interior, key=lambda i: prof[i])
        if prof[j] >= prof[0]:
            res = optimize.minimize_scalar(lambda g: -_profile_beta(g, t, d, e)[0],
                                           bounds=(grid[j - 1], grid[j + 1]), method="bounded",
                                           options={"xatol": 1e-12 * max(1.0, t1)})
            return "interior", float(res.x), scan
    if best == 0 or prof[0] >= prof[-1]:
        return "at_lower_bound", lo, scan
    return "unbounded", math.nan, scan


def fit_weibull3(
    durations: ArrayLike,
    observed: ArrayLike | None = None,
    *,
    entry: ArrayLike | None = None,
    threshold_min: float = 0.0,
    conf_level: float = 0.95,
) -> Weibull3Fit:
    """Fit the 3-parameter Weibull (threshold, shape, scale) by profile likelihood.

    Parameters
    ----------
    durations, observed, entry
        Times, 1/0 failure flags, delayed-entry times (as :func:`reliab.models.fit_weibull`).
    threshold_min : float
        Lowest threshold considered (default 0: no failure before time 0); must lie below the
        smallest failure time.
    conf_level : float
        Level of the Wald intervals.

    Returns
    -------
    Weibull3Fit
        ``status`` ``"interior"``, ``"at_lower_bound"`` or ``"unbounded"`` (module docstring).

    References
    ----------
    Cohen & Whitten (1982); Smith (1985); NIST/SEMATECH e-Handbook §8.1.6.2.
    """
    level = check_conf_level(conf_level)
    lt = as_lifetimes(durations, observed, entry, positive=True)
    t, d, e = lt.durations, lt.observed.astype(bool), lt.entry
    if d.sum() < 3:
        raise InsufficientDataError(f"{int(d.sum())} failure(s) among {t.size} units; a "
                                    "3-parameter Weibull needs at least 3")
    t1 = float(np.min(t[d]))
    if not threshold_min < t1:
        raise ValueError(f"threshold_min {threshold_min} must lie below the smallest failure "
                         f"time {t1}")
    status, g, scan = _search(t, d, e, float(threshold_min))
    base = dict(n=int(t.size), n_failures=int(d.sum()), conf_level=level,
                threshold_min=float(threshold_min), profile=scan)
    if status == "unbounded":
        nan = pd.DataFrame(math.nan, index=["threshold", "shape", "scale"],
                           columns=["estimate", "se", "low", "high"])
        note = (f"no estimate: the profile likelihood rises all the way to the smallest failure "
                f"time {t1:g} (shape < 1 there, where the 3-parameter Weibull likelihood is "
                "unbounded); use the 2-parameter Weibull or fix the threshold")
        return Weibull3Fit(status=status, params=nan, threshold=math.nan, shape=math.nan,
                           scale=math.nan, log_likelihood=math.nan, aic=math.nan, notes=(note,),
                           **base)
    beta = _profile_beta(g, t, d, e)[1]
    unit = max(abs(t1), 1e-300)
    nll, grad = _nll(t, d, e, unit), _grad(t, d, e, unit)
    theta = np.array([g / unit, math.log(beta), math.log(_eta(g, beta, t, d, e))])
    if status == "interior":
        theta = _polish(theta, nll, grad)
    table = _table(theta, grad, unit, level, status == "interior")
    ll = -nll(theta)
    b = math.exp(theta[1])
    notes = ((f"threshold at its lower bound {threshold_min:g}: the 2-parameter Weibull on "
              f"t - {threshold_min:g}",) if status == "at_lower_bound" else
             (("shape < 2: the estimate is consistent but its intervals are approximate "
               "(non-regular case)",) if b < 2 else ()))
    return Weibull3Fit(status=status, params=table, threshold=float(theta[0]) * unit, shape=b,
                       scale=math.exp(theta[2]), log_likelihood=ll, aic=6.0 - 2.0 * ll,
                       notes=notes, **base)


__all__ = ["Weibull3Fit", "fit_weibull3", "loglik"]
