"""Three-parameter Weibull against R (``tests/reference/r/weibull3.R``: the closed-form
log-likelihood maximised with ``optim`` BFGS and Newton polish), and its three cases.

Estimates, log-likelihood and standard errors (exact gradient on both sides, Hessian by its
central differences) to 1e-8 relative."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _rvalues import r_values

from reliab._checks import verify
from reliab.models import fit_weibull, fit_weibull3
from reliab.models.weibull3 import _profile_beta

REF = Path(__file__).parent / "reference" / "r"


def _values() -> dict[tuple[str, str], list[float]]:
    return r_values("weibull3")


def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    dead = 2 if name == "lung" else 1
    return df["time"].to_numpy(float), (df["status"] == dead).to_numpy(int)


@pytest.mark.parametrize("name", ["lung", "rats"])
def test_matches_r(name):
    fit = fit_weibull3(*_data(name))
    v = _values()
    assert fit.status == "interior"
    assert fit.threshold == pytest.approx(v[name, "threshold"][0], rel=1e-8)
    assert math.log(fit.shape) == pytest.approx(v[name, "log_shape"][0], rel=1e-8)
    assert math.log(fit.scale) == pytest.approx(v[name, "log_scale"][0], rel=1e-8)
    assert fit.log_likelihood == pytest.approx(v[name, "loglik"][0], rel=1e-12)
    se = fit.params["se"].to_numpy() / np.r_[1.0, fit.shape, fit.scale]  # log-scale se
    np.testing.assert_allclose(se, v[name, "se"], rtol=1e-8)
    assert verify({"w3": fit})[1] == ()


def test_unbounded_is_reported_not_estimated():
    """veteran: R's profile rises towards the first failure (shape < 1); no estimate."""
    t, d = _data("veteran")
    t1 = float(t[d == 1].min())
    ours = [_profile_beta(t1 - 10.0 ** -k, t, d.astype(bool), np.zeros_like(t))[0]
            for k in range(1, 5)]
    np.testing.assert_allclose(ours, _values()["veteran", "profile_near_t1"], rtol=1e-10)
    fit = fit_weibull3(t, d)
    assert fit.status == "unbounded"
    assert math.isnan(fit.threshold) and math.isnan(fit.aic)
    assert "unbounded" in fit.notes[0] and "shape < 1" in fit.notes[0]


def test_lower_bound_is_the_two_parameter_weibull():
    """Weibull data without a threshold: the profile falls from 0; the fit is fit_weibull's."""
    rng = np.random.default_rng(7)
    t = rng.weibull(1.5, size=150) * 20
    fit = fit_weibull3(t)
    two = fit_weibull(t, np.ones_like(t))
    assert fit.status == "at_lower_bound" and fit.threshold == 0.0
    assert fit.log_likelihood == pytest.approx(two.log_likelihood, rel=1e-10)
    assert fit.shape == pytest.approx(float(two.params.loc["shape", "estimate"]), rel=1e-7)


def test_known_threshold_is_recovered():
    """Simulated threshold 10, shape 3.5, scale 20 (n = 400): within 3 standard errors."""
    rng = np.random.default_rng(11)
    t = 10 + rng.weibull(3.5, size=400) * 20
    fit = fit_weibull3(t)
    p = fit.params
    truth = {"threshold": 10.0, "shape": 3.5, "scale": 20.0}
    for k, val in truth.items():
        assert abs(p.loc[k, "estimate"] - val) < 3 * p.loc[k, "se"], k


def test_threshold_min_must_be_below_first_failure():
    with pytest.raises(ValueError, match="below the smallest failure"):
        fit_weibull3([5.0, 6.0, 7.0, 9.0], threshold_min=5.0)


def test_delayed_entry_at_the_lower_bound_is_fit_weibull_with_entry():
    """Entry times enter the threshold model as in the 2-parameter one: with the threshold on
    its bound the two log-likelihoods and shapes agree."""
    rng = np.random.default_rng(5)  # a sample whose profile falls from 0 (not every one does)
    t = rng.weibull(1.2, size=300) * 20
    e = np.where(np.arange(300) % 3 == 0, 0.4 * t, 0.0)
    fit = fit_weibull3(t, np.ones(300), entry=e)
    two = fit_weibull(t, np.ones(300), entry=e)
    assert fit.status == "at_lower_bound"
    assert fit.log_likelihood == pytest.approx(two.log_likelihood, rel=1e-10)
    assert fit.shape == pytest.approx(float(two.params.loc["shape", "estimate"]), rel=1e-7)
