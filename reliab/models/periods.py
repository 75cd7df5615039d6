"""Quarter over quarter: per-period rates (a Backblaze-style table) and rate-ratio tests.

A quarterly report compares this period's counts with the previous one's archived result,
without recomputing it: each category's rate ratio gets the exact conditional test of
:func:`reliab.compare_rates` (Cox 1953; Lehmann & Romano, *Testing Statistical Hypotheses*,
§4.5), and the p-values of the categories are adjusted together by Benjamini & Hochberg
(1995), since a report tests many categories at once.  The per-period table follows
Backblaze's drive-stats reports (one row per quarter and a lifetime row that pools the
counts and the exposure; annualized failure rate = failures / (unit-days / 365) x 100),
with the exact Poisson interval of every rate (Garwood 1936).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._checks import Check, contains, equal, in_range, positive, table_intervals
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._invariants import RATE_TRIPLES
from reliab.models.rates import TOTAL, compare_rates, rate_table

RatesLike = Any  # a RatesResult, or its to_dict() as archived


def _counts(rates: RatesLike, by: str) -> tuple[pd.Series, float]:
    """Counts per value of ``by`` (Total excluded) and the GPU-days of a rates result or dict."""
    if isinstance(rates, Mapping):
        table = pd.DataFrame(rates.get("summary", []))
        gpu_days = rates.get("gpu_days")
    else:
        table, gpu_days = rates.summary(), rates.gpu_days
    if table.empty or by not in table.columns:
        raise ValueError(f"the rates result has no {by!r} column; give by= one of its grouping columns")
    if gpu_days is None or not (float(gpu_days) > 0 and math.isfinite(float(gpu_days))):
        raise ValueError(f"the rates result has no positive gpu_days (got {gpu_days!r})")
    body = table[table[by].astype(str) != TOTAL]
    counts = body.groupby(body[by].astype(str))["count"].sum().astype(int)
    return counts, float(gpu_days)


@dataclass(frozen=True)
class PeriodComparison(ResultMixin):
    """Rate ratio current / previous per group, with exact intervals and BH-adjusted p-values.

    ``table`` columns: the group column, ``count_previous``, ``count_current``,
    ``rate_previous``, ``rate_current`` (per 1,000 GPU-days), ``ratio``, ``low``, ``high``,
    ``pvalue``, ``qvalue`` (Benjamini–Hochberg over the groups) and ``changed``
    (``qvalue < 1 - conf_level``); the last row is the total.
    """

    table: pd.DataFrame = field(repr=False)
    by: str
    labels: tuple[str, str]
    gpu_days: tuple[float, float]
    n: int
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The comparison table (a copy)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Counts and rates >= 0, groups summing to the total row; p, q in [0, 1]; each ratio
        inside its interval."""
        t = self.table
        body = t[t[self.by] != TOTAL]
        counts = ["count_previous", "count_current"]
        return (in_range("counts_rates_nonnegative",
                         t[[*counts, "rate_previous", "rate_current"]].to_numpy(), 0),
                equal("groups_sum_to_total", body[counts].sum().to_numpy(),
                      t.loc[t[self.by] == TOTAL, counts].to_numpy().ravel()),
                in_range("p_q_in_unit_interval", t[["pvalue", "qvalue"]].to_numpy(), 0, 1),
                contains("ratio_in_interval", t["low"], t["ratio"], t["high"]))

    @property
    def changed(self) -> list[str]:
        """Groups whose rate changed significantly (after the BH adjustment), total excluded."""
        t = self.table
        return t.loc[t["changed"] & (t[self.by] != TOTAL), self.by].tolist()

    def plot(self, ax: Any = None) -> Any:
        """Forest plot of the rate ratios (log axis); changed groups in red."""
        t = self.table[np.isfinite(self.table["ratio"]) & (self.table["ratio"] > 0)]
        fig, ax = new_figure(ax, (6.5, 0.3 * max(len(t), 2) + 1.4))
        y = np.arange(len(t))[::-1]
        colour = np.where(t["changed"], "#b3261e", "#4c78a8")
        hi = np.where(np.isfinite(t["high"]), t["high"], t["ratio"] * 10)
        ax.hlines(y, np.maximum(t["low"], t["ratio"] / 100), hi, color=colour, lw=2)
        ax.scatter(t["ratio"], y, color=colour, zorder=3, s=14)
        ax.axvline(1.0, color="grey", ls="--", lw=1)
        ax.set_yticks(y, t[self.by].astype(str))
        ax.set_xscale("log")
        ax.set_xlabel(f"rate ratio {self.labels[1]} / {self.labels[0]} "
                      f"({self.conf_level:.0%} exact interval)")
        return fig


