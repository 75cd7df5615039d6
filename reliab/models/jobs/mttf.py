"""Mean time to failure of a job against its size: the series-system model and the data.

A job is a series system of the nodes it spans: it stops when any of them (or the network
between them) fails, so its failure rate is the sum of theirs.  With a per-node rate
``r_f`` the job MTTF is ``1 / (N_nodes · r_f)`` (Kokolis et al., "Revisiting Reliability in
Large-Scale Machine Learning Research Clusters", HPCA 2025, arXiv 2410.21680): at Meta
RSC-1's 6.50 failures per 1000 node-days a 16,384-GPU job fails every 1.8 h and a
131,072-GPU job every 0.23 h.  The same study found measured MTTF departs from pure ``1/N``
scaling for small jobs, so :func:`estimate_job_mttf` puts the empirical MTTF by job-size
bucket (from the job records) beside the model curve.

Intervals: the per-category counts behind the rates are Poisson; the job rate is their
weighted sum, bounded with the gamma method of Fay & Feuer (1997), which reduces to the
exact Garwood (1936) interval when every category shares one exposure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from reliab.errors import InsufficientDataError
from reliab.models._result import ResultMixin
from reliab.models.jobs._durations import check_conf_level, to_count, to_rate

HOURS_PER_DAY = 24.0
#: Job sizes of the default curve: 8 GPUs to 128k GPUs in powers of two.
DEFAULT_SIZES: tuple[int, ...] = tuple(2**k for k in range(3, 18))


def fay_feuer_interval(counts: np.ndarray, weights: np.ndarray,
                       conf_level: float = 0.95) -> tuple[float, float]:
    """Gamma interval for ``Σ w_i λ_i`` from Poisson counts ``x_i`` (Fay & Feuer 1997).

    References
    ----------
    Fay, M. P. & Feuer, E. J. (1997). Confidence intervals for directly standardized rates:
    a method based on the gamma distribution. *Statistics in Medicine* 16, 791–801.
    """
    x = np.asarray(counts, dtype=float)
    w = np.asarray(weights, dtype=float)
    alpha = 1.0 - conf_level
    y, v, wm = float(w @ x), float(w**2 @ x), float(w.max())
    low = 0.0 if y == 0 else float(stats.gamma.ppf(alpha / 2, y**2 / v, scale=v / y))
    shape_hi = (y + wm) ** 2 / (v + wm**2)
    high = float(stats.gamma.ppf(1 - alpha / 2, shape_hi, scale=(v + wm**2) / (y + wm)))
    return low, high


def _component_rates(rates: Any) -> pd.DataFrame:
    """Per-category ``count`` and ``node_days`` (rate per node-day = count / node_days)."""
    if isinstance(rates, Mapping):
        return pd.DataFrame({"group": list(rates), "rate_per_node_day":
                             [to_rate(v, f"rates[{k!r}]") for k, v in rates.items()],
                             "count": np.nan, "node_days": np.nan})
    table = rates.summary() if hasattr(rates, "summary") else pd.DataFrame(rates)
    if "rate_per_1k_node_days" not in table.columns or "count" not in table.columns:
        raise ValueError("rates must be reliab.estimate_rates(...) output (count, "
                         "rate_per_1k_node_days) or a mapping of per-node-day rates")
    key = next((c for c in ("category", "component") if c in table.columns), table.columns[0])
    table = table[table[key].astype(str) != "Total"]
    total_nd = getattr(rates, "node_days", np.nan)
    rate = table["rate_per_1k_node_days"].to_numpy(dtype=float) / 1000.0
    count = table["count"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        node_days = np.where(rate > 0, count / rate, total_nd)
    return pd.DataFrame({"group": table[key].astype(str).to_numpy(), "rate_per_node_day": rate,
                         "count": count, "node_days": node_days})


def job_mttf(n_gpus: int, *, node_failure_rate_per_day: float | None = None, rates: Any = None,
             gpus_per_node: int = 8) -> float:
    """Mean time to failure (hours) of a job spanning ``n_gpus`` GPUs.

    Parameters
    ----------
    n_gpus : int
        GPUs of the job.
    node_failure_rate_per_day : float, optional
        Interruptions per node and day (RSC-1: 6.5e-3; RSC-2: 2.34e-3; Llama 3 Table 5:
        419 / (2,048 × 54) ≈ 3.79e-3).
    rates : RatesResult, DataFrame or mapping, optional
        The richer form: fitted rates per category or component (``reliab.estimate_rates``
        output, or ``{name: failures per node-day}``); the job rate is their sum scaled to
        the job's nodes.  Give this or ``node_failure_rate_per_day``.
    gpus_per_node : int
        GPUs per node (8 on HGX/DGX nodes).

    Returns
    -------
    float
        ``24 / (N_nodes · Σ r)`` hours (``inf`` at rate 0).

    Raises
    ------
    ValueError
        Zero GPUs, a negative rate, or neither/both of the two rate arguments.

    Examples
    --------
    >>> round(job_mttf(16_384, node_failure_rate_per_day=6.5e-3), 2)
    1.8
    >>> round(job_mttf(131_072, node_failure_rate_per_day=6.5e-3), 3)
    0.225
    """
    gpus = to_count(n_gpus, "n_gpus")
    per_node = to_count(gpus_per_node, "gpus_per_node")
    if (node_failure_rate_per_day is None) == (rates is None):
        raise ValueError("give exactly one of node_failure_rate_per_day and rates")
    if rates is not None:
        rate = float(_component_rates(rates)["rate_per_node_day"].sum())
    else:
        rate = to_rate(node_failure_rate_per_day, "node_failure_rate_per_day")
    nodes = gpus / per_node
    return math.inf if rate == 0 else HOURS_PER_DAY / (nodes * rate)


@dataclass(frozen=True)
class JobMTTFResult(ResultMixin):
    """Model MTTF against job size with intervals, and the measured MTTF per size bucket.

    ``curve``: ``n_gpus``, ``n_nodes``, ``mttf_h``, ``mttf_low_h``, ``mttf_high_h`` and
    ``extrapolated`` (the size lies outside ``observed_gpus``, the smallest and largest job in
    the records; every size when no job records were given).
    ``empirical`` (when job records were given): ``bucket``, ``min_gpus``, ``max_gpus``,
    ``mean_gpus`` (hour-weighted), ``jobs``, ``job_hours``, ``failures``, ``mttf_h`` with its exact Poisson interval, and
    ``model_mttf_h`` (the series model for the same jobs) and ``ratio`` measured / model.
    """

    curve: pd.DataFrame = field(repr=False)
    empirical: pd.DataFrame | None = field(repr=False)
    rate_per_node_day: float
    rate_low: float
    rate_high: float
    n: int
    node_days: float
    gpus_per_node: int
    conf_level: float
    observed_gpus: tuple[float, float] = (math.nan, math.nan)
    method: str = "series system: MTTF = 1 / (N_nodes * sum of per-node rates); Fay-Feuer gamma interval"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The model curve."""
        return self.curve.copy()

    def at(self, n_gpus: int) -> float:
        """Model MTTF (hours) at ``n_gpus``."""
        nodes = to_count(n_gpus, "n_gpus") / self.gpus_per_node
        return math.inf if self.rate_per_node_day == 0 else HOURS_PER_DAY / (nodes * self.rate_per_node_day)

    def plot(self, ax: Any = None) -> Any:
        """MTTF against GPUs (log–log): model line and band, measured buckets with bars."""
        from matplotlib.figure import Figure

        fig = ax.figure if ax is not None else Figure(figsize=(6, 4), layout="constrained")
        ax = ax if ax is not None else fig.add_subplot()
        c = self.curve
        ax.fill_between(c["n_gpus"], c["mttf_low_h"], c["mttf_high_h"], alpha=0.25, color="#2c7fb8")
        ax.plot(c["n_gpus"], c["mttf_h"], color="#2c7fb8", ls="--", lw=1.0,
                label="series model 1/(N r), extrapolated")
        lo, hi = self.observed_gpus
        inside = c[~c["extrapolated"].astype(bool)]
        if len(inside):
            ax.plot(inside["n_gpus"], inside["mttf_h"], color="#2c7fb8", lw=2.0,
                    label="series model 1/(N r), observed job sizes")
        if math.isfinite(hi):
            ax.axvspan(hi, float(c["n_gpus"].max()) * 1.05, color="#999999", alpha=0.15, lw=0,
                       label="beyond the largest observed job")
        e = self.empirical
        if e is not None and len(e):
            mid = e["mean_gpus"]
            err = np.vstack([e["mttf_h"] - e["mttf_low_h"], e["mttf_high_h"] - e["mttf_h"]])
            ax.errorbar(mid, e["mttf_h"], yerr=np.where(np.isfinite(err), err, 0), fmt="o",
                        color="#c0392b", label="measured (job records)")
        ax.set(xscale="log", yscale="log", xlabel="job size (GPUs)", ylabel="MTTF (hours)",
               title="Job mean time to failure vs size")
        ax.legend(fontsize="small")
        return fig


