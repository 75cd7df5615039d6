"""A fleet's environment with known truth: temperature-driven failures, diurnal throughput, power.

:func:`simulate_environment` draws, hour by hour for every node of one large training job:

* GPU temperature ``T = ambient + load rise + node offset + noise`` (0.1 °C resolution), with
  ambient ``mean + swing · cos(2π (local hour − 15) / 24)`` plus day-to-day weather (assumed);
* failures of the chosen categories (default GPU HBM3 memory and thermal interface, Llama 3
  Table 5, arXiv 2407.21783) as Poisson counts with rate ``λ0 · IRR^(T − 60)`` per node-hour,
  and of all other categories at a constant rate (a negative control with IRR 1) — so the true
  temperature incidence-rate ratio is known;
* the job timeline: every failure while the job runs interrupts it (restart downtime
  lognormal, median 15 min, assumed); a checkpoint pause of one minute every 30 running
  minutes (assumed); power steps of every GPU at each pause, stop and start (levels of the
  real H200 capture in ``data/h200_telemetry``);
* cluster throughput with a diurnal peak-to-trough amplitude of exactly
  ``diurnal_amplitude_pct`` (Llama 3, arXiv 2407.21783 §3.3.4, reports 1–2 %) through a
  clock that falls with temperature;
* a per-node throughput panel (node baselines correlated with node temperature, AR(1)
  noise) whose temperature effect splits into a known direct part and a known part through
  the SM clock.

The default rates give Llama 3's expected counts at 2,048 nodes over 54 days.  Random
numbers come from ``numpy.random.default_rng([seed, 9100 + k])``, independent of
:func:`~reliab.datasets.simulate_cluster`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reliab.datasets._envbase import (
    CKPT,
    CLOCK_PER_C,
    CLOCK_REF_MHZ,
    DEFAULT_CATEGORIES,
    HOURS_54D,
    IDLE_RISE_C,
    LOAD,
    RISE_C,
    T_REF_C,
)
from reliab.datasets._envbase import minute_phase as _minute_phase
from reliab.datasets._envbase import rng as _rng
from reliab.datasets._environment import GPU_W, HOST_W
from reliab.datasets._envwrite import SimulatedEnvironment
from reliab.taxonomy.vocabulary import TABLE5_COUNTS


def _ambient(hours: np.ndarray, local_hour: np.ndarray, mean: float, swing: float,
             weather_sd: float, rng: np.random.Generator) -> np.ndarray:
    """Ambient °C at fractional hours since start: daily cosine peaking 15:00 + weather."""
    days = int(np.ceil(hours.max() / 24)) + 2 if len(hours) else 2
    knots = rng.normal(0.0, weather_sd, days)
    weather = np.interp(hours / 24.0, np.arange(days), knots)
    return mean + swing * np.cos(2 * np.pi * (local_hour - 15.0) / 24.0) + weather


def _timeline(base_t: np.ndarray, frailty: np.ndarray, lam_c: float, lam_o: float,
              irr: float, rng: np.random.Generator) -> dict[str, Any]:
    """Hour-by-hour load, temperature and failures; failures while running interrupt the job."""
    n, hours = base_t.shape
    temp = np.empty_like(base_t)
    y_c = np.zeros((n, hours), dtype=np.int64)
    y_o = np.zeros((n, hours), dtype=np.int64)
    load = np.empty(hours)
    down_until, events = 0.0, []
    for h in range(hours):
        load[h] = float(np.clip(h + 1 - max(float(h), down_until), 0.0, 1.0))
        temp[:, h] = np.round(base_t[:, h] + (IDLE_RISE_C + (RISE_C - IDLE_RISE_C) * load[h]), 1)
        y_c[:, h] = rng.poisson(lam_c * frailty * irr ** (temp[:, h] - T_REF_C))
        y_o[:, h] = rng.poisson(lam_o * frailty)
        for node in np.flatnonzero(y_c[:, h] + y_o[:, h]):
            for k in range(int(y_c[node, h] + y_o[node, h])):
                u = h + float(rng.random())
                if u >= down_until:
                    delay = float(np.exp(rng.uniform(np.log(30), np.log(300)))) / 3600
                    down = max(0.2, float(rng.lognormal(np.log(0.25), 0.35)))
                    down_until = u + delay + down
                    events.append((u, u + delay, down_until, int(node), k < y_c[node, h]))
    return {"temp": temp, "y_c": y_c, "y_o": y_o, "load": load, "events": events}


def _jobs(events: list[tuple], start: pd.Timestamp, total_h: float,
          rng: np.random.Generator, categories: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    events = sorted(events)
    t0, rows, inter = 0.0, [], []
    h = pd.Timedelta(hours=1)
    others = [c for c in TABLE5_COUNTS if c not in categories]
    weights = np.array([TABLE5_COUNTS[c] for c in others], dtype=float)
    for i, (fail, end, restart, node, chosen) in enumerate(events):
        cat = str(rng.choice(categories)) if chosen else str(rng.choice(others, p=weights / weights.sum()))
        state = "NODE_FAIL" if chosen or cat in ("Faulty GPU", "Power Supply") else "FAILED"
        rows.append((f"{7100000 + i}", start + t0 * h, start + end * h, state))
        inter.append((start + end * h, f"node{node + 1:04d}", cat, False, start + fail * h))
        t0 = min(restart, total_h)
    rows.append((f"{7100000 + len(events)}", start + t0 * h, pd.NaT, "RUNNING"))
    jobs = pd.DataFrame(rows, columns=["job_id", "start", "end", "state"])
    jobs["end"] = pd.to_datetime(jobs["end"], utc=True)
    inter_df = pd.DataFrame(inter, columns=["time", "hosts", "category", "planned", "failure_time"])
    return jobs.astype({"job_id": "string", "state": "string"}), inter_df.astype(
        {"hosts": "string", "category": "string"})


def simulate_environment(
    n_nodes: int = 2048,
    days: float = 54,
    *,
    temperature_irr: float = 1.08,
    categories: tuple[str, ...] = DEFAULT_CATEGORIES,
    rate_scale: float = 1.0,
    frailty: float = 0.0,
    diurnal_amplitude_pct: float = 1.5,
    ambient_mean_c: float = 22.0,
    ambient_swing_c: float = 3.5,
    weather_sd_c: float = 0.6,
    node_sd_c: float = 2.0,
    gpus_per_node: int = 8,
    checkpoint_every_min: int = 30,
    throughput_nodes: int = 64,
    direct_pct_per_c: float = -0.05,
    start: str = "2024-06-01T00:00:00Z",
    utc_offset_h: float = -7.0,
    seed: int = 0,
) -> SimulatedEnvironment:
    """Simulate a fleet's temperature, power, throughput and failures with known effects.

    Parameters
    ----------
    n_nodes, days : int, float
        Nodes of the training job and length of the window.
    temperature_irr : float
        True incidence-rate ratio per °C of node mean GPU temperature for ``categories``.
    categories : tuple of str
        Table 5 categories whose rate depends on temperature.
    rate_scale : float
        Multiplier on the Llama 3 rates (Table 5 count / (16,384 GPUs × 54 days)).
    frailty : float
        Variance of a gamma node frailty (mean 1) on all failure rates; 0: Poisson counts.
    diurnal_amplitude_pct : float
        True peak-to-trough amplitude of cluster throughput, % of its mean.
    ambient_mean_c, ambient_swing_c, weather_sd_c, node_sd_c : float
        Ambient mean and daily half-swing (peak 15:00 local), sd of daily weather and of
        the persistent per-node temperature offset.
    gpus_per_node, checkpoint_every_min : int
        GPUs per node; running minutes between one-minute checkpoint pauses.
    throughput_nodes : int
        Nodes in the per-node throughput panel.
    direct_pct_per_c : float
        True direct effect of temperature on node throughput (% per °C) besides the clock.
    start, utc_offset_h, seed
        Window start (UTC), local time offset of the site and the seed.

    Returns
    -------
    SimulatedEnvironment
    """
    if n_nodes < 1 or days <= 0:
        raise ValueError(f"n_nodes must be >= 1 and days > 0, got {n_nodes}, {days}")
    if not temperature_irr > 0 or not rate_scale >= 0 or frailty < 0:
        raise ValueError("temperature_irr must be > 0, rate_scale >= 0 and frailty >= 0")
    unknown = [c for c in categories if c not in TABLE5_COUNTS]
    if unknown:
        raise ValueError(f"categories {unknown} are not Table 5 categories")
    t0 = pd.Timestamp(start)
    t0 = (t0.tz_localize("UTC") if t0.tzinfo is None else t0.tz_convert("UTC")).floor("h")
    hours = int(round(days * 24))
    per_node_h = 8 / (16_384 * HOURS_54D)  # Table 5 counts are per 16,384 GPUs x 54 days
    lam_c = rate_scale * per_node_h * sum(TABLE5_COUNTS[c] for c in categories)
    lam_o = rate_scale * per_node_h * sum(v for c, v in TABLE5_COUNTS.items() if c not in categories)
    # mean temperature factor of the chosen rate is ~1 at T_REF: rates are Llama 3's there
    local = (t0.hour + np.arange(hours) + 0.5 + utc_offset_h) % 24
    amb_h = _ambient(np.arange(hours) + 0.5, local, ambient_mean_c, ambient_swing_c,
                     weather_sd_c, _rng(seed, 1))
    r2 = _rng(seed, 2)
    offset = r2.normal(0.0, node_sd_c, n_nodes)
    z = r2.gamma(1 / frailty, frailty, n_nodes) if frailty > 0 else np.ones(n_nodes)
    base_t = amb_h[None, :] + offset[:, None] + r2.normal(0.0, 0.5, (n_nodes, hours))
    sim = _timeline(base_t, z, lam_c, lam_o, temperature_irr, _rng(seed, 3))
    jobs, inter = _jobs(sim["events"], t0, float(hours), _rng(seed, 4), tuple(categories))
    minutes = hours * 60
    phase = _minute_phase(jobs, t0, minutes, checkpoint_every_min)
    windows = _windows(sim, phase, t0, n_nodes, gpus_per_node)
    cluster = _cluster(phase, t0, utc_offset_h, n_nodes, gpus_per_node, diurnal_amplitude_pct,
                       ambient_mean_c, ambient_swing_c, weather_sd_c, seed)
    panel, eff = _node_panel(sim, offset, t0, min(throughput_nodes, n_nodes), direct_pct_per_c,
                             _rng(seed, 6))
    truth = {"temperature_irr": temperature_irr, "log_irr": float(np.log(temperature_irr)),
             "categories": list(categories), "rate_per_node_hour_at_60c": lam_c,
             "other_rate_per_node_hour": lam_o, "diurnal_amplitude_pct": diurnal_amplitude_pct,
             "hour_of_min_local": 15.0, "swing_irr_per_swing": 1.0, **eff,
             "checkpoint_every_min": checkpoint_every_min,
             "gpu_step_w": float(GPU_W[LOAD] - GPU_W[CKPT])}
    params = {"n_nodes": n_nodes, "days": days, "gpus_per_node": gpus_per_node, "seed": seed,
              "start": t0.isoformat(), "utc_offset_h": utc_offset_h, "frailty": frailty}
    nodes = pd.DataFrame({"host": [f"node{i + 1:04d}" for i in range(n_nodes)],
                          "offset_c": offset, "frailty": z})
    return SimulatedEnvironment(windows=windows, cluster=cluster, node_throughput=panel,
                                jobs=jobs, interruptions=inter, nodes=nodes, truth=truth,
                                params=params)


def _windows(sim: dict, phase: np.ndarray, t0: pd.Timestamp, n: int, gpn: int) -> pd.DataFrame:
    temp, hours = sim["temp"], sim["temp"].shape[1]
    # checkpoint-pause swings only: job stops are caused by the failures themselves, so
    # counting them would make swings look harmful (reverse causation)
    ck = (phase == CKPT).reshape(hours, 60)
    steps = (ck[:, 1:] != ck[:, :-1]).sum(axis=1) + np.r_[0, (ck[1:, 0] != ck[:-1, -1])]
    sd = 1.0  # within-hour sd of a GPU around the node-hour mean (assumed)
    from scipy.special import ndtr

    host = pd.Categorical.from_codes(np.repeat(np.arange(n), hours),
                                     [f"node{i + 1:04d}" for i in range(n)])
    return pd.DataFrame({
        "host": host, "rack": np.repeat(np.arange(n) // 2, hours),
        "window": np.tile(t0 + pd.to_timedelta(np.arange(hours), unit="h"), n),
        "hours": 1.0, "temp_c_mean": temp.ravel(),
        "temp_c_max": np.round(temp.ravel() + 2.5 * sd, 1),
        "temp_c_hours_above": ndtr((temp.ravel() - 70.0) / sd),
        "power_swings_count": np.tile(steps, n).astype(np.int64),
        "util_pct_mean": np.tile(100 * sim["load"], n),
        "failures": sim["y_c"].ravel(), "failures_other": sim["y_o"].ravel()})


def _cluster(phase: np.ndarray, t0: pd.Timestamp, utc_offset_h: float, n: int, gpn: int,
             amp_pct: float, amb_mean: float, swing: float, weather_sd: float,
             seed: int) -> pd.DataFrame:
    rng = _rng(seed, 5)
    m = len(phase)
    h = np.arange(m) / 60.0
    local = (t0.hour + h + utc_offset_h) % 24
    amb = _ambient(h, local, amb_mean, swing, weather_sd, rng)
    cycle = np.cos(2 * np.pi * (local - 15.0) / 24.0)
    weather = amb - amb_mean - swing * cycle
    k = amp_pct / 100 / (2 * swing)  # relative throughput loss per °C of ambient
    rel = (1 - k * swing * cycle - k * weather) * (1 + rng.normal(0, 0.002, m))
    tput = np.where(phase == LOAD, 16_384 * 400e12 / (6 * 405e9) * n / 2048 * rel, 0.0)
    rise = np.array([IDLE_RISE_C, 25.0, RISE_C, 24.0])[phase]
    power = n * (gpn * GPU_W[phase] + HOST_W[phase]) * (1 + rng.normal(0, 0.002, m))
    return pd.DataFrame({
        "time": t0 + pd.to_timedelta(np.arange(m), unit="min"), "host": "cluster", "gpu": pd.NA,
        "ambient_c": np.round(amb, 2), "gpu_temp_c": np.round(amb + rise, 2),
        "power_w": np.round(power, -3), "throughput_tokens_per_s": np.round(tput)}).astype(
        {"host": "string", "gpu": "string"})


def _node_panel(sim: dict, offset: np.ndarray, t0: pd.Timestamp, k: int, direct_pct: float,
                rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, float]]:
    temp, load = sim["temp"][:k], sim["load"]
    run = np.flatnonzero(load >= 1.0)
    hours = len(load)
    clock = CLOCK_REF_MHZ - CLOCK_PER_C * (temp - T_REF_C) + rng.normal(0, 4.0, temp.shape)
    base = np.log(400.0) + 0.01 * offset[:k, None] + rng.normal(0, 0.01, (k, 1))
    noise = np.zeros_like(temp)
    eps = rng.normal(0, 0.002, temp.shape)
    for h in range(hours):  # AR(1) in time, rho 0.8 (assumed)
        noise[:, h] = (0.8 * noise[:, h - 1] if h else 0.0) + eps[:, h]
    b_clock = 1.0 / CLOCK_REF_MHZ  # log-throughput per MHz: throughput proportional to clock
    log_t = base + direct_pct / 100 * (temp - T_REF_C) + b_clock * (clock - CLOCK_REF_MHZ) + noise
    frame = pd.DataFrame({
        "time": np.tile(t0 + pd.to_timedelta(run, unit="h"), k),
        "host": np.repeat([f"node{i + 1:04d}" for i in range(k)], len(run)),
        "temp_c": temp[:, run].ravel(), "sm_clock_mhz": np.round(clock[:, run].ravel(), 1),
        "tflops": np.exp(log_t[:, run]).ravel()})
    indirect = -100 * CLOCK_PER_C * b_clock
    return frame, {"throughput_direct_pct_per_c": direct_pct,
                   "throughput_indirect_pct_per_c": indirect,
                   "throughput_total_pct_per_c": direct_pct + indirect}


__all__ = ["simulate_environment", "SimulatedEnvironment"]
