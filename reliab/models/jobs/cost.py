"""Observed cost of failures for a training run: ETTR, and lost GPU-hours per category.

:func:`failure_cost` lays one training run (a chain of allocations with the same job name)
on the wall clock of its window and splits every hour into productive training, blocking
checkpoint writes, work lost since the last checkpoint, downtime between allocations, and
restart overhead (checkpoint load) — the decomposition behind the ETTR of Kokolis et al.
(HPCA 2025, arXiv 2410.21680) and Llama 3's "effective training time" (arXiv 2407.21783,
§3.3.4).  Each interruption is charged the work it lost, the downtime after it and the
restart that followed (:mod:`._timeline`), so lost GPU-hours add up per category, component,
week and quarter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from reliab._checks import Check, equal, finite, in_range
from reliab.errors import InsufficientDataError
from reliab.models._result import ResultMixin
from reliab.models.jobs._durations import to_hours
from reliab.models.jobs._timeline import (
    _NS_PER_H,
    _OPEN,
    _ns,
    allocation_progress,
    interruption_costs,
    progress_events,
)

_COST_COLUMNS = ("lost_work_h", "downtime_h", "restart_h")
ByLike = Literal["category", "component", "week", "quarter", "interruption"]


@dataclass(frozen=True)
class FailureCostResult(ResultMixin):
    """ETTR of one training run and the cost of each of its interruptions.

    Attributes
    ----------
    ettr : float
        Productive training hours / wall hours of the window.
    breakdown : dict
        Wall hours by use: ``productive``, ``checkpoint_writes``, ``lost_work``,
        ``downtime`` (to the window end when the run had not started again),
        ``restart``, ``before_first_start`` (they add up to ``wall_h``: an allocation that
        began before the window, or overlaps the one before it, counts from the later time).
    interruptions : DataFrame
        One row per interruption of the run with ``category``, ``component``, ``hosts``,
        ``downtime_h``, ``restart_h``, ``lost_work_h``, ``lost_gpu_hours``, ``cost_basis``.
    segments : DataFrame
        One row per allocation: ``gap_before_h`` (no allocation), ``restart_h``, ``run_h``
        split into ``productive_h``, ``checkpoint_h``, ``lost_h``; ``censored`` for the one
        still running at the end; ``interruption`` (row of ``interruptions`` or -1).
    checkpoint_interval_h, checkpoint_write_h : float
        Median training time between logged checkpoints and median logged write time
        (NaN without checkpoint lines).
    """

    ettr: float
    wall_h: float
    breakdown: dict[str, float]
    lost_gpu_hours: float
    job_name: str
    n_gpus: float
    start: pd.Timestamp
    end: pd.Timestamp
    checkpoint_interval_h: float
    checkpoint_write_h: float
    n: int
    interruptions: pd.DataFrame = field(repr=False)
    segments: pd.DataFrame = field(repr=False)
    first_critical: pd.Series = field(repr=False)
    conf_level: float = 0.95
    method: str = ("wall-clock decomposition of the run: productive / writes / lost since last "
                   "checkpoint / downtime / restart (Kokolis et al. 2025 ETTR)")
    notes: tuple[str, ...] = ()
    assumed_checkpoint_interval_h: float = 1.0

    def invariants(self) -> tuple[Check, ...]:
        """ETTR in [0, 1]; the wall clock split into non-negative hours that add up to the
        window; lost GPU-hours >= 0 (NaN only when unknown); interruptions counted once."""
        hours = [*self.breakdown.values()]
        inter = self.interruptions
        costs = inter[[*_COST_COLUMNS, "lost_gpu_hours"]].to_numpy(dtype=float).ravel() if len(inter) else []
        by_cat = self.summary()["interruptions"].iloc[:-1].sum() if len(inter) else 0
        return (in_range("ettr_in_unit_interval", self.ettr, 0.0, 1.0),
                finite("wall_finite", [self.wall_h, *hours]),
                in_range("hours_not_negative", hours, 0.0, allow_nan=False, tol=1e-6),
                equal("wall_clock_adds_up", sum(hours), self.wall_h, rtol=1e-9, atol=1e-6,
                      what="sum of the wall-clock split vs the window"),
                in_range("lost_gpu_hours_not_negative", [self.lost_gpu_hours, *costs], 0.0,
                         allow_nan=True, tol=1e-6),
                equal("interruptions_conserved", [self.n, self.n], [len(inter), by_cat],
                      what="n vs (rows, sum over categories)"))

    def summary(self, by: ByLike = "category") -> pd.DataFrame:
        """Interruptions and lost hours per ``by`` group, largest loss first, with a Total."""
        df = self.interruptions
        if by == "interruption":
            return df.copy()
        if by not in ("category", "component", "week", "quarter"):
            raise ValueError(f"by must be category, component, week, quarter or interruption, got {by!r}")
        g = df.groupby(by, observed=True, dropna=False)
        out = pd.DataFrame({"interruptions": g.size()})
        for col in (*_COST_COLUMNS, "lost_gpu_hours"):
            out[col] = g[col].sum(min_count=1)
        if by in ("category", "component"):
            out = out.sort_values("lost_gpu_hours", ascending=False, kind="stable")
        total = out.sum(numeric_only=True, min_count=1).to_frame("Total").T
        out = pd.concat([out, total])
        out["share_pct"] = 100.0 * out["lost_gpu_hours"] / df["lost_gpu_hours"].sum()
        return out.rename_axis(by).reset_index()

    def wall(self) -> pd.DataFrame:
        """The wall-clock breakdown: hours and share of the window per use."""
        rows = [(k, v, 100.0 * v / self.wall_h) for k, v in self.breakdown.items()]
        return pd.DataFrame(rows, columns=["use", "hours", "pct_of_wall"])

    def _meta(self) -> dict[str, Any]:
        meta = super()._meta()
        meta["breakdown"] = dict(self.breakdown)
        return meta

    def plot(self, ax: Any = None, *, by: ByLike = "category") -> Any:
        """Stacked bars of lost GPU-hours per group: lost work, downtime, restart (hours,
        and an axis that says so, when the job records give no GPU count)."""
        from matplotlib.figure import Figure

        table = self.summary(by=by)
        table = table[table[by] != "Total"].iloc[::-1]
        fig = ax.figure if ax is not None else Figure(figsize=(7, 0.3 * len(table) + 1.2), layout="constrained")
        ax = ax if ax is not None else fig.add_subplot()
        left = np.zeros(len(table))
        scale = self.n_gpus if math.isfinite(self.n_gpus) else 1.0
        for col, label, colour in (("lost_work_h", "work since last checkpoint", "#c0392b"),
                                   ("downtime_h", "downtime", "#e67e22"),
                                   ("restart_h", "restart", "#f1c40f")):
            width = table[col].fillna(0).to_numpy() * scale
            ax.barh(table[by].astype(str), width, left=left, color=colour, label=label)
            left += width
        unit = ("lost work (GPU-hours)" if math.isfinite(self.n_gpus)
                else "lost work (hours; GPU count unknown)")
        ax.set(xlabel=unit, title=f"Cost of interruptions (ETTR {self.ettr:.3f})")
        ax.legend(fontsize="small")
        return fig


def _window(a: pd.DataFrame, chain_signals: pd.DataFrame, start: Any, end: Any) -> tuple[int, int, str]:
    """Window (ns) of the run and a sentence on where its end came from."""
    t0 = int(_ns(pd.Series([pd.Timestamp(start)]))[0]) if start is not None else int(a["start"].min())
    if end is not None:
        return t0, int(_ns(pd.Series([pd.Timestamp(end)]))[0]), "window end given"
    closed = a.loc[~a["censored"], "end"]
    last_end = int(closed.max()) if len(closed) else t0
    last_sig = int(_ns(chain_signals["time"]).max()) if len(chain_signals) else t0
    if a["censored"].any():
        return t0, max(last_end, last_sig), ("window end not given: the last allocation is still "
                                             "running, so the window ends at its last log line")
    return t0, last_end, "window ends with the last allocation"


def _pick_chain(a: pd.DataFrame, job_name: str | None, interruptions: pd.DataFrame) -> str:
    if job_name is not None:
        if job_name not in set(a["chain"]):
            raise ValueError(f"job_name={job_name!r}: no job of that name in the job records")
        return job_name
    hit = a[a["job_id"].isin(interruptions["job_id"].astype(str))]
    pool = hit if len(hit) else a
    if pool.empty:
        raise InsufficientDataError("no job records with a start time: nothing to account for")
    end = np.where(pool["end"] == _OPEN, pool["start"].max(), pool["end"])  # running: count to now
    hours = (end - pool["start"]) / _NS_PER_H * pool["ngpus"].fillna(1.0)
    return str(hours.groupby(pool["chain"]).sum().idxmax())


def _clip(a: pd.DataFrame, saves: pd.DataFrame, t0: int, t1: int) -> pd.DataFrame:
    """The chain's allocations inside the window ``[t0, t1]`` (ns), in start order.

    An allocation counts from the window start, or from the end of the one before it when
    they overlap, to the window end at most; its resume is moved into that span, and its
    checkpoints are the saves inside it (a write that began before the span counts for the
    part inside it), so that every hour of the window is counted once.
    """
    a = a[(a["end"] > t0) & (a["start"] < t1)].sort_values("start", kind="stable").copy()
    a["censored"] = a["censored"] | (a["end"] >= t1)
    end = np.minimum(a["end"].to_numpy(dtype=np.int64), t1)
    before = np.maximum.accumulate(np.concatenate([[t0], end[:-1]])) if len(a) else end
    start = np.maximum(a["start"].to_numpy(dtype=np.int64), before)
    end = np.maximum(end, start)
    a["start"], a["end"] = start, end
    a["resume"] = np.clip(a["resume"].to_numpy(dtype=float), start, end)  # NaN stays NaN
    own = a.reset_index(drop=True).reset_index(names="_alloc")[["_alloc", "job_id", "start", "end"]]
    hits = saves.merge(own, on="job_id")
    hits = hits[(hits["t"] >= hits["start"]) & (hits["t"] <= hits["end"])]
    hits = hits.assign(w=np.minimum(hits["write_h"], (hits["t"] - hits["start"]) / _NS_PER_H))
    g = hits.groupby("_alloc")
    idx = np.arange(len(a))
    a["n_saves"] = g.size().reindex(idx, fill_value=0).to_numpy()
    a["write_h"] = g["w"].sum(min_count=1).reindex(idx).to_numpy(dtype=float)
    a["last_save"] = g["t"].max().reindex(idx).to_numpy(dtype=float)
    return a


def _segments(a: pd.DataFrame, t0: int, assumed_h: float) -> pd.DataFrame:
    """Per allocation of the chain (in start order, clipped by :func:`_clip`): gap, restart,
    run and its split into productive, writing and lost hours (they add up to the run)."""
    a = a.reset_index(drop=True)
    has_saves, has_loads = bool((a["n_saves"] > 0).any()), bool(a["resume"].notna().any())
    start, end = a["start"].to_numpy(dtype=float), a["end"].to_numpy(dtype=float)
    resume = a["resume"].to_numpy(dtype=float)
    # a chain that logs resumes: an allocation without one never resumed (all restart)
    resume = np.where(np.isnan(resume), end if has_loads else start, resume)
    prev_end = np.concatenate([[float(t0)], end[:-1]])
    run = (end - resume) / _NS_PER_H
    censored = a["censored"].to_numpy(dtype=bool)
    writes = np.nan_to_num(a["write_h"].to_numpy(dtype=float))
    if has_saves:
        last = np.clip(a["last_save"].to_numpy(dtype=float), resume, end)
        done = np.where(np.isnan(last), 0.0, (last - resume) / _NS_PER_H)  # up to the last save
        writes = np.minimum(writes, np.where(censored, run, done))
        productive = np.where(censored, run - writes, done - writes)
        lost = np.where(censored, 0.0, run - done)
    else:
        writes = np.zeros(len(a))
        lost = np.where(censored, 0.0, np.minimum(run, assumed_h / 2.0))
        productive = run - lost
    return pd.DataFrame({
        "job_id": a["job_id"], "start": a["start"], "end": a["end"], "ngpus": a["ngpus"],
        "gap_before_h": (start - prev_end) / _NS_PER_H, "restart_h": (resume - start) / _NS_PER_H,
        "run_h": run, "productive_h": productive, "checkpoint_h": writes, "lost_h": lost,
        "censored": censored})


def _interruption_of(seg: pd.DataFrame, inter: pd.DataFrame) -> np.ndarray:
    """Per segment, the row of ``inter`` that ended it, else -1.  A requeued job keeps its
    job id (``sacct --duplicates`` lists each run), so an allocation is its job id and end."""
    key = pd.MultiIndex.from_arrays([inter["job_id"].astype(str).to_numpy(), _ns(inter["time"])])
    rows = pd.Series(np.arange(len(inter)), index=key)
    rows = rows[~rows.index.duplicated()]
    seg_key = pd.MultiIndex.from_arrays([seg["job_id"].astype(str).to_numpy(),
                                         seg["end"].to_numpy(dtype=np.int64)])
    return rows.reindex(seg_key).fillna(-1).to_numpy(dtype=int)


def _total_lost(lost: pd.Series) -> float:
    """Lost GPU-hours of the run: the sum of the known ones; NaN when interruptions exist but
    none is known (no GPU count, no downtime), never a 0 that reads as "nothing lost"."""
    return float(lost.sum(min_count=1)) if len(lost) else 0.0


def _median_gpus(ngpus: pd.Series) -> float:
    """Median GPU count of the run's allocations; NaN, without NumPy's empty-slice warning,
    when no record gives one (``sacct`` without ``AllocTRES``/``ReqTRES``)."""
    known = ngpus.dropna()
    return float(known.median()) if len(known) else math.nan


def _observed_policy(a: pd.DataFrame, signals: pd.DataFrame | None) -> tuple[float, float]:
    """Median training hours between checkpoints and median write hours, from the logs."""
    saves, _ = progress_events(signals)
    saves = saves[saves["job_id"].isin(a["job_id"])]
    if saves.empty:
        return math.nan, math.nan
    resume = a.dropna(subset=["resume"]).set_index("job_id")["resume"]
    saves = saves.sort_values(["job_id", "t"], kind="stable")
    prev = saves.groupby("job_id")["t"].shift(1)
    prev = prev.fillna(saves["job_id"].map(resume))
    write = saves["write_h"].fillna(0.0)
    gaps = (saves["t"] - prev) / _NS_PER_H - write
    gaps = gaps[gaps.notna() & (gaps > 0)]
    interval = float(gaps.median()) if len(gaps) else math.nan
    known = saves["write_h"].dropna()
    return interval, float(known.median()) if len(known) else 0.0


def _first_critical(signals: pd.DataFrame | None) -> pd.Series:
    """Per host, the time of its first critical Xid (for the drain replay)."""
    if signals is None or signals.empty:
        return pd.Series(dtype="datetime64[ns, UTC]")
    key = signals["signal"].astype("string")
    crit = signals[(key.str.startswith("xid:") & (signals["severity"].astype("string") == "critical")
                    & signals["host"].notna()).fillna(False).to_numpy(dtype=bool)]
    return crit.groupby(crit["host"].astype(str))["time"].min()


def failure_cost(
    interruptions: pd.DataFrame,
    jobs: pd.DataFrame,
    signals: pd.DataFrame | None = None,
    *,
    job_name: str | None = None,
    start: Any = None,
    end: Any = None,
    assumed_checkpoint_interval_h: float | str = 1.0,
) -> FailureCostResult:
    """ETTR of a training run and what each interruption cost it.

    Parameters
    ----------
    interruptions, jobs : DataFrame
        Canonical ``interruptions`` and ``jobs`` tables (``reliab.ingest`` output).
    signals : DataFrame, optional
        Canonical ``signals``: its ``train:checkpoint_saved``/``_loaded`` rows place the
        checkpoints and resumes; its critical Xids are kept for the drain replay.
    job_name : str, optional
        The run (job name of its allocations); default the chain with the most GPU-hours
        among those with interruptions.
    start, end : timestamp-like, optional
        The window; default the first allocation's start and the last allocation's end
        (or, while it still runs, its last log line).
    assumed_checkpoint_interval_h : float or str
        Used only when the run's logs have no checkpoint line (stated in ``cost_basis``).

    Returns
    -------
    FailureCostResult

    Raises
    ------
    InsufficientDataError
        No job record with a start time.
    ValueError
        An unknown ``job_name``, or a window that ends before it starts.
    """
    assumed = to_hours(assumed_checkpoint_interval_h, "assumed_checkpoint_interval_h", positive=True)
    allocations = allocation_progress(jobs, signals, window_end=None if end is None else
                                      int(_ns(pd.Series([pd.Timestamp(end)]))[0]))
    backwards = ~allocations["censored"] & (allocations["end"] < allocations["start"])
    reversed_ids = allocations.loc[backwards, "job_id"].astype(str).tolist()
    allocations = allocations[~backwards]
    chain = _pick_chain(allocations, job_name, interruptions)
    a = allocations[allocations["chain"] == chain]
    chain_sig = signals[signals["job_id"].astype(str).isin(a["job_id"])] if signals is not None \
        else pd.DataFrame({"time": pd.Series(dtype="datetime64[ns, UTC]")})
    t0, t1, end_note = _window(a, chain_sig, start, end)
    if t1 <= t0:
        raise ValueError(f"the window ends ({pd.Timestamp(t1, tz='UTC')}) before it starts "
                         f"({pd.Timestamp(t0, tz='UTC')})")
    a = _clip(a, progress_events(signals)[0], t0, t1)
    seg = _segments(a, t0, assumed)
    inter = _chain_interruptions(interruptions, jobs, signals, allocations, a, assumed, (t0, t1))
    seg["interruption"] = _interruption_of(seg, inter)
    trailing = (t1 - float(seg["end"].max())) / _NS_PER_H if len(seg) else (t1 - t0) / _NS_PER_H
    inter = _costs_in_window(inter, seg, trailing)
    wall = (t1 - t0) / _NS_PER_H
    down = float(seg["gap_before_h"].iloc[1:].sum()) + (trailing if len(seg) else 0.0)
    breakdown = {"productive": float(seg["productive_h"].sum()),
                 "checkpoint_writes": float(seg["checkpoint_h"].sum()),
                 "lost_work": float(seg["lost_h"].sum()), "downtime": down,
                 "restart": float(seg["restart_h"].sum()),
                 "before_first_start": float(seg["gap_before_h"].iloc[0]) if len(seg) else wall}
    interval, write = _observed_policy(a, signals)
    notes = [f"run {chain!r}: {len(seg)} allocations, {len(inter)} interruptions; {end_note}"]
    notes += sorted(set(inter["cost_basis"]) - {"checkpoint lines"})
    uncounted = int(((seg["interruption"] < 0) & ~seg["censored"]).sum())
    if uncounted:
        notes.append(f"{uncounted} allocation end(s) of the run are not in the interruptions table "
                     "(the interruption policy set them apart): their cost is in the ETTR, not in "
                     "the per-category totals")
    began = allocations.loc[a.index, "start"].to_numpy()
    if ((a["start"].to_numpy() > began) & (began > t0)).any():
        notes.append("allocations of the run overlap in time: each is counted from the end of "
                     "the one before it")
    if reversed_ids:
        notes.append(f"{len(reversed_ids)} allocation(s) end before they start (job id(s) "
                     f"{', '.join(reversed_ids[:5])}{' ...' if len(reversed_ids) > 5 else ''}): left out")
    if (seg["ngpus"].nunique() > 1):
        notes.append("the run changed size: lost GPU-hours use each allocation's own GPU count")
    return FailureCostResult(
        ettr=breakdown["productive"] / wall, wall_h=wall, breakdown=breakdown,
        lost_gpu_hours=_total_lost(inter["lost_gpu_hours"]), job_name=chain,
        n_gpus=_median_gpus(seg["ngpus"]), start=pd.Timestamp(t0, tz="UTC"),
        end=pd.Timestamp(t1, tz="UTC"), checkpoint_interval_h=interval, checkpoint_write_h=write,
        n=len(inter), interruptions=inter, segments=seg, first_critical=_first_critical(signals),
        notes=tuple(notes), assumed_checkpoint_interval_h=assumed)


def _costs_in_window(inter: pd.DataFrame, seg: pd.DataFrame, trailing_h: float) -> pd.DataFrame:
    """Each interruption's lost work, downtime and restart as the window's segments count them:
    the work since the last checkpoint inside the window, the gap to the next allocation and
    its restart; after the last allocation, the downtime runs to the window end."""
    inter = inter.copy()
    rows = seg["interruption"].to_numpy()
    k = np.flatnonzero(rows >= 0)
    if not len(k):
        return inter
    nxt = k + 1 < len(seg)
    i = rows[k]
    lost = inter["lost_work_h"].to_numpy(dtype=float).copy()
    down = inter["downtime_h"].to_numpy(dtype=float).copy()
    restart = inter["restart_h"].to_numpy(dtype=float).copy()
    lost[i] = seg["lost_h"].to_numpy()[k]
    down[i[nxt]] = seg["gap_before_h"].to_numpy()[k[nxt] + 1]
    restart[i[nxt]] = seg["restart_h"].to_numpy()[k[nxt] + 1]
    basis = inter["cost_basis"].astype(str).to_numpy(dtype=object).copy()
    if trailing_h > 0:  # the run did not start again before the window ends
        down[i[~nxt]], restart[i[~nxt]] = trailing_h, 0.0
        basis[i[~nxt]] = [b.replace("no later job in the chain: downtime unknown",
                                    "no later job in the window: downtime counted to its end")
                          for b in basis[i[~nxt]]]
    ngpus = seg["ngpus"].to_numpy(dtype=float)
    gpus = inter["lost_gpu_hours"].to_numpy(dtype=float).copy()
    gpus[i] = ngpus[k] * (lost[i] + down[i] + restart[i])
    return inter.assign(lost_work_h=lost, downtime_h=down, restart_h=restart, lost_gpu_hours=gpus,
                        cost_basis=basis)


def _chain_interruptions(interruptions: pd.DataFrame, jobs: pd.DataFrame,
                         signals: pd.DataFrame | None, allocations: pd.DataFrame, a: pd.DataFrame,
                         assumed: float, window: tuple[int, int]) -> pd.DataFrame:
    """The run's interruptions inside the window with their costs, week and quarter."""
    when = _ns(interruptions["time"])
    inside = (when > window[0]) & (when <= window[1])
    mine = interruptions[interruptions["job_id"].astype(str).isin(a.loc[~a["censored"], "job_id"])
                         & inside]
    mine = mine.sort_values("time", kind="stable").reset_index(drop=True)
    costs = interruption_costs(mine, jobs, signals, assumed_checkpoint_interval_h=assumed,
                               progress=allocations)
    keep = [c for c in ("time", "job_id", "hosts", "planned", "category", "component",
                        "root_signal") if c in mine.columns]
    out = pd.concat([mine[keep], costs], axis=1)
    when = pd.to_datetime(out["time"], utc=True).dt.tz_localize(None)
    out["week"] = when.dt.to_period("W-SUN").dt.start_time.dt.strftime("%Y-%m-%d")
    out["quarter"] = when.dt.to_period("Q").astype(str)
    return out
