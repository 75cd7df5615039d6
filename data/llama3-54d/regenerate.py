"""Regenerate the bundled sample ``data/llama3-54d`` byte for byte.

Usage::

    python data/llama3-54d/regenerate.py            # rewrite this folder
    python data/llama3-54d/regenerate.py OUT_DIR    # write a fresh copy elsewhere

Uses only the public API of ``reliab.datasets``.  Writes the raw files, ``truth/*.csv``
and ``SOURCE.md`` (whose file table is computed from what was written).
"""

from __future__ import annotations

import shutil
import sys
from collections import defaultdict
from pathlib import Path

from reliab.datasets import simulate_cluster

SEED = 20240723  # Llama 3 paper release date, as a fixed seed
PARAMS = {"counts": "table5", "seed": SEED, "precursor_fraction": 0.5}

OUTPUT_DIRS = ("syslog", "dmesg", "train", "slurm", "ipmi", "tickets", "telemetry", "truth")

SOURCE_HEAD = """\
# llama3-54d — a synthetic 54-day sample of a 16,384-GPU training cluster

**Synthetic.** Nothing here was logged on a real cluster.  The files were written by
`reliab.datasets.simulate_cluster(counts="table5", seed={seed})` (see `regenerate.py`)
and imitate, line by line, the raw formats of a real GPU cluster (`docs/raw-formats.md`).

## Calibration
- Interruption counts: exactly the 18 categories of Table 5 (419 unexpected
  interruptions) and the 47 planned interruptions of the Llama 3 405B pre-training
  snapshot: Llama Team, AI @ Meta, "The Llama 3 Herd of Models", arXiv:2407.21783 (2024),
  §3.3.4 and Table 5.  Job size 16,384 GPUs on 2,048 eight-GPU hosts, 54 days [paper].
- Diurnal 1–2 % throughput variation through clock scaling, and synchronized power drops
  of the whole job at checkpoints and restarts: same section of the paper (qualitative
  statements turned into numbers here).  Throughput level 2.72 M tokens/s is computed from
  the paper's Table 4 (400 TFLOP/s per GPU at 16K GPUs) and 6 × 405e9 FLOP per token.
- GPU power, clock and temperature levels: the real H200 capture in `data/h200_telemetry`.

## Assumptions (not from any source)
- Event times: homogeneous Poisson in running time (shape 1.0 for every category), at
  least 10 running minutes apart; times, hosts and GPUs are random.
- Node frailty gamma(mean 1, variance 0.5); 0.5 % of nodes planted as lemons with frailty
  × 15 (the lemon-node idea is from Kokolis et al., arXiv:2410.21680); 3 % spare nodes;
  repaired nodes return after a lognormal time (median 48 h).
- Restart downtime lognormal (median 15 min, log-sd 0.35), floored at 12 min; failure
  detected 30 s–5 min after it happens.
- Checkpointing: training resumes 5 min after an allocation starts (checkpoint load);
  a checkpoint completes every 30 min after that, its write pausing training for the
  last 60 s (29 min of training per checkpoint); an interruption loses the work since
  the last completed checkpoint.
- Mixture of signals per category (e.g. 75 % of faulty-GPU failures print Xid 79), log
  noise rates, ambient temperature 22 °C ± 3.5 °C peaking 15:00 local (UTC−7), host power.
- Other users' jobs: about 3 a day, 1–2 spare nodes each, in `slurm/sacct.txt` only; end
  states in the order of Meta's RSC-1 (Kokolis et al., arXiv:2410.21680) with the rare
  ones raised (50 % COMPLETED, 22 % FAILED in user code, 10 % `CANCELLED by <uid>`, 7 %
  PREEMPTED, 7 % TIMEOUT, 4 % OUT_OF_MEMORY), none with evidence near its end.
- Precursors (`precursor_fraction=0.5`): half of the GPU, GPU-memory, network and
  host-memory/CPU failures are announced 2–7 days ahead by a rising burst of correctable
  signals on the failing node (Xid 63/92/94; NVSwitch non-fatal SXid and PCIe AER
  corrected; EDAC CE), the rest unannounced; the planted bursts are in
  `truth/precursors.csv`.  The strength is an assumption (announced memory failures:
  Sridharan et al., ASPLOS 2015; Ostrouchov et al., SC 2020).  Every planted line keeps
  31 minutes from every interruption's attribution window, so the interruption counts
  below are the same as without them.

## Interruption policy
The sample is one training run: `reliab demo` counts it as Llama 3 did
(`policy="training-run"`: 466 interruptions, 47 planned, the 18 Table 5 counts).  The
default fleet policy of `reliab.ingest` (Meta RSC) gives 358 interruptions on the same
logs: the 54 Software Bug and 7 NCCL-timeout ends of the run have no infrastructure
evidence and join the other users' FAILED jobs as user failures, and the 47 planned ends
(`CANCELLED by 0`) are not interruptions.

## Ground truth
`truth/interruptions.csv` (one row per interruption: job end time, job id, category,
component, planned, host, GPU, failure time, downtime), `truth/nodes.csv` (frailty, lemon,
spare, interruptions per host), `truth/rates.csv` (expected count, rate per GPU-hour and
shape per category), `truth/checkpoints.csv` (every checkpoint: job, completion time,
write seconds), `truth/costs.csv` (per interruption: downtime to the next allocation,
its 5-min restart, the work lost since the last checkpoint, blocking write time and lost
GPU-hours) and `truth/other_jobs.csv` (the other users' jobs and their states).  Ingest
must not read `truth/`: the hand-over manifest `reliab.toml` skips it (and `cluster.json`), and
ingest lists those files as skipped.

## Fleet facts (`cluster.json`)
What an operator knows without reading any log: GPUs (16,384), GPUs per node (8), nodes
(2,048), spare nodes and the observation window.  `reliab demo` takes the exposure for the
rates from it (GPU-days = GPUs x window); `reliab.ingest` skips it (`reliab.toml`).

## Telemetry (`telemetry/`)
- `cluster_1min.csv`: `time,host,gpu,ambient_c,power_w,throughput_tokens_per_s` — one row
  per minute for the whole window, `host` = `cluster`, `gpu` empty; `power_w` is the total
  power of the job's nodes in watts (≈15 MW under load, ≈4 MW at checkpoints, ≈3 MW
  during restarts); throughput is 0 while the job checkpoints, starts or is down.
- `nodes_15min.csv`: `time,host,gpu,temp_c,power_w,sm_clock_mhz` — 16 hosts every 15 min,
  `gpu` empty (node level: mean GPU temperature, node power including the host, mean SM clock).
- `gpus_1min_YYYYMMDD.csv`: `time,host,gpu,temp_c,power_w,sm_clock_mhz,util_pct` — one day
  at 1 min for 8 GPUs of 2 hosts; shows the checkpoint power drops (700 W → ~110 W).

## Regenerate
    python data/llama3-54d/regenerate.py [OUT_DIR]

The output is byte-for-byte identical for the same reliab version (tested).

## Files
| path | files | bytes | lines |
|---|---:|---:|---:|
"""


