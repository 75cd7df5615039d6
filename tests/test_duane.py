"""Duane reliability-growth model (Duane 1964; MIL-HDBK-189C §5; NIST e-Handbook 8.1.9.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reliab.models import fit_duane

NIST = [5, 40, 43, 175, 389, 712, 747, 795, 1299, 1478]


def test_exact_power_law_recovers_alpha():
    """Reference: cumulative MTBF t_i / i = 2 t_i^0.4 exactly when t_i = (2 i)^(1/0.6)."""
    t = (2.0 * np.arange(1, 9)) ** (1 / 0.6)
    r = fit_duane(t)
    assert r.alpha == pytest.approx(0.4, rel=1e-12)
    assert r.params.loc["b", "estimate"] == pytest.approx(2.0, rel=1e-12)
    assert r.r_squared == pytest.approx(1.0, abs=1e-12)
    # instantaneous MTBF at the last failure: cumulative / (1 − α)
    assert r.mtbf_instantaneous == pytest.approx(t[-1] / 8 / 0.6, rel=1e-12)


def test_least_squares_by_hand_on_nist_times():
    """Reference: slope and its t interval written out from the sums (n = 10, 8 df)."""
    x = [math.log(v) for v in NIST]
    y = [math.log(v / i) for i, v in enumerate(NIST, start=1)]
    xm, ym = sum(x) / 10, sum(y) / 10
    sxx = sum((a - xm) ** 2 for a in x)
    slope = sum((a - xm) * (b - ym) for a, b in zip(x, y, strict=True)) / sxx
    resid = [b - ym - slope * (a - xm) for a, b in zip(x, y, strict=True)]
    se = math.sqrt(sum(e * e for e in resid) / 8 / sxx)
    q = stats.t.ppf(0.95, 8)
    r = fit_duane(NIST, conf_level=0.90)
    assert r.alpha == pytest.approx(slope, rel=1e-12)
    assert r.params.loc["alpha", "se"] == pytest.approx(se, rel=1e-12)
    assert r.params.loc["alpha", "low"] == pytest.approx(slope - q * se, rel=1e-12)
    assert r.params.loc["alpha", "high"] == pytest.approx(slope + q * se, rel=1e-12)
    assert r.n == 10 and r.conf_level == 0.90


def test_ties_are_one_point_with_the_cumulative_count():
    """Regression: two failures at t = 40 give one point (40, 40/3), not two."""
    r = fit_duane([5, 40, 40, 175, 389])
    assert r.points["failures"].tolist() == [1, 3, 4, 5]
    assert r.points["cumulative_mtbf"].iloc[1] == pytest.approx(40 / 3)


def test_too_little_data_and_contract():
    """Regression: fewer than 3 distinct times cannot give a slope with an interval."""
    from reliab.errors import InsufficientDataError

    with pytest.raises(InsufficientDataError):
        fit_duane([1.0, 2.0])
    r = fit_duane(NIST)
    d = r.to_dict()
    assert d["type"] == "DuaneResult" and {"alpha", "b"} <= {row["parameter"] for row in d["summary"]}


def test_plot_is_log_log_with_units():
    """Regression: plot() draws the points and the fitted line on log-log axes, units on axes."""
    import matplotlib

    matplotlib.use("Agg")
    fig = fit_duane(NIST).plot()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "(h)" in ax.get_xlabel() and "(h)" in ax.get_ylabel()
    assert len(ax.lines) >= 2
