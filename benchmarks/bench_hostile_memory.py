"""Peak RSS of ``reliab.ingest`` on the decompression bombs and pathological files of the
hostile-input tests.

Run: ``python benchmarks/bench_hostile_memory.py [--scale 1.0] [--only NAME ...]``
(from the repository root, with reliab installed; ``--scale 0.1`` for a quick look).

Each bomb is written as a stream under a temporary folder (``tests/_bombs.py``: nothing is
held in memory, gzip bombs repeat full-flushed deflate blocks), then ingested in a fresh
interpreter that reports its own peak RSS (``ru_maxrss``) and time.  The baseline, measured
in the same run, is a fresh interpreter that only imports reliab, polars and pyarrow:
what every ingest costs before reading a byte.  Target: every bomb under 600 MB.  The
machine may be shared: times move with the load (the 1-minute load average is printed);
peak RSS does not.

Beside the bombs: ``sacct_1m_jobs`` (with the bytes per job above the baseline and the peak
that extrapolates to 10M jobs) and ``reliab report`` on a 5M-line kernel log, every other line
an Xid (:data:`REPORTS`), held in memory (``--no-stream``) and streamed (``--stream``).

Where the 1M-job sacct case spends its memory (peak RSS above the RSS at the stage's start,
VmHWM reset per stage, MiB; 2026-12-06 before -> after): reader 585 -> 582, job merge 98 -> 75,
ended jobs 279 -> 57 (24 kept), ``decide`` 290 (184 kept) -> 88, outcomes table 257 -> 16,
policy notes 13 -> 19, costs 363 (allocation timeline) -> 333, whole finishing step
1,334 -> 754.  Then (2026-12-06, same probe, in-process peak 1,404 -> 1,142 MiB): costs 333
-> 70, reading only the allocations of the job ids the interruptions, user failures and
checkpoint lines name and of their chains' next allocations.  The peak is now where the costs
start (RSS 1,071 MiB: the jobs and signals tables, the outcomes, and the reader's freed memory
the allocators keep); the reader's 582 MiB (~610 B/job, of which the final jobs and signals
tables are ~370 B/job) is the next lever.  Then (2026-12-06, same machine, loaded: 1,170 ->
925-943 MiB, 1,139 -> 882-902 B/job): ``sacct -P`` read in columns, in 1 MiB blocks with
polars (:mod:`reliab.io.formats.slurm._columnar`); the reader alone on the 1M-job file takes
~430 MiB above the interpreter (was 594; its jobs and signals tables are 347 MiB: 364 B/job,
the floor of this table schema) and 5.9 s of CPU (was 34.7 s).  The peak is now in the costs
(``with_costs``: RSS ~880 MiB at its start after ``job_outcomes`` grew it from ~630, +60-80
MiB inside it); Arrow's ``release_unused`` and glibc's ``malloc_trim`` there give 150 MiB back
(871 -> 721 MiB) but the costs grow to the same peak, so they are only called after a big
file read line by line.  < 500 B/job needs the attribution and costs to hold less than
~80 B/job on top of the tables.  Then (2026-12-06, A/B in one run: 943-944 -> 834-870 MiB, 901 ->
787-825 B/job; baseline 84 MiB): no Python string per job in the attribution and the costs
(``numpy.full`` with a ``str`` fill value made one copy of "not_interruption" per ended job;
end states, signal codes and job ids factorized from the Arrow columns; one shared
attribution label per rule; ``train:*`` rows found without ``astype("string")``, which turned
the 1M Arrow signal names into Python strings, twice; ``to_datetime`` without its cache of
distinct values).  Per stage (RSS above the stage's
start, MiB, before -> after): ``job_outcomes`` +295 -> +100-215, ``with_costs`` +70 -> +25-65,
the Python heap of ``job_outcomes`` at its peak 260 -> ~175 B per added job
(``tests/test_attribution_memory.py``); every table frame-equal on a 200k-job file and on the
sample ``data/``.  Where the 834-870 MiB are now: the reader's jobs and signals tables 111 -> 538
(+427); their pandas conversion +67; repeated jobs +30; the signals' sort by time copies the
signals table (hwm ~730); then the attribution and costs on top of the tables, from 580-680
(as much of the freed memory as glibc kept) to 820-850 (ended-jobs and outcomes frames, per-job
codes and masks; the costs' int64 keys of every allocation, +25-65).  < 500 B/job
(peak < ~560 MiB) is under the tables (347 MiB) + the interpreter + the reader's transients
alone: it needs a lighter table schema (the two ``origin`` columns are 70 B/job; the
``slurm:completed`` signal of every completed job ~90 B/job; 8-byte ``large_string`` offsets
4 B per text cell), a decision on the public dtypes and rows, not done here.
Then (2026-12-06, A/B interleaved, 3 fresh interpreters each, medians; 2 shared cores, load ~9):
in memory 861 [854-862] -> 806 [805-832] MiB (815 -> 757 B/job), ``output=`` 848 [838-865] ->
839 [824-862]: repeated jobs counted with ``pyarrow.compute.count_distinct`` (stage +34-74 ->
+1-39), the attribution's candidate rows, signals and evidence freed before the outcomes are
built (attribution ends at 752-768, was 788-792), the costs' allocation keys built in place one
int64 array at a time (tracemalloc heap 109 -> 95 B/job, ``tests/test_big_job_tables.py``);
every table and note frame-equal on a 200k-job file and on the sample ``data/``, in memory and
with ``output=``.  With ``output=`` the peak is now before the finishing step: writing the held
job files (RSS ~550 -> 810-843) and gathering the attribution's signals (~615 -> 795-862).

10M jobs (2026-12-06, the code before the A/B above; the same generator, 1.68 GB file; one fresh
interpreter per mode started outside the checkout; baseline 86 MiB; 2 shared cores, load ~9):
in memory 6,474 MiB peak (670 B/job above the baseline), 565 s wall, 255 s CPU; ``output=``
6,628 MiB (686 B/job), 615 s wall, 312 s CPU.  The probe's ~20 GB (2.2 KB/job) is now 6.3-6.5
GiB; the 1M-job per-job figures hold at 10M (no super-linear term).

``sacct_1m_jobs_output``: the same file with ``output=`` (the job files are held to the end,
written, then attribution gathers the signals it can use).  Peak RSS (MiB, fresh
interpreter, baseline 84; 2026-12-06, 2 shared cores) before -> after, in memory alongside:

=========  ==============  ==============  =========
jobs       output= before  output= after   in memory
=========  ==============  ==============  =========
250,000    595             376-384         372-384
500,000    972             569-579         552-573
1,000,000  1,644-1,690     862-888         858-870
=========  ==============  ==============  =========

Slope 250k -> 1M: 1,530 -> ~680-710 B/job (in memory ~690).  Per stage at 1M (RSS at the stage's
start -> its peak, VmHWM reset per stage; ``benchmarks/bench_output_stages.py``), before -> after: writing the held job file 569 ->
1,276 -> 568 -> 850 (the ``_file`` column added by a copy of each table, then every row of
the one group selected by a boolean mask, another copy of the jobs: ~200 MiB); reading
back the signals for attribution 1,165 -> 1,523 -> 631 -> 814 (read back from Parquet through
one Python string per text cell, ~540 B/row, then reordered twice in pandas; now the job
files' signals are taken from memory and reordered once, in Arrow, column by column);
``commit`` 1,087 -> 1,644 -> 661 -> 713 (the manifest held one ``[start, length]`` list per
row, as the rows of a job table alternate between end dates: 1M jobs made a 73 MB
manifest, dumped by the pure-Python indenting JSON encoder; now the positions are gaps,
zlib-compressed: 25 KB; and the freed memory is released first).  The ``finish`` step
removes repeated jobs a second time (nothing left to find: +0-77 MiB, transient, 0.1-0.4 s)
and attributes and costs as in memory (+110-190, +40-70); its costs are now the peak.  What remains per job in ``output=`` mode is what the run's result and
attribution need: the jobs table (~210 B/job; the result holds it) and, for a scheduler
export, every job's end-state signal (~140 B/job in Arrow: each lies in its own job's
window), plus the attribution's and the costs' working memory, so a sacct-only input peaks
as in memory; the saving of ``output=`` is on the signals no job window meets (kernel logs,
telemetry), which are never held.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import _bombs as bombs  # noqa: E402 - the writers shared with the tests
import _hostile_pickles as hostile_pickles  # noqa: E402

GB = 10**9
#: name -> (file name, source, writer, size at scale 1, what was measured before the fix)
BOMBS = {
    "zstd_newlines": ("node0001.log.zst", "kernel", bombs.zstd_newlines, 8_300_000_000,
                      "320 KB zstd of newlines: 8.3 GB"),
    "lanl_blank_lines": ("lanl.csv.gz", "lanl", bombs.lanl_blank_lines, 100_000_000,
                         "98 KB LANL file of blank lines: > 14 GB"),
    "telemetry_1gb_field": ("gpus.csv.gz", "telemetry_csv", bombs.telemetry_long_field, GB,
                            "telemetry CSV read whole"),
    "sacct_json_1gb_string": ("sacct.json.gz", "sacct_json", bombs.sacct_json_unclosed, GB,
                              "sacct JSON read whole"),
    "ticket_1gb_unclosed_field": ("incidents.csv.gz", "tickets", bombs.tickets_unclosed, GB,
                                  "ticket with one unclosed 1 GB field"),
    "quarantine_1gb_malformed_xid": ("node0002.log.gz", "kernel", bombs.malformed_xid_lines, GB,
                                     "1 GB of malformed Xid lines: 8.8 GB"),
    "sparse_5gb_after_valid_line": ("node0003.log", "kernel", bombs.sparse_after_line, 5 * GB,
                                    "5 GB sparse file after a valid header: 10 GB"),
    "fr_10m_nones": ("nccl_trace_rank_0", "flight_recorder", bombs.fr_nones, 10_000_000,
                     "flight-recorder entry list of 10M None: GBs"),
    "fr_exponential_repr": ("nccl_trace_rank_1", "flight_recorder", bombs.fr_exponential, 64,
                            "self-referencing list with an exponential repr"),
    "gzip_2e32_newlines": ("node0004.log.gz", "kernel", None, (1 << 32) + 10,
                           "4.27 MB gzip: lines after 2**32 dropped"),
    "fr_deep_tuple_key": ("nccl_trace_rank_2", "flight_recorder", lambda p, n: p.write_bytes(
        hostile_pickles.deep_tuple_key(n)), 2_000_000, "2 MB dump, key a tuple 2M deep: SIGSEGV"),
    "fr_dag_tuple_key": ("nccl_trace_rank_3", "flight_recorder", lambda p, n: p.write_bytes(
        hostile_pickles.dag_tuple_key(n)), 64, "1 KB dump, key a 64-level tuple DAG: hang"),
    "fr_memo_fanout": ("nccl_trace_rank_4", "flight_recorder", lambda p, n: p.write_bytes(
        hostile_pickles.memo_fanout(n)), 1_000_000, "1M memo references to one entry: 1.1 GB"),
    "sacct_1m_jobs": ("sacct.txt", "sacct", lambda p, n: sacct_jobs(p, n), 1_000_000,
                      ("1M sacct jobs (plain): 2,140 MiB peak, 219 B/job in the final table; reader in 10,000-row"
                      " chunks, lighter allocation merges: 1,763 MiB (reader alone 2,270 -> 635 B/job); 2026-12-06:"
                      " 1,745 MiB (1,742 B/job) -> 1,503 MiB (1,488 B/job): no full copy of the ended jobs, one"
                      " sentence per state, Arrow strings kept, costs after attribution on key columns only; then 1,244 MiB"
                      " (1,217 B/job): costs on the allocations they read only; 2026-12-06, loaded machine: 1,170 MiB"
                      " (1,139 B/job) -> 943 MiB (902 B/job): the text read in columns (reader 594 -> ~430 MiB,"
                      " CPU 34.7 -> 5.9 s); then 834-870 MiB (787-825 B/job): no Python string per job in the"
                      " attribution and costs; 861 -> 806 MiB (815 -> 757 B/job): job ids counted in Arrow, attribution"
                      " intermediates freed early, cost keys in place; 10M jobs: 6,474 MiB (670 B/job), 565 s")),
}
#: read with ``output=`` (the ``--stream`` route): name -> as in BOMBS
STREAMED = {
    "zstd_26m_xid_lines": ("node0005.log.zst", "kernel", lambda p, n: bombs.zstd_stream(
        p, [(bombs.XID * 10_000, max(1, n // 10_000))]), 26_000_000,
        ("260 KB zstd of 26M Xid lines: 3.5 GiB (3M lines: 3,131 MiB); 2026-12-06: 1,063 -> 532 MiB (the rows'"
         " positions at the end of a streamed file made piece by piece, line numbers kept as 4-byte offsets;"
         " at 2.6M lines plain and zstd already peaked alike, 348 and 356 MiB)")),
    "sacct_1m_jobs_output": ("sacct.txt", "sacct", lambda p, n: sacct_jobs(p, n), 1_000_000,
                             ("the 1M sacct jobs of sacct_1m_jobs with output=: 1,644 MiB (in memory: 870); 2026-12-06:"
                              " 862-888 MiB (250k jobs 595 -> 376, 500k 972 -> 569): a compact manifest, the job"
                              " files written without copies, their signals kept for attribution, not read back; then 848 -> 839"
                              " MiB; 10M jobs: 6,628 MiB (686 B/job), 615 s")),
}

#: ``reliab report`` on a kernel log of ``n`` lines, every other one an Xid (:func:`xid_noise`):
#: name -> (lines at scale 1, report options, what was measured before the fix)
REPORTS = {
    "report_5m_xid_lines_held": (5_000_000, ["--no-stream"], "582 MB log, 2.5M Xid rows: 1,622 MiB (unchanged)"),
    "report_5m_xid_lines_streamed": (5_000_000, ["--stream"], "(no streaming before): 1,622 MiB; now 389 MiB"),
}


def xid_noise(path: Path, n: int) -> None:
    """``n`` rsyslog lines, every other one an Xid (4 codes, 2,048 hosts), 20 lines a second."""
    noise = "systemd[1]: Started Session 4242 of user root."
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            s = 1717200000 + i // 20
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{i % 20 * 50000:06d}+00:00"
            msg = (f"kernel: NVRM: Xid (PCI:0000:3a:00): {(79, 48, 63, 13)[i // 2 % 4]}, pid=2000002, "
                   "name=pt_main_thread, GPU has fallen off the bus." if i % 2 else noise)
            fh.write(f"{stamp} node{i * 7919 % 2048:04d} {msg}\n")


_REPORT_CHILD = """
import json, sys, time
from reliab.cli import app
started = time.perf_counter()
try:
    app(sys.argv[1:])
