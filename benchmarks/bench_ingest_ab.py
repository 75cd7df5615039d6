"""Ingest before/after two package trees, in interleaved rounds of fresh processes.

Run: ``python benchmarks/bench_ingest_ab.py --before DIR [--after DIR] [--rounds 5]
[--lines 500000] [--files 4000] [--cases kernel,kernel-output,tiny,folder,dask,dask-output]``.
``DIR`` is a folder holding a ``reliab`` package, e.g. ``git archive 0cebc71 reliab | tar -x
-C DIR``; ``--after`` defaults to this checkout.

Every measurement is a fresh interpreter started in ``/tmp`` (never the repository, so that
``import reliab`` finds nothing but ``PYTHONPATH=DIR``), which imports polars and
``reliab.ingest`` and then times one call: ``ingest()`` of a 500,000-line kernel log of the
realistic mix (:func:`benchmarks.bench_ingest_kernel.write_realistic_log`) in memory and with
``output=``; ``tiny``, a folder of 4,000 two-line kernel logs
(:func:`benchmarks.bench_ingest_folder.tiny_files`); ``folder``, a 4,000-file fleet folder
(:func:`benchmarks.bench_ingest_folder.many_files`); ``dask``/``dask-output``, the bundled
sample on ``engine="dask"`` in memory and with ``output=``.  A Dask child starts its cluster
with ``reliab.io.distributed.dask_client(workers=2)`` (timed on its own: *start*), ingests
once on the new workers (*cold*: the workers import reliab and polars on their first task)
and once more (*warm*).  Each case runs once per tree per round, the order of the two trees
alternating from round to round (ABBA) so that a drift of the load falls on both; the
figures are the medians over rounds of the per-round ratio after/before, with their range,
and the median wall times.  CPU seconds are the child's and its children's (the Dask worker
processes included) from ``getrusage``; the 1-minute load average is read before each child.
Every child also prints the number of signal rows it got, and a difference between the
trees is reported.

``--pool A.json B.json …`` prints the summary of the rounds of earlier ``--json`` files.

Measured 2026-12-06, commit 0cebc71 (before) against main after the engine refactor of issue
25 (after), three runs pooled (12 rounds of the local cases, 20 of the Dask ones) at load
average 2.5-6.5 on 2 CPUs; median of the per-round ratios after/before (range), wall and
CPU (``benchmarks/results/2026-12-06-ingest-ab.md`` has the runs, loads and ranges):

======================================  ==================  ==================
case (median wall before -> after)      wall ratio          CPU ratio
======================================  ==================  ==================
kernel ingest() 0.345 -> 0.342 s        0.98 (0.75-1.23)    0.97 (0.82-1.03)
kernel output= 0.399 -> 0.401 s         1.08 (0.65-1.22)    0.98 (0.96-1.14)
4,000 two-line files 2.22 -> 2.08 s     1.02 (0.75-1.42)    1.00 (0.94-1.06)
4,000-file folder 3.13 -> 3.10 s        1.01 (0.77-1.22)    1.03 (0.94-1.12)
Dask cluster start 1.14 -> 1.18 s       0.96 (0.46-1.65)    -
Dask sample, cold 3.55 -> 3.84 s        1.08 (0.66-2.21)    0.96 (0.83-1.12)
Dask sample, warm 2.27 -> 2.37 s        1.07 (0.57-2.59)    (the whole child)
Dask output=, cold 8.53 -> 9.37 s       1.09 (0.69-2.11)    0.92 (0.87-1.02)
Dask output=, warm 7.12 -> 7.40 s       0.94 (0.41-1.50)    (the whole child)
======================================  ==================  ==================

Unchanged within noise; on Dask the wall times swing 0.4-2.6x between rounds at this load
while the CPU of client and workers is 4-8 % lower after, and both trees send the same 9
tasks and get the same bytes back.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASES = ("kernel", "kernel-output", "tiny", "folder", "dask", "dask-output")

#: the child's preamble: imports outside the timing, a timer, the signal rows of a result
_HEAD = """\
import json, shutil, sys, tempfile, time
import polars
from reliab.io import ingest
def rows(r):
    try:
        return len(r.signals)
    except Exception:  # an output= result may hold no tables
        return -1
"""
#: one local ingest of argv[1]; argv[2]: keyword arguments (JSON); output= in a temporary folder
_LOCAL = _HEAD + """\
kw = json.loads(sys.argv[2])
out = tempfile.mkdtemp() if kw.pop("output", False) else None
t, c = time.perf_counter(), time.process_time()
r = ingest(sys.argv[1], **kw, **({"output": out} if out else {}))
dt, dc = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"ingest": dt, "ingest_cpu": dc, "rows": rows(r)}))
if out:
    shutil.rmtree(out)
"""
#: the Dask engine on reliab's own 2-worker cluster: start, a cold and a warm ingest
_DASK = _HEAD + """\
from reliab.io.distributed import dask_client
kw = json.loads(sys.argv[2])
output = kw.pop("output", False)
t = time.perf_counter()
with dask_client(workers=2) as c:
    c.wait_for_workers(2)
    got = {"start": time.perf_counter() - t}
    for name in ("cold", "warm"):
        out = tempfile.mkdtemp() if output else None
        t = time.perf_counter()
        r = ingest(sys.argv[1], engine="dask", client=c, **kw, **({"output": out} if out else {}))
        got[name] = time.perf_counter() - t
        got["rows"] = rows(r)
        if out:
            shutil.rmtree(out)
    t = time.perf_counter()
