"""Attribute job interruptions to root causes from the signals around each job's end.

Method (Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
Clusters", HPCA 2025, arXiv 2410.21680, §III): a failure is attributed to a cause "detected
within the last 10 minutes or 5 minutes after a failing job's lifetime". Among the evidence in
that window the rule with the highest priority wins, so a hardware Xid beats the NCCL watchdog
timeout it caused and Xid 45/154 (secondary in the NVIDIA Xid catalog) are never chosen.
Categories are those of Llama 3 Table 5 (arXiv 2407.21783) plus NVLink/Planned/Unclassified.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from itertools import groupby
from typing import Any

import numpy as np
import pandas as pd

from reliab.schema import validate
from reliab.taxonomy._classify import _warn_unmatched, rule_positions, taxonomy_columns
from reliab.taxonomy._rules import Rules, as_rules

#: Job end states that count as an interruption.
INTERRUPTED_STATES: frozenset[str] = frozenset({
    "FAILED", "NODE_FAIL", "CANCELLED", "PREEMPTED", "REQUEUED", "TIMEOUT", "OUT_OF_MEMORY",
    "BOOT_FAIL", "DEADLINE",
})
#: Application Xids (NVIDIA catalog: RESTART_APP / ignored by the k8s device plugin): software,
#: unless the same GPU repeats them across jobs, then they are re-keyed ``xid_repeat:<code>``.
APP_XIDS: tuple[str, ...] = ("xid:13", "xid:31", "xid:43")
NO_EVIDENCE = "no evidence"
_FILTER_KEYS = ("name", "min_nodes", "min_gpus")
JobFilter = Callable[[pd.DataFrame], Any] | Mapping[str, Any] | None


# ---------------------------------------------------------------- hostlists
def _split_top(expr: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in expr:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _expand_term(term: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", term)
    if m is None:
        return [term]
    head, tails = term[: m.start()], _expand_term(term[m.end():])
    out = []
    for rng in m.group(1).split(","):
        lo, _, hi = rng.strip().partition("-")
        values = [str(i).zfill(len(lo)) for i in range(int(lo), int(hi) + 1)] if hi else [lo]
        out += [head + v + t for v in values for t in tails]
    return out


def _fallback_expand(expr: str) -> list[str]:
    """Expand a Slurm hostlist such as ``node[0001-0003,0007]`` (used until ingest has one)."""
    return [h for term in _split_top(expr) for h in _expand_term(term)]


@functools.cache
def _expander() -> Callable[[str], list[str]]:
    try:
        from reliab.ingest.hostlist import expand_hostlist
    except ImportError:
        return _fallback_expand
    return expand_hostlist


@functools.lru_cache(maxsize=4096)
def _hostset(nodelist: str | None, failed_node: str | None) -> frozenset[str]:
    hosts = set(_expander()(nodelist)) if nodelist else set()
    return frozenset(hosts | ({failed_node} if failed_node else set()))


# ---------------------------------------------------------------- inputs
def _ns(values: pd.Series) -> np.ndarray:
    s = pd.to_datetime(values, utc=True)
    return pd.DatetimeIndex(s).as_unit("ns").asi8


def _delta(value: str | pd.Timedelta, name: str) -> int:
    try:
        td = pd.Timedelta(value)
    except ValueError as exc:
        raise ValueError(f"{name}={value!r} is not a duration such as '10min'") from exc
    if pd.isna(td) or td < pd.Timedelta(0):
        raise ValueError(f"{name}={value!r} must be a non-negative duration")
    return int(td.value)


def _obj(values: pd.Series) -> np.ndarray:
    return values.to_numpy(dtype=object, na_value=None)


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
        return np.asarray(pd.Series(job_filter(jobs), index=jobs.index).fillna(False), bool)
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


def _with_job_states(signals: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """Add a ``slurm:<state>`` signal at the end of every interrupted job that has none.

    So that e.g. ``CANCELLED by 0`` reaches the ``slurm-cancelled-admin`` rule even when the
    caller passes only kernel or ticket signals.
    """
    is_slurm = signals["signal"].astype("string").str.startswith("slurm:").fillna(False)
    have = set(signals.loc[is_slurm.to_numpy(dtype=bool), "job_id"].dropna())
    todo = jobs[~jobs["job_id"].isin(have)]
    if todo.empty:
        return signals
    raw = todo["state_raw"] if "state_raw" in todo else todo["state"]
    extra = pd.DataFrame({
        "time": todo["end"].to_numpy(), "host": None, "gpu": None,
        "job_id": todo["job_id"].to_numpy(), "source": "sacct",
        "signal": ("slurm:" + todo["_state"].str.lower()).to_numpy(),
        "message": raw.fillna(todo["state"]).to_numpy(),
        "origin": (todo["origin"] if "origin" in todo else todo["job_id"]).to_numpy(),
    })
    extra = extra.astype({c: "string" for c in extra.columns if c != "time"})
    extra["time"] = pd.to_datetime(extra["time"], utc=True)
    cols = [c for c in extra.columns if c in signals.columns]
    return pd.concat([signals[cols], extra[cols]], ignore_index=True)


# ---------------------------------------------------------------- candidate evidence
def _pairs(sig: pd.DataFrame, jobs: pd.DataFrame, rules: Rules, before: int,
           after: int) -> pd.DataFrame:
    """(job, signal) pairs of root-cause evidence: window + host/job/cluster-wide match."""
    t = _ns(sig["time"])
    order = np.argsort(t, kind="stable")
    ts = t[order]
    ends = _ns(jobs["end"])
    lo = np.searchsorted(ts, ends - before, "left")
    hi = np.searchsorted(ts, ends + after, "right")
    cover = np.zeros(len(ts) + 1, dtype=np.int64)
    np.add.at(cover, lo, 1)
    np.add.at(cover, hi, -1)
    wanted = np.zeros(len(ts), dtype=bool)
    wanted[order[np.cumsum(cover[:-1]) > 0]] = True
    keys = sig["signal"].astype("string")
    job_ids = _obj(jobs["job_id"])
    tickets = (keys.str.startswith("ticket:").fillna(False).to_numpy(dtype=bool)
               & sig["job_id"].isin(set(job_ids)).to_numpy(dtype=bool))
    wanted |= tickets
    rows = np.flatnonzero(wanted)
    pos = np.full(len(sig), -1, dtype=np.int64)
    pos[rows] = rule_positions(rules, keys.iloc[rows], sig["message"].iloc[rows])
    _warn_unmatched(keys.iloc[rows], pos[rows], stacklevel=3)
    root = np.zeros(len(sig), dtype=bool)
    root[rows] = rules.table["root_cause"].to_numpy()[pos[rows]] & (pos[rows] >= 0)
    host, sjob = _obj(sig["host"]), _obj(sig["job_id"])
    nodelist = _obj(jobs["nodelist"]) if "nodelist" in jobs else [None] * len(jobs)
    failed = _obj(jobs["failed_node"]) if "failed_node" in jobs else [None] * len(jobs)
    out_job: list[np.ndarray] = []
    out_row: list[np.ndarray] = []
    for j in range(len(jobs)):
        seg = order[lo[j]:hi[j]]
        seg = seg[root[seg]]
        if len(seg):
            hosts, jid = _hostset(nodelist[j], failed[j]), job_ids[j]
            ok = np.fromiter(
                (sj == jid or (h in hosts if h is not None else sj is None)
                 for h, sj in zip(host[seg], sjob[seg], strict=True)),
                bool, len(seg))
            out_row.append(seg[ok])
            out_job.append(np.full(int(ok.sum()), j))
    linked = np.flatnonzero(tickets & root)
    if len(linked):
        where = {jid: j for j, jid in enumerate(job_ids)}
        out_row.append(linked)
        out_job.append(np.array([where[sjob[r]] for r in linked], dtype=np.int64))
    job = np.concatenate(out_job) if out_job else np.empty(0, np.int64)
    row = np.concatenate(out_row) if out_row else np.empty(0, np.int64)
    pairs = pd.DataFrame({"job": job, "row": row}).drop_duplicates(ignore_index=True)
    pairs["rule_pos"] = pos[pairs["row"].to_numpy()]
    pairs["t"] = t[pairs["row"].to_numpy()]
    for col in ("host", "gpu", "signal", "origin"):
        pairs[col] = _obj(sig[col])[pairs["row"].to_numpy()]
    return pairs


def _escalate_app_xids(pairs: pd.DataFrame, rules: Rules) -> pd.DataFrame:
    """Re-key application Xids repeated on one GPU across >= 2 jobs as ``xid_repeat:<code>``."""
    app = pairs["signal"].isin(APP_XIDS) & pairs["host"].notna() & pairs["gpu"].notna()
    if not app.any():
        return pairs
    sub = pairs[app]
    by_gpu = sub.groupby(["host", "gpu"])
    repeat = (by_gpu["job"].transform("nunique") >= 2) & (by_gpu["row"].transform("nunique") >= 2)
    idx = repeat[repeat].index
    if len(idx):
        derived = pd.Series(pairs.loc[idx, "signal"].str.replace("xid:", "xid_repeat:"))
        pos = rule_positions(rules, derived, None)
        pairs.loc[idx, "rule_pos"] = np.where(pos >= 0, pos, pairs.loc[idx, "rule_pos"])
    return pairs


def _collapse_storms(pairs: pd.DataFrame, gap: int) -> pd.DataFrame:
    """Keep the first signal of each storm (same job, host and key within ``gap``)."""
    p = pairs.assign(_h=pairs["host"].fillna("")).sort_values(
        ["job", "_h", "signal", "t"], kind="stable", ignore_index=True)
    new = ((p["job"] != p["job"].shift()) | (p["_h"] != p["_h"].shift())
           | (p["signal"] != p["signal"].shift()) | (p["t"].diff() > gap))
    episode = new.cumsum()
    p["count"] = episode.map(episode.value_counts())
    return p[new.to_numpy()].drop(columns="_h").reset_index(drop=True)


# ---------------------------------------------------------------- output
def _downtime_h(all_jobs: pd.DataFrame, jobs: pd.DataFrame) -> np.ndarray:
    """Hours from each interrupted job's end to the next start of a job with the same name."""
    if "name" not in all_jobs or "start" not in all_jobs:
        return np.full(len(jobs), np.nan)
    pool = pd.DataFrame({"name": all_jobs["name"], "job_id": all_jobs["job_id"],
                         "start": _ns(all_jobs["start"].fillna(all_jobs["end"]))})
    pool = pool[pool["name"].notna()].sort_values(["name", "start"], kind="stable")
    pool["next"] = pool.groupby("name")["start"].shift(-1)
    nxt = pool.drop_duplicates("job_id", keep="last").set_index("job_id")["next"]
    gap = nxt.reindex(jobs["job_id"]).to_numpy(dtype=float) - _ns(jobs["end"]).astype(float)
    return np.clip(gap / 3.6e12, 0.0, None)


