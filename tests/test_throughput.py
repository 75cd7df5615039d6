"""fit_throughput: HAC equal to statsmodels, exact mediation identity, recovery on a known panel."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from matplotlib.figure import Figure

from reliab import InsufficientDataError, fit_throughput, simulate_environment
from reliab.models.environment._hac import andrews_lags, nw94_lags, stacked_hac


def _ar1(n: int, rho: float, sd: float, rng: np.random.Generator) -> np.ndarray:
    e = rng.normal(0, sd, n)
    out = np.empty(n)
    out[0] = e[0]
    for i in range(1, n):
        out[i] = rho * out[i - 1] + e[i]
    return out


def _series(n: int = 800, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    temp = 60 + _ar1(n, 0.9, 1.0, rng)
    clock = 1480 - 3.4 * (temp - 60) + rng.normal(0, 3, n)
    log_t = np.log(700) - 0.0005 * (temp - 60) + (clock - 1480) / 1480 + _ar1(n, 0.8, 0.002, rng)
    return pd.DataFrame({"time": pd.date_range("2024-06-01", periods=n, freq="1min", tz="UTC"),
                         "temp_c": temp, "sm_clock_mhz": clock, "tflops": np.exp(log_t)})


def test_nw94_rule() -> None:
    """Closed form: floor(4 (T/100)^(2/9)) (Newey & West 1994)."""
    assert [nw94_lags(t) for t in (50, 100, 1000, 2847, 10_000)] == [3, 4, 6, 8, 11]


def test_hac_blocks_equal_statsmodels() -> None:
    """Reference: each equation's block of the joint HAC covariance is statsmodels' HAC."""
    d = _series()
    x1 = sm.add_constant(d[["temp_c"]].to_numpy())
    x2 = sm.add_constant(d[["temp_c", "sm_clock_mhz"]].to_numpy())
    y = np.log(d["tflops"].to_numpy())
    r1 = sm.OLS(y, x1).fit(cov_type="HAC", cov_kwds={"maxlags": 6})
    r2 = sm.OLS(y, x2).fit(cov_type="HAC", cov_kwds={"maxlags": 6})
    joint = stacked_hac([x1, x2], [r1.resid, r2.resid], 6)
    np.testing.assert_allclose(joint[:2, :2], r1.cov_params(), rtol=1e-10)
    np.testing.assert_allclose(joint[2:, 2:], r2.cov_params(), rtol=1e-8)  # cond(X) ~ 1e5
    groups = np.repeat(np.arange(4), 200)
    rp = sm.OLS(y, x1).fit(cov_type="hac-panel",
                           cov_kwds={"groups": groups, "maxlags": 5, "use_correction": False})
    np.testing.assert_allclose(stacked_hac([x1], [r1.resid], 5, groups), rp.cov_params(),
                               rtol=1e-10)


def test_naive_and_hac_total_match_statsmodels_and_identity_holds() -> None:
    d = _series()
    fit = fit_throughput(d, throughput="tflops", mediators=["sm_clock_mhz"], lags=6)
    ols = sm.OLS(np.log(d["tflops"]), sm.add_constant(d["temp_c"]))
    naive, hac = ols.fit(), ols.fit(cov_type="HAC", cov_kwds={"maxlags": 6})
    tot = fit.effect("total")
    assert tot["pct_per_c"] == pytest.approx(100 * naive.params["temp_c"], rel=1e-10)
    assert tot["se_naive"] == pytest.approx(100 * naive.bse["temp_c"], rel=1e-10)
    assert tot["se_hac"] == pytest.approx(100 * hac.bse["temp_c"], rel=1e-10)
    s = fit.summary().set_index("effect")["pct_per_c"]
    assert s["total"] == pytest.approx(s["direct"] + s["indirect"], abs=1e-10)
    assert s["indirect"] == pytest.approx(s["indirect via sm_clock_mhz"])
    assert tot["hac_over_naive"] > 1.5  # AR(1) errors: the naive interval is too narrow
    assert fit.lags == 6 and fit.lag_rule == "fixed"
    json.dumps(fit.to_dict())
    assert isinstance(fit.plot(), Figure)


def test_andrews_lag_grows_with_autocorrelation() -> None:
    rng = np.random.default_rng(1)
    assert andrews_lags(_ar1(2000, 0.95, 1, rng)) > andrews_lags(rng.normal(size=2000)) >= 0
    fit = fit_throughput(_series(), throughput="tflops", lags="andrews")
    assert fit.lag_rule == "andrews" and fit.lags > nw94_lags(800)


def test_node_panel_recovers_known_effects_with_fixed_effects() -> None:
    """Simulation: total, direct and clock-mediated effects (% per °C) inside the HAC intervals."""
    env = simulate_environment(n_nodes=48, days=12, throughput_nodes=48, rate_scale=0.0,
                               seed=5)
    truth = env.truth
    fit = fit_throughput(env.node_throughput, throughput="tflops", mediators=["sm_clock_mhz"],
                         node="host")
    s = fit.summary().set_index("effect")
    for name, key in (("total", "throughput_total_pct_per_c"),
                      ("direct", "throughput_direct_pct_per_c"),
                      ("indirect via sm_clock_mhz", "throughput_indirect_pct_per_c")):
        assert s.loc[name, "low_hac"] < truth[key] < s.loc[name, "high_hac"], name
    assert fit.fixed_effects and fit.n_nodes == 48
    pooled = fit_throughput(env.node_throughput, throughput="tflops")
    # node baselines rise with node temperature offsets: without fixed effects the slope is biased
    assert not pooled.effect("total")["low_hac"] < truth["throughput_total_pct_per_c"] < \
        pooled.effect("total")["high_hac"]


def test_bad_input() -> None:
    d = _series(50)
    with pytest.raises(ValueError, match="positive"):
        fit_throughput(d.assign(tflops=0.0), throughput="tflops")
    with pytest.raises(InsufficientDataError, match="does not vary"):
        fit_throughput(d.assign(temp_c=60.0), throughput="tflops")
    with pytest.raises(ValueError, match="lags"):
        fit_throughput(d, throughput="tflops", lags="auto")
    with pytest.raises(ValueError, match="not in the data"):
        fit_throughput(d, throughput="tflops", mediators=["power_w"])
    with pytest.raises(InsufficientDataError):
        fit_throughput(d.head(3), throughput="tflops")
    with_nan = d.copy()
    with_nan.loc[3, "temp_c"] = np.nan
    assert "1 row(s) with a missing value dropped" in fit_throughput(
        with_nan, throughput="tflops").notes


def test_unsorted_missing_times_repeats_and_gaps_are_reported() -> None:
    """Shuffled rows give the sorted fit; each repair of the time order is named in the notes."""
    d = _series(400)
    ref = fit_throughput(d, throughput="tflops", lags=4)
    shuffled = d.sample(frac=1.0, random_state=1)
    fit = fit_throughput(shuffled, throughput="tflops", lags=4)
    pd.testing.assert_frame_equal(fit.summary(), ref.summary())
    assert any("earlier than the row before them" in n for n in fit.notes)
    assert not any("earlier" in n or "gap" in n for n in ref.notes)
    holes = d.drop(index=range(100, 160)).copy()  # one hour missing in minute samples
    holes.loc[5, "time"] = pd.NaT
    holes = pd.concat([holes, holes.iloc[[10]]])  # a repeated sample
    notes = " | ".join(fit_throughput(holes, throughput="tflops").notes)
    assert "1 row(s) without a 'time' value dropped" in notes
    assert "1 repeated timestamp(s)" in notes
    assert "1 gap(s) in 'time' longer than 5x the median spacing (longest 61x)" in notes
    steps = d.assign(time=np.arange(len(d)) * 2.0)  # a numeric clock (step counter) works too
    assert fit_throughput(steps, throughput="tflops").n == len(d)
