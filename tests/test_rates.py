"""Tests of reliab.models.rates against Llama 3 Table 5 (tests/reference/llama3_table5.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.rates import confint_poisson

from reliab.errors import InsufficientDataError
from reliab.models import compare_rates, estimate_rates
from reliab.prepare import fleet_exposure
from reliab.taxonomy.vocabulary import LLAMA3_PLANNED, table5

GPU_DAYS = 16_384 * 54
COLUMNS = ["category", "count", "share_pct", "gpu_days",
           "rate_per_1k_gpu_days", "rate_per_1k_gpu_days_low", "rate_per_1k_gpu_days_high",
           "rate_per_1k_node_days", "rate_per_1k_node_days_low", "rate_per_1k_node_days_high",
           "mtbf_gpu_hours", "mtbf_gpu_hours_low", "mtbf_gpu_hours_high",
           "mtti_job_hours", "mtti_job_hours_low", "mtti_job_hours_high",
           "afr_pct", "afr_pct_low", "afr_pct_high"]


@pytest.fixture(scope="module")
def interruptions() -> pd.DataFrame:
    t = table5()
    rows = t.loc[t.index.repeat(t["count"]), ["category", "component"]].assign(planned=False)
    planned = pd.DataFrame({"category": ["Planned"] * LLAMA3_PLANNED, "component": "Planned",
                            "planned": True})
    return pd.concat([rows, planned], ignore_index=True)


@pytest.fixture(scope="module")
def table(interruptions) -> pd.DataFrame:
    res = estimate_rates(interruptions, gpu_days=GPU_DAYS, job_hours=54 * 24)
    return res.summary().set_index("category")


def test_columns_exact(table):
    """Regression: the summary columns are exactly the documented ones, in order."""
    assert ["category", *table.columns] == COLUMNS
    assert table.index[-1] == "Total" and table.loc["Total", "count"] == 419


def test_llama3_rates(table):
    """Reference: rates per 1000 GPU-days / node-days from Llama 3 (arXiv 2407.21783) Table 5."""
    assert table.loc["Faulty GPU", "rate_per_1k_gpu_days"] == pytest.approx(0.1673, abs=5e-5)
    assert table.loc["Total", "rate_per_1k_gpu_days"] == pytest.approx(0.4736, abs=5e-5)
    assert table.loc["Total", "rate_per_1k_node_days"] == pytest.approx(3.789, abs=5e-4)
    assert table.loc["Faulty GPU", "rate_per_1k_node_days"] == pytest.approx(1.338, abs=5e-4)


def test_llama3_afr(table):
    """Reference: AFR from Llama 3 Table 5 — Faulty GPU 6.11 %; total 17.30 % with 365.25-day year."""
    assert round(table.loc["Faulty GPU", "afr_pct"], 2) == 6.11
    assert table.loc["Total", "afr_pct"] == pytest.approx(17.286, abs=5e-4)  # Backblaze, 365 d
    assert round(table.loc["Total", "afr_pct"] * 365.25 / 365, 2) == 17.30


def test_llama3_mtbf_and_mtti(table):
    """Reference: Llama 3 §3.3.4 — MTBF 50,677 GPU-h (5.25–6.38 GPU-years), MTTI 3.09 h (2.81–3.41)."""
    tot = table.loc["Total"]
    assert tot["mtbf_gpu_hours"] == pytest.approx(50_677, abs=0.5)
    assert round(tot["mtbf_gpu_hours_low"] / 8766, 2) == 5.25
    assert round(tot["mtbf_gpu_hours_high"] / 8766, 2) == 6.38
    got = tuple(round(tot[c], 2) for c in ("mtti_job_hours", "mtti_job_hours_low", "mtti_job_hours_high"))
    assert got == (3.09, 2.81, 3.41)


def test_llama3_shares(interruptions, table):
    """Reference: Llama 3 Table 5 — Faulty GPU 35.3 % by count, GPU component 64.0 %."""
    assert round(table.loc["Faulty GPU", "share_pct"], 1) == 35.3
    comp = estimate_rates(interruptions, by="component", gpu_days=GPU_DAYS).summary()
    assert round(comp.set_index("component").loc["GPU", "share_pct"], 1) == 64.0
    assert comp["count"].iloc[:-1].sum() == 419


def test_intervals_are_exact_poisson(table):
    """Reference: intervals equal statsmodels confint_poisson(method='exact-c') scaled."""
    lo, hi = confint_poisson(148, GPU_DAYS / 1000, method="exact-c", alpha=0.05)
    assert table.loc["Faulty GPU", "rate_per_1k_gpu_days_low"] == pytest.approx(lo)
    assert table.loc["Faulty GPU", "rate_per_1k_gpu_days_high"] == pytest.approx(hi)


def test_exposure_table_and_notes(interruptions):
    """Regression: an EXPOSURE table gives the same rates; notes state exposure and exclusions."""
    fleet = fleet_exposure(16_384, start="2024-01-01", end="2024-02-24")
    res = estimate_rates(interruptions, exposure=fleet, by=["component", "category"])
    tot = res.summary().iloc[-1]
    assert tot["rate_per_1k_node_days"] == pytest.approx(419 / 110.592)
    assert any("884,736.0 GPU-days" in n for n in res.notes)
    assert any("47 planned" in n for n in res.notes)
    assert np.isnan(tot["mtti_job_hours"])
    assert res.to_dict()["type"] == "RatesResult"


def test_no_interruptions_and_bad_exposure():
    """Regression: zero counts give rate 0, an upper bound and infinite MTBF; no exposure raises."""
    empty = pd.DataFrame({"category": pd.Series(dtype=str), "component": pd.Series(dtype=str),
                          "planned": pd.Series(dtype=bool)})
    res = estimate_rates(empty, gpu_days=1000.0)
    row = res.summary().iloc[-1]
    assert row["count"] == 0 and row["rate_per_1k_gpu_days"] == 0
    assert row["rate_per_1k_gpu_days_high"] > 0 and np.isinf(row["mtbf_gpu_hours"])
    with pytest.raises(ValueError, match="gpu_days"):
        estimate_rates(empty)


def test_compare_rates():
    """Reference: exact-cond p-value from statsmodels; CI is Clopper–Pearson mapped to the ratio."""
    c = compare_rates(148, 1.0, 72, 1.0)
    assert c.ratio == pytest.approx(148 / 72)
    assert c.low < c.ratio < c.high and c.pvalue < 1e-5
    same = compare_rates(20, 100.0, 20, 100.0)
    assert same.pvalue == pytest.approx(1.0) and same.low < 1 < same.high
    score = compare_rates(10, 100.0, 20, 100.0, method="score")
    assert score.low < 0.5 < score.high
    with pytest.raises(InsufficientDataError):
        compare_rates(0, 1.0, 0, 1.0)


def test_compare_rates_coverage_simulation():
    """Reference (simulation, seeded): the exact-cond ratio interval covers the true ratio >= 95 %."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(400):
        c1, c2 = rng.poisson(15.0), rng.poisson(10.0)
        if c1 + c2 == 0:
            continue
        r = compare_rates(c1, 2.0, c2, 1.0)
        hits += r.low <= 0.75 <= r.high
    assert 0.94 <= hits / 400 <= 0.995


