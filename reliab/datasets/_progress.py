"""Ground truth of the training job's progress: restarts, checkpoints, and what failures cost.

The simulated job follows one simple, fixed policy, an assumption of this generator (the Llama 3
paper publishes no checkpoint interval or restart time), the same one the telemetry's phases
model:

* after an allocation starts, loading the checkpoint takes ``RESUME_MIN`` = 5 minutes; the
  log says ``model and optimizer state loaded`` when training resumes;
* every ``CHECKPOINT_EVERY_MIN`` = 30 minutes of wall time after that a checkpoint
  completes; its write took the last ``CHECKPOINT_WRITE_S`` = 60 s, during which training
  paused (blocking; the telemetry shows the power drop of that minute);
* an interruption loses the work since the last completed checkpoint (or since the resume),
  the downtime until the next allocation starts, and the next allocation's 5-minute load.

So in the terms of :mod:`reliab.models.jobs`: checkpoint interval 29 min of training, write
1 min (blocking), restart overhead 5 min plus the downtime.  :func:`progress_truth` computes,
from the simulation's own microsecond times, the checkpoint times and the per-interruption
costs written to ``truth/checkpoints.csv`` and ``truth/costs.csv``.  No randomness is used.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.datasets._simulate import US_PER_H, US_PER_MIN, SimParams
from reliab.taxonomy.vocabulary import COMPONENT_OF

RESUME_MIN = 5
CHECKPOINT_EVERY_MIN = 30
CHECKPOINT_WRITE_S = 60.0


def resume_time(start_us: int) -> int:
    """When training resumes in an allocation that started at ``start_us``."""
    return int(start_us) + RESUME_MIN * US_PER_MIN


def checkpoint_schedule(start_us: int, end_us: int) -> np.ndarray:
    """Completion times (µs) of the checkpoints an allocation writes before ``end_us``."""
    first = resume_time(start_us) + CHECKPOINT_EVERY_MIN * US_PER_MIN
    if end_us <= first:
        return np.empty(0, dtype=np.int64)
    return np.arange(first, end_us, CHECKPOINT_EVERY_MIN * US_PER_MIN, dtype=np.int64)


def progress_truth(params: SimParams, jobs: pd.DataFrame,
                   timeline: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(checkpoints, costs)``: every checkpoint written, and the cost of every interruption.

    ``checkpoints``: ``job_id``, ``time`` (completion, UTC), ``write_s``.  ``costs``: one row
    per interruption, ``job_id``, ``category``, ``component``, ``planned``, ``time`` (job end),
    ``downtime_h`` (end to the next allocation's start), ``restart_h`` (its checkpoint load),
    ``lost_work_h`` (end minus the last completed checkpoint, or minus the resume),
    ``checkpoint_h`` (blocking writes of the interrupted allocation), ``n_gpus`` and
    ``lost_gpu_hours = n_gpus × (lost_work_h + downtime_h + restart_h)``.
    """
    window_end = params.start_us + params.window_us
    starts, ends = jobs["start_us"].to_numpy(), jobs["end_us"].to_numpy()
    saves, rows = [], []
    for i, job in enumerate(jobs["job_id"]):
        end = int(ends[i]) if ends[i] >= 0 else window_end
        times = checkpoint_schedule(int(starts[i]), end)
        saves.append(pd.DataFrame({"job_id": job, "time_us": times}))
        if ends[i] < 0:
            continue
        resume = resume_time(int(starts[i]))
        last = int(times[-1]) if len(times) else min(resume, end)
        nxt_start = int(starts[i + 1])
        nxt_end = int(ends[i + 1]) if ends[i + 1] >= 0 else window_end
        load = min(resume_time(nxt_start), nxt_end) - nxt_start
        rows.append((job, (end - last) / US_PER_H, (nxt_start - end) / US_PER_H,
                     len(times) * CHECKPOINT_WRITE_S / 3600.0, load / US_PER_H))
    checkpoints = pd.concat(saves, ignore_index=True)
    checkpoints = pd.DataFrame({
        "job_id": checkpoints["job_id"].astype("string"),
        "time": pd.to_datetime(checkpoints["time_us"].to_numpy(np.int64), unit="us", utc=True).as_unit("ns"),
        "write_s": CHECKPOINT_WRITE_S})
    lost, down, writes, restart = (np.array([r[k] for r in rows], dtype=float) for k in (1, 2, 3, 4))
    costs = pd.DataFrame({
        "job_id": pd.array([r[0] for r in rows], dtype="string"),
        "time": pd.to_datetime(timeline["end_us"].to_numpy(np.int64), unit="us", utc=True).as_unit("ns"),
        "category": timeline["category"].astype("string").to_numpy(),
        "component": [COMPONENT_OF[c] for c in timeline["category"]],
        "planned": timeline["planned"].to_numpy(),
        "downtime_h": down, "restart_h": restart, "lost_work_h": lost, "checkpoint_h": writes,
        "n_gpus": params.n_gpus,
        "lost_gpu_hours": params.n_gpus * (lost + down + restart),
    })
    return checkpoints, costs
