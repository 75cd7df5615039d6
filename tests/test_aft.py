"""AFT regression beyond R's survreg: delayed entry (simulation with known truth and lifelines'
``entry_col``), interval censoring (against reliab's independent univariate likelihood), the
exact derivatives, predictions, the result contract and bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from lifelines import LogLogisticAFTFitter, LogNormalAFTFitter, WeibullAFTFitter

from reliab._checks import verify
from reliab.models import _aft_core as core
from reliab.models import fit_aft, fit_parametric

B0, B1, SIGMA = 2.0, 0.5, 0.7


def _truncated(n: int = 4000, seed: int = 1) -> pd.DataFrame:
    """Weibull AFT lifetimes (log T = 2 + 0.5 x + 0.7 W), seen only if they outlive a uniform
    entry time, censored at exp(3.5)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    t = np.exp(B0 + B1 * x + SIGMA * np.log(rng.exponential(size=n)))
    e = rng.uniform(0, 1.5 * math.exp(B0), size=n)
    df = pd.DataFrame({"t": t, "x": x, "e": e})[t > e]
    cut = math.exp(B0 + 1.5)
    return df.assign(ev=(df["t"] < cut).astype(int), t=np.minimum(df["t"], cut))


def test_truncation_recovers_the_truth_and_ignoring_it_does_not():
    df = _truncated()
    fit = fit_aft(df, "x", duration="t", event="ev", entry="e")
    est = np.r_[fit.table["coef"], fit.log_scale]
    se = np.r_[fit.table["se"], fit.log_scale_se]
    truth = np.array([B0, B1, math.log(SIGMA)])
    assert np.all(np.abs(est - truth) < 4 * se)
    naive = fit_aft(df, "x", duration="t", event="ev")
    naive_est = np.r_[naive.table["coef"], naive.log_scale]
    assert np.max(np.abs(naive_est - truth) / se) > 10  # survivor bias without entry


@pytest.mark.parametrize(("dist", "cls", "shape"), [
    ("weibull", WeibullAFTFitter, "rho_"), ("lognormal", LogNormalAFTFitter, "sigma_"),
    ("loglogistic", LogLogisticAFTFitter, "beta_")])
def test_truncation_matches_lifelines_entry_col(dist, cls, shape):
    """lifelines optimises the same conditional likelihood (its optimiser stops short: log L up to 3e-4 lower, estimates ~1e-4 away)."""
    df = _truncated(1500, seed=2)
    fit = fit_aft(df, "x", duration="t", event="ev", entry="e", distribution=dist)
    ref = cls().fit(df[["t", "ev", "e", "x"]], "t", "ev", entry_col="e")
    assert fit.log_likelihood == pytest.approx(ref.log_likelihood_, rel=1e-6)
    assert fit.log_likelihood >= ref.log_likelihood_ - 1e-9
    loc = ref.params_.iloc[ref.params_.index.get_level_values(0) != shape]
    np.testing.assert_allclose(fit.table["coef"], [loc.loc[(loc.index[0][0], "Intercept")],
                                                   loc.loc[(loc.index[0][0], "x")]], rtol=1e-3)
    s = float(ref.params_.loc[(shape, "Intercept")])
    log_sigma = s if dist == "lognormal" else -s  # lifelines: log sigma, or log(1/sigma)
    assert fit.log_scale == pytest.approx(log_sigma, rel=1e-3)


@pytest.mark.parametrize("dist", ["weibull", "lognormal", "loglogistic", "exponential"])
def test_interval_censoring_matches_the_univariate_likelihood(dist):
    """Intercept-only AFT with (l, u] and left-censored rows = fit_parametric(upper=...)."""
    rng = np.random.default_rng(1)
    lo = rng.weibull(1.5, size=200) * 10
    up = lo * 1.3
    lo[:20] = 0.0
    df = pd.DataFrame({"lo": lo, "up": up, "ev": 1})
    fit = fit_aft(df, duration="lo", event="ev", upper="up", distribution=dist)
    ref = fit_parametric(lo, np.ones(200), upper=up, distribution=dist)
    assert fit.log_likelihood == pytest.approx(ref.log_likelihood, rel=1e-9)


