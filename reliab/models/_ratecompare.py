"""Two Poisson rates compared: their ratio, its exact interval and a two-sided p-value.

:func:`compare_rates` (exported by :mod:`reliab.models.rates`, where the rates themselves are
estimated) uses the conditional binomial test of ``statsmodels.stats.rates`` and the
Clopper–Pearson interval that inverts it (Cox 1953; Lehmann & Romano, *Testing Statistical
Hypotheses*, §4.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.rates import confint_poisson_2indep, test_poisson_2indep

from reliab._checks import Check, contains, equal, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError

__all__ = ["RateComparison", "compare_rates"]


def _positive(value: Any, name: str, *, allow_none: bool = False) -> float | None:
    """``value`` as a finite positive float, else ``ValueError`` naming ``name``."""
    if value is None and allow_none:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class RateComparison(ResultMixin):
    """Ratio of two Poisson rates, its interval and a two-sided p-value."""

    count1: int
    exposure1: float
    count2: int
    exposure2: float
    rate1: float
    rate2: float
    ratio: float
    low: float
    high: float
    pvalue: float
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row: counts, exposures, rates, ``ratio``, ``low``, ``high``, ``pvalue``."""
        keys = ("count1", "exposure1", "rate1", "count2", "exposure2", "rate2", "ratio", "low",
                "high", "pvalue")
        return pd.DataFrame([{k: getattr(self, k) for k in keys}])

    def invariants(self) -> tuple[Check, ...]:
        """Rates >= 0 with rate x exposure = count, p in [0, 1], the interval contains the ratio."""
        return (in_range("rates_nonnegative", [self.rate1, self.rate2, self.ratio], 0),
                equal("rate_x_exposure_is_count", [self.rate1 * self.exposure1,
                      self.rate2 * self.exposure2], [self.count1, self.count2], rtol=1e-6),
                in_range("pvalue_in_unit_interval", self.pvalue, 0, 1),
                contains("ratio_in_interval", self.low, self.ratio, self.high))

    @property
    def n(self) -> int:
        """Events in both groups (the conditional test rests on their sum)."""
        return self.count1 + self.count2

    def plot(self, ax: Any = None) -> Any:
        """The rate ratio with its interval on a log axis; the dashed line is no change."""
        fig, ax = new_figure(ax, (6, 1.8))
        lo = self.low if self.low > 0 else min(self.ratio, 1.0) / 10 if self.ratio > 0 else 0.01
        hi = self.high if math.isfinite(self.high) else max(self.ratio, 1.0) * 10 \
            if math.isfinite(self.ratio) else 100.0
        ax.hlines(0, lo, hi, color="#4c78a8", lw=3)
        if 0 < self.ratio < math.inf:
            ax.plot([self.ratio], [0], "o", color="black")
        ax.axvline(1.0, color="grey", ls="--", lw=1)
        ax.set(xscale="log", yticks=[], xlabel="rate ratio (first / second)",
               title=f"Rate ratio, {self.conf_level:.0%} interval; p = {self.pvalue:.2g}")
        return fig



def _exact_cond_ratio_ci(c1: int, e1: float, c2: int, e2: float,
                         conf_level: float) -> tuple[float, float]:
    """Clopper–Pearson interval for the conditional binomial, mapped to the rate ratio.

    Given ``c1 + c2 = n``, ``c1 ~ Binomial(n, p)`` with ``p = ρ e1 / (ρ e1 + e2)``, so
    ``ρ = p e2 / ((1 − p) e1)`` (Cox 1953; Lehmann & Romano, *Testing Statistical
    Hypotheses*, §4.5).
    """
    n = c1 + c2
    if n == 0:
        return 0.0, math.inf
    p_lo, p_hi = proportion_confint(c1, n, alpha=1.0 - conf_level, method="beta")
    lo = 0.0 if p_lo <= 0 else p_lo * e2 / ((1.0 - p_lo) * e1)
    hi = math.inf if p_hi >= 1 else p_hi * e2 / ((1.0 - p_hi) * e1)
    return float(lo), float(hi)


def compare_rates(
    count1: int,
    exposure1: float,
    count2: int,
    exposure2: float,
    *,
    conf_level: float = 0.95,
    method: str = "exact-cond",
) -> RateComparison:
    """Compare two Poisson rates: ratio ``(count1/exposure1) / (count2/exposure2)``.

    Parameters
    ----------
    count1, exposure1, count2, exposure2
        Event counts and exposures (any common unit) of the two groups.
    conf_level : float
        Confidence level of the two-sided interval on the ratio.
    method : str
        ``"exact-cond"`` (default): conditional binomial test
        (``statsmodels.stats.rates.test_poisson_2indep``) and the matching Clopper–Pearson
        interval mapped to the ratio. Any other method name accepted by both
        ``test_poisson_2indep`` and ``confint_poisson_2indep`` (e.g. ``"score"``,
        ``"wald-log"``) is passed to statsmodels.

    Returns
    -------
    RateComparison
        ``ratio``, ``low``, ``high``, ``pvalue`` (two-sided, H0 ratio = 1).

    Notes
    -----
    statsmodels 0.14/0.15 has no "exact-cond" confidence interval, hence the Clopper–
    Pearson construction (Cox 1953), which inverts the same conditional test.
    """
    for name, c in (("count1", count1), ("count2", count2)):
        if not isinstance(c, (int, np.integer, float, np.floating)) or not math.isfinite(c) \
                or c < 0 or int(c) != c:
            raise ValueError(f"{name} must be a non-negative integer, got {c}")
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    e1, e2 = _positive(exposure1, "exposure1"), _positive(exposure2, "exposure2")
    c1, c2 = int(count1), int(count2)
    if c1 == c2 == 0:
        raise InsufficientDataError("no events in either group: the rate ratio is undefined")
    notes: list[str] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        test = test_poisson_2indep(c1, e1, c2, e2, method=method, compare="ratio")
    if method == "exact-cond":
        lo, hi = _exact_cond_ratio_ci(c1, e1, c2, e2, conf_level)
    else:
        lo, hi = (float(v) for v in confint_poisson_2indep(
            c1, e1, c2, e2, method=method, compare="ratio", alpha=1.0 - conf_level))
    if c2 == 0:
        notes.append("count2 = 0: the ratio is infinite and only its lower bound is informative")
        ratio = math.inf
    else:
        ratio = (c1 / e1) / (c2 / e2)
    return RateComparison(
        count1=c1, exposure1=e1, count2=c2, exposure2=e2, rate1=c1 / e1, rate2=c2 / e2,
        ratio=ratio, low=lo, high=hi, pvalue=float(test.pvalue), conf_level=conf_level,
        method=f"rate ratio; {method} test (statsmodels test_poisson_2indep) and interval",
        notes=tuple(notes))
