"""Log evidence of each interruption and the benign background signals.

Every record is one future log line (or SEL entry, or ticket) with its time in UTC
microseconds; :mod:`reliab.datasets._writers` formats them.  Which signals express which
category follows the table in ``docs/raw-formats.md``; the line texts follow the real
formats: NVRM Xid lines (NVIDIA "Xid Errors", docs.nvidia.com/deploy/xid-errors; captures
in ``leptonai/gpud`` ``components/accelerator/nvidia/xid/testdata/``), the ProcessGroupNCCL
watchdog (PyTorch ``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``), mlx5 (Linux
``drivers/net/ethernet/mellanox/mlx5/core/events.c``) and IPMI SEL (ipmitool
``include/ipmitool/ipmi_sel.h``).  Mixture probabilities (e.g. 75 % of faulty-GPU
interruptions show Xid 79) are assumptions of this generator, not published values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reliab.datasets._simulate import GPU_PCI, US_PER_MIN

S = 1_000_000  # microseconds per second

#: RoCE NIC netdevs and their PCI functions (any plausible set, docs/raw-formats.md)
NICS: tuple[tuple[str, str], ...] = (("ens1f0np0", "0000:1a:00.0"), ("ens2f0np0", "0000:3c:00.0"),
                                     ("ens3f0np0", "0000:4d:00.0"), ("ens4f0np0", "0000:5e:00.0"),
                                     ("ens5f0np0", "0000:9c:00.0"), ("ens6f0np0", "0000:bc:00.0"),
                                     ("ens7f0np0", "0000:cc:00.0"), ("ens8f0np0", "0000:dc:00.0"))


@dataclass
class Evidence:
    """Records to be written, by sink.

    ``kernel``: (t_us, host, program, message); ``train``: (t_us, job_id, style, text) with
    style ``iso:<LEVEL>``, ``glog:<L>:<rank>:<file:line>`` or ``raw``; ``sel``: (t_us, host,
    sensor, event, asserted); ``tickets``: (opened_us, host, job_id, incident_us, type,
    title, root_cause, resolution).
    """

    kernel: list[tuple] = field(default_factory=list)
    train: list[tuple] = field(default_factory=list)
    sel: list[tuple] = field(default_factory=list)
    tickets: list[tuple] = field(default_factory=list)


def xid_line(gpu: int, code: int, text: str, pid: int | None = None,
             name: str | None = None) -> str:
    """``NVRM: Xid (PCI:0000:18:00): 79, pid=…, name=…, text`` (NVIDIA "Xid Errors")."""
    who = ("pid='<unknown>', name=<unknown>, " if pid is None else f"pid={pid}, name={name}, ")
    return f"NVRM: Xid (PCI:{GPU_PCI[gpu]}): {code}, {who}{text}"


def gsp_history(gpu: int, rng: np.random.Generator) -> list[str]:
    """Continuation lines printed after Xid 119: the GSP RPC history tables (§5.1)."""
    head = ("NVRM:     entry function                   data0              data1"
            "              ts_start           ts_end             duration ")
    ts = int(rng.integers(0x62E000000000000, 0x62EFFFFFFFFFFFF))
    calls = (("103", "GSP_RM_ALLOC"), ("76", "GSP_RM_CONTROL"), ("10", "FREE"))
    out = [f"NVRM: GPU{gpu} RPC history (CPU -> GSP):", head + "actively_polling"]
    for k in range(8):
        num, fn = calls[0] if k < 3 else calls[int(rng.integers(1, 3))]
        d0, d1 = int(rng.integers(0, 0x20803FFF)), int(rng.integers(0, 0x80))
        t0 = ts - k * int(rng.integers(300_000, 900_000))
        t1 = "0x0000000000000000" if k == 0 else f"0x{t0 + int(rng.integers(300, 900)):016x}"
        dur = "          y" if k == 0 else f"    {int(rng.integers(300, 900))}us"
        out.append(f"NVRM:     {-k:2d}    {num:<4} {fn:<21} 0x{d0:016x} 0x{d1:016x} "
                   f"0x{t0:016x} {t1}{dur}")
    out.append(f"NVRM: GPU{gpu} RPC event history (CPU <- GSP):")
    out.append(head + "during_incomplete_rpc")
    for k in range(4):
        t0 = ts - 10**9 - k * int(rng.integers(10**5, 10**6))
        out.append(f"NVRM:     {-k:2d}    4124 GSP_LOCKDOWN_NOTICE   0x{k % 2:016x} "
                   f"0x0000000000000000 0x{t0:016x} 0x{t0:016x}")
    return out


def nccl_lines(ev: Evidence, job: str, t_us: int, ranks: list[int],
               rng: np.random.Generator) -> None:
    """ProcessGroupNCCL watchdog lines of a few ranks (PyTorch ``ProcessGroupNCCL.cpp``)."""
    seq = int(rng.integers(10_000, 900_000))
    numel = int(rng.choice([131_072_000, 262_144_000, 67_108_864]))
    ran = 600_000 + int(rng.integers(20, 400))
    for k, rank in enumerate(ranks):
        t = t_us + k * int(rng.integers(1_000, 80_000))
        ev.train.append((t, job, f"glog:E:{rank}:ProcessGroupNCCL.cpp:629",
                         f"[Rank {rank}] Watchdog caught collective operation timeout: "
                         f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, "
                         f"NumelOut={numel}, Timeout(ms)=600000) ran for {ran} milliseconds "
                         "before timing out."))
        ev.train.append((t + 40, job, f"glog:E:{rank}:ProcessGroupNCCL.cpp:2168",
                         f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]  failure detected by "
                         f"watchdog at work sequence id: {seq} PG status: last enqueued work: "
                         f"{seq + 3}, last completed work: {seq - 1}"))
    t_end = t_us + 200_000
    ev.train.append((t_end, job, "raw", "terminate called after throwing an instance of "
                                        "'c10::DistBackendError'"))


def traceback_lines(ev: Evidence, job: str, t_us: int, rank: int, error: str) -> None:
    """A Python traceback of one rank ending in ``RuntimeError: CUDA error: …``."""
    lines = ("Traceback (most recent call last):",
             '  File "/opt/llama/train.py", line 412, in <module>',
             "    main()",
             '  File "/opt/llama/train.py", line 388, in train_step',
             "    loss.backward()",
             f"RuntimeError: CUDA error: {error}",
             "CUDA kernel errors might be asynchronously reported at some other API call, so "
             "the stacktrace below might be incorrect.")
    ev.train.append((t_us, job, "iso:ERROR", f"[rank{rank}] uncaught exception, aborting"))
    for k, text in enumerate(lines):
        ev.train.append((t_us + 10 + k, job, "raw", text))


def ticket(ev: Evidence, host: str, job: str, incident_us: int, kind: str, title: str,
           cause: str, resolution: str, rng: np.random.Generator) -> None:
    """An operator ticket, opened 10 min–3 h after the incident."""
    opened = incident_us + int(rng.integers(10, 180)) * US_PER_MIN
    ev.tickets.append((opened, host, job, incident_us, kind, title, cause, resolution))


def add_background(ev: Evidence, t_us: int, host: str, lemon: bool, kind: int,
                   rng: np.random.Generator) -> None:
    """One benign background event of type ``kind`` (0–5) on ``host`` at ``t_us``."""
    gpu = int(rng.integers(8))
    if kind == 0:
        codes = (63, 92, 13, 31, 43, 94) if lemon else (63, 92)
        code = int(rng.choice(codes))
        text = {63: "Row Remapper: New row marked for remapping, reset gpu to activate.",
                92: "High single-bit ECC error rate",
                13: "Graphics SM Warp Exception on (GPC 4, TPC 2, SM 0): Out Of Range Address",
                31: "Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
                    "faulted @ 0x7f1a_2e000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                43: "Ch 00000008",
                94: "Contained: SM (0x1). RST: No, D-RST: No"}[code]
        ev.kernel.append((t_us, host, "kernel", xid_line(gpu, code, text, 2_000_000 + gpu,
                                                         "pt_main_thread")))
    elif kind == 1:
        nic, pci = NICS[int(rng.integers(len(NICS)))]
        up = t_us + int(rng.integers(2, 40)) * S
        ev.kernel.append((t_us, host, "kernel", f"mlx5_core {pci} {nic}: Link down"))
        ev.kernel.append((t_us + 3_000, host, "systemd-networkd[2385]", f"{nic}: Lost carrier"))
        ev.kernel.append((up, host, "kernel", f"mlx5_core {pci} {nic}: Link up"))
        ev.kernel.append((up + 2_000, host, "systemd-networkd[2385]", f"{nic}: Gained carrier"))
    elif kind == 2:
        sensor = f"Temperature GPU{gpu}_Temp"
        ev.sel.append((t_us, host, sensor, "Upper Non-critical going high", True))
        ev.sel.append((t_us + int(rng.integers(60, 900)) * S, host, sensor,
                       "Upper Non-critical going high", False))
    elif kind == 3:
        ev.sel.append((t_us, host, "Memory #0x87", "Correctable ECC", True))
    elif kind == 4:
        ev.sel.append((t_us, host, "Voltage #0x4d", "Upper Non-critical going high", True))
        ev.sel.append((t_us + int(rng.integers(5, 120)) * S, host, "Voltage #0x4d",
                       "Upper Non-critical going high", False))
    else:
        title, cause = BACKGROUND_TICKETS[int(rng.integers(len(BACKGROUND_TICKETS)))]
        ticket(ev, host, "", t_us, "incident", title, cause, "node returned to service", rng)


BACKGROUND_TICKETS: tuple[tuple[str, str], ...] = (
    ("health check failed: node drained", "GPU reseated after repeated health check failures"),
    ("node out of the scheduler", "repeated correctable ECC errors; row remapping pending"),
    ("excluded by user job", "slow rank reported by the job owner; no fault found"),
    ("link flaps on node", "optic reseated after link flaps"),
)
