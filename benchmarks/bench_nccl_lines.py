"""Per-line cost of the NCCL/PyTorch training-log reader on the bundled sample's job logs.

Run: ``python benchmarks/bench_nccl_lines.py [--runs 5]``.

Every line of ``data/llama3-54d/train/*`` (about 19,700) goes through
``reliab.io.formats.nccl.parse_nccl_line`` (the reader's parser, with the shortcut for dated
lines that carry no failure and no checkpoint) and, as the baseline in the same run,
``parse_line_fully`` (the same parser without that shortcut), one fresh per-file state each,
alternating the two; each value is the median CPU time of ``--runs`` passes after a warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import Figure, report  # noqa: E402

SECTION = "nccl lines"
_TRAIN = Path(__file__).resolve().parents[1] / "data" / "llama3-54d" / "train"


def _pass(parse: Callable, files: list[list[str]]) -> float:
    from reliab.errors import ParseError
    from reliab.io._lines import LineContext

    start = time.process_time()
    for lines in files:
        ctx = LineContext("slurm-1.out", "nccl", state={"tz": UTC, "job_id": "1", "recent": []})
        for lineno, text in enumerate(lines, 1):
            ctx.lineno = lineno
            try:
                parse(text, ctx)
            except ParseError:
                pass
    return time.process_time() - start


def run(runs: int = 5) -> list[Figure]:
    """Median CPU seconds per line of both parsers over the sample's training logs."""
    from reliab.io.formats import nccl

    files = [p.read_text().splitlines() for p in sorted(_TRAIN.iterdir()) if p.is_file()]
    n = sum(map(len, files))
    fast: list[float] = []
    full: list[float] = []
    for i in range(runs + 1):  # pass 0 warms up
        a, b = _pass(nccl.parse_nccl_line, files), _pass(nccl.parse_line_fully, files)
        if i:
            fast.append(a)
            full.append(b)
    us, base = statistics.median(fast) / n * 1e6, statistics.median(full) / n * 1e6
    return [Figure(SECTION, f"parse_nccl_line, {n:,} sample lines", us, "µs/line",
                   baseline="per-line parser", baseline_value=base,
                   note=f"{statistics.median(fast):.3f} s vs {statistics.median(full):.3f} s CPU")]


def main(argv: list[str] | None = None) -> dict:
    """Run from the command line; prints the table and returns the figures as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    figures = run(args.runs)
    return report(figures)


if __name__ == "__main__":
    main()
