"""Folder ingest of many small files beside ``grep -r``: the bundled sample and a 20,000-file folder.

Run: ``python benchmarks/bench_ingest_folder.py [--files 20000] [--runs 3]`` or as part of
``python -m benchmarks``.

Per folder, in the same run: ``grep -r -c -F`` with the kernel reader's literal prefilter
(a child process: the bare cost of opening and scanning every file), ``reliab.ingest`` of
the folder in this process (local engine; discovery, sniffing, reading, validation and
attribution), and ``engine="dask"`` on a LocalCluster of 2 single-threaded workers (started
before timing).  Each value is the median of ``--runs`` runs after a warm-up.  The
20,000-file folder is :func:`reliab.write_fleet` with one host per syslog file (2,000 hosts,
10 days, no telemetry).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, median_child, median_time, table  # noqa: E402

SECTION = "folder ingest"


def many_files(files: int = 20_000) -> Path:
    """A folder of about ``files`` small syslog files (written once under benchmarks/_work)."""
    from reliab.datasets import write_fleet

    days = 10
    folder = WORK / f"folder-{files}"
    done = folder / "logs" / ".complete"
    if not done.exists():
        write_fleet(folder, n_gpus=8 * (files // days), days=days, hosts_per_pod=1, telemetry=False, seed=11)
        done.write_text("ok\n")
    return folder / "logs"


def _literals() -> list[str]:
    code = "from reliab.io.formats.kernel._kmsg import LITERALS; print('\\n'.join(x.decode() for x in LITERALS))"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()


def _one(label: str, folder: Path, runs: int, client: object) -> list[Figure]:
    import reliab

    n = sum(1 for p in folder.rglob("*") if p.is_file())
    grep = ["grep", "-r", "-c", "-F", *(x for lit in _literals() for x in ("-e", lit)), str(folder)]
    t_grep, _, _ = median_child(grep, runs)
    t_local = median_time(lambda: reliab.ingest(folder), runs)
    t_dask = median_time(lambda: reliab.ingest(folder, engine="dask", client=client), runs)
    return [Figure(SECTION, f"grep -r -c -F, {label} ({n:,} files)", t_grep, "s"),
            Figure(SECTION, f"ingest {label}, local engine", t_local, "s", "grep -r", t_grep,
                   note=f"{n / t_local:,.0f} files/s"),
            Figure(SECTION, f"ingest {label}, dask 2 workers", t_dask, "s", "local engine", t_local)]


def run(files: int = 20_000, runs: int = 3) -> list[Figure]:
    from dask.distributed import Client, LocalCluster

    import reliab

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        out = _one("bundled sample", reliab.sample_path(), runs, client)
        out += _one(f"{files:,}-file folder", many_files(files), runs, client)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(table(run(args.files, args.runs)))
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
