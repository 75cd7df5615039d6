"""Known-truth recovery of the environment models over seeded simulations (run on demand).

Each replication draws a whole fleet with :func:`reliab.simulate_environment` (its own seed;
temperature-driven HBM3 and thermal-interface failures with a true IRR of 1.08 per °C, a
diurnal throughput amplitude of 1.5 %) and measures:

* whether the 95 % Wald interval of the temperature IRR (Poisson GLM with log-exposure
  offset, fitted on covariate cells — identical to the row fit) covers 1.08; the share over
  replications should be 93–97 %, given with its Clopper–Pearson interval;
* the diurnal amplitude of cluster throughput (STL + day-block bootstrap): its error against
  the truth and whether its interval covers the truth of the hourly grid
  (1.5 % × sin(π/24)/(π/24)).

``python benchmarks/bench_environment_coverage.py [reps] [n_nodes] [days] [rate_scale]``
(default 400 replications of 512 nodes × 21 days at 20 × the Llama 3 rates, about 150
failures each).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy import stats

from reliab import diurnal_amplitude, fit_failure_glm, simulate_environment

IRR, AMP = 1.08, 1.5


def main(argv: list[str] | None = None) -> dict:
    """Run the replications; print the figures and return them as a JSON-safe dict.

    ``argv``: ``[reps] [n_nodes] [days] [rate_scale]`` (defaults 400, 512, 21, 20).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    reps = int(args[0]) if args else 400
    n_nodes = int(args[1]) if len(args) > 1 else 512
    days = float(args[2]) if len(args) > 2 else 21.0
    rate_scale = float(args[3]) if len(args) > 3 else 20.0
    hits, events, amp_err, amp_cov = 0, [], [], 0
    hourly_truth = AMP * np.sin(np.pi / 24) / (np.pi / 24)
    start = time.perf_counter()
    for seed in range(reps):
        env = simulate_environment(n_nodes=n_nodes, days=days, rate_scale=rate_scale,
                                   temperature_irr=IRR, diurnal_amplitude_pct=AMP, seed=seed)
        row = fit_failure_glm(env.windows, ["temp_c_mean"], cells=True).irr("temp_c_mean")
        hits += row["irr_low"] <= IRR <= row["irr_high"]
        events.append(int(env.windows["failures"].sum()))
        c = env.cluster.set_index("time")
        d = diurnal_amplitude(c["throughput_tokens_per_s"].where(lambda s: s > 0), n_boot=200,
                              seed=seed)
        amp_err.append(d.amplitude_pct - AMP)
        amp_cov += d.amplitude_low <= hourly_truth <= d.amplitude_high
    secs = time.perf_counter() - start
    lo, hi = stats.binomtest(hits, reps).proportion_ci(0.95)
    err = np.abs(amp_err)
    out = {"replications": reps, "n_nodes": n_nodes, "days": days, "rate_scale": rate_scale,
           "failures_median": float(np.median(events)), "failures_min": int(min(events)),
           "failures_max": int(max(events)), "irr_truth": IRR, "irr_coverage": float(hits / reps),
           "irr_coverage_low": float(lo), "irr_coverage_high": float(hi),
           "irr_coverage_target": [0.93, 0.97], "amplitude_truth_pct": AMP,
           "amplitude_max_abs_error_pp": float(err.max()),
           "amplitude_mean_error_pp": float(np.mean(amp_err)),
           "amplitude_within_0_2_pp": float(np.mean(err <= 0.2)),
           "amplitude_interval_coverage": float(amp_cov / reps), "seconds": secs}
    print(f"{reps} replications of {n_nodes} nodes x {days:g} days (rate x{rate_scale:g}); "
          f"failures per replication: median {int(np.median(events))}, "
          f"range {min(events)}-{max(events)}")
    print(f"  temperature IRR {IRR}: 95% Wald interval covers in {hits / reps:.3f} "
          f"(Clopper-Pearson 95% CI {lo:.3f}-{hi:.3f}); target 0.93-0.97")
    print(f"  diurnal amplitude {AMP}%: max |error| {err.max():.3f} pp, mean error "
          f"{np.mean(amp_err):+.4f} pp, within ±0.2 pp in {np.mean(err <= 0.2):.3f}; "
          f"interval covers the hourly truth in {amp_cov / reps:.3f}")
    print(f"  {secs:.0f} s ({secs / reps:.2f} s per replication)")
    return out


if __name__ == "__main__":
    main()
