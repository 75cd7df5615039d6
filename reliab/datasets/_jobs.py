"""Slurm job segments of the restarting training job, and Slurm hostlists.

Each interruption ends one allocation and the automation submits a new one (a new job id,
``Restarts`` 0), which starts after the restart downtime.  End states follow the contract
(docs/raw-formats.md): ``NODE_FAIL`` when the node went away, ``CANCELLED by 0`` for
planned interruptions, ``FAILED`` otherwise; the last allocation is still ``RUNNING``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.datasets._signatures import NODE_FAIL
from reliab.datasets._simulate import US_PER_MIN, SimParams, host_name

FIRST_JOB_ID = 4_312_001  # any plausible Slurm job id


def hostlist(nodes: np.ndarray) -> str:
    """Compress sorted 0-based node indices to a Slurm hostlist, ``node[0001-0420,0422]``."""
    if len(nodes) == 0:
        return ""
    idx = np.sort(np.asarray(nodes)) + 1
    breaks = np.flatnonzero(np.diff(idx) != 1)
    starts = np.concatenate([[idx[0]], idx[breaks + 1]])
    ends = np.concatenate([idx[breaks], [idx[-1]]])
    parts = [f"{a:04d}" if a == b else f"{a:04d}-{b:04d}"
             for a, b in zip(starts, ends, strict=True)]
    if len(idx) == 1:
        return "node" + parts[0]
    return "node[" + ",".join(parts) + "]"


def end_state(category: str, rng: np.random.Generator) -> tuple[str, str, bool]:
    """(state as printed, ExitCode, node failed) of a job ended by ``category``."""
    if category == "Planned":
        return "CANCELLED by 0", "0:15", False
    if category in NODE_FAIL or (category == "Faulty GPU" and rng.random() < 0.6):
        return "NODE_FAIL", "0:0", True
    return "FAILED", "1:0", False


def build_jobs(params: SimParams, timeline: pd.DataFrame, segments: list[np.ndarray],
               rng: np.random.Generator) -> pd.DataFrame:
    """One row per allocation (interruptions + 1), times in UTC microseconds.

    Columns: ``job_id``, ``submit_us``, ``start_us``, ``end_us`` (-1 while running),
    ``state_raw``, ``state``, ``exit_code``, ``failed_node``, ``nodelist``, ``seg``.
    """
    n = len(timeline)
    ids = FIRST_JOB_ID + np.concatenate([[0], np.cumsum(rng.integers(1, 60, n))])
    ends = timeline["end_us"].to_numpy()
    down = np.round(timeline["downtime_min"].to_numpy() * US_PER_MIN).astype(np.int64)
    starts = np.concatenate([[params.start_us], ends + down])
    submits = np.concatenate([[params.start_us - 7 * US_PER_MIN], ends + 30_000_000])
    rows = []
    for i in range(n + 1):
        if i < n:
            cat, node = timeline["category"].iat[i], int(timeline["node"].iat[i])
            raw, code, failed = end_state(cat, rng)
            end, failed_node = int(ends[i]), (host_name(node) if failed and node >= 0 else "")
        else:
            raw, code, end, failed_node = "RUNNING", "0:0", -1, ""
        rows.append((str(ids[i]), int(submits[i]), int(starts[i]), end, raw,
                     raw.split(" ")[0], code, failed_node, hostlist(segments[i]), i))
    return pd.DataFrame(rows, columns=["job_id", "submit_us", "start_us", "end_us", "state_raw",
                                       "state", "exit_code", "failed_node", "nodelist", "seg"])
