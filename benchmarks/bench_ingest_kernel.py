"""Throughput of ``reliab.ingest`` on a large kernel log, beside ``grep -c -F`` in the same run.

Run: ``python benchmarks/bench_ingest_kernel.py [--lines 1000000] [--repeat 3] [--seed 7]``
(plain file against ``grep -c -F``; its gzip copy against a bare Python ``gzip`` read)
(with reliab installed, or ``PYTHONPATH=.`` from the repository root)
(``--lines 5000000`` is the full size of the issue).

The log is an rsyslog RFC 3339 file (``2024-06-03T14:02:11.123456+00:00 node0421 kernel: …``)
written once under ``benchmarks/_work/`` (git-ignored): ~1 % ``NVRM: Xid`` lines, ~0.3 %
other signal lines (mlx5, systemd-networkd, nvme, blk, mce, EDAC, AER) and benign noise from
systemd, sshd, CRON and the kernel, some of it containing a prefilter literal (mlx5, nvme)
without being a signal.  After a warm-up read of the file, each tool runs ``--repeat`` times
as a child process; the median wall time is printed with the ratio, and the peak RSS of
each child is read with GNU ``/usr/bin/time -f %M``.  The baseline is ``grep -c -F`` with the
parser's own literal prefilter (``reliab.io.formats.kernel._kmsg.LITERALS``).

Two ratios are printed for reliab: *full process* (start-up, imports and ingest, as a user
running a script sees it) and *in-process* (the ``ingest()`` call alone, timed inside the
child after ``reliab.ingest`` and polars were imported: the fair "ingest wall time").
The 1-minute load average is printed too: on a shared machine every number moves with it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORK = Path(__file__).parent / "_work"
PCI = ("0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00", "0000:9a:00", "0000:ab:00",
       "0000:ba:00", "0000:db:00")
XIDS = ((79, "GPU has fallen off the bus."), (48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."),
        (63, "Row Remapper: New row (0x00000000000003e8) is pending for remapping"),
        (13, "Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address"),
        (119, "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c)."))
OTHER = (
    "kernel: mlx5_core 0000:1a:00.0 ens1f0np0: Link down",
    "systemd-networkd[2385]: ens1f0np0: Lost carrier",
    "kernel: nvme nvme3: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
    "kernel: blk_update_request: I/O error, dev nvme3n1, sector 123456 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
    "kernel: mce: [Hardware Error]: CPU 12: Machine Check: 0 Bank 5: be00000000800400",
    "kernel: EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x12345 offset:0x0 grain:32 syndrome:0x0)",
    "kernel: pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0",
    "kernel: mlx5_core 0000:1a:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, High Temperature",
)
NOISE = (
    "systemd[1]: Started Session 4242 of user root.",
    "sshd[88123]: Accepted publickey for root from 10.1.2.3 port 51234 ssh2: RSA SHA256:abcdefghijklmnop",
    "CRON[12345]: (root) CMD (/usr/lib/health/check.sh >/dev/null 2>&1)",
    "kernel: [UFW BLOCK] IN=eth0 OUT= MAC=00:11:22:33:44:55 SRC=10.0.0.9 DST=10.0.0.1 LEN=60 PROTO=TCP",
    "nvidia-persistenced[3211]: device 0000:18:00.0 - persistence mode enabled.",
    "kernel: mlx5_core 0000:1a:00.0: mlx5_cmd_out_err:838:(pid 268269): ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3)",
    "kernel: nvme nvme0: 32/0/0 default/read/poll queues",
    "systemd-logind[1402]: New session 4242 of user slurm.",
    "kernel: perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750",
)


def write_log(path: Path, n: int, seed: int) -> None:
    """Write an ``n``-line rsyslog kernel log (deterministic for a seed)."""
    rng = random.Random(seed)
    t0 = 1717423331.0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for i in range(n):
            t = t0 + i * 0.05
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1e6) % 1000000:06d}+00:00"
            host = f"node{rng.randrange(1, 2049):04d}"
            u = rng.random()
            if u < 0.01:
                code, text = rng.choice(XIDS)
                msg = f"kernel: NVRM: Xid (PCI:{rng.choice(PCI)}): {code}, pid='<unknown>', name=<unknown>, {text}"
            elif u < 0.013:
                msg = rng.choice(OTHER)
            else:
                msg = rng.choice(NOISE)
            fh.write(f"{stamp} {host} {msg}\n")


def _literals() -> list[str]:
    """The kernel parser's prefilter literals, read in a child so this process stays small.

    (``ru_maxrss`` survives ``exec``: a child forked from a process that imported pandas
    would report the parent's size.)
    """
    code = "from reliab.io.formats.kernel._kmsg import LITERALS; print('\\n'.join(x.decode() for x in LITERALS))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def _child(cmd: list[str], out: list[str] | None = None) -> tuple[float, float | None]:
    """Run ``cmd``; wall seconds and peak RSS in MiB of that command (its stdout to ``out``).

    Peak RSS comes from GNU ``/usr/bin/time -f %M`` when it exists (``None`` otherwise):
    a child started from Python inherits this process's peak RSS as a floor, since
    ``ru_maxrss`` survives ``exec``, while ``time`` forks the command from a tiny process.
    Output goes to a temporary file, not ``/dev/null``: GNU grep stops at the first match
    when it writes to /dev/null.
    """
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    with tempfile.TemporaryFile() as sink, tempfile.NamedTemporaryFile("r") as rss:
        full = [gnu_time, "-f", "%M", "-o", rss.name, *cmd] if gnu_time else cmd
        start = time.perf_counter()
        code = subprocess.call(full, stdout=sink)
        wall = time.perf_counter() - start
        text = rss.read().strip().splitlines()
        if out is not None:
            sink.seek(0)
            out.append(sink.read().decode())
    if code not in (0, 1):  # grep exits 1 when nothing matches
        raise RuntimeError(f"{cmd[0]} failed with status {code}")
    return wall, (int(text[-1]) / 1024 if text and text[-1].isdigit() else None)


def _rss(runs: list[tuple[float, float | None]]) -> str:
    values = [r for _, r in runs if r is not None]
    return f"{max(values):.0f} MiB" if values else "n/a"


def _gzip_of(path: Path) -> Path:
    """``path`` compressed with gzip level 6 beside it (written once)."""
    out = path.with_suffix(path.suffix + ".gz")
    if not out.exists():
        subprocess.run(["gzip", "-6", "-k", "-f", str(path)], check=True)
    return out


def _row(name: str, runs: list[tuple[float, float | None]], lines: int, base: float | None) -> str:
    wall = statistics.median(w for w, _ in runs)
    ratio = f"{wall / base:5.2f}x" if base else "  -   "
    return (f"{name:<28} {wall:7.2f} s  {lines / wall / 1e6:6.2f} M lines/s  ratio {ratio}"
            f"  peak RSS {_rss(runs)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    path = WORK / f"kernel-{args.lines}-{args.seed}.log"
    if not path.exists():
        write_log(path, args.lines, args.seed)
    packed = _gzip_of(path)
    for warm in (path, packed):  # warm the page cache
        with open(warm, "rb") as fh:
            while fh.read(1 << 24):
                pass
    grep = ["grep", "-c", "-F", *(x for lit in _literals() for x in ("-e", lit))]
    code = ("import sys; from reliab.io import ingest; "
            "r = ingest(sys.argv[1], source='kernel'); print(len(r.signals))")
    timed = ("import sys, time; from reliab.io import ingest; import polars; "
             "t = time.perf_counter(); r = ingest(sys.argv[1], source='kernel'); "
             "print(time.perf_counter() - t, len(r.signals))")
    bare_gz = ("import gzip, sys\nwith gzip.open(sys.argv[1], 'rb') as f:\n"
               "    while f.read(1 << 23):\n        pass")
    n = args.repeat
    runs_g = [_child([*grep, str(path)]) for _ in range(n)]
    runs_i = [_child([sys.executable, "-c", code, str(path)]) for _ in range(n)]
    runs_z = [_child([sys.executable, "-c", bare_gz, str(packed)]) for _ in range(n)]
    runs_iz = [_child([sys.executable, "-c", code, str(packed)]) for _ in range(n)]
    runs_0 = [_child([sys.executable, "-c", "import reliab.io"]) for _ in range(n)]
    said: list[str] = []
    said_z: list[str] = []
    for _ in range(n):
        _child([sys.executable, "-c", timed, str(path)], said)
        _child([sys.executable, "-c", timed, str(packed)], said_z)
    t_in = statistics.median(float(x.split()[0]) for x in said)
    t_inz = statistics.median(float(x.split()[0]) for x in said_z)
    t_g = statistics.median(w for w, _ in runs_g)
    t_z = statistics.median(w for w, _ in runs_z)
    t_0 = statistics.median(w for w, _ in runs_0)
    t_i = statistics.median(w for w, _ in runs_i)
    t_iz = statistics.median(w for w, _ in runs_iz)
    size = path.stat().st_size / 2**20
    print(f"kernel log: {args.lines:,} lines, {size:.0f} MiB ({path}); gzip {packed.stat().st_size / 2**20:.0f} MiB")
    print(f"wall times: median of {n} runs, each a fresh process; ratios against the baseline above")
    print(_row("grep -c -F (baseline)", runs_g, args.lines, None))
    print(_row("reliab ingest, plain", runs_i, args.lines, t_g))
    print(_row("python gzip read (baseline)", runs_z, args.lines, None))
    print(_row("reliab ingest, gzip", runs_iz, args.lines, t_z))
    print(_row("python -c 'import reliab.io'", runs_0, args.lines, None))
    print(f"full process: plain {t_i / t_g:.2f}x grep, gzip {t_iz / t_z:.2f}x python gzip read")
    print(f"in-process (ingest() call, imports warm): plain {t_in:.2f} s = {t_in / t_g:.2f}x grep,"
          f" gzip {t_inz:.2f} s = {t_inz / t_z:.2f}x python gzip read")
    print(f"without start-up + import: plain {(t_i - t_0) / t_g:.2f}x grep,"
          f" gzip {(t_iz - t_0) / t_z:.2f}x python gzip read")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