except SystemExit as exc:
    if exc.code:
        raise
with open("/proc/self/status") as fh:
    peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
print(json.dumps({"rss_mb": peak, "seconds": time.perf_counter() - started}))
"""


def run_report(folder: Path, out: Path, options: list[str]) -> dict:
    """``reliab report folder`` in a fresh interpreter: its peak RSS (MiB) and time."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-c", _REPORT_CHILD, "report", str(folder), "--out", str(out),
                           "--no-pdf", "-q", *options], capture_output=True, text=True, timeout=7200, env=env,
                          check=False)
    if proc.returncode != 0:
        raise AssertionError(f"report of {folder} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sacct_jobs(path: Path, n: int) -> None:
    """``n`` pipe-separated sacct job rows (``sacct -P`` with the fields of the sample)."""
    head = "JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|Restarts|AllocTRES\n"
    states = ["COMPLETED"] * 8 + ["FAILED", "NODE_FAIL", "TIMEOUT", "CANCELLED by 123"]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head)
        for i in range(n):
            d, h, k = 1 + i % 27, i % 24, 1 << (i % 4)
            fh.write(f"{5_000_000 + i}|{5_000_000 + i}|job-{i % 500}|user{i % 300}|train|{states[i % 12]}|0:0|"
                     f"2024-06-{d:02d}T{h:02d}:00:00|2024-06-{d:02d}T{h:02d}:05:00|2024-06-{d:02d}T{h:02d}:55:00|"
                     f"00:50:00|{k}|node[{i % 2000:04d}-{i % 2000 + k - 1:04d}]|0|cpu=224,gres/gpu={8 * k},node={k}\n")


