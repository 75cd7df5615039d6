"""The 100,000-GPU, 90-day fleet end to end on one machine with Dask: time, memory, where the time goes.

Run: ``python benchmarks/bench_fleet.py [--quick] [--keep]`` or ``python -m benchmarks --fleet``.

1. :func:`reliab.write_fleet` writes the fleet under ``benchmarks/_work/fleet-…`` (size and
   generation time reported; peak RSS of the generating process, which streams pod-day by
   pod-day).  Defaults: 100,000 GPUs (12,500 hosts), 90 days, 20 benign syslog lines per
   host and day, a telemetry sample per GPU every 15 minutes (0.86e9 rows).
2. ``benchmarks/_fleet_pipeline.py`` runs, in a fresh process with a LocalCluster of 2
   single-threaded workers: the Dask ingest of the logs into partitioned Parquet, the
   reduction of the telemetry to host-hour windows (failures counted in; one task per pod
   and week of files, ``reliab-windows``), rates per pod and the failure GLM on cells,
   reporting each stage's wall time, the peak RSS of the client and the workers, and the
   cluster's compute time per kind of task.  Each size other than the full one is its own
   section, so ``--append`` keeps a 7- and a 30-day run beside the 90-day one.

Baselines measured in the same run: ``grep -r -c -F`` with the kernel literals over the
logs (reading and scanning every byte once) for the ingest, and one pyarrow read of every
telemetry file for the reduction.  The failure GLM's temperature effect is printed beside
the truth planted by the generator.  The fleet's folders are deleted afterwards unless
``--keep``; ``--reuse`` keeps the generated fleet and skips generating it again.

Measured 2026-12-06 at full size (``benchmarks/results/2026-12-06-fleet-90day.md``), 2
shared cores at load 6-9: end to end **296 s** (commit 0cebc71) and **477 s** (commit
865cd28, with the machine 23-34 % slower per CPU-second), under the 8-minute target; 203
and 228 CPU-seconds of client and workers (on 2 idle cores at least 102-114 s of wall).
Stages of the later run (wall / CPU): ingest 146 / 70 s, telemetry -> windows 242 / 107 s
(4.2 x the read's CPU), rates 26 / 23 s, GLM 56 / 28 s; peak RSS client 652 MiB, workers
1,113 and 827 MiB.  The full run showed the GLM and rates summing a few hundred cells with
a P2P shuffle (Dask's default for more than 15 partitions), now a tree of sums.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, child, table  # noqa: E402

SECTION = "fleet"
FULL = {"n_gpus": 100_000, "days": 90, "telemetry_interval_s": 900, "noise_lines_per_node_day": 20.0}
QUICK = {"n_gpus": 4096, "days": 7, "telemetry_interval_s": 900, "noise_lines_per_node_day": 20.0}


def _literals() -> list[str]:
    code = "from reliab.io.formats.kernel._kmsg import LITERALS; print('\\n'.join(x.decode() for x in LITERALS))"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()


def _read_all_parquet(folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds to read every telemetry file once with pyarrow (the floor of any reduction)."""
    code = ("import sys, time, pathlib, pyarrow.parquet as pq\n"
            "c = time.process_time()\n"
            "n = sum(pq.read_table(p).num_rows for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.parquet')))\n"
            "print(n, time.process_time() - c)")
    said: list[str] = []
    wall = child([sys.executable, "-c", code, str(folder)], out=said)[0]
    return wall, float(said[-1].split()[-1])


def profile_note(profile: dict[str, float]) -> str:
    """The largest kinds of task and their share of the cluster's compute time."""
    sys.path.insert(0, str(Path(__file__).parent))
    from _fleet_pipeline import kinds

    by_kind = kinds(profile)
    total = sum(by_kind.values()) or 1.0
    return ", ".join(f"{k} {v:.0f} s ({v / total:.0%})" for k, v in list(by_kind.items())[:6]) + f"; total {total:.0f} s"


def _generate(folder: Path, cfg: dict, reuse: bool) -> tuple[float, float | None, dict]:
    """Write the fleet (wall s, peak RSS MiB, its sizes); with ``reuse``, a fleet written
    before with the same settings is kept and its figures read back."""
    done = folder / "generation.json"
    if reuse and done.is_file():
        kept = json.loads(done.read_text())
        if kept["cfg"] == cfg:
            return kept["seconds"], kept["rss"], kept["sample"]
    shutil.rmtree(folder, ignore_errors=True)
    args = ", ".join(f"{k}={v!r}" for k, v in cfg.items())
    gen = (f"import json, sys; from reliab.datasets import write_fleet; s = write_fleet(sys.argv[1], {args}); "
           "print(json.dumps({'bytes': s.bytes, 'files': s.files, 'lines': s.log_lines, "
           "'rows': s.telemetry_rows, 'failures': s.failures, 'seconds': s.seconds, 'parts': s.parts}))")
    out: list[str] = []
    t_gen, rss_gen = child([sys.executable, "-c", gen, str(folder)], out=out)
    sample = json.loads(out[-1])
    done.write_text(json.dumps({"cfg": cfg, "seconds": t_gen, "rss": rss_gen, "sample": sample}))
    return t_gen, rss_gen, sample


