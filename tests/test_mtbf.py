"""Tests of reliab.models.mtbf: exponential MTBF with chi-square bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reliab.errors import InsufficientDataError
from reliab.models import estimate_mtbf
from reliab.models.mtbf import chi2_mtbf_bounds

GPU_HOURS = 16_384 * 54 * 24
JULIAN_YEAR_H = 8766.0


def test_llama3_gpu_level_mtbf():
    """Reference: Llama 3 (arXiv 2407.21783 §3.3.4) — 50,677 GPU-h, 95 % interval 5.25–6.38 GPU-years."""
    r = estimate_mtbf(419, GPU_HOURS)
    assert r.mtbf == pytest.approx(50_677, abs=0.5)
    assert round(r.low / JULIAN_YEAR_H, 2) == 5.25
    assert round(r.high / JULIAN_YEAR_H, 2) == 6.38


def test_llama3_job_level_mtti():
    """Reference: Llama 3 (arXiv 2407.21783 §3.3.4) — job-level 3.09 h, 95 % interval 2.81–3.41 h."""
    r = estimate_mtbf(419, 54 * 24)
    assert (round(r.mtbf, 2), round(r.low, 2), round(r.high, 2)) == (3.09, 2.81, 3.41)


def test_closed_form_df():
    """Reference: Epstein & Sobel bounds, df 2r+2 / 2r (time) and 2r / 2r (failure), §6.1."""
    t, r = 1000.0, 5
    tt = estimate_mtbf(r, t)
    assert tt.low == pytest.approx(2 * t / stats.chi2.ppf(0.975, 12))
    assert tt.high == pytest.approx(2 * t / stats.chi2.ppf(0.025, 10))
    ft = estimate_mtbf(r, t, termination="failure")
    assert ft.low == pytest.approx(2 * t / stats.chi2.ppf(0.975, 10))
    one = estimate_mtbf(r, t, sided="lower", conf_level=0.9)
    assert one.low == pytest.approx(2 * t / stats.chi2.ppf(0.9, 12)) and math.isinf(one.high)
    up = estimate_mtbf(r, t, sided="upper", conf_level=0.9)
    assert up.high == pytest.approx(2 * t / stats.chi2.ppf(0.1, 10)) and up.low == 0


def test_zero_failures():
    """Regression: r = 0 time-terminated gives inf with a lower bound and a note; type II raises."""
    r = estimate_mtbf(0, 1000.0)
    assert math.isinf(r.mtbf) and math.isinf(r.high)
    assert r.low == pytest.approx(2000 / stats.chi2.ppf(0.975, 2))
    assert r.notes and "lower bound" in r.notes[0]
    assert r.to_dict()["mtbf"] is None
    with pytest.raises(InsufficientDataError):
        estimate_mtbf(0, 1000.0, termination="failure")
    with pytest.raises(InsufficientDataError):
        estimate_mtbf(3, 0.0)
    with pytest.raises(ValueError):
        estimate_mtbf(-1, 10.0)


def test_summary_and_rate_bounds():
    """Regression: summary rows and rate bounds are reciprocals of the MTBF bounds."""
    r = estimate_mtbf(10, 500.0)
    s = r.summary()
    assert list(s.index) == ["mtbf", "rate"]
    assert s.loc["rate", "low"] == pytest.approx(1 / r.high)
    assert s.loc["rate", "high"] == pytest.approx(1 / r.low)


def test_coverage_time_terminated_simulation():
    """Reference (simulation, seeded): 95 % time-terminated bounds cover the true MTBF in 93–97 %.

    With about 30 expected failures. The exact (Garwood) bounds are conservative for small
    counts: ~0.97 at 10 expected failures and ~0.99 at 3 (benchmarks/bench_coverage_recurrent.py).
    """
    rng = np.random.default_rng(20240601)
    theta, t = 100.0, 3000.0  # expected 30 failures
    r = rng.poisson(t / theta, size=4000)
    low, high = chi2_mtbf_bounds(r, t)
    cover = np.mean((low <= theta) & (theta <= high))
    assert 0.93 <= cover <= 0.97
    small = rng.poisson(3.0, size=4000)
    small = small[small > 0]
    lo3, hi3 = chi2_mtbf_bounds(small, 300.0)
    assert np.mean((lo3 <= theta) & (theta <= hi3)) >= 0.95  # conservative, never below nominal
