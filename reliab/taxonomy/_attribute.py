"""Attribute job interruptions to root causes from the signals around each job's end.

Method (Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
Clusters", HPCA 2025, arXiv 2410.21680, §III): a failure is attributed to a cause "detected
within the last 10 minutes or 5 minutes after a failing job's lifetime". Among the evidence in
that window the rule with the highest priority wins, so a hardware Xid beats the NCCL watchdog
timeout it caused and Xid 45/154 (secondary in the NVIDIA Xid catalog) are never chosen.
Categories are those of Llama 3 Table 5 (arXiv 2407.21783) plus NVLink/Planned/Unclassified.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from reliab.schema import validate
from reliab.taxonomy._classify import taxonomy_columns
from reliab.taxonomy._evidence import (
    SIGNAL_COLUMNS,
    candidate_pairs,
    collapse_storms,
    escalate_app_xids,
    relevant_signals,
    with_job_states,
)
from reliab.taxonomy._rules import Rules, as_rules

#: Job end states that count as an interruption.
INTERRUPTED_STATES: frozenset[str] = frozenset({
    "FAILED", "NODE_FAIL", "CANCELLED", "PREEMPTED", "REQUEUED", "TIMEOUT", "OUT_OF_MEMORY",
    "BOOT_FAIL", "DEADLINE",
})
NO_EVIDENCE = "no evidence"
_FILTER_KEYS = ("name", "min_nodes", "min_gpus")
JobFilter = Callable[[pd.DataFrame], Any] | Mapping[str, Any] | None


# ---------------------------------------------------------------- inputs
def _delta(value: str | pd.Timedelta, name: str) -> int:
    try:
        td = pd.Timedelta(value)
    except ValueError as exc:
        raise ValueError(f"{name}={value!r} is not a duration such as '10min'") from exc
    if pd.isna(td) or td < pd.Timedelta(0):
        raise ValueError(f"{name}={value!r} must be a non-negative duration")
    return int(td.value)


def _interrupted(jobs: pd.DataFrame) -> pd.DataFrame:
    missing = {"job_id", "state", "end"} - set(jobs.columns)
    if missing:
        raise ValueError(f"jobs lacks column(s) {sorted(missing)} (schema 'jobs')")
    state = jobs["state"].astype("string").str.strip().str.split().str[0].str.upper()
    keep = state.isin(INTERRUPTED_STATES).fillna(False) & jobs["end"].notna()
    out = jobs.loc[keep.to_numpy(dtype=bool)].copy()
    out["_state"] = state[keep.to_numpy(dtype=bool)]
    return out.reset_index(drop=True)


def _filter_mask(jobs: pd.DataFrame, job_filter: JobFilter) -> np.ndarray:
    if job_filter is None:
        return np.ones(len(jobs), dtype=bool)
    if callable(job_filter):
        mask = job_filter(jobs.drop(columns="_state"))
        return np.asarray(pd.Series(mask, index=jobs.index).fillna(False), bool)
    if not isinstance(job_filter, Mapping):
        raise TypeError("job_filter must be a callable(jobs) -> mask, a dict, or None")
    unknown = set(job_filter) - set(_FILTER_KEYS)
    if unknown:
        raise ValueError(f"job_filter keys {sorted(unknown)} unknown; use {_FILTER_KEYS}")
    mask = pd.Series(True, index=jobs.index)
    if "name" in job_filter:
        mask &= jobs["name"].astype("string").str.contains(job_filter["name"]).fillna(False)
    for key, col in (("min_nodes", "nnodes"), ("min_gpus", "ngpus")):
        if key in job_filter:
            mask &= (jobs[col] >= job_filter[key]).fillna(False)
    return mask.to_numpy(dtype=bool)


# ---------------------------------------------------------------- output
def _joined(job: np.ndarray, code: np.ndarray, names: np.ndarray, sep: str) -> pd.Series:
    """Distinct values (codes >= 0) per job, in the given order, as ``names`` joined by sep."""
    f = pd.DataFrame({"job": job, "code": code})
    f = f[f["code"] >= 0].drop_duplicates()
    return pd.Series(names[f["code"].to_numpy()], index=f["job"].to_numpy()).groupby(
        level=0, sort=False).agg(sep.join)


def _summaries(ep: pd.DataFrame, sig: pd.DataFrame, rules: Rules) -> pd.DataFrame:
    """One row per job with evidence (index ``job``): root cause, evidence, co-occurrence."""
    cats, cat_names = pd.factorize(rules.table["category"].to_numpy(dtype=object))
    job, t, pos = (ep[c].to_numpy() for c in ("job", "t", "rule_pos"))
    rank = np.lexsort((pos, t, -rules.table["priority"].to_numpy()[pos], job))
    first = np.ones(len(rank), dtype=bool)
    first[1:] = job[rank][1:] != job[rank][:-1]
    root = rank[first]  # ep rows of the root causes, one per job, by job
    is_root = np.zeros(len(ep), dtype=bool)
    is_root[root] = True
    o = np.lexsort((pos, t, ~is_root, job))  # evidence order: root first, then by time
    cat = cats[pos]
    root_cat = np.full(job.max() + 1 if len(job) else 0, -1)
    root_cat[job[root]] = cat[root]
    same = cat[o] == root_cat[job[o]]
    hosts, host_names = pd.factorize(_obj_of(sig, "host", ep["row"]))
    other = np.where(~same & (cat_names[cat[o]] != "Unclassified"), cat[o], -1)
    origin = _obj_of(sig, "origin", ep["row"])[o]
    grouped = pd.Series(origin, index=job[o]).groupby(level=0, sort=False)
    rows = ep["row"].to_numpy()[root]
    return pd.DataFrame({
        "pos": pos[root], "gpu": _obj_of(sig, "gpu", rows), "root_signal": _obj_of(sig, "signal", rows),
        "hosts": _joined(job[o], np.where(same, hosts[o], -1), np.asarray(host_names, object), ","),
        "evidence": grouped.agg(";".join),
        "co_occurring": _joined(job[o], other, np.asarray(cat_names, object), ";"),
        "n_evidence": np.bincount(job)[job[root]],
        "n_signals": np.bincount(job, weights=ep["count"].to_numpy())[job[root]].astype(np.int64),
    }, index=job[root])


def _obj_of(sig: pd.DataFrame, col: str, rows: Any) -> np.ndarray:
    """Values of ``sig[col]`` at integer ``rows``, as objects (``None`` for missing)."""
    return sig[col].iloc[np.asarray(rows)].to_numpy(dtype=object, na_value=None)


def _assemble(jobs: pd.DataFrame, all_jobs: pd.DataFrame, ep: pd.DataFrame, sig: pd.DataFrame,
              rules: Rules) -> pd.DataFrame:
    info = _summaries(ep, sig, rules).reindex(range(len(jobs)))
    pos = info["pos"].fillna(-1).to_numpy(dtype=np.int64)
    tax = taxonomy_columns(rules, pos)

    def col(name: str) -> pd.Series:
        return pd.Series(info[name].to_numpy(dtype=object), dtype="string")

    rule_ids = rules.table["id"].to_numpy(dtype=object)
    return pd.DataFrame({
        "time": pd.to_datetime(jobs["end"], utc=True).dt.as_unit("ns"),
        "job_id": jobs["job_id"].astype("string"),
        "hosts": col("hosts"), "gpu": col("gpu"),
        "planned": tax["planned"], "category": tax["category"], "component": tax["component"],
        "root_signal": col("root_signal"), "evidence": col("evidence"),
        "attribution": pd.array([f"rule:{rule_ids[p]}" if p >= 0 else NO_EVIDENCE
                                 for p in pos], dtype="string"),
        "job_state": jobs["_state"].astype("string"),
        "downtime_h": np.nan, "lost_gpu_hours": np.nan,  # filled by _with_costs
        "co_occurring": col("co_occurring"),
        "n_evidence": info["n_evidence"].fillna(0).to_numpy(dtype=np.int64),
        "n_signals": info["n_signals"].fillna(0).to_numpy(dtype=np.int64),
    })


def attribute(
    signals: pd.DataFrame,
    jobs: pd.DataFrame,
    *,
    rules: Rules | str | os.PathLike[str] | None = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: JobFilter = None,
    storm_gap: str | pd.Timedelta = "2min",
) -> pd.DataFrame:
    """One row per job interruption with its root cause, evidence and lost GPU-hours.

    Parameters
    ----------
    signals : pandas.DataFrame
        Schema ``signals`` (time, host, gpu, job_id, source, signal, severity, message,
        origin); classified here with ``rules``.
    jobs : pandas.DataFrame
        Schema ``jobs``. Allocations whose ``state`` is FAILED, NODE_FAIL, CANCELLED,
        PREEMPTED, REQUEUED, TIMEOUT, OUT_OF_MEMORY, BOOT_FAIL or DEADLINE and whose ``end``
        is known are interruptions; the interruption time is the job's end.
    rules : Rules, path or None
        Taxonomy rules (:func:`load_rules`); ``None`` for the shipped rules.
    before, after : str or pandas.Timedelta
        Attribution window around the job's end, ``[end - before, end + after]`` (both ends
        included). The defaults, 10 minutes before and 5 minutes after, are those of
        Kokolis et al. (HPCA 2025, arXiv 2410.21680).
    job_filter : callable or dict, optional
        ``callable(jobs) -> bool mask`` over the interrupted jobs, or a dict with any of
        ``name`` (regex searched in the job name), ``min_nodes``, ``min_gpus``.
    storm_gap : str or pandas.Timedelta
        Signals of one key on one host, each within ``storm_gap`` of the previous one, form
        one episode: the first is kept and the episode size counts in ``n_signals``.

    Returns
    -------
    pandas.DataFrame
        Schema ``interruptions`` sorted by time, plus ``co_occurring`` (other categories
        among the evidence, ';'-joined; the RSC co-occurrence analysis), ``n_evidence``
        (episodes) and ``n_signals`` (signals before storm collapse).

    Notes
    -----
    Evidence of a job: signals whose rule has ``root_cause`` true, inside the window, and
    naming the job (``job_id``), or on one of its hosts (Slurm ``nodelist`` plus
    ``failed_node``), or with neither host nor job (cluster-wide). Tickets naming the job by
    ``job_id`` count whatever their time. The root cause is the evidence with the highest
    rule priority, ties broken by the earliest time, then rule order; ``planned``, category
    and component come from its rule. No evidence gives ``Unclassified``/``Unknown`` and
    attribution ``no evidence`` (also for a job cancelled by a user). A job without a
    ``slurm:*`` signal gets one from its end state, so ``CANCELLED by 0`` (root) reaches the
    ``slurm-cancelled-admin`` rule (Planned).

    Application Xids 13, 31 and 43 (NVIDIA Xid catalog: RESTART_APP) count as software,
    unless the same GPU (host and gpu) shows them in at least two different interrupted
    jobs; then all those occurrences are re-keyed ``xid_repeat:<code>`` and classified by
    rule ``xid-app-repeat`` (Faulty GPU).

    ``downtime_h`` (the job's end to the start of the next job with the same name),
    ``restart_h``, ``lost_work_h`` (since the last checkpoint in the training log, else half
    an assumed hourly interval), ``lost_gpu_hours`` and ``cost_basis`` come from
    :func:`reliab.models.jobs._timeline.interruption_costs`; NaN where the logs cannot tell,
    with the reason in ``cost_basis``.
    """
    rules = as_rules(rules)
    before_ns, after_ns = _delta(before, "before"), _delta(after, "after")
    gap_ns = _delta(storm_gap, "storm_gap")
    missing = set(SIGNAL_COLUMNS) - set(signals.columns)
    if missing:
        raise ValueError(f"signals lacks column(s) {sorted(missing)} (schema 'signals')")
    interrupted = _interrupted(jobs)
    sig = with_job_states(relevant_signals(signals, interrupted, before_ns, after_ns),
                          interrupted)
    pairs = candidate_pairs(sig, interrupted, rules, before_ns, after_ns)
    episodes = collapse_storms(escalate_app_xids(pairs, sig, rules), gap_ns)
    out = _assemble(interrupted, jobs, episodes, sig, rules)
    out = out[_filter_mask(interrupted, job_filter)]
    out = out.sort_values(["time", "job_id"], kind="stable", ignore_index=True)
    return validate(_with_costs(out, jobs, signals), "interruptions")


def _with_costs(out: pd.DataFrame, jobs: pd.DataFrame, signals: pd.DataFrame) -> pd.DataFrame:
    """Downtime, restart, lost work and lost GPU-hours of each interruption, and their basis."""
    from reliab.models.jobs._timeline import interruption_costs

    costs = interruption_costs(out, jobs, signals)
    out = out.assign(downtime_h=costs.pop("downtime_h"), lost_gpu_hours=costs.pop("lost_gpu_hours"))
    at = out.columns.get_loc("lost_gpu_hours") + 1
    return pd.concat([out.iloc[:, :at], costs, out.iloc[:, at:]], axis=1)


__all__ = ["attribute", "INTERRUPTED_STATES", "NO_EVIDENCE"]
