"""Maximum likelihood for lifetime data with exact, right-, left- and interval-censored times.

A unit's failure time is known to lie in ``[lower, upper]``: ``lower == upper`` is an exact
failure, ``upper = inf`` right-censoring at ``lower``, ``lower = 0`` left-censoring (failed
before ``upper``), anything else interval censoring.  Under non-informative censoring the
log-likelihood is (Meeker & Escobar 1998, *Statistical Methods for Reliability Data*, §2.4 and
§7.2; Lawless 2003, *Statistical Models and Methods for Lifetime Data*, §2.2.3)::

    l = sum_exact ln f(t) + sum_right ln S(l) + sum_left ln F(u) + sum_interval ln(F(u) - F(l))
        - sum_entered ln S(e)

the last term for delayed entry (left truncation) at ``e``.  The families are the Weibull,
exponential, lognormal, log-logistic and gamma, each with a free vector ``theta`` (log scale,
log shape; ``mu`` and log ``sigma`` for the lognormal).  The maximum is found by BFGS from a
moment start, polished with Newton steps on a central-difference Hessian, whose inverse gives
Wald intervals (Meeker & Escobar 1998, §8.4).  Profile-likelihood limits (§8.3) are roots of
``max l(theta | g(theta) = v) = l_max - chi2_1(level) / 2``.  Times are divided by their
largest finite bound so that the optimisation works on numbers near one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from reliab.errors import InsufficientDataError

FAMILIES = ("weibull", "exponential", "lognormal", "loglogistic", "gamma")
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Bounds:
    """Validated censored data: per unit ``lower <= T <= upper`` and an entry time."""

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    entry: NDArray[np.float64]

    @property
    def n(self) -> int:
        """Number of units."""
        return int(self.lower.size)

    @property
    def exact(self) -> NDArray[np.bool_]:
        """Units with an exact failure time."""
        return self.lower == self.upper

    @property
    def right(self) -> NDArray[np.bool_]:
        """Right-censored units."""
        return np.isinf(self.upper)

    @property
    def left(self) -> NDArray[np.bool_]:
        """Left-censored units (failed before ``upper``)."""
        return (self.lower == 0) & np.isfinite(self.upper) & ~self.exact

    @property
    def interval(self) -> NDArray[np.bool_]:
        """Interval-censored units with ``0 < lower < upper < inf``."""
        return ~(self.exact | self.right | self.left)

    @property
    def n_failures(self) -> int:
        """Units that failed (all but the right-censored)."""
        return int(np.count_nonzero(~self.right))

    def counts(self) -> str:
        """``"3 exact, 2 right-, 1 left-, 4 interval-censored"``."""
        return (f"{int(self.exact.sum())} exact, {int(self.right.sum())} right-, "
                f"{int(self.left.sum())} left-, {int(self.interval.sum())} interval-censored")


def as_bounds(lower: ArrayLike, upper: ArrayLike, entry: ArrayLike | None = None) -> Bounds:
    """Validate interval data; raise ``ValueError`` naming the count and the first bad index."""
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.ndim != 1 or lo.shape != hi.shape:
        raise ValueError(f"lower and upper must be one-dimensional of equal length, got shapes "
                         f"{lo.shape} and {hi.shape}")
    e = np.zeros_like(lo) if entry is None else np.asarray(entry, dtype=float)
    if e.shape != lo.shape:
        raise ValueError(f"entry has {e.size} values but lower has {lo.size}")
    checks = ((~np.isfinite(lo), "lower bound(s) are missing or not finite"),
              (np.isnan(hi), "upper bound(s) are missing"),
              (lo < 0, "negative lower bound(s)"),
              (hi < lo, "upper bound(s) below the lower bound"),
              ((hi == 0), "upper bound(s) are zero; failure times must be > 0"),
              (~np.isfinite(e) | (e < 0), "entry time(s) negative or not finite"),
              (e > lo, "entry time(s) later than the lower bound"))
    for mask, what in checks:
        if mask.any():
            raise ValueError(f"{int(mask.sum())} {what} (first at index "
                             f"{int(np.flatnonzero(mask)[0])})")
    return Bounds(lo, hi, e)


def _log_sf_cdf(family: str, theta: NDArray[np.float64], t: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(ln S(t), ln F(t))`` elementwise (``t`` may hold 0 and inf)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        if family in ("weibull", "exponential"):
            shape = np.exp(theta[1]) if family == "weibull" else 1.0
            z = (t / np.exp(theta[0])) ** shape
            return -z, np.log(-np.expm1(-z))
        if family == "lognormal":
            w = (np.log(t) - theta[0]) / np.exp(theta[1])
            return special.log_ndtr(-w), special.log_ndtr(w)
        if family == "loglogistic":
            u = np.exp(theta[1]) * (np.log(t) - theta[0])
            return -np.logaddexp(0.0, u), -np.logaddexp(0.0, -u)
        x, k = t / np.exp(theta[0]), np.exp(theta[1])
        return np.log(special.gammaincc(k, x)), np.log(special.gammainc(k, x))


def _log_pdf(family: str, theta: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray[np.float64]:
    lt = np.log(t)
    with np.errstate(over="ignore", invalid="ignore"):  # a profile search may try a huge log scale
        return _log_pdf_of(family, theta, lt)


def _log_pdf_of(family: str, theta: NDArray[np.float64], lt: NDArray[np.float64]) -> NDArray[np.float64]:
    if family in ("weibull", "exponential"):
        lb = theta[1] if family == "weibull" else 0.0
        b = np.exp(lb)
        y = b * (lt - theta[0])
        return lb - lt + y - np.exp(y)
    if family == "lognormal":
        w = (lt - theta[0]) / np.exp(theta[1])
        return -lt - theta[1] - _HALF_LOG_2PI - 0.5 * w * w
    if family == "loglogistic":
        u = np.exp(theta[1]) * (lt - theta[0])
        return theta[1] - lt + u - 2.0 * np.logaddexp(0.0, u)
    k = np.exp(theta[1])
    lx = lt - theta[0]
    return k * lx - np.exp(lx) - float(special.gammaln(k)) - lt


def _log_diff(lsf_lo, lcdf_lo, lsf_hi, lcdf_hi) -> NDArray[np.float64]:  # noqa: ANN001
    """``ln(F(u) - F(l))`` from the logs of S and F at both ends, without cancellation."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lower_tail = lcdf_hi < math.log(0.5)
        via_cdf = lcdf_hi + np.log1p(-np.exp(lcdf_lo - lcdf_hi))
        via_sf = lsf_lo + np.log1p(-np.exp(lsf_hi - lsf_lo))
        return np.where(lower_tail, via_cdf, via_sf)


