"""Tests of reliab.models.growth (Crow–AMSAA); references in tests/reference/crow_amsaa.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reliab.errors import InsufficientDataError
from reliab.models import fit_crow_amsaa

NIST = [5, 40, 43, 175, 389, 712, 747, 795, 1299, 1478]
MIL = [2.6, 16.5, 16.5, 17.0, 21.4, 29.1, 33.3, 56.5, 63.1, 70.6, 73.0, 77.7, 93.9, 95.5,
       98.1, 101.1, 132.0, 142.2, 147.7, 149.0, 167.2, 190.7, 193.0, 198.7, 251.9, 282.5, 286.1]


def test_nist_case_study():
    """Reference: NIST e-Handbook 8.4.2.3 — b̄ 0.483506, â 0.2913003, MTBF 310.234, 80 % 157.71–548.56."""
    r = fit_crow_amsaa(NIST, end=1500, conf_level=0.80)
    assert r.beta_unbiased == pytest.approx(0.483506, abs=1e-6)
    assert 10 / 1500 ** r.beta_unbiased == pytest.approx(0.2913003, abs=1e-7)
    assert 1500 / (10 * r.beta_unbiased) == pytest.approx(310.234, abs=1e-3)
    _, lo, hi = r.mtbf_instantaneous
    assert lo == pytest.approx(157.7138, abs=1e-4)
    assert hi == pytest.approx(548.5566, abs=1e-4)


def test_mil_hdbk_189_appendix_c():
    """Reference: MIL-HDBK-189 (1981) App. C — β̂ 0.71634, λ̂ 0.45384, MTBF at 300 h 15.511."""
    r = fit_crow_amsaa(MIL, end=300.0, conf_level=0.90)
    assert r.beta == pytest.approx(0.7163392624, rel=1e-8)
    assert r.lam == pytest.approx(0.4538418614, rel=1e-8)
    assert r.mtbf_instantaneous[0] == pytest.approx(15.5109620, rel=1e-7)
    assert 1 / r.mtbf_instantaneous[0] == pytest.approx(0.0644705336, rel=1e-8)


def test_interval_closed_forms():
    """Reference: β pivot χ²(2n) / χ²(2(n−1)); cumulative MTBF exact chi-square (module docstring)."""
    n = len(NIST)
    tt = fit_crow_amsaa(NIST, end=1500)
    b = tt.beta
    assert tt.params.loc["beta", "low"] == pytest.approx(b * stats.chi2.ppf(0.025, 2 * n) / (2 * n))
    assert tt.mtbf_cumulative[1] == pytest.approx(3000 / stats.chi2.ppf(0.975, 2 * n + 2))
    ft = fit_crow_amsaa(NIST)
    assert ft.termination == "failure" and ft.end == 1478
    assert ft.beta == pytest.approx(n / np.sum(np.log(1478 / np.array(NIST[:-1]))))
    assert ft.params.loc["beta", "high"] == pytest.approx(
        ft.beta * stats.chi2.ppf(0.975, 2 * n - 2) / (2 * n))
    assert ft.beta_unbiased == pytest.approx((n - 2) / n * ft.beta)
    s = ft.summary()
    assert list(s.index) == ["beta", "lambda", "beta_unbiased", "mtbf_instantaneous", "mtbf_cumulative"]
    assert (s["low"].dropna() < s["estimate"][s["low"].notna()]).all()


def test_failure_terminated_mtbf_pivot_by_simulation():
    """Reference (simulation): the W·V product quantiles used for the type-II MTBF bounds."""
    from reliab.models.growth import _product_chi2_ppf

    rng = np.random.default_rng(3)
    w = rng.chisquare(18, 400_000) * rng.chisquare(20, 400_000)
    for q in (0.025, 0.975):
        assert _product_chi2_ppf(q, 18, 20) == pytest.approx(np.quantile(w, q), rel=0.01)


def test_too_little_data():
    """Regression: 0 or 1 failure raises; n = 2 failure-terminated gives NaN unbiased β + note."""
    for times in ([], [5.0]):
        with pytest.raises(InsufficientDataError):
            fit_crow_amsaa(times, end=10.0)
    r = fit_crow_amsaa([1.0, 4.0])
    assert math.isnan(r.beta_unbiased) and r.notes
    with pytest.raises(InsufficientDataError):
        fit_crow_amsaa([3.0, 3.0])
    with pytest.raises(ValueError):
        fit_crow_amsaa([1.0, 5.0], end=4.0)
    with pytest.raises(ValueError):
        fit_crow_amsaa([0.0, 5.0])


def test_plot_returns_figure():
    """Regression: plot() returns a matplotlib Figure and computes nothing new."""
    import matplotlib

    matplotlib.use("Agg")
    fig = fit_crow_amsaa(NIST, end=1500).plot()
    assert fig.__class__.__name__ == "Figure"


def _simulate(rng, beta, mu, end, reps):
    for _ in range(reps):
        n = rng.poisson(mu)
        yield np.sort(end * rng.uniform(size=n) ** (1 / beta))


def test_beta_coverage_and_unbiasedness_simulation():
    """Reference (simulation, seeded): 95 % β interval covers 93–97 %; unbiased β̄ mean ≈ β."""
    rng = np.random.default_rng(11)
    beta, hits, used, unb = 0.6, 0, 0, []
    for t in _simulate(rng, beta, 25.0, 1000.0, 1500):
        if t.size < 2:
            continue
        r = fit_crow_amsaa(t, end=1000.0)
        used += 1
        hits += r.params.loc["beta", "low"] <= beta <= r.params.loc["beta", "high"]
        unb.append(r.beta_unbiased)
    assert 0.93 <= hits / used <= 0.97
    assert np.mean(unb) == pytest.approx(beta, rel=0.03)
