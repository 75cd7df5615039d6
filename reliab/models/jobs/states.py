"""How jobs end: end-state shares, failure share and rate against job size, time to failure.

The first figures every published GPU-cluster trace study gives (Jeon et al., USENIX ATC
'19, Philly §5; Hu et al., SC '21, Helios §3; Weng et al., NSDI '22, PAI; Hu et al., NSDI
'24, Acme §5) come from the job records alone: the share of jobs per end state, how the
failed share grows with the GPUs a job holds, and how long jobs run before they fail.
:func:`estimate_end_states` computes them from the ``jobs`` table, with intervals:

* shares per state and failed shares per size: exact binomial (Clopper & Pearson 1934);
* failures per 1,000 job-hours per size: exact Poisson (Garwood 1936);
* time to failure: Kaplan–Meier of the job run times with a failure as the event and every
  other end censored; the median's interval is read off the pointwise band where it crosses
  0.5 (Brookmeyer & Crowley 1982).

A job is counted once, by its last record (a requeued or retried job has several).  Failure
states are ``FAILED``, ``NODE_FAIL``, ``BOOT_FAIL`` and ``OUT_OF_MEMORY``; ``TIMEOUT`` and
``CANCELLED`` are not failures.  Infrastructure and user failures are told apart only when
the outcome tables of the ingest (interruptions, user failures) are given: under the fleet
policy a ``NODE_FAIL`` is infrastructure and a ``FAILED`` job without infrastructure
evidence is the user's; a trace whose states cannot tell them apart says so in the notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, equal, in_range
from reliab.errors import InsufficientDataError
from reliab.models._result import ResultMixin

FAILURE_STATES = ("FAILED", "NODE_FAIL", "BOOT_FAIL", "OUT_OF_MEMORY")
#: states that name the infrastructure whatever the evidence (sacct(1) JOB STATE CODES)
INFRASTRUCTURE_STATES = ("NODE_FAIL", "BOOT_FAIL")
_NOT_ENDED = ("RUNNING", "PENDING", "SUSPENDED", "REQUEUED")


def clopper_pearson(k: np.ndarray, n: np.ndarray, conf_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval of ``k`` successes in ``n`` trials (Clopper & Pearson 1934)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    a = (1.0 - conf_level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        high = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return low, high


def _garwood(k: np.ndarray, conf_level: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1.0 - conf_level) / 2.0
    k = np.asarray(k, dtype=float)
    low = np.where(k > 0, stats.chi2.ppf(a, 2 * k) / 2.0, 0.0)
    return low, stats.chi2.ppf(1 - a, 2 * k + 2) / 2.0


@dataclass(frozen=True)
class JobFailuresBySize(ResultMixin):
    """Failed share and failures per 1,000 job-hours per power-of-two GPU bucket.

    ``table``: ``bucket``, ``jobs``, ``job_hours``, ``failed``, ``infrastructure``, ``user``
    (NA when not told apart), ``failed_share`` and ``failures_per_1k_job_h``, each with its
    exact ``_low``/``_high`` interval.
    """

    table: pd.DataFrame = field(repr=False)
    n: int
    failed: int
    conf_level: float
    method: str = "failed share: exact binomial (Clopper-Pearson 1934); failures per job-hour: exact Poisson (Garwood 1936)"
    notes: tuple[str, ...] = ()
    report_section: ClassVar[str] = "jobs"  # placement in the report (reliab.report.catalog)
    what: ClassVar[str] = "Failed jobs against job size"

    def summary(self) -> pd.DataFrame:
        """The table per GPU bucket."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        b = self.table
        return (
            equal("size_buckets_sum_to_jobs", int(b["jobs"].sum()), self.n, what="jobs per size"),
            equal("size_buckets_sum_to_failed", int(b["failed"].sum()), self.failed, what="failed per size"),
            contains("failed_share_intervals", b["failed_share_low"], b["failed_share"], b["failed_share_high"]),
            contains("failure_rate_intervals", b["failures_per_1k_job_h_low"], b["failures_per_1k_job_h"],
                     b["failures_per_1k_job_h_high"]),
        )

    def plot(self, ax: Any = None) -> Any:
        """Failed share against GPUs per job, with exact intervals."""
        from matplotlib.figure import Figure

        fig = ax.figure if ax is not None else Figure(figsize=(6, 3.5), layout="constrained")
        ax = ax if ax is not None else fig.add_subplot()
        b = self.table
        err = np.vstack([b["failed_share"] - b["failed_share_low"], b["failed_share_high"] - b["failed_share"]])
        ax.errorbar(b["bucket"], b["failed_share"], yerr=err, fmt="o", color="#c0392b")
        ax.set(xlabel="GPUs per job", ylabel="share of jobs that failed (fraction)", ylim=(0, 1),
               title="Failed jobs against job size")
        return fig