_STREAMED_CHILD = """
import json, sys, time
import reliab
def peak_mb():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
started = time.perf_counter()
res = reliab.ingest(sys.argv[1], source=sys.argv[2], output=sys.argv[3])
acc = res.accounting.iloc[0]
print(json.dumps({"rss_mb": peak_mb(), "seconds": time.perf_counter() - started, "lines": int(acc["lines"]),
                  "parsed": int(acc["parsed"]), "irrelevant": int(acc["irrelevant"]), "malformed": int(acc["malformed"])}))
"""


def run_streamed(path: Path, source: str, out: Path) -> dict:
    """Ingest ``path`` with ``output=out`` in a fresh interpreter: its peak RSS and accounting."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-c", _STREAMED_CHILD, str(path), source, str(out)],
                          capture_output=True, text=True, timeout=7200, env=env, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"ingest of {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every bomb size (default 1)")
    parser.add_argument("--only", nargs="*", default=None, help="bomb names to run (default all)")
    args = parser.parse_args()
    names = args.only or [*BOMBS, *STREAMED, *REPORTS]
    base = bombs.baseline_rss()
    print(f"baseline: fresh interpreter importing reliab, polars, pyarrow: peak RSS {base:.0f} MiB")
    print(f"{'bomb':32s} {'on disk':>12s} {'content':>15s} {'peak RSS':>10s} {'x base':>7s} {'time':>8s}"
          "  accounting (lines/parsed/irrelevant/malformed)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name in REPORTS:
                _report_case(name, Path(tmp), args.scale, base)
                continue
            file_name, source, writer, size, _ = BOMBS[name] if name in BOMBS else STREAMED[name]
            path = Path(tmp) / file_name
            size = max(1, int(size * args.scale))
            if name in STREAMED:
                writer(path, size)
                content, unit = size, ("jobs" if name.startswith("sacct_") else "lines") + ", output="
                out = run_streamed(path, source, Path(tmp) / f"{name}.out")
            elif writer is None:
                content, unit = bombs.newline_gzip(path, size, bombs.XID * 5), "lines"
                out = bombs.run_child(path, source, timeout=7200, spy=True)
            else:
                writer(path, size)
                content, unit = size, ("items" if name.startswith("fr_") else "jobs" if name.startswith("sacct_")
                                       else "bytes")
                out = bombs.run_child(path, source, timeout=7200)
            acc = f"{out['lines']:,}/{out['parsed']:,}/{out['irrelevant']:,}/{out['malformed']:,}"
            extra = f" polars route: {out['polars_route']}" if "polars_route" in out else ""
            print(f"{name:32s} {path.stat().st_size:>12,d} {content:>15,d} {out['rss_mb']:>7.0f} MiB"
                  f" {out['rss_mb'] / base:>6.1f}x {out['seconds']:>7.1f}s  {acc} ({unit}){extra}", flush=True)
            if name.startswith("sacct_"):
                per_job = (out["rss_mb"] - base) * 2**20 / size
                print(f"{'':32s} {per_job:,.0f} B/job above the baseline; 10M jobs: ~{(base * 2**20 + per_job * 10_000_000) / 2**30:,.1f} GiB",
                      flush=True)
            path.unlink()
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
          f" ({time.strftime('%Y-%m-%d %H:%M')})")


def _report_case(name: str, tmp: Path, scale: float, base: float) -> None:
    """One ``reliab report`` case of :data:`REPORTS`: the log written, reported, deleted."""
    lines, options, _ = REPORTS[name]
    lines = max(2, int(lines * scale))
    folder = tmp / f"{name}.logs"
    folder.mkdir()
    xid_noise(folder / "kern.log", lines)
    size = (folder / "kern.log").stat().st_size
    out = run_report(folder, tmp / f"{name}.out", options)
    print(f"{name:32s} {size:>12,d} {lines:>15,d} {out['rss_mb']:>7.0f} MiB {out['rss_mb'] / base:>6.1f}x"
          f" {out['seconds']:>7.1f}s  (lines, reliab report {' '.join(options)})", flush=True)
    shutil.rmtree(folder)
    shutil.rmtree(tmp / f"{name}.out", ignore_errors=True)


if __name__ == "__main__":
    main()
