"""Other users' jobs on the spare nodes: the ordinary end states of a shared Slurm cluster.

A real ``sacct`` capture is mostly not the big training run: it holds evaluation, sweep and
debugging jobs that complete, fail in user code, are cancelled by their owner (``CANCELLED
by <uid>``, some before they ever started: Start ``None``, NodeList ``None assigned``), hit
their time limit, run out of memory or are preempted.  None of them has infrastructure
evidence in its attribution window, so the fleet policy (Kokolis et al., HPCA 2025) counts
none of them as an interruption and sets the FAILED ones apart as user failures, while the
training-run policy (Llama 3) leaves them out of the run.

Sources and assumptions: the end states are those of RSC-1 (60 % COMPLETED, 24 % FAILED,
10 % PREEMPTED, 0.6 % TIMEOUT, 0.1 % OUT_OF_MEMORY; Kokolis et al., "Revisiting Reliability
in Large-Scale Machine Learning Research Clusters", arXiv 2410.21680, Fig. 3, as read in a
summary of the paper, not in the figure itself), with the rare states over-represented so
that a 54-day sample shows each of them; job sizes (1-2 nodes), durations, queue waits, names
and users are assumptions of this generator; ``OUT_OF_MEMORY`` printing ExitCode ``0:125``
and a cancelled step ``0:15`` is also an assumption (not checked against Slurm's source).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.datasets._simulate import US_PER_H, US_PER_MIN, SimParams

#: end state -> probability among other users' jobs, assumed (RSC-1 order, rare states raised)
STATE_MIX: dict[str, float] = {"COMPLETED": 0.50, "FAILED": 0.22, "CANCELLED": 0.10,
                               "PREEMPTED": 0.07, "TIMEOUT": 0.07, "OUT_OF_MEMORY": 0.04}
#: (user, uid) of the cluster's other users (invented)
USERS: tuple[tuple[str, int], ...] = (("akumar", 31042), ("mchen", 30154), ("sgarcia", 28871),
                                      ("jdoe", 41203), ("lnguyen", 35520), ("rsilva", 29917))
NAMES = ("eval-mmlu", "sft-sweep", "tokenize-shards", "debug-nccl", "ablation-lr", "rm-train")
_EXIT = {"COMPLETED": "0:0", "FAILED": "1:0", "CANCELLED": "0:0", "PREEMPTED": "0:0",
         "TIMEOUT": "0:0", "OUT_OF_MEMORY": "0:125"}
_TIME_LIMITS_H = (4.0, 12.0, 24.0)
_QUIET_US = (31 * US_PER_MIN, 25 * US_PER_MIN)  # attribution window widened by 20 min
_RECENT_US = 3 * 24 * US_PER_H  # a node out of the training job for 3 days is a spare (assumed)


def _free_nodes(spans: list[tuple], n_total: int, t0: int, t1: int) -> np.ndarray:
    """Hosts that the training job neither used in [t0 - 3 days, t1] nor was using then."""
    busy = {n for n, a, b in spans if a <= t1 and b >= t0 - _RECENT_US}
    return np.array([n for n in range(n_total) if n not in busy], dtype=np.int64)


def _quiet(host_times: dict[int, np.ndarray], nodes: list[int], end: int) -> bool:
    """No evidence record on these hosts (or cluster-wide, key -1) near the job's end."""
    lo, hi = end - _QUIET_US[0], end + _QUIET_US[1]
    for key in (*nodes, -1):
        t = host_times.get(key)
        if t is not None and np.any((t >= lo) & (t <= hi)):
            return False
    return True


def _job_ids(train: pd.DataFrame, submits: np.ndarray) -> np.ndarray:
    """Slurm ids between those of the training allocations submitted before and after.

    Ids grow with submit time across all users; a job whose gap of free ids is used up
    gets -1 (not written).
    """
    ids = train["job_id"].astype(np.int64).to_numpy()
    subs = train["submit_us"].to_numpy()
    slot = np.searchsorted(subs, submits, side="right")
    out = np.full(len(submits), -1, dtype=np.int64)
    used: dict[int, int] = {}
    for i in np.argsort(submits, kind="stable"):
        k = int(slot[i])
        lo = ids[k - 1] if k > 0 else ids[0] - 1000
        hi = ids[k] if k < len(ids) else ids[-1] + 1000
        nxt = used.get(k, int(lo)) + 1
        if nxt < hi:
            out[i], used[k] = nxt, nxt
    return out


def build_other_jobs(params: SimParams, train: pd.DataFrame, spans: list[tuple], n_total: int,
                     host_times: dict[int, np.ndarray], rng: np.random.Generator) -> pd.DataFrame:
    """Other users' allocations on free nodes, with no evidence near their ends.

    Columns: ``job_id``, ``name``, ``user``, ``uid``, ``submit_us``, ``start_us`` (-1 when
    cancelled while pending), ``end_us``, ``state_raw``, ``state``, ``exit_code``, ``nodes``
    (tuple of node indices), ``limit_h``.
    """
    n = int(rng.poisson(params.other_jobs_per_day * params.days))
    states = list(STATE_MIX)
    p = np.array([STATE_MIX[s] for s in states])
    rows = []
    t_lo, t_hi = params.start_us + US_PER_H, params.start_us + params.window_us - 30 * US_PER_H
    for _ in range(n):
        state = states[int(rng.choice(len(states), p=p / p.sum()))]
        user, uid = USERS[int(rng.integers(len(USERS)))]
        limit_h = float(rng.choice(_TIME_LIMITS_H))
        hours = limit_h if state == "TIMEOUT" else min(limit_h * 0.95, float(rng.lognormal(0.5, 0.9)))
        submit = int(rng.integers(t_lo, t_hi))
        start = submit + int(rng.lognormal(np.log(5.0), 1.0) * US_PER_MIN)
        end = start + int(hours * US_PER_H)
        pending = state == "CANCELLED" and rng.random() < 0.3
        if pending:  # cancelled in the queue: never started, ends when cancelled
            start, end = -1, submit + int(rng.uniform(2, 90) * US_PER_MIN)
        free = _free_nodes(spans, n_total, start if start >= 0 else end, end)
        width = 1 + int(rng.random() < 0.3)
        if not pending and len(free) < width:
            continue
        nodes = () if pending else tuple(int(x) for x in np.sort(rng.choice(free, width, replace=False)))
        if not _quiet(host_times, list(nodes), end):
            continue
        raw = f"CANCELLED by {uid}" if state == "CANCELLED" else state
        rows.append((str(rng.choice(NAMES)), user, uid, submit, start, end, raw, state,
                     _EXIT[state], nodes, limit_h))
    cols = ["name", "user", "uid", "submit_us", "start_us", "end_us", "state_raw", "state",
            "exit_code", "nodes", "limit_h"]
    out = pd.DataFrame(rows, columns=cols)
    out.insert(0, "job_id", _job_ids(train, out["submit_us"].to_numpy()).astype(str))
    return out[out["job_id"] != "-1"].sort_values("job_id", key=lambda s: s.astype(np.int64),
                                                  kind="stable", ignore_index=True)


__all__ = ["build_other_jobs", "STATE_MIX", "USERS"]
