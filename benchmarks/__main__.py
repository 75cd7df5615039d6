"""``python -m benchmarks``: every performance figure of the project, each beside its baseline.

Run from the repository root (reliab installed, e.g. ``pip install -e '.[test]'``)::

    python -m benchmarks                    # the suite (a few tens of minutes on 2 cores)
    python -m benchmarks --quick            # small inputs: checks the suite runs (minutes)
    python -m benchmarks --only kernel,dask # some sections
    python -m benchmarks --fleet            # also the 100,000-GPU, 90-day fleet end to end (long)
    python -m benchmarks --only fleet --fleet-gpus 16384 --fleet-days 30 --append
                                            # a smaller fleet, added to today's results file
    python -m benchmarks --extra            # also the other bench_*.py scripts, their output kept

It prints one table (figure, value, baseline measured in the same run, ratio, project target,
the previous run's value) and writes ``benchmarks/results/<date>.json`` with the
machine it ran on (CPU, cores, memory, load average, library versions).  Each section is a
``run()`` function of one of the ``bench_*.py`` scripts here, which also run on their own;
the kernel and folder scripts are called through their ``main(argv)`` when it takes
arguments (:func:`benchmarks._suite.from_script`).
The machine of a shared CI or laptop is noisy: read the ratios, and the load average.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _suite  # noqa: E402
from benchmarks._suite import Figure  # noqa: E402

#: scripts that are not sections of the table; ``--extra`` runs them and keeps their output
EXTRA = ("bench_jobs_simulate.py", "bench_policy.py", "bench_coverage_survival.py",
         "bench_coverage_recurrent.py", "bench_live_prometheus.py", "real_world_coverage.py",
         "bench_kernel_mixes.py", "bench_nccl_storm.py", "bench_sel_syslog.py")


def _sections(quick: bool, fleet_gpus: int | None = None, fleet_days: int | None = None,
              dask_lines: int | None = None, folder_files: int | None = None, runs: int | None = None
              ) -> dict[str, Callable[[], list[Figure]]]:
    from benchmarks import (
        bench_cox,
        bench_dask_scaling,
        bench_demo,
        bench_environment_glm,
        bench_fleet,
        bench_ingest_folder,
        bench_ingest_kernel,
        bench_km_logrank,
        bench_survival,
    )

    lines, big, repeat = (200_000, 0.2, 1) if quick else (1_000_000, 5.0, 3)
    repeat = runs or repeat
    files = folder_files or (1_000 if quick else 20_000)
    # the peak-memory input is big_gb GB (--big-lines 0: size by --big-gb)
    kernel_argv = ["--lines", str(lines), "--repeat", str(repeat), "--big-lines", "0", "--big-gb", str(big)]
    folder_argv = ["--files", str(files), "--runs", str(repeat), "--tiny", str(1_000 if quick else 50_000)]
    return {
        "kernel": lambda: _suite.from_script("kernel ingest", bench_ingest_kernel, kernel_argv,
                                             lambda: bench_ingest_kernel.run(lines, repeat, big_gb=big)),
        "folder": lambda: _suite.from_script("folder ingest", bench_ingest_folder, folder_argv,
                                             lambda: bench_ingest_folder.run(files, repeat)),
        "dask": lambda: bench_dask_scaling.run(dask_lines or (1_000_000 if quick else 20_000_000), repeat),
        "survival": bench_survival.run,
        "km": bench_km_logrank.run,
        "cox": bench_cox.run,
        "glm": lambda: bench_environment_glm.run(2_000_000 if quick else 100_000_000, repeat),
        "demo": lambda: bench_demo.run(repeat),
        "fleet": lambda: bench_fleet.run(quick=quick, n_gpus=fleet_gpus, days=fleet_days),
    }


def _extra() -> dict[str, str]:
    """Output of each script of :data:`EXTRA` (run as a child, stdout kept)."""
    out = {}
    here = Path(__file__).parent
    for name in EXTRA:
        proc = subprocess.run([sys.executable, str(here / name)], capture_output=True, text=True)
        out[name] = proc.stdout + (f"\n[exit {proc.returncode}] {proc.stderr[-2000:]}" if proc.returncode else "")
    return out


def _save(name: str, figures: list[Figure], info: dict, base: dict | None) -> Path:
    """Write this run's figures (after those of ``base``, today's earlier file, if given) to ``results/<name>``."""
    info = {**info, "date": name.removesuffix(".json")}
    if base is not None:
        figures, info = _suite.appended(base, figures, info)
    return _suite.write(figures, info, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (checks the suite runs)")
    parser.add_argument("--only", default="", help="comma-separated sections: kernel, folder, dask, survival, cox, "
                                                   "glm, demo, fleet")
    parser.add_argument("--fleet", action="store_true", help="include the 100k-GPU fleet (long)")
    parser.add_argument("--fleet-gpus", type=int, default=None, help="fleet size instead of 100,000 GPUs")
    parser.add_argument("--fleet-days", type=int, default=None, help="fleet days instead of 90")
    parser.add_argument("--dask-lines", type=int, default=None, help="log set of the dask section instead of 20M")
    parser.add_argument("--folder-files", type=int, default=None, help="many-file folder instead of 20,000 files")
    parser.add_argument("--runs", type=int, default=None, help="runs per timing (median) instead of 3")
    parser.add_argument("--append", action="store_true",
                        help="add the figures to today's latest results file (its figures of the sections run "
                             "again are replaced) instead of writing a new one")
    parser.add_argument("--extra", action="store_true", help="also run the other bench_*.py scripts")
    parser.add_argument("--no-save", action="store_true", help="do not write benchmarks/results/")
    args = parser.parse_args(argv)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # cluster shutdown chatter
    sections = _sections(args.quick, args.fleet_gpus, args.fleet_days, args.dask_lines, args.folder_files,
                         args.runs)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or [
        s for s in sections if s != "fleet" or args.fleet]
    unknown = [s for s in chosen if s not in sections]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; known: {', '.join(sections)}")
    info = _suite.machine()
    info["quick"] = args.quick
    name, latest = f"{date.today().isoformat()}{'-quick' if args.quick else ''}.json", None
    k = 2
    while (_suite.RESULTS / name).exists():
        latest = name
        name = f"{date.today().isoformat()}{'-quick' if args.quick else ''}-{k}.json"
        k += 1
    base = None
    if args.append and latest is not None:  # today's latest file: its other sections' figures come first
        name = latest
        base = json.loads((_suite.RESULTS / name).read_text())
    before = _suite.previous(name, args.quick)
    figures: list[Figure] = []
    started = time.perf_counter()
    for section in chosen:
        t0 = time.perf_counter()
        print(f"[{section}] running… (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
        figures += sections[section]()
        print(f"[{section}] done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        info["load_average_end"] = list(os.getloadavg())
        info["seconds"] = round(time.perf_counter() - started, 1)
        if not args.no_save:  # after every section: a run stopped later keeps what it measured
            _save(name, figures, info, base)
    print(f"machine: {info['cpu']}, {info['cores']} cores, {info['memory_gib']} GiB; load average "
          f"{info['load_average'][0]:.1f} at the start, {info['load_average_end'][0]:.1f} at the end; "
          f"Python {info['python']}")
    print(_suite.table(figures if base is None else _suite.appended(base, figures, info)[0], before))
    if before:
        print(f"previous: the run of {before['machine'].get('date', '?')} (load average "
              f"{before['machine']['load_average'][0]:.1f})")
    if args.extra:
        info["extra"] = _extra()
        for script, text in info["extra"].items():
            print(f"\n== {script}\n{text.rstrip()}")
    if not args.no_save:
        print(f"\nwrote {_save(name, figures, info, base)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
