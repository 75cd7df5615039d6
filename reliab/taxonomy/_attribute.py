"""Attribute job interruptions to root causes from the signals around each job's end.

Method (Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
Clusters", HPCA 2025, arXiv 2410.21680, §III): a failure is attributed to a cause "detected
within the last 10 minutes or 5 minutes after a failing job's lifetime". Among the evidence in
that window the rule with the highest priority wins, so a hardware Xid beats the NCCL watchdog
timeout it caused and Xid 45/154 (secondary in the NVIDIA Xid catalog) are never chosen.
Categories are those of Llama 3 Table 5 (arXiv 2407.21783) plus NVLink/Planned/Unclassified.

Which job ends are interruptions at all is the policy's decision (:mod:`._policy`): the
fleet view of the same study (NODE_FAIL, or FAILED with infrastructure evidence; user
failures apart) or the training-run view of the Llama 3 report (every end of one run).
:func:`job_outcomes` decides it for every ended job and attributes the ones that need
evidence; :func:`attribute` returns its interruptions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from reliab.schema import validate
from reliab.taxonomy._classify import taxonomy_columns
from reliab.taxonomy._coverage import coverage_notes
from reliab.taxonomy._evidence import (
    SIGNAL_COLUMNS,
    candidate_pairs,
    collapse_storms,
    escalate_app_xids,
    relevant_signals,
    with_job_states,
)
from reliab.taxonomy._outcomes import JobOutcomes, policy_notes
from reliab.taxonomy._policy import (
    INTERRUPTION,
    NOT_ENDED,
    USER_FAILURE,
    Policy,
    check_policy,
    decide,
    describe,
    end_states,
    ended_mask,
    evidence_kinds,
    needs_evidence,
    pending_cancels,
    select_run,
)
from reliab.taxonomy._rules import Rules, as_rules

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


#: the columns of the ended allocations that deciding and the outcomes table read
_ENDED_COLUMNS = ("job_id", "name", "state", "state_raw", "start", "end")


def _rows(frame: pd.DataFrame, rows: np.ndarray, cols: Sequence[str]) -> pd.DataFrame:
    """``frame[cols]`` at integer ``rows`` with a fresh index: every row without a copy,
    else one take per column (not a copy of the whole frame, then a second for the index)."""
    if len(rows) == len(frame):
        return pd.DataFrame({c: frame[c].array for c in cols}, copy=False)
    return pd.DataFrame({c: frame[c].array.take(rows) for c in cols}, copy=False)


def _ended(jobs: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, pd.Series, int]:
    """Ended allocations (with ``_state``; only :data:`_ENDED_COLUMNS`), their rows in ``jobs``,
    not-ended states, ends unknown."""
    missing = {"job_id", "state", "end"} - set(jobs.columns)
    if missing:
        raise ValueError(f"jobs lacks column(s) {sorted(missing)} (schema 'jobs')")
    state = end_states(jobs)
    ended = ended_mask(jobs, state)
    running = state.isin(NOT_ENDED).fillna(False).to_numpy(dtype=bool)
    no_end = int((~ended & ~running & state.notna().to_numpy(dtype=bool)).sum())
    rows = np.flatnonzero(ended)
    out = _rows(jobs, rows, [c for c in _ENDED_COLUMNS if c in jobs])
    out["_state"] = state.array.take(rows)
    return out, rows, state[running], no_end


def _shared_objects(values: pd.Series) -> np.ndarray:
    """``values`` as an object array holding one ``str`` per distinct value (a few end states:
    1M jobs are not 1M Python strings); missing values are ``None``."""
    codes, uniques = pd.factorize(values)
    names = np.append(np.asarray(uniques, dtype=object), None)
    return names[codes]  # code -1 (missing): the appended None


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
    return _join_by(f["job"].to_numpy(), names[f["code"].to_numpy()], sep)


def _join_by(keys: np.ndarray, values: np.ndarray, sep: str) -> pd.Series:
    """``values`` joined by ``sep`` per key, keys in order of first appearance (what
    ``groupby(level=0, sort=False).agg(sep.join)`` gives, without a Python call per group)."""
    groups: dict[Any, list[str]] = {}
    for key, value in zip(keys.tolist(), values.tolist(), strict=True):
        groups.setdefault(key, []).append(value)
    return pd.Series([sep.join(v) for v in groups.values()], index=pd.Index(list(groups), dtype=keys.dtype),
                     dtype=object)


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
    rows = ep["row"].to_numpy()[root]
    return pd.DataFrame({
        "pos": pos[root], "gpu": _obj_of(sig, "gpu", rows), "root_signal": _obj_of(sig, "signal", rows),
        "hosts": _joined(job[o], np.where(same, hosts[o], -1), np.asarray(host_names, object), ","),
        "evidence": _join_by(job[o], origin, ";"),
        "co_occurring": _joined(job[o], other, np.asarray(cat_names, object), ";"),
        "n_evidence": np.bincount(job)[job[root]],
        "n_signals": np.bincount(job, weights=ep["count"].to_numpy())[job[root]].astype(np.int64),
    }, index=job[root])


def _obj_of(sig: pd.DataFrame, col: str, rows: Any) -> np.ndarray:
    """Values of ``sig[col]`` at integer ``rows``, as objects (``None`` for missing)."""
    return sig[col].iloc[np.asarray(rows)].to_numpy(dtype=object, na_value=None)


def _assemble(jobs: pd.DataFrame, all_jobs: pd.DataFrame, ep: pd.DataFrame, sig: pd.DataFrame,
              rules: Rules, kinds: np.ndarray) -> pd.DataFrame:
    info = _summaries(ep, sig, rules).reindex(range(len(jobs)))
    pos = info["pos"].fillna(-1).to_numpy(dtype=np.int64)
    tax = taxonomy_columns(rules, pos)

    def col(name: str) -> pd.Series:
        return pd.Series(info[name].to_numpy(dtype=object), dtype="string")

    labels = np.append([f"rule:{r}" for r in rules.table["id"].to_numpy(dtype=object)], NO_EVIDENCE)
    labels = labels.astype(object)  # position -1 (no evidence): the last label
    return pd.DataFrame({
        "time": pd.to_datetime(jobs["end"], utc=True, cache=False).dt.as_unit("ns"),
        "job_id": jobs["job_id"],  # as text in _counted: only the counted rows
        "hosts": col("hosts"), "gpu": col("gpu"),
        "planned": tax["planned"], "category": tax["category"], "component": tax["component"],
        "root_signal": col("root_signal"), "evidence": col("evidence"),
        "attribution": pd.array(labels[pos], dtype="string"),  # one shared str per rule
        "evidence_kind": pd.array(kinds, dtype="string"),
        "job_state": jobs["_state"].astype("string"),
        "downtime_h": np.nan, "lost_gpu_hours": np.nan,  # costs: a models step after attribution
        "co_occurring": col("co_occurring"),
        "n_evidence": info["n_evidence"].fillna(0).to_numpy(dtype=np.int64),
        "n_signals": info["n_signals"].fillna(0).to_numpy(dtype=np.int64),
    })


def _text(values: pd.Series) -> pd.Series:
    """``values`` as strings: a string column as it is (1M Arrow strings are not turned into
    1M Python ones), anything else converted."""
    return values if isinstance(values.dtype, pd.StringDtype) else values.astype("string")


def _outcomes_frame(ended: pd.DataFrame, outcome: np.ndarray, reason: np.ndarray,
                    need: np.ndarray, kinds: np.ndarray) -> pd.DataFrame:
    kind = np.full(len(ended), None, dtype=object)
    kind[need] = kinds
    raw = ended["state_raw"] if "state_raw" in ended else ended["state"]
    return pd.DataFrame({
        "job_id": _text(ended["job_id"]),
        "name": _text(ended["name"] if "name" in ended else pd.Series(pd.NA, index=ended.index)),
        "state": _text(ended["_state"]), "state_raw": _text(raw),
        "end": pd.to_datetime(ended["end"], utc=True, cache=False), "outcome": _wrapped(outcome),
        "reason": _wrapped(reason), "evidence_kind": _wrapped(kind),
    }, copy=False)


def _wrapped(values: np.ndarray) -> pd.Series:
    """Text column around ``values`` (an object array of shared sentences) without a copy of it."""
    return pd.Series(values, dtype="string", copy=False)


def _counted(table: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    out = table[mask]
    out = out.assign(job_id=out["job_id"].astype("string"))
    out = out.sort_values(["time", "job_id"], kind="stable", ignore_index=True)
    return validate(out, "interruptions")


def job_outcomes(
    signals: pd.DataFrame,
    jobs: pd.DataFrame,
    *,
    policy: Policy | None = "fleet",
    job_name: str | Sequence[str] | None = None,
    rules: Rules | str | os.PathLike[str] | None = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: JobFilter = None,
    storm_gap: str | pd.Timedelta = "2min",
    sources: Iterable[str] | None = None,
) -> JobOutcomes:
    """Decide, for every ended job, whether it is an interruption, and attribute its cause.

    Parameters
    ----------
    signals : pandas.DataFrame
        Schema ``signals``; classified here with ``rules``.
    jobs : pandas.DataFrame
        Schema ``jobs`` (Slurm allocations); an allocation counts once it has ended (a known
        ``end`` and a state other than RUNNING, PENDING, ...).
    policy : {"fleet", "training-run"} or None
        What counts as an interruption (``None``: ``fleet``).  ``fleet`` (Kokolis et al.,
        HPCA 2025): NODE_FAIL or BOOT_FAIL, or FAILED/REQUEUED with infrastructure evidence
        in the window; FAILED without it is a user or application failure, kept apart in
        ``user_failures``; CANCELLED, TIMEOUT, DEADLINE, OUT_OF_MEMORY, PREEMPTED and
        COMPLETED are not interruptions.  ``training-run`` (Llama 3, arXiv 2407.21783
        §3.3.4): every end of the training run other than COMPLETED, planned or not as the
        taxonomy says.  The reasons for each state are in :mod:`reliab.taxonomy._policy`.
    job_name : str or list of str, optional
        The training run (``training-run`` only): its allocations are those with this job
        name (or one of these names) plus every record sharing their job ids (requeued
        runs keep the job id).  Default: the job name with the most GPU-hours.
    rules, before, after, storm_gap
        Taxonomy rules and attribution, as for :func:`attribute`.
    job_filter : callable or dict, optional
        Keeps a subset of the counted jobs, as for :func:`attribute`.
    sources : iterable of str, optional
        Parser names of every file read, for the coverage notes (an empty SEL still counts
        as handed over); default: the sources of the signals.

    Returns
    -------
    JobOutcomes
        ``interruptions`` and ``user_failures`` (schema ``interruptions`` with
        ``evidence_kind``: hardware, other, nccl or none), one ``outcomes`` row per ended
        allocation, the policy sentence in ``method`` and counts plus evidence-coverage
        warnings in ``notes``.
        The costs (``downtime_h``, ``lost_gpu_hours``) are left NaN: :func:`reliab.job_outcomes`
        fills them after attribution.

    Raises
    ------
    ValueError
        An unknown ``policy``, ``job_name`` with the fleet policy, a bad window, missing
        columns, or a malformed nodelist (naming the job).

    References
    ----------
    Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
    Clusters", HPCA 2025 (arXiv 2410.21680), §III.  Llama Team, "The Llama 3 Herd of
    Models", arXiv 2407.21783, §3.3.4.  ``sacct(1)``, Slurm 25.11, JOB STATE CODES.
    """
    rules, policy = as_rules(rules), check_policy(policy)
    before_ns, after_ns = _delta(before, "before"), _delta(after, "after")
    gap_ns = _delta(storm_gap, "storm_gap")
    if job_name is not None and policy != "training-run":
        raise ValueError(f"job_name={job_name!r} applies to policy='training-run', not {policy!r}")
    missing = set(SIGNAL_COLUMNS) - set(signals.columns)
    if missing:
        raise ValueError(f"signals lacks column(s) {sorted(missing)} (schema 'signals')")
    ended, ended_rows, not_ended, no_end = _ended(jobs)
    states = _shared_objects(ended["_state"])
    run, how = None, ""
    in_run = np.ones(len(ended), dtype=bool)
    if policy == "training-run":
        run_rows, run, how = select_run(jobs, job_name)
        in_run = run_rows[ended_rows] if len(jobs) else in_run
    pending = pending_cancels(ended, ended["_state"])
    need = needs_evidence(policy, states, in_run, pending)
    cand = _rows(jobs, ended_rows[need], list(jobs.columns))
    cand["_state"] = ended["_state"].array[need]
    sig = with_job_states(relevant_signals(signals, cand, before_ns, after_ns), cand)
    pairs = candidate_pairs(sig, cand, rules, before_ns, after_ns)
    episodes = collapse_storms(escalate_app_xids(pairs, sig, rules), gap_ns)
    kinds, infra = evidence_kinds(len(cand), episodes["job"].to_numpy(),
                                  episodes["rule_pos"].to_numpy(), rules.table)
    table = _assemble(cand, jobs, episodes, sig, rules, kinds)
    keep = _filter_mask(cand, job_filter)
    # the candidates' rows, signals and evidence are in ``table`` now: freed before the
    # outcomes are built, which reuse their memory (1M jobs: the attribution ends ~30 MiB lower)
    del cand, sig, pairs, episodes
    has_infra = np.zeros(len(ended), dtype=bool)
    has_infra[need] = infra
    outcome, reason = decide(policy, states, in_run, has_infra, pending)
    del states, has_infra
    counted = outcome[need] == INTERRUPTION
    interruptions = _counted(table, counted & keep)
    frame = _outcomes_frame(ended, outcome, reason, need, kinds)
    notes = policy_notes(frame, policy, run, how, not_ended, no_end, len(interruptions))
    notes += coverage_notes(interruptions, signals, jobs, sources=sources)
    return JobOutcomes(interruptions=interruptions,
                       user_failures=_counted(table, (outcome[need] == USER_FAILURE) & keep),
                       outcomes=frame, policy=policy, run=run, n=len(ended),
                       method=describe(policy, run), notes=notes)


def attribute(
    signals: pd.DataFrame,
    jobs: pd.DataFrame,
    *,
    policy: Policy | None = "fleet",
    job_name: str | Sequence[str] | None = None,
    rules: Rules | str | os.PathLike[str] | None = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: JobFilter = None,
    storm_gap: str | pd.Timedelta = "2min",
) -> pd.DataFrame:
    """One row per job interruption with its root cause and evidence.

    Parameters
    ----------
    signals : pandas.DataFrame
        Schema ``signals`` (time, host, gpu, job_id, source, signal, severity, message,
        origin); classified here with ``rules``.
    jobs : pandas.DataFrame
        Schema ``jobs``; which ended allocations are interruptions is the ``policy``'s
        decision; the interruption time is the job's end.
    policy : {"fleet", "training-run"} or None
        ``fleet`` (default; Kokolis et al., HPCA 2025): NODE_FAIL or BOOT_FAIL, or FAILED /
        REQUEUED with infrastructure evidence in the window; ``training-run`` (Llama 3):
        every end of the named run other than COMPLETED.  See :func:`job_outcomes`, which
        also returns the user failures the fleet view sets apart and the notes.
    job_name : str, optional
        The training run, for ``policy="training-run"`` (default: the job name with the
        most GPU-hours); records sharing its job ids (requeues) belong to it.
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
        Schema ``interruptions`` sorted by time, with ``evidence_kind`` (hardware: some
        evidence names a GPU, host, network or host-maintenance cause; other: only software,
        dependency, operator or scheduler evidence; nccl: only NCCL evidence; none), plus
        ``co_occurring`` (other categories among the evidence, ';'-joined; the RSC
        co-occurrence analysis), ``n_evidence`` (episodes) and ``n_signals`` (signals
        before storm collapse).

    Notes
    -----
    Evidence of a job: signals whose rule has ``root_cause`` true, inside the window, and
    naming the job (``job_id``), or on one of its hosts (Slurm ``nodelist`` plus
    ``failed_node``), or with neither host nor job (cluster-wide); a Slurm end state
    (``slurm:*``) is evidence only for its own job.  Tickets naming the job by ``job_id``
    count whatever their time. The root cause is the evidence with the highest rule
    priority, ties broken by the earliest time, then rule order; ``planned``, category and
    component come from its rule. No evidence gives ``Unclassified``/``Unknown`` and
    attribution ``no evidence``. A job without a ``slurm:*`` signal gets one from its end
    state, so ``CANCELLED by 0`` (root) reaches the ``slurm-cancelled-admin`` rule
    (Planned), and a time limit or a preemption their planned rules.

    Application Xids 13, 31 and 43 (NVIDIA Xid catalog: RESTART_APP) count as software,
    unless the same GPU (host and gpu) shows them in at least two different assessed
    jobs; then all those occurrences are re-keyed ``xid_repeat:<code>`` and classified by
    rule ``xid-app-repeat`` (Faulty GPU).

    Attribution names the cause and the evidence only: ``downtime_h`` and
    ``lost_gpu_hours`` are NaN here.  :func:`reliab.attribute` (and the ingest pipeline)
    fills them after attribution, with ``restart_h``, ``lost_work_h`` and ``cost_basis``.
    """
    return job_outcomes(signals, jobs, policy=policy, job_name=job_name, rules=rules,
                        before=before, after=after, job_filter=job_filter,
                        storm_gap=storm_gap).interruptions


__all__ = ["attribute", "job_outcomes", "NO_EVIDENCE"]
