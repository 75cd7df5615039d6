"""The settings the environment simulation and its writers share: reference temperatures,
clock response, the job phases, the random streams and the minute-by-minute job phase."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["HOURS_54D", "T_REF_C", "RISE_C", "IDLE_RISE_C", "CLOCK_REF_MHZ", "CLOCK_PER_C", "DEFAULT_CATEGORIES",
           "DOWN", "INIT", "LOAD", "CKPT", "rng", "minute_phase"]

HOURS_54D = 54 * 24
T_REF_C = 60.0
RISE_C, IDLE_RISE_C = 36.0, 12.0
CLOCK_REF_MHZ, CLOCK_PER_C = 1480.0, 3.4
DEFAULT_CATEGORIES = ("GPU HBM3 Memory", "GPU Thermal Interface + Sensor")
DOWN, INIT, LOAD, CKPT = 0, 1, 2, 3


def rng(seed: int, k: int) -> np.random.Generator:
    return np.random.default_rng([seed, 9100 + k])


def minute_phase(jobs: pd.DataFrame, start: pd.Timestamp, minutes: int, every: int) -> np.ndarray:
    t = np.arange(minutes)
    phase = np.full(minutes, DOWN, dtype=np.int8)
    for job in jobs.itertuples(index=False):
        a = int(np.ceil((job.start - start) / pd.Timedelta(minutes=1)))
        b = minutes if pd.isna(job.end) else int((job.end - start) // pd.Timedelta(minutes=1))
        if b <= a:
            continue
        since = t[a:b] - a
        ph = np.where(since < 5, INIT, np.where((since - 5) % every == every - 1, CKPT, LOAD))
        phase[a:b] = ph
    return phase
