"""Budget: `reliab demo` (ingest the bundled files → rates → HTML + PDF report + Parquet) < 20 s
(issue 24: "on a quiet 2-core machine").

Run on demand:  python benchmarks/bench_demo.py [--runs 3]  (or as part of ``python -m benchmarks``)

Prints the median wall time of `python -m reliab demo` in fresh processes beside two
baselines measured in the same run: `grep -c ''` over every bundled file (the bare cost of
reading the input) and the import of the libraries the demo needs (pandas, matplotlib,
WeasyPrint, lifelines' neighbours) — the floor any Python tool pays.  The suite also times
the report alone: the build + HTML and PDF stages of ``reliab.demo`` run in-process.

Beside every wall time: the CPU time (user + sys, the PDF process included) and the load
average before and after, since on a shared machine the wall time moves with the load and
the CPU time much less.  The PDF is laid out by a second process while the first writes the
screen page, archive and tables (:class:`reliab.report.pdf.PdfProcess`; it encodes the figures
for the PDF on two threads during the layout), the figures are drawn by this process and a
forked copy at once (:mod:`reliab.report.shared_draw`), the failure-risk section runs on a
thread beside the other analyses and its boosted fits on two more: on an idle 2-core machine
the wall time is below the CPU time; under load it is not.

Results: benchmarks/results/2026-12-06-demo-report.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BUDGET_S = 20.0
SECTION = "demo"


def _time(cmd: list[str], **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys of the command and its children) and the load
    average (1 min) before → after."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    wall = _time(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, f"{load0:.1f}→{os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from reliab.datasets import sample_path

    files = [str(p) for p in sorted(sample_path().rglob("*")) if p.is_file() and "truth" not in p.parts]
    demo, cpu, loads, grep, imports = [], [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            wall, used, load = timed([sys.executable, "-m", "reliab", "demo", "--out", out, "-q"])
            demo.append(wall)
            cpu.append(used)
            loads.append(load)
        grep.append(_time(["grep", "-c", "", *files]))
        imports.append(_time([sys.executable, "-c", "import pandas, matplotlib.figure, weasyprint, statsmodels.api"]))
    d, g, i = (statistics.median(x) for x in (demo, grep, imports))
    print(f"input: {len(files):,} files under {sample_path()}")
    print(f"reliab demo          median {d:7.2f} s   runs {', '.join(f'{x:.2f}' for x in demo)}")
    print(f"  CPU (user+sys)     median {statistics.median(cpu):7.2f} s   runs "
          f"{', '.join(f'{x:.2f}' for x in cpu)}   load {', '.join(loads)}")
    print(f"grep -c '' (read)    median {g:7.2f} s   ratio demo/grep    {d / g:8.1f}x")
    print(f"library imports      median {i:7.2f} s   ratio demo/imports {d / i:8.1f}x")
    print(f"budget {BUDGET_S:.0f} s: {'OK' if d < BUDGET_S else 'OVER'} ({d / BUDGET_S:.0%} of budget)")


def _stages(runs: int) -> dict[str, float]:
    """Median seconds of each stage of ``reliab.demo`` run in this process (after a warm-up run)."""
    import reliab

    seen: list[dict[str, float]] = []
    for _ in range(runs + 1):
        with tempfile.TemporaryDirectory() as out:
            seen.append(reliab.demo(out).timings)
    return {k: statistics.median(t[k] for t in seen[1:]) for k in seen[0]}


def run(runs: int = 3) -> list:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks._suite import Figure
    from reliab.datasets import sample_path

    files = [str(p) for p in sorted(sample_path().rglob("*")) if p.is_file() and "truth" not in p.parts]
    demo, cpu, grep = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            wall, used, _ = timed([sys.executable, "-m", "reliab", "demo", "--out", out, "-q"])
            demo.append(wall)
            cpu.append(used)
        grep.append(_time(["grep", "-c", "", *files]))
    imports = statistics.median(_time([sys.executable, "-c", "import pandas, matplotlib.figure, weasyprint, "
                                                           "statsmodels.api"]) for _ in range(runs))
    d, g = statistics.median(demo), statistics.median(grep)
    stages = _stages(max(1, runs - 1))
    report = stages.get("html", 0.0) + stages.get("pdf", 0.0)
    return [Figure(SECTION, "reliab demo, end to end", d, "s", "library imports", imports,
                   f"< {BUDGET_S:.0f} s", d < BUDGET_S,
                   note=f"grep -c '' over the {len(files):,} bundled files: {g:.2f} s; CPU (user+sys) "
                        f"{statistics.median(cpu):.2f} s"),
            Figure(SECTION, "report alone (build + HTML + PDF)", report, "s", "reliab demo", d,
                   note="in-process stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))]


if __name__ == "__main__":
    main()
