"""Power-law NHPP with unit covariates (Crow 1974 multiple systems; Lawless 1987)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliab.errors import InsufficientDataError
from reliab.models import fit_power_law_nhpp


def _simulate(rng, beta, theta, gamma, n_units):
    x = np.column_stack([rng.integers(0, 2, n_units), rng.normal(size=n_units)])
    s = rng.uniform(0, 200, n_units)
    e = s + rng.uniform(100, 600, n_units)
    lo, hi = (s / theta) ** beta, (e / theta) ** beta
    mult = np.exp(x @ gamma)
    rows = []
    for q in range(n_units):
        k = rng.poisson(mult[q] * (hi[q] - lo[q]))
        u = rng.uniform(size=k)
        rows += [(q, theta * (lo[q] + v * (hi[q] - lo[q])) ** (1 / beta)) for v in u]
    events = pd.DataFrame(rows, columns=["unit", "time"])
    obs = pd.DataFrame({"unit": np.arange(n_units), "start": s, "end": e,
                        "a": x[:, 0], "b": x[:, 1]})
    return events, obs


def test_no_covariates_equals_crow_closed_form():
    """Reference: Crow (1974) K systems all observed on (0, T]: β̂ = N / ΣΣ ln(T / X_qi),
    λ̂ = N / (K T^β̂) and θ = λ^(−1/β)."""
    events = pd.DataFrame({"unit": [0, 0, 0, 1, 1, 2, 2, 2, 2],
                           "time": [4.0, 30.0, 55.0, 12.0, 70.0, 2.0, 9.0, 33.0, 80.0]})
    obs = pd.DataFrame({"unit": [0, 1, 2, 3], "start": 0.0, "end": 100.0})
    beta = 9 / np.sum(np.log(100.0 / events["time"]))
    lam = 9 / (4 * 100.0**beta)
    r = fit_power_law_nhpp(events, obs)
    assert r.beta == pytest.approx(beta, rel=1e-10)
    assert r.theta == pytest.approx(lam ** (-1 / beta), rel=1e-10)
    assert r.n == 9 and r.n_units == 4
    ll = 9 * np.log(lam * beta) + (beta - 1) * np.sum(np.log(events["time"])) - 9
    assert r.loglik == pytest.approx(ll, rel=1e-10)


def test_no_covariates_unequal_ends_solves_the_profile_score():
    """Reference: with ends T_q, λ = N / Σ T_q^β and β solves
    N/β + Σ ln X − N Σ T_q^β ln T_q / Σ T_q^β = 0 (Crow 1974), solved here by brentq."""
    from scipy.optimize import brentq

    events = pd.DataFrame({"unit": [0, 0, 0, 1, 1, 2, 2, 2, 2],
                           "time": [4.0, 30.0, 55.0, 12.0, 70.0, 2.0, 9.0, 33.0, 80.0]})
    ends = np.array([60.0, 100.0, 90.0, 50.0])
    obs = pd.DataFrame({"unit": [0, 1, 2, 3], "start": 0.0, "end": ends})
    slog = np.sum(np.log(events["time"]))
    beta = brentq(lambda b: 9 / b + slog - 9 * np.sum(ends**b * np.log(ends)) / np.sum(ends**b),
                  0.05, 20, xtol=1e-14)
    lam = 9 / np.sum(ends**beta)
    r = fit_power_law_nhpp(events, obs)
    assert r.beta == pytest.approx(beta, rel=1e-9)
    assert r.theta == pytest.approx(lam ** (-1 / beta), rel=1e-9)


def test_coverage_of_wald_intervals_simulation():
    """Reference (simulation, seeded): 95 % intervals of β, θ, γ_a, γ_b each cover the truth in
    91–99 % of 300 fits (99 % binomial band around 0.95)."""
    rng = np.random.default_rng(77)
    truth = {"beta": 1.5, "theta": 100.0, "a": 0.7, "b": -0.4}
    hits = dict.fromkeys(truth, 0)
    for _ in range(300):
        events, obs = _simulate(rng, 1.5, 100.0, np.array([0.7, -0.4]), 40)
        r = fit_power_law_nhpp(events, obs, covariates=["a", "b"])
        for k, v in truth.items():
            hits[k] += r.params.loc[k, "low"] <= v <= r.params.loc[k, "high"]
    for k in truth:
        assert 0.91 <= hits[k] / 300 <= 0.99, (k, hits[k])


def test_standard_errors_are_the_inverse_information():
    """Reference: the SE of γ equals the square root of the inverse observed information
    computed by central differences of the log-likelihood written out here."""
    rng = np.random.default_rng(5)
    events, obs = _simulate(rng, 1.2, 80.0, np.array([0.5, 0.3]), 30)
    r = fit_power_law_nhpp(events, obs, covariates=["a", "b"])
    pos = pd.Index(obs["unit"]).get_indexer(events["unit"])
    x = obs[["a", "b"]].to_numpy()

    def loglik(p):
        beta, ltheta, g = p[0], p[1], p[2:]
        eta = x @ g
        lin = np.sum(np.log(beta) - ltheta + (beta - 1) * (np.log(events["time"]) - ltheta) + eta[pos])
        cum = np.exp(eta) * ((obs["end"] / np.exp(ltheta)) ** beta - (obs["start"] / np.exp(ltheta)) ** beta)
        return lin - np.sum(cum)

    p0 = np.array([r.beta, np.log(r.theta), r.params.loc["a", "estimate"], r.params.loc["b", "estimate"]])
    h = 1e-4
    hess = np.empty((4, 4))
    for i in range(4):
        for j in range(4):
            ei, ej = np.eye(4)[i] * h, np.eye(4)[j] * h
            hess[i, j] = (loglik(p0 + ei + ej) - loglik(p0 + ei - ej) - loglik(p0 - ei + ej)
                          + loglik(p0 - ei - ej)) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(-hess)))
    assert r.params.loc["beta", "se"] == pytest.approx(se[0], rel=1e-4)
    assert r.params.loc["a", "se"] == pytest.approx(se[2], rel=1e-4)
    assert r.params.loc["b", "se"] == pytest.approx(se[3], rel=1e-4)
    assert r.params.loc["theta", "se"] == pytest.approx(r.theta * se[1], rel=1e-4)


def test_bad_input():
    """Regression: no events, a missing covariate, non-positive event time are clear errors."""
    obs = pd.DataFrame({"unit": [0], "start": 0.0, "end": 10.0, "a": 1.0})
    with pytest.raises(InsufficientDataError):
        fit_power_law_nhpp(pd.DataFrame({"unit": [], "time": []}), obs)
    ev = pd.DataFrame({"unit": [0, 0], "time": [1.0, 5.0]})
    with pytest.raises(ValueError, match="zz"):
        fit_power_law_nhpp(ev, obs, covariates=["zz"])
    with pytest.raises(ValueError, match="> 0"):
        fit_power_law_nhpp(pd.DataFrame({"unit": [0], "time": [0.0]}), obs)
