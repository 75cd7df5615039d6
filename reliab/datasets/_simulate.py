"""Ground truth of the simulated cluster: interruption timeline, node pool and frailty.

One large training job runs on ``n_gpus / gpus_per_node`` nodes and restarts after every
interruption.  Everything is drawn in *running time* first (time the job is up), then mapped
to wall clock, so that every interruption falls inside the window and none during a
restart downtime.

Sources, and assumptions of this generator (not published values):

* counts per category: Llama 3 (arXiv 2407.21783) Table 5 (419 unexpected) and §3.3.4
  (47 planned);
* per-category time shapes (default 1.0, a homogeneous Poisson process): assumed;
* gamma frailty across nodes and "lemon" nodes: the lemon-node observation of Kokolis et
  al. 2024 ("Revisiting Reliability in Large-Scale Machine Learning Research Clusters",
  arXiv 2410.21680); the variance 0.5, the fraction 0.5 % and the factor 15 are assumed;
* restart downtime lognormal with a 12-minute floor: assumed (the paper publishes none);
* repair time of a swapped-out node, lognormal with median 48 h: assumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from reliab.taxonomy.vocabulary import COMPONENT_OF, LLAMA3_PLANNED, TABLE5_COUNTS

#: PCI bus id of GPU index 0..7 on every host (HGX H100), as in docs/raw-formats.md.
GPU_PCI: tuple[str, ...] = ("0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00",
                            "0000:9a:00", "0000:ab:00", "0000:ba:00", "0000:db:00")

#: categories whose interruption is not tied to a faulty node (host chosen uniformly or none)
_UNIFORM_HOST = ("Software Bug", "NCCL Watchdog Timeouts")
_NO_HOST = ("Dependency", "Planned")
#: components whose failure takes the node out of service (swapped for a spare)
_SWAP_COMPONENTS = ("GPU", "Host", "Unplanned Maintenance")

US_PER_MIN = 60_000_000
US_PER_H = 60 * US_PER_MIN
MIN_RUN_GAP_MIN = 10.0  # minimum running time between two interruptions (assumed)
MIN_DOWNTIME_MIN = 12.0  # floor of the restart downtime (attribution windows never overlap)


@dataclass(frozen=True)
class SimParams:
    """Validated parameters of one simulation (see :func:`reliab.datasets.simulate_cluster`)."""

    n_gpus: int
    gpus_per_node: int
    days: float
    start_us: int
    counts: Literal["expected", "table5"]
    seed: int
    rates: dict[str, float]
    shapes: dict[str, float]
    frailty: float
    lemon_fraction: float
    lemon_factor: float
    spare_fraction: float
    restart_minutes: tuple[float, float]
    repair_hours: tuple[float, float]
    noise_lines_per_node_day: float
    background_per_node_day: float
    telemetry_nodes: int
    utc_offset_h: float
    other_jobs_per_day: float = 3.0
    precursor_fraction: float = 0.0
    precursor_null: bool = False

    @property
    def n_nodes(self) -> int:
        """Nodes of the training job."""
        return self.n_gpus // self.gpus_per_node

    @property
    def n_spares(self) -> int:
        """Spare nodes (hosts numbered after the job's nodes)."""
        return int(np.ceil(self.spare_fraction * self.n_nodes))

    @property
    def window_us(self) -> int:
        """Length of the observation window in microseconds."""
        return int(round(self.days * 24 * US_PER_H))


def default_rates(gpu_scale: float = 1.0, time_scale: float = 1.0) -> dict[str, float]:
    """Table 5 counts plus 47 planned interruptions over the 54-day window.

    Counts: Llama 3 (arXiv 2407.21783) Table 5 and §3.3.4.

    Unexpected counts scale with GPUs × time (``gpu_scale`` = n_gpus / 16,384,
    ``time_scale`` = days / 54); planned ones, being job-level, with time only.
    """
    unexpected = {k: v * gpu_scale * time_scale for k, v in TABLE5_COUNTS.items()}
    return {**unexpected, "Planned": LLAMA3_PLANNED * time_scale}


def host_name(index: int) -> str:
    """Host name of node ``index`` (0-based): ``node0001``, ``node0002``, …"""
    return f"node{index + 1:04d}"


def rng_for(params: SimParams, stream: int) -> np.random.Generator:
    """An independent generator for one part of the simulation (stable across edits)."""
    return np.random.default_rng([params.seed, stream])


def draw_counts(params: SimParams, rng: np.random.Generator) -> dict[str, int]:
    """Interruption count per category: fixed (``table5``) or Poisson (``expected``)."""
    if params.counts == "table5":
        return {c: int(round(r)) for c, r in params.rates.items()}
    return {c: int(rng.poisson(r)) for c, r in params.rates.items()}


def draw_timeline(params: SimParams, counts: dict[str, int],
                  rng: np.random.Generator) -> pd.DataFrame:
    """Interruption times in running time, mapped to wall clock.

    Within category ``c`` with ``n`` events and shape ``b``, running times are
    ``R * U**(1/b)`` — the order statistics of a power-law (Crow-AMSAA) process with
    cumulative intensity ``n (t/R)**b`` conditioned on ``n`` events; ``b = 1`` is a
    homogeneous Poisson process.  Sorted times are then spread so that consecutive
    interruptions are at least ``MIN_RUN_GAP_MIN`` running minutes apart.
    """
    cats = np.array([c for c in counts for _ in range(counts[c])], dtype=object)
    n = len(cats)
    median, sigma = params.restart_minutes
    down_min = np.maximum(MIN_DOWNTIME_MIN, rng.lognormal(np.log(median), sigma, n))
    window_min = params.window_us / US_PER_MIN
    run_min = window_min - down_min.sum()
    spare_min = run_min - (n + 1) * MIN_RUN_GAP_MIN
    if spare_min <= 0:
        raise ValueError(f"{n} interruptions do not fit in {params.days} days of running time")
    t = np.concatenate([run_min * rng.random(counts[c]) ** (1.0 / params.shapes[c])
                        for c in counts]) if n else np.array([])
    order = np.argsort(t, kind="stable")
    t_run = t[order] * spare_min / run_min + (np.arange(n) + 1) * MIN_RUN_GAP_MIN
    cats = cats[order]
    before = np.concatenate([[0.0], np.cumsum(down_min)[:-1]]) if n else np.array([])
    end_us = params.start_us + np.round((t_run + before) * US_PER_MIN).astype(np.int64)
    planned = np.array([c == "Planned" for c in cats], dtype=bool)
    delay_s = np.where(planned, 60.0, np.exp(rng.uniform(np.log(30), np.log(300), n)))
    return pd.DataFrame({
        "end_us": end_us,
        "failure_us": end_us - np.round(delay_s * 1e6).astype(np.int64),
        "category": cats.astype(str),
        "planned": planned,
        "downtime_min": down_min,
    })


def draw_nodes(params: SimParams, rng: np.random.Generator) -> pd.DataFrame:
    """Hosts with gamma frailty ``z`` (mean 1, variance ``frailty``) and planted lemons."""
    n_total = params.n_nodes + params.n_spares
    if params.frailty > 0:
        z = rng.gamma(1.0 / params.frailty, params.frailty, n_total)
    else:
        z = np.ones(n_total)
    n_lemons = int(round(params.lemon_fraction * params.n_nodes))
    lemon = np.zeros(n_total, dtype=bool)
    lemon[rng.choice(params.n_nodes, size=n_lemons, replace=False)] = True
    z = np.where(lemon, z * params.lemon_factor, z)
    return pd.DataFrame({
        "host": [host_name(i) for i in range(n_total)],
        "frailty": z,
        "lemon": lemon,
        "spare": np.arange(n_total) >= params.n_nodes,
    })


def assign_hosts(params: SimParams, timeline: pd.DataFrame, nodes: pd.DataFrame,
                 rng: np.random.Generator) -> tuple[pd.DataFrame, list[np.ndarray], list[tuple]]:
    """Pick the failing node of each interruption and swap failed nodes for spares.

    Returns the timeline with ``node``, ``gpu_index`` and ``swapped_in`` columns, the
    sorted node indices of every job segment (one more than interruptions), and the
    service spans ``(node, in_us, out_us)`` of every node.
    """
    z = nodes["frailty"].to_numpy()
    active = np.arange(params.n_nodes)
    spares = list(range(params.n_nodes, len(nodes)))
    repairs: list[tuple[int, int]] = []
    since = {int(k): params.start_us for k in active}
    spans: list[tuple] = []
    segments: list[np.ndarray] = []
    node_col, gpu_col, swap_col = [], [], []
    rmed, rsig = params.repair_hours
    for end, cat in zip(timeline["end_us"], timeline["category"], strict=True):
        back = [r for r in repairs if r[0] <= end]
        repairs = [r for r in repairs if r[0] > end]
        spares = sorted(spares + [node for _, node in back])
        segments.append(np.sort(active))
        slot = _pick_slot(cat, active, z, rng)
        node_col.append(-1 if slot < 0 else int(active[slot]))
        gpu_col.append(int(rng.integers(params.gpus_per_node)) if slot >= 0 else -1)
        swapped = -1
        if slot >= 0 and COMPONENT_OF[cat] in _SWAP_COMPONENTS and spares:
            failed, swapped = int(active[slot]), spares.pop(0)
            spans.append((failed, since.pop(failed), int(end)))
            since[swapped] = int(end)
            active[slot] = swapped
            repair_us = int(rng.lognormal(np.log(rmed), rsig) * US_PER_H)
            repairs.append((int(end) + repair_us, failed))
        swap_col.append(swapped)
    segments.append(np.sort(active))
    end_all = params.start_us + params.window_us
    spans.extend((node, t0, end_all) for node, t0 in since.items())
    out = timeline.assign(node=node_col, gpu_index=gpu_col, swapped_in=swap_col)
    return out, segments, sorted(spans)


def _pick_slot(category: str, active: np.ndarray, z: np.ndarray,
               rng: np.random.Generator) -> int:
    """Slot of the failing node: ∝ frailty for node faults, uniform for software, none."""
    if category in _NO_HOST:
        return -1
    if category in _UNIFORM_HOST:
        return int(rng.integers(len(active)))
    w = z[active]
    return int(rng.choice(len(active), p=w / w.sum()))


def true_rates(params: SimParams) -> pd.DataFrame:
    """Expected count over the window, rate per wall-clock GPU-hour and shape per category."""
    gpu_hours = params.n_gpus * params.days * 24
    rows = [(c, COMPONENT_OF.get(c, "Unknown"), c == "Planned", r, r / gpu_hours,
             params.shapes[c]) for c, r in params.rates.items()]
    return pd.DataFrame(rows, columns=["category", "component", "planned", "expected_count",
                                       "rate_per_gpu_hour", "shape"])
