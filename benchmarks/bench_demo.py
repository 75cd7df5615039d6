"""Budget: `reliab demo` (ingest 1,455 files → rates → HTML + PDF report + Parquet) < 60 s.

Run on demand:  python benchmarks/bench_demo.py [--runs 3]

Prints the median wall time of `python -m reliab demo` in fresh processes beside two
baselines measured in the same run: `grep -c ''` over every bundled file (the bare cost of
reading the input) and the import of the libraries the demo needs (pandas, matplotlib,
WeasyPrint, lifelines' neighbours) — the floor any Python tool pays.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

BUDGET_S = 60.0


def _time(cmd: list[str], **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from reliab.datasets import sample_path

    files = [str(p) for p in sorted(sample_path().rglob("*")) if p.is_file() and "truth" not in p.parts]
    demo, grep, imports = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            demo.append(_time([sys.executable, "-m", "reliab", "demo", "--out", out, "-q"]))
        grep.append(_time(["grep", "-c", "", *files]))
        imports.append(_time([sys.executable, "-c", "import pandas, matplotlib.figure, weasyprint, statsmodels.api"]))
    d, g, i = (statistics.median(x) for x in (demo, grep, imports))
    print(f"input: {len(files):,} files under {sample_path()}")
    print(f"reliab demo          median {d:7.2f} s   runs {', '.join(f'{x:.2f}' for x in demo)}")
    print(f"grep -c '' (read)    median {g:7.2f} s   ratio demo/grep    {d / g:8.1f}x")
    print(f"library imports      median {i:7.2f} s   ratio demo/imports {d / i:8.1f}x")
    print(f"budget {BUDGET_S:.0f} s: {'OK' if d < BUDGET_S else 'OVER'} ({d / BUDGET_S:.0%} of budget)")


if __name__ == "__main__":
    main()
