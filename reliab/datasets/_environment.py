"""Environment and telemetry of the simulated cluster: temperature, power, clocks, throughput.

Calibration and sources ([P] published or measured, [C] computed from published numbers,
[U] our assumption):

* diurnal 1–2 % throughput variation from mid-day temperatures acting on GPU dynamic
  voltage and frequency scaling — Llama 3 (arXiv 2407.21783) §3.3.4 [P].  Here the clock of a
  power-capped GPU falls 3.4 MHz per °C of GPU temperature [U], which with the ±3.5 °C ambient
  swing gives ≈1.6 % peak to trough;
* synchronized power drops of the whole job at checkpoints and restarts ("tens of
  megawatts") — Llama 3 §3.3.4 [P]; checkpoint every 30 min lasting ~1 min [U];
* GPU levels from the real H200 capture in ``data/h200_telemetry`` [P]: ~100 W idle, 700 W
  cap under load, SM clock 1980 MHz uncapped falling to ~1450–1500 MHz under the power cap,
  37 °C idle to ~60 °C under load;
* throughput 2.72 M tokens/s = 16,384 GPUs × 400 TFLOP/s (Table 4) / (6 × 405e9) [C];
* host power (CPUs, NICs, fans) 1.8 kW under load, 0.7 kW idle [U]; ambient 22 °C mean,
  ±3.5 °C daily cycle peaking at 15:00 local time, site at UTC−7 [U].
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.datasets._simulate import US_PER_MIN, SimParams, host_name

TOKENS_PER_S = 16_384 * 400e12 / (6 * 405e9)  # [C] from Llama 3 Table 4
CLOCK_REF_MHZ = 1480.0
CLOCK_PER_C = 3.4
INIT_MIN, CKPT_EVERY_MIN = 5, 30
# phase codes per minute
DOWN, INIT, LOAD, CKPT = 0, 1, 2, 3
GPU_W = np.array([70.0, 300.0, 694.0, 112.0])  # per GPU, by phase
HOST_W = np.array([700.0, 1500.0, 1800.0, 1500.0])
TEMP_RISE_C = np.array([12.0, 25.0, 36.0, 24.0])
UTIL_PCT = np.array([0.0, 40.0, 100.0, 0.0])


def minute_phases(params: SimParams, jobs: pd.DataFrame) -> np.ndarray:
    """Phase code of the training job for every minute of the window."""
    n_min = params.window_us // US_PER_MIN
    t = params.start_us + np.arange(n_min, dtype=np.int64) * US_PER_MIN
    starts = jobs["start_us"].to_numpy()
    ends = jobs["end_us"].to_numpy().copy()
    ends[ends < 0] = params.start_us + params.window_us + 1
    k = np.searchsorted(starts, t, side="right") - 1
    running = (k >= 0) & (t < ends[np.maximum(k, 0)])
    since = (t - starts[np.maximum(k, 0)]) // US_PER_MIN
    phase = np.full(n_min, LOAD, dtype=np.int8)
    phase[(since - INIT_MIN) % CKPT_EVERY_MIN == CKPT_EVERY_MIN - 1] = CKPT
    phase[since < INIT_MIN] = INIT
    phase[~running] = DOWN
    return phase


def ambient(params: SimParams, rng: np.random.Generator) -> np.ndarray:
    """Ambient (inlet) temperature per minute: daily cycle + day-to-day weather + noise."""
    n_min = params.window_us // US_PER_MIN
    hours = params.start_us / 3.6e9 + np.arange(n_min) / 60.0 + params.utc_offset_h
    cycle = 3.5 * np.cos(2 * np.pi * (hours % 24 - 15.0) / 24.0)
    days = int(np.ceil(n_min / 1440)) + 1
    weather = np.interp(np.arange(n_min) / 1440.0, np.arange(days), rng.normal(0, 0.6, days))
    return 22.0 + cycle + weather + rng.normal(0, 0.08, n_min)


def clock_mhz(temp_c: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """SM clock: power-capped under load (falls with temperature), boost otherwise."""
    capped = CLOCK_REF_MHZ - CLOCK_PER_C * (temp_c - 58.0)
    return np.where(phase == LOAD, capped, 1980.0)


def cluster_series(params: SimParams, phase: np.ndarray, amb: np.ndarray,
                   rng: np.random.Generator) -> pd.DataFrame:
    """Cluster-level 1-min series: ambient, total power and training throughput."""
    n = len(phase)
    temp = amb + TEMP_RISE_C[phase]
    node_w = params.gpus_per_node * GPU_W[phase] + HOST_W[phase]
    power = params.n_nodes * node_w * (1 + rng.normal(0, 0.002, n))
    rel = clock_mhz(temp, phase) / CLOCK_REF_MHZ * (1 + rng.normal(0, 0.002, n))
    scale = params.n_gpus / 16_384
    tput = np.where(phase == LOAD, TOKENS_PER_S * scale * rel, 0.0)
    return _typed(pd.DataFrame({
        "time": _times(params, np.arange(n)),
        "host": "cluster",
        "gpu": pd.NA,
        "ambient_c": np.round(amb, 2),
        "power_w": np.round(power, -3).astype(np.int64),
        "throughput_tokens_per_s": np.round(tput).astype(np.int64),
    }))


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """``host`` and ``gpu`` as pandas strings (reliab.schema.TELEMETRY)."""
    return frame.astype({"host": "string", "gpu": "string"})


def _times(params: SimParams, minutes: np.ndarray) -> pd.DatetimeIndex:
    us = params.start_us + minutes.astype(np.int64) * US_PER_MIN
    return pd.to_datetime(us, unit="us", utc=True).as_unit("ns")


def _in_job(spans: list[tuple], node: int, t_us: np.ndarray) -> np.ndarray:
    """True where ``node`` belonged to the job's allocation."""
    mask = np.zeros(len(t_us), dtype=bool)
    for n, t0, t1 in spans:
        if n == node:
            mask |= (t_us >= t0) & (t_us < t1)
    return mask