def _first_seen(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(v for v in values if v is not None and v == v))


def _summaries(ep: pd.DataFrame, rules: Rules) -> dict[int, dict[str, Any]]:
    """One record per job with evidence: root cause, evidence list, co-occurrence."""
    t = rules.table
    ep = ep.assign(priority=t["priority"].to_numpy()[ep["rule_pos"]],
                   category=t["category"].to_numpy(dtype=object)[ep["rule_pos"]])
    ep = ep.assign(_neg=-ep["priority"]).sort_values(["job", "_neg", "t", "rule_pos"],
                                                    kind="stable")
    cols = ["job", "t", "rule_pos", "host", "gpu", "signal", "origin", "count", "category"]
    out: dict[int, dict[str, Any]] = {}
    for job, grp in groupby(ep[cols].itertuples(index=False, name=None), key=lambda r: r[0]):
        recs = list(grp)
        root, rest = recs[0], sorted(recs[1:], key=lambda r: (r[1], r[2]))
        same = [r for r in [root, *rest] if r[8] == root[8]]
        out[job] = {
            "pos": root[2], "hosts": ",".join(_first_seen(r[3] for r in same)) or None,
            "gpu": root[4], "root_signal": root[5],
            "evidence": ";".join(str(r[6]) for r in [root, *rest]),
            "co_occurring": ";".join(c for c in _first_seen(r[8] for r in rest)
                                     if c not in (root[8], "Unclassified")) or None,
            "n_evidence": len(recs), "n_signals": int(sum(r[7] for r in recs)),
        }
    return out


