"""Interruption rates per exposure, with exact Poisson intervals, and two-rate comparison.

Counts of job interruptions by category (or component, or both) are turned into the
figures large-cluster reports quote — rate per 1000 GPU-days and per 1000 node-days
(Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research Clusters",
HPCA 2025, arXiv 2410.21680: 6.50 and 2.34 failures per 1000 node-days on RSC-1 and RSC-2),
GPU-level MTBF, job-level mean time to interruption (Llama 3, arXiv 2407.21783 §3.3.4), and
Backblaze's annualized failure rate ``failures / (GPU-days / 365) × 100`` (Backblaze, "Hard
Drive Stats for Q2 2016": ``((Failures)/(Drive Days/365)) * 100``). Every interval is the exact
(Garwood 1936) Poisson interval for the count, computed with
``statsmodels.stats.rates.confint_poisson(method="exact-c")`` and scaled to each unit; for
the MTBF it equals the time-terminated chi-square interval of
:func:`reliab.models.estimate_mtbf`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.rates import confint_poisson

from reliab._checks import Check
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._invariants import rate_table_checks
from reliab.models._ratecompare import RateComparison, _positive, compare_rates

#: Days per year in the Backblaze AFR formula (Backblaze Hard Drive Stats, Q2 2016).
DAYS_PER_YEAR = 365.0
TOTAL = "Total"


@dataclass(frozen=True)
class RatesResult(ResultMixin):
    """Interruption counts and rates by group; ``summary()`` is the rate table."""

    table: pd.DataFrame = field(repr=False)
    by: tuple[str, ...]
    n: int
    gpu_days: float
    node_days: float
    job_hours: float | None
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    n_planned: int = 0

    def summary(self) -> pd.DataFrame:
        """The rate table: the ``by`` column(s), ``count``, ``share_pct``, rates and intervals."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Counts, shares, rates and MTBF of the table (:func:`rate_table_checks`)."""
        return rate_table_checks(self.table, self.by, self.n)

    def plot(self, ax: Any = None, *, measure: str = "rate_per_1k_gpu_days") -> Any:
        """Forest plot of one measure per group with its interval (log axis; Total last)."""
        if measure not in self.table.columns:
            raise ValueError(f"measure must be a column of the rate table, got {measure!r}")
        if measure == "count":
            return self._count_bars(ax)
        tb = self.table
        labels = [" / ".join(str(v) for v in row) for row in tb[list(self.by)].itertuples(index=False)]
        fig, ax = new_figure(ax, (6.5, 0.28 * len(tb) + 1.4))
        y = np.arange(len(tb))[::-1]
        est, lo, hi = (tb[c].to_numpy(dtype=float) for c in (measure, f"{measure}_low",
                                                             f"{measure}_high"))
        floor = np.nanmin(np.r_[lo[lo > 0], est[est > 0], 1e-9]) / 2
        ax.hlines(y, np.maximum(lo, floor), hi, color="#4c78a8", lw=2)
        ax.plot(np.where(est > 0, est, np.nan), y, "o", color="black", ms=4)
        ax.set_yticks(y, labels)
        ax.set_xscale("log")
        ax.set_xlabel(f"{MEASURES.get(measure, measure)}; {self.conf_level:.0%} exact Poisson "
                      "interval")
        return fig



    def _count_bars(self, ax: Any) -> Any:
        """Horizontal bars of the counts (Total left out), coloured by component if grouped."""
        tb = self.table[self.table[list(self.by)].astype(str).ne(TOTAL).all(axis=1)]
        tb = tb.iloc[::-1]
        fig, ax = new_figure(ax, (6.5, 0.26 * len(tb) + 1.2))
        key = self.by[-1]
        colours = None
        if "component" in tb.columns:
            comps = list(dict.fromkeys(tb["component"].astype(str)))
            lookup = {c: f"C{i}" for i, c in enumerate(comps)}
            colours = [lookup[c] for c in tb["component"].astype(str)]
        ax.barh(tb[key].astype(str), tb["count"].to_numpy(), color=colours)
        for y, (v, share) in enumerate(zip(tb["count"], tb["share_pct"], strict=True)):
            ax.text(v, y, f" {int(v):,} ({share:.1f}%)", va="center", fontsize=8)
        ax.set_xlabel("unexpected interruptions (count)")
        ax.margins(x=0.2)
        return fig


