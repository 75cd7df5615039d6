"""Speed and accuracy of the vectorised job simulator (reliab.simulate_job).

Run: ``python benchmarks/bench_jobs_simulate.py [--runs 10000] [--baseline-runs 200] [--repeat 3]``.

Prints, for a Llama-3-scale job (16,384 GPUs, 54 days, 3.79 failures per 1000 node-days,
30-min checkpoints, 1-min blocking writes, 15-min restarts; about 390 interruptions per run):

* the wall time of ``--runs`` runs with ``reliab.simulate_job`` (median of ``--repeat``);
* the same model simulated event by event in plain Python, the baseline, measured in the
  same process on ``--baseline-runs`` runs and scaled to ``--runs`` (runs are independent);
* both mean ETTRs beside the exact renewal expectation they must agree with.

It also prints the coverage of the simulator's 95 % interval of the mean ETTR over
repeated seeds (it should be near 0.95), and the gap between the simulator and Kokolis et
al.'s first-order closed form over the RSC study's settings.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import reliab
from reliab.models.jobs._failures import node_model
from reliab.models.jobs.ettr import first_order_ettr, renewal_ettr

GPUS, RATE = 16_384, 419 / (2048 * 54)
INTERVAL, WRITE, RESTART, HOURS = 29 / 60, 1 / 60, 0.25, 54 * 24.0


def python_loop(n_runs: int, seed: int) -> float:
    """Baseline: one run at a time, one interruption at a time."""
    rng = np.random.default_rng(seed)
    lam = GPUS / 8 * RATE / 24
    total = 0.0
    for _ in range(n_runs):
        wall = productive = 0.0
        while True:
            run = rng.exponential(1 / lam)
            if wall + run >= HOURS:
                left = HOURS - wall
                n = math.floor(left / (INTERVAL + WRITE))
                productive += left - n * WRITE - max(0.0, left - n * (INTERVAL + WRITE) - INTERVAL)
                break
            productive += math.floor(run / (INTERVAL + WRITE)) * INTERVAL
            wall += run + RESTART
            if wall >= HOURS:
                break
        total += productive / HOURS
    return total / n_runs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--baseline-runs", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    args_sim = {"n_gpus": GPUS, "node_failure_rate_per_day": RATE, "checkpoint_interval_h": INTERVAL,
                "checkpoint_write_h": WRITE, "restart_h": RESTART, "n_runs": args.runs}
    times, res = [], None
    for k in range(args.repeat):
        t0 = time.perf_counter()
        res = reliab.simulate_job(seed=k, **args_sim)
        times.append(time.perf_counter() - t0)
    base_t = []
    for k in range(args.repeat):
        t0 = time.perf_counter()
        base = python_loop(args.baseline_runs, k)
        base_t.append((time.perf_counter() - t0) * args.runs / args.baseline_runs)
    vec, loop = statistics.median(times), statistics.median(base_t)
    exact = renewal_ettr(node_model(GPUS, RATE), INTERVAL, WRITE, RESTART)
    print(f"simulate_job, {args.runs:,} runs x 54 days ({res.interruptions:.0f} interruptions/run): "
          f"{vec:.2f} s (median of {args.repeat})")
    print(f"baseline python event loop, scaled to {args.runs:,} runs: {loop:.1f} s  -> speed-up {loop / vec:.0f}x")
    print(f"mean ETTR: simulator {res.ettr:.4f} [{res.ettr_low:.4f}, {res.ettr_high:.4f}], "
          f"baseline {base:.4f} ({args.baseline_runs} runs), renewal expectation {exact:.4f}, "
          f"first-order {first_order_ettr(node_model(GPUS, RATE).rate_per_h, INTERVAL, WRITE, RESTART):.4f}")

    hits, reps = 0, 200
    for seed in range(reps):
        r = reliab.simulate_job(seed=1000 + seed, **(args_sim | {"n_runs": 300}))
        hits += r.ettr_low <= exact <= r.ettr_high
    print(f"coverage of the 95% interval of the mean ETTR (300 runs each): {hits / reps:.3f} over {reps} seeds")

    worst = 0.0
    for mttf_days in (0.2, 0.3, 1.0):
        nodes = round(1 / (mttf_days * 6.5e-3))
        for interval in (10, 30, 60):
            for restart in (5, 20):
                model = node_model(8 * nodes, 6.5e-3)
                gap = renewal_ettr(model, interval / 60, 0.0, restart / 60) - first_order_ettr(
                    model.rate_per_h, interval / 60, 0.0, restart / 60)
                worst = max(worst, abs(gap))
    print(f"largest |exact - first-order| ETTR at RSC-1, (N r)^-1 >= 0.2 day, interval <= 60 min, "
          f"restart <= 20 min: {100 * worst:.2f} pp")


if __name__ == "__main__":
    main()
