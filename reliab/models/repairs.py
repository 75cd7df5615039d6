"""Failure records with repair times: rates, MTBF, MTTR, repair-time distributions, availability.

These analyses start from the canonical ``failures`` table (:mod:`reliab.schema`: one row per
failure of a unit, with its start, its repair time and its recorded cause), so they need no
scheduler records.  Rates are counts over unit-days at risk with exact Poisson intervals
(Garwood 1936); the repair-time distributions are fitted by maximum likelihood and ranked by
AIC (Akaike 1974), as Schroeder & Gibson, "A large-scale study of failures in
high-performance computing systems" (DSN 2006, §6) rank them for the LANL record; inherent
availability is ``MTBF / (MTBF + MTTR)`` (MIL-HDBK-338B §5.6; Ebeling, *An Introduction to
Reliability and Maintainability Engineering*, 2nd ed., §9.2) with a delta-method interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.rates import confint_poisson

from reliab._checks import Check, contains, equal, finite, in_range
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models.parametric import DISTRIBUTIONS, DistributionComparison, compare_distributions

#: distributions ranked for the repair times (the paper's four and the gamma)
REPAIR_DISTRIBUTIONS = DISTRIBUTIONS
#: repair times of a cause needed for the distributions to be ranked
MIN_REPAIRS = 10


def unit_exposure(failures: pd.DataFrame) -> pd.DataFrame:
    """Units and days at risk per system, from the record itself.

    Units are the largest ``system_units`` the records of a system state (LANL's ``nodes``
    column); where none is stated, the distinct units seen failing.  The window of a system
    runs from its first failure's start to its last repair's end (or start); a window of no
    length (one failure without an end) has NaN days.

    Returns
    -------
    DataFrame
        Index ``system``; columns ``units``, ``units_from`` (``"record"`` or ``"seen"``),
        ``start``, ``end``, ``days``, ``unit_days``.
    """
    f = failures.assign(system=failures["system"].astype("object").fillna("(none)"))
    last = f["end"].where(f["end"].notna(), f["start"]) if "end" in f else f["start"]
    g = f.assign(_last=last).groupby("system", sort=True)
    stated = g["system_units"].max() if "system_units" in f else pd.Series(dtype="float64")
    seen = g["unit"].nunique()
    units = stated.reindex(seen.index).astype("Float64")
    from_record = units.notna() & (units > 0)
    out = pd.DataFrame({"units": units.where(from_record, seen).astype(float),
                        "units_from": np.where(from_record.to_numpy(dtype=bool), "record", "seen"),
                        "start": g["start"].min(), "end": g["_last"].max()})
    out["days"] = (out["end"] - out["start"]) / pd.Timedelta(days=1)
    out["days"] = out["days"].where(out["days"] > 0)  # one instant: no time at risk to divide by
    out["unit_days"] = out["units"] * out["days"]
    return out


@dataclass(frozen=True)
class FailureRates(ResultMixin):
    """Failures per 1,000 unit-days and MTBF (unit-hours per failure) by group, exact intervals."""

    table: pd.DataFrame = field(repr=False)
    by: str
    n: int
    unit_days: float
    conf_level: float
    method: str = ("failures / unit-days at risk; exact Poisson intervals (statsmodels confint_poisson "
                   "'exact-c', Garwood 1936); MTBF = unit-hours / failures")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """``by``, ``count``, ``share_pct``, ``units``, ``unit_days``, rate and MTBF with bounds."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        t = self.table
        parts = t[t[self.by] != "Total"]
        return (equal("failure_counts_conserved", int(parts["count"].sum()), self.n),
                contains("failure_rate_interval", t["rate_per_1k_unit_days_low"], t["rate_per_1k_unit_days"],
                         t["rate_per_1k_unit_days_high"]),
                in_range("failure_share_pct", parts["share_pct"], 0.0, 100.0))


def _rate_rows(counts: pd.Series, unit_days: pd.Series, units: pd.Series, conf_level: float) -> pd.DataFrame:
    c = counts.to_numpy(dtype=float)
    e = unit_days.to_numpy(dtype=float)
    lo, hi = confint_poisson(c, e, method="exact-c", alpha=1.0 - conf_level)
    lo, hi = np.nan_to_num(np.asarray(lo, dtype=float)), np.asarray(hi, dtype=float)
    with np.errstate(divide="ignore"):
        return pd.DataFrame({
            "count": c.astype(int), "units": units.to_numpy(dtype=float), "unit_days": e,
            "rate_per_1k_unit_days": 1000.0 * c / e, "rate_per_1k_unit_days_low": 1000.0 * lo,
            "rate_per_1k_unit_days_high": 1000.0 * hi,
            "mtbf_unit_hours": 24.0 * e / c, "mtbf_unit_hours_low": 24.0 / hi,
            "mtbf_unit_hours_high": 24.0 / lo})


