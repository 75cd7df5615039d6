"""Precursor signals planted before some node failures, with a null variant (known truth).

Field studies report that many GPU memory failures are announced: a growing number of
correctable and row-remapping events in the days before the uncorrectable one (Sridharan
et al., "Memory Errors in Modern Systems", ASPLOS 2015; Ostrouchov et al., "GPU Lifetimes
on Titan", SC 2020; NVIDIA "Xid Errors" documentation of Xid 63/64/92/94 and of the row
remapper), and that link failures are preceded by bursts of corrected link errors.  This
module plants such precursors with a known strength so that a failure predictor can be
tested against the truth:

* GPU memory and GPU failures (``_GPU_CATEGORIES``): Xid 63/92/94 lines (row remap, high
  single-bit ECC rate, contained ECC) whose rate rises towards the failure;
* network failures (``_LINK_CATEGORIES``): NVSwitch non-fatal SXid and PCIe AER corrected
  bursts;
* host memory and CPU failures (``_HOST_CATEGORIES``): EDAC correctable-error lines;
* every other failure, and a ``1 - fraction`` share of the above, is unannounced.

With ``null=True`` the same bursts (same sizes and shapes) are written on a node and at a
time drawn uniformly, independently of every failure: the marginal rate of each precursor
signal is unchanged and none of them predicts anything.  The lead time (2–7 days), the
burst size (3 + Poisson(6)) and the rising shape (offsets ``L·U²``) are assumptions of this
generator.  Every planted line keeps at least 31 minutes from every interruption's
attribution window, so interruption categories are the same with or without precursors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.datasets._evidence import Evidence, xid_line
from reliab.datasets._simulate import GPU_PCI, US_PER_H, US_PER_MIN, SimParams, host_name

_GPU_CATEGORIES = ("Faulty GPU", "GPU HBM3 Memory", "GPU SRAM Memory")
_LINK_CATEGORIES = ("Network Switch/Cable", "NIC")
_HOST_CATEGORIES = ("System Memory", "CPU")
_KEEP_AWAY_US = (31 * US_PER_MIN, 25 * US_PER_MIN)
_LEAD_DAYS = (2.0, 7.0)
_XID_TEXT = {63: "Row Remapper: New row marked for remapping, reset gpu to activate.",
             92: "High single-bit ECC error rate",
             94: "Contained: SM (0x1). RST: No, D-RST: No"}


def _family(category: str) -> str | None:
    for fam, cats in (("gpu", _GPU_CATEGORIES), ("link", _LINK_CATEGORIES),
                      ("host", _HOST_CATEGORIES)):
        if category in cats:
            return fam
    return None


def _line(family: str, gpu: int, rng: np.random.Generator) -> str:
    if family == "gpu":
        code = int(rng.choice([63, 63, 92, 94]))
        return xid_line(gpu, code, _XID_TEXT[code])
    if family == "link":
        if rng.random() < 0.6:
            return (f"nvidia-nvswitch{int(rng.integers(4))}: SXid (PCI:0000:{0x05 + gpu:02x}:00.0): "
                    f"20034, Non-fatal, Link {int(rng.integers(64))} LTSSM Fault Up")
        bus = int(GPU_PCI[gpu].split(":")[1], 16)
        return (f"pcieport 0000:{bus - 1:02x}:01.0: AER: Corrected error received: "
                f"{GPU_PCI[gpu]}.0")
    chan = int(rng.integers(4))
    return (f"EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#{chan}_DIMM#0 "
            f"(channel:{chan} slot:0 page:0x{int(rng.integers(16**5)):x} offset:0x0 grain:32 "
            "syndrome:0x0 - err_code:0x0000:0x0090)")


def plant_precursors(params: SimParams, timeline: pd.DataFrame, ev: Evidence,
                     rng: np.random.Generator) -> pd.DataFrame:
    """Add precursor bursts to ``ev.kernel``; return one truth row per burst.

    ``timeline`` carries ``failure_us``, ``end_us``, ``category`` and ``node`` (-1: none).
    Columns of the result: ``host``, ``family``, ``failure_time`` (NaT in the null
    variant), ``first``, ``last`` (times of the burst's first and last line), ``lines``.
    """
    t0, t1 = params.start_us, params.start_us + params.window_us
    ends = np.sort(timeline["end_us"].to_numpy())
    lo, hi = ends - _KEEP_AWAY_US[0], ends + _KEEP_AWAY_US[1]
    rows = []
    for fail, node, cat in zip(timeline["failure_us"], timeline["node"], timeline["category"],
                               strict=True):
        fam = _family(str(cat))
        if fam is None or node < 0 or rng.random() >= params.precursor_fraction:
            continue
        lead = rng.uniform(*_LEAD_DAYS) * 24 * US_PER_H
        n = 3 + int(rng.poisson(6))
        offsets = (lead * rng.random(n) ** 2).astype(np.int64)
        gpu = int(rng.integers(params.gpus_per_node))
        if params.precursor_null:  # same burst, independent node and time
            node = int(rng.integers(params.n_nodes))
            fail = int(rng.integers(t0 + int(lead), t1))
        t = np.sort(int(fail) - offsets - 60_000_000)
        k = np.searchsorted(lo, t, side="right") - 1
        t = t[(t > t0) & (t < t1) & ((k < 0) | (t > hi[np.maximum(k, 0)]))]
        host = host_name(int(node))
        ev.kernel.extend((int(x), host, "kernel", _line(fam, gpu, rng)) for x in t)
        if len(t):
            rows.append((host, fam, pd.NaT if params.precursor_null else int(fail),
                         int(t[0]), int(t[-1]), len(t)))
    out = pd.DataFrame(rows, columns=["host", "family", "failure_time", "first", "last", "lines"])
    for col in ("failure_time", "first", "last"):
        out[col] = pd.to_datetime(out[col], unit="us", utc=True)
    return out
