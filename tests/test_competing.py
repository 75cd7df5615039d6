"""Tests of reliab.models.competing: Aalen-Johansen cumulative incidence."""

from __future__ import annotations

import json

import numpy as np
import pytest
from lifelines import AalenJohansenFitter
from matplotlib.figure import Figure

from reliab.errors import InsufficientDataError
from reliab.models import (
    estimate_cumulative_incidence,
    estimate_kaplan_meier,
    estimate_nelson_aalen,
)


def _data(seed: int, n: int = 300):
    """Continuous (tie-free) times so lifelines does not jitter; three causes; entry."""
    rng = np.random.default_rng(seed)
    t = rng.exponential(10, n)
    c = rng.exponential(15, n)
    cause = np.where(t <= c, rng.integers(1, 4, n), 0)
    e = np.where(rng.random(n) < 0.4, rng.random(n) * np.minimum(t, c) * 0.8, 0.0)
    return np.minimum(t, c), cause, e


@pytest.mark.parametrize("with_entry", [False, True])
def test_agrees_with_lifelines_aalen_johansen(with_entry):
    """Agreement: lifelines AalenJohansenFitter CIF, variance and interval to 1e-6."""
    t, cause, e = _data(2)
    entry = e if with_entry else None
    res = estimate_cumulative_incidence(t, cause, entry=entry)
    assert res.causes == (1, 2, 3)
    for k in res.causes:
        ref = AalenJohansenFitter(calculate_variance=True).fit(t, cause, event_of_interest=k,
                                                               entry=entry)
        rows = res.table[res.table["cause"] == k]
        times = rows["time"].to_numpy()
        np.testing.assert_allclose(rows["cif"], ref.cumulative_density_.loc[times].iloc[:, 0],
                                   rtol=1e-6, atol=1e-12)
        ref_var = ref.variance_.loc[times].to_numpy()
        ok = np.isfinite(ref_var)  # lifelines divides by n - d = 0 when the last unit fails
        assert ok.sum() >= len(times) - 1
        np.testing.assert_allclose(rows["variance"][ok], ref_var[ok], rtol=1e-6, atol=1e-14)
        ci = ref.confidence_interval_.loc[times].to_numpy()  # lifelines: [lower, upper] values
        ok &= rows["cif"].to_numpy() > 0
        np.testing.assert_allclose(rows["low"][ok], ci[ok, 0], rtol=1e-6)
        np.testing.assert_allclose(rows["high"][ok], ci[ok, 1], rtol=1e-6)


def test_identities_with_km_and_nelson_aalen():
    """Regression: sum of CIFs = 1 - overall KM; cause hazard = NA on that cause's flag."""
    t, cause, e = _data(5)
    res = estimate_cumulative_incidence(t, cause, entry=e)
    km = estimate_kaplan_meier(t, cause > 0, entry=e)
    total = sum(res.table[res.table["cause"] == k]["cif"].to_numpy() for k in res.causes)
    np.testing.assert_allclose(total, 1 - km.table["survival"].to_numpy(), atol=1e-12)
    na = estimate_nelson_aalen(t, cause == 2, entry=e)
    np.testing.assert_allclose(res.table[res.table["cause"] == 2]["cumhaz"], na.table["cumhaz"],
                               atol=1e-12)


def test_at_answers_one_question_with_labels():
    """Regression: at(t, cause) is a step lookup with interval; string labels work."""
    t, cause, _ = _data(7)
    names = np.array([None, "GPU HBM3 Memory", "Network", "Host"], dtype=object)[cause]
    res = estimate_cumulative_incidence(t, names, censored=None)
    assert set(res.causes) == {"GPU HBM3 Memory", "Network", "Host"}
    hit = res.at(5.0, "GPU HBM3 Memory").iloc[0]
    rows = res.table[res.table["cause"] == "GPU HBM3 Memory"]
    expected = rows[rows["time"] <= 5.0]["cif"].iloc[-1]
    assert hit["cif"] == pytest.approx(expected)
    assert hit["low"] < hit["cif"] < hit["high"] and res.conf_level == 0.95
    assert res.at(0.0, "Host")["cif"].iloc[0] == 0.0
    with pytest.raises(KeyError, match="unknown cause"):
        res.at(5.0, "PSU")
    assert res.summary()["events"].sum() == res.n_events
    assert isinstance(res.plot(), Figure)
    json.dumps(res.to_dict())


def test_errors():
    """Edge case: all censored raises InsufficientDataError; entry after duration ValueError."""
    with pytest.raises(InsufficientDataError, match="0 events among 3 units"):
        estimate_cumulative_incidence([1.0, 2.0, 3.0], [0, 0, 0])
    with pytest.raises(ValueError, match=r"1 entry time\(s\) later"):
        estimate_cumulative_incidence([1.0, 2.0], [1, 2], entry=[0.0, 5.0])