def run(quick: bool = False, keep: bool = False, workers: int = 2, n_gpus: int | None = None,
        days: int | None = None, reuse: bool = False) -> list[Figure]:
    """The fleet figures; ``n_gpus``/``days`` override the full (or quick) size; ``reuse``
    keeps a fleet generated before with the same settings (and implies ``keep``)."""
    cfg = dict(QUICK if quick else FULL)
    cfg.update({k: v for k, v in (("n_gpus", n_gpus), ("days", days)) if v is not None})
    folder = WORK / f"fleet-{cfg['n_gpus']}-{cfg['days']}"
    work = WORK / f"fleet-out-{cfg['n_gpus']}-{cfg['days']}"
    keep = keep or reuse
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        t_gen, rss_gen, sample = _generate(folder, cfg, reuse)
        t_grep, _ = child(["grep", "-r", "-c", "-F", *(x for lit in _literals() for x in ("-e", lit)),
                           str(folder / "logs")])
        t_read, cpu_read = _read_all_parquet(folder / "telemetry")
        said: list[str] = []
        t_pipe, rss_pipe = child([sys.executable, str(Path(__file__).with_name("_fleet_pipeline.py")), str(folder),
                                  str(work), str(workers)], out=said)
        pipe = json.loads(said[-1])
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
    times, facts = pipe["times"], pipe["facts"]
    size = f"{cfg['n_gpus']:,} GPUs x {cfg['days']} days"
    # each size its own section: --append keeps the 7- and 30-day runs beside the full one
    full = cfg == FULL
    section = SECTION if full else f"{SECTION} {cfg['n_gpus'] // 1000}k x {cfg['days']}d"
    top = profile_note(pipe["profile"])
    peak = max([pipe["client_rss_mib"], *pipe["worker_rss_mib"]])
    return [
        Figure(section, f"generate {size}", t_gen, "s",
               note=(f"{sample['bytes'] / 1e9:.2f} GB in {sample['files']:,} files: {sample['lines']:,} log lines, "
                     f"{sample['rows']:,} telemetry rows (every {cfg['telemetry_interval_s']} s), "
                     f"{sample['failures']:,} failures; peak RSS {rss_gen or 0:.0f} MiB")),
        Figure(section, "ingest logs (dask, 2 workers, Parquet out)", times["ingest"], "s", "grep -r -c -F", t_grep,
               note=f"{facts['lines']:,} lines, {facts['files']:,} files, {facts['interruptions']:,} interruptions"),
        Figure(section, "telemetry -> host-hour windows (dask)", times["reduce"], "s", "pyarrow read of all",
               t_read, note=(f"{facts['host_windows']:,} host-hours; CPU {pipe['cpu_s']['reduce']:.1f} s (client + "
                             f"workers) vs {cpu_read:.1f} s for the read: {pipe['cpu_s']['reduce'] / cpu_read:.2f} x")),
        Figure(section, "rates per pod from Parquet (dask)", times["rates"], "s"),
        Figure(section, "failure GLM on dask cells", times["glm"], "s",
               note=(f"{facts['host_windows']:,} windows -> {facts['cells']:,} cells; log IRR per °C "
                     f"{facts['log_irr_per_c']:.4f} [{facts['log_irr_low']:.4f}, {facts['log_irr_high']:.4f}], "
                     f"truth {facts['truth_log_irr_per_c']}")),
        Figure(section, "end to end (pipeline process)", t_pipe, "s", "generation", t_gen,
               note=f"profile (compute by task kind, both workers): {top}"),
        Figure(section, "peak RSS of one process (client or worker)", peak, "MiB",
               note=(f"client {pipe['client_rss_mib']:.0f} MiB, workers "
                     f"{', '.join(f'{r:.0f}' for r in pipe['worker_rss_mib'])} MiB; pipeline process tree "
                     f"as seen by time(1) {rss_pipe or 0:.0f} MiB; load average {os.getloadavg()[0]:.1f}"),
               extra={"times": times, "profile": pipe["profile"], "facts": facts}),
        Figure(section, "CPU of the stages (client + workers)", pipe["cpu_s"]["total"], "s",
               note=(", ".join(f"{k} {v:.1f} s" for k, v in pipe["cpu_s"].items() if k != "total")
                     + f"; load average {pipe['load']:.1f} at the pipeline's end")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4,096 GPUs for 7 days instead")
    parser.add_argument("--keep", action="store_true", help="keep the fleet and its outputs")
    parser.add_argument("--gpus", type=int, default=None, help="fleet size (default 100,000; a multiple of 8)")
    parser.add_argument("--days", type=int, default=None, help="days (default 90)")
    parser.add_argument("--reuse", action="store_true", help="keep and reuse a fleet generated before (implies --keep)")
    parser.add_argument("--out", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    t = time.perf_counter()
    load = os.getloadavg()
    figures = run(args.quick, args.keep, n_gpus=args.gpus, days=args.days, reuse=args.reuse)
    print(table(figures))
    if args.out:
        Path(args.out).write_text(json.dumps({"load_start": load, "load_end": os.getloadavg(),
                                              "figures": [asdict(f) for f in figures]}, indent=1, default=str))
    print(f"{time.perf_counter() - t:.0f} s; load average (1 min) at the end: {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