def _empirical(jobs: pd.DataFrame, interruptions: pd.DataFrame, rate: float, gpus_per_node: int,
               conf_level: float) -> pd.DataFrame:
    """Measured MTTF per power-of-two GPU bucket: job hours / unexpected interruptions."""
    from reliab.models.rates import _poisson_bounds

    need = {"job_id", "start", "end", "ngpus"} - set(jobs.columns)
    if need:
        raise ValueError(f"jobs lacks column(s) {sorted(need)}")
    j = jobs.dropna(subset=["start", "end", "ngpus"]).drop_duplicates("job_id")
    hours = (pd.to_datetime(j["end"], utc=True) - pd.to_datetime(j["start"], utc=True)) / pd.Timedelta(hours=1)
    j = j.assign(hours=hours.clip(lower=0), ngpus=j["ngpus"].astype(float))
    j = j[(j["ngpus"] > 0) & (j["hours"] > 0)]
    unexpected = interruptions[~interruptions["planned"].astype(bool)]
    fails = unexpected["job_id"].astype(str).value_counts()
    j = j.assign(failures=j["job_id"].astype(str).map(fails).fillna(0).astype(int),
                 bucket=np.ceil(np.log2(np.maximum(j["ngpus"], 1))).astype(int))
    j["expected"] = j["hours"] * (j["ngpus"] / gpus_per_node) * rate / HOURS_PER_DAY
    j["gpu_hours"] = j["ngpus"] * j["hours"]
    g = j.groupby("bucket").agg(jobs=("job_id", "size"), job_hours=("hours", "sum"),
                                gpu_hours=("gpu_hours", "sum"), failures=("failures", "sum"),
                                expected=("expected", "sum"))
    lo, hi = _poisson_bounds(g["failures"].to_numpy(dtype=float), conf_level)
    with np.errstate(divide="ignore"):
        out = pd.DataFrame({
            "bucket": [f"{2 ** (b - 1) + 1 if b > 0 else 1}-{2 ** b}" for b in g.index],
            "min_gpus": [2 ** (b - 1) + 1 if b > 0 else 1 for b in g.index],
            "max_gpus": [2**b for b in g.index],
            "mean_gpus": g["gpu_hours"].to_numpy() / g["job_hours"].to_numpy(),
            "jobs": g["jobs"].to_numpy(), "job_hours": g["job_hours"].to_numpy(),
            "failures": g["failures"].to_numpy(),
            "mttf_h": g["job_hours"].to_numpy() / g["failures"].to_numpy(),
            "mttf_low_h": g["job_hours"].to_numpy() / hi, "mttf_high_h": g["job_hours"].to_numpy() / lo,
            "model_mttf_h": g["job_hours"].to_numpy() / g["expected"].to_numpy()})
    out["ratio"] = out["mttf_h"] / out["model_mttf_h"]
    return out.reset_index(drop=True)


