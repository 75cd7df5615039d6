"""The generalized gamma and the 3-parameter Weibull inside ``fit_parametric`` and
``compare_distributions``: AIC ranking, the nesting of the families, and their checks."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab._checks import failures, verify
from reliab.errors import InsufficientDataError
from reliab.models import compare_distributions, fit_parametric

REF = Path(__file__).parent / "reference" / "r"
ALL = ["weibull", "exponential", "lognormal", "loglogistic", "gamma", "gengamma", "weibull3"]


@cache
def _lung() -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(REF / "data" / "lung.csv")
    return df["time"].to_numpy(float), (df["status"] == 2).to_numpy(int)


@cache
def _comparison():
    return compare_distributions(*_lung(), distributions=ALL)


def test_all_seven_ranked_with_consistent_aic():
    cmp = _comparison()
    assert verify({"cmp": cmp})[1] == ()
    tb = cmp.summary().set_index("distribution")
    k = {"exponential": 1, "weibull": 2, "lognormal": 2, "loglogistic": 2, "gamma": 2,
         "gengamma": 3, "weibull3": 3}
    for name, row in tb.iterrows():
        assert row["aic"] == pytest.approx(2 * k[name] - 2 * row["log_likelihood"], rel=1e-12)
    # the three-parameter families contain their two-parameter cases
    ll = tb["log_likelihood"]
    assert ll["gengamma"] >= max(ll["weibull"], ll["lognormal"], ll["gamma"])
    assert ll["weibull3"] >= ll["weibull"]
    assert cmp.best.distribution == "weibull"  # lung: Q = 1.13 +- 0.23, threshold 2.7 +- 4.3


def test_a_wrong_aic_fails_its_check():
    fit = _comparison().fits["gengamma"]
    bad = dataclasses.replace(fit, aic=fit.aic - 2.0)  # as if it had 2 parameters
    assert "aic_is_2k_minus_2loglik" in {c.name for c in failures(bad)}


def test_a_nested_family_above_its_parent_fails_the_comparison():
    cmp = _comparison()
    fits = dict(cmp.fits)
    fits["gengamma"] = dataclasses.replace(fits["gengamma"],
                                           log_likelihood=fits["weibull"].log_likelihood - 1.0,
                                           aic=fits["gengamma"].aic + 2.0)
    names = {c.name for c in failures(dataclasses.replace(cmp, fits=fits))}
    assert "three_parameter_not_below_nested" in names


def test_weibull3_without_a_maximum_is_left_out_with_a_note():
    df = pd.read_csv(REF / "data" / "veteran.csv")
    cmp = compare_distributions(df["time"], df["status"], distributions=["weibull", "weibull3"])
    assert list(cmp.fits) == ["weibull"]
    assert any("weibull3 left out" in n and "unbounded" in n for n in cmp.notes)
    with pytest.raises(InsufficientDataError, match="unbounded"):
        fit_parametric(df["time"], df["status"], distribution="weibull3")


def test_gengamma_with_interval_data_and_weibull3_refuses_it():
    rng = np.random.default_rng(1)
    lo = rng.weibull(1.5, 100) * 10
    fit = fit_parametric(lo, np.ones(100), upper=lo * 1.2, distribution="gengamma")
    two = fit_parametric(lo, np.ones(100), upper=lo * 1.2, distribution="weibull")
    assert fit.log_likelihood >= two.log_likelihood
    s = fit.at([1.0, 5.0, 20.0])["survival"].to_numpy()
    assert np.all(np.diff(s) < 0) and np.all((s > 0) & (s < 1))
    with pytest.raises(ValueError, match="right-censored data only"):
        fit_parametric(lo, np.ones(100), upper=lo * 1.2, distribution="weibull3")
