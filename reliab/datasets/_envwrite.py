"""A :class:`SimulatedEnvironment` and its raw files, in real formats.

* ``telemetry/nvidia-smi/<host>.csv`` — ``nvidia-smi --query-gpu=timestamp,index,
  temperature.gpu,power.draw,clocks.current.sm,utilization.gpu,clocks_event_reasons.active
  --format=csv -lms 60000`` as the tool prints it (units in the cells, ``0x…`` reason masks;
  the layout of the real H200 capture in ``data/h200_telemetry``), one day at 1 minute;
* ``telemetry/dcgm/<host>.prom`` — dcgm-exporter scrapes every 15 minutes in the Prometheus
  text exposition format with sample timestamps (ms), ``# HELP``/``# TYPE`` lines and the
  exporter's labels (``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``,
  ``Hostname``) as in NVIDIA dcgm-exporter's ``default-counters.csv`` and a real scrape;
* ``telemetry/cluster_1min.csv`` — the cluster series (generic telemetry CSV);
* ``slurm/sacct.txt`` — ``sacct --parsable2`` records of the job timeline;
* ``truth/truth.json`` — the true effects;
* ``reliab.toml`` — the hand-over manifest: one training job (``policy = "training-run"``),
  ``truth/`` skipped.

Times are UTC.  Output is deterministic for a given simulation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab.datasets import _writers as w
from reliab.datasets._envbase import (
    CKPT,
    CLOCK_PER_C,
    CLOCK_REF_MHZ,
    DOWN,
    IDLE_RISE_C,
    INIT,
    LOAD,
    RISE_C,
    T_REF_C,
)
from reliab.datasets._envbase import minute_phase as _minute_phase
from reliab.datasets._envbase import rng as _rng
from reliab.datasets._environment import GPU_W
from reliab.datasets._simulate import GPU_PCI


@dataclass(frozen=True)
class SimulatedEnvironment:
    """Known-truth environment of a simulated fleet (see :func:`simulate_environment`).

    Attributes
    ----------
    windows : DataFrame
        One row per node-hour: ``host``, ``rack``, ``window``, ``hours``, ``temp_c_mean``,
        ``temp_c_max``, ``temp_c_hours_above`` (above 70 °C), ``power_swings_count``
        (steps into and out of checkpoint pauses; no effect on failures),
        ``util_pct_mean``, ``failures`` (chosen categories), ``failures_other``.
    cluster : DataFrame
        1-minute cluster series (telemetry layout): ``ambient_c``, ``gpu_temp_c``,
        ``power_w`` and ``throughput_tokens_per_s`` (0 while not training).
    node_throughput : DataFrame
        Per node-hour while training, for nodes of the throughput panel: ``time``,
        ``host``, ``temp_c``, ``sm_clock_mhz``, ``tflops``.
    jobs, interruptions : DataFrame
        The job timeline (``job_id``, ``start``, ``end``, ``state``) and one row per
        interruption (``time``, ``hosts``, ``category``, ``planned``, ``failure_time``).
    nodes : DataFrame
        ``host``, ``offset_c`` (persistent temperature offset) and ``frailty``.
    truth : dict
        The true values: ``temperature_irr``, ``diurnal_amplitude_pct``, effects in %/°C …
    """

    windows: pd.DataFrame = field(repr=False)
    cluster: pd.DataFrame = field(repr=False)
    node_throughput: pd.DataFrame = field(repr=False)
    jobs: pd.DataFrame = field(repr=False)
    interruptions: pd.DataFrame = field(repr=False)
    nodes: pd.DataFrame = field(repr=False)
    truth: dict[str, Any]
    params: dict[str, Any]

    def write(self, directory: str | Path, *, hosts: int = 2, day: int = 0) -> dict[str, Path]:
        """Write telemetry in real formats, the Slurm job records and ``truth.json``.

        ``hosts`` nodes get one day (``day``) of 1-minute ``nvidia-smi --query-gpu`` CSV and
        15-minute dcgm-exporter scrapes; the cluster series goes to a telemetry CSV.
        """
        return write_environment(self, Path(directory), hosts=hosts, day=day)


#: hand-over manifest (``reliab.io._manifest``): one training job; the truth is not a log
MANIFEST = """\
# Hand-over manifest of a simulated environment: reliab.ingest applies it when it walks the folder.
policy = "training-run"
skip = ["truth/"]
"""
SMI_HEADER = ("timestamp, index, temperature.gpu, power.draw [W], clocks.current.sm [MHz], "
              "utilization.gpu [%], clocks_event_reasons.active")
_DCGM = (("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
         ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
         ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."))
_RISE = np.array([IDLE_RISE_C, 25.0, RISE_C, 24.0])
_REASON = {DOWN: 0x1, INIT: 0x0, LOAD: 0x4, CKPT: 0x1}  # idle / none / SW power cap


def _gpu_minutes(env: SimulatedEnvironment, host_i: int, day: int) -> pd.DataFrame:
    """Per-GPU 1-minute samples of one host over one day."""
    p = env.params
    t0 = pd.Timestamp(p["start"])
    minutes = int(round(p["days"] * 24 * 60))
    phase = _minute_phase(env.jobs, t0, minutes, env.truth["checkpoint_every_min"])
    sl = slice(day * 1440, min((day + 1) * 1440, minutes))
    ph = phase[sl]
    amb = env.cluster["ambient_c"].to_numpy()[sl]
    offset = float(env.nodes["offset_c"].iloc[host_i])
    rng = _rng(p["seed"], 20 + host_i)
    frames = []
    for g in range(p["gpus_per_node"]):
        temp = amb + _RISE[ph] + offset + rng.normal(0, 1.0) + rng.normal(0, 0.5, len(ph))
        power = np.minimum(700.0, GPU_W[ph] + rng.normal(0, 4.0, len(ph)))
        clock = np.where(ph == LOAD, CLOCK_REF_MHZ - CLOCK_PER_C * (temp - T_REF_C), 1980.0)
        frames.append(pd.DataFrame({
            "minute": np.arange(len(ph)) + sl.start, "gpu": g, "temp": np.round(temp),
            "power": power, "clock": np.round(clock / 15) * 15,
            "util": np.where(ph == LOAD, 100, np.where(ph == INIT, 40, 0)),
            "reason": [_REASON[int(x)] for x in ph]}))
    return pd.concat(frames).sort_values(["minute", "gpu"], kind="stable", ignore_index=True)


def _smi_lines(frame: pd.DataFrame, t0: pd.Timestamp) -> list[str]:
    stamps = (t0 + pd.to_timedelta(frame["minute"], unit="min")).dt.strftime("%Y/%m/%d %H:%M:%S.000")
    return [SMI_HEADER] + [
        f"{s}, {g}, {int(t)}, {p:.2f} W, {int(c)} MHz, {int(u)} %, 0x{r:016X}"
        for s, g, t, p, c, u, r in zip(stamps, frame["gpu"], frame["temp"], frame["power"],
                                       frame["clock"], frame["util"], frame["reason"],
                                       strict=True)]


def _uuid(host: str, gpu: int) -> str:
    h = hashlib.sha256(f"{host}/{gpu}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _dcgm_lines(frame: pd.DataFrame, t0: pd.Timestamp, host: str) -> list[str]:
    scrapes = frame[frame["minute"] % 15 == 0]
    ms = ((t0 + pd.to_timedelta(scrapes["minute"], unit="min")).astype("int64") // 10**6).to_numpy()
    values = {"DCGM_FI_DEV_GPU_TEMP": scrapes["temp"].astype(int).astype(str).to_numpy(),
              "DCGM_FI_DEV_POWER_USAGE": scrapes["power"].map("{:.3f}".format).to_numpy(),
              "DCGM_FI_DEV_SM_CLOCK": scrapes["clock"].astype(int).astype(str).to_numpy()}
    lines: list[str] = []
    for name, kind, help_text in _DCGM:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        for g, stamp, v in zip(scrapes["gpu"], ms, values[name], strict=True):
            labels = (f'gpu="{g}",UUID="{_uuid(host, int(g))}",pci_bus_id="0000{GPU_PCI[int(g)]}.0",'
                      f'device="nvidia{g}",modelName="NVIDIA H100 80GB HBM3",Hostname="{host}"')
            lines.append(f"{name}{{{labels}}} {v} {stamp}")
    return lines


def _sacct(env: SimulatedEnvironment, now_us: int) -> list[str]:
    n = env.params["n_nodes"]
    nodelist = f"node[0001-{n:04d}]" if n > 1 else "node0001"
    rows = []
    for j in env.jobs.itertuples(index=False):
        start = int(j.start.value // 1000)
        end = -1 if pd.isna(j.end) else int(j.end.value // 1000)
        code = "0:0" if j.state in ("NODE_FAIL", "RUNNING") else "1:0"
        rows.append((j.job_id, start - 300_000_000, start, end, j.state, code, nodelist, n,
                     "node0001"))
    return w.sacct_rows(rows, env.params["gpus_per_node"], now_us)


def write_environment(env: SimulatedEnvironment, directory: Path, *, hosts: int,
                      day: int) -> dict[str, Path]:
    """Write the raw files (see module docstring); returns name -> path."""
    directory.mkdir(parents=True, exist_ok=True)
    t0 = pd.Timestamp(env.params["start"])
    days = int(np.ceil(env.params["days"]))
    if not 0 <= day < days:
        raise ValueError(f"day must be in [0, {days}), got {day}")
    out: dict[str, Path] = {}
    for i in range(min(hosts, env.params["n_nodes"])):
        host = f"node{i + 1:04d}"
        frame = _gpu_minutes(env, i, day)
        for sub, lines in ((f"telemetry/nvidia-smi/{host}.csv", _smi_lines(frame, t0)),
                           (f"telemetry/dcgm/{host}.prom", _dcgm_lines(frame, t0, host))):
            out[sub] = w._write_lines(directory / sub, lines)
    out |= w.write_csv(directory, "telemetry/cluster_1min.csv", env.cluster)
    end_us = int((t0 + pd.Timedelta(days=env.params["days"])).value // 1000)
    out |= w.write_sacct(directory, _sacct(env, end_us))
    truth = directory / "truth" / "truth.json"
    truth.parent.mkdir(exist_ok=True)
    truth.write_text(json.dumps({**env.truth, "params": env.params}, indent=2) + "\n",
                     encoding="utf-8")
    out["truth/truth.json"] = truth
    manifest = directory / "reliab.toml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    out["reliab.toml"] = manifest
    return dict(sorted(out.items()))


__all__ = ["write_environment", "SMI_HEADER"]
