"""Throughput of ``reliab.ingest`` on a large kernel log, beside ``grep -c -F`` in the same run.

Run: ``python benchmarks/bench_ingest_kernel.py [--lines 1000000] [--repeat 3] [--seed 7]
[--mix realistic|synthetic] [--big-lines 5000000]`` (plain file against ``grep -c -F``; its
gzip copy against a bare Python gzip read; peak memory of one ingest of the log repeated to
``--big-lines`` lines) or as part of ``python -m benchmarks`` (with reliab installed, or
``PYTHONPATH=.`` from the repository root).

The log is an rsyslog RFC 3339 file (``2024-06-03T14:02:11.123456+00:00 node0421 kernel: …``)
written once under ``benchmarks/_work/`` (git-ignored).  The *realistic* mix
(:func:`write_realistic_log`, the default) is what a GPU fleet's kernel log holds: ~5 % of
the lines pass the prefilter, most of them EDAC correctable-error storms, then Xid, SXid
reports, AER corrected-error reports, MCE, NVMe and mlx5 lines; the noise shares words with
them (non-Xid NVRM lines, mlx5 command chatter, nvme queue lines) besides systemd, sshd,
CRON and audit lines.  The older *synthetic* mix (:func:`write_log`): ~1 % ``NVRM: Xid``
lines, ~0.3 % other signal lines, ~3.7 % benign lines holding a literal (EDAC and AER
start-up lines).  After a warm-up read of the file, each tool runs ``--repeat`` times as a child
process; the median wall time is reported with the ratio, and the peak RSS of each child
is read with GNU ``/usr/bin/time -f %M``.  The baseline is ``grep -c -F`` with the parser's
own literal prefilter (``reliab.io.formats.kernel._kmsg.LITERALS``).

Three ratios are reported for reliab: *full process* (start-up, imports and ingest, as a user
running a script sees it), *in-process* (the ``ingest()`` call alone, timed inside the child
after ``reliab.ingest`` and polars were imported: the fair "ingest wall time") and the
*kernel reader alone* (``read_kernel``: literal scan, bulk and per-line parsing and the
file's table, without validation and attribution: the "kernel scan" of issue 7's target
of 1.3x ``grep -c -F``), beside the *literal scan alone* (the polars query that finds the
candidate lines, no parsing); both with their CPU seconds beside grep's, which show what the
two cores can and cannot hide.
The big file is the log repeated up to ``--big-gb`` GB (deleted afterwards); its peak RSS
has a target of 400 MB.  It is ingested in memory and with ``output=`` (the local engine
streaming its tables to partitioned Parquet under ``benchmarks/_work/``, deleted after
each run), each with the allocator setting ``import reliab`` makes
(:data:`reliab._allocator.ALLOCATOR_ENV`, the default) and with polars' own defaults (the
variable set to them, as a user's own value is kept), ``--big-repeat`` times each,
alternating.  The 1-minute load average is reported too: on a shared
machine every number moves with it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._suite import WORK, Figure, child, median_child, report  # noqa: E402

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
    """Write an ``n``-line rsyslog kernel log of the *synthetic* mix (deterministic for a seed)."""
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


# --- the realistic mix: what a GPU fleet's kernel log holds (message formats from the Linux and
# NVIDIA sources named in reliab.io.formats.kernel; EDAC CE text as skx_common.c prints it)

#: multi-line reports and storms, as (share of all lines, lines of one burst or report)
EDAC_CE = ("kernel: EDAC MC{mc}: 1 CE memory read error on CPU_SrcID#{mc}_MC#0_Chan#{ch}_DIMM#0 (channel:{ch} "
           "slot:0 page:0x{page:x} offset:0x0 grain:32 syndrome:0x0 - err_code:0x0000:0x009f socket:{mc} imc:0 "
           "rank:0 bg:1 ba:2 row:0x{row:x} col:0x3f0)")
AER_CORRECTED = (
    "kernel: pcieport 0000:{bus:02x}:01.0: AER: Corrected error received: 0000:{dev:02x}:00.0",
    "kernel: nvidia 0000:{dev:02x}:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "kernel: nvidia 0000:{dev:02x}:00.0:   device [10de:2330] error status/mask=00000001/0000e000",
    "kernel: nvidia 0000:{dev:02x}:00.0:    [ 0] RxErr                  (First)",
)
SXID = (
    "kernel: nvidia-nvswitch{sw}: SXid (PCI:0000:{bus:02x}:00.0): 12028, Non-fatal, Link {link} egress non-posted"
    " PRIV error (First)",
    "kernel: nvidia-nvswitch{sw}: SXid (PCI:0000:{bus:02x}:00.0): 12028, Severity 0 Engine instance {link}"
    " Sub-engine instance 00",
    "kernel: nvidia-nvswitch{sw}: SXid (PCI:0000:{bus:02x}:00.0): 12028, Data {{0x00000000, 0x00000000,"
    " 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000}}",
)
MCE = (
    "kernel: mce: [Hardware Error]: Machine check events logged",
    "kernel: mce: [Hardware Error]: CPU {cpu}: Machine Check: 0 Bank 7: cc00008000010090",
    "kernel: mce: [Hardware Error]: TSC 0 ADDR 3f6b4a540 MISC 8c000040000800c0",
    "kernel: mce: [Hardware Error]: PROCESSOR 0:606a6 TIME 1717423331 SOCKET 0 APIC {cpu} microcode d0003a5",
)
NVME = (
    "kernel: nvme nvme{n}: I/O {tag} QID {q} timeout, aborting",
    "kernel: nvme nvme{n}: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
)
#: non-signal lines of the same drivers, without a prefilter literal (they cost the scan only)
NOISE_REAL = (
    "kernel: NVRM: GPU at PCI:0000:{dev:02x}:00: GPU-5b1b6d47-8a2e-1d3f-9c0b-{page:012x}",
    "kernel: NVRM: GPU Board Serial Number: 1654923010{cpu:03d}",
    "kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:15 UTC 2024",
    "kernel: mlx5_core 0000:{dev:02x}:00.0: mlx5_cmd_out_err:838:(pid {tag}): ACCESS_REG(0x805) op_mod(0x1)"
    " failed, status bad parameter(0x3), syndrome (0x6c4d4), err(-22)",
    "kernel: mlx5_core 0000:{dev:02x}:00.0: mlx5_fw_tracer_handle_traces:741:(pid {tag}): FWTracer: Events were"
    " lost",
    "kernel: nvme nvme{n}: 32/0/0 default/read/poll queues",
    "kernel: [UFW BLOCK] IN=eth0 OUT= MAC=00:11:22:33:44:55 SRC=10.0.{q}.9 DST=10.0.0.1 LEN=60 PROTO=TCP",
    "kernel: perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750",
    "systemd[1]: Started Session {tag} of user root.",
    "sshd[88123]: Accepted publickey for root from 10.1.2.3 port 51234 ssh2: RSA SHA256:abcdefghijklmnop",
    "CRON[12345]: (root) CMD (/usr/lib/health/check.sh >/dev/null 2>&1)",
    "systemd-logind[1402]: New session {tag} of user slurm.",
    "nvidia-persistenced[3211]: device 0000:{dev:02x}:00.0 - persistence mode enabled.",
    "kernel: audit: type=1400 audit(1717423331.123:{tag}): apparmor=\"DENIED\" operation=\"open\" profile=\"snap\"",
)
#: (weight, kind): the share of lines each kind starts; a report writes all its lines
REAL_MIX = (
    (0.00140, "edac_storm"),  # bursts of 8-40 CE lines (24 on average): ~3.4 % of the lines
    (0.0015, "aer"),          # 4 lines, 2 of them candidates: ~0.3 %
    (0.0010, "sxid"),         # 3 lines: ~0.3 %
    (0.0050, "xid"),          # ~0.5 %
    (0.00125, "mce"),         # 1 line ("events logged") or a 3-line report: ~0.2 %
    (0.0010, "nvme"),         # ~0.1 %
    (0.0010, "other"),        # mlx5 link/module, networkd carrier, nvme reset, blk, UE lines: ~0.1 %
    (0.0010, "benign"),       # EDAC/AER start-up lines holding a literal: ~0.1 %
)


def _real_lines(rng: random.Random, kind: str) -> list[str]:
    """The message(s) of one event of ``kind`` in the realistic mix."""
    v = {"mc": rng.randrange(2), "ch": rng.randrange(8), "page": rng.randrange(1 << 20), "row": rng.randrange(1 << 16),
         "bus": rng.choice((0x17, 0x3a, 0x5d, 0x9a, 0xc5)), "dev": rng.choice((0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab)),
         "sw": rng.randrange(4), "link": rng.randrange(64), "cpu": rng.randrange(192), "n": rng.randrange(8),
         "tag": rng.randrange(1, 1024), "q": rng.randrange(1, 64)}
    if kind == "edac_storm":
        return [EDAC_CE.format(**{**v, "page": v["page"] + k}) for k in range(rng.randrange(8, 41))]
    if kind == "aer":
        return [line.format(**v) for line in AER_CORRECTED]
    if kind == "sxid":
        return [line.format(**v) for line in SXID]
    if kind == "xid":
        code, text = rng.choice(XIDS)
        return [f"kernel: NVRM: Xid (PCI:{rng.choice(PCI)}): {code}, pid='<unknown>', name=<unknown>, {text}"]
    if kind == "mce":
        return [MCE[0]] if rng.random() < 0.7 else [line.format(**v) for line in MCE[1:]]
    if kind == "nvme":
        return [rng.choice(NVME).format(**v)]
    if kind == "other":
        return [rng.choice(OTHER)]
    if kind == "benign":
        return [rng.choice(BENIGN_LITERAL)]
    return [rng.choice(NOISE_REAL).format(**v)]


def write_realistic_log(path: Path, n: int, seed: int) -> None:
    """Write an ``n``-line rsyslog kernel log of the *realistic* mix (deterministic for a seed).

    About 5 % of the lines hold a prefilter literal: EDAC correctable-error storms (most of
    them), NVIDIA Xid, multi-line SXid reports, AER corrected-error reports (first and
    ``PCIe Bus Error`` lines), MCE ("events logged" and multi-line reports), NVMe timeouts and
    resets, mlx5/networkd/blk lines and driver start-up lines; the rest is noise that shares
    words with them without a literal (non-Xid NVRM lines, mlx5 command and tracer chatter,
    nvme queue lines) and ordinary systemd, sshd, CRON, audit and firewall lines.  The lines
    of one report or storm share a host and follow each other.
    """
    rng = random.Random(seed)
    t0 = 1717423331.0
    path.parent.mkdir(parents=True, exist_ok=True)
    bounds = []
    acc = 0.0
    for weight, kind in REAL_MIX:
        acc += weight
        bounds.append((acc, kind))
    written = 0
    with open(path, "w") as fh:
        while written < n:
            u = rng.random()
            kind = next((k for b, k in bounds if u < b), "noise")
            host = f"node{rng.randrange(1, 2049):04d}"
            for msg in _real_lines(rng, kind)[: n - written]:
                t = t0 + written * 0.05
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1e6) % 1000000:06d}+00:00"
                fh.write(f"{stamp} {host} {msg}\n")
                written += 1


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


def _big(path: Path, gb: float, copies: int | None = None) -> Path:
    """``path`` repeated ``copies`` times, or up to ``gb`` GB (written once, beside it).

    Copy ``k`` is dated ``k`` years later (the year of every line's RFC 3339 stamp moved),
    so the big log runs forward in time as a real kernel log does: a log repeated as is
    jumps back at every copy and makes the ingest sort its whole signals table, which a
    real log never needs (that sort alone added ~100 MiB of peak at 5M lines).
    """
    out = path.with_name(f"{path.stem}-x{copies}y.log" if copies else f"{path.stem}-x{gb:g}GBy.log")
    if not out.exists():
        text = path.read_bytes()
        year = int(text[:4])
        target = gb * 1e9
        done = 0
        with open(out, "wb") as dst:
            while (done < copies) if copies else (dst.tell() < target):
                old, new = f"{year}-".encode(), f"{year + done}-".encode()
                copy = text if done == 0 else new + text[len(old):].replace(b"\n" + old, b"\n" + new)
                dst.write(copy)
                done += 1
    return out


def run(lines: int = 1_000_000, repeat: int = 3, seed: int = 7, big_gb: float = 5.0,
        mix: str = "realistic", big_lines: int = 0, big_repeat: int = 1) -> list[Figure]:
    """Plain and gzip ingest beside grep and a bare gzip read; peak memory on a big file.

    ``mix`` is ``"realistic"`` (:func:`write_realistic_log`) or ``"synthetic"``
    (:func:`write_log`); the big file is ``big_lines`` lines (the log repeated) when given,
    else ``big_gb`` GB (0: skipped), ingested ``big_repeat`` times in memory and as many
    times with ``output=`` (:func:`_big_figures`).
    """
    if mix not in ("realistic", "synthetic"):
        raise ValueError(f"mix must be 'realistic' or 'synthetic', got {mix!r}")
    path = WORK / (f"kernel-real-{lines}-{seed}.log" if mix == "realistic" else f"kernel5-{lines}-{seed}.log")
    if not path.exists():
        (write_realistic_log if mix == "realistic" else write_log)(path, lines, seed)
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
    # the reader alone (literal scan, bulk and per-line parsing, the file's table): no attribution
    scan = ("import sys, time; from reliab.io.formats.kernel import read_kernel; import polars; "
            f"import reliab.io.formats.kernel._bulk; {_CPU}"
            "t = time.perf_counter(); c = cpu(); r = read_kernel(sys.argv[1]); s = r.tables['signals']; "
            "print(time.perf_counter() - t, len(s), cpu() - c)")
    # the literal scan alone (the polars query finding the candidate lines): no parsing at all
    literal = ("import sys, time; from reliab.io import _fastscan; from reliab.io.formats.kernel import LITERALS; "
               f"import polars; {_CPU}"
               "t = time.perf_counter(); c = cpu(); n = sum(h.height for _, h in _fastscan._path_batches(sys.argv[1], "
               "LITERALS)); print(time.perf_counter() - t, n, cpu() - c)")
    bare_gz = ("import gzip, sys\nwith gzip.open(sys.argv[1], 'rb') as f:\n"
               "    while f.read(1 << 23):\n        pass")
    t_g, counted, cpu_g = _grep_runs([*grep, str(path)], repeat)
    t_i, rss_i, _ = median_child([sys.executable, "-c", code, str(path)], repeat)
    t_z, _, _ = median_child([sys.executable, "-c", bare_gz, str(packed)], repeat)
    t_iz, rss_iz, _ = median_child([sys.executable, "-c", code, str(packed)], repeat)
    # start-up and the imports a large ingest makes (polars, the bulk parser): time, and the
    # RSS they cost before any line is read (the floor under every peak below)
    imports = "import reliab.io, polars, reliab.io.formats.kernel._bulk"
    t_0, rss_0, _ = median_child([sys.executable, "-c", imports], repeat)
    _, _, said = median_child([sys.executable, "-c", timed, str(path)], repeat)
    _, _, said_z = median_child([sys.executable, "-c", timed, str(packed)], repeat)
    _, _, said_s = median_child([sys.executable, "-c", scan, str(path)], repeat)
    _, _, said_l = median_child([sys.executable, "-c", literal, str(path)], repeat)
    t_scan = statistics.median(float(x.split()[0]) for x in said_s)
    cpu_scan = statistics.median(float(x.split()[2]) for x in said_s)
    t_lit = statistics.median(float(x.split()[0]) for x in said_l)
    cpu_lit = statistics.median(float(x.split()[2]) for x in said_l)
    t_in = statistics.median(float(x.split()[0]) for x in said)
    t_inz = statistics.median(float(x.split()[0]) for x in said_z)
    share = int(counted[0].split()[0]) / lines
    size = path.stat().st_size / 2**20
    mlines = f"{lines / 1e6:g}M lines"
    figures = [
        Figure(SECTION, f"grep -c -F, {mlines} ({size:.0f} MiB)", t_g, "s",
               note=f"{share:.1%} of the lines pass the prefilter; {lines / t_g / 1e6:.1f} M lines/s"),
        Figure(SECTION, "ingest plain, full process", t_i, "s", "grep -c -F", t_g,
               note=f"peak RSS {rss_i or 0:.0f} MiB; start-up + imports alone {t_0:.2f} s, {rss_0 or 0:.0f} MiB"),
        Figure(SECTION, "kernel reader alone (scan + parse), in-process", t_scan, "s", "grep -c -F", t_g,
               target="< 1.3x grep", met=t_scan < 1.3 * t_g,
               note=f"{mix} mix; {lines / t_scan / 1e6:.2f} M lines/s; CPU {cpu_scan:.3f} s vs grep's {cpu_g:.3f} s (mean) "
                    f"({cpu_scan / cpu_g:.2f}x)"),
        Figure(SECTION, "literal scan alone (polars query, no parsing), in-process", t_lit, "s", "grep -c -F", t_g,
               note=f"CPU {cpu_lit:.3f} s ({cpu_lit / cpu_g:.2f}x grep's) on {os.cpu_count()} CPUs"),
        Figure(SECTION, "ingest plain, ingest() call", t_in, "s", "grep -c -F", t_g,
               note=f"{lines / t_in / 1e6:.2f} M lines/s (reader + validation + attribution)"),
        Figure(SECTION, "ingest gzip, full process", t_iz, "s", "python gzip read", t_z,
               note=f"peak RSS {rss_iz or 0:.0f} MiB"),
        Figure(SECTION, "ingest gzip, ingest() call", t_inz, "s", "python gzip read", t_z),
    ]
    if big_gb > 0 or big_lines > 0:
        figures += _big_figures(path, lines, big_gb, big_lines, big_repeat, grep, code, rss_0)
    return figures


#: a child's own CPU seconds (user + system) so far, for the in-process timings
_CPU = "import resource; cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]); "


def _grep_runs(cmd: list[str], runs: int) -> tuple[float, list[str], float]:
    """Median wall seconds, outputs and mean CPU seconds (user + system, from the children's
    rusage) of ``runs`` runs of ``cmd``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _, outs = median_child(cmd, runs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, outs, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / runs


#: the big log ingested with ``output=``: tables streamed to partitioned Parquet (bounded memory)
_STREAM = ("import sys, shutil, tempfile; from reliab.io import ingest; d = tempfile.mkdtemp(dir=sys.argv[2]); "
           "r = ingest(sys.argv[1], source='kernel', output=d); print(r.to_dict()['signals']); shutil.rmtree(d)")


#: polars' own allocator options (``polars/__init__.py``), which reliab keeps when the user sets them
POLARS_ALLOCATOR = "dirty_decay_ms:500,muzzy_decay_ms:1000"


def _allocator_envs() -> tuple[dict[str, str], dict[str, str]]:
    """This environment without polars' allocator variable (``import reliab`` sets it in the
    child), and with it set to polars' defaults (kept as a user's own value)."""
    from reliab._allocator import ALLOCATOR_ENV

    name = ALLOCATOR_ENV[0]
    plain = {k: v for k, v in os.environ.items() if k != name}
    return plain, {**plain, name: POLARS_ALLOCATOR}


def _spread(values: list[float]) -> str:
    return f"median of {len(values)}, range {min(values):.0f}-{max(values):.0f}"


def _big_figures(path: Path, lines: int, big_gb: float, big_lines: int, runs: int, grep: list[str],
                 code: str, rss_0: float | None) -> list[Figure]:
    """Peak RSS and wall time on the big log: in memory and with ``output=`` (streamed), each
    with the default allocator and the ``reliab`` command's setting, ``runs`` times,
    alternating, so that all four see the same load."""
    copies = -(-big_lines // lines) if big_lines > 0 else None
    big = _big(path, big_gb, copies)
    size_gb = big.stat().st_size / 1e9
    ours, theirs = _allocator_envs()
    kinds = {"memory": ([sys.executable, "-c", code, str(big)], ours),
             "memory_polars": ([sys.executable, "-c", code, str(big)], theirs),
             "streamed": ([sys.executable, "-c", _STREAM, str(big), str(WORK)], ours),
             "streamed_polars": ([sys.executable, "-c", _STREAM, str(big), str(WORK)], theirs)}
    got: dict[str, list[tuple[float, float | None]]] = {k: [] for k in kinds}
    try:
        for _ in range(runs):
            for kind, (argv, env) in kinds.items():
                got[kind].append(child(argv, env=env))
        t_bg, _ = child([*grep, str(big)])
    finally:
        big.unlink(missing_ok=True)
    what = f"{copies * lines / 1e6:g}M lines, {size_gb:.2f} GB" if copies else f"{size_gb:.2f} GB"
    t = {k: statistics.median(w for w, _ in r) for k, r in got.items()}
    rss = {k: [m for _, m in r if m is not None] or [float("nan")] for k, r in got.items()}
    peak = {k: statistics.median(v) for k, v in rss.items()}

    def rss_figure(kind: str, label: str, baseline: str = "", note: str = "") -> Figure:
        base = peak["memory"] if baseline else None
        return Figure(SECTION, f"peak RSS, ingest of {what} plain{label}", peak[kind], "MiB", baseline, base,
                      target="< 400 MB", met=peak[kind] * 2**20 < 400e6,
                      note=f"{_spread(rss[kind])} MiB; {_spread([w for w, _ in got[kind]])} s{note}")

    return [
        rss_figure("memory", "", note=f"; imports alone {rss_0 or 0:.0f} MiB; reliab's allocator setting"),
        rss_figure("memory_polars", ", polars' allocator defaults", "in memory", f"; _RJEM_MALLOC_CONF={POLARS_ALLOCATOR}"),
        rss_figure("streamed", ", output= (streamed)", "in memory"),
        rss_figure("streamed_polars", ", output=, polars' allocator defaults", "in memory"),
        Figure(SECTION, f"ingest of {what} plain, full process", t["memory"], "s", "grep -c -F", t_bg,
               note=f"{size_gb * 1e9 / t['memory'] / 2**20:.0f} MiB/s"),
        Figure(SECTION, f"ingest of {what} plain, polars' allocator defaults, full process", t["memory_polars"], "s",
               "in memory", t["memory"]),
        Figure(SECTION, f"ingest of {what} plain, output= (streamed), full process", t["streamed"], "s",
               "in memory", t["memory"]),
    ]


def main(argv: list[str] | None = None) -> dict:
    """Run from the command line; prints the table and returns the figures as a dict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mix", choices=("realistic", "synthetic"), default="realistic")
    parser.add_argument("--big-lines", type=int, default=5_000_000,
                        help="lines of the peak-memory input (the log repeated; 0: use --big-gb)")
    parser.add_argument("--big-gb", type=float, default=0.0, help="size of the peak-memory input if no --big-lines")
    parser.add_argument("--big-repeat", type=int, default=1,
                        help="runs of each big-input ingest (in memory, output=); median and range reported")
    args = parser.parse_args(argv)
    figures = run(args.lines, args.repeat, args.seed, args.big_gb, mix=args.mix, big_lines=args.big_lines,
                  big_repeat=args.big_repeat)
    return report(figures)


if __name__ == "__main__":
    main()
