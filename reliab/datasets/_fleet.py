"""A fleet-scale sample: 100,000 GPUs for 90 days, written day by day in bounded memory.

:func:`write_fleet` streams a fleet's raw files to disk, one day at a time and, within a
day, one *pod* (a group of hosts that share a central rsyslog file) at a time, so memory
holds one pod-day whatever the fleet's size:

* ``logs/syslog/<day>/messages-pod<k>.log``: rsyslog RFC 3339 lines of the pod's hosts
  (benign noise and the kernel lines of every failure, in the real formats of NVIDIA's
  "Xid Errors" document);
* ``logs/slurm/sacct-<day>.txt``: ``sacct --parsable2`` rows of the jobs that ended that
  day (a ``NODE_FAIL`` job for every failure, ``COMPLETED`` jobs besides);
* ``telemetry/date=<day>/pod<k>.parquet``: per-GPU samples every ``telemetry_interval_s``
  (``time``, ``host``, ``gpu``, ``gpu_temp_c``, ``power_w``): a canonical telemetry table;
* ``inventory.parquet`` (host, pod, installed) and ``truth/`` (every failure with the true
  node temperature of its hour, and the parameters).

The failure process is the known truth of the environment models: failures of a node in an
hour are Poisson with rate ``base × exp(temp_effect_per_c × (m − 65 °C))``, where ``m`` is
the node's true mean GPU temperature in that hour (baseline per node, per-GPU offsets,
a diurnal cycle and idle days) — the grouped Poisson regression of Frome (1983, *Biometrics*
39, 665–674) on the reduced telemetry should recover ``temp_effect_per_c``.  The base rate
defaults to Llama 3's 419 unexpected interruptions in 54 days on 16,384 GPUs
(arXiv 2407.21783, §3.3.4: 0.47 per 1,000 GPU-days); the temperature effect, the
temperatures and the line rates are assumptions of this generator, not published values.

Every random draw comes from ``numpy.random.default_rng([seed, day, pod, stream])``: a
pod-day's lines and samples do not depend on the other pods or days (only job ids are
numbered across the fleet).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import ResultMixin
from reliab.datasets._fleetlines import host as _host
from reliab.datasets._fleetlines import render_syslog, sacct_lines

#: Llama 3: 419 unexpected interruptions, 16,384 GPUs, 54 days (arXiv 2407.21783 §3.3.4)
LLAMA3_RATE_PER_1K_GPU_DAYS = 419 / (16_384 * 54 / 1000)
_US = 1_000_000
_HOUR_US = 3600 * _US
_DAY_US = 24 * _HOUR_US
#: reference temperature of the failure rate (°C)
REF_TEMP_C = 65.0


@dataclass(frozen=True)
class FleetParams:
    """What :func:`write_fleet` was asked for (stored as ``truth/params.json``)."""

    n_gpus: int
    gpus_per_node: int
    days: int
    start: str
    seed: int
    hosts_per_pod: int
    noise_lines_per_node_day: float
    failures_per_1k_gpu_days: float
    temp_effect_per_c: float
    telemetry_interval_s: int
    telemetry: bool

    @property
    def n_nodes(self) -> int:
        return self.n_gpus // self.gpus_per_node

    @property
    def n_pods(self) -> int:
        return -(-self.n_nodes // self.hosts_per_pod)

    @property
    def start_us(self) -> int:
        return int(pd.Timestamp(self.start).tz_convert("UTC").value // 1000)


@dataclass(frozen=True)
class FleetSample(ResultMixin):
    """What was written: sizes, counts and the time it took."""

    directory: str
    params: FleetParams
    files: int
    bytes: int
    log_lines: int
    telemetry_rows: int
    failures: int
    jobs: int
    seconds: float
    n: int = 0
    conf_level: float = float("nan")
    method: str = "write_fleet: streamed pod by pod and day by day"
    notes: tuple[str, ...] = ()
    parts: dict[str, int] = field(default_factory=dict, repr=False)

    def summary(self) -> pd.DataFrame:
        """One row per quantity: files, bytes (by folder), lines, rows, failures, seconds."""
        rows = [("GPUs", self.params.n_gpus), ("days", self.params.days), ("files", self.files),
                ("bytes", self.bytes), ("log lines", self.log_lines),
                ("telemetry rows", self.telemetry_rows), ("failures", self.failures),
                ("jobs", self.jobs), ("seconds", round(self.seconds, 2))]
        rows += [(f"bytes: {k}", v) for k, v in sorted(self.parts.items())]
        return pd.DataFrame(rows, columns=["quantity", "value"])


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


@dataclass(frozen=True)
class _Pod:
    """The fixed facts of one pod: its hosts, their baseline temperatures and GPU offsets."""

    index: int
    nodes: np.ndarray
    base_c: np.ndarray
    offset_c: np.ndarray  # (nodes, gpus)
    phase_s: np.ndarray  # second of the day each host's exporter first samples

    @classmethod
    def of(cls, p: FleetParams, k: int) -> _Pod:
        nodes = np.arange(k * p.hosts_per_pod, min((k + 1) * p.hosts_per_pod, p.n_nodes))
        rng = _rng(p.seed, 0, k, 0)
        return cls(k, nodes, rng.normal(63.0, 3.0, len(nodes)), rng.normal(0.0, 1.5, (len(nodes), p.gpus_per_node)),
                   rng.integers(0, 86_400, len(nodes)))


def _diurnal(t_us: np.ndarray) -> np.ndarray:
    """Diurnal swing of inlet temperature (°C), warmest at 15:00 UTC."""
    hours = (t_us % _DAY_US) / _HOUR_US
    return 2.5 * np.sin(2 * np.pi * (hours - 9.0) / 24.0)


def _day(p: FleetParams, pod: _Pod, day: int) -> dict[str, Any]:
    """One pod-day: failures, its idle nodes and the true hourly node temperatures."""
    rng = _rng(p.seed, day, pod.index, 1)
    t0 = p.start_us + day * _DAY_US
    idle = rng.random(len(pod.nodes)) < 0.08  # nodes without a job that day
    hours = t0 + np.arange(24) * _HOUR_US + _HOUR_US // 2
    mean_c = (pod.base_c[:, None] + pod.offset_c.mean(axis=1)[:, None] + _diurnal(hours)[None, :]
              - 25.0 * idle[:, None])
    base = p.failures_per_1k_gpu_days / 1000 * p.gpus_per_node / 24  # per node-hour at REF_TEMP_C
    rate = base * np.exp(p.temp_effect_per_c * (mean_c - REF_TEMP_C))
    counts = rng.poisson(rate)
    node_i, hour = np.nonzero(counts)
    node_i, hour = np.repeat(node_i, counts[node_i, hour]), np.repeat(hour, counts[node_i, hour])
    times = t0 + hour * _HOUR_US + rng.integers(0, _HOUR_US, len(hour))
    order = np.argsort(times, kind="stable")
    return {"t0": t0, "idle": idle, "mean_c": mean_c, "fail_node": node_i[order], "fail_hour": hour[order],
            "fail_time": times[order], "fail_gpu": rng.integers(0, p.gpus_per_node, len(order))}


def _telemetry(p: FleetParams, pod: _Pod, day: int, facts: dict[str, Any]) -> pd.DataFrame:
    """Per-GPU samples of one pod-day: temperature and power, checkpoint dips every 30 min."""
    rng = _rng(p.seed, day, pod.index, 2)
    step = p.telemetry_interval_s * _US
    n_nodes, n_gpu = len(pod.nodes), p.gpus_per_node
    phase = pod.phase_s * _US % step  # exporters of different hosts are not in step
    t = facts["t0"] + phase[:, None] + np.arange(0, _DAY_US, step, dtype=np.int64)[None, :]  # (nodes, samples)
    n_t = t.shape[1]
    idle = facts["idle"]
    temp = (pod.base_c[:, None, None] + pod.offset_c[:, :, None] + _diurnal(t)[:, None, :]
            - 25.0 * idle[:, None, None] + rng.normal(0.0, 0.5, (n_nodes, n_gpu, n_t)))
    dip = ((t // _US) % 1800) < 20  # a checkpoint stalls the GPUs for ~20 s every 30 min
    busy_w = np.where(dip, 150.0, 650.0)[:, None, :]
    power = np.where(idle[:, None, None], 90.0, busy_w) + rng.normal(0.0, 15.0, temp.shape)
    hosts = _host(pod.nodes)
    return pd.DataFrame({
        "time": pd.to_datetime(np.repeat(t, n_gpu, axis=0).reshape(-1), unit="us", utc=True).as_unit("ns"),
        "host": pd.Categorical.from_codes(np.repeat(np.arange(n_nodes), n_gpu * n_t), categories=list(hosts)),
        "gpu": pd.Categorical.from_codes(np.tile(np.repeat(np.arange(n_gpu), n_t), n_nodes),
                                         categories=[str(g) for g in range(n_gpu)]),
        "gpu_temp_c": np.round(temp.reshape(-1)).astype(np.float32),  # DCGM reports whole degrees
        "power_w": np.round(power.reshape(-1), 1).astype(np.float32)})


def _write_telemetry(frame: pd.DataFrame, path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, compression="zstd")
    return path.stat().st_size


def _failure_rows(p: FleetParams, pod: _Pod, day: int, facts: dict[str, Any]) -> pd.DataFrame:
    nodes = pod.nodes[facts["fail_node"]]
    return pd.DataFrame({
        "time": pd.to_datetime(facts["fail_time"], unit="us", utc=True), "host": _host(nodes),
        "gpu": facts["fail_gpu"], "pod": pod.index,
        "node_temp_c": facts["mean_c"][facts["fail_node"], facts["fail_hour"]]})


def write_fleet(
    directory: str | Path,
    *,
    n_gpus: int = 100_000,
    gpus_per_node: int = 8,
    days: int = 90,
    start: str = "2024-01-01T00:00:00Z",
    seed: int = 0,
    hosts_per_pod: int = 256,
    noise_lines_per_node_day: float = 20.0,
    failures_per_1k_gpu_days: float = LLAMA3_RATE_PER_1K_GPU_DAYS,
    temp_effect_per_c: float = 0.04,
    telemetry_interval_s: int = 900,
    telemetry: bool = True,
) -> FleetSample:
    """Write a fleet's raw logs and telemetry, day by day, in memory bounded by one pod-day.

    Parameters
    ----------
    directory : path
        Output folder (created); ``logs/`` is what :func:`reliab.ingest` reads,
        ``telemetry/`` what :func:`reliab.fleet.reduce_telemetry` reduces.
    n_gpus, gpus_per_node, days, start
        Size and window of the fleet (default 100,000 GPUs, 8 per host, 90 days).
    seed : int
        Same seed, same files byte for byte.
    hosts_per_pod : int
        Hosts per central syslog file and per telemetry part.
    noise_lines_per_node_day : float
        Benign syslog lines per host and day (a real 100k-GPU fleet writes about 10^4; the
        default keeps the full fleet near 2.5 GB of logs).
    failures_per_1k_gpu_days : float
        Failure rate at 65 °C (default: Llama 3's 0.47).
    temp_effect_per_c : float
        Log rate ratio per °C of the node's hourly mean GPU temperature (the planted truth).
    telemetry_interval_s : int
        Seconds between telemetry samples of a GPU (1 for 1 Hz; the default 900 keeps the
        full fleet's telemetry near 0.9e9 rows).
    telemetry : bool
        Write the telemetry parts.

    Returns
    -------
    FleetSample
        Files and bytes written, line and row counts, failures, jobs and wall seconds.
    """
    if n_gpus < gpus_per_node or n_gpus % gpus_per_node:
        raise ValueError(f"n_gpus={n_gpus} must be a positive multiple of gpus_per_node={gpus_per_node}")
    if n_gpus // gpus_per_node > 99_999:
        raise ValueError(f"n_gpus={n_gpus}: at most 99,999 hosts (five-digit host names)")
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    if hosts_per_pod < 1:
        raise ValueError(f"hosts_per_pod must be >= 1, got {hosts_per_pod}")
    if telemetry_interval_s < 1 or 86_400 % telemetry_interval_s:
        raise ValueError(f"telemetry_interval_s must divide a day, got {telemetry_interval_s}")
    p = FleetParams(n_gpus, gpus_per_node, int(days), start, int(seed), hosts_per_pod,
                    float(noise_lines_per_node_day), float(failures_per_1k_gpu_days),
                    float(temp_effect_per_c), int(telemetry_interval_s), bool(telemetry))
    clock = time.perf_counter()
    root = Path(directory)
    (root / "truth").mkdir(parents=True, exist_ok=True)
    pods = [_Pod.of(p, k) for k in range(p.n_pods)]
    sizes: dict[str, int] = {"logs": 0, "telemetry": 0, "truth": 0}
    files = lines = rows = failures = jobs = 0
    truth = root / "truth" / "failures.csv"
    truth.write_text("time,host,gpu,pod,node_temp_c\n", encoding="utf-8")
    next_job = 1_000_000
    for day in range(p.days):
        stamp = pd.Timestamp(p.start_us + day * _DAY_US, unit="us", tz="UTC").strftime("%Y-%m-%d")
        ended: list[tuple] = []
        for pod in pods:
            facts = _day(p, pod, day)
            text, n = render_syslog(p, pod.nodes, facts, _rng(p.seed, day, pod.index, 3))
            path = root / "logs" / "syslog" / stamp / f"messages-pod{pod.index:03d}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            sizes["logs"] += len(text)
            files, lines = files + 1, lines + n
            if p.telemetry:
                frame = _telemetry(p, pod, day, facts)
                sizes["telemetry"] += _write_telemetry(frame, root / "telemetry" / f"date={stamp}"
                                                       / f"pod{pod.index:03d}.parquet")
                files, rows = files + 1, rows + len(frame)
            fail = _failure_rows(p, pod, day, facts)
            fail.to_csv(truth, mode="a", header=False, index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ")
            failures += len(fail)
            pod_jobs, next_job = _jobs(p, pod, day, facts, next_job)
            ended += pod_jobs
        body = "\n".join(sacct_lines(ended, p.gpus_per_node)) + "\n"
        path = root / "logs" / "slurm" / f"sacct-{stamp}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        sizes["logs"] += len(body)
        files, lines, jobs = files + 1, lines + body.count("\n"), jobs + len(ended)
    inventory = pd.DataFrame({"host": _host(np.arange(p.n_nodes)), "pod": np.arange(p.n_nodes) // p.hosts_per_pod,
                              "gpus": p.gpus_per_node, "installed": pd.Timestamp(p.start) - pd.Timedelta(days=30)})
    inventory.to_parquet(root / "inventory.parquet", index=False)
    sizes["inventory"] = (root / "inventory.parquet").stat().st_size
    (root / "truth" / "params.json").write_text(json.dumps(asdict(p), indent=1) + "\n", encoding="utf-8")
    sizes["truth"] = sum(f.stat().st_size for f in (root / "truth").iterdir())
    seconds = time.perf_counter() - clock
    return FleetSample(str(root), p, files + 3, sum(sizes.values()), lines, rows, failures, jobs, seconds,
                       n=p.n_gpus, parts=sizes)


def _jobs(p: FleetParams, pod: _Pod, day: int, facts: dict[str, Any], next_job: int) -> tuple[list[tuple], int]:
    """The jobs of a pod that ended this day: ``NODE_FAIL`` at each failure, ``COMPLETED`` besides.

    A job holds 8 hosts of the pod (64 GPUs); a failed one includes the failed host.  Rows
    are ``(job_id, submit_us, start_us, end_us, state, exit_code, first_node, nnodes)``.
    """
    rng = _rng(p.seed, day, pod.index, 4)
    width = min(8, len(pod.nodes))
    out: list[tuple] = []
    for i, t in zip(facts["fail_node"], facts["fail_time"], strict=True):
        first = int(pod.nodes[min(int(i) - int(i) % width, len(pod.nodes) - width)])
        end = int(t) + int(rng.integers(30, 120)) * _US
        start = end - int(rng.uniform(1, 48) * _HOUR_US)
        out.append((next_job, start - 300 * _US, start, end, "NODE_FAIL", "0:0", first, width))
        next_job += 1
    for _ in range(int(rng.poisson(len(pod.nodes) / 64))):
        first = int(pod.nodes[int(rng.integers(0, len(pod.nodes) - width + 1))])
        end = facts["t0"] + int(rng.integers(0, _DAY_US))
        start = end - int(rng.uniform(1, 24) * _HOUR_US)
        out.append((next_job, start - 300 * _US, start, end, "COMPLETED", "0:0", first, width))
        next_job += 1
    return out, next_job


__all__ = ["write_fleet", "FleetSample", "FleetParams", "LLAMA3_RATE_PER_1K_GPU_DAYS", "REF_TEMP_C"]
