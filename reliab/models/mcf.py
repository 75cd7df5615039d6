"""Nelson's nonparametric mean cumulative function (MCF) for recurrent events.

For repairable units (nodes, GPUs) observed over staggered windows ``[start_i, end_i]``,
the MCF at time ``t`` is the expected number of events per unit by ``t``:

``MCF(t) = Σ_{t_k ≤ t} d_k / r_k``,

with ``d_k`` events at the distinct event time ``t_k`` and ``r_k`` units under observation
then (``start_i ≤ t_k ≤ end_i``). Nelson (1988, "Graphical analysis of system repair
data", J. Quality Technology 20, 24–35; 1995, "Confidence limits for recurrence data —
applied to cost or number of product repairs", Technometrics 37, 147–157).

Variance: the robust (sandwich) estimator of Lawless & Nadeau (1995, "Some simple robust
methods for the analysis of recurrent events", Technometrics 37, 158–168), which is
Nelson's (1995) estimator; it makes no Poisson assumption:

``Var̂ MCF(t) = Σ_i [ Σ_{t_k ≤ t} δ_i(t_k) (d_ik − d_k/r_k) / r_k ]²``,

``δ_i(t_k) = 1`` if unit ``i`` is observed at ``t_k``, ``d_ik`` its events there.

Bounds are two-sided and log-transformed, ``MCF · exp(± z_{1−α/2} se / MCF)`` (Nelson 2003,
*Recurrent Events Data Analysis for Product Repairs*, ch. 5). Note: the ``reliability``
package's ``MCF_nonparametric`` uses the one-sided ``z_{1−α}`` (1.645 at 95 %) although its
docstring says two-sided (``MatthewReid854/reliability``, ``reliability/Repairable_systems.py``:
``Z = -ss.norm.ppf(1 - CI)``); ``reliab`` uses ``z_{1−α/2}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, equal, finite
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models._invariants import curve_checks

_CHUNK = 2048


def nelson_mcf(
    unit_idx: np.ndarray,
    event_time: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Numpy core of the Nelson MCF with the Lawless–Nadeau robust variance.

    Parameters
    ----------
    unit_idx : ndarray of int
        Unit index (0..m−1) of every event.
    event_time : ndarray of float
        Time of every event (inside its unit's window).
    start, end : ndarray of float, length m
        Observation window of every unit.

    Returns
    -------
    tuple of ndarray
        Distinct event times ``t_k``, events ``d_k``, units at risk ``r_k``, ``MCF(t_k)``
        and ``Var̂ MCF(t_k)``.
    """
    times, inv = np.unique(event_time, return_inverse=True)
    d = np.bincount(inv, minlength=times.size).astype(float)
    # units at risk at t_k: start <= t_k <= end
    s_sorted, e_sorted = np.sort(start), np.sort(end)
    r = (np.searchsorted(s_sorted, times, side="right")
         - np.searchsorted(e_sorted, times, side="left")).astype(float)
    mcf = np.cumsum(d / r)
    var = np.zeros(times.size)
    m = start.size
    for lo in range(0, m, _CHUNK):
        hi = min(lo + _CHUNK, m)
        at_risk = (start[lo:hi, None] <= times[None, :]) & (times[None, :] <= end[lo:hi, None])
        dik = np.zeros((hi - lo, times.size))
        sel = (unit_idx >= lo) & (unit_idx < hi)
        np.add.at(dik, (unit_idx[sel] - lo, inv[sel]), 1.0)
        contrib = np.where(at_risk, (dik - d / r) / r, 0.0)
        var += np.sum(np.cumsum(contrib, axis=1) ** 2, axis=0)
    return times, d, r, mcf, var


