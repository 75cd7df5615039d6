"""Exponential MTBF: point estimate and exact chi-square confidence bounds.

With total time on test ``T`` (unit-hours summed over units) and ``r`` failures, the MLE
is ``θ̂ = T / r`` and ``λ̂ = r / T``. Bounds (χ²_{p,ν} is the p-quantile; α = 1 − conf):

* time-terminated (type I):  θ_L = 2T / χ²_{1−α/2, 2r+2},  θ_U = 2T / χ²_{α/2, 2r}
* failure-terminated (type II): θ_L = 2T / χ²_{1−α/2, 2r},  θ_U = 2T / χ²_{α/2, 2r}

one-sided bounds use α instead of α/2. Sources: Epstein & Sobel (1953), "Life testing",
JASA 48, 486–502; MIL-HDBK-781A §5.9; as implemented in
``MatthewReid854/reliability`` ``reliability/Reliability_testing.py``
``reliability_test_planner``. The time-terminated bounds are the exact Poisson (Garwood
1936) interval for ``r`` events in exposure ``T``, so they agree with
``statsmodels.stats.rates.confint_poisson(method="exact-c")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, equal, in_range, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError

Termination = Literal["time", "failure"]
Sided = Literal["two", "lower", "upper"]


@dataclass(frozen=True)
class MTBFResult(ResultMixin):
    """Exponential MTBF with chi-square bounds (all times in the unit of ``hours``)."""

    mtbf: float
    low: float
    high: float
    rate: float
    failures: int
    hours: float
    conf_level: float
    termination: str
    sided: str
    method: str
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Failures observed (the count the interval rests on)."""
        return self.failures

    @property
    def rate_low(self) -> float:
        """Lower bound of the failure rate (``1 / high``)."""
        return 0.0 if math.isinf(self.high) else 1.0 / self.high

    @property
    def rate_high(self) -> float:
        """Upper bound of the failure rate (``1 / low``)."""
        return math.inf if self.low == 0 else 1.0 / self.low

    def summary(self) -> pd.DataFrame:
        """One row per quantity (``mtbf``, ``rate``) with ``estimate``, ``low``, ``high``."""
        return pd.DataFrame(
            {"estimate": [self.mtbf, self.rate], "low": [self.low, self.rate_low],
             "high": [self.high, self.rate_high]},
            index=pd.Index(["mtbf", "rate"], name="quantity"),
        )

    def invariants(self) -> tuple[Check, ...]:
        """Rate >= 0 with rate x hours = failures; MTBF > 0 (infinite only with no failure)
        inside its interval."""
        return (in_range("rate_nonnegative", [self.rate, self.rate_low], 0),
                equal("rate_x_hours_is_failures", self.rate * self.hours, self.failures,
                      rtol=1e-6),
                positive("mtbf_positive", self.mtbf, allow_inf=self.failures == 0),
                contains("mtbf_in_interval", self.low, self.mtbf, self.high))

    def plot(self, ax: Any = None) -> Any:
        """The MTBF as a point with its interval (an open end drawn to the axis edge)."""
        fig, ax = new_figure(ax, (6, 1.8))
        hi = self.high if math.isfinite(self.high) else max(self.low, self.hours) * 10
        ax.hlines(0, self.low, hi, color="#4c78a8", lw=3)
        if math.isfinite(self.mtbf):
            ax.plot([self.mtbf], [0], "o", color="black")
        ax.set(xscale="log", yticks=[], xlabel="MTBF (unit of hours)",
               title=f"MTBF, {self.conf_level:.0%} interval ({self.failures} failures)")
        return fig