def _table(directory: Path, written: dict[str, Path]) -> str:
    groups: dict[str, list[Path]] = defaultdict(list)
    for name, path in written.items():
        top = name.split("/")[0]
        many = sum(1 for n in written if n.split("/")[0] == top) > 3
        groups[f"{top}/*" if many else name].append(path)
    rows, total_b, total_l = [], 0, 0
    for key in sorted(groups):
        paths = groups[key]
        size = sum(p.stat().st_size for p in paths)
        lines = sum(p.read_bytes().count(b"\n") for p in paths)
        total_b, total_l = total_b + size, total_l + lines
        rows.append(f"| `{key}` | {len(paths)} | {size:,} | {lines:,} |")
    rows.append(f"| **total** | {len(written)} | {total_b:,} | {total_l:,} |")
    return "\n".join(rows) + "\n"


def main(out: Path) -> dict[str, Path]:
    """Write the sample into ``out`` and return the files written (SOURCE.md included)."""
    for sub in OUTPUT_DIRS:  # drop files of an earlier version that may no longer be written
        shutil.rmtree(out / sub, ignore_errors=True)
    written = simulate_cluster(**PARAMS).write(out)
    source = out / "SOURCE.md"
    source.write_text(SOURCE_HEAD.format(seed=SEED) + _table(out, written), encoding="utf-8")
    return {**written, "SOURCE.md": source}


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
