"""Log-rank and Fleming–Harrington G-rho tests of k survival curves, optionally stratified.

At each distinct event time of a stratum, with ``n_g`` at risk and ``d_g`` failing in group
``g`` (``n``, ``d`` pooled), the weight is ``w = S(t-)^rho`` with ``S`` the pooled
Kaplan–Meier curve of the stratum; observed ``O_g = sum w d_g``, expected
``E_g = sum w d n_g / n`` and the hypergeometric covariance
``V_gh = sum w^2 d (n - d) / (n (n - 1)) (n_g [g = h] - n_g n_h / n) / n``, summed over strata.
The statistic ``(O - E)' V^-1 (O - E)`` on all groups with ``E > 0`` but the first is
chi-square with (that number - 1) degrees of freedom.  ``rho = 0`` is the log-rank test of
Mantel (1966) and Peto & Peto (1972); ``rho = 1`` the Peto–Peto/Prentice weighting; Harrington,
D. P. and Fleming, T. R. (1982), A class of rank test procedures for censored survival data,
Biometrika 69, 553–566.  The same computation as R's ``survival::survdiff(..., rho=)``.

One lexicographic sort of (stratum, time); counts per time and group with ``np.bincount``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, equal, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._survival_input import as_lifetimes


@dataclass(frozen=True)
class LogRankResult(ResultMixin):
    """k-sample log-rank / G-rho test: per-group observed and expected counts, chi-square, p."""

    table: pd.DataFrame = field(repr=False)
    chisq: float
    df: int
    p_value: float
    rho: float
    n: int
    n_strata: int
    covariance: NDArray[np.float64] = field(repr=False)
    conf_level: float | None = None
    method: str = "log-rank"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per group: group, n, observed, expected, (O-E)^2/E, (O-E)^2/V."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Chi-square >= 0, p in [0, 1], observed and expected totals equal (they are the same
        weighted count of events)."""
        tb = self.table
        return (in_range("chisq_nonnegative", self.chisq, 0.0),
                in_range("p_in_0_1", self.p_value, 0.0, 1.0),
                equal("observed_total_is_expected_total", tb["observed"].sum(),
                      tb["expected"].sum(), rtol=1e-9))

    def plot(self, ax: Any = None) -> Figure:
        """Observed against expected (weighted) events per group."""
        fig, ax = new_figure(ax)
        tb = self.table
        x = np.arange(len(tb))
        ax.bar(x - 0.2, tb["observed"], width=0.4, label="observed")
        ax.bar(x + 0.2, tb["expected"], width=0.4, label="expected")
        ax.set_xticks(x, [str(g) for g in tb["group"]])
        ax.set_ylabel("events (weighted)")
        ax.set_title(f"{self.method}: chi2 {self.chisq:.3g} on {self.df} df, p = {self.p_value:.3g}")
        ax.legend(loc="best")
        return fig


def factor_codes(values: ArrayLike, size: int, name: str) -> tuple[NDArray[np.intp], list[Any]]:
    """Integer code per unit (-1 for a missing label) and the sorted distinct labels."""
    arr = values if isinstance(values, pd.Series | pd.Index) else np.asarray(values)
    if len(arr) != size:
        raise ValueError(f"{name} has {len(arr)} values but durations has {size}")
    codes, labels = pd.factorize(arr, sort=True)
    return np.asarray(codes, dtype=np.intp), list(labels)


def stable_order(codes: NDArray[np.intp], n_codes: int) -> NDArray[np.intp]:
    """Stable argsort of small integer codes (16-bit keys take numpy's radix sort)."""
    key = codes.astype(np.int16) if n_codes < 2**15 else codes
    return np.argsort(key, kind="stable")


def _stratum(t: NDArray[np.float64], d: NDArray[np.float64], g: NDArray[np.intp], k: int,
             rho: float) -> tuple[NDArray[np.float64], ...]:
    """Weighted observed, expected and covariance of one stratum (``t`` sorted ascending)."""
    first = np.empty(t.size, dtype=bool)
    first[:1] = True
    np.not_equal(t[1:], t[:-1], out=first[1:])
    row = np.cumsum(first) - 1
    m = int(row[-1]) + 1
    deaths = np.bincount(row * k + g, weights=d, minlength=m * k).reshape(m, k)
    gone = np.bincount(row * k + g, minlength=m * k).reshape(m, k).astype(float)
    risk = np.bincount(g, minlength=k).astype(float) - (np.cumsum(gone, axis=0) - gone)
    dt = deaths.sum(axis=1)
    hit = dt > 0
    deaths, risk, dt = deaths[hit], risk[hit], dt[hit]
    n = risk.sum(axis=1)
    if rho == 0.0:
        w = np.ones_like(dt)
    else:
        s = np.cumprod(1.0 - dt / n)
        w = np.r_[1.0, s[:-1]] ** rho
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.where(n > 1, w * w * dt * (n - dt) / (n * (n - 1.0)), 0.0)
    obs = w @ deaths
    exp = (w * dt / n) @ risk
    cov = np.diag(c @ risk) - (risk * (c / n)[:, None]).T @ risk
    return obs, exp, cov


