"""Competing risks: Aalen–Johansen cumulative incidence and cause-specific Nelson–Aalen hazards.

For causes ``k`` with ``d_kj`` failures among ``n_j`` at risk at time ``t_j`` and overall
Kaplan–Meier ``S``, the cumulative incidence is ``F_k(t) = sum_{t_j <= t} S(t_{j-1}) d_kj / n_j``
(Kalbfleisch & Prentice 2002, *The Statistical Analysis of Failure Time Data*, 2nd ed., §8.2).
Its variance is the delta-method (Greenwood-type) formula in Collett (2015), *Modelling
Survival Data in Medical Research*, 3rd ed., §12.2.3 (also used by lifelines and SAS
LIFETEST), with intervals on the log(-log) scale so they stay inside (0, 1).  Delayed entry
uses the counting-process risk set ``entry < t <= duration``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, equal, in_range
from reliab._deprecation import renamed
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._invariants import curve_checks
from reliab.models._survival_input import as_lifetimes, check_conf_level
from reliab.models.nonparametric import km_curve, na_curve, risk_table


def _cif_variance(f: NDArray[np.float64], lag_s: NDArray[np.float64], n: NDArray[np.float64],
                  d_all: NDArray[np.float64], d_k: NDArray[np.float64]) -> NDArray[np.float64]:
    """Collett's variance of ``F_k`` at every time, with prefix sums instead of a double loop.

    ``Var F(t) = sum (F(t) - F_j)^2 d_j / (n_j (n_j - d_j)) + sum S_{j-1}^2 d_kj (n_j - d_kj) /
    n_j^3 - 2 sum (F(t) - F_j) S_{j-1} d_kj / n_j^2`` over ``t_j <= t``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(n > d_all, d_all / (n * (n - d_all)), 0.0)
        b = np.where(n > 0, lag_s**2 * d_k * (n - d_k) / n**3, 0.0)
        c = np.where(n > 0, lag_s * d_k / n**2, 0.0)
    a0, a1, a2 = np.cumsum(a), np.cumsum(a * f), np.cumsum(a * f * f)
    first = f * f * a0 - 2 * f * a1 + a2
    third = f * np.cumsum(c) - np.cumsum(c * f)
    return np.maximum(first + np.cumsum(b) - 2 * third, 0.0)


