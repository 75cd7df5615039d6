"""Gray's k-sample test that the cumulative incidence of one cause is equal across groups.

Gray, R. J. (1988), A class of K-sample tests for comparing the cumulative incidence of a
competing risk, Annals of Statistics 16, 1141–1154.  The score of group ``g`` sums, over the
failure times of the cause, ``W (d_g - d R_g / sum_r R_r)`` where ``R_g = n_g (1 - F_g(t-)) /
S_g(t-)`` (``F_g`` the group's cumulative incidence of the cause, ``S_g`` its all-cause
Kaplan–Meier curve, both left limits) and ``W = (1 - F(t-))^rho`` with ``F`` the pooled
incidence; the covariance is the asymptotic estimator of §2 of the paper with the
tie corrections of R's ``cmprsk::cuminc``, whose ``Tests`` these values equal.  Strata add
their scores and covariances.  Every per-time recursion is a cumulative product or sum over a
(distinct time x group) array.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models.logrank import factor_codes


@dataclass(frozen=True)
class GrayTestResult(ResultMixin):
    """Gray's test per cause: statistic, degrees of freedom and p-value."""

    table: pd.DataFrame = field(repr=False)
    groups: tuple[Any, ...]
    n: int
    rho: float
    conf_level: float | None = None
    method: str = "Gray's k-sample test of cumulative incidence"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per cause: cause, statistic, df, p_value."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Statistics >= 0 and p-values in [0, 1]."""
        return (in_range("statistic_nonnegative", self.table["statistic"], 0.0),
                in_range("p_in_0_1", self.table["p_value"], 0.0, 1.0))

    def plot(self, ax: Any = None) -> Figure:
        """Chi-square statistic per cause."""
        fig, ax = new_figure(ax)
        tb = self.table
        ax.bar([str(c) for c in tb["cause"]], tb["statistic"])
        ax.set_ylabel("chi-square statistic")
        ax.set_title(f"Gray's test across {len(self.groups)} groups")
        return fig


def _shift(a: NDArray[np.float64], first: float) -> NDArray[np.float64]:
    """Left limits of a per-time array: the previous row, ``first`` before the first row."""
    return np.concatenate([np.full((1, *a.shape[1:]), first), a[:-1]])


