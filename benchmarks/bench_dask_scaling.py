"""Dask engine: 2 workers vs 1 on a 20M-line log set, and vs the local engine, in one run.

Run: ``python benchmarks/bench_dask_scaling.py [--lines 20000000] [--runs 3]`` (or as part
of ``python -m benchmarks``).

The log set is :func:`reliab.write_fleet`'s syslog and sacct files (no telemetry): one
central rsyslog file per pod of 256 hosts and day, ~130 bytes a line, about 5 % of the
lines holding a kernel prefilter literal.  Three timings of ``reliab.ingest`` on the same
folder, each the median of ``--runs`` calls after a warm-up (page cache warm): the local
engine in this process, and ``engine="dask"`` on a ``LocalCluster`` of 1 and of 2
single-threaded worker processes (cluster start-up not timed; the client's own work,
concatenation and attribution, is).  Target: 2 workers >= 1.6x one worker on a
2-core machine.  The load average is reported: other processes on a shared machine take
cores from the workers.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, median_time, table  # noqa: E402

SECTION = "dask"


def log_set(lines: int, seed: int = 5) -> Path:
    """A fleet log folder of about ``lines`` lines (written once under benchmarks/_work)."""
    from reliab.datasets import write_fleet

    folder = WORK / f"logset-{lines}-{seed}"
    done = folder / "logs" / ".complete"
    if not done.exists():
        hosts, days = 5000, 20
        write_fleet(folder, n_gpus=hosts * 8, days=days, noise_lines_per_node_day=lines / hosts / days,
                    telemetry=False, seed=seed)
        done.write_text("ok\n")
    return folder / "logs"


def run(lines: int = 20_000_000, runs: int = 3) -> list[Figure]:
    """Local engine, 1 worker, 2 workers on the same log set."""
    from dask.distributed import Client, LocalCluster

    import reliab

    folder = log_set(lines)
    n_lines = sum(1 for p in folder.rglob("*") if p.is_file() for _ in open(p, "rb"))
    local = median_time(lambda: reliab.ingest(folder), runs)
    times = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            times[workers] = median_time(lambda c=client: reliab.ingest(folder, engine="dask", client=c), runs)
    load = os.getloadavg()[0]
    speedup = times[1] / times[2]
    return [
        Figure(SECTION, f"local engine, {n_lines / 1e6:.1f}M lines", local, "s",
               note=f"{n_lines / local / 1e6:.2f} M lines/s"),
        Figure(SECTION, "dask, 1 worker", times[1], "s", "local engine", local),
        Figure(SECTION, "dask, 2 workers", times[2], "s", "local engine", local),
        Figure(SECTION, "speed-up 2 workers / 1 worker", speedup, "x", "1 worker", 1.0, ">= 1.6x", speedup >= 1.6,
               note=f"load average {load:.1f} on {os.cpu_count()} cores during the run"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(table(run(args.lines, args.runs)))


if __name__ == "__main__":
    main()