def test_per_group_exposure_by_quarter() -> None:
    """Regression: each quarter's rate uses its own GPU-days; a quiet quarter gets an upper bound only."""
    import pandas as pd

    from reliab.models import estimate_rates

    inter = pd.DataFrame({"quarter": ["Q1"] * 10 + ["Q2"] * 30, "planned": False,
                          "category": "Faulty GPU", "component": "GPU"})
    exp = pd.Series({"Q1": 1000.0, "Q2": 2000.0, "Q3": 500.0})
    t = estimate_rates(inter, by="quarter", gpu_days=exp).summary().set_index("quarter")
    assert t.loc["Q1", "rate_per_1k_gpu_days"] == 10.0 and t.loc["Q2", "rate_per_1k_gpu_days"] == 15.0
    assert t.loc["Q3", "count"] == 0 and t.loc["Q3", "rate_per_1k_gpu_days_low"] == 0.0
    assert t.loc["Q3", "rate_per_1k_gpu_days_high"] > 0
    assert abs(t.loc["Total", "rate_per_1k_gpu_days"] - 1000.0 * 40 / 3500.0) < 1e-12
    from scipy.stats import chi2

    low, high = chi2.ppf(0.025, 60) / 2, chi2.ppf(0.975, 62) / 2  # Garwood interval of 30 events
    assert abs(t.loc["Q2", "rate_per_1k_gpu_days_low"] - low / 2) < 1e-9
    assert abs(t.loc["Q2", "rate_per_1k_gpu_days_high"] - high / 2) < 1e-9
