"""What counts as an interruption: the ``fleet`` and ``training-run`` policies.

``fleet`` (the default: what the user of a shared cluster expects) follows Kokolis et al.,
"Revisiting Reliability in Large-Scale Machine Learning Research Clusters" (HPCA 2025,
arXiv 2410.21680, §III): a job interruption is a job that ended ``NODE_FAIL``, or ``FAILED``
with infrastructure evidence detected within 10 minutes before to 5 minutes after its end.
A ``FAILED`` job without such evidence is a user or application failure, counted apart.
``CANCELLED`` (also ``CANCELLED by <uid>``), ``TIMEOUT``, ``OUT_OF_MEMORY`` and ``COMPLETED``
are not interruptions.  The Slurm states the paper leaves open are decided here, from their
meaning in ``sacct(1)`` (JOB STATE CODES, Slurm 25.11):

* ``BOOT_FAIL`` — "launch failure, typically due to a hardware failure (e.g. unable to boot
  the node ...)": an interruption, like ``NODE_FAIL``.
* ``REQUEUED`` — "Job was requeued": the scheduler or an operator ended this run of the job
  (the job id lives on, ``sacct --duplicates`` shows each run).  Counted like ``FAILED``
  when infrastructure evidence lies in the window, otherwise not an interruption.
* ``PREEMPTED`` — "terminated due to preemption": a scheduling decision, not a failure (the
  RSC study counts preemptions apart from failures, as lost goodput of the preempted jobs).
* ``DEADLINE`` — "terminated on deadline": the end its owner asked for, like ``TIMEOUT``.
* An end state this module does not know is counted only with infrastructure evidence.

``training-run`` follows the Llama 3 report (arXiv 2407.21783, §3.3.4): every end of one
training run that is not ``COMPLETED`` is an interruption, planned or not as the taxonomy
decides (``CANCELLED by 0``, planned-maintenance tickets, a time limit or a preemption are
planned; everything else is unexpected).  The run is the allocations named ``job_name``
(the automation resubmits a run under the same name after each interruption) plus every
other record of their job ids (Slurm keeps the job id when it requeues a job; sacct
``--duplicates`` lists each run, with its own SLUID).

Infrastructure evidence is root-cause evidence whose taxonomy rule has a hardware component
(GPU, Host, Network, Unplanned Maintenance), names an external dependency (category
``Dependency``: storage, file system, scheduler outages) or an operator action (a planned
rule), or the scheduler setting one of the job's nodes DOWN or FAIL (``sacctmgr show
event``: Slurm takes a node out when it stops responding or fails its health check, the
node-level detection the RSC study relies on).  Application errors (category ``Software Bug``: Xid 13/31/43, CUDA errors, Python
exceptions) and NCCL watchdog timeouts alone are not: the RSC health checks that attribute
failures look at the node (GPU, NVLink, ECC, PCIe, InfiniBand, mounts), not at the job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal

import numpy as np
import pandas as pd

Policy = Literal["fleet", "training-run"]
POLICIES: tuple[str, ...] = ("fleet", "training-run")
DEFAULT_POLICY: Policy = "fleet"

#: outcome of an ended allocation
INTERRUPTION, USER_FAILURE, NOT_INTERRUPTION, OUTSIDE_RUN = (
    "interruption", "user_failure", "not_interruption", "outside_run")

#: evidence kinds of an interruption, strongest first (column ``evidence_kind``)
EVIDENCE_KINDS: tuple[str, ...] = ("hardware", "other", "nccl", "none")
HARDWARE_COMPONENTS = frozenset({"GPU", "Host", "Network", "Unplanned Maintenance"})
NCCL_CATEGORIES = frozenset({"NCCL Watchdog Timeouts"})
SERVICE_CATEGORIES = frozenset({"Dependency"})
#: rules that are infrastructure evidence without a hardware component: the scheduler's
#: own verdict that a node failed (the cause is unknown, the node is not the job's fault)
INFRA_RULES = frozenset({"slurm-node-down"})

#: allocation states that have not ended (sacct -T gives them an End): never counted
NOT_ENDED = frozenset({"RUNNING", "PENDING", "SUSPENDED", "RESIZING", "REQUEUE_HOLD",
                       "REQUEUE_FED", "CONFIGURING", "COMPLETING", "SIGNALING", "STAGE_OUT",
                       "STOPPED", "RESV_DEL_HOLD"})

#: fleet view: Slurm end state -> (rule, reason); rule is always, evidence or never
FLEET_STATES: Mapping[str, tuple[str, str]] = MappingProxyType({
    "NODE_FAIL": ("always", "a node of the allocation failed"),
    "BOOT_FAIL": ("always", "launch failure, typically hardware (sacct(1))"),
    "FAILED": ("evidence", "FAILED"),
    "REQUEUED": ("evidence", "requeued by the scheduler or an operator"),
    "COMPLETED": ("never", "completed"),
    "CANCELLED": ("never", "cancelled by a user or an administrator"),
    "TIMEOUT": ("never", "reached its time limit"),
    "DEADLINE": ("never", "reached its deadline"),
    "OUT_OF_MEMORY": ("never", "ran out of the memory it requested"),
    "PREEMPTED": ("never", "preempted by the scheduler"),
})


def check_policy(policy: str | None) -> Policy:
    """``policy`` validated (``None`` is the default, ``fleet``; ``training_run`` is accepted)."""
    if policy is None:
        return DEFAULT_POLICY
    name = policy.strip().lower().replace("_", "-") if isinstance(policy, str) else policy
    if name not in POLICIES:
        raise ValueError(f"policy={policy!r} is not one of {', '.join(map(repr, POLICIES))}")
    return name  # type: ignore[return-value]


def end_states(jobs: pd.DataFrame) -> pd.Series:
    """Normalized end state per job (``'CANCELLED by 0'`` -> ``CANCELLED``), NA if absent."""
    state = jobs["state"] if "state" in jobs else pd.Series(pd.NA, index=jobs.index)
    # a few distinct states: map them once (no Python string per job; NA has code -1)
    codes, uniques = pd.factorize(state)
    norm = pd.Series(uniques, dtype="string").str.strip().str.split().str[0].str.upper().str.rstrip("+")
    return pd.Series(norm.array.take(codes, allow_fill=True), index=jobs.index)


def ended_mask(jobs: pd.DataFrame, state: pd.Series) -> np.ndarray:
    """Allocations that ended: a known End and a state that is not still running."""
    has_end = jobs["end"].notna().to_numpy(dtype=bool) if "end" in jobs else np.zeros(len(jobs), bool)
    running = state.isin(NOT_ENDED).fillna(False).to_numpy(dtype=bool)
    return has_end & ~running & state.notna().to_numpy(dtype=bool)


# ---------------------------------------------------------------- evidence domains
def rule_kinds(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per rule (match order): evidence kind (hardware, nccl, other) and infrastructure flag."""
    comp = table["component"].astype(str).to_numpy()
    cat = table["category"].astype(str).to_numpy()
    hardware = np.isin(comp, list(HARDWARE_COMPONENTS))
    nccl = np.isin(cat, list(NCCL_CATEGORIES)) & ~hardware
    kind = np.where(hardware, "hardware", np.where(nccl, "nccl", "other")).astype(object)
    infra = hardware | np.isin(cat, list(SERVICE_CATEGORIES)) | table["planned"].to_numpy(dtype=bool)
    if "id" in table:
        infra |= np.isin(table["id"].astype(str).to_numpy(), list(INFRA_RULES))
    return kind, infra


