"""Throughput of ``reliab.ingest`` on a large kernel log, beside ``grep -c -F`` in the same run.

Run: ``python benchmarks/bench_ingest_kernel.py [--lines 1000000] [--repeat 3] [--seed 7] [--big-gb 5]``
(plain file against ``grep -c -F``; its gzip copy against a bare Python gzip read; peak
memory of one ingest of a ``--big-gb`` GB file) or as part of ``python -m benchmarks``
(with reliab installed, or ``PYTHONPATH=.`` from the repository root).

The log is an rsyslog RFC 3339 file (``2024-06-03T14:02:11.123456+00:00 node0421 kernel: …``)
written once under ``benchmarks/_work/`` (git-ignored): ~1 % ``NVRM: Xid`` lines, ~0.3 %
other signal lines (mlx5, systemd-networkd, nvme, blk, mce, EDAC, AER), ~3.7 % benign lines
that hold a prefilter literal without being a failure (EDAC and AER driver start-up lines),
so that 5 % of the lines pass the prefilter, and benign noise from systemd, sshd, CRON and
the kernel.  After a warm-up read of the file, each tool runs ``--repeat`` times as a child
process; the median wall time is reported with the ratio, and the peak RSS of each child
is read with GNU ``/usr/bin/time -f %M``.  The baseline is ``grep -c -F`` with the parser's
own literal prefilter (``reliab.io.formats.kernel._kmsg.LITERALS``).

Two ratios are reported for reliab: *full process* (start-up, imports and ingest, as a user
running a script sees it) and *in-process* (the ``ingest()`` call alone, timed inside the
child after ``reliab.ingest`` and polars were imported: the fair "ingest wall time").
The big file is the log repeated up to ``--big-gb`` GB (deleted afterwards); its peak RSS
has a target of 400 MB.  The 1-minute load average is reported too: on a shared
machine every number moves with it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, child, median_child, table  # noqa: E402

SECTION = "kernel ingest"
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
#: benign lines holding a prefilter literal (Linux drivers/edac/skx_base.c, drivers/pci/pcie/aer.c start-up)
BENIGN_LITERAL = (
    "kernel: EDAC MC0: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0: DEV 0000:3a:0a.0 (INTERRUPT)",
    "kernel: pcieport 0000:17:01.0: AER: enabled with IRQ 26",
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
            elif u < 0.05:
                msg = rng.choice(BENIGN_LITERAL)
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


def _gzip_of(path: Path) -> Path:
    """``path`` compressed with gzip level 6 beside it (written once)."""
    out = path.with_suffix(path.suffix + ".gz")
    if not out.exists():
        subprocess.run(["gzip", "-6", "-k", "-f", str(path)], check=True)
    return out


def _big(path: Path, gb: float) -> Path:
    """``path`` repeated up to ``gb`` GB (written once, beside it)."""
    out = path.with_name(f"{path.stem}-x{gb:g}GB.log")
    if not out.exists():
        target = gb * 1e9
        with open(out, "wb") as dst:
            while dst.tell() < target:
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, dst, 1 << 24)
    return out


def run(lines: int = 1_000_000, repeat: int = 3, seed: int = 7, big_gb: float = 5.0) -> list[Figure]:
    """Plain and gzip ingest beside grep and a bare gzip read; peak memory on a ``big_gb`` GB file."""
    path = WORK / f"kernel5-{lines}-{seed}.log"
    if not path.exists():
        write_log(path, lines, seed)
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
    t_g, _, counted = median_child([*grep, str(path)], repeat)
    t_i, rss_i, _ = median_child([sys.executable, "-c", code, str(path)], repeat)
    t_z, _, _ = median_child([sys.executable, "-c", bare_gz, str(packed)], repeat)
    t_iz, rss_iz, _ = median_child([sys.executable, "-c", code, str(packed)], repeat)
    t_0, _, _ = median_child([sys.executable, "-c", "import reliab.io"], repeat)
    _, _, said = median_child([sys.executable, "-c", timed, str(path)], repeat)
    _, _, said_z = median_child([sys.executable, "-c", timed, str(packed)], repeat)
    t_in = statistics.median(float(x.split()[0]) for x in said)
    t_inz = statistics.median(float(x.split()[0]) for x in said_z)
    share = int(counted[0].split()[0]) / lines
    size = path.stat().st_size / 2**20
    mlines = f"{lines / 1e6:g}M lines"
    figures = [
        Figure(SECTION, f"grep -c -F, {mlines} ({size:.0f} MiB)", t_g, "s",
               note=f"{share:.1%} of the lines pass the prefilter; {lines / t_g / 1e6:.1f} M lines/s"),
        Figure(SECTION, "ingest plain, full process", t_i, "s", "grep -c -F", t_g,
               note=f"peak RSS {rss_i or 0:.0f} MiB; start-up + import alone {t_0:.2f} s"),
        Figure(SECTION, "ingest plain, ingest() call", t_in, "s", "grep -c -F", t_g,
               note=f"{lines / t_in / 1e6:.2f} M lines/s"),
        Figure(SECTION, "ingest gzip, full process", t_iz, "s", "python gzip read", t_z,
               note=f"peak RSS {rss_iz or 0:.0f} MiB"),
        Figure(SECTION, "ingest gzip, ingest() call", t_inz, "s", "python gzip read", t_z),
    ]
    if big_gb > 0:
        big = _big(path, big_gb)
        try:
            t_b, rss_b = child([sys.executable, "-c", code, str(big)])
            t_bg, _ = child([*grep, str(big)])
        finally:
            big.unlink(missing_ok=True)
        gb = big_gb
        figures += [Figure(SECTION, f"peak RSS, ingest of {gb:g} GB plain", rss_b or float("nan"), "MiB",
                           target="< 400 MB", met=None if rss_b is None else rss_b * 2**20 < 400e6,
                           note=f"{t_b:.0f} s ({gb * 1e9 / t_b / 2**20:.0f} MiB/s)"),
                    Figure(SECTION, f"ingest of {gb:g} GB plain, full process", t_b, "s", "grep -c -F", t_bg)]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--big-gb", type=float, default=5.0, help="size of the peak-memory input (0: skip)")
    args = parser.parse_args()
    print(table(run(args.lines, args.repeat, args.seed, args.big_gb)))
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