def _log_bounds(mcf: np.ndarray, se: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.exp(z * se / mcf)
        low, high = np.where(mcf > 0, mcf / w, 0.0), np.where(mcf > 0, mcf * w, 0.0)
    return low, high


@dataclass(frozen=True)
class MCFResult(ResultMixin):
    """Nelson MCF with pointwise two-sided log-transformed bounds."""

    table: pd.DataFrame = field(repr=False)
    n_units: int
    n_events: int
    horizon: float
    conf_level: float
    method: str
    origin: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Units under observation."""
        return self.n_units

    def summary(self) -> pd.DataFrame:
        """Columns ``time``, ``events``, ``at_risk``, ``mcf``, ``se``, ``low``, ``high``."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """The MCF finite, >= 0, non-decreasing and inside its bounds; events sum to n_events."""
        tb = self.table
        return (*curve_checks("mcf_", tb["time"], tb["mcf"], tb["low"], tb["high"]),
                equal("events_sum_to_n_events", tb["events"].sum(), self.n_events))

    def at(self, t: Any) -> pd.DataFrame:
        """MCF, se and bounds at time(s) ``t`` (right-continuous step function).

        Times before the first event give 0; times after ``horizon`` (the last time any
        unit is observed) give NaN, since the MCF is not estimable there.
        """
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        k = np.searchsorted(self.table["time"].to_numpy(), tt, side="right") - 1
        out = pd.DataFrame({"time": tt})
        for col in ("mcf", "se", "low", "high"):
            vals = np.concatenate([[0.0], self.table[col].to_numpy()])
            out[col] = np.where(tt <= self.horizon, vals[k + 1], np.nan)
        return out

    def plot(self, ax: Any = None, label: str | None = None) -> Any:
        """Step plot of the MCF with its confidence band; returns the Figure."""
        from matplotlib.figure import Figure

        if ax is None:
            fig = Figure(figsize=(6, 4))
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        tb = self.table
        x = np.concatenate([[0.0], tb["time"].to_numpy(), [self.horizon]])
        for col, style in (("mcf", {"lw": 1.5, "label": label or "MCF"}),
                           ("low", {"lw": 0.8, "ls": "--", "color": "grey"}),
                           ("high", {"lw": 0.8, "ls": "--", "color": "grey"})):
            y = np.concatenate([[0.0], tb[col].to_numpy(), [tb[col].iloc[-1] if len(tb) else 0]])
            ax.step(x, y, where="post", **style)
        ax.set(xlabel="time (h)", ylabel="mean cumulative events (per unit)",
               title=f"Nelson MCF ({self.conf_level:.0%} two-sided bounds)")
        ax.legend()
        return fig



def _to_hours(values: pd.Series, origin: pd.Timestamp | None) -> np.ndarray:
    if origin is None:
        return values.to_numpy(dtype=float)
    return ((pd.to_datetime(values, utc=True) - origin) / pd.Timedelta(hours=1)).to_numpy(float)


def _inputs(events: pd.DataFrame, observation: pd.DataFrame, unit: str, time: str, start: str,
            end: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str | None]:
    for frame, cols, name in ((events, (unit, time), "events"),
                              (observation, (unit, start, end), "observation")):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} is missing column(s) {missing}")
    if observation[unit].duplicated().any():
        raise ValueError("observation must have one window per unit "
                         f"({int(observation[unit].duplicated().sum())} duplicate unit id(s))")
    is_dt = pd.api.types.is_datetime64_any_dtype(observation[start])
    origin = pd.to_datetime(observation[start], utc=True).min() if is_dt else None
    s, e = _to_hours(observation[start], origin), _to_hours(observation[end], origin)
    if np.any(~np.isfinite(s) | ~np.isfinite(e)) or np.any(e < s):
        raise ValueError("every observation window needs finite start <= end")
    pos = pd.Index(observation[unit]).get_indexer(events[unit])
    if np.any(pos < 0):
        raise ValueError(f"{int((pos < 0).sum())} event(s) belong to units without an "
                         "observation window")
    t = _to_hours(events[time], origin)
    outside = (t < s[pos]) | (t > e[pos])
    if np.any(outside):
        raise ValueError(f"{int(outside.sum())} event(s) fall outside their unit's observation "
                         "window; trim them or widen the window")
    return pos.astype(int), t, s, e, (None if origin is None else origin.isoformat())


def estimate_mcf(
    events: pd.DataFrame,
    observation: pd.DataFrame,
    *,
    unit: str = "unit",
    time: str = "time",
    start: str = "start",
    end: str = "end",
    conf_level: float = 0.95,
) -> MCFResult:
    """Nelson's nonparametric MCF of recurrent events with staggered observation windows.

    Parameters
    ----------
    events : pandas.DataFrame
        One row per event: ``unit`` and ``time`` (float hours/age, or timestamps).
    observation : pandas.DataFrame
        One row per unit: ``unit``, ``start``, ``end`` of its observation window, in the same
        time scale as ``events`` (units without events count in the risk set).
    unit, time, start, end : str
        Column names.
    conf_level : float
        Two-sided confidence level of the pointwise bounds.

    Returns
    -------
    MCFResult
        ``summary()`` table at every distinct event time; ``at(t)``; ``plot()``.

    Raises
    ------
    InsufficientDataError
        No units, or no events.

    Notes
    -----
    Estimator, Lawless–Nadeau / Nelson (1995) robust variance and two-sided
    log-transformed bounds as in the module docstring. Timestamps are converted to hours
    since the earliest window start (``origin``). With a single unit the variance is 0 and
    the bounds collapse; a note says so.
    """
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if len(observation) == 0:
        raise InsufficientDataError("no units under observation")
    pos, t, s, e, origin = _inputs(events, observation, unit, time, start, end)
    if t.size == 0:
        raise InsufficientDataError(f"no events among {len(s)} unit(s): the MCF is 0 everywhere")
    times, d, r, mcf, var = nelson_mcf(pos, t, s, e)
    se = np.sqrt(var)
    z = stats.norm.ppf(0.5 + conf_level / 2)
    low, high = _log_bounds(mcf, se, z)
    notes: list[str] = []
    if len(s) == 1:
        notes.append("a single unit: the robust variance is 0 and the bounds are not informative")
    table = pd.DataFrame({"time": times, "events": d.astype(int), "at_risk": r.astype(int),
                          "mcf": mcf, "se": se, "low": low, "high": high})
    return MCFResult(
        table=table, n_units=len(s), n_events=int(t.size), horizon=float(e.max()),
        conf_level=conf_level, origin=origin, notes=tuple(notes),
        method=("Nelson MCF; Lawless-Nadeau (1995) robust variance; two-sided log-transformed "
                f"bounds, z = {z:.4f}"))


@dataclass(frozen=True)
class MCFComparison(ResultMixin):
    """Pointwise difference of two MCFs, ``first − second``, with a normal interval."""

    table: pd.DataFrame = field(repr=False)
    labels: tuple[str, str]
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    n: int = 0

    def summary(self) -> pd.DataFrame:
        """Columns ``time``, ``mcf_<a>``, ``mcf_<b>``, ``diff``, ``se``, ``low``, ``high``."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """The difference finite and inside its pointwise bounds."""
        tb = self.table
        return (finite("diff_finite", tb["diff"]),
                contains("diff_in_interval", tb["low"], tb["diff"], tb["high"]))

    def at(self, t: Any) -> pd.DataFrame:
        """Difference, se and bounds at time(s) ``t`` (NaN past the common horizon)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        k = np.searchsorted(self.table["time"].to_numpy(), tt, side="right") - 1
        out = pd.DataFrame({"time": tt})
        horizon = self.table.attrs.get("horizon", math.inf)
        for col in ("diff", "se", "low", "high"):
            vals = np.concatenate([[0.0], self.table[col].to_numpy()])
            out[col] = np.where(tt <= horizon, vals[k + 1], np.nan)
        return out

    def plot(self, ax: Any = None) -> Any:
        """Step plot of the difference with its pointwise band; returns the Figure."""
        from matplotlib.figure import Figure

        if ax is None:
            fig = Figure(figsize=(6, 4))
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        tb = self.table
        ax.step(tb["time"], tb["diff"], where="post", label=f"{self.labels[0]} − {self.labels[1]}")
        ax.fill_between(tb["time"], tb["low"], tb["high"], step="post", alpha=0.25)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set(xlabel="time (h)", ylabel="MCF difference (events per unit)")
        ax.legend()
        return fig



def compare_mcf(
    first: MCFResult,
    second: MCFResult,
    *,
    conf_level: float | None = None,
    labels: tuple[str, str] = ("first", "second"),
) -> MCFComparison:
    """Difference of two independent groups' MCFs with a pointwise confidence interval.

    Parameters
    ----------
    first, second : MCFResult
        Results of :func:`estimate_mcf` on two disjoint groups of units.
    conf_level : float, optional
        Two-sided level; defaults to ``first.conf_level``.
    labels : tuple of str
        Names of the groups, used in column names and the plot.

    Returns
    -------
    MCFComparison
        At every event time of either group up to the common horizon:
        ``diff = MCF_1 − MCF_2``, ``se = √(Var_1 + Var_2)`` and ``diff ± z_{1−α/2} se``.

    Notes
    -----
    Doganaksoy & Nelson (1998), "A method to compare two samples of recurrence data",
    Lifetime Data Analysis 4, 51–63. The groups must be independent (no unit in both). An
    interval that excludes 0 at ``t`` says the groups differ at ``t`` (pointwise, not a
    simultaneous band).
    """
    level = first.conf_level if conf_level is None else conf_level
    z = stats.norm.ppf(0.5 + level / 2)
    horizon = min(first.horizon, second.horizon)
    times = np.union1d(first.table["time"], second.table["time"])
    times = times[times <= horizon]
    a, b = first.at(times), second.at(times)
    diff = a["mcf"].to_numpy() - b["mcf"].to_numpy()
    se = np.sqrt(a["se"].to_numpy() ** 2 + b["se"].to_numpy() ** 2)
    table = pd.DataFrame({"time": times, f"mcf_{labels[0]}": a["mcf"], f"mcf_{labels[1]}": b["mcf"],
                          "diff": diff, "se": se, "low": diff - z * se, "high": diff + z * se})
    table.attrs["horizon"] = horizon
    notes = [] if first.horizon == second.horizon else [
        f"compared up to the common horizon {horizon:g}"]
    return MCFComparison(table=table, labels=labels, conf_level=level, notes=tuple(notes),
                         n=first.n_units + second.n_units,
                         method="difference of Nelson MCFs; se from independent robust "
                                "variances; normal pointwise interval (Doganaksoy & Nelson 1998)")


__all__ = ["estimate_mcf", "MCFResult", "compare_mcf", "MCFComparison", "nelson_mcf"]
