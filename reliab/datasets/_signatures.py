"""How each interruption category shows in the raw logs (docs/raw-formats.md, last table).

:func:`express` adds the evidence of one interruption to an :class:`Evidence`; every
record lies between 2 minutes before the failure and the job end.  The texts follow the
real formats listed in ``docs/raw-formats.md`` (each with its primary source); the mixture
probabilities are assumptions of this generator, not published values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reliab.datasets._evidence import (
    NICS,
    Evidence,
    S,
    gsp_history,
    nccl_lines,
    ticket,
    traceback_lines,
    xid_line,
)
from reliab.datasets._simulate import GPU_PCI


class Case:
    """One interruption being expressed: times, job, host, GPU and a random stream."""

    def __init__(self, ev: Evidence, fail: int, end: int, job: str, host: str, gpu: int,
                 rank: int, rng: np.random.Generator) -> None:
        self.ev, self.fail, self.end, self.job = ev, fail, end, job
        self.host, self.gpu, self.rank, self.rng = host, gpu, rank, rng

    def at(self, lo_s: float = 0.0, hi_s: float = 5.0) -> int:
        """A time ``lo_s``…``hi_s`` seconds after the failure, never after the job end."""
        t = self.fail + int(self.rng.uniform(lo_s, hi_s) * S)
        return min(t, self.end - 1000)

    def kernel(self, message: str, lo_s: float = 0.0, hi_s: float = 5.0,
               program: str = "kernel") -> int:
        t = self.at(lo_s, hi_s)
        self.ev.kernel.append((t, self.host, program, message))
        return t

    def sel(self, sensor: str, event: str, lo_s: float = -60.0, hi_s: float = 0.0) -> None:
        self.ev.sel.append((self.at(lo_s, hi_s), self.host, sensor, event, True))

    def ticket(self, kind: str, title: str, cause: str, resolution: str) -> None:
        ticket(self.ev, self.host, self.job, self.fail, kind, title, cause, resolution,
               self.rng)

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    @property
    def pci(self) -> str:
        return GPU_PCI[self.gpu]

    @property
    def port(self) -> str:
        """PCIe root port above the GPU (bus − 1, device 01.0)."""
        bus = int(self.pci.split(":")[1], 16)
        return f"0000:{bus - 1:02x}:01.0"


def _faulty_gpu(c: Case) -> None:
    u = c.rng.random()
    if u < 0.75:
        uuid = "-".join(f"{int(c.rng.integers(16**w)):0{w}x}" for w in (8, 4, 4, 4, 12))
        c.kernel(f"NVRM: GPU at PCI:{c.pci}: GPU-{uuid}", 0, 0)
        c.kernel(f"NVRM: GPU Board Serial Number: {int(c.rng.integers(10**12, 10**13))}", 0, 0)
        c.kernel(xid_line(c.gpu, 79, "GPU has fallen off the bus."), 0, 0.1)
        c.kernel(f"NVRM: GPU {c.pci}.0: GPU has fallen off the bus.", 0.1, 0.2)
        if c.chance(0.6):
            c.kernel(f"pcieport {c.port}: AER: Uncorrected (Fatal) error received: {c.pci}.0",
                     -1, 0)
        if c.chance(0.4):
            c.sel("Critical Interrupt #0x90", "Bus Fatal Error", -2, 0)
    elif u < 0.9:
        c.kernel(xid_line(c.gpu, 62, "Internal micro-controller halt", 2_000_000 + c.gpu,
                          "pt_main_thread"))
    else:
        c.kernel(xid_line(c.gpu, 143, "GPU initialization failure"))
    if c.chance(0.3):
        c.ticket("incident", f"GPU{c.gpu} replaced on {c.host}", "GPU replaced (RMA): faulty GPU",
                 "GPU swapped, node returned to service")


def _hbm(c: Case) -> None:
    if c.chance(0.7):
        c.kernel(xid_line(c.gpu, 48, "An uncorrectable double bit error (DBE) has been "
                          "detected on GPU in the framebuffer at partition 6, subpartition 0.",
                          2_000_000 + c.gpu, "pt_main_thread"))
        if c.chance(0.4):
            c.kernel(xid_line(c.gpu, 63, "Row Remapper: New row marked for remapping, reset "
                              "gpu to activate."), 1, 3)
        if c.chance(0.15):
            c.kernel(xid_line(c.gpu, 64, "Row Remapper: Failed to remap a row"), 1, 3)
    else:
        c.kernel(xid_line(c.gpu, 95, "Uncontained: FBHUB. RST: Yes, D-RST: No",
                          2_000_000 + c.gpu, "pt_main_thread"))
    if c.chance(0.8):
        traceback_lines(c.ev, c.job, c.at(5, 20), c.rank, "uncorrectable ECC error encountered")


def _software(c: Case) -> None:
    if c.chance(0.6):
        code = int(c.rng.choice([13, 31, 43]))
        text = {13: "Graphics SM Warp Exception on (GPC 8, TPC 5, SM 1): Out Of Range Address",
                31: "Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
                    "faulted @ 0x7f1a_2e000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                43: "Ch 00000008"}[code]
        c.kernel(xid_line(c.gpu, code, text, 2_000_000 + c.gpu, "pt_main_thread"))
    traceback_lines(c.ev, c.job, c.at(1, 10), c.rank, "an illegal memory access was encountered")


def _network(c: Case) -> None:
    nic, pci = NICS[int(c.rng.integers(len(NICS)))]
    if c.chance(0.4):
        c.kernel(f"mlx5_core {pci}: mlx5_port_module_event:1131:(pid 0): Port module "
                 "event[error]: module 0, Cable error, Bad or shorted cable/module", -1, 0)
    t = c.kernel(f"mlx5_core {pci} {nic}: Link down", 0, 1)
    c.ev.kernel.append((t + 2_500, c.host, "systemd-networkd[2385]", f"{nic}: Lost carrier"))


def _host_maintenance(c: Case) -> None:
    c.ticket("incident", f"{c.host} drained: unplanned host maintenance",
             "unplanned host maintenance: node unresponsive, rebooted and reimaged",
             "node reimaged and returned to the pool")


def _sram(c: Case) -> None:
    c.kernel(xid_line(c.gpu, 48, "An uncorrectable double bit error (DBE) has been detected "
                      "on GPU in the SRAM.", 2_000_000 + c.gpu, "pt_main_thread"), 0, 1)
    c.kernel(xid_line(c.gpu, 172, "Uncorrectable SRAM error, GPU reset required"), 1.5, 3)


def _gsp(c: Case) -> None:
    if not c.chance(0.7):
        c.kernel(xid_line(c.gpu, 120, "GSP Error: Task 1 raised error code 0x5 for reason 0x0 "
                          "at 0x3a0b1c (0 more errors skipped)"))
        return
    t = c.kernel(xid_line(c.gpu, 119, f"Timeout after 6s of waiting for RPC response from "
                          f"GPU{c.gpu} GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
                          2_000_000 + c.gpu, "pt_main_thread"), 0, 1)
    for k, text in enumerate(gsp_history(c.gpu, c.rng)):
        c.ev.kernel.append((t + 10 + k, c.host, "kernel", text))


def _nic(c: Case) -> None:
    _, pci = NICS[int(c.rng.integers(len(NICS)))]
    c.kernel(f"mlx5_core {pci}: poll_health:800:(pid 0): device's health compromised - "
             "reached miss count")


def _sdc(c: Case) -> None:
    c.ev.train.append((c.at(0, 30), c.job, "iso:WARNING",
                       f"[trainer] loss spike: loss {c.rng.uniform(6, 11):.3f} (ema 1.712); "
                       "stopping to roll back to the last checkpoint"))
    c.ticket("incident", f"silent data corruption on {c.host}",
             f"silent data corruption confirmed by replaying the step; GPU{c.gpu} produced "
             "wrong results", "GPU quarantined and replaced")


def _thermal(c: Case) -> None:
    c.sel(f"Temperature GPU{c.gpu}_Temp", "Upper Critical going high")
    c.ticket("incident", f"GPU{c.gpu} over temperature on {c.host}",
             f"thermal interface material degraded on GPU{c.gpu}", "heatsink re-pasted")


def _ssd(c: Case) -> None:
    dev = int(c.rng.integers(0, 8))
    c.kernel(f"nvme nvme{dev}: controller is down; will reset: CSTS=0xffffffff, "
             "PCI_STATUS=0xffff", 0, 1)
    c.kernel(f"blk_update_request: I/O error, dev nvme{dev}n1, sector "
             f"{int(c.rng.integers(10**6, 10**9))} op 0x1:(WRITE) flags 0x800 phys_seg 1 prio "
             "class 0", 1, 3)


def _psu(c: Case) -> None:
    event = "Power Supply AC lost" if c.chance(0.7) else "Failure detected"
    c.sel("Power Supply #0xfb", event)


def _chassis(c: Case) -> None:
    c.ticket("incident", f"{c.host} down: server chassis", "server chassis backplane fault",
             "backplane replaced")


def _iob(c: Case) -> None:
    c.kernel(f"pcieport {c.port}: AER: Uncorrected (Fatal) error received: {c.pci}.0")
    c.ticket("incident", f"{c.host} lost PCIe devices", "IO expansion board replaced",
             "board replaced, node returned to service")


def _dependency(c: Case) -> None:
    c.ev.train.append((c.at(0, 20), c.job, "iso:ERROR",
                       "[checkpoint] write failed: remote storage unavailable (timeout 300s)"))
    c.ticket("incident", "training job failed: storage unavailable",
             "dependency: storage outage of the checkpoint store", "storage service restored")


def _cpu(c: Case) -> None:
    c.sel("Processor #0x04", "IERR")
    cpu = int(c.rng.integers(0, 112))
    c.kernel(f"mce: [Hardware Error]: CPU {cpu}: Machine Check: 0 Bank 5: bea0000000000108")


def _memory(c: Case) -> None:
    c.sel("Memory #0x87", "Uncorrectable ECC")
    c.kernel("EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 "
             f"slot:0 page:0x{int(c.rng.integers(16**5)):x} offset:0x0 grain:32 - "
             "err_code:0x0000:0x0090)")


def _planned(c: Case) -> None:
    what = ("firmware upgrade (GPU VBIOS and BMC)", "Linux kernel upgrade",
            "configuration update of the training job", "dataset update")
    c.ticket("maintenance", f"planned maintenance: {what[int(c.rng.integers(4))]}",
             "planned maintenance: operator-initiated restart", "job resubmitted")


EXPRESS: dict[str, Callable[[Case], None]] = {
    "Faulty GPU": _faulty_gpu, "GPU HBM3 Memory": _hbm, "Software Bug": _software,
    "Network Switch/Cable": _network, "Host Maintenance": _host_maintenance,
    "GPU SRAM Memory": _sram, "GPU System Processor": _gsp, "NIC": _nic,
    "NCCL Watchdog Timeouts": lambda c: None, "Silent Data Corruption": _sdc,
    "GPU Thermal Interface + Sensor": _thermal, "SSD": _ssd, "Power Supply": _psu,
    "Server Chassis": _chassis, "IO Expansion Board": _iob, "Dependency": _dependency,
    "CPU": _cpu, "System Memory": _memory, "Planned": _planned,
}

#: categories whose jobs end in NODE_FAIL (the node went away) — else FAILED / CANCELLED
NODE_FAIL = ("Host Maintenance", "Power Supply", "Server Chassis")
_NO_WATCHDOG = ("Planned", "Software Bug", "Dependency", "Silent Data Corruption")


def express(c: Case, category: str, ranks: list[int]) -> None:
    """Add the evidence of one interruption: category lines plus NCCL watchdog lines."""
    EXPRESS.get(category, lambda _: None)(c)
    if category == "NCCL Watchdog Timeouts" or (category not in _NO_WATCHDOG and c.chance(0.85)):
        nccl_lines(c.ev, c.job, min(c.at(20, 60), c.end - 2 * S), ranks, c.rng)
