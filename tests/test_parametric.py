"""Tests of reliab.models.parametric: distribution fits and AIC comparison."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy import optimize, stats

from reliab.errors import InsufficientDataError
from reliab.models import compare_distributions, fit_parametric, fit_weibull
from reliab.models.weibull import WeibullFit

REF = Path(__file__).parent / "reference"


def _nist() -> pd.DataFrame:
    return pd.read_csv(REF / "nist_weibull_censored_example" / "nist_8_4_1_3_weibull_censored.csv")


def test_nist_weibull_vs_lognormal_aic():
    """Reference: NIST e-Handbook 8.4.1.3: Weibull AIC 154.27 beats lognormal AIC 154.39."""
    df = _nist()
    comp = compare_distributions(df["time_hours"], df["event"],
                                 distributions=("weibull", "lognormal"))
    tb = comp.summary()
    assert list(tb.columns) == ["distribution", "log_likelihood", "aic", "delta_aic", "rank"]
    assert tb["distribution"].tolist() == ["weibull", "lognormal"]
    assert tb["aic"].round(2).tolist() == [154.27, 154.39]
    assert tb["delta_aic"].iloc[0] == 0.0 and tb["rank"].tolist() == [1, 2]
    assert comp.best.distribution == "weibull"
    json.dumps(comp.to_dict())


def test_lognormal_matches_direct_likelihood():
    """Agreement: lognormal MLE equals a direct scipy maximisation of the censored likelihood
    with delayed entry (independent code path from the lifelines backend)."""
    rng = np.random.default_rng(4)
    t = np.exp(rng.normal(3, 0.8, 300))
    e = np.where(rng.random(300) < 0.5, t * rng.random(300), 0.0)
    c = e + rng.uniform(5, 80, 300)
    d, y = t <= c, np.minimum(t, c)

    def nll(p):
        mu, sig = p[0], np.exp(p[1])
        z = (np.log(y) - mu) / sig
        ll = np.where(d, stats.norm.logpdf(z) - np.log(sig * y), stats.norm.logsf(z))
        return -(ll.sum() - stats.norm.logsf((np.log(e[e > 0]) - mu) / sig).sum())

    res = optimize.minimize(nll, [3.0, 0.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    fit = fit_parametric(y, d, entry=e, distribution="lognormal")
    assert fit.params.loc["mu", "estimate"] == pytest.approx(res.x[0], rel=1e-5)
    assert fit.params.loc["sigma", "estimate"] == pytest.approx(np.exp(res.x[1]), rel=1e-5)
    assert fit.log_likelihood == pytest.approx(-res.fun, rel=1e-8)


def test_exponential_closed_form_with_entry():
    """Reference: exponential MLE mean life = total time at risk / failures (Lawless 2003 §3.5)."""
    rng = np.random.default_rng(5)
    t = rng.exponential(50, 200)
    e = t * rng.random(200) * 0.5
    d = rng.random(200) < 0.6
    fit = fit_parametric(t, d, entry=e, distribution="exponential")
    assert fit.params.loc["scale", "estimate"] == pytest.approx(np.sum(t - e) / d.sum(), rel=1e-6)
    assert fit.aic == pytest.approx(2 - 2 * fit.log_likelihood)


def test_weibull_routes_to_own_solver():
    """Regression: distribution='weibull' uses fit_weibull and its LR intervals."""
    df = _nist()
    fit = fit_parametric(df["time_hours"], df["event"])
    assert isinstance(fit.backend, WeibullFit)
    pd.testing.assert_frame_equal(fit.params, fit_weibull(df["time_hours"], df["event"]).params)
    assert fit.at(500.0)["survival"].iloc[0] == pytest.approx(np.exp(-(500 / 606.5276) ** 1.720797), rel=1e-5)


@pytest.mark.parametrize("dist", ["weibull", "exponential", "lognormal", "loglogistic"])
def test_every_distribution_fits_and_plots(dist):
    """Regression: each distribution gives a bracketing interval table and a Figure."""
    df = _nist()
    fit = fit_parametric(df["time_hours"], df["event"], distribution=dist)
    p = fit.params
    assert ((p["low"] < p["estimate"]) & (p["estimate"] < p["high"])).all()
    s = fit.at(np.array([100.0, 300.0, 500.0]))["survival"].to_numpy()
    assert np.all(np.diff(s) < 0) and np.all((s > 0) & (s < 1))
    assert isinstance(fit.plot(), Figure)
    json.dumps(fit.to_dict())


def test_errors():
    """Edge case: unknown distribution, empty list, too few failures."""
    with pytest.raises(ValueError, match="distribution must be one of"):
        fit_parametric([1.0, 2.0], [1, 1], distribution="gompertz")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distributions is empty"):
        compare_distributions([1.0, 2.0], [1, 1], distributions=())
    with pytest.raises(InsufficientDataError, match=r"1 failure\(s\) among 3 units"):
        fit_parametric([1.0, 2.0, 3.0], [1, 0, 0], distribution="lognormal")
    with pytest.raises(InsufficientDataError, match=r"0 failure\(s\) among 2 units"):
        fit_parametric([1.0, 2.0], [0, 0], distribution="exponential")