@dataclass(frozen=True)
class JobEndStates(ResultMixin):
    """End-state shares of the jobs, the failed ones split by cause, and time to failure.

    ``states``: ``state``, ``jobs``, ``share`` with ``share_low``/``share_high``;
    ``by_size``: :class:`JobFailuresBySize`.
    """

    states: pd.DataFrame = field(repr=False)
    by_size: JobFailuresBySize = field(repr=False)
    n: int
    failed: int
    infrastructure: int
    user: int | None
    ttf_median_h: float
    ttf_low_h: float
    ttf_high_h: float
    conf_level: float
    method: str = ("shares: exact binomial (Clopper-Pearson 1934); time to failure: Kaplan-Meier with every "
                   "other end censored, median interval from the pointwise band (Brookmeyer-Crowley 1982)")
    notes: tuple[str, ...] = ()
    report_section: ClassVar[str] = "jobs"  # placement in the report (reliab.report.catalog)
    what: ClassVar[str] = "How jobs end"

    def summary(self) -> pd.DataFrame:
        """The share of jobs per end state."""
        return self.states.copy()

    def invariants(self) -> tuple[Check, ...]:
        s = self.states
        return (
            equal("state_counts_sum_to_jobs", int(s["jobs"].sum()), self.n, what="jobs per state"),
            in_range("shares_in_unit_interval", s["share"], 0.0, 1.0),
            contains("share_intervals_contain_share", s["share_low"], s["share"], s["share_high"]),
            in_range("causes_within_failed", self.infrastructure + (self.user or 0), 0, self.failed),
            contains("ttf_interval_contains_median", self.ttf_low_h, self.ttf_median_h, self.ttf_high_h),
        )


def _last_records(jobs: pd.DataFrame) -> pd.DataFrame:
    j = jobs.dropna(subset=["state"])
    if "end" in j:
        j = j.sort_values("end", kind="stable", na_position="last")
    return j.drop_duplicates("job_id", keep="last")


def _buckets(ngpus: pd.Series) -> tuple[np.ndarray, list[str]]:
    g = ngpus.astype(float).fillna(0).to_numpy()
    b = np.where(g > 0, np.ceil(np.log2(np.maximum(g, 1))), -1).astype(int)
    return b, [("0 / unknown" if k < 0 else "1" if k == 0 else "2" if k == 1 else f"{2 ** (k - 1) + 1}-{2 ** k}")
               for k in b]


def _hours(value: float) -> str:
    return "not reached" if np.isinf(value) else "n/a" if np.isnan(value) else f"{value:,.3g} h"


def _ttf(hours: np.ndarray, failed: np.ndarray, conf_level: float) -> tuple[float, float, float]:
    from reliab.models.nonparametric import estimate_kaplan_meier

    keep = np.isfinite(hours) & (hours > 0)
    if not failed[keep].any():
        return np.inf, np.nan, np.inf
    km = estimate_kaplan_meier(hours[keep], failed[keep], conf_level=conf_level)
    median = km.median()
    low, high = km.quantile_interval(0.5)  # Brookmeyer & Crowley (1982), as R's quantile.survfit
    if low > median:  # the band is undefined where the curve reaches 0 (R: NA): no lower limit
        low = np.nan
    return median, low, high


