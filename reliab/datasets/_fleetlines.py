"""Log lines of the fleet sample, rendered column-wise (polars) so that millions cost seconds.

Shapes follow real captures: rsyslog RFC 3339 lines ``<stamp> <host> <tag>: <message>``;
``NVRM: Xid (PCI:<bus>): <code>, pid=…, name=…, <text>`` (NVIDIA "Xid Errors" document, gpud
testdata); the benign mlx5 ``ACCESS_REG … failed`` flood of restricted PCI functions (Linux
``mlx5/core/cmd.c``); ``EDAC`` and ``AER`` driver start-up lines, which hold a prefilter
literal without being a failure (Linux ``drivers/edac/skx_base.c``,
``drivers/pci/pcie/aer.c``); Xid 43 (a user application's fault, the commonest Xid of a
shared cluster).  Line mixes are assumptions of this generator: :data:`NOISE` makes about
5 % of the benign lines hold a kernel prefilter literal, as on a busy fleet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reliab.datasets._simulate import GPU_PCI
from reliab.datasets._writers import SACCT_HEADER, iso_us

_US = 1_000_000
#: (weight, template with ``{}`` fields, field columns); fields: a (1-60000), b (pid),
#: c, d, e (0-249), bus (a PCI bus byte, hex)
NOISE: tuple[tuple[float, str, tuple[str, ...]], ...] = (
    (10, "systemd[1]: Started Session {} of User root.", ("a",)),
    (10, "systemd[1]: session-{}.scope: Deactivated successfully.", ("a",)),
    (6, "systemd-logind[1873]: New session {} of user root.", ("a",)),
    (6, "sshd[{}]: Accepted publickey for svc-health from 10.{}.{}.{} port {} ssh2: ED25519 "
        "SHA256:k3Jt0mQ5yq2nFh1cXwZ6rU8pLdV9sBa4eTgHiOoP7Yc", ("b", "c", "d", "e", "a")),
    (6, "sshd[{}]: pam_unix(sshd:session): session closed for user svc-health", ("b",)),
    (12, "CRON[{}]: (root) CMD (/usr/local/bin/node-health-check --quiet)", ("b",)),
    (4, "chronyd[1212]: Selected source 10.0.{}.{} (ntp{}.cluster.local)", ("c", "e", "d")),
    (14, "kernel: mlx5_core 0000:{}:00.1: mlx5_cmd_out_err:838:(pid {}): ACCESS_REG(0x805) op_mod(0x1) "
         "failed, status bad parameter(0x3), syndrome (0x6c4d48), err(-22)", ("bus", "b")),
    (2, "kernel: perf: interrupt took too long (2504 > 2500), lowering kernel.perf_event_max_sample_rate "
        "to 79750", ()),
    (2, "kernel: IPv4: martian source 10.{}.{}.{} from 10.{}.{}.1, on dev eno1", ("c", "d", "e", "c", "d")),
    (2.0, "kernel: EDAC MC{}: Giving out device to module skx_edac controller Skylake Socket#{} IMC#0: "
          "DEV 0000:{}:0a.0 (INTERRUPT)", ("d", "d", "bus")),
    (2.0, "kernel: pcieport 0000:{}:01.0: AER: enabled with IRQ {}", ("bus", "e")),
    (0.9, "kernel: NVRM: Xid (PCI:0000:{}:00): 43, pid={}, name=python3, Ch 00000008", ("bus", "b")),
)
#: (Xid code, text) of failures (NVIDIA "Xid Errors": 79 fallen off the bus, 48 DBE,
#: 94/95 contained/uncontained ECC, 119 GSP RPC timeout, 74 NVLink)
XIDS: tuple[tuple[int, str], ...] = (
    (79, "GPU has fallen off the bus."),
    (48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
         "partition 6, subpartition 0."),
    (94, "Contained: SM (0x1). RST: No, D-RST: No"),
    (95, "Uncontained: FBHUB. RST: Yes, D-RST: No"),
    (119, "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 "
          "(GSP_RM_CONTROL) (0x20801813 0x4c)."),
    (74, "NVLink: fatal error detected on link 4(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"),
)


def host(i: np.ndarray | int) -> Any:
    """``node00001`` … (1-based, five digits: a fleet of up to 99,999 hosts)."""
    if isinstance(i, int | np.integer):
        return f"node{int(i) + 1:05d}"
    return np.array([f"node{int(k) + 1:05d}" for k in np.asarray(i).ravel()], dtype=object)


def _noise(rng: np.random.Generator, n: int, t0: int, hosts: np.ndarray) -> Any:
    """``n`` benign lines of one day: a polars frame of ``t`` (µs) and ``line``."""
    import polars as pl

    weights = np.array([w for w, _, _ in NOISE])
    kind = rng.choice(len(NOISE), size=n, p=weights / weights.sum())
    fields = {"a": rng.integers(1, 60_000, n), "b": rng.integers(1000, 99_999, n),
              "c": rng.integers(0, 250, n), "d": rng.integers(0, 8, n), "e": rng.integers(0, 250, n)}
    frame = pl.DataFrame({"t": t0 + rng.integers(0, 86_400 * _US, n), "host": hosts[rng.integers(0, len(hosts), n)],
                          "k": kind, **fields,
                          "bus": np.array([f"{x:02x}" for x in range(256)])[rng.integers(0, 256, n)]})
    text = pl.lit(None, dtype=pl.String)
    for i, (_, template, cols) in enumerate(NOISE):
        text = pl.when(pl.col("k") == i).then(pl.format(template, *[pl.col(c) for c in cols])).otherwise(text)
    return frame.select("t", line=pl.concat_str(pl.col("host"), pl.lit(" "), text))


def _failures(rng: np.random.Generator, nodes: np.ndarray, facts: dict[str, Any], hosts: np.ndarray) -> Any:
    """The kernel line of every failure of the pod-day."""
    import polars as pl

    n = len(facts["fail_time"])
    code = rng.integers(0, len(XIDS), n)
    lines = [f"{hosts[i]} kernel: NVRM: Xid (PCI:{GPU_PCI[g % len(GPU_PCI)]}): {XIDS[c][0]}, "
             f"pid={int(pid)}, name=pt_main_thread, {XIDS[c][1]}"
             for i, g, c, pid in zip(facts["fail_node"], facts["fail_gpu"], code, rng.integers(1000, 99_999, n),
                                     strict=True)]
    return pl.DataFrame({"t": np.asarray(facts["fail_time"], dtype=np.int64), "line": lines},
                        schema={"t": pl.Int64, "line": pl.String})


def render_syslog(p: Any, nodes: np.ndarray, facts: dict[str, Any], rng: np.random.Generator) -> tuple[bytes, int]:
    """The central syslog file of one pod-day (sorted by time) and its number of lines."""
    import polars as pl

    hosts = host(nodes)
    n = int(rng.poisson(p.noise_lines_per_node_day * len(nodes)))
    frame = pl.concat([_noise(rng, n, facts["t0"], hosts).with_columns(pl.col("t").cast(pl.Int64)),
                       _failures(rng, nodes, facts, hosts)]).sort("t", maintain_order=True)
    stamp = (pl.from_epoch(pl.col("t"), time_unit="us").dt.strftime("%Y-%m-%dT%H:%M:%S%.6f") + pl.lit("+00:00"))
    text = frame.select(pl.concat_str(stamp, pl.lit(" "), pl.col("line")).alias("x"))["x"]
    body = "\n".join(text.to_list())
    return (body + "\n").encode("utf-8") if len(text) else b"", len(text)


def sacct_lines(jobs: list[tuple], gpus_per_node: int) -> list[str]:
    """``sacct --parsable2`` rows (allocation and ``.batch``) of fleet jobs, header first.

    ``jobs`` rows are ``(job_id, submit_us, start_us, end_us, state, exit_code, first_node,
    nnodes)``; a job's hosts are ``nnodes`` consecutive ones from ``first_node``.
    """
    rows = [SACCT_HEADER]
    for job, sub, start, end, state, code, first, nnodes in sorted(jobs):
        t_sub, t_start, t_end = (s[:19] for s in iso_us([sub, start, end]))
        el = (end - start) // _US
        elapsed = f"{el // 86_400}-{el % 86_400 // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}" if el >= 86_400 \
            else f"{el // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}"
        nodelist = f"node[{first + 1:05d}-{first + nnodes:05d}]" if nnodes > 1 else host(first)
        tres = f"billing={nnodes * 224},cpu={nnodes * 224},gres/gpu={nnodes * gpus_per_node},mem={nnodes * 2000}G,node={nnodes}"
        step = "CANCELLED" if state == "NODE_FAIL" else state
        rows += [f"{job}|{job}|pretrain-{job % 97}|svc-train|train|{state}|{code}|{t_sub}|{t_start}|{t_end}|"
                 f"{elapsed}|{nnodes}|{nodelist}|0|{tres}",
                 f"{job}.batch|{job}.batch|batch|||{step}|{'0:9' if state == 'NODE_FAIL' else code}|{t_start}|"
                 f"{t_start}|{t_end}|{elapsed}|1|{host(first)}||cpu=224,gres/gpu={gpus_per_node},mem=2000G,node=1"]
    return rows
