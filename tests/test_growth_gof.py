"""Crow–AMSAA Cramér–von Mises goodness of fit (MIL-HDBK-189C; Crow 1974)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reliab.models import fit_crow_amsaa

# X_i / T = e^{-1.5}, e^{-1}, e^{-0.5}: Σ ln(T/X_i) = 3, so β̄ = (M − 1)/3 = 2/3 and
# Z_i = e^{-2/3 · 1.5}, e^{-2/3}, e^{-1/3}; targets (2i − 1)/(2M) = 1/6, 1/2, 5/6.
RATIOS = [math.exp(-1.5), math.exp(-1.0), math.exp(-0.5)]
HAND_C2 = (1 / 36 + (math.exp(-1) - 1 / 6) ** 2 + (math.exp(-2 / 3) - 1 / 2) ** 2
           + (math.exp(-1 / 3) - 5 / 6) ** 2)


def test_statistic_by_hand_time_terminated():
    """Reference: hand-derived C²_M = 0.0820879... on M = 3 (time-terminated at T = 100)."""
    assert HAND_C2 == pytest.approx(0.0820879, abs=1e-6)
    r = fit_crow_amsaa([100 * x for x in RATIOS], end=100.0)
    assert r.gof.m == 3
    assert r.gof.beta_used == pytest.approx(2 / 3, rel=1e-12)
    assert r.gof.statistic == pytest.approx(HAND_C2, rel=1e-12)
    assert r.gof.critical_value == 0.154  # table row M = 3, α = 0.10
    assert r.gof.level == 0.10 and r.gof.reject is False


def test_statistic_by_hand_failure_terminated():
    """Reference: failure-terminated drops the last failure (M = N − 1) and uses T = X_N."""
    r = fit_crow_amsaa([7 * x for x in RATIOS] + [7.0])
    assert r.termination == "failure" and r.gof.m == 3
    assert r.gof.statistic == pytest.approx(HAND_C2, rel=1e-12)
    assert r.gof.beta_used == pytest.approx(r.beta_unbiased, rel=1e-12)


def test_critical_value_table_rows_and_interpolation():
    """Reference: MIL-HDBK-189C table rows M = 2, 10, 20, 100; linear in M between rows."""
    from reliab.models._growth_gof import critical_value

    assert [critical_value(2, a) for a in (0.20, 0.15, 0.10, 0.05, 0.01)] == [
        0.138, 0.149, 0.162, 0.175, 0.186]
    assert [critical_value(10, a) for a in (0.20, 0.15, 0.10, 0.05, 0.01)] == [
        0.125, 0.142, 0.167, 0.212, 0.320]
    assert critical_value(20, 0.05) == 0.217
    assert critical_value(25, 0.05) == pytest.approx(0.2175)  # halfway between 0.217 and 0.218
    assert critical_value(80, 0.01) == pytest.approx(0.335)   # halfway between 0.33 and 0.34
    assert critical_value(5000, 0.10) == 0.173                # beyond the table: the M = 100 row
    with pytest.raises(ValueError, match="gof_level"):
        critical_value(10, 0.07)
    with pytest.raises(ValueError):
        fit_crow_amsaa([1.0, 2.0, 3.0], end=4.0, gof_level=0.3)


def test_gof_too_few_and_in_summary():
    """Regression: failure-terminated N = 2 (M = 1) has no test and says so; to_dict has it."""
    r = fit_crow_amsaa([1.0, 4.0])
    assert r.gof is None and any("Cramér" in n for n in r.notes)
    d = fit_crow_amsaa([100 * x for x in RATIOS], end=100.0).to_dict()
    assert d["gof"]["statistic"] == pytest.approx(HAND_C2)


def test_gof_rejects_a_non_power_law():
    """Reference: failures in two tight bursts are far from any power law: rejected."""
    t = np.r_[np.linspace(10, 11, 15), np.linspace(900, 901, 15)]
    assert fit_crow_amsaa(t, end=1000.0).gof.reject


def test_size_under_true_power_law_simulation():
    """Reference (simulation, seeded): under a power law the 10 % test rejects 8.3–11.7 %
    (99 % binomial interval of 2,000 trials at 0.10)."""
    from reliab.models._growth_gof import cramer_von_mises

    rng = np.random.default_rng(2024)
    rejected = used = 0
    while used < 2000:
        n = rng.poisson(15)
        if n < 3:
            continue
        t = np.sort(1000.0 * rng.uniform(size=n) ** (1 / 0.6))
        rejected += cramer_von_mises(t, 1000.0, "time", 0.10).reject
        used += 1
    assert 0.083 <= rejected / used <= 0.117
