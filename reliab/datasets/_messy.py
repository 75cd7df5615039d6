"""The untidy shapes of a real hand-over, added to the sample from their own random stream.

A cluster team's folder is never as regular as a generator's: some training jobs run a
PyTorch whose C++ log prints the month unpadded (``[rank3]:[E626 06:24:44.903881913 …]``,
``c10/util/Logging.cpp`` since 2.4), some job logs hold nothing but progress lines, some
hosts' SEL is empty (``ipmitool sel list`` prints ``SEL has no entries``), and a host with a
weak DIMM fills its kernel log with corrected-error storms (the ``mce: [Hardware Error]:
Machine check events logged`` notice of ``mce_notify_irq`` and ``EDAC MC<n>: <k> CE …``
lines of ``edac_mc.c``, as in the captures quoted in openstreetmap/operations#300 and
radiasoft/devops#134).  None of these changes what interrupted the job: corrected errors
are context, never a root cause, so the Table 5 counts stay exact.

Every draw comes from the generator passed in (``rng_for(params, 22)``), so the files the
sample held before are unchanged.  Rates are assumptions of this generator, not published values.
"""

from __future__ import annotations

import numpy as np

_S = 1_000_000
#: share of training jobs whose glog lines print the month without zero padding (assumed)
UNPADDED_SHARE = 0.3
#: corrected-error storms over the window, and hosts with an empty SEL (assumed)
N_STORMS = 4
N_EMPTY_SEL = 3
N_CLEAN_LOGS = 2


def unpadded_jobs(rng: np.random.Generator, jobs: list[str]) -> frozenset[str]:
    """Jobs whose PyTorch prints ``E626`` rather than ``E0626``."""
    pick = rng.random(len(jobs)) < UNPADDED_SHARE
    return frozenset(j for j, p in zip(jobs, pick, strict=True) if p)


def edac_storms(rng: np.random.Generator, t0_us: int, t1_us: int,
                hosts: list[str]) -> list[tuple[int, str, str, str]]:
    """Syslog records (t_us, host, program, message) of corrected-memory-error storms."""
    out: list[tuple[int, str, str, str]] = []
    for _ in range(N_STORMS):
        host = hosts[int(rng.integers(len(hosts)))]
        start = int(rng.integers(t0_us + 3600 * _S, t1_us - 3600 * _S))
        n = int(rng.integers(30, 150))
        mc, chan = int(rng.integers(0, 4)), int(rng.integers(0, 4))
        page = int(rng.integers(16**6, 16**7))
        out.append((start, host, "kernel", "mce: [Hardware Error]: Machine check events logged"))
        t = start
        for _ in range(n):
            t += int(rng.exponential(8.0) * _S) + 1000
            count = int(rng.choice([1, 1, 1, 2, 4, 6]))
            out.append((t, host, "kernel",
                        f"EDAC MC{mc}: {count} CE memory read error on CPU_SrcID#{mc // 2}_Ha#0_Chan#{chan}"
                        f"_DIMM#0 (channel:{chan} slot:0 page:0x{page:x} offset:0x0 grain:32 syndrome:0x0"
                        " -  area:DRAM err_code:0001:0090 socket:0 ha:0 channel_mask:1 rank:0)"))
    return out


def empty_sel_hosts(rng: np.random.Generator, hosts: list[str], with_records: set[str]) -> list[str]:
    """Hosts whose SEL capture says ``SEL has no entries`` (hosts without any record)."""
    free = sorted(set(hosts) - with_records)
    if not free:
        return []
    pick = rng.choice(len(free), size=min(N_EMPTY_SEL, len(free)), replace=False)
    return sorted(free[int(i)] for i in pick)


def clean_logs(rng: np.random.Generator) -> dict[str, list[str]]:
    """Job logs of evaluation runs that hold only Megatron-style iteration lines (no date)."""
    out: dict[str, list[str]] = {}
    for k in range(N_CLEAN_LOGS):
        lines, loss = [], 2.6 + float(rng.uniform(-0.1, 0.1))
        for it in range(10, 10 * int(rng.integers(8, 20)) + 1, 10):
            loss -= float(rng.uniform(0.0, 0.02))
            ms = float(rng.uniform(850, 900))
            lines.append(f" iteration {it:>8d}/{2000:>8d} | consumed samples: {it * 1024:>12d} | elapsed time per"
                         f" iteration (ms): {ms:.1f} | learning rate: 3.000E-05 | global batch size:  1024 | lm"
                         f" loss: {loss:.6E} | loss scale: 1.0 | grad norm: {float(rng.uniform(0.2, 0.4)):.3f} |")
        out[f"train/eval-{k + 1:02d}.log"] = lines
    return out