def _loglog_bounds(f: NDArray[np.float64], var: NDArray[np.float64],
                   z: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    with np.errstate(divide="ignore", invalid="ignore"):
        lf = np.log(f)
        se = np.sqrt(var) / (f * np.abs(lf))
        low = np.exp(-np.exp(np.log(-lf) + z * se))
        high = np.exp(-np.exp(np.log(-lf) - z * se))
    zero = f <= 0
    return np.where(zero, 0.0, low), np.where(zero, 0.0, high)


@dataclass(frozen=True)
class CumulativeIncidenceResult(ResultMixin):
    """Cumulative incidence and cause-specific cumulative hazard per cause."""

    table: pd.DataFrame = field(repr=False)
    causes: tuple[Hashable, ...]
    n: int
    n_events: int
    exposure: float
    conf_level: float
    method: str = ("Aalen-Johansen cumulative incidence, Collett delta-method variance, "
                   "log(-log) intervals; cause-specific Nelson-Aalen hazards")
    notes: tuple[str, ...] = ()

    def _rows(self, cause: Hashable) -> pd.DataFrame:
        if cause not in self.causes:
            raise KeyError(f"unknown cause {cause!r}; causes are {list(self.causes)}")
        return self.table[self.table["cause"] == cause]

    def at(self, t: ArrayLike, cause: Hashable | None = None) -> pd.DataFrame:
        """Probability of failing from each cause (before any other) by time(s) ``t``.

        Returns one row per cause and time: cause, time, cif, low, high, cumhaz (0 before a
        cause's first event).  ``cause`` restricts the rows to one cause (``KeyError`` if
        unknown).
        """
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        frames = []
        for c in (self.causes if cause is None else (cause,)):
            rows = self._rows(c)
            idx = np.searchsorted(rows["time"].to_numpy(), tt, side="right") - 1
            out = {"cause": [c] * tt.size, "time": tt}
            for col in ("cif", "low", "high", "cumhaz"):
                vals = np.r_[0.0, rows[col].to_numpy()]
                out[col] = vals[idx + 1]
            frames.append(pd.DataFrame(out))
        return pd.concat(frames, ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """Per cause: events, and incidence with interval and cumulative hazard at the end."""
        out = []
        for cause in self.causes:
            rows = self._rows(cause)
            last = rows.iloc[-1]
            out.append({"cause": cause, "events": int(rows["events"].sum()),
                        "time": float(last["time"]), "cif": float(last["cif"]),
                        "low": float(last["low"]), "high": float(last["high"]),
                        "cumhaz": float(last["cumhaz"])})
        return pd.DataFrame(out)

    def invariants(self) -> tuple[Check, ...]:
        """Each cause's incidence a non-decreasing probability inside its interval; the
        incidences sum to at most 1 at every time; events sum to n_events."""
        own = [c for cause in self.causes for c in curve_checks(
            f"{cause}.cif_", *(self._rows(cause)[k] for k in ("time", "cif", "low", "high")),
            hi=1.0)]
        total = self.table.groupby("time")["cif"].sum().to_numpy()
        return (*own, in_range("cif_sum_at_most_1", total, 0, 1),
                equal("events_sum_to_n_events", self.table["events"].sum(), self.n_events))

    def plot(self, ax: Any = None) -> Figure:
        """Stacked cumulative incidence curves (they sum to 1 - overall KM)."""
        fig, ax = new_figure(ax, (6.5, 4))
        times = np.r_[0.0, self._rows(self.causes[0])["time"].to_numpy()]
        curves = [np.r_[0.0, self._rows(c)["cif"].to_numpy()] for c in self.causes]
        base = np.zeros_like(times)
        for i, (cause, cif) in enumerate(zip(self.causes, curves, strict=True)):
            ax.fill_between(times, base, base + cif, step="post", color=f"C{i}", alpha=0.7,
                            label=str(cause))
            base = base + cif
        ax.set_xlabel("time (h)")
        ax.set_ylabel("cumulative incidence (probability, 0-1)")
        ax.set_title("Cumulative incidence by cause (stacked)")
        ax.legend(loc="upper left")
        return fig


def _codes(event_type: ArrayLike, censored: Hashable | None
           ) -> tuple[NDArray[np.intp], tuple[Hashable, ...]]:
    """Integer codes (0 = censored, k >= 1 = k-th cause in sorted order) and the cause labels."""
    s = pd.Series(np.asarray(event_type, dtype=object))
    cens = s.isna() if censored is None else (s == censored) | s.isna()
    labels = pd.unique(s[~cens])
    try:
        labels = np.array(sorted(labels))
    except TypeError:
        labels = np.array(labels, dtype=object)
    lookup = {lab: i + 1 for i, lab in enumerate(labels)}
    codes = np.zeros(len(s), dtype=np.intp)
    codes[~cens.to_numpy()] = s[~cens].map(lookup).to_numpy(dtype=np.intp)
    return codes, tuple(lab.item() if hasattr(lab, "item") else lab for lab in labels)


def estimate_cumulative_incidence(
    durations: ArrayLike,
    event_type: ArrayLike,
    *,
    entry: ArrayLike | None = None,
    conf_level: float = 0.95,
    censored: Hashable | None = 0,
) -> CumulativeIncidenceResult:
    """Aalen–Johansen cumulative incidence per cause, with cause-specific Nelson–Aalen hazards.

    Parameters
    ----------
    durations
        Time of the first failure (of any cause) or of censoring, per unit.
    event_type
        Cause label per unit (e.g. ``"GPU HBM3 Memory"``); the ``censored`` label (or a missing
        value) marks a censored unit.
    entry
        Delayed-entry times (left truncation).
    conf_level
        Level of the pointwise intervals.
    censored
        Label meaning "censored" (default ``0``); ``None``: only missing values are censored.

    Returns
    -------
    CumulativeIncidenceResult
        ``table`` (cause, time, at_risk, events, cif, variance, low, high, cumhaz) with one row
        per cause and distinct duration; ``at(time, cause)`` answers "probability of failing
        from this cause before anything else by this time".
    """
    level = check_conf_level(conf_level)
    codes, causes = _codes(event_type, censored)
    data = as_lifetimes(durations, codes > 0, entry)
    if not causes:
        raise InsufficientDataError(f"0 events among {data.n} units; every unit is censored")
    rt = risk_table(data.durations, codes, data.entry if data.has_entry else None,
                    len(causes) + 1)
    z = float(stats.norm.ppf(0.5 + level / 2))
    n, d_all = rt.at_risk, rt.counts[:, 1:].sum(axis=1)
    lag_s = np.r_[1.0, km_curve(rt, z)[0][:-1]]
    frames = []
    for k, cause in enumerate(causes, start=1):
        d_k = rt.counts[:, k]
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.cumsum(np.where(n > 0, lag_s * d_k / n, 0.0))
        var = _cif_variance(f, lag_s, n, d_all, d_k)
        low, high = _loglog_bounds(f, var, z)
        frames.append(pd.DataFrame({"cause": [cause] * rt.times.size, "time": rt.times,
                                    "at_risk": n, "events": d_k, "cif": f, "variance": var,
                                    "low": low, "high": high, "cumhaz": na_curve(n, d_k)[0]}))
    return CumulativeIncidenceResult(
        table=pd.concat(frames, ignore_index=True), causes=causes, n=data.n,
        n_events=int(np.count_nonzero(codes)), exposure=float(np.sum(data.durations - data.entry)),
        conf_level=level)


cumulative_incidence = renamed(estimate_cumulative_incidence, "cumulative_incidence")

__all__ = ["CumulativeIncidenceResult", "cumulative_incidence", "estimate_cumulative_incidence"]