def logrank_test(
    durations: ArrayLike,
    observed: ArrayLike | None,
    groups: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    rho: float = 0.0,
) -> LogRankResult:
    """Log-rank (``rho = 0``) or Fleming–Harrington G-rho test that k survival curves are equal.

    Parameters
    ----------
    durations
        Time of failure or right censoring per unit.
    observed
        1/True for a failure, 0/False for censoring (``None``: all failed).
    groups
        Group label per unit (two or more distinct labels); missing labels drop the unit.
    strata
        Optional stratum label per unit: the test compares groups within strata and sums
        observed, expected and covariance over strata (missing labels drop the unit).
    rho
        Weight exponent: ``S(t-)^rho`` (0: log-rank; 1: Peto–Peto).

    Returns
    -------
    LogRankResult
        ``table`` (group, n, observed, expected, (O-E)^2/E, (O-E)^2/V), ``chisq``, ``df``,
        ``p_value``, ``covariance`` (k x k).  See the module docstring for the formulas and
        sources; the values are those of R's ``survdiff``.
    """
    if not np.isfinite(rho) or rho < 0:
        raise ValueError(f"rho must be a finite number >= 0, got {rho!r}")
    data = as_lifetimes(durations, observed, None)
    g, labels = factor_codes(groups, data.n, "groups")
    if strata is None:
        s, slabels = np.zeros(data.n, dtype=np.intp), [None]
    else:
        s, slabels = factor_codes(strata, data.n, "strata")
    keep = (g >= 0) & (s >= 0)
    t, d = data.durations, data.observed.astype(float)
    if not keep.all():
        t, d, g, s = t[keep], d[keep], g[keep], s[keep]
    k = len(labels)
    if k < 2:
        raise InsufficientDataError(f"{k} group(s) among {t.size} units; the test needs two or more")
    order = np.argsort(t)  # ties are pooled per time, so the sort need not be stable
    if strata is not None:
        order = order[stable_order(s[order], len(slabels))]
    t, d, g, s = t[order], d[order], g[order], s[order]
    bounds = np.r_[0, np.flatnonzero(np.diff(s)) + 1, t.size]
    obs, exp, cov = np.zeros(k), np.zeros(k), np.zeros((k, k))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if d[lo:hi].sum() > 0:
            o, e, c = _stratum(t[lo:hi], d[lo:hi], g[lo:hi], k, float(rho))
            obs, exp, cov = obs + o, exp + e, cov + c
    used = np.flatnonzero(exp > 0)
    if used.size < 2:
        raise InsufficientDataError("fewer than two groups have expected events; nothing to test")
    diff = (obs - exp)[used[1:]]
    chisq = float(diff @ np.linalg.solve(cov[np.ix_(used[1:], used[1:])], diff))
    df = int(used.size - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        table = pd.DataFrame({"group": labels, "n": np.bincount(g, minlength=k), "observed": obs,
                              "expected": exp, "oe2_over_e": (obs - exp) ** 2 / exp,
                              "oe2_over_v": (obs - exp) ** 2 / np.diag(cov)})
    name = "log-rank" if rho == 0 else f"Fleming-Harrington G-rho (rho = {rho:g})"
    if strata is not None:
        name += f", stratified by {len(slabels)} strata"
    dropped = int((~keep).sum())
    notes = (f"{dropped} unit(s) with a missing group or stratum dropped",) if dropped else ()
    return LogRankResult(table=table, chisq=chisq, df=df,
                         p_value=float(stats.chi2.sf(chisq, df)), rho=float(rho), n=int(t.size),
                         n_strata=len(slabels), covariance=cov, method=name, notes=notes)


__all__ = ["LogRankResult", "logrank_test"]
