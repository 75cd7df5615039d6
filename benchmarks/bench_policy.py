"""Time of the interruption policies on a year of a shared cluster's jobs.

Run: ``python benchmarks/bench_policy.py [--jobs 200000] [--signals 300000] [--reps 3]``.

Jobs end with the RSC-1 state mix of Kokolis et al. (HPCA 2025, Fig. 3: 60 % COMPLETED,
24 % FAILED, 10 % PREEMPTED, 0.6 % TIMEOUT, 0.1 % NODE_FAIL; CANCELLED the rest) on 2,000
nodes over 330 days, with kernel/SEL/NCCL signals spread uniformly.  Prints the median time
of :func:`reliab.job_outcomes` under the fleet policy, beside a baseline measured in the same
run on the same data: attributing every job end that is not COMPLETED (what attribution did
before the policy existed, reproduced by one training run that holds every job).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

import reliab
from reliab.schema import conform

MIX = {"COMPLETED": 0.60, "FAILED": 0.24, "PREEMPTED": 0.10, "TIMEOUT": 0.006,
       "NODE_FAIL": 0.001, "CANCELLED": 0.053}
KEYS = np.array(["xid:79", "nccl:watchdog_timeout", "nic:link_down", "xid:45",
                 "sel:power_supply_ac_lost"])


def cluster(n_jobs: int, n_signals: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2024-01-01", tz="UTC")
    states = rng.choice(list(MIX), n_jobs, p=np.array(list(MIX.values())) / sum(MIX.values()))
    ends = t0 + pd.to_timedelta(np.sort(rng.uniform(0, 330 * 86400, n_jobs)), unit="s")
    jobs = conform(pd.DataFrame({
        "job_id": [str(i) for i in range(n_jobs)], "name": [f"j{i % 50}" for i in range(n_jobs)],
        "state": states, "state_raw": states, "start": ends - pd.Timedelta("1h"), "end": ends,
        "nnodes": 1, "ngpus": 8, "nodelist": [f"node{h:04d}" for h in rng.integers(1, 2000, n_jobs)],
        "origin": "bench"}), "jobs")
    signals = conform(pd.DataFrame({
        "time": t0 + pd.to_timedelta(rng.uniform(0, 330 * 86400, n_signals), unit="s"),
        "host": [f"node{h:04d}" for h in rng.integers(1, 2000, n_signals)], "gpu": None,
        "job_id": None, "source": "kernel", "signal": KEYS[rng.integers(0, len(KEYS), n_signals)],
        "severity": "error", "message": None,
        "origin": [f"k:{i}" for i in range(n_signals)]}), "signals")
    return jobs, signals


def median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=200_000)
    ap.add_argument("--signals", type=int, default=300_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    jobs, signals = cluster(args.jobs, args.signals, args.seed)
    one_run = jobs.assign(name="all")
    fleet = median_time(lambda: reliab.job_outcomes(signals, jobs), args.reps)
    base = median_time(lambda: reliab.job_outcomes(signals, one_run, policy="training-run"), args.reps)
    print(f"{args.jobs:,} jobs, {args.signals:,} signals, median of {args.reps}")
    print(f"fleet policy                      {fleet:8.2f} s")
    print(f"baseline: attribute every end     {base:8.2f} s   ratio {fleet / base:.2f}")


if __name__ == "__main__":
    main()
