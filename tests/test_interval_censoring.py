"""Interval- and left-censored maximum likelihood, and the time resolution of recorded stamps.

Expectations: R's ``survreg`` on a committed dataset (tests/reference/interval_censored, the
script and the values it printed), closed-form multinomial MLEs of inspection data, the gamma
score equations, simulated Weibull data with known shape, and the LANL failure record
(Schroeder & Gibson, DSN 2006: Weibull shapes 0.7-0.8 for the time between failures).
"""

from __future__ import annotations

import math
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

import reliab
from reliab.models.resolution import gap_bounds, infer_resolution, negligible

REF = Path(__file__).parent / "reference" / "interval_censored"
LANL = (Path(__file__).parent / "reference" / "lanl_failures_1996_2005"
        / "LA-UR-05-7318-failure-data-1996-2005.csv")


def _r_data() -> tuple[np.ndarray, np.ndarray]:
    d = pd.read_csv(REF / "data.csv")
    return d["left"].fillna(0.0).to_numpy(), d["right"].fillna(np.inf).to_numpy()


def _r_values() -> dict[str, dict[str, float]]:
    """survreg's printed lines: ``<dist> intercept <v> scale <v> loglik <v>``."""
    out = {}
    for line in (REF / "survreg_reference.out").read_text().splitlines():
        words = line.split()
        if words and words[0] in ("weibull", "exponential", "lognormal", "loglogistic"):
            out[words[0]] = {words[i]: float(words[i + 1]) for i in (1, 3, 5)}
    return out


def test_weibull_interval_fit_equals_r_survreg():
    """survreg(Surv(l, r, type="interval2") ~ 1, dist="weibull"): shape = 1 / scale_R,
    scale = exp(intercept), to 7 significant digits, and the same log-likelihood."""
    lo, hi = _r_data()
    r = _r_values()["weibull"]
    fit = reliab.fit_weibull(lo, None, upper=hi)
    assert fit.shape == pytest.approx(1.0 / r["scale"], rel=1e-7)
    assert fit.scale == pytest.approx(math.exp(r["intercept"]), rel=1e-7)
    assert fit.log_likelihood == pytest.approx(r["loglik"], rel=1e-9)
    p = fit.params
    assert (p["low"] < p["estimate"]).all() and (p["estimate"] < p["high"]).all()


@pytest.mark.parametrize("dist", ["exponential", "lognormal", "loglogistic"])
def test_other_families_equal_r_survreg(dist):
    """The same dataset through fit_parametric(upper=...): survreg's location/scale mapped to
    reliab's parameters (lognormal mu = intercept, sigma = scale; log-logistic and
    exponential scale = exp(intercept), log-logistic shape = 1 / scale_R)."""
    lo, hi = _r_data()
    r = _r_values()[dist]
    fit = reliab.fit_parametric(lo, None, upper=hi, distribution=dist)
    est = fit.params["estimate"]
    if dist == "lognormal":
        assert est["mu"] == pytest.approx(r["intercept"], rel=1e-7)
        assert est["sigma"] == pytest.approx(r["scale"], rel=1e-7)
    else:
        assert est["scale"] == pytest.approx(math.exp(r["intercept"]), rel=1e-7)
    if dist == "loglogistic":
        assert est["shape"] == pytest.approx(1.0 / r["scale"], rel=1e-7)
    assert fit.log_likelihood == pytest.approx(r["loglik"], rel=1e-9)


def test_inspection_data_closed_form():
    """Units inspected at t1 and t2: k1 failed before t1 (left-censored), k2 in (t1, t2]
    (interval), the rest alive at t2 (right-censored).  Two Weibull parameters fit two cell
    probabilities exactly, so S(t1) = 1 - k1/n, S(t2) = 1 - (k1+k2)/n and
    shape = ln(ln S2 / ln S1) / ln(t2 / t1), scale = t1 / (-ln S1)^(1/shape)."""
    t1, t2, k1, k2, n = 100.0, 300.0, 12, 18, 50
    lo = np.r_[np.zeros(k1), np.full(k2, t1), np.full(n - k1 - k2, t2)]
    hi = np.r_[np.full(k1, t1), np.full(k2, t2), np.full(n - k1 - k2, np.inf)]
    s1, s2 = 1 - k1 / n, 1 - (k1 + k2) / n
    shape = math.log(math.log(s2) / math.log(s1)) / math.log(t2 / t1)
    fit = reliab.fit_weibull(lo, None, upper=hi)
    assert fit.shape == pytest.approx(shape, rel=1e-7)
    assert fit.scale == pytest.approx(t1 / (-math.log(s1)) ** (1 / shape), rel=1e-7)
    expo = reliab.fit_parametric(np.r_[0.0, 0.0, t1, t1, t1], None,
                                 upper=np.r_[t1, t1, np.inf, np.inf, np.inf],
                                 distribution="exponential")
    # 2 of 5 failed by t1: F(t1) = 2/5, scale = -t1 / ln(3/5)
    assert expo.params.loc["scale", "estimate"] == pytest.approx(-t1 / math.log(0.6), rel=1e-7)


