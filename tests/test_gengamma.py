"""Generalized gamma (Prentice's mu, sigma, Q) and gamma fits against R, and the nesting.

Expected values: ``tests/reference/r/gengamma.R`` (the log-density written in R from Prentice
1974 and maximised with ``optim`` BFGS plus Newton polish on Richardson-extrapolated central
differences; flexsurv's parametrisation).
Generalized gamma estimates to 1e-9 relative, log-likelihoods to 1e-10; standard errors come
from Richardson-extrapolated central-difference Hessians on both sides, which agree to 2e-8
or better (7.7–9.2 digits); compared at 1e-7.  The gamma (reliab's existing fit: Nelder–Mead and Newton on
plain central differences) to 1e-8.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _rvalues import r_values
from scipy import stats

from reliab._checks import verify
from reliab.models import _interval, fit_gengamma, fit_parametric
from reliab.models.gengamma import log_pdf, log_sf_cdf, loglik

REF = Path(__file__).parent / "reference" / "r"


def _values() -> dict[tuple[str, str], list[float]]:
    return r_values("gengamma")


def _case(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if name in ("lung", "lung_entry"):
        df = pd.read_csv(REF / "data" / "lung.csv")
        t, d = df["time"].to_numpy(float), (df["status"] == 2).to_numpy(int)
        entry = t * (np.arange(1, len(t) + 1) % 4) / 5 if name == "lung_entry" else None
        return t, d, entry
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    t, d = ("futime", "fustat") if name == "ovarian" else ("time", "status")
    return df[t].to_numpy(float), df[d].to_numpy(int), None


CASES = ["lung", "ovarian", "veteran", "lung_entry"]


@pytest.mark.parametrize("name", CASES)
def test_gengamma_matches_r(name):
    t, d, e = _case(name)
    fit = fit_gengamma(t, d, entry=e)
    theta = [fit.mu, math.log(fit.sigma), fit.q]
    np.testing.assert_allclose(theta, _values()[name, "gengamma_theta"], rtol=1e-9)
    assert fit.log_likelihood == pytest.approx(_values()[name, "gengamma_loglik"][0], rel=1e-10)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov)), _values()[name, "gengamma_se"],
                               rtol=1e-7)
    assert verify({"gg": fit})[1] == ()


@pytest.mark.parametrize("name", CASES)
def test_gamma_matches_r(name):
    """The existing gamma fit (scale, shape) with censoring and delayed entry."""
    t, d, e = _case(name)
    fit = fit_parametric(t, d, entry=e, distribution="gamma")
    theta = np.log(fit.params.loc[["scale", "shape"], "estimate"].to_numpy())
    np.testing.assert_allclose(theta, _values()[name, "gamma_theta"], rtol=1e-8)
    assert fit.log_likelihood == pytest.approx(_values()[name, "gamma_loglik"][0], rel=1e-10)


def _bounds(name: str) -> _interval.Bounds:
    t, d, e = _case(name)
    return _interval.as_bounds(t, np.where(d == 1, t, np.inf), e)


@pytest.mark.parametrize(("dist", "q"), [("weibull", 1.0), ("lognormal", 0.0)])
def test_nesting_equals_survreg(dist, q):
    """At Q = 1 (Weibull) and Q = 0 (lognormal) the likelihood is survreg's, at survreg's
    estimates; the generalized gamma maximum is at least as high."""
    theta = _values()[f"lung_survreg_{dist}", "theta"]
    ll = loglik(np.array([*theta, q]), _bounds("lung"))
    assert ll == pytest.approx(_values()[f"lung_survreg_{dist}", "loglik"][0], rel=1e-12)
    assert _values()["lung", "gengamma_loglik"][0] >= ll


def test_nesting_gamma_is_q_equal_sigma():
    """Q = sigma: the gamma with shape Q^-2 and scale exp(mu) Q^2 (closed form, scipy)."""
    t = np.array([0.3, 1.2, 2.5, 4.0, 7.5])
    mu, q = 0.7, 0.6
    k = q ** -2
    ref = stats.gamma(k, scale=math.exp(mu) / k)
    np.testing.assert_allclose(log_pdf(mu, q, q, t), ref.logpdf(t), rtol=1e-12)
    np.testing.assert_allclose(log_sf_cdf(mu, q, q, t)[0], ref.logsf(t), rtol=1e-12)
    # Q = -sigma: exp(mu) k / G with G ~ gamma(k), the inverse gamma of shape k, scale k e^mu
    inv = stats.invgamma(k, scale=k * math.exp(mu))
    np.testing.assert_allclose(log_pdf(mu, q, -q, t), inv.logpdf(t), rtol=1e-12)
    np.testing.assert_allclose(log_sf_cdf(mu, q, -q, t)[0], inv.logsf(t), rtol=1e-12)


def test_too_few_failures():
    with pytest.raises(Exception, match="at least 3"):
        fit_gengamma([1.0, 2.0, 3.0], [1, 1, 0])
