"""Log-location-scale likelihood of accelerated-failure-time regression, and its maximiser.

With ``y = log T``, ``eta = x' beta`` and ``z = (y - eta) / sigma``, a unit's contribution is
(Kalbfleisch & Prentice 2002, *The Statistical Analysis of Failure Time Data*, §3.3 and §3.6;
Lawless 2003, *Statistical Models and Methods for Lifetime Data*, §6.3)::

    failure at t:             log f0(z) - log sigma - log t
    right-censored at t:      log S0(z)
    in (l, u]:                log(S0(z_l) - S0(z_u))
    entered at e (delayed):   - log S0(z_e)

with the standard extreme-value (Weibull, exponential: ``sigma = 1``), normal (lognormal) or
logistic (log-logistic) ``f0``, ``S0``; every term multiplied by the unit's case weight.  The
parameters are ``(beta, log sigma)``.  The maximum is found by Newton–Raphson with the exact
gradient and Hessian (step halving when the likelihood does not rise), from the least-squares
fit to the log times; the inverse of the negative Hessian is the covariance, in the
coordinates R's ``survreg`` reports (Therneau, *survival: Survival Analysis*, R package).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from reliab.errors import InsufficientDataError

F64 = NDArray[np.float64]
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
BASE = {"weibull": "extreme", "exponential": "extreme", "lognormal": "normal",
        "loglogistic": "logistic"}


def log_f0(base: str, z: F64) -> tuple[F64, F64, F64]:
    """``log f0(z)`` and its first two derivatives in ``z``."""
    if base == "extreme":
        ez = np.exp(z)
        return z - ez, 1.0 - ez, -ez
    if base == "normal":
        return -0.5 * z * z - _HALF_LOG_2PI, -z, -np.ones_like(z)
    f = special.expit(z)
    return z - 2.0 * np.logaddexp(0.0, z), 1.0 - 2.0 * f, -2.0 * f * (1.0 - f)


def log_s0(base: str, z: F64) -> tuple[F64, F64, F64]:
    """``log S0(z)`` and its first two derivatives in ``z``."""
    if base == "extreme":
        ez = np.exp(z)
        return -ez, -ez, -ez
    if base == "normal":
        ls = special.log_ndtr(-z)
        h = np.exp(-0.5 * z * z - _HALF_LOG_2PI - ls)
        return ls, -h, -h * (h - z)
    f = special.expit(z)
    return -np.logaddexp(0.0, z), -f, -f * (1.0 - f)


def s0(base: str, z: F64) -> F64:
    """Standard survival function ``S0(z)``."""
    return np.exp(log_s0(base, z)[0])


def q0(base: str, p: F64) -> F64:
    """Standard quantile: ``z`` with ``1 - S0(z) = p``."""
    if base == "extreme":
        return np.log(-np.log1p(-p))
    if base == "normal":
        return stats.norm.ppf(p)
    return np.log(p) - np.log1p(-p)


def _log_diff(base: str, zl: F64, zu: F64) -> tuple[F64, F64, F64, F64, F64, F64]:
    """``log(S0(zl) - S0(zu))`` and its derivatives in (zl, zu): d_l, d_u, d_ll, d_lu, d_uu."""
    sl, su = s0(base, zl), s0(base, zu)
    fl, fu = np.exp(log_f0(base, zl)[0]), np.exp(log_f0(base, zu)[0])
    gl, gu = log_f0(base, zl)[1], log_f0(base, zu)[1]
    d = sl - su
    a, b = -fl / d, fu / d  # d/dzl, d/dzu of log d
    return np.log(d), a, b, -fl * gl / d - a * a, -a * b, fu * gu / d - b * b


@dataclass(frozen=True)
class AFTData:
    """Design matrix and survival data of one AFT fit (times > 0; entry 0 = none)."""

    x: F64
    time: F64
    event: NDArray[np.bool_]
    upper: F64  # finite: failure in (time, upper] (``event`` False); inf otherwise
    entry: F64
    weight: F64

    @property
    def interval(self) -> NDArray[np.bool_]:
        """Interval-censored rows."""
        return np.isfinite(self.upper)


def _accumulate(base: str, g: F64, g1: F64, g2: F64, z: F64, sigma: float, w: F64,
                x: F64, fixed: bool) -> tuple[float, F64, F64]:
    """Add a term ``g(z)`` (with derivatives) to (loglik, gradient, Hessian) in (beta, log sigma)."""
    p = x.shape[1]
    k = p if fixed else p + 1
    grad, hess = np.zeros(k), np.zeros((k, k))
    grad[:p] = x.T @ (w * g1 * (-1.0 / sigma))
    hess[:p, :p] = (x * (w * g2 / sigma**2)[:, None]).T @ x
    if not fixed:
        grad[p] = float(np.sum(w * g1 * (-z)))
        hess[p, p] = float(np.sum(w * (g2 * z * z + g1 * z)))
        cross = x.T @ (w * (z * g2 + g1) / sigma)
        hess[:p, p] = hess[p, :p] = cross
    return float(np.sum(w * g)), grad, hess


def loglik(base: str, data: AFTData, theta: F64, fixed: bool) -> tuple[float, F64, F64]:
    """Log-likelihood, gradient and Hessian at ``theta = (beta, log sigma)`` (module docstring)."""
    p = data.x.shape[1]
    beta = theta[:p]
    sigma = 1.0 if fixed else math.exp(theta[p])
    eta = data.x @ beta
    y = np.log(data.time)
    z = (y - eta) / sigma
    ev, iv = data.event, data.interval
    rc = ~ev & ~iv
    total, grad, hess = 0.0, np.zeros(theta.size), np.zeros((theta.size, theta.size))
    # every row at once (no copies of x): failures log f0, right-censored log S0, others 0
    lf, ls = log_f0(base, z), log_s0(base, z)
    parts = _accumulate(base, *(np.where(ev, a, np.where(rc, b, 0.0)) for a, b in zip(lf, ls, strict=True)),
                        np.where(iv, 0.0, z), sigma, data.weight, data.x, fixed)
    total, grad, hess = total + parts[0], grad + parts[1], hess + parts[2]
    if ev.any():
        w = data.weight[ev]
        total -= float(np.sum(w * (math.log(sigma) + y[ev])))
        if not fixed:
            grad[p] -= float(np.sum(w))
    tr = data.entry > 0
    if tr.any():
        ze = (np.log(data.entry[tr]) - eta[tr]) / sigma
        parts = _accumulate(base, *log_s0(base, ze), ze, sigma, data.weight[tr], data.x[tr], fixed)
        total, grad, hess = total - parts[0], grad - parts[1], hess - parts[2]
    if iv.any():
        total, grad, hess = _add_interval(base, data, z, eta, sigma, fixed,
                                          (total, grad, hess))
    return total, grad, hess


def _add_interval(base: str, data: AFTData, z: F64, eta: F64, sigma: float,
                  fixed: bool, acc: tuple[float, F64, F64]) -> tuple[float, F64, F64]:
    """Interval-censored terms ``log(S0(z_l) - S0(z_u))`` by the chain rule in (zl, zu)."""
    iv = data.interval
    x, w = data.x[iv], data.weight[iv]
    zl, zu = z[iv], (np.log(data.upper[iv]) - eta[iv]) / sigma
    val, dl, du, dll, dlu, duu = _log_diff(base, zl, zu)
    p = x.shape[1]
    # dz/dbeta = -x / sigma; dz/dlog sigma = -z
    jl = np.c_[-x / sigma, -zl[:, None]] if not fixed else -x / sigma
    ju = np.c_[-x / sigma, -zu[:, None]] if not fixed else -x / sigma
    grad = jl.T @ (w * dl) + ju.T @ (w * du)
    hess = ((jl * (w * dll)[:, None]).T @ jl + (jl * (w * dlu)[:, None]).T @ ju
            + (ju * (w * dlu)[:, None]).T @ jl + (ju * (w * duu)[:, None]).T @ ju)
    if not fixed:  # second derivatives of z itself: d2z/dbeta dlogs = x/sigma, d2z/dlogs2 = z
        for zz, dd in ((zl, dl), (zu, du)):
            hess[:p, p] += x.T @ (w * dd / sigma)
            hess[p, :p] = hess[:p, p]
            hess[p, p] += float(np.sum(w * dd * zz))
    total, g0, h0 = acc
    return total + float(np.sum(w * val)), g0 + grad, h0 + hess


def start(data: AFTData, fixed: bool) -> F64:
    """Least-squares fit of log time on x (interval rows at their log midpoint, or at half
    the upper end when left-censored), log sigma from its residual spread."""
    up = np.where(np.isfinite(data.upper), data.upper, data.time)
    mid = np.where(data.time > 1e-300, np.sqrt(data.time * up), 0.5 * up)
    y = np.log(mid)
    beta, *_ = np.linalg.lstsq(data.x, y, rcond=None)
    if fixed:
        return beta
    resid = y - data.x @ beta
    return np.r_[beta, math.log(max(float(np.std(resid)), 0.1))]


def newton(base: str, data: AFTData, fixed: bool, *, tol: float = 1e-12,
           max_iter: int = 200) -> tuple[F64, float, F64, int]:
    """Maximise :func:`loglik`: (theta, loglik, covariance, iterations)."""
    theta = start(data, fixed)
    ll, g, h = loglik(base, data, theta, fixed)
    it = 0
    while it < max_iter:
        it += 1
        try:
            step = np.linalg.solve(-h, g)
        except np.linalg.LinAlgError as exc:
            raise InsufficientDataError("the AFT information matrix is singular: a covariate "
                                        "is constant or collinear with others") from exc
        if not np.all(np.isfinite(step)) or float(g @ step) <= 0:  # not an ascent direction
            step = g / max(1.0, float(np.max(np.abs(g))))
        for _ in range(60):
            cand = theta + step
            new = loglik(base, data, cand, fixed)
            if np.isfinite(new[0]) and new[0] >= ll - 1e-12 * abs(ll):
                break
            step = step / 2.0
        else:
            raise InsufficientDataError("the AFT likelihood did not rise along the Newton step")
        theta, (ll, g, h) = cand, new
        if float(np.max(np.abs(step))) < tol:
            break
    else:
        raise InsufficientDataError(f"the AFT fit did not converge in {max_iter} iterations")
    info = -h
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError as exc:
        raise InsufficientDataError("the AFT information matrix is singular at the maximum") from exc
    return theta, ll, cov, it
