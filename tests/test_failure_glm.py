"""fit_failure_glm: agreement with statsmodels, cells equal rows, overdispersion, coverage."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from matplotlib.figure import Figure
from statsmodels.discrete.diagnostic import PoissonDiagnostic

from reliab import InsufficientDataError, aggregate_cells, fit_failure_glm, simulate_environment
from reliab.models.environment._negbin import fit_nb2
from reliab.models.environment.failure_glm import overdispersion_test


@pytest.fixture(scope="module")
def env():
    return simulate_environment(n_nodes=256, days=14, rate_scale=60, temperature_irr=1.08,
                                seed=3)


def _counts(n: int, alpha: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    e = rng.uniform(0.5, 2.0, n)
    mu = e * np.exp(x @ [0.5, 0.3, -0.2])
    y = rng.poisson(mu) if alpha == 0 else rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu))
    return y.astype(float), x, e


def test_poisson_equals_statsmodels_glm(env) -> None:
    """Reference: the IRR table is statsmodels' Poisson GLM with exposure, exponentiated."""
    w = env.windows
    fit = fit_failure_glm(w, ["temp_c_mean", "util_pct_mean"], family="poisson")
    x = sm.add_constant(w[["temp_c_mean", "util_pct_mean"]].to_numpy(float))
    ref = sm.GLM(w["failures"].to_numpy(float), x, family=sm.families.Poisson(),
                 exposure=w["hours"].to_numpy(float)).fit()
    p = fit.summary().query("model == 'poisson'")
    np.testing.assert_allclose(p["estimate"], ref.params, rtol=1e-10)
    np.testing.assert_allclose(p["std_error"], ref.bse, rtol=1e-8)
    ci = np.exp(ref.conf_int())
    np.testing.assert_allclose(p[["irr_low", "irr_high"]].to_numpy(), ci, rtol=1e-8)
    row = fit.irr("temp_c_mean")
    assert row["irr_low"] < 1.08 < row["irr_high"]  # the simulated truth
    json.dumps(fit.to_dict())
    assert isinstance(fit.plot(), Figure)


