"""Folder ingest of many small files beside ``grep -r``: the bundled sample, a 20,000-file folder
and 50,000 two-line files.

Run: ``python benchmarks/bench_ingest_folder.py [--files 20000] [--tiny 50000] [--runs 3] [--no-dask]``
or as part of ``python -m benchmarks``.

Per folder, in the same run: ``grep -r -c -F`` with the kernel reader's literal prefilter
(a child process: the bare cost of opening and scanning every file), ``reliab.ingest`` of
the folder in this process (local engine; discovery, sniffing, reading, validation and
attribution), and ``engine="dask"`` on a LocalCluster of 2 single-threaded workers (started
before timing).  Each value is the median of ``--runs`` runs after a warm-up.  The
20,000-file folder is :func:`reliab.write_fleet` with one host per syslog file (2,000 hosts,
10 days, no telemetry).  The two-line files (:func:`tiny_files`, 1,000 per folder) are rsyslog
kernel captures of one Xid line and one noise line each: the per-file cost alone (issue
target: about 1 ms per small file, in proportion to the bundled sample's 1.5 s for 1,455
files).  Their peak RSS is measured in a child process (GNU ``/usr/bin/time``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, child, median_child, median_time, report  # noqa: E402

SECTION = "folder ingest"


def many_files(files: int = 20_000) -> Path:
    """A folder of about ``files`` small syslog files (written once under benchmarks/_work)."""
    from reliab.datasets import write_fleet

    days = 10
    folder = WORK / f"folder-{files}"
    done = folder / "logs" / ".complete"
    if not done.exists():
        write_fleet(folder, n_gpus=8 * (files // days), days=days, hosts_per_pod=1, telemetry=False, seed=11)
        done.write_text("ok\n")
    return folder / "logs"


def tiny_files(files: int = 50_000) -> Path:
    """A folder of ``files`` two-line kernel logs, 1,000 per sub-folder (written once under benchmarks/_work)."""
    folder = WORK / f"tiny-{files}"
    done = folder / ".complete"
    if not done.exists():
        for k in range(files):
            sub = folder / f"rack{k // 1000:03d}"
            if k % 1000 == 0:
                sub.mkdir(parents=True, exist_ok=True)
            host = f"node{k:05d}"
            (sub / f"{host}.log").write_text(
                f"2024-06-03T14:02:{k % 60:02d}.000000+00:00 {host} kernel: NVRM: Xid (PCI:0000:18:00): 79,"
                " pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
                f"2024-06-03T14:03:{k % 60:02d}.000000+00:00 {host} systemd[1]: Started Session {k} of user root.\n")
        done.write_text("ok\n")
    return folder


def _literals() -> list[str]:
    code = "from reliab.io.formats.kernel._kmsg import LITERALS; print('\\n'.join(x.decode() for x in LITERALS))"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()


def _one(label: str, folder: Path, runs: int, client: object | None, rss: bool = False) -> list[Figure]:
    import reliab

    n = sum(1 for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    grep = ["grep", "-r", "-c", "-F", *(x for lit in _literals() for x in ("-e", lit)), str(folder)]
    t_grep, _, _ = median_child(grep, runs)
    t_local = median_time(lambda: reliab.ingest(folder), runs)
    note = f"{n / t_local:,.0f} files/s, {t_local / n * 1e3:.2f} ms per file"
    if rss:
        code = "import sys, reliab; reliab.ingest(sys.argv[1])"
        _, peak = child([sys.executable, "-c", code, str(folder)])
        note += f"; peak RSS {peak or float('nan'):.0f} MiB (child process)"
    out = [Figure(SECTION, f"grep -r -c -F, {label} ({n:,} files)", t_grep, "s"),
           Figure(SECTION, f"ingest {label}, local engine", t_local, "s", "grep -r", t_grep, note=note,
                  extra={"files": n, "ms_per_file": t_local / n * 1e3})]
    if client is not None:
        t_dask = median_time(lambda: reliab.ingest(folder, engine="dask", client=client), runs)
        out.append(Figure(SECTION, f"ingest {label}, dask 2 workers", t_dask, "s", "local engine", t_local))
    return out


def run(files: int = 20_000, runs: int = 3, tiny: int = 50_000, dask: bool = True) -> list[Figure]:
    """The bundled sample, a ``files``-file folder and ``tiny`` two-line files (0: skipped)."""

    if not dask:
        return _folders(files, runs, tiny, None)
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        return _folders(files, runs, tiny, client)


def _folders(files: int, runs: int, tiny: int, client: object | None) -> list[Figure]:
    import reliab

    out = _one("bundled sample", reliab.sample_path(), runs, client)
    sample = out[1]
    out[1] = Figure(sample.section, sample.name, sample.value, sample.unit, sample.baseline, sample.baseline_value,
                    target="< 1.5 s", met=sample.value < 1.5, note=sample.note, extra=sample.extra)
    if files:
        out += _one(f"{files:,}-file folder", many_files(files), runs, client)
    if tiny:
        out += _one(f"{tiny:,} two-line files", tiny_files(tiny), runs, None, rss=True)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run from the command line; prints the table and returns the figures as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--tiny", type=int, default=50_000, help="number of two-line files (0: skip)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-dask", action="store_true", help="local engine only")
    args = parser.parse_args(argv)
    figures = run(args.files, args.runs, args.tiny, dask=not args.no_dask)
    return report(figures)


if __name__ == "__main__":
    main()