got["close"] = time.perf_counter() - t
print(json.dumps(got))
"""


def inputs(lines: int, files: int) -> dict[str, tuple[str, str, dict[str, object]]]:
    """Per case: the child program, the input path and ingest's keyword arguments."""
    from benchmarks.bench_ingest_folder import many_files, tiny_files
    from benchmarks.bench_ingest_kernel import write_realistic_log

    log = WORK / f"kernel-real-{lines}-7.log"
    if not log.exists():
        write_realistic_log(log, lines, 7)
    sample = ROOT / "data" / "llama3-54d"
    return {
        "kernel": (_LOCAL, str(log), {"source": "kernel"}),
        "kernel-output": (_LOCAL, str(log), {"source": "kernel", "output": True}),
        "tiny": (_LOCAL, str(tiny_files(files)), {}),
        "folder": (_LOCAL, str(many_files(files)), {}),
        "dask": (_DASK, str(sample), {"policy": "training-run"}),
        "dask-output": (_DASK, str(sample), {"policy": "training-run", "output": True}),
    }


def one(tree: Path, program: str, path: str, kwargs: dict[str, object]) -> dict[str, float]:
    """One fresh child on ``tree``: its printed figures, wall seconds, CPU seconds and load average."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", program, path, json.dumps(kwargs)], cwd="/tmp", env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"child on {tree} failed:\n{done.stderr[-3000:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {**got, "process": wall, "cpu": cpu, "load": load}


def rounds(trees: dict[str, Path], cases: list[str], n: int, lines: int, files: int) -> dict[str, list[dict]]:
    """``n`` rounds of every case on both trees, their order alternating: per case and tree, the runs."""
    progs = inputs(lines, files)
    names = list(trees)
    runs: dict[str, list[dict]] = {f"{c}/{t}": [] for c in cases for t in names}
    for k in range(n):
        order = names if k % 2 == 0 else names[::-1]
        for case in cases:
            for name in order:
                got = one(trees[name], *progs[case])
                runs[f"{case}/{name}"].append(got)
                print(f"round {k + 1} {case:<13} {name:<6} " + " ".join(
                    f"{key} {v:.3f}" if isinstance(v, float) else f"{key} {v}" for key, v in got.items()),
                    flush=True)
    return runs


def summary(runs: dict[str, list[dict]], cases: list[str]) -> str:
    """Per case and figure: median before, median after, median (range) of the per-round ratio."""
    lines = [f"{'case':<14}{'figure':<9}{'before s':>10}{'after s':>10}{'ratio':>8}  range      after<before  rows",
             "-" * 84]
    for case in cases:
        a, b = runs[f"{case}/before"], runs[f"{case}/after"]
        keys = [k for k in ("start", "ingest", "ingest_cpu", "cold", "warm", "process", "cpu")
                if k in a[0]]
        same = {r["rows"] for r in a} == {r["rows"] for r in b}
        for key in keys:
            ratios = [y[key] / x[key] for x, y in zip(a, b, strict=True)]
            lines.append(f"{case:<14}{key:<9}{statistics.median(r[key] for r in a):>10.3f}"
                         f"{statistics.median(r[key] for r in b):>10.3f}{statistics.median(ratios):>8.3f}"
                         f"  {min(ratios):.2f}-{max(ratios):.2f}{sum(r < 1 for r in ratios):>8}/{len(ratios):<5}"
                         + (f" {a[0]['rows']}{'' if same else ' != ' + str(b[0]['rows'])}"
                            if key == keys[0] else ""))
    loads = [r["load"] for v in runs.values() for r in v]
    lines.append(f"load average (1 min) before each child: median {statistics.median(loads):.1f}, "
                 f"range {min(loads):.1f}-{max(loads):.1f}, on {os.cpu_count()} CPUs")
    return "\n".join(lines)


def pooled(files: list[Path]) -> dict[str, list[dict]]:
    """The rounds of several ``--json`` files, per case and tree, one after the other."""
    runs: dict[str, list[dict]] = {}
    for file in files:
        for key, got in json.loads(file.read_text()).items():
            runs.setdefault(key, []).extend(got)
    return runs


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    """Run from the command line; prints every run and the summary, returns the runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="folder holding the earlier reliab package")
    parser.add_argument("--after", type=Path, default=ROOT, help="folder holding the later one (this checkout)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=500_000)
    parser.add_argument("--files", type=int, default=4_000)
    parser.add_argument("--cases", default=",".join(CASES), help=f"some of {','.join(CASES)}")
    parser.add_argument("--json", type=Path, help="also write the runs to this file")
    parser.add_argument("--pool", type=Path, nargs="+", help="no run: the summary of the rounds of these --json files")
    args = parser.parse_args(argv)
    if args.pool:
        runs = pooled(args.pool)
        print(summary(runs, [c for c in CASES if f"{c}/before" in runs]))
        return runs
    if args.before is None:
        parser.error("--before is required (or --pool)")
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        parser.error(f"unknown cases {sorted(unknown)}; known: {', '.join(CASES)}")
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for name, tree in trees.items():
        if not (tree / "reliab" / "__init__.py").is_file():
            parser.error(f"--{name} {tree}: no reliab package there")
    runs = rounds(trees, cases, args.rounds, args.lines, args.files)
    print(summary(runs, cases))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    return runs


if __name__ == "__main__":
    main()