def test_interval_path_on_exact_data_equals_the_profile_solver():
    """Exact and right-censored times given as intervals (upper == duration, observed 0 for
    censored) have the same likelihood: same estimates and the same LR intervals."""
    t = np.array([54.0, 187.0, 216.0, 240.0, 244.0, 335.0, 361.0, 373.0, 375.0, 386.0, 500.0, 500.0])
    obs = np.array([1] * 10 + [0, 0])
    fast = reliab.fit_weibull(t, obs)
    general = reliab.fit_weibull(t, obs, upper=t)
    pd.testing.assert_frame_equal(general.summary(), fast.summary(), rtol=1e-6)
    assert general.log_likelihood == pytest.approx(fast.log_likelihood, rel=1e-10)


def test_gamma_complete_data_solves_the_score_equations():
    """Gamma MLE on complete data: ln k - digamma(k) = ln(mean) - mean(ln x), scale = mean / k."""
    x = np.array([0.8, 1.9, 2.2, 3.1, 3.3, 4.0, 4.8, 5.5, 7.2, 9.9, 12.5, 2.7])
    fit = reliab.fit_parametric(x, None, distribution="gamma")
    k, scale = fit.params.loc["shape", "estimate"], fit.params.loc["scale", "estimate"]
    assert math.log(k) - special.digamma(k) == pytest.approx(
        math.log(x.mean()) - np.log(x).mean(), rel=1e-7)
    assert scale == pytest.approx(x.mean() / k, rel=1e-7)
    p = fit.params
    assert ((p["low"] < p["estimate"]) & (p["estimate"] < p["high"])).all()


def test_gamma_right_censored_recovers_truth_and_joins_the_comparison():
    """Gamma(shape 2.5, scale 40) with administrative censoring at 120: the 95 % intervals
    contain the truth, and compare_distributions ranks five families with gamma first."""
    rng = np.random.default_rng(7)
    t = rng.gamma(2.5, 40.0, 1500)
    obs = (t < 120.0).astype(int)
    t = np.minimum(t, 120.0)
    comp = reliab.compare_distributions(t, obs)
    tb = comp.summary()
    assert set(tb["distribution"]) == {"weibull", "exponential", "lognormal", "loglogistic", "gamma"}
    assert comp.best.distribution == "gamma"
    p = comp.fits["gamma"].params
    assert p.loc["shape", "low"] < 2.5 < p.loc["shape", "high"]
    assert p.loc["scale", "low"] < 40.0 < p.loc["scale", "high"]


def test_compare_distributions_takes_interval_data():
    """Every family accepts the interval dataset; the notes count the kinds of censoring."""
    lo, hi = _r_data()
    comp = reliab.compare_distributions(lo, None, upper=hi)
    assert len(comp.summary()) == 5
    assert comp.notes == ("censored data: 3 exact, 3 right-, 3 left-, 9 interval-censored",)


def test_bad_interval_input_names_the_problem():
    with pytest.raises(ValueError, match=r"1 upper bound\(s\) below the lower bound \(first at index 1\)"):
        reliab.fit_weibull([1.0, 5.0, 2.0], None, upper=[2.0, 4.0, 3.0])
    with pytest.raises(reliab.errors.InsufficientDataError, match="1 failure"):
        reliab.fit_weibull([1.0, 5.0], None, upper=[2.0, np.inf])