def compare_periods(
    current: RatesLike,
    previous: RatesLike,
    *,
    by: str = "category",
    labels: tuple[str, str] = ("previous", "current"),
    conf_level: float = 0.95,
) -> PeriodComparison:
    """Compare two periods' rates group by group.

    Parameters
    ----------
    current, previous : RatesResult or dict
        Rates of the two periods (:func:`reliab.estimate_rates`), or their archived
        ``to_dict()``; each brings its own GPU-days.
    by : str
        The grouping column to compare (``"category"`` or ``"component"``).
    labels : (str, str)
        Names of the previous and the current period.
    conf_level : float
        Level of the ratio intervals; a group is ``changed`` when its BH-adjusted p-value is
        below ``1 - conf_level``.

    Returns
    -------
    PeriodComparison

    Raises
    ------
    InsufficientDataError
        No interruption in either period.
    """
    from statsmodels.stats.multitest import multipletests

    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    cur, g_cur = _counts(current, by)
    prev, g_prev = _counts(previous, by)
    groups = sorted(set(cur.index) | set(prev.index))
    groups = [g for g in groups if cur.get(g, 0) + prev.get(g, 0) > 0]
    if not groups:
        raise InsufficientDataError("no interruptions in either period: nothing to compare")
    rows = []
    for g in [*groups, TOTAL]:
        c1 = int(cur.sum()) if g == TOTAL else int(cur.get(g, 0))
        c0 = int(prev.sum()) if g == TOTAL else int(prev.get(g, 0))
        cmp = compare_rates(c1, g_cur, c0, g_prev, conf_level=conf_level)
        rows.append({by: g, "count_previous": c0, "count_current": c1,
                     "rate_previous": 1000 * c0 / g_prev, "rate_current": 1000 * c1 / g_cur,
                     "ratio": cmp.ratio, "low": cmp.low, "high": cmp.high, "pvalue": cmp.pvalue})
    table = pd.DataFrame(rows)
    body = table[by] != TOTAL
    q = np.full(len(table), np.nan)
    q[body.to_numpy()] = multipletests(table.loc[body, "pvalue"], method="fdr_bh")[1]
    q[~body.to_numpy()] = table.loc[~body, "pvalue"]
    table["qvalue"] = q
    table["changed"] = table["qvalue"] < 1.0 - conf_level
    notes = [f"{labels[0]}: {g_prev:,.0f} GPU-days; {labels[1]}: {g_cur:,.0f} GPU-days",
             f"{len(groups)} group(s) tested; q-values are Benjamini-Hochberg adjusted across them "
             "(the total row keeps its own p-value)"]
    return PeriodComparison(
        table=table, by=by, labels=tuple(labels), gpu_days=(g_prev, g_cur),
        n=int(cur.sum() + prev.sum()), conf_level=conf_level, notes=tuple(notes),
        method="rate ratio per group: exact conditional (binomial) test and Clopper-Pearson "
               "interval (Cox 1953); Benjamini-Hochberg (1995) across groups")


