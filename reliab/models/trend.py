"""Tests for trend in the failure times of one repairable system.

Three tests, as in the NIST/SEMATECH e-Handbook §8.2.3.4 "Trend tests" and NIST Dataplot
"RELIABILITY TRENDS TEST" (itl.nist.gov/div898/handbook/apr/section2/apr234.htm and the
Dataplot reference manual); all are two-sided against
the null of a homogeneous Poisson process (no trend):

* ``"laplace"`` — optimal against the exponential-law NHPP (Cox & Lewis 1966, *The
  Statistical Analysis of Series of Events*, §3.3).
  ``U = (Σ t_i / n − T/2) / (T √(1/(12 n)))`` ~ N(0, 1); time-terminated at ``T = end`` with
  all ``n = r`` times, failure-terminated at ``T = t_r`` with the ``n = r − 1`` earlier times.
  ``U > 0`` worsening (failures bunch late), ``U < 0`` improving.
* ``"mil-hdbk-189"`` — optimal against the power-law NHPP (MIL-HDBK-189, 1981; Crow 1974).
  ``χ² = 2 Σ ln(T/t_i)`` with ``2r`` degrees of freedom time-terminated, and
  ``2 Σ_{i<r} ln(t_r/t_i)`` with ``2(r−1)`` failure-terminated. Small values: worsening;
  large: improving.
* ``"reverse-arrangement"`` — no model assumed (Kendall 1938). With inter-arrival times
  ``I_1 = t_1, I_k = t_k − t_{k−1}``, ``R = #{j < k : I_j < I_k}`` (reversals; tied gaps are
  not reversals). Under no trend every ordering of the gaps is equally likely, so ``R`` is
  the inversion count of a random permutation of ``r`` items: the Mahonian distribution
  without ties, and with tie groups of sizes ``t_1 … t_g`` the q-multinomial coefficients
  ``[r; t_1, …, t_g]_q`` (MacMahon 1916, *Combinatory Analysis* I, §103; Andrews 1976, *The
  Theory of Partitions*, Thm 3.6), both computed exactly for ``r ≤ 60``. Beyond that
  ``z = (|R − E R| − 0.5) / √Var R`` (continuity correction towards the mean; NIST Dataplot
  prints ``+0.5``) with ``E R = (r(r−1)/2 − Σ t(t−1)/2)/2`` and the tie-corrected
  ``Var R = [r(r−1)(2r+5) − Σ t(t−1)(2t+5)]/72``, a quarter of the variance of Kendall's
  ``S = 2R − (r(r−1)/2 − Σ t(t−1)/2)`` with one ranking tied (Kendall 1970, *Rank
  Correlation Methods*, 4th ed., eq. 4.3); it equals R's ``cor.test(gaps, seq_along(gaps),
  method = "kendall", exact = FALSE, continuity = TRUE)``. Many reversals: improving; few:
  worsening.  Gaps within floating-point resolution of each other (64 ulp of the end
  time) count as tied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, finite, in_range
from reliab._deprecation import warn_renamed
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._times import TIE_RTOL, end_time, failure_times

Method = Literal["laplace", "mil-hdbk-189", "reverse-arrangement"]
EXACT_MAX_R = 60


@dataclass(frozen=True)
class TrendTestResult(ResultMixin):
    """Outcome of a trend test: statistic, two-sided p-value and the direction found."""

    statistic: float
    pvalue: float
    trend: str
    method: str
    n: int
    end: float
    termination: str
    conf_level: float
    distribution: str
    notes: tuple[str, ...] = ()
    times: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    @property
    def alpha(self) -> float:
        """Significance level ``1 - conf_level`` at which ``trend`` was decided."""
        return 1.0 - self.conf_level

    def summary(self) -> pd.DataFrame:
        """One row with every field."""
        row = {k: v for k, v in self._meta().items() if k != "notes"}
        return pd.DataFrame([row])

    def invariants(self) -> tuple[Check, ...]:
        """Statistic finite, p-value in [0, 1], verdict one of none/improving/worsening."""
        return (finite("statistic_finite", self.statistic),
                in_range("pvalue_in_unit_interval", self.pvalue, 0, 1),
                Check("trend_known", self.trend in ("none", "improving", "worsening"),
                      f"trend {self.trend!r}"))

    def plot(self, ax: Any = None) -> Any:
        """Cumulative failures against time beside the straight line of no trend (an HPP
        through the origin and the end of observation); curving below it is worsening,
        above it improving."""
        fig, ax = new_figure(ax)
        t = self.times
        ax.step(np.r_[0.0, t, self.end], np.r_[0, np.arange(1, t.size + 1), t.size], where="post",
                label="observed")
        ax.plot([0.0, self.end], [0.0, t.size], ls="--", color="grey", label="no trend (HPP)")
        ax.set(xlabel="time (h)", ylabel="cumulative failures (count)",
               title=f"{self.method}: {self.trend} (p = {self.pvalue:.2g})")
        ax.legend()
        return fig



def _laplace(t: np.ndarray, end: float, termination: str) -> tuple[float, float, str, int]:
    x = t if termination == "time" else t[:-1]
    n = x.size
    if n < 1:
        raise InsufficientDataError("the failure-terminated Laplace test needs >= 2 failures")
    u = (float(np.mean(x / end)) - 0.5) / math.sqrt(1 / (12 * n))  # scaled by end: no overflow
    p = 2 * stats.norm.sf(abs(u))
    return u, p, "worsening" if u > 0 else "improving", n


def _mil(t: np.ndarray, end: float, termination: str) -> tuple[float, float, str, int]:
    x = t if termination == "time" else t[:-1]
    if x.size < 1:
        raise InsufficientDataError("the failure-terminated MIL-HDBK-189 test needs >= 2 failures")
    chi = 2 * float(np.sum(math.log(end) - np.log(x)))  # logs: safe at extreme scales
    df = 2 * x.size
    lower = stats.chi2.cdf(chi, df)
    p = min(1.0, 2 * min(lower, 1 - lower))
    return chi, p, "worsening" if lower < 0.5 else "improving", df


@lru_cache(maxsize=128)
def _inversion_pmf(r: int) -> np.ndarray:
    """PMF of the inversion count of a uniform random permutation of ``r`` items.

    Dynamic programming over items: adding the k-th item adds 0..k−1 inversions with equal
    probability (the Mahonian numbers, OEIS A008302).
    """
    pmf = np.array([1.0])
    for k in range(2, r + 1):
        new = np.zeros(pmf.size + k - 1)
        for j in range(k):
            new[j: j + pmf.size] += pmf
        pmf = new / k
    return pmf


def reversals(times: np.ndarray) -> int:
    """Number of reversals ``#{j < k : I_j < I_k}`` of the inter-arrival times of ``times``."""
    return _count_reversals(_gaps(np.sort(np.asarray(times, dtype=float))))


