"""Kaplan–Meier and Nelson–Aalen estimators with right censoring and delayed entry.

Own vectorized implementation: one sort of the durations (and one of the entry times), event
and removal counts per distinct time with ``np.add.reduceat``, the risk set from cumulative
counts and ``searchsorted`` over the sorted entries.  Conventions follow lifelines so the two
agree: a unit entering at time ``e`` is at risk at every time ``tau`` with ``e < tau <=
duration`` (the counting-process convention of Andersen et al. 1993 and of R's ``survival``).

References
----------
Kaplan, E. L. and Meier, P. (1958). Nonparametric estimation from incomplete observations.
JASA 53, 457–481.
Kalbfleisch, J. D. and Prentice, R. L. (2002). *The Statistical Analysis of Failure Time Data*,
2nd ed., §1.4 (product-limit estimator, Greenwood variance, log(-log) intervals).
Klein, J. P. and Moeschberger, M. L. (2003). *Survival Analysis*, 2nd ed., §4.2–4.3
(Nelson–Aalen estimator and its variance, left truncation in §4.6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, equal
from reliab._deprecation import warn_renamed
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._invariants import curve_checks
from reliab.models._km_ci import check_conf_type, km_bounds, step_quantile
from reliab.models._survival_input import Lifetimes, as_lifetimes, check_conf_level
from reliab.models.km_groups import KaplanMeierGroups, kaplan_meier_groups


@dataclass(frozen=True)
class RiskTable:
    """Counts per distinct duration: ``times``, ``at_risk`` and ``counts[:, code]``."""

    times: NDArray[np.float64]
    at_risk: NDArray[np.float64]
    counts: NDArray[np.float64]


def risk_table(
    durations: NDArray[np.float64],
    codes: NDArray[np.intp],
    entry: NDArray[np.float64] | None,
    n_codes: int,
) -> RiskTable:
    """Tabulate removals by code (0 = censored, k >= 1 = event of type k) at distinct durations.

    The number at risk at a time ``tau`` is ``#(entry < tau) - #(duration < tau)``.
    """
    order = np.argsort(durations)
    ts = durations[order]
    first = np.empty(ts.size, dtype=bool)
    first[:1] = True
    np.not_equal(ts[1:], ts[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    times = ts[starts]
    group = np.cumsum(first) - 1
    counts = np.bincount(group * n_codes + codes[order], minlength=times.size * n_codes)
    counts = counts.reshape(times.size, n_codes).astype(float)
    if entry is None:
        entered = np.full(times.size, float(ts.size))
    else:
        entered = np.searchsorted(np.sort(entry), times, side="left").astype(float)
    at_risk = entered - starts.astype(float)
    return RiskTable(times=times, at_risk=at_risk, counts=counts)


def _lifetable(data: Lifetimes) -> RiskTable:
    if data.n == 0:
        raise InsufficientDataError("no units given; need at least one duration")
    codes = data.observed.astype(np.intp)
    return risk_table(data.durations, codes, data.entry if data.has_entry else None, 2)


def _step_lookup(times: NDArray[np.float64], values: NDArray[np.float64], t: ArrayLike,
                 before: float) -> NDArray[np.float64] | float:
    """Right-continuous step function: ``values`` at the last ``times <= t``, ``before`` earlier."""
    tt = np.asarray(t, dtype=float)
    idx = np.searchsorted(times, tt, side="right") - 1
    out = np.where(idx >= 0, values[np.clip(idx, 0, None)], before)
    return float(out) if out.ndim == 0 else out


def step_frame(table: pd.DataFrame, t: ArrayLike, columns: dict[str, float]) -> pd.DataFrame:
    """The step-function columns of ``table`` at times ``t`` (``columns``: name -> value before
    the first time), as a frame with a ``time`` column: the shared ``at(t)`` of the estimators."""
    tt = np.atleast_1d(np.asarray(t, dtype=float))
    times = table["time"].to_numpy()
    out = {"time": tt}
    for name, before in columns.items():
        out[name] = np.atleast_1d(_step_lookup(times, table[name].to_numpy(), tt, before))
    return pd.DataFrame(out)


def _step_figure(times: NDArray[np.float64], est: NDArray[np.float64], low: NDArray[np.float64],
                 high: NDArray[np.float64], start: float, ylabel: str, title: str,
                 ax: Any = None) -> Figure:
    fig, ax = new_figure(ax)
    x = np.r_[0.0, times]
    ax.step(x, np.r_[start, est], where="post", color="C0", label="estimate")
    ax.fill_between(x, np.r_[start, low], np.r_[start, high], step="post", alpha=0.25,
                    color="C0", label="pointwise interval")
    ax.set_xlabel("time (h)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="best")
    return fig


@dataclass(frozen=True)
class KaplanMeierResult(ResultMixin):
    """Kaplan–Meier survival curve with Greenwood standard errors and pointwise intervals."""

    table: pd.DataFrame = field(repr=False)
    n: int
    n_failures: int
    exposure: float
    conf_level: float
    method: str = "Kaplan-Meier; Greenwood variance, log intervals"
    notes: tuple[str, ...] = ()
    conf_type: str = "log"

    def summary(self) -> pd.DataFrame:
        """The estimate table: time, at_risk, events, censored, survival, std_err (of S),
        std_err_log (of log S), low, high."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Survival a non-increasing probability inside its interval; events sum to n_failures."""
        tb = self.table
        return (*curve_checks("survival_", tb["time"], tb["survival"], tb["low"], tb["high"],
                              hi=1.0, falling=True),
                equal("events_sum_to_failures", tb["events"].sum(), self.n_failures))

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """Survival and its pointwise interval at time(s) ``t``: columns time, survival, low, high
        (before the first time: survival 1, bounds 1, or NaN on the log(-log) scale)."""
        edge = math.nan if self.conf_type == "log-log" else 1.0
        return step_frame(self.table, t, {"survival": 1.0, "low": edge, "high": edge})

    def survival_at(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["survival"]``."""
        warn_renamed("KaplanMeierResult.survival_at(t)", 'KaplanMeierResult.at(t)["survival"]')
        return _step_lookup(self.table["time"].to_numpy(), self.table["survival"].to_numpy(), t, 1.0)

    def median(self) -> float:
        """Median survival time: ``quantile(0.5)`` (inf if the curve never reaches 0.5)."""
        return self.quantile(0.5)

    def quantile(self, p: float) -> float:
        """Time by which a fraction ``p`` of units has failed: where ``1 - S`` crosses ``p``.

        Parameters
        ----------
        p
            Probability strictly between 0 and 1.

        Returns
        -------
        float
            The first time with ``S(t) <= 1 - p``; when the curve sits exactly at ``1 - p``
            (within ``sqrt(machine epsilon)``, since a product of ratios is not stored
            exactly) the midpoint of that flat and the next drop, or of the flat and the last
            time when the curve stays flat to the end; inf if ``S`` never reaches ``1 - p``.

        Notes
        -----
        The midpoint at a flat is the convention of R's ``survival::quantile.survfit``
        (Therneau, *A Package for Survival Analysis in R*) and of Brookmeyer, R. and
        Crowley, J. (1982), A confidence interval for the median survival time, Biometrics
        38, 29–41, which makes the median of an uncensored sample its ordinary median.
        """
        _check_p(p)
        tb = self.table
        return step_quantile(tb["time"].to_numpy(float), 1.0 - tb["survival"].to_numpy(float),
                             float(p), float(tb["time"].iloc[-1]))

    def quantile_interval(self, p: float) -> tuple[float, float]:
        """Brookmeyer–Crowley limits of the ``p``-quantile: the ``p``-quantiles of the lower and
        of the upper pointwise band (Brookmeyer & Crowley 1982; R's ``quantile.survfit``).

        inf where a band never reaches ``1 - p`` (R reports NA there).
        """
        _check_p(p)
        tb = self.table
        t, last = tb["time"].to_numpy(float), float(tb["time"].iloc[-1])
        return (step_quantile(t, 1.0 - tb["low"].to_numpy(float), float(p), last),
                step_quantile(t, 1.0 - tb["high"].to_numpy(float), float(p), last))

    def quantiles(self, probs: ArrayLike = (0.25, 0.5, 0.75)) -> pd.DataFrame:
        """Quantiles with their Brookmeyer–Crowley limits: columns p, time, low, high."""
        rows = [(float(p), self.quantile(float(p)), *self.quantile_interval(float(p)))
                for p in np.atleast_1d(np.asarray(probs, dtype=float))]
        return pd.DataFrame(rows, columns=["p", "time", "low", "high"])

    def plot(self, ax: Any = None) -> Figure:
        """Step plot of the survival curve with its pointwise interval band."""
        tb = self.table
        return _step_figure(tb["time"].to_numpy(), tb["survival"].to_numpy(), tb["low"].to_numpy(),
                            tb["high"].to_numpy(), 1.0, "survival probability (0-1)", "Kaplan-Meier", ax)


@dataclass(frozen=True)
class NelsonAalenResult(ResultMixin):
    """Nelson–Aalen cumulative hazard with log-transformed pointwise intervals."""

    table: pd.DataFrame = field(repr=False)
    n: int
    n_failures: int
    exposure: float
    conf_level: float
    method: str = "Nelson-Aalen; variance sum (n-d)d/n^3, log-transformed intervals"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The estimate table: time, at_risk, events, censored, cumhaz, variance, low, high."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Cumulative hazard finite, >= 0, non-decreasing, inside its interval; events sum to
        n_failures."""
        tb = self.table
        return (*curve_checks("cumhaz_", tb["time"], tb["cumhaz"], tb["low"], tb["high"]),
                equal("events_sum_to_failures", tb["events"].sum(), self.n_failures))

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """Cumulative hazard with its interval, and the Breslow–Fleming–Harrington survival
        ``exp(-H)``, at time(s) ``t``: columns time, cumhaz, low, high, survival."""
        out = step_frame(self.table, t, {"cumhaz": 0.0, "low": 0.0, "high": 0.0})
        out["survival"] = np.exp(-out["cumhaz"].to_numpy())
        return out

    def cumhaz_at(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["cumhaz"]``."""
        warn_renamed("NelsonAalenResult.cumhaz_at(t)", 'NelsonAalenResult.at(t)["cumhaz"]')
        return _step_lookup(self.table["time"].to_numpy(), self.table["cumhaz"].to_numpy(), t, 0.0)

    def survival_at(self, t: ArrayLike) -> NDArray[np.float64] | float:
        """Deprecated: use ``at(t)["survival"]``."""
        warn_renamed("NelsonAalenResult.survival_at(t)", 'NelsonAalenResult.at(t)["survival"]')
        h = _step_lookup(self.table["time"].to_numpy(), self.table["cumhaz"].to_numpy(), t, 0.0)
        return np.exp(-h) if isinstance(h, np.ndarray) else math.exp(-h)

    def median(self) -> float:
        """Median of ``exp(-H)``: the smallest time with cumulative hazard >= ln 2."""
        h = self.table["cumhaz"].to_numpy()
        hit = np.flatnonzero(h >= np.log(2.0))
        return float(self.table["time"].iloc[hit[0]]) if hit.size else float("inf")

    def plot(self, ax: Any = None) -> Figure:
        """Step plot of the cumulative hazard with its pointwise interval band."""
        tb = self.table
        return _step_figure(tb["time"].to_numpy(), tb["cumhaz"].to_numpy(), tb["low"].to_numpy(),
                            tb["high"].to_numpy(), 0.0, "cumulative hazard", "Nelson-Aalen", ax)


def _check_p(p: float) -> None:
    if not 0.0 < p < 1.0:
        raise ValueError(f"quantile probability must be between 0 and 1, got {p!r}")


def _base_table(rt: RiskTable) -> dict[str, NDArray[np.float64]]:
    return {"time": rt.times, "at_risk": rt.at_risk, "events": rt.counts[:, 1],
            "censored": rt.counts[:, 0]}


def km_curve(rt: RiskTable, z: float,
             conf_type: str = "log") -> tuple[NDArray[np.float64], ...]:
    """Kaplan–Meier survival, Greenwood variance sum of ``log S`` (inf once ``S = 0``) and the
    pointwise bounds of ``conf_type`` from a risk table."""
    n, d = rt.at_risk, rt.counts[:, 1:].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        surv = np.exp(np.cumsum(np.log1p(-np.where(n > 0, d / np.where(n > 0, n, 1), 0.0))))
        g = np.where(n > d, d / (n * (n - d)), np.where(d > 0, np.inf, 0.0))
    gsum = np.cumsum(g)
    low, high = km_bounds(surv, np.sqrt(gsum), z, conf_type)
    return surv, gsum, low, high


@overload
def estimate_kaplan_meier(durations: ArrayLike, observed: ArrayLike | None, *,
                          entry: ArrayLike | None = ..., conf_level: float = ...,
                          conf_type: str = ..., groups: None = ...) -> KaplanMeierResult: ...


@overload
def estimate_kaplan_meier(durations: ArrayLike, observed: ArrayLike | None, *,
                          entry: ArrayLike | None = ..., conf_level: float = ...,
                          conf_type: str = ..., groups: ArrayLike) -> KaplanMeierGroups: ...


def estimate_kaplan_meier(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    entry: ArrayLike | None = None,
    conf_level: float = 0.95,
    conf_type: str = "log",
    groups: ArrayLike | None = None,
) -> KaplanMeierResult | KaplanMeierGroups:
    """Kaplan–Meier product-limit estimate of the survival function.

    Parameters
    ----------
    durations
        Time of failure or censoring per unit.
    observed
        1/True for a failure, 0/False for right censoring (``None``: all failed).
    entry
        Delayed-entry (left-truncation) times; a unit is at risk from its entry on.
    conf_level
        Level of the pointwise intervals.
    conf_type
        ``"log"`` (default, as R's ``survfit``), ``"log-log"`` (the "exponential Greenwood"
        of lifelines) or ``"plain"``; see :mod:`reliab.models._km_ci`.
    groups
        Optional group label per unit: one curve per group, returned as
        :class:`~reliab.models.km_groups.KaplanMeierGroups` (R's ``survfit(... ~ group)``).

    Returns
    -------
    KaplanMeierResult
        ``table`` with one row per distinct duration: time, at_risk, events, censored,
        survival, std_err (Greenwood standard error of S, R's ``summary.survfit``),
        std_err_log (of log S, R's ``survfit()$std.err``; inf once S = 0), low, high (NaN
        where no interval exists).  Greenwood's variance: Kalbfleisch & Prentice 2002, §1.4.

    Notes
    -----
    With delayed entry the estimate is conditional on survival to the earliest entry; if the
    risk set empties before a later entry the curve drops to 0 for good (Klein & Moeschberger
    2003, §4.6).
    """
    level = check_conf_level(conf_level)
    check_conf_type(conf_type)
    if groups is not None:
        return kaplan_meier_groups(durations, observed, groups, entry=entry, conf_level=level,
                                   conf_type=conf_type, estimate_kaplan_meier=estimate_kaplan_meier)
    data = as_lifetimes(durations, observed, entry)
    rt = _lifetable(data)
    z = float(stats.norm.ppf(0.5 + level / 2))
    surv, gsum, low, high = km_curve(rt, z, conf_type)
    se_log = np.sqrt(gsum)
    with np.errstate(invalid="ignore"):
        se = np.where(surv > 0, surv * se_log, np.nan)
    tb = pd.DataFrame({**_base_table(rt), "survival": surv, "std_err": se, "std_err_log": se_log,
                       "low": low, "high": high})
    return KaplanMeierResult(table=tb, n=data.n, n_failures=data.n_failures,
                             exposure=float(np.sum(data.durations - data.entry)), conf_level=level,
                             method=f"Kaplan-Meier; Greenwood variance, {conf_type} intervals",
                             conf_type=conf_type)


def na_curve(n: NDArray[np.float64], d: NDArray[np.float64],
             variance: str = "binomial") -> tuple[NDArray[np.float64], ...]:
    """Nelson–Aalen increments ``d/n`` and variance increments, cumulated: ``(n-d) d / n^3``
    (``"binomial"``) or ``d / n^2`` (``"poisson"``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inc = np.where(n > 0, d / n, 0.0)
        var = np.where(n > 0, (n - d) * d / n**3 if variance == "binomial" else d / n**2, 0.0)
    return np.cumsum(inc), np.cumsum(var)


def estimate_nelson_aalen(
    durations: ArrayLike,
    observed: ArrayLike | None,
    *,
    entry: ArrayLike | None = None,
    conf_level: float = 0.95,
    variance: str = "binomial",
) -> NelsonAalenResult:
    """Nelson–Aalen estimate of the cumulative hazard.

    ``H(t) = sum_{t_i <= t} d_i / n_i`` with variance ``sum (n_i - d_i) d_i / n_i^3``
    (``variance="binomial"``: Klein & Moeschberger 2003, eq. 4.2.4, the form lifelines uses
    without tie smoothing) or ``sum d_i / n_i^2`` (``"poisson"``: Aalen 1978, R's
    ``survfit()$std.chaz``), and intervals ``H exp(+-z sd / H)`` (log transform).  Other
    parameters as in :func:`estimate_kaplan_meier`.
    """
    if variance not in ("binomial", "poisson"):
        raise ValueError(f"variance must be 'binomial' or 'poisson'; got {variance!r}")
    level = check_conf_level(conf_level)
    data = as_lifetimes(durations, observed, entry)
    rt = _lifetable(data)
    z = float(stats.norm.ppf(0.5 + level / 2))
    h, var = na_curve(rt.at_risk, rt.counts[:, 1], variance)
    factor = np.exp(z * np.sqrt(var) / np.where(h > 0, h, 1.0))
    tb = pd.DataFrame({**_base_table(rt), "cumhaz": h, "variance": var, "low": h / factor,
                       "high": h * factor})
    how = "(n-d)d/n^3" if variance == "binomial" else "d/n^2"
    return NelsonAalenResult(table=tb, n=data.n, n_failures=data.n_failures,
                             exposure=float(np.sum(data.durations - data.entry)), conf_level=level,
                             method=f"Nelson-Aalen; variance sum {how}, log-transformed intervals")