def _stratum(t: NDArray[np.float64], kind: NDArray[np.intp], g: NDArray[np.intp], k: int,
             rho: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Scores (k) and covariance (k x k) of one stratum; ``kind``: 0 censored, 1 the cause,
    2 another cause; ``t`` sorted."""
    first = np.r_[True, t[1:] != t[:-1]]
    row = np.cumsum(first) - 1
    m = int(row[-1]) + 1
    cnt = np.bincount((row * k + g) * 3 + kind, minlength=m * k * 3).reshape(m, k, 3)
    cnt = cnt.astype(float)
    out = cnt.sum(axis=2)
    rs = np.bincount(g, minlength=k).astype(float) - (np.cumsum(out, axis=0) - out)
    d1, d2 = cnt[:, :, 1], cnt[:, :, 2]
    keep = (d1 + d2).sum(axis=1) > 0
    rs, d1, d2 = rs[keep], d1[keep], d2[keep]
    live = rs > 0
    safe = np.where(live, rs, 1.0)
    skm = np.cumprod(np.where(live, (rs - d1 - d2) / safe, 1.0), axis=0)
    skmm = _shift(skm, 1.0)
    f1m = _shift(np.cumsum(np.where(live, skmm * d1 / safe, 0.0), axis=0), 0.0)
    h = np.where(live, rs / np.where(live, skmm, 1.0), 0.0)
    tr = h.sum(axis=1)
    tq = (h * (1.0 - f1m)).sum(axis=1)
    nd1 = d1.sum(axis=1)
    f = np.cumsum(nd1 / tr)
    fm = _shift(f, 0.0)
    fb = (1.0 - fm) ** rho
    score = np.sum(np.where(live, fb[:, None] * (d1 - nd1[:, None] * h * (1.0 - f1m) / tq[:, None]),
                            0.0), axis=0)
    a = fb[:, None, None] * (np.einsum("ti,ij->tij", h, np.eye(k)) - h[:, :, None] * h[:, None, :]
                             / tr[:, None, None])
    c = np.cumsum(a * (nd1 / (tr * (1.0 - fm)))[:, None, None], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        skmm_l = np.where(live, skmm, 1.0)
        # failures from the cause
        t4 = np.where(skm > 0, 1.0 - (1.0 - f)[:, None] / np.where(skm > 0, skm, 1.0), 1.0)
        t5 = np.where(nd1[:, None] > 1, 1.0 - (nd1[:, None] - 1.0) / (tr[:, None] * skmm_l - 1.0),
                      1.0)
        t3 = np.where(live & (nd1[:, None] > 0), t5 * skmm * nd1[:, None] / (tr[:, None] * safe),
                      0.0)
        b = a - t4[:, None, :] * c
        v = np.einsum("tik,tjk,tk->ij", b, b, t3)
        v2 = np.einsum("tik,tk->ik", b, t4 * t3)
        v3 = np.sum(t4 * t4 * t3, axis=0)
        # failures from the other causes
        on = (skm > 0) & (d2 > 0)
        u4 = np.where(on, (1.0 - f)[:, None] / np.where(skm > 0, skm, 1.0), 0.0)
        u5 = np.where(d2 > 1, 1.0 - (d2 - 1.0) / (rs - 1.0), 1.0)
        u3 = np.where(on, u5 * skmm**2 * d2 / safe**2, 0.0)
    v += np.einsum("tik,tjk,tk->ij", c, c, u4 * u4 * u3)
    v2 -= np.einsum("tik,tk->ik", c, u4 * u4 * u3)
    v3 += np.sum(u4 * u4 * u3, axis=0)
    cf = c[-1]
    v += (cf * v3) @ cf.T + cf @ v2.T + v2 @ cf.T
    return score, v


def gray_test(
    durations: ArrayLike,
    event_type: ArrayLike,
    groups: ArrayLike,
    *,
    censored: Any = 0,
    strata: ArrayLike | None = None,
    rho: float = 0.0,
) -> GrayTestResult:
    """Gray's test, for every cause, that its cumulative incidence is equal in all groups.

    Parameters
    ----------
    durations
        Time of the first event or of censoring per unit.
    event_type
        Cause per unit; ``censored`` marks censoring.
    groups
        Group label per unit (two or more); missing labels drop the unit.
    strata
        Optional stratum label per unit: scores and covariances are summed over strata.
    rho
        Weight exponent: ``(1 - F(t-))^rho``.

    Returns
    -------
    GrayTestResult
        ``table`` (cause, statistic, df, p_value): chi-square on (groups - 1) df.  A cause
        whose score variance is singular (its events only where one group is at risk) is left
        out and named in ``notes``.
    """
    t0 = np.asarray(durations, dtype=float)
    g, labels = factor_codes(groups, t0.size, "groups")
    s, slabels = (np.zeros(t0.size, dtype=np.intp), [None]) if strata is None else \
        factor_codes(strata, t0.size, "strata")
    kind0 = pd.Series(np.asarray(event_type, dtype=object))
    if len(kind0) != t0.size:
        raise ValueError(f"event_type has {len(kind0)} values but durations has {t0.size}")
    keep = (g >= 0) & (s >= 0) & kind0.notna().to_numpy() & np.isfinite(t0)
    causes = sorted(kind0[keep & (kind0 != censored).to_numpy()].unique())
    k = len(labels)
    if k < 2 or not causes:
        raise InsufficientDataError(f"{k} group(s) and {len(causes)} cause(s) among "
                                    f"{int(keep.sum())} units; the test needs two groups and an event")
    t, g, s, kind0 = t0[keep], g[keep], s[keep], kind0[keep].reset_index(drop=True)
    order = np.lexsort((t, s))
    t, g, s = t[order], g[order], s[order]
    kind0 = kind0.iloc[order].reset_index(drop=True)
    bounds = np.r_[0, np.flatnonzero(np.diff(s)) + 1, t.size]
    rows, skipped = [], []
    for cause in causes:
        kind = np.where(kind0 == cause, 1, np.where(kind0 == censored, 0, 2)).astype(np.intp)
        score, cov = np.zeros(k), np.zeros((k, k))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            sc, cv = _stratum(t[lo:hi], kind[lo:hi], g[lo:hi], k, float(rho))
            score, cov = score + sc, cov + cv
        u, vv = score[:-1], cov[:-1, :-1]
        if np.linalg.matrix_rank(vv) < vv.shape[0]:
            skipped.append(str(cause))
            continue
        stat = float(u @ np.linalg.solve(vv, u))
        rows.append((cause, stat, k - 1, float(stats.chi2.sf(stat, k - 1))))
    if not rows:
        raise InsufficientDataError("no cause has a non-singular score variance: every cause's "
                                    "events fall where only one group is at risk")
    table = pd.DataFrame(rows, columns=["cause", "statistic", "df", "p_value"])
    notes = (f"not tested (singular score variance: events only where one group is at risk): "
             f"{', '.join(skipped)}",) if skipped else ()
    return GrayTestResult(table=table, groups=tuple(labels), n=int(t.size), rho=float(rho),
                          notes=notes)


__all__ = ["GrayTestResult", "gray_test"]
