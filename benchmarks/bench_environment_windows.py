"""Speed of the telemetry reductions: host-hour windows and power-swing detection.

* ``telemetry_windows`` (clean → mergeable partials → finalize) on N GPU samples, beside the
  baseline of a plain pandas ``groupby(host, hour).agg(mean, max)`` on the same rows (which
  neither cleans nor reports, and cannot be merged across partitions);
* ``detect_power_swings`` on a 1e6-sample noisy power series with checkpoint steps, beside
  the baseline of thresholding ``np.diff`` (which finds one-sample jumps only and splits
  slower ramps).

``python benchmarks/bench_environment_windows.py [gpu_samples]`` (default 1e7).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import pandas as pd

from reliab import detect_power_swings, telemetry_windows


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def telemetry(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gpus = 8
    hosts = max(1, n // (gpus * 1440 * 7))
    per = n // (hosts * gpus)
    t = pd.Timestamp("2024-06-01", tz="UTC") + pd.to_timedelta(np.arange(per), unit="min")
    return pd.DataFrame({
        "time": np.tile(t, hosts * gpus),
        "host": np.repeat([f"node{h:05d}" for h in range(hosts)], per * gpus),
        "gpu": np.tile(np.repeat([str(g) for g in range(gpus)], per), hosts),
        "temp_c": np.round(rng.normal(60, 4, per * hosts * gpus), 1),
        "power_w": np.round(rng.normal(650, 40, per * hosts * gpus), 1)})


def power(n: int, seed: int = 1) -> pd.Series:
    rng = np.random.default_rng(seed)
    minute = np.arange(n) // 60
    level = np.where(minute % 30 == 29, 110.0, 690.0)  # a one-minute pause every 30 minutes
    x = level + rng.normal(0, 3, n)
    return pd.Series(x, index=pd.Timestamp("2024-06-01", tz="UTC")
                     + pd.to_timedelta(np.arange(n), unit="s"))


def main(argv: list[str] | None = None) -> dict:
    """Run both parts; print the figures and return them as a JSON-safe dict.

    ``argv``: ``[gpu_samples]`` (default 1e7).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    n = int(float(args[0])) if args else 10_000_000
    tel = telemetry(n)
    t_base, _ = timed(lambda: tel.groupby(["host", tel["time"].dt.floor("1h")])[["temp_c", "power_w"]]
                      .agg(["mean", "max"]))
    t_ours, w = timed(lambda: telemetry_windows(tel, thresholds={"temp_c": 65}))
    print(f"{len(tel):,} GPU samples -> {len(w):,} host-hours, median of 3:")
    print(f"  pandas groupby mean/max (baseline) {t_base:6.2f} s")
    print(f"  telemetry_windows (clean, partials, finalize) {t_ours:6.2f} s "
          f"({t_ours / t_base:.1f}x the baseline)")
    p = power(1_000_000)
    t_diff, jumps = timed(lambda: int((np.abs(np.diff(p.to_numpy())) >= 300).sum()))
    t_sw, sw = timed(lambda: detect_power_swings(p, min_step_w=300))
    print(f"1e6-sample power series (a pause every 30 min): {len(sw)} swings")
    print(f"  np.diff threshold (baseline)   {t_diff:6.3f} s ({jumps} jumps)")
    print(f"  detect_power_swings            {t_sw:6.2f} s ({t_sw / t_diff:.0f}x the baseline)")
    return {"gpu_samples": len(tel), "host_hours": len(w), "groupby_baseline_s": t_base,
            "telemetry_windows_s": t_ours, "windows_over_baseline": t_ours / t_base,
            "power_samples": len(p), "swings": len(sw), "diff_baseline_s": t_diff,
            "diff_jumps": jumps, "detect_power_swings_s": t_sw,
            "swings_over_baseline": t_sw / t_diff}


if __name__ == "__main__":
    main()