def _gaps(t: np.ndarray) -> np.ndarray:
    """Inter-arrival times of sorted ``t``; gaps within resolution of another are one value."""
    gaps = np.diff(np.concatenate([[0.0], t]))
    if gaps.size < 2:
        return gaps
    order = np.argsort(gaps, kind="stable")
    g = gaps[order]
    tol = TIE_RTOL * max(float(t[-1]), 1.0)
    start = np.r_[True, np.diff(g) > tol]
    g = g[np.maximum.accumulate(np.where(start, np.arange(g.size), 0))]
    out = np.empty_like(gaps)
    out[order] = g
    return out


def _count_reversals(gaps: np.ndarray) -> int:
    total = 0
    for lo in range(0, gaps.size, 1024):  # row blocks keep memory O(1024 r)
        rows = gaps[lo: lo + 1024, None]
        later = np.arange(gaps.size)[None, :] > np.arange(lo, lo + rows.shape[0])[:, None]
        total += int(np.sum((rows < gaps[None, :]) & later))
    return total


def _tie_sizes(gaps: np.ndarray) -> tuple[int, ...]:
    return tuple(int(c) for c in np.unique(gaps, return_counts=True)[1])


def _reversal_moments(gaps: np.ndarray) -> tuple[float, float]:
    """Mean and tie-corrected variance of ``R`` under no trend (Kendall 1970, eq. 4.3 / 4)."""
    r = gaps.size
    t = np.array(_tie_sizes(gaps), dtype=float)
    mean = (r * (r - 1) / 2 - float(np.sum(t * (t - 1))) / 2) / 2
    var = (r * (r - 1) * (2 * r + 5) - float(np.sum(t * (t - 1) * (2 * t + 5)))) / 72
    return mean, var


@lru_cache(maxsize=256)
def _q_binomial(m: int, k: int) -> np.ndarray:
    """Coefficients of the Gaussian binomial ``[m; k]_q`` (``[m;k] = [m−1;k−1] + q^k [m−1;k]``)."""
    if k == 0 or k == m:
        return np.array([1.0])
    a, b = _q_binomial(m - 1, k - 1), _q_binomial(m - 1, k)
    out = np.zeros(k * (m - k) + 1)
    out[: a.size] += a
    out[k: k + b.size] += b
    return out


