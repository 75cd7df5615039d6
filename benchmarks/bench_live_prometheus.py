"""Telemetry rows per second read from a local Prometheus, beside the same rows read from CSV.

Run: ``python benchmarks/bench_live_prometheus.py [--hosts 8] [--repeat 3]``.

The history is the bundled sample's one-day GPU telemetry (``gpus_1min_*.csv``: 2 hosts x 8
GPUs at 1 min), copied onto ``--hosts`` host names.  It is written twice: as a CSV file
(``time,host,gpu,temp_c,power_w,sm_clock_mhz,util_gpu_pct``) and as dcgm-exporter series
backfilled into a Prometheus started on 127.0.0.1 (``tests/live_servers.py``).  Both are read
with ``reliab.ingest`` — the CSV by the ``telemetry_csv`` reader (the baseline), Prometheus
over ``/api/v1/query_range`` at a 60 s step — and the two tables are checked equal before
timing.  Each figure is the median of ``--repeat`` runs; the machine is shared, so compare the
ratio, not the absolute rates.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import reliab

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from live_servers import PROMETHEUS_BINARIES, PrometheusServer, missing, openmetrics  # noqa: E402

DCGM = {"temp_c": "DCGM_FI_DEV_GPU_TEMP", "power_w": "DCGM_FI_DEV_POWER_USAGE",
        "sm_clock_mhz": "DCGM_FI_DEV_SM_CLOCK", "util_gpu_pct": "DCGM_FI_DEV_GPU_UTIL"}


def history(hosts: int) -> pd.DataFrame:
    """The sample's GPU day, its two hosts copied onto ``hosts`` host names."""
    src = next((reliab.sample_path() / "telemetry").glob("gpus_1min_*.csv"))
    day = pd.read_csv(src, dtype={"gpu": str}).rename(columns={"util_pct": "util_gpu_pct"})
    names = sorted(day["host"].unique())
    copies = []
    for k in range(-(-hosts // len(names))):
        part = day.copy()
        part["host"] = part["host"].map({h: f"bench{k * len(names) + i:04d}" for i, h in enumerate(names)})
        copies.append(part)
    out = pd.concat(copies, ignore_index=True)
    return out[out["host"].isin(sorted(out["host"].unique())[:hosts])].reset_index(drop=True)


def as_openmetrics(frame: pd.DataFrame) -> list[str]:
    families: dict[str, list] = {m: [] for m in DCGM.values()}
    for (host, gpu), g in frame.groupby(["host", "gpu"], sort=True):
        t = (pd.to_datetime(g["time"], utc=True).astype("int64") // 10**9).to_numpy()
        for col, metric in DCGM.items():
            families[metric].append(({"gpu": gpu, "Hostname": host, "modelName": "NVIDIA H100 80GB HBM3"},
                                     t, g[col].to_numpy(dtype=float)))
    return openmetrics(families)


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    absent = missing(PROMETHEUS_BINARIES)
    if absent:
        sys.exit(f"needs {', '.join(absent)} (Debian: apt-get install prometheus)")
    frame = history(args.hosts)
    work = Path(tempfile.mkdtemp(prefix="reliab-bench-prom-"))
    csv = work / "gpus.csv"
    frame.to_csv(csv, index=False)
    server = PrometheusServer(work / "prometheus")
    server.root.mkdir()
    t0 = time.perf_counter()
    server.start(as_openmetrics(frame))
    backfill = time.perf_counter() - t0
    try:
        start, end = pd.to_datetime(frame["time"], utc=True).agg(["min", "max"])
        metrics = list(DCGM.values())
        t_csv, from_csv = timed(lambda: reliab.ingest(csv).telemetry, args.repeat)
        t_prom, from_prom = timed(lambda: reliab.ingest(server.url, start=start, end=end, step="60s",
                                                        metrics=metrics).telemetry, args.repeat)
        key = ["time", "host", "gpu"]
        a = from_prom.sort_values(key).reset_index(drop=True)
        b = from_csv[list(a.columns)].sort_values(key).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        rows = len(frame)
        print(f"rows: {rows:,} ({args.hosts} hosts x 8 GPUs x 1,440 min), {len(DCGM)} metrics; "
              f"backfill (promtool + start) {backfill:.1f} s; median of {args.repeat}; machine shared")
        print(f"CSV file (telemetry_csv, baseline)   {t_csv:7.3f} s  {rows / t_csv:12,.0f} rows/s")
        print(f"Prometheus query_range (60 s step)   {t_prom:7.3f} s  {rows / t_prom:12,.0f} rows/s"
              f"  ({t_prom / t_csv:.2f}x the CSV time)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