@dataclass(frozen=True)
class PeriodRatesResult(ResultMixin):
    """Interruption rates per period and over the lifetime (Backblaze-style table).

    ``table`` columns: ``period``, ``count``, ``gpu_days``, ``rate_per_1k_gpu_days``,
    ``mtbf_gpu_hours``, ``afr_pct`` (each with ``_low``/``_high``); the last row is
    ``Lifetime`` (counts and GPU-days pooled).
    """

    table: pd.DataFrame = field(repr=False)
    n: int
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The per-period table (a copy)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Periods sum to Lifetime (counts, GPU-days); rate x exposure = count; rates >= 0 and
        MTBF > 0, each inside its interval."""
        t = self.table
        body, life = t[t["period"] != "Lifetime"], t[t["period"] == "Lifetime"]
        return (equal("periods_sum_to_lifetime", body[["count", "gpu_days"]].sum().to_numpy(),
                      life[["count", "gpu_days"]].to_numpy().ravel(), rtol=1e-6),
                equal("rate_x_exposure_is_count", t["rate_per_1k_gpu_days"] * t["gpu_days"] / 1e3,
                      t["count"].to_numpy(dtype=float), rtol=1e-6),
                positive("mtbf_positive", t["mtbf_gpu_hours"], allow_inf=True),
                *table_intervals("", t, RATE_TRIPLES, lo=0.0))

    def plot(self, ax: Any = None) -> Any:
        """Rate per 1,000 GPU-days per period with its interval; the lifetime rate dashed."""
        t = self.table
        body = t[t["period"] != "Lifetime"]
        fig, ax = new_figure(ax, (6, 3.2))
        x = np.arange(len(body))
        est = body["rate_per_1k_gpu_days"].to_numpy(float)
        err = [est - body["rate_per_1k_gpu_days_low"], body["rate_per_1k_gpu_days_high"] - est]
        ax.errorbar(x, est, yerr=err, fmt="o", color="#4c78a8", capsize=4)
        ax.axhline(float(t["rate_per_1k_gpu_days"].iloc[-1]), color="grey", ls="--", lw=1,
                   label="lifetime")
        ax.set_xticks(x, body["period"].astype(str))
        ax.set_ylabel(f"interruptions / 1k GPU-days ({self.conf_level:.0%} exact)")
        ax.legend()
        return fig


def estimate_period_rates(
    periods: Sequence[tuple[str, int, float]],
    *,
    conf_level: float = 0.95,
) -> PeriodRatesResult:
    """Rates per period and pooled over all periods, with exact Poisson intervals.

    Parameters
    ----------
    periods : sequence of (label, count, gpu_days)
        One entry per period, oldest first: unexpected interruptions and GPU-days at risk.
    conf_level : float
        Level of the intervals.

    Returns
    -------
    PeriodRatesResult

    Raises
    ------
    InsufficientDataError
        When ``periods`` is empty.
    """
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if not len(periods):
        raise InsufficientDataError("no periods: a per-period table needs at least one")
    labels = [str(p[0]) for p in periods]
    counts = np.array([int(p[1]) for p in periods])
    gd = np.array([float(p[2]) for p in periods])
    if (counts < 0).any() or not np.all(np.isfinite(gd)) or (gd <= 0).any():
        raise ValueError("periods need counts >= 0 and finite gpu_days > 0")
    frame = pd.DataFrame({"period": [*labels, "Lifetime"], "count": [*counts, counts.sum()],
                          "_total": [False] * len(labels) + [True]})
    exp = np.r_[gd, gd.sum()]
    table = rate_table(frame, gpu_days=exp, node_days=exp, job_hours=None, conf_level=conf_level)
    keep = ["period", "count", "gpu_days"] + [f"{m}{s}" for m in
                                              ("rate_per_1k_gpu_days", "mtbf_gpu_hours", "afr_pct")
                                              for s in ("", "_low", "_high")]
    return PeriodRatesResult(
        table=table[keep], n=int(counts.sum()), conf_level=conf_level,
        method="counts / GPU-days per period; lifetime pools counts and GPU-days (Backblaze); "
               "exact Poisson intervals (Garwood 1936)",
        notes=(f"{len(labels)} period(s); AFR uses a 365-day year",))


__all__ = ["PeriodComparison", "PeriodRatesResult", "compare_periods", "estimate_period_rates"]