#: axis label of each measure of the rate table, with its unit
MEASURES = {
    "rate_per_1k_gpu_days": "rate (interruptions per 1,000 GPU-days)",
    "rate_per_1k_node_days": "rate (interruptions per 1,000 node-days)",
    "mtbf_gpu_hours": "MTBF (GPU-hours)", "mtbf_node_hours": "MTBF (node-hours)",
    "mtti_job_hours": "MTTI (hours)", "afr_pct": "annualized failure rate (%)",
}


def _poisson_bounds(counts: np.ndarray, conf_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact-c Poisson bounds on the expected count (exposure 1)."""
    low, high = confint_poisson(counts, np.ones_like(counts), method="exact-c",
                                alpha=1.0 - conf_level)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def _positive_series(values: pd.Series, name: str) -> pd.Series:
    """Per-group ``values`` as floats, each finite and > 0, else ``ValueError`` naming ``name``."""
    try:
        out = values.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"per-group {name} must be numbers, got {values.tolist()[:5]!r}") from None
    bad = out[~(np.isfinite(out) & (out > 0))]
    if len(bad):
        raise ValueError(f"per-group {name} must be finite and > 0; got {bad.to_dict()}")
    return out


def _exposures(gpu_days: float | None, node_days: float | None, gpus_per_node: int,
               exposure: pd.DataFrame | None) -> tuple[float, float, str]:
    """GPU-days, node-days and a sentence saying where they came from."""
    if exposure is not None:
        from reliab.prepare import exposure_totals

        tot = exposure_totals(exposure, gpus_per_node=gpus_per_node)
        gd, nd = float(tot["gpu_days"]), float(tot["node_days"])
        if not (math.isfinite(gd) and gd > 0):
            raise InsufficientDataError(f"the exposure table has {len(exposure)} row(s) and "
                                        f"{gd:g} GPU-days at risk: no rate can be estimated")
        return gd, nd, "exposure table"
    gpu_days = _positive(gpu_days, "gpu_days", allow_none=True)
    node_days = _positive(node_days, "node_days", allow_none=True)
    if gpu_days is None and node_days is None:
        raise ValueError("give gpu_days, node_days or an exposure table")
    if gpu_days is None:
        return float(node_days) * gpus_per_node, float(node_days), (
            f"node_days given; GPU-days = node-days x {gpus_per_node}")
    if node_days is None:
        return float(gpu_days), float(gpu_days) / gpus_per_node, (
            f"gpu_days given; node-days = GPU-days / {gpus_per_node}")
    return float(gpu_days), float(node_days), "gpu_days and node_days given"


def _count(interruptions: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    missing = [c for c in by if c not in interruptions.columns]
    if missing:
        raise ValueError(f"interruptions has no column(s) {missing}")
    counts = interruptions.groupby(by, dropna=False, observed=True).size().rename("count")
    return counts.reset_index().sort_values(["count", *by], ascending=[False] + [True] * len(by),
                                           kind="stable").reset_index(drop=True)


def _add_rate(table: pd.DataFrame, name: str, scale: float, lo: np.ndarray, hi: np.ndarray) -> None:
    """``name``, ``name_low``, ``name_high`` = count (or its bounds) x ``scale``."""
    table[name] = table["count"] * scale
    table[f"{name}_low"] = lo * scale
    table[f"{name}_high"] = hi * scale


def _add_time(table: pd.DataFrame, name: str, total: float | None, lo: np.ndarray,
              hi: np.ndarray) -> None:
    """``name`` = total / count with bounds total / upper and total / lower (NaN if no total)."""
    if total is None:
        table[name] = table[f"{name}_low"] = table[f"{name}_high"] = np.nan
        return
    with np.errstate(divide="ignore"):
        table[name] = total / table["count"].to_numpy(dtype=float)
        table[f"{name}_low"] = total / hi
        table[f"{name}_high"] = total / lo


def rate_table(counts: pd.DataFrame, *, gpu_days: float | np.ndarray, node_days: float | np.ndarray,
               job_hours: float | np.ndarray | None, conf_level: float) -> pd.DataFrame:
    """Rates with exact Poisson intervals for a frame with a ``count`` column.

    Columns added, in order: ``share_pct``, ``gpu_days``, ``rate_per_1k_gpu_days`` (+``_low``,
    ``_high``), ``rate_per_1k_node_days`` (+…), ``mtbf_gpu_hours`` (+…), ``mtti_job_hours``
    (+…), ``afr_pct`` (+…). ``share_pct`` is relative to the non-Total rows.
    """
    table = counts.copy()
    c = table["count"].to_numpy(dtype=float)
    lo, hi = _poisson_bounds(c, conf_level)
    is_total = table.get("_total", pd.Series(False, index=table.index)).to_numpy(dtype=bool)
    table["share_pct"] = 100.0 * c / c[~is_total].sum() if c[~is_total].sum() > 0 else np.nan
    table["gpu_days"] = gpu_days
    _add_rate(table, "rate_per_1k_gpu_days", 1000.0 / gpu_days, lo, hi)
    _add_rate(table, "rate_per_1k_node_days", 1000.0 / node_days, lo, hi)
    _add_time(table, "mtbf_gpu_hours", gpu_days * 24.0, lo, hi)
    _add_time(table, "mtti_job_hours", job_hours, lo, hi)
    _add_rate(table, "afr_pct", 100.0 * DAYS_PER_YEAR / gpu_days, lo, hi)
    return table.drop(columns="_total", errors="ignore")


def estimate_rates(
    interruptions: pd.DataFrame,
    *,
    by: str | Sequence[str] = "category",
    gpu_days: float | pd.Series | None = None,
    node_days: float | pd.Series | None = None,
    gpus_per_node: int = 8,
    job_hours: float | pd.Series | None = None,
    exposure: pd.DataFrame | None = None,
    conf_level: float = 0.95,
    include_total: bool = True,
    unexpected_only: bool = True,
) -> RatesResult:
    """Interruption counts, shares and rates by group, with exact Poisson intervals.

    Parameters
    ----------
    interruptions : pandas.DataFrame
        One row per interruption with at least ``category``, ``component`` and ``planned``.
    by : str or sequence of str
        Grouping column(s), e.g. ``"category"``, ``"component"`` or both.
    gpu_days, node_days : float, optional
        Exposure. Give either (the other follows from ``gpus_per_node``), both, or
        ``exposure``.  ``gpu_days`` may also be a Series indexed by the values of a single
        ``by`` column (per-group exposure: quarters, clusters, GPU models); each group's
        rate then uses its own exposure, the Total row their sum, and groups with
        exposure but no interruption get a zero-count row (upper bound only).  ``node_days``
        may be such a Series too (job-less data: node-days per system), GPU-days then being
        node-days x ``gpus_per_node``.
    gpus_per_node : int
        GPUs per node (8 for H100 HGX nodes).
    job_hours : float or Series, optional
        Wall-clock hours of the job(s) the interruptions hit, for the job-level mean time to
        interruption ``job_hours / count``; NaN columns when not given.  A Series gives the
        hours per group (with per-group ``gpu_days``).
    exposure : pandas.DataFrame, optional
        An ``EXPOSURE`` table; GPU- and node-days are taken from it
        (:func:`reliab.prepare.exposure_totals`).
    conf_level : float
        Confidence level of the two-sided intervals.
    include_total : bool
        Append a ``"Total"`` row.
    unexpected_only : bool
        Drop planned interruptions (``planned == True``) first, as Llama 3 Table 5 does.

    Returns
    -------
    RatesResult
        ``summary()`` columns: the ``by`` column(s), ``count``, ``share_pct``, ``gpu_days``,
        ``rate_per_1k_gpu_days``, ``rate_per_1k_node_days``, ``mtbf_gpu_hours``,
        ``mtti_job_hours``, ``afr_pct``, each rate with ``_low`` and ``_high``.

    Notes
    -----
    Intervals are exact Poisson ("exact-c", Garwood 1936) intervals for each count, scaled
    to the unit of each column. All groups share one denominator (the whole fleet was at
    risk of every category), and the rates assume a constant hazard over the window; the
    notes of the result state the exposure used. AFR uses a 365-day year (Backblaze).
    """
    by_cols = [by] if isinstance(by, str) else list(by)
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, (int, np.integer)) \
            or gpus_per_node < 1:
        raise ValueError(f"gpus_per_node must be a positive integer, got {gpus_per_node!r}")
    if job_hours is not None and not isinstance(job_hours, pd.Series):
        job_hours = _positive(job_hours, "job_hours")
    elif isinstance(job_hours, pd.Series):
        if not isinstance(gpu_days, pd.Series):
            raise ValueError("job_hours as a Series (hours per group) needs gpu_days as a Series too")
        _positive_series(job_hours, "job_hours")
    if isinstance(node_days, pd.Series):
        if gpu_days is not None:
            raise ValueError("give per-group exposure as gpu_days or as node_days, not both")
        gpu_days = _positive_series(node_days, "node_days") * gpus_per_node
    if isinstance(gpu_days, pd.Series):
        return _estimate_rates_per_group(interruptions, by_cols, gpu_days, gpus_per_node, job_hours,
                                         conf_level, include_total, unexpected_only)
    gdays, ndays, source = _exposures(gpu_days, node_days, gpus_per_node, exposure)
    if not (gdays > 0 and ndays > 0):
        raise ValueError(f"exposure must be positive, got {gdays} GPU-days, {ndays} node-days")
    data = interruptions
    notes = [f"exposure: {gdays:,.1f} GPU-days, {ndays:,.1f} node-days ({source}); every group "
             "uses the whole fleet as denominator and a constant hazard over the window"]
    n_planned = 0
    if unexpected_only:
        if "planned" not in data.columns:
            raise ValueError("interruptions has no 'planned' column (needed for unexpected_only)")
        planned = data["planned"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        n_planned = int(planned.sum())
        notes.append(f"{n_planned} planned interruption(s) excluded")
        data = data[~planned]
    counts = _count(data, by_cols)
    counts["_total"] = False
    if include_total:
        total = pd.DataFrame({**{c: [TOTAL] for c in by_cols}, "count": [len(data)], "_total": [True]})
        counts = pd.concat([counts.astype({c: object for c in by_cols}), total], ignore_index=True)
    if len(data) == 0:
        notes.append("no interruptions: rates are 0 with an upper bound only; MTBF is infinite")
    if job_hours is None:
        notes.append("job_hours not given: mtti_job_hours is NaN")
    table = rate_table(counts, gpu_days=gdays, node_days=ndays, job_hours=job_hours,
                       conf_level=conf_level)
    return RatesResult(
        table=table, by=tuple(by_cols), n=len(data), gpu_days=gdays, node_days=ndays,
        job_hours=job_hours, conf_level=conf_level,
        method="counts / exposure; exact Poisson intervals (statsmodels confint_poisson "
               "'exact-c', Garwood 1936)", notes=tuple(notes), n_planned=n_planned)


def _estimate_rates_per_group(interruptions: pd.DataFrame, by_cols: list[str], gpu_days: pd.Series,
                              gpus_per_node: int, job_hours: float | pd.Series | None, conf_level: float,
                              include_total: bool, unexpected_only: bool) -> RatesResult:
    """Rates where every group has its own exposure (e.g. quarters or clusters)."""
    if len(by_cols) != 1:
        raise ValueError("per-group gpu_days needs exactly one 'by' column")
    col = by_cols[0]
    gdays = _positive_series(gpu_days, "gpu_days")
    data = interruptions
    notes = ["per-group exposure: each group's rate divides by its own GPU-days; Total by their sum"]
    n_planned = 0
    if unexpected_only:
        planned = data["planned"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        n_planned = int(planned.sum())
        notes.append(f"{n_planned} planned interruption(s) excluded")
        data = data[~planned]
    counts = _count(data, by_cols).set_index(col)["count"]
    unknown = sorted(set(counts.index) - set(gdays.index), key=str)
    if unknown:
        raise ValueError(f"no gpu_days for group(s) {unknown} of {col!r}")
    counts = counts.reindex(gdays.index, fill_value=0)
    table = counts.rename_axis(col).reset_index()
    exp = gdays.reindex(table[col]).to_numpy()
    hours = (job_hours.reindex(table[col]).to_numpy(dtype=float) if isinstance(job_hours, pd.Series)
             else None if job_hours is None else np.full(len(table), float(job_hours)))
    table["_total"] = False
    if include_total:
        total = pd.DataFrame({col: [TOTAL], "count": [int(counts.sum())], "_total": [True]})
        table = pd.concat([table.astype({col: object}), total], ignore_index=True)
        exp = np.append(exp, exp.sum())
        if hours is not None:
            hours = np.append(hours, np.nan if isinstance(job_hours, pd.Series) else float(job_hours))
    out = rate_table(table, gpu_days=exp, node_days=exp / gpus_per_node, job_hours=hours, conf_level=conf_level)
    return RatesResult(table=out, by=tuple(by_cols), n=len(data), gpu_days=float(gdays.sum()),
                       node_days=float(gdays.sum()) / gpus_per_node,
                       job_hours=None if hours is None else float(np.nansum(hours[:len(gdays)])),
                       conf_level=conf_level,
                       method="counts / per-group exposure; exact Poisson intervals (statsmodels "
                              "confint_poisson 'exact-c', Garwood 1936)", notes=tuple(notes),
                       n_planned=n_planned)


__all__ = ["estimate_rates", "RatesResult", "compare_rates", "RateComparison", "rate_table",
           "DAYS_PER_YEAR"]
