"""Peak RSS of ``reliab.ingest`` on a sacct export, with ``output=`` and in memory, stage by stage.

Run: ``python benchmarks/bench_output_stages.py [--jobs 250000 500000 1000000] [--mode output memory]``
from outside the repository with ``PYTHONPATH=<checkout>`` (a child started in a checkout
imports that checkout).

The file is :func:`bench_hostile_memory.sacct_jobs` (``sacct -P`` rows written by a
generator).  Each run is a fresh interpreter that wraps the steps of the end of an ingest
(the ``output=`` session's ``close``: writing the held job files, gathering the signals for
attribution; :func:`reliab.io._driver.finish`'s removal of repeated jobs, attribution and
costs; the commit) and reports, per step, the RSS at its start, its peak (``VmHWM``, reset
through ``/proc/self/clear_refs`` at the step's start) and the RSS at its end, in MiB.
Figures of 2026-12-06 are in the ``sacct_1m_jobs_output`` notes of ``bench_hostile_memory.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hostile_memory import sacct_jobs  # noqa: E402

_CHILD = """
import functools, json, sys, time

def status():
    with open("/proc/self/status") as fh:
        return {l[:5]: int(l.split()[1]) / 1024 for l in fh if l.startswith(("VmHWM:", "VmRSS:"))}

stages, peak = [], [0.0]

def wrap(owner, name, label):
    fn = getattr(owner, name)
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        start = status()
        peak[0] = max(peak[0], start["VmHWM"])
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        try:
            return fn(*args, **kwargs)
        finally:
            end = status()
            peak[0] = max(peak[0], end["VmHWM"])
            stages.append((label, start["VmRSS"], end["VmHWM"], end["VmRSS"]))
    setattr(owner, name, inner)

import reliab
import reliab.models.jobs
import reliab.taxonomy
from reliab.io import _driver, _partitioned, _streamed
wrap(_streamed.OutputWriter, "jobs", "write the held job files")
wrap(_streamed.OutputWriter, "attribution_signals", "gather the attribution's signals")
wrap(_driver, "drop_repeated_jobs", "finish: repeated jobs")
wrap(reliab.taxonomy, "job_outcomes", "finish: attribution")
wrap(reliab.models.jobs, "with_costs", "finish: costs")
wrap(_partitioned, "commit", "commit")
started = time.perf_counter()
output = sys.argv[2] or None
result = reliab.ingest(sys.argv[1], source="sacct", output=output)
peak[0] = max(peak[0], status()["VmHWM"])
print(json.dumps({"peak": peak[0], "seconds": time.perf_counter() - started, "jobs": len(result.jobs),
                  "stages": stages}))
"""


def run(path: Path, output: Path | None) -> dict:
    """One ingest of ``path`` in a fresh interpreter: its peak RSS and stages."""
    if output is not None:
        shutil.rmtree(output, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), "" if output is None else str(output)],
                          capture_output=True, text=True, timeout=7200, check=False, cwd=path.parent)
    if proc.returncode != 0:
        raise AssertionError(f"ingest of {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", nargs="*", type=int, default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--mode", nargs="*", choices=["output", "memory"], default=["output", "memory"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.jobs:
            path = Path(tmp) / f"sacct{n}" / "sacct.txt"
            path.parent.mkdir()
            sacct_jobs(path, n)
            for mode in args.mode:
                got = run(path, Path(tmp) / f"out{n}" if mode == "output" else None)
                print(f"{n:>10,d} jobs, {mode:6s}: peak {got['peak']:6.0f} MiB, {got['seconds']:6.1f} s", flush=True)
                for label, start, high, end in got["stages"]:
                    print(f"    {label:34s} start {start:6.0f}  peak {high:6.0f} (+{high - start:4.0f})"
                          f"  end {end:6.0f}", flush=True)
            shutil.rmtree(path.parent)


if __name__ == "__main__":
    main()