@dataclass(frozen=True)
class Likelihood:
    """The log-likelihood of one family on scaled data (times divided by ``c``)."""

    family: str
    data: Bounds
    c: float
    _parts: tuple[NDArray[np.float64], ...] = field(repr=False, default=())

    @classmethod
    def of(cls, family: str, data: Bounds) -> Likelihood:
        """Split the data by kind once; times are divided by the largest finite bound."""
        finite_hi = data.upper[np.isfinite(data.upper)]
        c = float(max(finite_hi.max() if finite_hi.size else 0.0, data.lower.max()))
        s = 1.0 / c
        iv = data.interval
        parts = (data.lower[data.exact] * s, data.lower[data.right] * s,
                 data.upper[data.left] * s, data.lower[iv] * s, data.upper[iv] * s,
                 data.entry[data.entry > 0] * s)
        return cls(family, data, c, parts)

    @property
    def n_params(self) -> int:
        """Number of free parameters."""
        return 1 if self.family == "exponential" else 2

    def scaled(self, theta: NDArray[np.float64]) -> float:
        """Log-likelihood in scaled units (``theta[0]`` the log scale divided by ``c``)."""
        exact, right, left, ilo, ihi, entry = self._parts
        f = self.family
        total = float(_log_pdf(f, theta, exact).sum()) if exact.size else 0.0
        if right.size:
            total += float(_log_sf_cdf(f, theta, right)[0].sum())
        if left.size:
            total += float(_log_sf_cdf(f, theta, left)[1].sum())
        if ilo.size:
            total += float(_log_diff(*_log_sf_cdf(f, theta, ilo), *_log_sf_cdf(f, theta, ihi)).sum())
        if entry.size:
            total -= float(_log_sf_cdf(f, theta, entry)[0].sum())
        return total if math.isfinite(total) else -math.inf

    def to_data_units(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """``theta`` with its location moved from scaled to data time units."""
        out = np.array(theta, dtype=float)
        out[0] += math.log(self.c)
        return out

    def loglik(self, theta_scaled: NDArray[np.float64]) -> float:
        """Log-likelihood in the data's units (the exact terms carry the Jacobian ``1/c``)."""
        return self.scaled(theta_scaled) - int(self.data.exact.sum()) * math.log(self.c)


def _start(lik: Likelihood) -> NDArray[np.float64]:
    """Moments of log "representative" times: midpoint, lower end if right-censored."""
    d = lik.data
    rep = np.where(d.right, d.lower, np.where(d.left, d.upper / 2, (d.lower + d.upper) / 2))
    x = np.log(rep[rep > 0] / lik.c)
    m, sd = float(x.mean()), float(x.std()) or 1.0
    if lik.family == "exponential":
        return np.array([m])
    if lik.family == "weibull":
        return np.array([m + 0.5772 * sd * math.sqrt(6) / math.pi,
                         math.log(math.pi / math.sqrt(6) / sd)])
    if lik.family == "lognormal":
        return np.array([m, math.log(sd)])
    if lik.family == "loglogistic":
        return np.array([m, math.log(math.pi / math.sqrt(3) / sd)])
    k = max(1.0 / (math.expm1(sd * sd)), 0.05)  # lognormal-matched coefficient of variation
    return np.array([m + 0.5 * sd * sd - math.log(k), math.log(k)])


def hessian(fn: Callable[[NDArray[np.float64]], float], x: NDArray[np.float64],
            h: float = 1e-4) -> NDArray[np.float64]:
    """Central-difference Hessian of ``fn`` at ``x``."""
    k = x.size
    out = np.empty((k, k))
    eye = np.eye(k) * h
    for i in range(k):
        for j in range(i, k):
            val = (fn(x + eye[i] + eye[j]) - fn(x + eye[i] - eye[j])
                   - fn(x - eye[i] + eye[j]) + fn(x - eye[i] - eye[j])) / (4 * h * h)
            out[i, j] = out[j, i] = val
    return out


def gradient(fn: Callable[[NDArray[np.float64]], float], x: NDArray[np.float64],
             h: float = 1e-6) -> NDArray[np.float64]:
    """Central-difference gradient of ``fn`` at ``x``."""
    eye = np.eye(x.size) * h
    return np.array([(fn(x + e) - fn(x - e)) / (2 * h) for e in eye])


@dataclass(frozen=True)
class MLE:
    """Maximum-likelihood estimate: ``theta`` in data units, log-likelihood, covariance."""

    lik: Likelihood
    theta: NDArray[np.float64]
    theta_scaled: NDArray[np.float64]
    log_likelihood: float
    cov: NDArray[np.float64]
    iterations: int

    def sf(self, t: ArrayLike) -> NDArray[np.float64]:
        """Fitted survival at ``t`` (data units)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float)) / self.lik.c
        return np.exp(_log_sf_cdf(self.lik.family, self.theta_scaled, tt)[0])

    def profile_limits(self, constrain: Callable[[float, float], NDArray[np.float64]],
                       value: float, free0: float, se: float, level: float
                       ) -> tuple[float, float]:
        """Profile-likelihood interval of a quantity ``v`` (scaled units).

        ``constrain(v, free)`` is the scaled ``theta`` with the quantity at ``v`` and the
        remaining free coordinate at ``free`` (ignored by one-parameter families), ``free0``
        its value at the maximum and ``se`` the Wald standard error of ``v`` (first step).
        """
        threshold = self.lik.scaled(self.theta_scaled) - 0.5 * float(stats.chi2.ppf(level, 1))

        def profile(v: float) -> float:
            if self.lik.n_params == 1:
                return self.lik.scaled(constrain(v, 0.0))
            res = optimize.minimize_scalar(lambda f: -self.lik.scaled(constrain(v, f)),
                                           bracket=(free0 - 0.1, free0 + 0.1),
                                           options={"xtol": 1e-10})
            return -float(res.fun)

        out = []
        for side in (-1.0, 1.0):
            step, edge = max(se, 1e-3), value
            for _ in range(40):
                edge = value + side * step
                if profile(edge) < threshold:
                    break
                step *= 2.0
            else:
                out.append(side * math.inf)
                continue
            a, b = sorted((value, edge))
            out.append(float(optimize.brentq(lambda v: profile(v) - threshold, a, b,
                                             xtol=1e-12, rtol=1e-12)))
        return out[0], out[1]


def fit(family: str, data: Bounds) -> MLE:
    """Maximise the censored-data log-likelihood of ``family`` (one of :data:`FAMILIES`)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    need = 1 if family == "exponential" else 2
    if data.n_failures < need:
        raise InsufficientDataError(f"{data.n_failures} failure(s) among {data.n} units; a "
                                    f"{family} fit needs at least {need}")
    lik = Likelihood.of(family, data)

    def nll(th: NDArray[np.float64]) -> float:
        v = lik.scaled(th)
        return -v if math.isfinite(v) else 1e300

    res = optimize.minimize(nll, _start(lik), method="Nelder-Mead",
                            options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 4000})
    theta, iterations = np.asarray(res.x, dtype=float), int(res.nit)
    for _ in range(50):  # Newton polish on finite differences
        try:
            step = np.linalg.solve(hessian(nll, theta), gradient(nll, theta))
        except np.linalg.LinAlgError:
            break
        now, shrink = nll(theta), 1.0
        while nll(theta - shrink * step) > now and shrink > 1e-3:
            shrink /= 2
        if nll(theta - shrink * step) > now:
            break  # at the noise floor of the differences
        theta = theta - shrink * step
        iterations += 1
        if float(np.max(np.abs(shrink * step))) < 1e-10:
            break
    if np.any(np.abs(theta) > 50) or not math.isfinite(nll(theta)):
        raise InsufficientDataError(f"the {family} likelihood has no finite maximum on these "
                                    f"{data.n} units ({data.counts()})")
    info = hessian(nll, theta)
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError as exc:
        raise InsufficientDataError(f"the {family} information matrix is singular") from exc
    if not np.all(np.isfinite(cov)) or np.any(np.diag(cov) <= 0):
        raise InsufficientDataError(f"the {family} information matrix is not positive definite "
                                    f"at the maximum ({data.counts()})")
    return MLE(lik, lik.to_data_units(theta), theta, lik.loglik(theta), cov, iterations)