def _observed_sizes(jobs: pd.DataFrame, gpus_per_node: int) -> tuple[float, float]:
    """Smallest and largest GPU count of the recorded jobs (from the node count where the GPU
    count is missing; NaN, NaN when neither is known)."""
    def col(name: str) -> pd.Series:
        return pd.to_numeric(jobs[name], errors="coerce").astype(float) if name in jobs.columns \
            else pd.Series(np.nan, index=jobs.index)

    g = col("ngpus").fillna(col("nnodes") * gpus_per_node)
    g = g[np.isfinite(g) & (g > 0)]
    return (float(g.min()), float(g.max())) if len(g) else (math.nan, math.nan)


def estimate_job_mttf(
    rates: Any,
    *,
    n_gpus: Sequence[int] = DEFAULT_SIZES,
    gpus_per_node: int = 8,
    jobs: pd.DataFrame | None = None,
    interruptions: pd.DataFrame | None = None,
    conf_level: float = 0.95,
) -> JobMTTFResult:
    """Job MTTF against size from fitted rates, with intervals, beside the measured MTTF.

    Parameters
    ----------
    rates : RatesResult or DataFrame
        ``reliab.estimate_rates(...)`` (unexpected interruptions by category or component):
        counts and node-days give the rates and their intervals.
    n_gpus : sequence of int
        Job sizes of the curve (default 8 to 131,072 GPUs).
    gpus_per_node : int
        GPUs per node.
    jobs, interruptions : DataFrame, optional
        Job records (``job_id``, ``start``, ``end``, ``ngpus``) and the interruptions table;
        when given, the measured MTTF per power-of-two size bucket is added.
    conf_level : float
        Level of the two-sided intervals.

    Returns
    -------
    JobMTTFResult

    Raises
    ------
    InsufficientDataError
        When the rates have no exposure (nothing to scale).
    """
    conf = check_conf_level(conf_level)
    per_node = to_count(gpus_per_node, "gpus_per_node")
    sizes = np.array([to_count(n, "n_gpus") for n in n_gpus], dtype=float)
    comp = _component_rates(rates)
    if comp["node_days"].isna().all() or not (comp["node_days"] > 0).any():
        raise InsufficientDataError("rates carry no node-days exposure: cannot bound the job MTTF")
    counts = comp["count"].to_numpy(dtype=float)
    weights = 1.0 / comp["node_days"].to_numpy(dtype=float)
    rate = float(counts @ weights)
    lo, hi = fay_feuer_interval(counts, weights, conf)
    nodes = sizes / per_node
    with np.errstate(divide="ignore"):
        curve = pd.DataFrame({"n_gpus": sizes.astype(int), "n_nodes": nodes,
                              "mttf_h": HOURS_PER_DAY / (nodes * rate),
                              "mttf_low_h": HOURS_PER_DAY / (nodes * hi),
                              "mttf_high_h": HOURS_PER_DAY / (nodes * lo)})
    notes = [f"{int(counts.sum())} failures over {float(np.nanmax(comp['node_days'])):,.0f} node-days; "
             "every category scales with the job's node count (constant hazard per node)"]
    empirical = None
    observed = (math.nan, math.nan)
    if jobs is not None:
        if interruptions is None:
            raise ValueError("give interruptions together with jobs for the measured MTTF")
        empirical = _empirical(jobs, interruptions, rate, per_node, conf)
        notes.append("measured MTTF = job hours / unexpected interruptions per power-of-two "
                     "GPU bucket; exact Poisson interval")
        observed = _observed_sizes(jobs, per_node)
    curve["extrapolated"] = ~((sizes >= observed[0]) & (sizes <= observed[1]))
    if curve["extrapolated"].all():
        notes.append("every size of the curve lies outside the job sizes in the records (or "
                     "there are none): the whole curve is the series model's extrapolation")
    elif curve["extrapolated"].any():
        notes.append(f"sizes beyond the observed jobs ({observed[0]:,.0f} to {observed[1]:,.0f} "
                     "GPUs) are the series model's extrapolation (column extrapolated; dashed "
                     "and shaded in the figure)")
    return JobMTTFResult(curve=curve, empirical=empirical, rate_per_node_day=rate, rate_low=lo,
                         rate_high=hi, n=int(counts.sum()), node_days=float(np.nanmax(comp["node_days"])),
                         gpus_per_node=per_node, conf_level=conf, observed_gpus=observed,
                         notes=tuple(notes))


