"""Tests of reliab.models.trend; references in tests/reference/trend_and_mcf.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reliab.errors import InsufficientDataError
from reliab.models import trend_test
from reliab.models.trend import _inversion_pmf, reversals

NIST = [5, 40, 43, 175, 389, 712, 747, 795, 1299, 1478]
METHODS = ("laplace", "mil-hdbk-189", "reverse-arrangement")


def test_mahonian_numbers():
    """Reference: OEIS A008302 — inversion counts for r = 4 and r = 5."""
    assert np.allclose(_inversion_pmf(4) * 24, [1, 3, 5, 6, 5, 3, 1])
    assert np.allclose(_inversion_pmf(5) * 120, [1, 4, 9, 15, 20, 22, 20, 15, 9, 4, 1])
    pmf = _inversion_pmf(13)
    k = np.arange(pmf.size)
    assert np.sum(k * pmf) == pytest.approx(13 * 12 / 4)
    assert np.sum((k - 39) ** 2 * pmf) == pytest.approx((2 * 13 + 5) * 12 * 13 / 72)


def test_reversal_count_by_hand():
    """Reference: NIST §8.2.3.4 definition — count I_j < I_k, j < k (hand-counted)."""
    assert reversals([1, 3, 6, 10]) == 6  # gaps 1,2,3,4: all increasing
    assert reversals([4, 7, 9, 10]) == 0  # gaps 4,3,2,1
    assert reversals([2, 3, 6]) == 2  # gaps 2,1,3


def test_laplace_and_mil_closed_forms():
    """Reference: Laplace (Cox & Lewis 1966) and MIL-HDBK-189 formulas by hand for the NIST data."""
    t = np.array(NIST, float)
    r = trend_test(NIST, end=1500)
    u = (t.mean() - 750) / (1500 * math.sqrt(1 / 120))
    assert r.statistic == pytest.approx(u) and r.n == 10
    f = trend_test(NIST)  # failure-terminated: drop the last time
    u2 = (t[:-1].mean() - 739) / (1478 * math.sqrt(1 / 108))
    assert f.statistic == pytest.approx(u2) and f.n == 9
    m = trend_test(NIST, end=1500, method="mil-hdbk-189")
    chi = 2 * np.sum(np.log(1500 / t))
    assert m.statistic == pytest.approx(chi)
    assert m.pvalue == pytest.approx(2 * stats.chi2.sf(chi, 20))
    assert m.trend == "improving"
    mf = trend_test(NIST, method="mil-hdbk-189")
    assert mf.distribution == "chi-square with 18 df"


def test_reverse_arrangement_normal_branch():
    """Regression: r > 60 uses the continuity-corrected normal approximation."""
    rng = np.random.default_rng(5)
    t = np.cumsum(rng.exponential(size=80))
    r = trend_test(t, method="reverse-arrangement")
    mean, sd = 80 * 79 / 4, math.sqrt((165) * 79 * 80 / 72)
    z = (abs(r.statistic - mean) - 0.5) / sd
    assert r.pvalue == pytest.approx(2 * stats.norm.sf(z))
    assert "normal" in r.distribution


def test_too_little_data():
    """Regression: no failures or too few for a failure-terminated test raise InsufficientDataError."""
    for m in METHODS:
        with pytest.raises(InsufficientDataError):
            trend_test([], end=10.0, method=m)
    with pytest.raises(InsufficientDataError):
        trend_test([5.0], method="laplace")
    with pytest.raises(InsufficientDataError):
        trend_test([5.0], method="mil-hdbk-189")
    with pytest.raises(InsufficientDataError):
        trend_test([5.0], end=9.0, method="reverse-arrangement")
    one = trend_test([5.0], end=10.0)
    assert one.n == 1 and 0 <= one.pvalue <= 1
    with pytest.raises(ValueError):
        trend_test(NIST, end=100.0)
    with pytest.raises(ValueError):
        trend_test(NIST, method="cox")


def _power_law(rng, beta, n):
    """n failure times of a power-law NHPP (λ = 1), failure-terminated."""
    return np.cumsum(rng.exponential(size=n)) ** (1 / beta)


@pytest.mark.parametrize("method", METHODS)
def test_size_under_hpp(method):
    """Reference (simulation, seeded): under an HPP, p-values ~ U(0,1): size at 0.05 within 0.025–0.075."""
    rng = np.random.default_rng(101)
    p = np.array([trend_test(rng.uniform(0, 100, 15), end=100.0, method=method).pvalue
                  for _ in range(1000)])
    assert 0.025 <= np.mean(p < 0.05) <= 0.075
    assert 0.4 <= np.mean(p < 0.5) <= 0.6


@pytest.mark.parametrize("method", METHODS)
def test_power_picks_direction(method):
    """Reference (simulation, seeded): β = 0.5 → 'improving', β = 2 → 'worsening' in most samples."""
    rng = np.random.default_rng(202)
    for beta, expected in ((0.5, "improving"), (2.0, "worsening")):
        trends = [trend_test(_power_law(rng, beta, 30), method=method).trend for _ in range(200)]
        # the model-free reverse-arrangement test is the least powerful of the three
        assert trends.count(expected) / 200 >= (0.4 if method == "reverse-arrangement" else 0.6)
        assert trends.count({"improving": "worsening", "worsening": "improving"}[expected]) == 0
