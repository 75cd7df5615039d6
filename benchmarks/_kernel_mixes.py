"""Kernel-log mixes nobody tuned the reader to, for :mod:`benchmarks.bench_kernel_mixes`.

* *corpus*: the kernel shapes of ``tests/reference/real_world/kernel/`` in the proportions a
  fleet's log holds them — Intel ``sb_edac`` machine-check reports with their long-form
  ``EDAC MC<n>: <count> CE memory read error …`` line (``drivers/edac/sb_edac.c``), AER
  corrected-error reports (``drivers/pci/pcie/aer.c``: first line, ``PCIe Bus Error``,
  status and bit lines), mlx5 ``Port module event: module N, Cable plugged`` chatter
  (``mlx5/core/events.c``), ``NVRM: GPU at PCI:…`` lines, non-fatal NVSwitch SXid,
  ``mce: [Hardware Error]: Machine check events logged``; about 4.5 % of the lines hold a
  prefilter literal and 0.6 % are Xid.
* *worst*: only candidate lines that are not Xid (the same shapes, no noise between them):
  every line is parsed, none by the Xid route.

Every line has one header style (:data:`HEADERS`; by default rsyslog RFC 3339,
``<stamp> <host> kernel: <message>``); the lines of one report share a host and a time and
follow each other.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

#: one report or chatter burst per kind, the text as the corpus files print it
SBRIDGE = (
    "kernel: EDAC sbridge MC{mc}: HANDLING MCE MEMORY ERROR",
    "kernel: EDAC sbridge MC{mc}: CPU {cpu}: Machine Check Event: 0 Bank 7: cc00418000010091",
    "kernel: EDAC sbridge MC{mc}: TSC 0 ",
    "kernel: EDAC sbridge MC{mc}: ADDR {addr:x} ",
    "kernel: EDAC sbridge MC{mc}: MISC 150481a86 ",
    "kernel: EDAC sbridge MC{mc}: PROCESSOR 0:406f1 TIME {epoch} SOCKET {mc} APIC 0",
    "kernel: EDAC MC{mc}: {count} CE memory read error on CPU_SrcID#{mc}_Ha#0_Chan#{ch}_DIMM#0 (channel:{ch} slot:0"
    " page:0x{page:x} offset:0x940 grain:32 syndrome:0x0 -  OVERFLOW area:DRAM err_code:0001:0091 socket:{mc} ha:0"
    " channel_mask:2 rank:1)",
)
AER = (
    "kernel: pcieport 0000:00:{port:02x}.0: AER: Corrected error received: id=00{port:02x}",
    "kernel: pcieport 0000:00:{port:02x}.0: PCIe Bus Error: severity=Corrected, type=Physical Layer,"
    " id=00{port:02x}(Receiver ID)",
    "kernel: pcieport 0000:00:{port:02x}.0:   device [8086:a33c] error status/mask=00000001/00002000",
    "kernel: pcieport 0000:00:{port:02x}.0:    [ 0] RxErr                  (First)",
)
MLX5 = ("kernel: mlx5_core 0000:{dev:02x}:00.{fn}: Port module event: module {fn}, Cable {plug}",)
NVRM_AT = ("kernel: NVRM: GPU at PCI:0000:{dev:02x}:00: GPU-5b1b6d47-8a2e-1d3f-9c0b-{page:012x}",)
SXID = ("kernel: nvidia-nvswitch{sw}: SXid (PCI:0000:{bus:02x}:00.0): 22013, Non-fatal, Link {link} Minion Link"
        " DLREQ interrupt",)
MCE = ("kernel: mce: [Hardware Error]: Machine check events logged",)
XID = ("kernel: NVRM: Xid (PCI:0000:{dev:02x}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
       "kernel: NVRM: Xid (PCI:0000:{dev:02x}:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on"
       " (GPC 1, TPC 2, SM 0): Out Of Range Address",
       "kernel: NVRM: Xid (PCI:0000:{dev:02x}:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row"
       " (0x00000000000003e8) is pending for remapping")
NOISE = (
    "systemd[1]: Started Session {tag} of user root.",
    "sshd[88123]: Accepted publickey for root from 10.1.2.3 port 51234 ssh2: RSA SHA256:abcdefghijklmnop",
    "CRON[12345]: (root) CMD (/usr/lib/health/check.sh >/dev/null 2>&1)",
    "kernel: nvme nvme{fn}: 32/0/0 default/read/poll queues",
    "kernel: [UFW BLOCK] IN=eth0 OUT= MAC=00:11:22:33:44:55 SRC=10.0.{tag}.9 DST=10.0.0.1 LEN=60 PROTO=TCP",
    "systemd-logind[1402]: New session {tag} of user slurm.",
    "nvidia-persistenced[3211]: device 0000:{dev:02x}:00.0 - persistence mode enabled.",
)
#: (lines per report, kind's share of all candidate lines): EDAC reports, AER and mlx5 dominate
CANDIDATES = ((SBRIDGE, 0.42), (AER, 0.22), (MLX5, 0.12), (XID, 0.10), (NVRM_AT, 0.05), (SXID, 0.05),
              (MCE, 0.04))


def _values(rng: random.Random) -> dict[str, object]:
    return {"mc": rng.randrange(2), "cpu": rng.randrange(64), "addr": rng.randrange(1 << 40),
            "epoch": 1664823350 + rng.randrange(10**6), "ch": rng.randrange(4), "page": rng.randrange(1 << 28),
            "count": rng.randrange(1, 300), "port": rng.choice((0x1c, 0x1d, 0x02, 0x03)),
            "dev": rng.choice((0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab)), "fn": rng.randrange(2),
            "plug": rng.choice(("plugged", "unplugged")), "sw": rng.randrange(4), "bus": rng.randrange(4, 8),
            "link": rng.randrange(64), "tag": rng.randrange(1, 250)}


def _event(rng: random.Random, with_xid: bool) -> list[str]:
    """The lines of one candidate report (``with_xid=False``: never an Xid)."""
    kinds = [k for k in CANDIDATES if with_xid or k[0] is not XID]
    lines = rng.choices([k for k, _ in kinds], weights=[w / (1 if k is XID else len(k)) for k, w in kinds])[0]
    v = _values(rng)
    if lines is XID:
        return [rng.choice(XID).format(**v)]
    return [line.format(**v) for line in lines]


#: the header styles of :func:`header`: rsyslog RFC 3339, ``dmesg -T``, ``journalctl -o short-iso``,
#: RFC 3164 (``journalctl -o short``, classic syslog), raw ``dmesg`` printk seconds, ``dmesg
#: --time-format iso`` and RFC 5424 (rsyslog ``RSYSLOG_SyslogProtocol23Format``, journald forwarding)
HEADERS = ("rfc3339", "ctime", "short-iso", "rfc3164", "printk", "dmesg-iso", "rfc5424")


def header(style: str, t: float, host: str, msg: str) -> str:
    """One log line of ``msg`` (``tag: text``) written at UTC epoch ``t`` by ``host`` in ``style``."""
    g = time.gmtime(t)
    if style == "rfc3339":
        return time.strftime("%Y-%m-%dT%H:%M:%S", g) + f".{int(t * 1e6) % 1000000:06d}+00:00 {host} {msg}"
    if style == "short-iso":
        return time.strftime("%Y-%m-%dT%H:%M:%S+0000", g) + f" {host} {msg}"
    if style == "rfc3164":
        return time.strftime("%b ", g) + f"{g.tm_mday:2d} " + time.strftime("%H:%M:%S", g) + f" {host} {msg}"
    if style == "rfc5424":  # PRI 6 (kern.info), version 1, no PROCID, MSGID or STRUCTURED-DATA
        tag, _, text = msg.partition(": ")
        return (time.strftime("<6>1 %Y-%m-%dT%H:%M:%S", g) + f".{int(t * 1e6) % 1000000:06d}+00:00 {host} {tag}"
                f" - - - {text}")
    text = msg.removeprefix("kernel: ")  # dmesg prints the ring buffer: no host, no tag
    if style == "ctime":
        return time.strftime("[%a %b ", g) + f"{g.tm_mday:2d} " + time.strftime("%H:%M:%S %Y] ", g) + text
    if style == "printk":
        return f"[{t - 1717423331.0 + 12.5:12.6f}] {text}"
    if style == "dmesg-iso":
        return time.strftime("%Y-%m-%dT%H:%M:%S", g) + f",{int(t * 1e6) % 1000000:06d}+00:00 {text}"
    raise ValueError(f"header style must be one of {HEADERS}, got {style!r}")


def write_mix(path: Path, n: int, seed: int, mix: str, style: str = "rfc3339") -> None:
    """Write ``n`` lines of ``mix`` (``"corpus"`` or ``"worst"``) to ``path`` (deterministic for a seed),
    each line with a header of ``style`` (:data:`HEADERS`)."""
    if mix not in ("corpus", "worst"):
        raise ValueError(f"mix must be 'corpus' or 'worst', got {mix!r}")
    rng = random.Random(seed)
    t0 = 1717423331.0
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "w") as fh:
        if style == "printk":  # the rtc line that anchors the boot time (drivers/rtc/class.c), as dmesg prints it
            fh.write(f"[{1.0:12.6f}] rtc_cmos 00:00: setting system clock to 2024-06-03T14:01:59 UTC"
                     f" ({int(t0 - 12.5 + 1.0)})\n")
            written += 1
        while written < n:
            host = f"node{rng.randrange(1, 2049):04d}"
            if mix == "worst" or rng.random() < 0.03:  # ~4.5 % candidate lines
                msgs = _event(rng, with_xid=mix == "corpus")
            else:
                msgs = [rng.choice(NOISE).format(**_values(rng))]
            t = t0 + written * 0.05
            for msg in msgs[: n - written]:
                fh.write(header(style, t, host, msg) + "\n")
                written += 1
