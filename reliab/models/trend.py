"""Tests for trend in the failure times of one repairable system.

Three tests, as in the NIST/SEMATECH e-Handbook §8.2.3.4 "Trend tests" and NIST Dataplot
"RELIABILITY TRENDS TEST" (``shared/reference/domain.md`` §6.6); all are two-sided against
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
  ``I_1 = t_1, I_k = t_k − t_{k−1}``, ``R = #{j < k : I_j < I_k}`` (reversals). Under no
  trend ``R`` is the inversion count of a random permutation of ``r`` items (the Mahonian
  distribution, computed exactly by dynamic programming for ``r ≤ 60``); beyond that
  ``z = (R − r(r−1)/4 ∓ 0.5) / √((2r+5)(r−1)r/72)`` (continuity correction towards the mean;
  NIST Dataplot prints ``+0.5``). Many reversals: improving; few: worsening.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from reliab.errors import InsufficientDataError
from reliab.models._result import ResultMixin

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
    alpha: float
    distribution: str
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row with every field."""
        row = {k: v for k, v in self._meta().items() if k != "notes"}
        return pd.DataFrame([row])



def _laplace(t: np.ndarray, end: float, termination: str) -> tuple[float, float, str, int]:
    x = t if termination == "time" else t[:-1]
    n = x.size
    if n < 1:
        raise InsufficientDataError("the failure-terminated Laplace test needs >= 2 failures")
    u = (x.mean() - end / 2) / (end * math.sqrt(1 / (12 * n)))
    p = 2 * stats.norm.sf(abs(u))
    return u, p, "worsening" if u > 0 else "improving", n


def _mil(t: np.ndarray, end: float, termination: str) -> tuple[float, float, str, int]:
    x = t if termination == "time" else t[:-1]
    if x.size < 1:
        raise InsufficientDataError("the failure-terminated MIL-HDBK-189 test needs >= 2 failures")
    chi = 2 * float(np.sum(np.log(end / x)))
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
    gaps = np.diff(np.concatenate([[0.0], np.sort(np.asarray(times, dtype=float))]))
    total = 0
    for lo in range(0, gaps.size, 1024):  # row blocks keep memory O(1024 r)
        rows = gaps[lo: lo + 1024, None]
        later = np.arange(gaps.size)[None, :] > np.arange(lo, lo + rows.shape[0])[:, None]
        total += int(np.sum((rows < gaps[None, :]) & later))
    return total


def _reverse_arrangement(t: np.ndarray) -> tuple[float, float, str, str]:
    r = t.size
    if r < 2:
        raise InsufficientDataError("the reverse arrangement test needs >= 2 failures")
    big_r = reversals(t)
    mean = r * (r - 1) / 4
    direction = "improving" if big_r > mean else "worsening"
    if r <= EXACT_MAX_R:
        pmf = _inversion_pmf(r)
        p = 2 * min(pmf[: big_r + 1].sum(), pmf[big_r:].sum())
        return float(big_r), min(1.0, p), direction, f"exact inversion-count distribution, r = {r}"
    sd = math.sqrt((2 * r + 5) * (r - 1) * r / 72)
    z = max(abs(big_r - mean) - 0.5, 0.0) / sd
    return float(big_r), min(1.0, 2 * stats.norm.sf(z)), direction, (
        "normal approximation with continuity correction")


def trend_test(
    times: Any,
    *,
    end: float | None = None,
    method: Method = "laplace",
    alpha: float = 0.05,
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
    alpha : float
        Two-sided significance level at which ``trend`` is decided.

    Returns
    -------
    TrendTestResult
        ``statistic``, two-sided ``pvalue``, ``trend`` in {"improving", "worsening", "none"},
        ``method``, ``n`` (failures used), ``end``, ``termination``, ``alpha``.

    Raises
    ------
    InsufficientDataError
        No failures, or too few for the chosen test (failure-terminated tests drop the last).

    Notes
    -----
    Sources: NIST/SEMATECH e-Handbook §8.2.3.4; NIST Dataplot "RELIABILITY TRENDS TEST";
    MIL-HDBK-189 (1981); Cox & Lewis (1966); Kendall (1938).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    t = np.sort(np.asarray(times, dtype=float).ravel())
    if t.size == 0:
        raise InsufficientDataError("no failure times: a trend test needs failures")
    if not np.all(np.isfinite(t)) or t[0] <= 0:
        raise ValueError("failure times must be finite and > 0")
    termination = "failure" if end is None else "time"
    tend = float(t[-1]) if end is None else float(end)
    if tend < t[-1]:
        raise ValueError(f"end ({tend}) is before the last failure time ({t[-1]})")
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
        if np.unique(np.diff(np.concatenate([[0.0], t]))).size < t.size:
            notes.append("tied inter-arrival times: the null distribution is approximate")
    else:
        raise ValueError(f"unknown method {method!r}")
    return TrendTestResult(
        statistic=float(stat), pvalue=float(p), trend=direction if p < alpha else "none",
        method=method, n=int(n), end=tend, termination=termination, alpha=alpha,
        distribution=dist, notes=tuple(notes))


__all__ = ["trend_test", "TrendTestResult", "reversals"]