# ----------------------------------------------------------------- resolution
@pytest.mark.parametrize("stamps, name", [
    (["2004-03-01 10:17", "2004-03-01 10:17", "2004-03-02 08:02"], "minute"),
    (["2004-03-01 10:00", "2004-03-01 13:00", "2004-03-02 08:00"], "hour"),
    (["2004-03-01", "2004-03-05", "2004-04-02"], "day"),
    (["2004-03-01 10:17:05", "2004-03-01 10:17:00", "2004-03-02 08:02:00"], "second"),
    (["2004-03-01 10:17:05.250", "2004-03-01 10:17:00.000"], "millisecond"),
    (["2004-03-01 10:17"], "unknown"),
])
def test_infer_resolution(stamps, name):
    assert infer_resolution(pd.to_datetime(stamps)).name == name


def test_infer_resolution_uses_the_wall_clock_of_aware_stamps():
    """Days at local midnight in a zone 5 h from UTC are still days."""
    stamps = pd.to_datetime(["2004-03-01", "2004-03-07"]).tz_localize("America/New_York")
    assert infer_resolution(pd.Series(stamps)).name == "day"


def test_gap_bounds():
    """A gap g between stamps of resolution r lies in (max(g - r, 0), g + r); zero -> (0, r)."""
    lo, hi = gap_bounds([0.0, 1.0, 5.0], 1.0)
    assert lo.tolist() == [0.0, 0.0, 4.0] and hi.tolist() == [1.0, 2.0, 6.0]
    assert negligible([3.0, 5.0], 0.01) and not negligible([3.0, 5.0], 0.05)
    assert not negligible([0.0, 500.0], 0.01)
    with pytest.raises(ValueError, match="negative gap"):
        gap_bounds([-1.0], 1.0)


def _simulated(rng: np.random.Generator, n: int, r: float, beta: float = 0.7) -> np.ndarray:
    """Gaps between event stamps truncated to a grid of ``r`` (Weibull gaps, scale 1)."""
    stamps = np.floor(np.cumsum(rng.weibull(beta, n)) / r) * r
    return np.diff(np.r_[0.0, stamps])


def test_interval_fit_recovers_the_shape_where_dropping_or_halving_zeros_is_biased():
    """Weibull shape 0.7 gaps stamped to a grid of 0.25 (a quarter of the scale): the
    interval fit's 95 % interval covers 0.7; dropping the zero gaps or setting them to r/2
    gives intervals that exclude it."""
    rng = np.random.default_rng(2006)
    g = _simulated(rng, 3000, 0.25)
    assert (g == 0).sum() > 300
    lo, hi = gap_bounds(g, 0.25)
    fit = reliab.fit_weibull(lo, None, upper=hi)
    assert fit.params.loc["shape", "low"] < 0.7 < fit.params.loc["shape", "high"]
    dropped = reliab.fit_weibull(g[g > 0], None).params.loc["shape"]
    halved = reliab.fit_weibull(np.where(g == 0, 0.125, g), None).params.loc["shape"]
    assert dropped["low"] > 0.7 and halved["low"] > 0.7


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["durations", "stamps"])
def test_interval_fit_coverage_near_nominal(scheme):
    """200 samples of 100 Weibull(0.7) gaps coarsened to 0.25: the LR interval covers the
    true shape in 95 % +- 3.5 (binomial 2.3 sd) of them.  ``durations``: each gap floored
    (G in [g, g + r)); ``stamps``: event times floored, gaps as in gap_bounds."""
    rng = np.random.default_rng(1976)
    hits = 0
    for _ in range(200):
        if scheme == "durations":
            g = np.floor(rng.weibull(0.7, 100) / 0.25) * 0.25
            lo, hi = g, g + 0.25
        else:
            lo, hi = gap_bounds(_simulated(rng, 100, 0.25), 0.25)
        p = reliab.fit_weibull(lo, None, upper=hi).params.loc["shape"]
        hits += p["low"] <= 0.7 <= p["high"]
    assert 0.915 <= hits / 200 <= 0.985


# ----------------------------------------------------------------- the analyses
def _fleet(start: pd.Timestamp, hours: float) -> types.SimpleNamespace:
    return types.SimpleNamespace(start=start, hours=hours)