def observed_node_rate(interruptions: pd.DataFrame, jobs: pd.DataFrame, *, end: Any = None,
                       conf_level: float = 0.95) -> dict[str, float]:
    """Unexpected interruptions per node-day of the recorded allocations (the RSC ``r_f``).

    Node-days are ``nnodes × (end − start)`` summed over the job records; an allocation still
    running counts up to ``end`` (default: the latest end in the records).  Returns ``rate``
    with its exact Poisson ``low``/``high``, ``count`` and ``node_days``.

    Raises
    ------
    InsufficientDataError
        When the job records give no node-days (no start/end/nnodes).
    """
    from reliab.models.rates import _poisson_bounds

    conf = check_conf_level(conf_level)
    need = {"job_id", "start", "end", "nnodes"} - set(jobs.columns)
    if need:
        raise ValueError(f"jobs lacks column(s) {sorted(need)}")
    start = pd.to_datetime(jobs["start"], utc=True)
    stop = pd.to_datetime(jobs["end"], utc=True)
    horizon = pd.Timestamp(end) if end is not None else stop.max()
    stop = stop.fillna(horizon)
    days = ((stop - start) / pd.Timedelta(days=1)).clip(lower=0)
    node_days = float((days * pd.to_numeric(jobs["nnodes"], errors="coerce")).sum(min_count=1))
    if not node_days > 0:
        raise InsufficientDataError("the job records give no node-days (need start, end and nnodes)")
    count = int((~interruptions["planned"].astype(bool)).sum())
    lo, hi = _poisson_bounds(np.array([float(count)]), conf)
    return {"rate": count / node_days, "low": float(lo[0]) / node_days,
            "high": float(hi[0]) / node_days, "count": count, "node_days": node_days}
