"""Per-GPU telemetry series written by the fleet reduction tests (test helper).

Three hours of one GPU from 2024-03-01T00:00:00.25Z, sampled every 5 s (``regular``) or at
random 2-8 s steps, power at 650 W with a 150 W dip every 180 samples and 100 W in the
12 s before each time of ``cuts`` (so a swing of more than 300 W falls right across each
cut), temperature near 62 °C with 1 % of its readings missing; without a GPU column when
``gpu`` is None.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def gpu_series(rng: np.random.Generator, host: str, gpu: str | None, regular: bool,
               cuts: pd.DatetimeIndex) -> pd.DataFrame:
    """One GPU's samples (see the module doc)."""
    step = np.full(3 * 720, 5.0) if regular else rng.uniform(2.0, 8.0, 3 * 720)
    t = pd.Timestamp("2024-03-01T00:00:00.25Z") + pd.to_timedelta(np.cumsum(step), unit="s")
    t = t[t < pd.Timestamp("2024-03-01T03:00:00Z")]
    power = np.where(np.arange(len(t)) % 180 < 4, 150.0, 650.0) + rng.normal(0, 10, len(t))
    for cut in cuts:  # low just before each cut, high after: a swing across the cut
        power[(t < cut) & (t >= cut - pd.Timedelta(seconds=12))] = 100.0
    temp = 62 + 3 * np.sin(np.arange(len(t)) / 100) + rng.normal(0, 0.5, len(t))
    frame = pd.DataFrame({"time": t, "host": host, "gpu": gpu, "gpu_temp_c": temp.round(), "power_w": power})
    frame.loc[rng.random(len(t)) < 0.01, "gpu_temp_c"] = np.nan
    return frame if gpu is not None else frame.drop(columns="gpu")
