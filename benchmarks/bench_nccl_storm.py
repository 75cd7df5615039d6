"""The NCCL/PyTorch training-log reader on a watchdog storm, beside ``grep -c -F``.

Run: ``python benchmarks/bench_nccl_storm.py [--lines 300000] [--repeat 5]``.

The storm file is 8 ranks' output during a hung collective: NCCL ``INFO`` chatter
(``host:pid:tid [dev] NCCL INFO …``, NCCL ``src/debug.cc``), ``[rankN]:[E…
ProcessGroupNCCL.cpp:…] … Watchdog caught collective operation timeout`` lines repeated per
rank, ``NCCL WARN NET/IB : Got completion from peer … with status=12`` and glog ``I…``
records, after one dated line of the job's own logging.  ``read_nccl`` runs in a child
process (its CPU seconds, user + system) and ``grep -c -F`` with the reader's literal words
(failure triggers and checkpoint words) in the same round; rounds interleaved, medians.
The note counts the lines the full per-line parser (``parse_line_fully``) took: the rest
were read by the dated-line and NCCL ``INFO`` shortcuts or by the bulk route
(``reliab/io/formats/_nccl_bulk.py``).  ``--base DIR`` also runs the reader of another
checkout (``DIR`` on ``PYTHONPATH``) in the same rounds, for before/after figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._nccl_mixes import MIXES, write_mix  # noqa: E402
from benchmarks._suite import Figure, counted_reader_cpu, grep_cpu, report  # noqa: E402

SECTION = "nccl storm"
WORK = Path(tempfile.gettempdir()) / "reliab-bench-nccl"
#: the reader's literal words (``reliab.io.formats._nccl_quiet._WORDS``)
_WORDS = ("atchdog", "rror", "NCCL WARN", "Timeout at NCCL work", "heckpoint", "global step", "state loaded")
#: the reader in a child (module, per-line parser counted, reader, year=)
_COUNTED = ("nccl", "parse_line_fully", "read_nccl", 2024)


def write_storm(path: Path, lines: int, seed: int) -> None:
    """A storm log of ``lines`` lines (see the module docstring)."""
    rnd = random.Random(seed)
    out = ["2024-12-03 12:00:00,000 INFO [trainer] step 1 | loss 2.0 |"]
    for i in range(lines):
        r, rank, s = rnd.random(), rnd.randrange(8), i // 1000
        stamp = f"1203 12:{(s // 60) % 60:02d}:{s % 60:02d}.{i % 1000000:06d}"
        if r < 0.5:
            out.append(f"node{rank:02d}:{1000 + rank}:{2000 + rank} [{rank}] NCCL INFO Channel 0{rank % 4}/0 :"
                       f" {rank}[{rank}] -> {(rank + 1) % 8}[{(rank + 1) % 8}] via P2P/IPC")
        elif r < 0.8:
            out.append(f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:1414] [PG 0 Rank {rank}] Watchdog caught"
                       f" collective operation timeout: WorkNCCL(SeqNum={100 + rank}, OpType=ALLREDUCE, NumelIn=1,"
                       f" NumelOut=1, Timeout(ms)=600000) ran for 60000{rank} milliseconds before timing out.")
        elif r < 0.9:
            out.append(f"node{rank:02d}:{1000 + rank}:{2000 + rank} [{rank}] transport/net_ib.cc:1296 NCCL WARN"
                       f" NET/IB : Got completion from peer 10.0.0.{rank}<{40000 + rank}> with status=12 opcode=0")
        else:
            out.append(f"I{stamp} {1000 + rank} ProcessGroupNCCL.cpp:{800 + rank}] [Rank {rank}]"
                       " ProcessGroupNCCL initialization options: size: 8")
    path.write_text("\n".join(out) + "\n")


def _figure(label: str, reads: list[tuple[float, int, int]], greps: list[tuple[float, int]], lines: int,
            mix: str = "storm") -> Figure:
    g, cpu = statistics.median(x[0] for x in greps), statistics.median(x[0] for x in reads)
    name = "watchdog storm" if mix == "storm" else f"{mix} mix"
    return Figure(SECTION, f"read_nccl CPU{label}, {name} ({lines:,} lines)", cpu, "s", "grep -c -F CPU", g,
                  note=f"{cpu / max(g, 1e-9):.1f}x grep; {cpu / lines * 1e6:.2f} us per line (every line a"
                       f" candidate); {cpu / max(greps[0][1], 1) * 1e6:.1f} us per line holding a literal; "
                       f"{greps[0][1]:,} lines hold a literal; {reads[0][1]:,} signals; "
                       f"{reads[0][2] / (lines + 1):.1%} of lines ({reads[0][2]:,}) to the per-line parser; "
                       f"rounds {' '.join(f'{x[0]:.2f}' for x in reads)} s",
                  extra={"per_line_share": reads[0][2] / (lines + 1)})


def run(lines: int = 300_000, repeat: int = 5, seed: int = 7, base: str | None = None,
        mix: str = "storm") -> list[Figure]:
    """The reader's CPU seconds on ``mix`` (``storm``, the benchmark's own, or one of
    :data:`benchmarks._nccl_mixes.MIXES`) beside grep's, medians of interleaved rounds."""
    WORK.mkdir(exist_ok=True)
    path = WORK / f"slurm-{mix}-{seed}-{lines}.out"
    if not path.exists():
        if mix == "storm":
            write_storm(path, lines, seed)
        else:
            write_mix(path, lines, seed, mix)
    greps, reads, before = [], [], []
    for _ in range(repeat):
        greps.append(grep_cpu(_WORDS, path))
        if base is not None:
            before.append(counted_reader_cpu(*_COUNTED, path, WORK, base))
        reads.append(counted_reader_cpu(*_COUNTED, path, WORK))
    figures = [_figure(f" ({base})", before, greps, lines, mix)] if base is not None else []
    return figures + [_figure("", reads, greps, lines, mix)]


def main(argv: list[str] | None = None) -> dict:
    """Run from the command line; prints the table and returns the figures as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--base", default=None, help="another checkout's directory, run in the same rounds")
    parser.add_argument("--mix", default="storm", choices=("storm", *MIXES, "all"))
    args = parser.parse_args(argv)
    mixes = ("storm", *MIXES) if args.mix == "all" else (args.mix,)
    return report([f for mix in mixes for f in run(args.lines, args.repeat, args.seed, args.base, mix)])


if __name__ == "__main__":
    main()
