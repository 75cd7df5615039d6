"""Ordinary log lines that carry no failure signal: the bulk of every real log.

Programs and texts are those of a typical GPU host (systemd, sshd, CRON, chronyd,
nvidia-persistenced, kernel chatter) and the benign mlx5 ``ACCESS_REG … failed`` flood of
restricted PCI functions (Linux ``drivers/net/ethernet/mellanox/mlx5/core/cmd.c``; real lines in
``leptonai/gpud`` ``components/accelerator/nvidia/infiniband/kmsg_matcher.go``).  Line rates are
assumptions of this generator (not published values), kept small so that the bundled sample
stays compact.  Times, hosts and templates are drawn with numpy in one pass; only the final
string join is per line.
"""

from __future__ import annotations

import numpy as np

_S = 1_000_000

#: (program, message) templates; fields {a}…{e} are filled with random integers
SYSLOG_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("systemd[1]", "Started Session {a} of User root."),
    ("systemd[1]", "session-{a}.scope: Deactivated successfully."),
    ("systemd-logind[1873]", "New session {a} of user root."),
    ("sshd[{b}]", "Accepted publickey for svc-health from 10.{c}.{d}.{e} port {a} ssh2: "
                  "ED25519 SHA256:k3Jt0mQ5yq2nFh1cXwZ6rU8pLdV9sBa4eTgHiOoP7Yc"),
    ("sshd[{b}]", "pam_unix(sshd:session): session closed for user svc-health"),
    ("CRON[{b}]", "(root) CMD (/usr/local/bin/node-health-check --quiet)"),
    ("chronyd[1212]", "Selected source 10.0.{c}.{e} (ntp{d}.cluster.local)"),
    ("nvidia-persistenced[{b}]", "Verbose syslog connection opened"),
    ("systemd[1]", "Starting Cleanup of Temporary Directories..."),
    ("systemd[1]", "systemd-tmpfiles-clean.service: Deactivated successfully."),
    ("kernel", "mlx5_core 0000:{c:02x}:00.1: mlx5_cmd_out_err:838:(pid {b}): ACCESS_REG(0x805) "
               "op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x6c4d48), err(-22)"),
    ("kernel", "perf: interrupt took too long (2504 > 2500), lowering "
               "kernel.perf_event_max_sample_rate to 79750"),
    ("kernel", "IPv4: martian source 10.{c}.{d}.{e} from 10.{c}.{d}.1, on dev eno1"),
    ("kernel", "nvidia-nvswitch{d}: NVSwitch thermal monitor: temperature within limits"),
)
_WEIGHTS = np.array([10, 10, 6, 6, 6, 12, 4, 2, 2, 2, 14, 2, 2, 1], dtype=float)
_ACCESS_REG = 10  # index of the flood template: emitted in bursts of 2-6 lines


def syslog_noise(rng: np.random.Generator, t0_us: int, t1_us: int, hosts: list[str],
                 n_lines: int) -> list[tuple[int, str, str, str]]:
    """About ``n_lines`` records (t_us, host, program, message) between ``t0_us`` and ``t1_us``."""
    k = rng.choice(len(SYSLOG_TEMPLATES), size=n_lines, p=_WEIGHTS / _WEIGHTS.sum())
    t = rng.integers(t0_us, t1_us, n_lines)
    h = rng.integers(0, len(hosts), n_lines)
    f = rng.integers(1, 60_000, (n_lines, 5))
    f[:, 2:] %= 250
    reps = np.where(k == _ACCESS_REG, rng.integers(2, 7, n_lines), 1)
    out = []
    for i in range(n_lines):
        prog, msg = SYSLOG_TEMPLATES[k[i]]
        a, b, c, d, e = f[i]
        prog = prog.format(b=b) if "{" in prog else prog
        text = msg.format(a=a, b=b, c=c, d=d % 8, e=e)
        for r in range(reps[i]):
            out.append((int(t[i]) + r * 17, hosts[h[i]], prog, text))
    return out


def kernel_noise(rng: np.random.Generator, t0_us: int, t1_us: int, host: str,
                 n_lines: int) -> list[tuple[int, str, str, str]]:
    """Kernel-only chatter for a per-host dmesg capture."""
    recs = syslog_noise(rng, t0_us, t1_us, [host], n_lines * 3)
    return [r for r in recs if r[2] == "kernel"][:n_lines]


def training_lines(rng: np.random.Generator, job: str, start_us: int, end_us: int,
                   step0: int, tput: np.ndarray, t_first_min_us: int, *, resume_us: int,
                   saves_us: np.ndarray, write_s: float) -> tuple[list[tuple], int]:
    """Step lines every 5 min and the checkpoint lines of one job segment.

    ``tput`` is the cluster throughput per minute (tokens/s) starting at ``t_first_min_us``.
    Training resumes at ``resume_us`` and checkpoints complete at ``saves_us`` (each step
    tick that falls on one prints the save), each write taking ``write_s`` (see
    ``reliab.datasets._progress``).  Returns the (t_us, job, style, text) records and the
    last checkpointed step.
    """
    tokens_per_step = 16 * 2**20  # Llama 3 405B: 16M tokens (arXiv 2407.21783 Table 4)
    recs = [(start_us + 2 * _S, job, "iso:INFO",
             f"[trainer] job {job} starting, resuming from checkpoint step {step0}"),
            (resume_us, job, "iso:INFO", f"[trainer] model and optimizer state loaded for step {step0}")]
    saves = set(int(x) for x in saves_us)
    t, step, ckpt = start_us + 5 * 60 * _S, step0, step0
    k = 0
    while True:
        t += 5 * 60 * _S
        k += 1
        if t >= end_us:
            break
        m = min(len(tput), max(1, (t - t_first_min_us) // (60 * _S)))
        window = tput[max(0, m - 5):m]
        rate = float(window.max()) if len(window) and window.max() > 0 else 1.0
        step += int(60 * window.sum() / tokens_per_step)
        loss = 1.62 + 0.4 * np.exp(-step / 4e5) + rng.normal(0, 0.01)
        recs.append((t + int(rng.integers(0, 900_000)), job, "iso:INFO",
                     f"[trainer] step {step} | loss {loss:.4f} | lr 8.00e-05 | "
                     f"tokens/s {int(rate)} | step_time {tokens_per_step / rate:.2f}s"))
        if k % 6 == 0:
            rng.uniform(40, 58)  # drawn (and unused) so that the step lines stay as they were
        if t in saves:
            ckpt = step
            recs.append((t, job, "iso:INFO", f"[checkpoint] saved step {step} to "
                         f"/checkpoints/llama3-405b/step_{step:08d} in {write_s:.1f}s"))
    return recs, ckpt