@lru_cache(maxsize=128)
def _tied_reversal_pmf(sizes: tuple[int, ...]) -> np.ndarray:
    """PMF of the inversion count of a uniformly random arrangement of a multiset with tie
    groups of ``sizes``: the normalised q-multinomial ``Π_i [t_1+…+t_i; t_i]_q``."""
    poly, total = np.array([1.0]), 0
    for size in sorted(sizes):
        total += size
        poly = np.convolve(poly, _q_binomial(total, size))
    return poly / poly.sum()


def _reverse_arrangement(t: np.ndarray) -> tuple[float, float, str, str]:
    r = t.size
    if r < 2:
        raise InsufficientDataError("the reverse arrangement test needs >= 2 failures")
    gaps = _gaps(t)
    big_r = _count_reversals(gaps)
    mean, var = _reversal_moments(gaps)
    direction = "improving" if big_r > mean else "worsening"
    sizes = _tie_sizes(gaps)
    tied = len(sizes) < r
    if r <= EXACT_MAX_R:
        pmf = _tied_reversal_pmf(sizes) if tied else _inversion_pmf(r)
        p = 2 * min(pmf[: big_r + 1].sum(), pmf[big_r:].sum())
        return float(big_r), min(1.0, p), direction, (
            f"exact {'q-multinomial (tied gaps)' if tied else 'inversion-count'} "
            f"distribution, r = {r}")
    if var <= 0:
        return float(big_r), 1.0, direction, "all gaps tied: no ordering information"
    z = max(abs(big_r - mean) - 0.5, 0.0) / math.sqrt(var)
    return float(big_r), min(1.0, 2 * stats.norm.sf(z)), direction, (
        "normal approximation with continuity correction"
        + (" and Kendall's tie-corrected variance" if tied else ""))


def trend_test(
    times: Any,
    *,
    end: float | None = None,
    method: Method = "laplace",
    conf_level: float = 0.95,
    alpha: float | None = None,
) -> TrendTestResult:
    """Test the failure times of one repairable system for a trend in the failure intensity.

    Parameters
    ----------
    times : array-like of float
        Failure times (system age, > 0), any order.
    end : float, optional
        End of observation (time-terminated). ``None``: failure-terminated at the last failure.
    method : {"laplace", "mil-hdbk-189", "reverse-arrangement"}
        The test (see the module docstring for formulas and sources).
    conf_level : float
        ``trend`` is decided at the two-sided significance level ``1 - conf_level``.
    alpha : float, optional
        Deprecated: the significance level; give ``conf_level = 1 - alpha`` instead.

    Returns
    -------
    TrendTestResult
        ``statistic``, two-sided ``pvalue``, ``trend`` in {"improving", "worsening", "none"},
        ``method``, ``n`` (failures used), ``end``, ``termination``, ``conf_level``.

    Raises
    ------
    InsufficientDataError
        No failures, or too few for the chosen test (failure-terminated tests drop the last).
    ValueError
        A time that is missing, infinite or not positive, ``end`` before the last time, or
        ``conf_level`` outside (0, 1).  Times closer than floating-point resolution are ties.

    Notes
    -----
    Sources: NIST/SEMATECH e-Handbook §8.2.3.4; NIST Dataplot "RELIABILITY TRENDS TEST";
    MIL-HDBK-189 (1981); Cox & Lewis (1966); Kendall (1938).
    """
    if alpha is not None:
        warn_renamed("trend_test(alpha=...)", "trend_test(conf_level=1 - alpha)")
        conf_level = 1.0 - alpha
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    t = failure_times(times)
    if t.size == 0:
        raise InsufficientDataError("no failure times: a trend test needs failures")
    checked_end = end_time(t, end)
    termination = "failure" if checked_end is None else "time"
    tend = float(t[-1]) if checked_end is None else checked_end
    notes: list[str] = []
    if method == "laplace":
        stat, p, direction, n = _laplace(t, tend, termination)
        dist = "standard normal"
    elif method == "mil-hdbk-189":
        stat, p, direction, df = _mil(t, tend, termination)
        n, dist = df // 2, f"chi-square with {df} df"
    elif method == "reverse-arrangement":
        stat, p, direction, dist = _reverse_arrangement(t)
        n = t.size
    else:
        raise ValueError(f"unknown method {method!r}")
    return TrendTestResult(
        statistic=float(stat), pvalue=float(p), trend=direction if p < 1.0 - conf_level else "none",
        method=method, n=int(n), end=tend, termination=termination, conf_level=conf_level,
        distribution=dist, notes=tuple(notes), times=t)


__all__ = ["trend_test", "TrendTestResult", "reversals"]
