"""Restricted mean survival time (RMST) to a horizon tau, its standard error, group differences.

``RMST(tau) = integral_0^tau S(u) du`` under the Kaplan–Meier curve, with the variance
``sum_{t_i <= tau} A_i^2 d_i / (n_i (n_i - d_i))`` where ``A_i = integral_{t_i}^tau S(u) du``
(Klein, J. P. and Moeschberger, M. L. (2003), *Survival Analysis*, 2nd ed., §4.5, eq. 4.5.2;
the value printed by R's ``print(survfit, rmean = tau)``).  The difference between two groups is
the difference of their RMSTs with the sum of their variances (independent samples; Royston, P.
and Parmar, M. K. B. (2013), Restricted mean survival time: an alternative to the hazard ratio
for the design and analysis of randomized trials with a time-to-event outcome, BMC Med. Res.
Methodol. 13, 152).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike
from scipy import stats

from reliab._checks import Check, contains, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._survival_input import check_conf_level
from reliab.models.nonparametric import KaplanMeierResult, estimate_kaplan_meier


def restricted_mean(km: KaplanMeierResult, tau: float) -> tuple[float, float]:
    """RMST of a Kaplan–Meier curve to ``tau`` and its standard error (module docstring)."""
    tb = km.table
    t, s = tb["time"].to_numpy(float), tb["survival"].to_numpy(float)
    n, d = tb["at_risk"].to_numpy(float), tb["events"].to_numpy(float)
    inside = t < tau
    knots = np.r_[0.0, t[inside], tau]
    level = np.r_[1.0, s[inside]]
    pieces = np.diff(knots) * level
    after = np.cumsum(pieces[::-1])[::-1]  # area from each knot to tau
    tail = after[1:]  # A_i for the times inside (0, tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(n[inside] > d[inside], d[inside] / (n[inside] * (n[inside] - d[inside])), 0.0)
    return float(after[0]), float(math.sqrt(np.sum(tail**2 * h)))


@dataclass(frozen=True)
class RMSTResult(ResultMixin):
    """RMST to ``tau`` per group with standard errors, and differences from the first group."""

    table: pd.DataFrame = field(repr=False)
    differences: pd.DataFrame = field(repr=False)
    tau: float
    n: int
    conf_level: float
    method: str = "restricted mean survival time under the Kaplan-Meier curve"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per group: group, n, events, rmst, se, low, high (normal interval)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """0 <= RMST <= tau; each interval contains its estimate; differences too."""
        tb, df = self.table, self.differences
        return (in_range("rmst_in_0_tau", tb["rmst"], 0.0, self.tau),
                in_range("se_nonnegative", tb["se"], 0.0),
                contains("rmst_in_interval", tb["low"], tb["rmst"], tb["high"]),
                contains("difference_in_interval", df["low"], df["difference"], df["high"]))

    def plot(self, ax: Any = None) -> Figure:
        """RMST per group with its interval."""
        fig, ax = new_figure(ax)
        tb = self.table
        y = np.arange(len(tb))
        est, lo, hi = (tb[c].to_numpy(dtype=float) for c in ("rmst", "low", "high"))
        ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt="o")
        ax.set_yticks(y, [str(g) for g in tb["group"]])
        ax.set_xlabel(f"restricted mean survival time to {self.tau:g} (h)")
        ax.set_title("Restricted mean survival time")
        return fig


def estimate_rmst(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    tau: float,
    groups: ArrayLike | None = None,
    entry: ArrayLike | None = None,
    conf_level: float = 0.95,
) -> RMSTResult:
    """Restricted mean survival time to ``tau`` per group, and each group minus the first.

    Parameters
    ----------
    durations, observed, entry
        As for :func:`reliab.models.estimate_kaplan_meier`.
    tau
        Horizon (> 0); the curve is carried flat past its last time when ``tau`` is later.
    groups
        Optional group label per unit (sorted; the first is the reference of the differences).
    conf_level
        Level of the normal intervals ``estimate +- z se``.

    Returns
    -------
    RMSTResult
        ``table`` (group, n, events, rmst, se, low, high) and ``differences`` (group,
        reference, difference, se, low, high, p_value).  Formulas and sources in the module
        docstring.
    """
    level = check_conf_level(conf_level)
    tau = float(tau)
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    z = float(stats.norm.ppf(0.5 + level / 2))
    t = np.asarray(durations, dtype=float)
    labels = pd.Series(np.zeros(t.size) if groups is None else np.asarray(groups, dtype=object))
    if len(labels) != t.size:
        raise ValueError(f"groups has {len(labels)} values but durations has {t.size}")
    obs = None if observed is None else np.asarray(observed)
    ent = None if entry is None else np.asarray(entry, dtype=float)
    rows = []
    for label in sorted(labels.dropna().unique()):
        m = (labels == label).to_numpy()
        km = estimate_kaplan_meier(t[m], None if obs is None else obs[m],
                                   entry=None if ent is None else ent[m])
        est, se = restricted_mean(km, tau)
        rows.append(("all" if groups is None else label, km.n, km.n_failures, est, se,
                     est - z * se, est + z * se))
    if not rows:
        raise InsufficientDataError("no units given; need at least one duration")
    table = pd.DataFrame(rows, columns=["group", "n", "events", "rmst", "se", "low", "high"])
    ref = table.iloc[0]
    diff = table.iloc[1:].copy()
    diff["reference"] = ref["group"]
    diff["difference"] = diff["rmst"] - ref["rmst"]
    diff["se"] = np.sqrt(diff["se"] ** 2 + ref["se"] ** 2)
    diff["low"], diff["high"] = diff["difference"] - z * diff["se"], diff["difference"] + z * diff["se"]
    with np.errstate(divide="ignore", invalid="ignore"):
        diff["p_value"] = 2 * stats.norm.sf(np.abs(diff["difference"] / diff["se"]))
    diff = diff[["group", "reference", "difference", "se", "low", "high", "p_value"]]
    return RMSTResult(table=table, differences=diff.reset_index(drop=True), tau=tau,
                      n=int(table["n"].sum()), conf_level=level)


__all__ = ["RMSTResult", "estimate_rmst", "restricted_mean"]