def estimate_failure_rates(failures: pd.DataFrame, *, by: str = "system",
                           conf_level: float = 0.95) -> FailureRates:
    """Failure rates and MTBF per system (each over its own unit-days) or per another column
    (each over the unit-days of every system, since any unit could fail of any cause).

    Parameters
    ----------
    failures : DataFrame
        Schema ``failures``.
    by : str
        ``"system"`` or a column such as ``"component"``, ``"cause"``.
    conf_level : float
        Level of the exact Poisson intervals.

    Returns
    -------
    FailureRates
    """
    if not len(failures):
        raise InsufficientDataError("no failure records")
    exp = unit_exposure(failures)
    key = failures[by].astype("object").fillna("(none)")
    counts = key.value_counts().sort_values(ascending=False, kind="stable")
    if by == "system":
        days, units = exp["unit_days"].reindex(counts.index), exp["units"].reindex(counts.index)
    else:
        days = pd.Series(exp["unit_days"].sum(), index=counts.index)
        units = pd.Series(exp["units"].sum(), index=counts.index)
    table = _rate_rows(counts, days, units, conf_level)
    table.insert(0, by, list(counts.index))
    total = _rate_rows(pd.Series([counts.sum()]), pd.Series([exp["unit_days"].sum()]),
                       pd.Series([exp["units"].sum()]), conf_level)
    total.insert(0, by, "Total")
    table = pd.concat([table, total], ignore_index=True)
    table.insert(2, "share_pct", 100.0 * table["count"] / counts.sum())
    seen = exp.index[exp["units_from"] == "seen"].tolist()
    notes = [f"exposure: {exp['unit_days'].sum():,.0f} unit-days over {len(exp)} system(s); units per system as"
             " the record states them, each system at risk from its first failure to its last repair"]
    instant = exp.index[exp["unit_days"].isna()].tolist()
    if instant:
        notes.append(f"{len(instant)} system(s) with no time at risk (records at one instant: "
                     f"{', '.join(map(str, instant[:8]))}): no rate of their own; the Total counts their failures"
                     " without exposure")
    if seen:
        notes.append(f"{len(seen)} system(s) state no unit count ({', '.join(map(str, seen[:8]))}): their units are"
                     " the distinct units seen failing over the window (a lower bound of the fleet)")
    return FailureRates(table=table, by=by, n=int(counts.sum()), unit_days=float(exp["unit_days"].sum()),
                        conf_level=conf_level, notes=tuple(notes))


