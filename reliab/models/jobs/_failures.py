"""Failure processes of a training job: what interrupts it, how often, how clustered in time.

A job is a series system of its nodes (and the network they span): any one failing stops it,
so the job-level rate is the sum of the rates of what it spans (Kokolis et al., HPCA 2025,
arXiv 2410.21680: MTTF = 1 / (N_nodes · r_f)).  Each :class:`FailureProcess` is a renewal
process in the job's *running* time whose gaps are Weibull with the given shape and a mean
of ``1 / rate``; shape 1 is the Poisson process the closed forms assume, shape < 1 clusters
failures (infant mortality after every restart), shape > 1 spaces them (wear-out).  A
:class:`FailureModel` superposes independent processes, e.g. one per Table 5 category.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from reliab.models.jobs._durations import to_count, to_rate

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class FailureProcess:
    """One renewal process of interruptions, in job running time.

    Parameters
    ----------
    name : str
        What fails (a category, a component, ``"all"``).
    rate_per_h : float
        Mean interruptions per running hour of the job (already scaled to the job's size).
    shape : float
        Weibull shape of the gaps between interruptions; 1.0 is exponential.
    """

    name: str
    rate_per_h: float
    shape: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate_per_h) and self.rate_per_h >= 0):
            raise ValueError(f"rate_per_h of {self.name!r} must be non-negative, got {self.rate_per_h!r}")
        if not (math.isfinite(self.shape) and self.shape > 0):
            raise ValueError(f"shape of {self.name!r} must be positive, got {self.shape!r}")

    @property
    def mean_h(self) -> float:
        """Mean gap between interruptions (inf when the rate is zero)."""
        return math.inf if self.rate_per_h == 0 else 1.0 / self.rate_per_h

    @property
    def scale_h(self) -> float:
        """Weibull scale giving the mean ``1 / rate``."""
        return self.mean_h / math.gamma(1.0 + 1.0 / self.shape)

    def survival(self, t_h: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(gap > t)."""
        t = np.asarray(t_h, dtype=float)
        if self.rate_per_h == 0:
            return np.ones_like(t)
        return np.exp(-((t / self.scale_h) ** self.shape))

    def quantile(self, p: float) -> float:
        """Gap length exceeded with probability ``1 - p``."""
        if self.rate_per_h == 0:
            return math.inf
        return self.scale_h * (-math.log1p(-p)) ** (1.0 / self.shape)

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> NDArray[np.float64]:
        """Independent gaps (hours)."""
        if self.rate_per_h == 0:
            return np.full(size, np.inf)
        if self.shape == 1.0:
            return rng.exponential(self.mean_h, size)
        return self.scale_h * rng.weibull(self.shape, size)

    @property
    def cv2(self) -> float:
        """Squared coefficient of variation of the gaps (1 for exponential)."""
        g1 = math.gamma(1.0 + 1.0 / self.shape)
        return math.gamma(1.0 + 2.0 / self.shape) / g1**2 - 1.0


@dataclass(frozen=True)
class FailureModel:
    """Independent failure processes whose superposition interrupts the job."""

    processes: tuple[FailureProcess, ...]
    description: str = ""

    def __post_init__(self) -> None:
        if not self.processes:
            raise ValueError("a FailureModel needs at least one process")

    @property
    def rate_per_h(self) -> float:
        """Total mean interruption rate per running hour."""
        return float(sum(p.rate_per_h for p in self.processes))

    @property
    def mtti_h(self) -> float:
        """Mean running time between interruptions, ``1 / Σ rate`` (exact for Poisson processes)."""
        rate = self.rate_per_h
        return math.inf if rate == 0 else 1.0 / rate

    @property
    def is_renewal(self) -> bool:
        """True when gaps between interruptions are i.i.d. (one process, or all exponential)."""
        return len(self.processes) == 1 or all(p.shape == 1.0 for p in self.processes)

    def survival(self, t_h: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(gap > t) of the job-level process (only for a renewal model)."""
        if not self.is_renewal:
            raise ValueError("the superposition of non-exponential processes is not a renewal "
                             "process: its gap distribution is not defined here")
        if len(self.processes) == 1:
            return self.processes[0].survival(t_h)
        return np.exp(-self.rate_per_h * np.asarray(t_h, dtype=float))

    def tail_h(self) -> float:
        """A gap length beyond which the survival is below 1e-16 (for the renewal sums)."""
        if self.rate_per_h == 0:
            return math.inf
        if len(self.processes) == 1:
            return self.processes[0].quantile(1.0 - 1e-16)
        return 37.0 / self.rate_per_h

    def summary(self) -> pd.DataFrame:
        """One row per process: name, rate per hour, MTTI, shape."""
        return pd.DataFrame({
            "process": [p.name for p in self.processes],
            "rate_per_h": [p.rate_per_h for p in self.processes],
            "mtti_h": [p.mean_h for p in self.processes],
            "shape": [p.shape for p in self.processes],
        })


def node_model(n_gpus: int, node_failure_rate_per_day: float, *, gpus_per_node: int = 8,
               shape: float = 1.0) -> FailureModel:
    """All interruptions as one process at ``N_nodes · r_f`` (Kokolis et al. 2025)."""
    n_gpus = to_count(n_gpus, "n_gpus")
    gpus_per_node = to_count(gpus_per_node, "gpus_per_node")
    rate = to_rate(node_failure_rate_per_day, "node_failure_rate_per_day")
    nodes = n_gpus / gpus_per_node
    return FailureModel((FailureProcess("all", nodes * rate / HOURS_PER_DAY, shape),),
                        f"{nodes:,.0f} nodes x {rate * 1000:.3g} failures per 1000 node-days"
                        + ("" if shape == 1.0 else f", Weibull shape {shape:g}"))


def category_model(rates: Any, n_gpus: int, *, gpus_per_node: int = 8,
                   shapes: Mapping[str, float] | None = None, by: str = "category") -> FailureModel:
    """One process per category from a rates result (``reliab.estimate_rates``) or its summary.

    Each category's rate per 1000 node-days is scaled to the job's ``n_gpus / gpus_per_node``
    nodes; ``shapes`` gives a Weibull shape per category (default 1.0).  The ``Total`` row
    and planned interruptions are not used.
    """
    table = rates.summary() if hasattr(rates, "summary") else pd.DataFrame(rates)
    for col in (by, "rate_per_1k_node_days"):
        if col not in table.columns:
            raise ValueError(f"rates has no column {col!r}; pass reliab.estimate_rates(...) output")
    table = table[table[by].astype(str) != "Total"]
    nodes = to_count(n_gpus, "n_gpus") / to_count(gpus_per_node, "gpus_per_node")
    shapes = dict(shapes or {})
    procs = tuple(FailureProcess(str(row[by]), float(row["rate_per_1k_node_days"]) / 1000.0 * nodes
                                 / HOURS_PER_DAY, float(shapes.pop(str(row[by]), 1.0)))
                  for _, row in table.iterrows())
    if shapes:
        raise ValueError(f"shapes names categories not in rates: {sorted(shapes)}")
    return FailureModel(procs, f"{len(procs)} categories scaled to {nodes:,.0f} nodes")


def fitted_model(fit: Any, n_gpus: int, *, fitted_gpus: int, name: str = "fitted") -> FailureModel:
    """One Weibull process from a fit of the gaps between a job's interruptions.

    ``fit`` is a :func:`reliab.fit_weibull` result (``shape``, ``scale`` in hours) of the
    running time between interruptions of a job of ``fitted_gpus`` GPUs.  The shape is kept
    and the mean scaled by ``fitted_gpus / n_gpus`` (a series system of nodes: the rate grows
    with the job's size).
    """
    n_gpus = to_count(n_gpus, "n_gpus")
    fitted_gpus = to_count(fitted_gpus, "fitted_gpus")
    shape, scale = float(fit.shape), float(fit.scale)
    if not (shape > 0 and scale > 0):
        raise ValueError(f"fit must have a positive shape and scale, got {shape!r}, {scale!r}")
    mean = scale * math.gamma(1.0 + 1.0 / shape) * fitted_gpus / n_gpus
    return FailureModel((FailureProcess(name, 1.0 / mean, shape),),
                        f"Weibull shape {shape:.3g} fitted at {fitted_gpus:,} GPUs, scaled to {n_gpus:,}")