@pytest.mark.parametrize("base", ["extreme", "normal", "logistic"])
def test_gradient_and_hessian_are_the_derivatives(base):
    """Exact derivatives against central differences, every kind of row mixed."""
    rng = np.random.default_rng(3)
    n = 120
    lo = rng.weibull(1.5, size=n) * 10 + 0.5
    kind = np.arange(n) % 4  # 0 exact, 1 right, 2 interval, 3 exact with entry
    up = np.where(kind == 2, lo * 1.3, np.inf)
    d = core.AFTData(np.c_[np.ones(n), rng.normal(size=n)], lo, (kind == 0) | (kind == 3), up,
                     np.where(kind == 3, 0.3 * lo, 0.0), rng.uniform(0.5, 2, size=n))
    th = np.array([2.0, 0.3, -0.4])
    _, g, h = core.loglik(base, d, th, False)
    eps = 1e-5
    for j, e in enumerate(np.eye(3) * eps):
        up_, dn = core.loglik(base, d, th + e, False), core.loglik(base, d, th - e, False)
        assert g[j] == pytest.approx((up_[0] - dn[0]) / (2 * eps), rel=1e-7)
        np.testing.assert_allclose(h[j], (up_[1] - dn[1]) / (2 * eps), rtol=1e-6)


def test_predictions_are_the_distribution():
    """Weibull: S at the predicted median is 1/2; quantiles rise with p; time ratio = exp(b)."""
    df = _truncated(800)
    fit = fit_aft(df, "x", duration="t", event="ev", entry="e")
    new = pd.DataFrame({"x": [-1.0, 0.0, 2.0]})
    med = fit.median(new)
    s = np.array([fit.survival(new.iloc[[i]], m).iloc[0, 0] for i, m in enumerate(med)])
    np.testing.assert_allclose(s, 0.5, rtol=1e-12)
    q = fit.quantiles(new, (0.1, 0.5, 0.9)).to_numpy()
    assert np.all(np.diff(q, axis=1) > 0)
    assert med[1] / med[0] == pytest.approx(math.exp(fit.table.loc["x", "coef"]), rel=1e-12)


def test_result_contract_and_checks():
    fit = fit_aft(_truncated(600), "x", duration="t", event="ev", entry="e",
                  distribution="loglogistic")
    assert verify({"aft": fit})[1] == ()
    assert fit.aic == pytest.approx(2 * 3 - 2 * fit.log_likelihood)
    d = fit.to_dict()
    assert d["type"] == "AFTFit" and d["distribution"] == "loglogistic"
    assert [r["term"] for r in d["summary"]] == ["(Intercept)", "x"]


def test_bad_input_is_named():
    df = pd.DataFrame({"t": [1.0, 2.0, 0.0, 4.0], "ev": 1, "g": list("abab")})
    with pytest.raises(ValueError, match="durations must be > 0"):
        fit_aft(df, "C(g)", duration="t", event="ev")
    with pytest.raises(ValueError, match="distribution must be one of"):
        fit_aft(df, duration="t", distribution="gompertz")  # type: ignore[arg-type]
    ok = fit_aft(df.assign(t=[1.0, 2.0, 3.0, 4.5]), "C(g)", duration="t", event="ev")
    with pytest.raises(ValueError, match="not in the fitted data"):
        ok.median(pd.DataFrame({"g": ["c"]}))


def test_covariate_list_is_the_formula_of_those_columns():
    df = _truncated(500)
    a = fit_aft(df, "x", duration="t", event="ev", entry="e", distribution="lognormal")
    b = fit_aft(df, duration="t", event="ev", entry="e", covariates=["x"],
                distribution="lognormal")
    pd.testing.assert_frame_equal(a.table, b.table)
