"""The SEL reader on storms of SEL records that reached syslog, beside ``grep -c -F``.

Run: ``python benchmarks/bench_sel_syslog.py [--lines 1000000] [--repeat 5]``.

The lines are verbatim lines of the real-world corpus, drawn at random:

* *storm*: only SEL records that reached syslog — OpenBMC ``sel-logger`` journal lines and
  ``/var/log/ipmi_sel`` records (``tests/reference/real_world/sel/openbmc-ml-2020-04-*``),
  the NVIDIA BlueField BMC's forwarded ``sel elist`` record; every line a candidate;
* *syslog*: a central syslog file, one line in ten such a record and the others the kernel
  corpus's syslog and dmesg lines (``tests/reference/real_world/kernel``), some holding a
  comma or a ``|`` (the reader's other literals), which its per-line parser looks at.

``read_sel(year=2020)`` runs in a child process (its CPU seconds, user + system) and
``grep -c -F`` with the reader's literals (``|``, ``,``, ``sensor crossed a ``) in the same
round; rounds interleaved, medians.  The note gives the microseconds per candidate line and
the share of lines the per-line parser (``parse_sel_line``) took: the rest were read by the
bulk route (``reliab/io/formats/_sel_syslog_bulk.py``) or dropped by the line prefilter.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import Figure, counted_reader_cpu, grep_cpu, report  # noqa: E402

SECTION = "sel syslog"
WORK = Path(tempfile.gettempdir()) / "reliab-bench-sel"
_REAL = Path(__file__).resolve().parents[1] / "tests" / "reference" / "real_world"
_SEL = ("openbmc-ml-2020-04-sel-logger-journal-thresholds.log", "openbmc-ml-2020-04-ipmi-sel-rsyslog-thresholds.log",
        "nvidia-bluefield-bmc-rsyslog-sel-voltage.log")
_WORDS = ("|", ",", "sensor crossed a ")
#: the reader in a child (module, per-line parser counted, reader, year=)
_COUNTED = ("sel", "parse_sel_line", "read_sel", 2020)
MIXES = ("storm", "syslog")


def _lines(paths: list[Path]) -> list[str]:
    return [line for p in paths for line in p.read_text(errors="replace").splitlines() if line.strip()]


def write_mix(path: Path, n: int, seed: int, mix: str) -> None:
    """``n`` lines of ``mix`` (:data:`MIXES`), deterministic for a seed."""
    rng = random.Random(seed)
    sel = _lines([_REAL / "sel" / name for name in _SEL])
    noise = _lines(sorted((_REAL / "kernel").glob("*.log")))
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(n):
            pool = sel if mix == "storm" or rng.random() < 0.1 else noise
            fh.write(rng.choice(pool) + "\n")


def run(lines: int = 1_000_000, repeat: int = 5, seed: int = 7) -> list[Figure]:
    """The reader's CPU seconds on each mix beside grep's, medians of interleaved rounds."""
    WORK.mkdir(exist_ok=True)
    figures = []
    for mix in MIXES:
        path = WORK / f"bmc-{mix}-{seed}-{lines}.log"
        if not path.exists():
            write_mix(path, lines, seed, mix)
        greps, reads = [], []
        for _ in range(repeat):
            greps.append(grep_cpu(_WORDS, path))
            reads.append(counted_reader_cpu(*_COUNTED, path, WORK))
        g, cpu = statistics.median(x[0] for x in greps), statistics.median(x[0] for x in reads)
        cand = greps[0][1]
        figures.append(Figure(
            SECTION, f"read_sel CPU, {mix} mix ({lines:,} lines)", cpu, "s", "grep -c -F CPU", g,
            note=f"{cpu / max(g, 1e-9):.1f}x grep; {cpu / max(cand, 1) * 1e6:.2f} us per candidate line; "
                 f"{cand:,} candidate lines; {reads[0][1]:,} signals; {reads[0][2] / max(cand, 1):.1%} of the "
                 f"candidates ({reads[0][2]:,}) to the per-line parser; rounds {' '.join(f'{x[0]:.2f}' for x in reads)} s",
            extra={"per_line_share": reads[0][2] / max(cand, 1)}))
    return figures


def main(argv: list[str] | None = None) -> dict:
    """Run from the command line; prints the table and returns the figures as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    return report(run(args.lines, args.repeat, args.seed))


if __name__ == "__main__":
    main()
