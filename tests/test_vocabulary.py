"""Llama 3 Table 5 as shipped: published counts and the paper's internal consistency.

Reference values: Llama 3 Herd of Models (arXiv 2407.21783), Table 5; derived numbers are
computed from it (see tests/reference/llama3_table5.md).
"""

from __future__ import annotations

import pandas as pd

from reliab.taxonomy import vocabulary as v


def test_table5_counts_sum_to_419() -> None:
    """Reference: the 18 counts sum to the 419 unexpected interruptions of §3.3.4."""
    t = v.table5()
    assert len(t) == 18
    assert t["count"].sum() == v.LLAMA3_UNEXPECTED == 419
    assert v.LLAMA3_UNEXPECTED + v.LLAMA3_PLANNED == v.LLAMA3_TOTAL == 466


def test_shares_from_counts_match_printed_except_faulty_gpu() -> None:
    """Reference: every printed % equals count/419 to 0.1 except Faulty GPU (30.1 vs 35.3)."""
    t = v.table5().set_index("category")
    diff = (t["pct_from_count"].round(1) - t["pct_printed"]).abs()
    assert list(diff[diff > 0.05].index) == ["Faulty GPU"]
    assert round(t.loc["Faulty GPU", "pct_from_count"], 1) == 35.3
    assert round(t["pct_printed"].sum(), 1) == 94.9


def test_component_totals() -> None:
    """Reference: GPU 268 (64.0 %), Dependency 56, Network 35, Maintenance 32, Host 21, Unknown 7."""
    by = v.table5().groupby("component")["count"].sum()
    expected = {"GPU": 268, "Dependency": 56, "Network": 35, "Unplanned Maintenance": 32, "Host": 21, "Unknown": 7}
    assert by.to_dict() == expected
    assert round(100 * by["GPU"] / 419, 1) == 64.0
    # "roughly half attributed to faulty GPUs and HBM3": (148 + 72) / 419
    counts = pd.Series(v.TABLE5_COUNTS)
    assert round(100 * (counts["Faulty GPU"] + counts["GPU HBM3 Memory"]) / 419, 1) == 52.5