@dataclass(frozen=True)
class RepairTimes(ResultMixin):
    """Time to repair per cause: MTTR with a bootstrap interval, median, and the distributions
    ranked by AIC (``comparisons``: cause -> DistributionComparison)."""

    table: pd.DataFrame = field(repr=False)
    comparisons: Mapping[str, DistributionComparison] = field(repr=False)
    by: str
    n: int
    conf_level: float
    method: str = ("mean and median of the recorded repair times; percentile bootstrap interval of the mean"
                   " (2,000 resamples, seed 0); exponential, Weibull, lognormal and log-logistic fitted by"
                   " maximum likelihood and ranked by AIC")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """``by``, ``n``, ``zeros``, ``mttr_h`` (+ bounds), ``median_h``, ``best``, ``ranking``."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        t = self.table
        return (contains("mttr_interval", t["mttr_h_low"], t["mttr_h"], t["mttr_h_high"]),
                in_range("repair_hours_nonnegative", t[["mttr_h", "median_h"]].to_numpy(), 0.0),
                equal("repairs_conserved", int(t.loc[t[self.by] != "All", "n"].sum()), self.n))


def _bootstrap_mean(x: np.ndarray, conf_level: float, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (2,000 resamples, drawn 100 at a time)."""
    if x.size < 2:
        return float("nan"), float("nan")
    means = np.concatenate([x[rng.integers(0, x.size, size=(100, x.size))].mean(axis=1) for _ in range(20)])
    a = (1.0 - conf_level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def estimate_repair_times(failures: pd.DataFrame, *, by: str = "cause",
                          conf_level: float = 0.95) -> RepairTimes:
    """MTTR, median repair time and the best repair-time distribution per cause.

    Repair times of zero (a record fixed within its time resolution) count in the mean and
    median but cannot enter the parametric likelihoods; they are left out of the fits and
    counted in ``zeros``.
    """
    data = failures.dropna(subset=["repair_h"])
    if not len(data):
        raise InsufficientDataError("no failure record has a repair time")
    rng = np.random.default_rng(0)
    rows, comparisons = [], {}
    groups = [(str(k), g["repair_h"].to_numpy(dtype=float))
              for k, g in data.groupby(data[by].astype("object").fillna("(none)"), sort=True)]
    groups.sort(key=lambda kv: -kv[1].size)
    groups.append(("All", data["repair_h"].to_numpy(dtype=float)))
    for name, x in groups:
        lo, hi = _bootstrap_mean(x, conf_level, rng)
        positive = x[x > 0]
        best = ranking = None
        if name != "All" and positive.size >= MIN_REPAIRS and np.unique(positive).size > 2:
            comp = compare_distributions(positive, None, distributions=REPAIR_DISTRIBUTIONS, conf_level=conf_level)
            comparisons[name] = comp
            s = comp.summary()
            best = str(s["distribution"].iloc[0])
            ranking = " < ".join(f"{d} ({a:+.0f})" for d, a in zip(s["distribution"], s["delta_aic"], strict=True))
        rows.append({by: name, "n": int(x.size), "zeros": int((x == 0).sum()), "mttr_h": float(x.mean()),
                     "mttr_h_low": lo, "mttr_h_high": hi, "median_h": float(np.median(x)),
                     "mean_min": 60.0 * float(x.mean()), "median_min": 60.0 * float(np.median(x)),
                     "best": best, "ranking": ranking})
    zeros = int((data["repair_h"] == 0).sum())
    notes = [f"{len(failures) - len(data)} record(s) without a repair time left out"]
    if zeros:
        notes.append(f"{zeros} repair time(s) of zero (fixed within the record's time resolution) are in the"
                     " mean and median, not in the distribution fits (a likelihood needs positive times)")
    return RepairTimes(table=pd.DataFrame(rows), comparisons=comparisons, by=by, n=len(data),
                       conf_level=conf_level, notes=tuple(notes))


@dataclass(frozen=True)
class Availability(ResultMixin):
    """Inherent availability MTBF/(MTBF+MTTR) per system and overall, and the observed uptime
    fraction 1 - down unit-hours / unit-hours at risk."""

    table: pd.DataFrame = field(repr=False)
    n: int
    conf_level: float
    method: str = ("inherent A = MTBF / (MTBF + MTTR) (MIL-HDBK-338B 5.6); interval by the delta method on"
                   " log(MTTR / MTBF) with Poisson counts and the repair times' variance; observed uptime"
                   " = 1 - recorded down unit-hours / unit-hours at risk")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """``system``, ``failures``, ``mtbf_unit_hours``, ``mttr_h``, ``inherent`` (+ bounds), ``observed``."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        t = self.table
        return (in_range("availability_in_unit_interval", t[["inherent", "observed"]].to_numpy(), 0.0, 1.0,
                         allow_nan=True),
                contains("availability_interval", t["inherent_low"], t["inherent"], t["inherent_high"]),
                finite("availability_finite", t["inherent"]))


def _availability_row(name: str, n: int, unit_hours: float, repairs: np.ndarray, z: float) -> dict[str, Any]:
    mtbf, mttr = unit_hours / n, float(repairs.mean())
    q = mttr / mtbf
    var = 1.0 / n + (repairs.var(ddof=1) / (repairs.size * mttr**2) if repairs.size > 1 and mttr > 0 else 0.0)
    q_lo, q_hi = q * np.exp(-z * np.sqrt(var)), q * np.exp(z * np.sqrt(var))
    down = float(repairs.sum()) * n / repairs.size  # records without a repair time: at the mean
    return {"system": name, "failures": n, "unit_hours": unit_hours, "mtbf_unit_hours": mtbf, "mttr_h": mttr,
            "inherent": 1.0 / (1.0 + q), "inherent_low": 1.0 / (1.0 + q_hi), "inherent_high": 1.0 / (1.0 + q_lo),
            "observed": max(0.0, 1.0 - down / unit_hours)}


def estimate_availability(failures: pd.DataFrame, *, conf_level: float = 0.95) -> Availability:
    """Inherent and observed availability per system and for all systems together."""
    exp = unit_exposure(failures)
    data = failures.assign(system=failures["system"].astype("object").fillna("(none)"))
    z = float(stats.norm.ppf(0.5 + conf_level / 2))
    rows = []
    for name, g in data.groupby("system", sort=True):
        rep = g["repair_h"].dropna().to_numpy(dtype=float)
        hours = 24.0 * float(exp.loc[name, "unit_days"])
        if rep.size and hours > 0:
            rows.append(_availability_row(str(name), len(g), hours, rep, z))
    rep = data["repair_h"].dropna().to_numpy(dtype=float)
    if not rows or not rep.size:
        raise InsufficientDataError("no system with failures, repair times and time at risk")
    rows.append(_availability_row("All", len(data), 24.0 * float(exp["unit_days"].sum()), rep, z))
    notes = ("a unit is down from a failure's start for its recorded repair time; overlapping outages of one"
             " unit count once each", "exposure as in the failure rates (units stated by the record)")
    return Availability(table=pd.DataFrame(rows), n=len(data), conf_level=conf_level, notes=notes)


__all__ = ["Availability", "FailureRates", "RepairTimes", "estimate_availability", "estimate_failure_rates",
           "estimate_repair_times", "unit_exposure"]