def test_times_between_interruptions_recorded_to_the_minute_are_intervals():
    """Interruptions stamped to the minute with two in the same minute: the fit keeps all
    gaps (the zero one as (0, 1 min)) and says so in its notes."""
    from reliab.study._analyses import _tbi

    t0 = pd.Timestamp("2024-05-01", tz="UTC")
    minutes = [30, 95, 95, 400, 1000, 1001, 2500, 4000, 4100, 6000]
    times = pd.Series(t0 + pd.to_timedelta(minutes, unit="min"))
    fit = _tbi(reliab.fit_weibull, times, _fleet(t0, 120.0), 0.95)
    # 9 gaps between the 10 interruptions (the zero one included) + the censored tail; the 30 min
    # from the window start to the first interruption is no gap
    assert fit.n == 10
    assert "times recorded to the minute: 9 gaps interval-censored" in fit.notes[-1]
    comp = _tbi(reliab.compare_distributions, times, _fleet(t0, 120.0), 0.95)
    assert "times recorded to the minute" in comp.notes[-1] and comp.n == 10


def test_times_between_interruptions_with_fine_stamps_stay_exact():
    """Stamps to the second with gaps of hours: resolution negligible, the exact fit."""
    from reliab.study._analyses import _gaps, _hours_since, _tbi

    t0 = pd.Timestamp("2024-05-01", tz="UTC")
    secs = [4000, 9001, 20017, 31000, 52003, 70009, 99001]
    times = pd.Series(t0 + pd.to_timedelta(secs, unit="s"))
    f = _fleet(t0, 40.0)
    fit = _tbi(reliab.fit_weibull, times, f, 0.95)
    same = reliab.fit_weibull(*_gaps(_hours_since(times, f), 40.0))
    assert fit.shape == same.shape and fit.notes == ()


# ----------------------------------------------------------------- LANL
def _lanl_gaps(system: str, since: str | None = None) -> tuple[np.ndarray, pd.Series]:
    from reliab.io.formats.lanl import read_lanl

    df = read_lanl(LANL)
    d = df[df["system"] == system]
    if since:
        d = d[d["start"] >= pd.Timestamp(since, tz="UTC")]
    t = d["start"].sort_values()
    return np.diff(t.to_numpy()) / np.timedelta64(1, "h"), t


def test_lanl_system_20_interval_fit_stays_in_the_published_range():
    """System 20 from 2003: LANL records to the minute (19 zero gaps); the interval fit's
    shape lies in Schroeder & Gibson's 0.7-0.8 (with zeros dropped it is 0.761)."""
    g, t = _lanl_gaps("20", "2003-01-01")
    res = infer_resolution(t)
    assert res.name == "minute" and (g == 0).sum() == 19
    lo, hi = gap_bounds(g, res.hours)
    fit = reliab.fit_weibull(lo, None, upper=hi)
    assert 0.7 < fit.shape < 0.8


def test_lanl_system_2_zero_gaps_are_fitted_not_guessed():
    """System 2: 1707 of its 7103 gaps are zero at minute resolution.  Dropping them gives a
    shape of 0.738, setting them to 30 s 0.428; the interval fit keeps them as (0, 1 min) and
    its shape lies below both (a quarter of all gaps under a minute is a steeply falling
    hazard), with a Wald and an LR interval that agree."""
    g, t = _lanl_gaps("2")
    assert (g == 0).sum() == 1707
    lo, hi = gap_bounds(g, infer_resolution(t).hours)
    fit = reliab.fit_weibull(lo, None, upper=hi)
    assert fit.shape < 0.428
    lr, wald = fit.params.loc["shape"], fit.params_wald.loc["shape"]
    assert lr["low"] == pytest.approx(wald["low"], rel=0.01)
    assert lr["high"] == pytest.approx(wald["high"], rel=0.01)


def test_a_profile_step_to_a_huge_log_scale_is_no_overflow():
    """Regression: the likelihood profile of an interval Weibull on a hostile folder's gaps tried
    log-scale 2678 and ``math.exp`` raised OverflowError, stopping ``reliab report``."""
    from reliab.models._interval import _log_pdf, _log_sf_cdf

    t = np.array([0.00035894, 1.0])
    for family in ("weibull", "exponential", "lognormal", "loglogistic", "gamma"):
        log_s, log_f = _log_sf_cdf(family, np.array([2678.14, -7.2]), t)
        assert not np.isnan(log_s).any() and (log_s <= 0).all() and (log_f <= 0).all(), family
        assert not np.isnan(_log_pdf(family, np.array([2678.14, -7.2]), t)).any(), family
