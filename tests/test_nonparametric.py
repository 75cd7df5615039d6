"""Tests of reliab.models.nonparametric: Kaplan-Meier and Nelson-Aalen."""

from __future__ import annotations

import json

import numpy as np
import pytest
from lifelines import KaplanMeierFitter, NelsonAalenFitter
from matplotlib.figure import Figure

from reliab.errors import InsufficientDataError
from reliab.models import estimate_kaplan_meier, estimate_nelson_aalen


def _data(seed: int, n: int = 400):
    """Tied integer times, censoring, and delayed entry for about half the units."""
    rng = np.random.default_rng(seed)
    t = np.round(100 * rng.weibull(1.5, n)) + 1
    e = np.where(rng.random(n) < 0.5, np.floor(rng.random(n) * t), 0.0)
    return t, rng.random(n) < 0.7, e


def test_kaplan_meier_by_hand():
    """Reference: product-limit values computed by hand from Kaplan & Meier (1958)."""
    km = estimate_kaplan_meier([1, 2, 2, 3, 4, 5], [1, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(km.table["survival"], [5 / 6, 5 / 6 * 4 / 5, 4 / 6 * 2 / 3,
                                                      4 / 9, 0.0])
    assert km.table["at_risk"].tolist() == [6, 5, 3, 2, 1]
    assert km.at(2.5)["survival"].iloc[0] == pytest.approx(2 / 3)
    assert km.at(0.5)["survival"].iloc[0] == 1.0
    assert km.median() == 3.0
    na = estimate_nelson_aalen([1, 2, 2, 3, 4, 5], [1, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(na.table["cumhaz"], np.cumsum([1 / 6, 1 / 5, 1 / 3, 0, 1]))


@pytest.mark.parametrize("with_entry", [False, True])
def test_kaplan_meier_agrees_with_lifelines(with_entry):
    """Agreement: lifelines KaplanMeierFitter estimate and exponential-Greenwood CI
    (conf_type="log-log") to 1e-6 where S > 0; at S = 0 lifelines gives [0, 0], reliab (as R)
    no interval."""
    t, d, e = _data(1)
    entry = e if with_entry else None
    km = estimate_kaplan_meier(t, d, entry=entry, conf_type="log-log")
    ref = KaplanMeierFitter().fit(t, d, entry=entry)
    times = km.table["time"].to_numpy()
    np.testing.assert_allclose(km.table["survival"], ref.survival_function_at_times(times),
                               rtol=1e-6, atol=1e-12)
    ci = ref.confidence_interval_.loc[times].to_numpy()
    alive = km.table["survival"].to_numpy() > 0
    np.testing.assert_allclose(km.table["low"][alive], ci[alive, 0], rtol=1e-6)
    np.testing.assert_allclose(km.table["high"][alive], ci[alive, 1], rtol=1e-6)
    assert km.table.loc[~alive, ["low", "high"]].isna().all().all()
    assert km.median() == ref.median_survival_time_


@pytest.mark.parametrize("with_entry", [False, True])
def test_nelson_aalen_agrees_with_lifelines(with_entry):
    """Agreement: lifelines NelsonAalenFitter(nelson_aalen_smoothing=False) to 1e-6."""
    t, d, e = _data(2)
    entry = e if with_entry else None
    na = estimate_nelson_aalen(t, d, entry=entry)
    ref = NelsonAalenFitter(nelson_aalen_smoothing=False).fit(t, d, entry=entry)
    times = na.table["time"].to_numpy()
    np.testing.assert_allclose(na.table["cumhaz"], ref.cumulative_hazard_.loc[times].iloc[:, 0],
                               rtol=1e-6, atol=1e-12)
    ci = ref.confidence_interval_.loc[times].to_numpy()
    np.testing.assert_allclose(na.table["low"], ci[:, 0], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(na.table["high"], ci[:, 1], rtol=1e-6, atol=1e-12)


def test_large_sample_runs_and_is_monotone():
    """Regression: 2e5 continuous units with entry give a non-increasing curve in [0, 1]."""
    rng = np.random.default_rng(3)
    t = rng.weibull(0.8, 200_000) * 1000
    km = estimate_kaplan_meier(t, rng.random(t.size) < 0.5, entry=t * rng.random(t.size) * 0.3)
    s = km.table["survival"].to_numpy()
    assert np.all(np.diff(s) <= 0) and 0 <= s[-1] <= 1
    assert (km.table["low"] <= s + 1e-15).all() and (km.table["high"] >= s - 1e-15).all()


def test_result_contract():
    """Regression: summary, JSON-safe to_dict, HTML and Figure plots; n and exposure."""
    km = estimate_kaplan_meier([3.0, 1.0, 2.0], [1, 0, 1])
    na = estimate_nelson_aalen([3.0, 1.0, 2.0], [1, 0, 1])
    for res in (km, na):
        json.dumps(res.to_dict())
        assert isinstance(res.plot(), Figure)
        assert res._repr_html_().startswith("<div")
        assert (res.n, res.n_failures, res.exposure) == (3, 2, 6.0)
    assert na.at([2.5])["survival"].iloc[0] == pytest.approx(np.exp(-0.5))


def test_validation_and_insufficient_data():
    """Edge case: bad inputs raise ValueError with count and index; no data is insufficient."""
    with pytest.raises(ValueError, match=r"1 negative duration\(s\) \(first at index 1\)"):
        estimate_kaplan_meier([1.0, -1.0], [1, 1])
    with pytest.raises(ValueError, match=r"1 entry time\(s\) later than the duration"):
        estimate_nelson_aalen([1.0, 2.0], [1, 1], entry=[0.0, 3.0])
    with pytest.raises(ValueError, match="missing or not finite"):
        estimate_kaplan_meier([1.0, np.nan], [1, 1])
    with pytest.raises(InsufficientDataError, match="no units"):
        estimate_kaplan_meier([], [])


def test_kaplan_meier_median_at_an_exact_half_plateau_is_the_midpoint():
    """Reference (by hand): four failures at 1..4 give S = 3/4, 1/2, 1/4, 0; S = 1/2 exactly
    on [2, 3), so R's midpoint rule (``quantile.survfit``) gives (2 + 3) / 2 = 2.5.  Twelve
    failures at 1..12 give S(6) = 6/12 exactly (stored with rounding by the product), median
    (6 + 7) / 2 = 6.5."""
    assert estimate_kaplan_meier([1, 2, 3, 4], None).median() == pytest.approx(2.5)
    assert estimate_kaplan_meier(np.arange(1, 13), None).median() == pytest.approx(6.5)


def test_kaplan_meier_quantiles_with_censoring_by_hand():
    """Reference (by hand): times 1 (censored), 2, 3, 4, 5 (failures).  At risk 4, 3, 2, 1 at the
    failures: S(2) = 3/4, S(3) = 3/4 * 2/3 = 1/2, S(4) = 1/4, S(5) = 0.  The 0.25, 0.5 and 0.75
    quantiles fall on exact plateaus -> midpoints 2.5, 3.5, 4.5; the 0.6 quantile is the first
    time with S <= 0.4, which is 4."""
    km = estimate_kaplan_meier([1, 2, 3, 4, 5], [0, 1, 1, 1, 1])
    assert km.median() == pytest.approx(3.5)
    assert km.quantile(0.25) == pytest.approx(2.5)
    assert km.quantile(0.75) == pytest.approx(4.5)
    assert km.quantile(0.6) == pytest.approx(4.0)


def test_kaplan_meier_quantile_plateau_to_the_end_and_never_reached():
    """Reference (by hand): failures at 1, 2 and censoring at 3, 4: S = 3/4, 1/2, 1/2, 1/2 stays
    at 1/2 to the last time 4, so the median is (2 + 4) / 2 = 3 (R's rule for a flat at the end of
    the curve); S never reaches 1/4, so the 0.75 quantile is inf."""
    km = estimate_kaplan_meier([1, 2, 3, 4], [1, 1, 0, 0])
    assert km.median() == pytest.approx(3.0)
    assert km.quantile(0.75) == float("inf")
    with pytest.raises(ValueError, match="between 0 and 1"):
        km.quantile(1.5)