def estimate_end_states(jobs: pd.DataFrame, *, interruptions: pd.DataFrame | None = None,
                        user_failures: pd.DataFrame | None = None, conf_level: float = 0.95) -> JobEndStates:
    """End-state shares, failed share and rate per job size, and time to failure of the jobs.

    Parameters
    ----------
    jobs : DataFrame
        The ``jobs`` table (``job_id``, ``state``, ``start``, ``end``, ``ngpus``).
    interruptions, user_failures : DataFrame, optional
        The ingest's outcome tables: the failed jobs counted as infrastructure interruptions
        and as user failures.  Without them only the states tell (``NODE_FAIL``,
        ``BOOT_FAIL`` are infrastructure; the rest is not told apart).
    conf_level : float
        Level of the two-sided intervals.

    Returns
    -------
    JobEndStates

    Raises
    ------
    InsufficientDataError
        No job with a state.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). Biometrika 26, 404–413. Garwood, F. (1936).
    Biometrika 28, 437–442. Brookmeyer, R. & Crowley, J. (1982). Biometrics 38, 29–41.
    """
    j = _last_records(jobs)
    if not len(j):
        raise InsufficientDataError("no job record with an end state")
    state = j["state"].astype(str).str.upper()
    counts = state.value_counts()
    n = int(counts.sum())
    low, high = clopper_pearson(counts.to_numpy(), np.full(len(counts), n), conf_level)
    states = pd.DataFrame({"state": counts.index, "jobs": counts.to_numpy(), "share": counts.to_numpy() / n,
                           "share_low": low, "share_high": high})
    failed = state.isin(FAILURE_STATES).to_numpy()
    told = interruptions is not None and user_failures is not None
    ids = j["job_id"].astype(str)
    if told:
        infra = ids.isin(interruptions["job_id"].astype(str)).to_numpy() & failed
        user = ids.isin(user_failures["job_id"].astype(str)).to_numpy() & failed & ~infra
    else:
        infra = state.isin(INFRASTRUCTURE_STATES).to_numpy()
        user = np.zeros(len(j), dtype=bool)
    hours = ((pd.to_datetime(j["end"], utc=True) - pd.to_datetime(j["start"], utc=True))
             / pd.Timedelta(hours=1)).to_numpy(dtype=float)
    table = _by_size(j, failed, infra, user, hours, told, conf_level)
    median, m_low, m_high = _ttf(hours, failed, conf_level)
    notes = [f"{n:,} jobs counted once each, by their last record",
             f"{int(failed.sum()):,} failed ({', '.join(FAILURE_STATES)}): {int(infra.sum()):,} infrastructure"
             + (f", {int(user.sum()):,} user or application" if told else " (by state), the rest not told apart"),
             f"median run time to failure {_hours(median)} [{_hours(m_low)}, {_hours(m_high)}]"
             " (Kaplan-Meier, other ends censored)"]
    if told and not state.isin(INFRASTRUCTURE_STATES).any() and failed.any() and not infra.any():
        notes.append("no job ended NODE_FAIL or BOOT_FAIL and no failure has infrastructure evidence: "
                     "if the trace's states cannot tell user from infrastructure failures, every "
                     "failure counts as the user's")
    notes.append(f"{int(state.isin(_NOT_ENDED).sum()):,} job(s) had not ended (running, pending, requeued)")
    by_size = JobFailuresBySize(table=table, n=n, failed=int(failed.sum()), conf_level=conf_level,
                                notes=("jobs of unknown or zero GPUs in their own row",))
    return JobEndStates(states=states, by_size=by_size, n=n, failed=int(failed.sum()),
                        infrastructure=int(infra.sum()), user=int(user.sum()) if told else None,
                        ttf_median_h=median, ttf_low_h=m_low, ttf_high_h=m_high, conf_level=conf_level,
                        notes=tuple(notes))


def _by_size(j: pd.DataFrame, failed: np.ndarray, infra: np.ndarray, user: np.ndarray, hours: np.ndarray,
             told: bool, conf_level: float) -> pd.DataFrame:
    codes, labels = _buckets(j["ngpus"])
    frame = pd.DataFrame({"code": codes, "bucket": labels, "failed": failed, "infra": infra, "user": user,
                          "hours": np.where(np.isfinite(hours) & (hours > 0), hours, 0.0)})
    g = frame.groupby("code", sort=True).agg(bucket=("bucket", "first"), jobs=("failed", "size"),
                                             job_hours=("hours", "sum"), failed=("failed", "sum"),
                                             infrastructure=("infra", "sum"), user=("user", "sum"))
    k, m = g["failed"].to_numpy(), g["jobs"].to_numpy()
    s_low, s_high = clopper_pearson(k, m, conf_level)
    r_low, r_high = _garwood(k, conf_level)
    job_h = g["job_hours"].to_numpy(dtype=float)
    per_k = np.divide(1000.0, job_h, out=np.full(len(job_h), np.nan), where=job_h > 0)
    out = g.reset_index(drop=True).assign(
        failed_share=k / m, failed_share_low=s_low, failed_share_high=s_high,
        failures_per_1k_job_h=k * per_k, failures_per_1k_job_h_low=r_low * per_k,
        failures_per_1k_job_h_high=r_high * per_k)
    if not told:
        out["user"] = pd.array([pd.NA] * len(out), dtype="Int64")
    return out


__all__ = ["estimate_end_states", "JobEndStates", "JobFailuresBySize", "clopper_pearson", "FAILURE_STATES"]