def _assemble(jobs: pd.DataFrame, all_jobs: pd.DataFrame, ep: pd.DataFrame,
              rules: Rules) -> pd.DataFrame:
    info = _summaries(ep, rules)
    n = len(jobs)
    pos = np.array([info[j]["pos"] if j in info else -1 for j in range(n)], dtype=np.int64)
    tax = taxonomy_columns(rules, pos)

    def col(name: str) -> pd.Series:
        return pd.Series([info.get(j, {}).get(name) for j in range(n)], dtype="string")

    downtime = _downtime_h(all_jobs, jobs)
    ngpus = pd.to_numeric(jobs.get("ngpus", pd.Series(np.nan, index=jobs.index)))
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
        "downtime_h": downtime.astype("float64"),
        "lost_gpu_hours": (downtime * ngpus.to_numpy(dtype=float, na_value=np.nan)),
        "co_occurring": col("co_occurring"),
        "n_evidence": np.array([info.get(j, {}).get("n_evidence", 0) for j in range(n)]),
        "n_signals": np.array([info.get(j, {}).get("n_signals", 0) for j in range(n)]),
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

    ``downtime_h`` is the gap from the job's end to the next start of a job with the same
    name (NaN for the last; 0 if the next one started earlier). The time lost since the
    last checkpoint is not known here, so ``lost_gpu_hours`` is the downtime only:
    ``downtime_h × ngpus``.
    """
    rules = as_rules(rules)
    before_ns, after_ns = _delta(before, "before"), _delta(after, "after")
    gap_ns = _delta(storm_gap, "storm_gap")
    missing = {"time", "host", "gpu", "job_id", "signal", "message", "origin"} - set(signals)
    if missing:
        raise ValueError(f"signals lacks column(s) {sorted(missing)} (schema 'signals')")
    interrupted = _interrupted(jobs)
    sig = _with_job_states(signals, interrupted)
    pairs = _pairs(sig, interrupted, rules, before_ns, after_ns)
    episodes = _collapse_storms(_escalate_app_xids(pairs, rules), gap_ns)
    out = _assemble(interrupted, jobs, episodes, rules)
    out = out[_filter_mask(interrupted, job_filter)]
    out = out.sort_values(["time", "job_id"], kind="stable", ignore_index=True)
    return validate(out, "interruptions")


__all__ = ["attribute", "INTERRUPTED_STATES", "APP_XIDS", "NO_EVIDENCE"]
