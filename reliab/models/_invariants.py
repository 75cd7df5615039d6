"""Invariants shared by several result classes (their ``invariants()`` call these).

Each function returns :class:`~reliab._checks.Check` values built with the helpers of
:mod:`reliab._checks`; nothing here raises on a violated invariant.  The rules are the
definitions of the quantities: a rate is a count over an exposure (Cox & Lewis, *The
Statistical Analysis of Series of Events*, 1966), a survival function is a non-increasing
probability (Kalbfleisch & Prentice, *The Statistical Analysis of Failure Time Data*, 2nd ed.,
2002, §1.2), cumulative incidences of competing causes sum to at most one (ibid., §8.2), and a
mean cumulative function never falls (Nelson, *Recurrent Events Data Analysis*, 2003, §2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from reliab._checks import (
    Check,
    contains,
    equal,
    in_range,
    monotone,
    positive,
    table_intervals,
)

TOTAL = "Total"

#: (estimate, low, high) columns of a rate table that are rates or times (>= 0)
RATE_TRIPLES = tuple((m, f"{m}_low", f"{m}_high") for m in (
    "rate_per_1k_gpu_days", "rate_per_1k_node_days", "afr_pct", "mtbf_gpu_hours"))


def rate_table_checks(table: pd.DataFrame, by: Sequence[str], n: int) -> tuple[Check, ...]:
    """Groups sum to the Total row and to ``n``; shares in [0, 100] summing to 100; rate x
    exposure = count; rates >= 0 and MTBF > 0 (infinite with no event), each in its interval."""
    total = table[list(by)].astype(str).eq(TOTAL).all(axis=1).to_numpy()
    c = table["count"].to_numpy(dtype=float)
    parts = c[~total].sum()
    share = table["share_pct"].to_numpy(dtype=float)[~total]
    checks = [in_range("counts_nonnegative", c, 0),
              equal("groups_sum_to_n", parts, n, what="sum over groups, n"),
              in_range("shares_in_0_100", share, 0, 100, allow_nan=parts == 0),
              positive("mtbf_positive", table["mtbf_gpu_hours"], allow_inf=True),
              equal("rate_x_exposure_is_count", table["rate_per_1k_gpu_days"].to_numpy(dtype=float)
                    * table["gpu_days"].to_numpy(dtype=float) / 1000.0, c, rtol=1e-6)]
    if total.any():
        checks.append(equal("total_is_n", c[total], [n], what="Total row, n"))
    if parts > 0:
        checks.append(equal("shares_sum_to_100", share.sum(), 100.0, rtol=1e-6))
    mtti = [("mtti_job_hours", "mtti_job_hours_low", "mtti_job_hours_high")]
    return (*checks, *table_intervals("", table, RATE_TRIPLES, lo=0.0),
            *table_intervals("", table, mtti, lo=0.0, allow_nan=True))


def curve_checks(prefix: str, time: Any, estimate: Any, low: Any, high: Any, *,
                 lo: float = 0.0, hi: float = np.inf, falling: bool = False) -> tuple[Check, ...]:
    """A step function of time with pointwise bounds: times ordered, the estimate monotone
    (non-increasing when ``falling``, else non-decreasing), in ``[lo, hi]`` and finite, each
    interval containing it (NaN bounds where no interval exists are allowed)."""
    est = np.asarray(estimate, dtype=float)
    return (monotone(f"{prefix}times_ordered", time, increasing=True),
            in_range(f"{prefix}estimate_in_range", est, lo, hi),
            in_range(f"{prefix}bounds_in_range", np.r_[np.asarray(low, dtype=float),
                     np.asarray(high, dtype=float)], lo, hi, allow_nan=True),
            monotone(f"{prefix}estimate_monotone", est, increasing=not falling),
            contains(f"{prefix}interval_contains_estimate", low, est, high))


__all__ = ["RATE_TRIPLES", "curve_checks", "rate_table_checks"]