def telemetry_hosts(params: SimParams) -> np.ndarray:
    """Node indices whose telemetry is kept: evenly spread over the job's nodes."""
    k = min(params.telemetry_nodes, params.n_nodes)
    return np.unique(np.linspace(0, params.n_nodes - 1, k).round().astype(int))


def node_series(params: SimParams, phase: np.ndarray, amb: np.ndarray, spans: list[tuple],
                rng: np.random.Generator, *, step_min: int = 15) -> pd.DataFrame:
    """Per-node samples every ``step_min`` minutes (GPU mean temperature, node power)."""
    minutes = np.arange(0, len(phase), step_min)
    t_us = params.start_us + minutes.astype(np.int64) * US_PER_MIN
    frames = []
    for node in telemetry_hosts(params):
        ph = np.where(_in_job(spans, int(node), t_us), phase[minutes], DOWN)
        temp = amb[minutes] + TEMP_RISE_C[ph] + rng.normal(0, 1.5) + rng.normal(0, 0.4, len(ph))
        power = params.gpus_per_node * GPU_W[ph] + HOST_W[ph] + rng.normal(0, 25, len(ph))
        frames.append(pd.DataFrame({
            "time": _times(params, minutes), "host": host_name(int(node)), "gpu": pd.NA,
            "temp_c": np.round(temp, 1), "power_w": np.round(power).astype(np.int64),
            "sm_clock_mhz": np.round(clock_mhz(temp, ph)).astype(np.int64)}))
    return _typed(pd.concat(frames, ignore_index=True))


def gpu_slice(params: SimParams, phase: np.ndarray, amb: np.ndarray, spans: list[tuple],
              rng: np.random.Generator, *, day: int = 2, n_hosts: int = 2) -> pd.DataFrame:
    """Per-GPU 1-min samples of a few nodes over one day (checkpoint drops visible)."""
    day = min(day, max(0, len(phase) // 1440 - 1))
    minutes = np.arange(day * 1440, min(len(phase), (day + 1) * 1440))
    t_us = params.start_us + minutes.astype(np.int64) * US_PER_MIN
    frames = []
    for node in telemetry_hosts(params)[:n_hosts]:
        ph = np.where(_in_job(spans, int(node), t_us), phase[minutes], DOWN)
        for g in range(params.gpus_per_node):
            temp = amb[minutes] + TEMP_RISE_C[ph] + rng.normal(0, 2.0) + \
                rng.normal(0, 0.3, len(ph))
            power = np.minimum(700.0, GPU_W[ph] + rng.normal(0, 4, len(ph)))
            frames.append(pd.DataFrame({
                "time": _times(params, minutes), "host": host_name(int(node)), "gpu": str(g),
                "temp_c": np.round(temp, 1), "power_w": np.round(power, 1),
                "sm_clock_mhz": np.round(clock_mhz(temp, ph)).astype(np.int64),
                "util_pct": UTIL_PCT[ph].astype(np.int64)}))
    return _typed(pd.concat(frames, ignore_index=True))


def cluster_telemetry(params: SimParams, jobs: pd.DataFrame, spans: list[tuple],
                         rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """All telemetry tables: ``cluster`` (1 min), ``nodes`` (15 min), ``gpus`` (1 day, 1 min)."""
    phase = minute_phases(params, jobs)
    amb = ambient(params, rng)
    return {
        "cluster": cluster_series(params, phase, amb, rng),
        "nodes": node_series(params, phase, amb, spans, rng),
        "gpus": gpu_slice(params, phase, amb, spans, rng),
    }
