"""Simulated GPU training clusters calibrated to Llama 3, and the bundled 54-day sample.

:func:`simulate_cluster` draws one large training job on a 16,384-GPU cluster with the
interruption counts of Llama 3 Table 5 (arXiv 2407.21783, §3.3.4), node frailty and
lemon nodes (assumed), a diurnal environment and checkpoint power drops (§3.3.4); its
:meth:`~SimulatedCluster.write` produces raw logs in the real formats of
``docs/raw-formats.md``.  :func:`load_llama3_sample` returns the bundled seeded run.
:func:`simulate_environment` draws a fleet's temperature, power, throughput and failures
with known effects (temperature incidence-rate ratio, diurnal amplitude) and writes them
in nvidia-smi, dcgm-exporter and Slurm formats.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pandas as pd

from reliab.datasets._cluster import SimulatedCluster, simulate
from reliab.datasets._envsim import SimulatedEnvironment, simulate_environment
from reliab.datasets._fleet import FleetSample, write_fleet
from reliab.datasets._simulate import SimParams, default_rates
from reliab.taxonomy.vocabulary import LLAMA3_DAYS, LLAMA3_GPUS

SAMPLE_NAME = "llama3-54d"


def simulate_cluster(
    n_gpus: int = 16_384,
    gpus_per_node: int = 8,
    days: float = 54,
    start: str = "2024-06-01T00:00:00Z",
    counts: Literal["expected", "table5"] = "expected",
    seed: int = 0,
    *,
    rates: Mapping[str, float] | None = None,
    shapes: Mapping[str, float] | None = None,
    frailty: float = 0.5,
    lemon_fraction: float = 0.005,
    lemon_factor: float = 15.0,
    spare_fraction: float = 0.03,
    restart_minutes: tuple[float, float] = (15.0, 0.35),
    repair_hours: tuple[float, float] = (48.0, 0.8),
    noise_lines_per_node_day: float = 0.2,
    background_per_node_day: float = 0.02,
    telemetry_nodes: int = 16,
    utc_offset_h: float = -7.0,
    other_jobs_per_day: float = 3.0,
    precursor_fraction: float = 0.0,
    precursor_null: bool = False,
) -> SimulatedCluster:
    """Simulate one large training job on a GPU cluster, with ground truth.

    Parameters
    ----------
    n_gpus, gpus_per_node, days : int, int, float
        Size of the job and length of the window (Llama 3: 16,384 H100, 8 per server,
        54 days; arXiv 2407.21783 §3.3.1, §3.3.4).
    start : str
        Start of the window (UTC).
    counts : {"expected", "table5"}
        ``"table5"`` reproduces exactly the 18 published counts (419 unexpected) and the
        47 planned interruptions (arXiv 2407.21783 §3.3.4); ``"expected"`` draws Poisson
        counts with those means.
    seed : int
        Seed for :func:`numpy.random.default_rng`; same seed, same files byte for byte.
    rates : mapping, optional
        Category -> interruption count over the window.  Default: Table 5 plus
        ``"Planned": 47``; with ``counts="expected"`` the unexpected counts are scaled by
        ``n_gpus / 16384 × days / 54`` and the planned ones by ``days / 54``.  With
        ``counts="table5"`` the values are used as exact counts (rounded).
    shapes : mapping, optional
        Category -> power-law (Crow-AMSAA) shape of the event times in running time;
        1.0 (default) is a homogeneous Poisson process, < 1 burn-in, > 1 wear-out (assumed).
    frailty : float
        Variance of the gamma frailty (mean 1) of the nodes (assumed); 0 for identical nodes.
    lemon_fraction, lemon_factor : float
        Share of job nodes planted as lemons and the multiplier of their frailty (assumed).
    spare_fraction : float
        Spare nodes as a share of the job's nodes; a node that fails in hardware is
        replaced by a spare in the next allocation and comes back after repair (assumed).
    restart_minutes : (float, float)
        Median and log-sd of the lognormal restart downtime, floored at 12 min (assumed).
    repair_hours : (float, float)
        Median and log-sd of the lognormal repair time of a swapped-out node (assumed).
    noise_lines_per_node_day : float
        Ordinary syslog lines per node and day (systemd, sshd, CRON, kernel chatter).
    background_per_node_day : float
        Benign background signals per node and day (ten times more on lemons; assumed).
    telemetry_nodes : int
        Nodes whose 15-min telemetry is kept.
    utc_offset_h : float
        Local time of the site, for the diurnal cycle (peak at 15:00 local; assumed).
    other_jobs_per_day : float
        Other users' small jobs per day on free spare nodes, with the end states of a
        shared Slurm cluster (COMPLETED, FAILED in user code, ``CANCELLED by <uid>``,
        TIMEOUT, OUT_OF_MEMORY, PREEMPTED) and no evidence near their ends; written to the
        sacct capture only.  They are not interruptions under either policy (the fleet
        policy counts the FAILED ones apart as user failures); their rates are assumed.
    precursor_fraction : float
        Share of GPU, network and host-memory failures announced by precursor bursts in the
        days before them (rising Xid 63/92/94, SXid/AER corrected, EDAC CE;
        :mod:`reliab.datasets._precursors`); 0 (default) plants none.
    precursor_null : bool
        Plant the same bursts on random nodes at random times instead (same marginal
        rates, no predictive value): the null variant for testing failure predictors.

    Returns
    -------
    SimulatedCluster
        Ground truth; call :meth:`SimulatedCluster.write` for the raw files.

    Examples
    --------
    >>> sim = simulate_cluster(n_gpus=512, days=7, counts="expected", seed=1)
    >>> int(sim.interruptions["planned"].sum()) >= 0
    True
    """
    if counts not in ("expected", "table5"):
        raise ValueError(f"counts must be 'expected' or 'table5', got {counts!r}")
    if n_gpus < gpus_per_node or n_gpus % gpus_per_node:
        raise ValueError(f"n_gpus={n_gpus} must be a positive multiple of "
                         f"gpus_per_node={gpus_per_node}")
    if days <= 0:
        raise ValueError(f"days must be positive, got {days}")
    if not 0.0 <= precursor_fraction <= 1.0:
        raise ValueError(f"precursor_fraction must be in [0, 1], got {precursor_fraction}")
    if other_jobs_per_day < 0:
        raise ValueError(f"other_jobs_per_day must be >= 0, got {other_jobs_per_day}")
    if rates is None:
        scaled = counts == "expected"
        rates = default_rates(n_gpus / LLAMA3_GPUS if scaled else 1.0,
                              days / LLAMA3_DAYS if scaled else 1.0)
    rates = {c: float(r) for c, r in rates.items()}
    bad = [c for c, s in (shapes or {}).items() if s <= 0 or c not in rates]
    if bad:
        raise ValueError(f"shapes must be positive and name known categories; bad: {bad}")
    params = SimParams(
        n_gpus=n_gpus, gpus_per_node=gpus_per_node, days=float(days),
        start_us=int(pd.Timestamp(start).tz_convert("UTC").value // 1000)
        if pd.Timestamp(start).tzinfo else int(pd.Timestamp(start, tz="UTC").value // 1000),
        counts=counts, seed=int(seed), rates=rates,
        shapes={c: float((shapes or {}).get(c, 1.0)) for c in rates}, frailty=float(frailty),
        lemon_fraction=float(lemon_fraction), lemon_factor=float(lemon_factor),
        spare_fraction=float(spare_fraction), restart_minutes=tuple(restart_minutes),
        repair_hours=tuple(repair_hours), noise_lines_per_node_day=float(noise_lines_per_node_day),
        background_per_node_day=float(background_per_node_day),
        telemetry_nodes=int(telemetry_nodes), utc_offset_h=float(utc_offset_h),
        other_jobs_per_day=float(other_jobs_per_day),
        precursor_fraction=float(precursor_fraction), precursor_null=bool(precursor_null))
    return simulate(params)


def sample_path() -> Path:
    """Directory of the bundled sample ``llama3-54d``.

    Looks first inside the installed package (``reliab/_data/llama3-54d``, shipped in the
    wheel), then in the source checkout (``data/llama3-54d`` next to the package).

    Raises
    ------
    FileNotFoundError
        When neither location holds the sample.
    """
    import reliab

    pkg = Path(reliab.__file__).resolve().parent
    candidates = [pkg / "_data" / SAMPLE_NAME] + [p / "data" / SAMPLE_NAME for p in pkg.parents]
    for cand in candidates:
        if (cand / "truth" / "interruptions.csv").is_file():
            return cand
    raise FileNotFoundError(f"bundled sample {SAMPLE_NAME!r} not found; looked in "
                            f"{', '.join(str(c) for c in candidates[:3])}")


def load_llama3_sample() -> dict[str, object]:
    """The bundled sample: its directory and its ground-truth tables.

    Returns
    -------
    dict
        ``path`` (Path of the raw-file directory, ready for ``reliab.ingest``),
        ``interruptions``, ``nodes``, ``rates``, ``checkpoints`` (every checkpoint written)
        and ``costs`` (downtime, restart, lost work and lost GPU-hours of every
        interruption) — DataFrames read from ``truth/``.
    """
    path = sample_path()
    truth = path / "truth"
    inter = pd.read_csv(truth / "interruptions.csv", parse_dates=["time", "failure_time"],
                        dtype={"job_id": "string", "host": "string", "gpu": "string"})
    out: dict[str, object] = {"path": path, "interruptions": inter,
                              "nodes": pd.read_csv(truth / "nodes.csv"),
                              "rates": pd.read_csv(truth / "rates.csv")}
    for name in ("checkpoints", "costs"):  # job-level truth (absent from older samples)
        if (truth / f"{name}.csv").is_file():
            out[name] = pd.read_csv(truth / f"{name}.csv", parse_dates=["time"],
                                    dtype={"job_id": "string"})
    return out


__all__ = ["simulate_cluster", "SimulatedCluster", "load_llama3_sample", "sample_path",
           "simulate_environment", "SimulatedEnvironment", "write_fleet", "FleetSample"]