def evidence_kinds(n_jobs: int, job: np.ndarray, rule_pos: np.ndarray,
                   table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per job: strongest evidence kind among its episodes and whether any is infrastructure."""
    kind, infra = rule_kinds(table)
    rank = {k: i for i, k in enumerate(EVIDENCE_KINDS)}
    best = np.full(n_jobs, rank["none"], dtype=np.int64)
    has_infra = np.zeros(n_jobs, dtype=bool)
    if len(job):
        r = np.array([rank[k] for k in kind], dtype=np.int64)[rule_pos]
        np.minimum.at(best, job, r)
        np.logical_or.at(has_infra, job, infra[rule_pos])
    return np.asarray(EVIDENCE_KINDS, dtype=object)[best], has_infra


# ---------------------------------------------------------------- the training run
def _gpu_hours(jobs: pd.DataFrame) -> np.ndarray:
    start = pd.to_datetime(jobs["start"], utc=True) if "start" in jobs else None
    end = pd.to_datetime(jobs["end"], utc=True) if "end" in jobs else None
    if start is None or end is None:
        hours = np.zeros(len(jobs))
    else:
        hours = ((end - start).dt.total_seconds() / 3600.0).fillna(0.0).clip(lower=0).to_numpy(float)
    width = np.ones(len(jobs))
    for col in ("nnodes", "ngpus"):  # GPUs when known, else nodes, else 1
        if col in jobs:
            w = pd.to_numeric(jobs[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            width = np.where(np.isfinite(w) & (w > 0), w, width)
    return hours * width


def select_run(jobs: pd.DataFrame,
               job_name: str | Sequence[str] | None) -> tuple[np.ndarray, str, str]:
    """Rows of the training run, its label and how it was chosen.

    The run is the rows named ``job_name`` (one name, or several for a run resubmitted
    under changing names) plus every row that shares a job id with them (a requeued job
    keeps its id).  Without ``job_name`` it is the name with the most
    GPU-hours (GPUs × (End − Start), nodes or allocations where GPUs are unknown); when no
    row has a name, the job id with the most GPU-hours, with its requeued runs.
    """
    ids = jobs["job_id"].astype("string")
    names = jobs["name"].astype("string") if "name" in jobs else pd.Series(pd.NA, index=jobs.index,
                                                                           dtype="string")
    if job_name is not None:
        wanted = [job_name] if isinstance(job_name, str) else list(job_name)
        if not wanted or not all(isinstance(n, str) and n for n in wanted):
            raise ValueError(f"job_name={job_name!r} must be a job name or a list of job names")
        named = names.isin(wanted).fillna(False).to_numpy(dtype=bool)
        if len(jobs) and not named.any():
            present = names.dropna().value_counts()
            listed = ", ".join(repr(n) for n in present.index[:10]) or "none (no job record has a name)"
            more = f" and {len(present) - 10:,} more" if len(present) > 10 else ""
            raise ValueError(f"job_name={job_name!r} matches no job; the job names present (most jobs"
                             f" first): {listed}{more}")
        how = f"job_name={job_name!r}"
        label = ", ".join(wanted)
    elif names.notna().any():
        weight = pd.Series(_gpu_hours(jobs), index=jobs.index).groupby(names).sum()
        label = str(sorted(weight[weight == weight.max()].index)[0])
        named = (names == label).fillna(False).to_numpy(dtype=bool)
        how = "the job name with the most GPU-hours; pass job_name= to choose another"
    elif len(jobs):
        weight = pd.Series(_gpu_hours(jobs), index=jobs.index).groupby(ids).sum()
        label = str(sorted(weight[weight == weight.max()].index)[0])
        named = (ids == label).fillna(False).to_numpy(dtype=bool)
        how = "no job has a name: the job id with the most GPU-hours, with its requeued runs"
    else:
        return np.zeros(0, dtype=bool), "", "no Slurm job records"
    chain = ids.isin(set(ids[named].dropna())).fillna(False).to_numpy(dtype=bool)
    return named | chain, label, how


# ---------------------------------------------------------------- decisions
def pending_cancels(jobs: pd.DataFrame, state: pd.Series) -> np.ndarray:
    """CANCELLED allocations that never started (sacct Start ``None``): nothing was interrupted.

    Only decided when the capture has start times at all (a capture without Start says
    nothing about which jobs ran).
    """
    if "start" not in jobs or not jobs["start"].notna().any():
        return np.zeros(len(jobs), dtype=bool)
    return (jobs["start"].isna().to_numpy(dtype=bool)
            & state.eq("CANCELLED").fillna(False).to_numpy(dtype=bool))


def decide(policy: Policy, state: np.ndarray, in_run: np.ndarray, infra: np.ndarray,
           pending: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Outcome and reason per ended allocation.

    ``state`` are normalized end states, ``in_run`` marks the training run (all True in
    the fleet view), ``infra`` says whether infrastructure evidence lies in the window and
    ``pending`` marks jobs cancelled before they started.
    """
    # a few distinct states: each sentence is built once and shared by its rows (1M jobs: no
    # million strings)
    codes, uniques = pd.factorize(np.asarray(state, dtype=object), use_na_sentinel=False)
    names = [str(u) for u in uniques]

    def per_state(texts: list[str]) -> np.ndarray:
        return np.asarray(texts, dtype=object)[codes] if len(names) else np.zeros(0, dtype=object)

    def is_state(name: str) -> np.ndarray:
        return np.asarray([n == name for n in names], dtype=bool)[codes] if len(names) else np.zeros(0, bool)

    outcome = np.empty(len(codes), dtype=object)
    outcome.fill(NOT_INTERRUPTION)  # one shared str (numpy.full copies a str fill value per element)
    if policy == "training-run":
        pend = (np.zeros(len(codes), dtype=bool) if pending is None else pending) & in_run
        done = (is_state("COMPLETED") & in_run) | pend
        reason = per_state([f"{n}: an end of the training run" for n in names])
        outcome[in_run & ~done] = INTERRUPTION
        reason[done] = "COMPLETED: the run's allocation finished"
        reason[pend] = "CANCELLED while pending: the run was not interrupted"
        reason[~in_run] = "not part of the training run"
        outcome[~in_run] = OUTSIDE_RUN
        return outcome, reason
    rules = [FLEET_STATES.get(n, ("evidence", f"end state {n} has no fleet rule")) for n in names]
    rule = per_state([r[0] for r in rules])
    reason = per_state([f"{n}: {r[1]}" for n, r in zip(names, rules, strict=True)])
    always, gated = rule == "always", rule == "evidence"
    outcome[always | (gated & infra)] = INTERRUPTION
    with_infra = gated & infra
    reason[with_infra] = per_state([f"{n} with infrastructure evidence in the window" for n in names])[with_infra]
    user = gated & ~infra & is_state("FAILED")
    outcome[user] = USER_FAILURE
    reason[user] = "FAILED without infrastructure evidence"
    other = gated & ~infra & ~user
    reason[other] = per_state([f"{n}: {r[1]} without infrastructure evidence"
                               for n, r in zip(names, rules, strict=True)])[other]
    return outcome, reason


def needs_evidence(policy: Policy, state: np.ndarray, in_run: np.ndarray,
                   pending: np.ndarray) -> np.ndarray:
    """Allocations whose evidence is looked up (the others' outcome is known from the state)."""
    if policy == "training-run":
        return in_run & (state != "COMPLETED") & ~pending
    codes, names = pd.factorize(np.asarray(state, dtype=object), use_na_sentinel=False)
    never = np.asarray([FLEET_STATES.get(str(s), ("evidence", ""))[0] == "never" for s in names], dtype=bool)
    return ~never[codes] if len(names) else np.ones(len(codes), dtype=bool)


def describe(policy: Policy, run: str | None = None) -> str:
    """One sentence stating the policy, for notes and the report's methods."""
    if policy == "training-run":
        who = f"the training run {run!r} and its requeue chain" if run else "the training run"
        return (f"Interruption policy 'training-run' (as Llama 3 counted, arXiv 2407.21783 "
                f"§3.3.4): every end of {who} other than COMPLETED is an interruption; "
                "planned ends (CANCELLED by root, planned maintenance, time limit, preemption) "
                "count as planned.")
    return ("Interruption policy 'fleet' (Meta RSC, Kokolis et al., HPCA 2025 §III): NODE_FAIL "
            "or BOOT_FAIL, or FAILED/REQUEUED with infrastructure evidence (hardware, "
            "dependency or operator) within the attribution window of the job's end; FAILED "
            "without it is a user or application failure, counted apart; CANCELLED, TIMEOUT, "
            "DEADLINE, OUT_OF_MEMORY, PREEMPTED and COMPLETED are not interruptions.")


__all__ = ["Policy", "POLICIES", "DEFAULT_POLICY", "FLEET_STATES", "EVIDENCE_KINDS",
           "INTERRUPTION", "USER_FAILURE", "NOT_INTERRUPTION", "OUTSIDE_RUN", "check_policy",
           "end_states", "ended_mask", "rule_kinds", "evidence_kinds", "select_run", "decide",
           "needs_evidence", "pending_cancels", "describe"]
