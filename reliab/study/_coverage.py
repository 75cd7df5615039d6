"""Does the exposure cover the fleet?  The guard in front of results that divide by it.

GPU-level MTBF (GPU-hours at risk per interruption) and job MTTF against job size (per-node
rate scaled to a job's nodes) both divide by the exposure.  When the exposure is a small part
of the fleet that produced the interruptions (job records with few GPU counts, a handful of
short allocations, a ``--gpus`` far below the hosts in the logs), the quotient is an artefact:
a cluster with almost no recorded GPU time gets an MTBF of minutes, and its job MTTF is then
extrapolated to 131,072 GPUs.

Rule: the fleet holds at least every host that appears in the logs or the job records, so
its GPU-time in the window is at least ``hosts seen x GPUs per node x window``.  When the
exposure is below :data:`MIN_COVERAGE` of that lower bound, GPU-level MTBF and job MTTF are
not shown (:class:`~reliab.NotAvailable` with the coverage as the reason).  With no host
names at all the coverage cannot be judged and nothing is hidden; the exposure's source is
stated in the methods either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reliab._checks import Check, in_range
from reliab._result import NotAvailable, ResultMixin

#: smallest exposure, as a fraction of the fleet's GPU-time lower bound, behind a GPU-level MTBF
MIN_COVERAGE = 0.10


@dataclass(frozen=True)
class ExposureCoverage(ResultMixin):
    """The exposure against the fleet it should cover.

    Attributes
    ----------
    gpu_days : float
        Exposure the rates divide by.
    fleet_gpu_days : float
        Lower bound of the fleet's GPU-days in the window (hosts seen x GPUs per node x days).
    coverage : float
        ``gpu_days / fleet_gpu_days`` (NaN when no host was seen).
    n : int
        Hosts seen in the logs and job records.
    source : str
        Where the exposure came from (``inventory``, ``gpus``, ``jobs``).
    """

    gpu_days: float
    fleet_gpu_days: float
    coverage: float
    n: int
    source: str
    min_coverage: float = MIN_COVERAGE
    conf_level: float | None = None
    method: str = ("exposure / (hosts seen in the logs and job records x GPUs per node x "
                   "window); GPU-level MTBF and job MTTF shown only above the minimum")
    notes: tuple[str, ...] = ()

    @property
    def adequate(self) -> bool:
        """Whether results that divide by the exposure may be shown."""
        return not (self.coverage < self.min_coverage)  # NaN: cannot judge, not hidden

    @property
    def reason(self) -> str:
        """Why results needing exposure are hidden (empty when they are not)."""
        if self.adequate:
            return ""
        return (f"the exposure ({self.gpu_days:,.1f} GPU-days, from the {self.source}) is "
                f"{100 * self.coverage:.2g}% of the GPU-time of the {self.n:,} hosts seen in the "
                f"logs over the window ({self.fleet_gpu_days:,.0f} GPU-days), below the "
                f"{self.min_coverage:.0%} needed: give the fleet size (--gpus or --inventory)")

    def summary(self) -> pd.DataFrame:
        """One row: exposure, fleet lower bound, coverage, hosts seen, adequate."""
        return pd.DataFrame([{"gpu_days": self.gpu_days, "fleet_gpu_days": self.fleet_gpu_days,
                              "coverage_pct": 100 * self.coverage, "hosts": self.n,
                              "source": self.source, "adequate": self.adequate}])

    def invariants(self) -> tuple[Check, ...]:
        """Exposure and fleet GPU-days are positive; coverage is their ratio."""
        return (in_range("exposure_positive", self.gpu_days, 0.0),
                in_range("coverage_non_negative", self.coverage, 0.0, allow_nan=True))


def hosts_seen(ingest: Any, node_hours: pd.Series | None = None) -> set[str]:
    """Hosts named by the logs (``signals.host``) or the job records (expanded node lists).

    ``node_hours``: the job records' hours per node (:func:`reliab.prepare.node_hours`) when
    the caller has them already; else computed here.
    """
    from reliab import prepare

    hosts = set(ingest.signals["host"].dropna().astype(str)) if len(ingest.signals) else set()
    jobs = ingest.jobs
    if len(jobs) and jobs["nodelist"].notna().any():
        hours = node_hours if node_hours is not None else prepare.node_hours(jobs)
        hosts |= set(hours.index.astype(str))
    return {h for h in hosts if h}


def exposure_coverage(fleet: Any, ingest: Any, *, node_hours: pd.Series | None = None
                      ) -> ExposureCoverage:
    """How much of the fleet's GPU-time the exposure covers (module docstring); ``node_hours``
    as in :func:`hosts_seen`."""
    n = len(hosts_seen(ingest, node_hours))
    bound = n * fleet.gpus_per_node * fleet.days
    coverage = fleet.gpu_days / bound if bound > 0 else math.nan
    return ExposureCoverage(gpu_days=float(fleet.gpu_days), fleet_gpu_days=float(bound),
                            coverage=float(coverage), n=n, source=str(fleet.exposure_source))


def exposure_blocker(coverage: Any, what: str) -> NotAvailable | None:
    """NotAvailable for ``what`` when ``coverage`` is inadequate, else ``None``."""
    if isinstance(coverage, ExposureCoverage) and not coverage.adequate:
        return NotAvailable(what, coverage.reason)
    return None


__all__ = ["MIN_COVERAGE", "ExposureCoverage", "exposure_blocker", "exposure_coverage", "hosts_seen"]