def test_cell_fit_equals_row_fit_on_binned_covariates(env) -> None:
    """Closed form: the Poisson likelihood depends on rows only through cell sums."""
    w = env.windows.assign(temp_bin=lambda d: (np.floor(d["temp_c_mean"] / 0.5) + 0.5) * 0.5)
    rows = fit_failure_glm(w, ["temp_bin", "power_swings_count"], family="poisson")
    cells = fit_failure_glm(w, ["temp_bin", "power_swings_count"], cells=True)
    r, c = rows.summary().query("model == 'poisson'"), cells.summary()
    np.testing.assert_allclose(c["estimate"], r["estimate"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(c["std_error"], r["std_error"], rtol=1e-6)
    assert cells.n_cells < len(w) / 100 and cells.n == len(w)
    binned = fit_failure_glm(w, ["temp_c_mean"], cells=True, bins={"temp_c_mean": 0.5})
    assert binned.irr("temp_c_mean")["estimate"] == pytest.approx(
        fit_failure_glm(w, ["temp_bin"], family="poisson").irr("temp_bin")["estimate"], rel=1e-8)


def test_cells_from_chunks_equal_cells_at_once(env) -> None:
    w = env.windows
    whole = aggregate_cells(w, ["temp_c_mean"], bins={"temp_c_mean": 0.25})
    chunks = aggregate_cells((w.iloc[i:i + 20_000] for i in range(0, len(w), 20_000)),
                             ["temp_c_mean"], bins={"temp_c_mean": 0.25})
    pd.testing.assert_frame_equal(whole, chunks, check_exact=False, rtol=1e-12)
    assert whole["rows"].sum() == len(w) and whole["failures"].sum() == w["failures"].sum()


def test_negative_binomial_equals_statsmodels() -> None:
    """Reference: NB2 estimates and alpha agree with statsmodels' NegativeBinomial (Newton)."""
    y, x, e = _counts(3000, 0.7, seed=0)
    ours = fit_nb2(y, x, e, np.zeros(3))
    ref = sm.NegativeBinomial(y, x, exposure=e, loglike_method="nb2").fit(disp=0, method="newton")
    np.testing.assert_allclose(ours.params, ref.params[:3], rtol=1e-6)
    assert ours.alpha == pytest.approx(ref.params[3], rel=1e-5)
    assert ours.llf == pytest.approx(ref.llf, rel=1e-10)
    np.testing.assert_allclose(ours.bse, ref.bse[:3], rtol=0.02)  # expected vs observed information


def test_cameron_trivedi_statistic_equals_statsmodels() -> None:
    """Reference: our statistic is statsmodels' 'CT nb2' dispersion test (one-sided p here)."""
    y, x, e = _counts(3000, 0.3, seed=1)
    ref_fit = sm.Poisson(y, x, exposure=e).fit(disp=0)
    ref = PoissonDiagnostic(ref_fit).test_dispersion().summary_frame().set_index("method")
    a, t, p = overdispersion_test(y, ref_fit.predict(x, exposure=e))
    assert t == pytest.approx(ref.loc["CT nb2", "statistic"], rel=1e-8)
    assert p == pytest.approx(ref.loc["CT nb2", "pvalue"] / 2, rel=1e-6)
    assert a == pytest.approx(0.3, abs=0.1)


def test_family_choice_follows_the_overdispersion_test() -> None:
    """Simulation: the test rejects Poisson data at about its level and NB2 data always."""
    chosen = {0.0: [], 1.0: []}
    for alpha, seeds in ((0.0, range(40)), (1.0, range(5))):
        for seed in seeds:
            y, x, e = _counts(1000, alpha, seed=seed)
            df = pd.DataFrame({"failures": y, "x1": x[:, 1], "x2": x[:, 2], "hours": e})
            fit = fit_failure_glm(df, ["x1", "x2"])
            chosen[alpha].append(fit.family)
            assert fit.summary()["chosen"].sum() == 3
    assert chosen[0.0].count("negbin") <= 6  # nominal 5 %: 2 of 40 expected
    assert chosen[1.0] == ["negbin"] * 5


def test_negative_control_and_cluster_robust(env) -> None:
    """Simulation: failures of categories without a temperature effect give an IRR near 1."""
    fit = fit_failure_glm(env.windows.assign(host=env.windows["host"].astype(str)),
                          ["temp_c_mean"], count="failures_other", cluster="host")
    row = fit.irr("temp_c_mean", model="poisson")
    assert 0.95 < row["irr"] < 1.05  # the chosen categories have 1.08 per °C
    assert any("cluster-robust" in n for n in fit.notes)
    # rows left out (missing count, zero exposure) leave their node ids out too
    holes = env.windows.assign(host=env.windows["host"].astype(str)).copy()
    holes.loc[holes.index[:7], "failures_other"] = np.nan
    holes.loc[holes.index[7:9], "hours"] = 0.0
    kept = holes.iloc[9:]
    a = fit_failure_glm(holes, ["temp_c_mean"], count="failures_other", cluster="host")
    b = fit_failure_glm(kept, ["temp_c_mean"], count="failures_other", cluster="host")
    pd.testing.assert_frame_equal(a.summary(), b.summary())
    assert any("9 row(s) with a missing value" in n for n in a.notes)
    with pytest.raises(ValueError, match="cluster column 'rack_id'"):
        fit_failure_glm(kept, ["temp_c_mean"], count="failures_other", cluster="rack_id")


@pytest.mark.slow
def test_irr_interval_coverage_small() -> None:
    """Simulation: the 95 % Wald interval of the temperature IRR covers the truth ~95 % of the
    time (150 seeded replications of the failures; benchmarks/bench_environment_coverage.py
    runs 400 of the full simulation)."""
    env = simulate_environment(n_nodes=128, days=14, rate_scale=0.0, seed=0)
    w = env.windows
    temp = w["temp_c_mean"].to_numpy()
    mu = 40 / len(w) * np.exp(np.log(1.08) * (temp - temp.mean()))
    rng = np.random.default_rng(12345)
    hits = 0
    for _ in range(150):
        sim = w[["temp_c_mean", "hours"]].assign(failures=rng.poisson(mu))
        row = fit_failure_glm(sim, ["temp_c_mean"], cells=True).irr("temp_c_mean")
        hits += row["irr_low"] <= 1.08 <= row["irr_high"]
    assert 0.89 <= hits / 150 <= 0.99


def test_errors(env) -> None:
    w = env.windows.head(2000)
    with pytest.raises(InsufficientDataError, match="event"):
        fit_failure_glm(w.assign(failures=0), ["temp_c_mean"])
    with pytest.raises(ValueError, match="family"):
        fit_failure_glm(w, ["temp_c_mean"], family="zip")
    with pytest.raises(ValueError, match="cluster"):
        fit_failure_glm(w, ["temp_c_mean"], cells=True, cluster="host")
    with pytest.raises(ValueError, match="not in the windows"):
        fit_failure_glm(w, ["nope"])
    with pytest.raises(ValueError, match="covariates is empty"):
        fit_failure_glm(w, [])