def chi2_mtbf_bounds(
    failures: np.ndarray | int,
    hours: np.ndarray | float,
    *,
    conf_level: float = 0.95,
    termination: Termination = "time",
    sided: Sided = "two",
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized chi-square bounds ``(low, high)`` on the MTBF (Epstein & Sobel 1953).

    Parameters
    ----------
    failures, hours : array-like
        Failure counts and total unit-hours, broadcast together.
    conf_level, termination, sided
        As in :func:`estimate_mtbf`.

    Returns
    -------
    tuple of numpy.ndarray
        Lower and upper bounds; a bound not requested by ``sided`` is ``0`` / ``inf``.
        An upper bound with zero failures is ``inf`` (the data cannot bound the MTBF above).
    """
    r = np.asarray(failures, dtype=float)
    t = np.asarray(hours, dtype=float)
    alpha = 1.0 - conf_level
    tail = alpha / 2.0 if sided == "two" else alpha
    extra = 2.0 if termination == "time" else 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        low = 2.0 * t / stats.chi2.ppf(1.0 - tail, 2.0 * r + extra)
        high = np.where(r > 0, 2.0 * t / stats.chi2.ppf(tail, np.maximum(2.0 * r, 1e-300)), np.inf)
    if sided == "upper":
        low = np.zeros_like(low)
    if sided == "lower":
        high = np.full_like(high, np.inf)
    return low, high


def _check(failures: int, hours: float, conf_level: float, termination: str, sided: str) -> None:
    if termination not in ("time", "failure"):
        raise ValueError(f"termination must be 'time' or 'failure', got {termination!r}")
    if sided not in ("two", "lower", "upper"):
        raise ValueError(f"sided must be 'two', 'lower' or 'upper', got {sided!r}")
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if failures < 0 or int(failures) != failures:
        raise ValueError(f"failures must be a non-negative integer, got {failures}")
    if not np.isfinite(hours) or hours < 0:
        raise ValueError(f"hours must be finite and >= 0, got {hours}")
    if hours == 0:
        raise InsufficientDataError("no exposure: hours == 0, so no MTBF can be estimated")
    if failures == 0 and termination == "failure":
        raise InsufficientDataError(
            "a failure-terminated test needs at least one failure (r = 0 given); "
            "use termination='time' for a lower bound with zero failures")


def estimate_mtbf(
    failures: int,
    hours: float,
    *,
    conf_level: float = 0.95,
    termination: Termination = "time",
    sided: Sided = "two",
) -> MTBFResult:
    """Exponential MTBF ``hours / failures`` with exact chi-square bounds.

    Parameters
    ----------
    failures : int
        Number of failures ``r``.
    hours : float
        Total time at risk ``T`` summed over units (unit-hours; any time unit works and the
        result is in the same unit).
    conf_level : float
        Confidence level, default 0.95.
    termination : {"time", "failure"}
        Time-terminated (type I, the usual case for field data: the window ended, not the
        r-th failure) or failure-terminated (type II).
    sided : {"two", "lower", "upper"}
        Two-sided interval, or a one-sided lower / upper bound at ``conf_level``.

    Returns
    -------
    MTBFResult
        ``mtbf``, ``low``, ``high``, ``rate``, ``failures``, ``hours``, ``method``, ``notes``.

    Raises
    ------
    InsufficientDataError
        Zero exposure, or zero failures in a failure-terminated test.

    Notes
    -----
    Bounds from Epstein & Sobel (1953) / MIL-HDBK-781A (see the module docstring;
    ``reliability/Reliability_testing.py`` of ``MatthewReid854/reliability``). With ``r = 0``
    and time termination the MTBF estimate is ``inf`` and only the lower bound
    ``2T / χ²_{conf', 2}`` is informative; a note says so. The exponential model assumes a
    constant hazard — test that with :func:`reliab.models.trend_test` before quoting an MTBF.
    """
    _check(failures, hours, conf_level, termination, sided)
    r, t = int(failures), float(hours)
    low, high = chi2_mtbf_bounds(r, t, conf_level=conf_level, termination=termination, sided=sided)
    df_low = f"2r+2 = {2 * r + 2}" if termination == "time" else f"2r = {2 * r}"
    method = (f"exponential MLE T/r; {termination}-terminated chi-square bounds "
              f"({'two-sided' if sided == 'two' else sided + ' one-sided'}; lower bound df {df_low}, "
              f"upper bound df 2r) [Epstein & Sobel 1953]")
    notes: list[str] = []
    if r == 0:
        notes.append(f"no failures in {t:g} unit-hours: the MTBF estimate is infinite and only a "
                     f"lower bound ({float(low):.4g}) is informative")
    return MTBFResult(
        mtbf=math.inf if r == 0 else t / r, low=float(low), high=float(high), rate=r / t,
        failures=r, hours=t, conf_level=conf_level, termination=termination, sided=sided,
        method=method, notes=tuple(notes),
    )


__all__ = ["estimate_mtbf", "MTBFResult", "chi2_mtbf_bounds"]
