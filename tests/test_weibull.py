"""Tests of reliab.models.weibull: published values, lifelines agreement, coverage, edge cases."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import WeibullFitter
from matplotlib.figure import Figure
from scipy import optimize, stats

from reliab.errors import InsufficientDataError
from reliab.models import WeibullFit, fit_weibull

REF = Path(__file__).parent / "reference"


def _nist() -> pd.DataFrame:
    return pd.read_csv(REF / "nist_weibull_censored_example" / "nist_8_4_1_3_weibull_censored.csv")


def _simulate(seed: int, n: int, shape: float, truncate: bool, scale: float = 100.0):
    """Right-censored Weibull lifetimes; with ``truncate``, half the units enter late."""
    rng = np.random.default_rng(seed)
    t = scale * rng.weibull(shape, n)
    e = np.where(rng.random(n) < 0.5, rng.random(n) * t, 0.0) if truncate else None
    c = 2 * scale * rng.random(n) + (0.0 if e is None else e)
    return np.minimum(t, c), t <= c, e


def _loglik(scale: float, shape: float, t, d, e) -> float:
    """Weibull log-likelihood written out directly (Lawless 2003, eq. 5.2.1 with entry)."""
    z = (t / scale) ** shape
    ze = 0.0 if e is None else (np.asarray(e) / scale) ** shape
    logh = np.log(shape / scale) + (shape - 1) * np.log(t / scale)
    return float(np.sum(np.where(d, logh, 0.0)) - np.sum(z) + np.sum(ze))


def test_nist_handbook_censored_example():
    """Reference: NIST/SEMATECH e-Handbook 8.4.1.3 (scale 606.528, shape 1.7208, AIC 154.27)."""
    df = _nist()
    fit = fit_weibull(df["time_hours"], df["event"])
    assert fit.scale == pytest.approx(606.528, rel=1e-5)
    assert fit.shape == pytest.approx(1.7208, abs=5e-5)
    assert round(fit.aic, 2) == 154.27
    assert abs(fit.log_likelihood) == pytest.approx(75.135, abs=5e-4)
    assert fit.quantities.loc["mean_life", "estimate"] == pytest.approx(540.737, abs=5e-4)
    assert (fit.n, fit.n_failures) == (20, 10)


def test_lieblein_zelen_ball_bearings():
    """Reference: Lieblein & Zelen (1956) bearings, Weibull MLE scale 81.875, shape 2.102."""
    df = pd.read_csv(REF / "lieblein_zelen_ball_bearings" / "ball_bearing_fatigue.csv")
    fit = fit_weibull(df["million_revolutions"], None)
    assert round(fit.scale, 3) == 81.875
    assert round(fit.shape, 3) == 2.102
    assert fit.shape_meaning.startswith("wear-out")


def _lanl_gaps() -> dict[int, np.ndarray]:
    """Hours between successive failures per LANL system; zero gaps (same-minute records of
    one outage, the data's 1-minute resolution) are dropped."""
    path = REF / "lanl_failures_1996_2005" / "LA-UR-05-7318-failure-data-1996-2005.csv"
    df = pd.read_csv(path, usecols=["System", "Prob Started"])
    df["start"] = pd.to_datetime(df["Prob Started"], format="%m/%d/%Y %H:%M")
    out = {}
    for system, grp in df.groupby("System"):
        gaps = np.diff(np.sort(grp["start"].to_numpy())) / np.timedelta64(1, "h")
        out[int(system)] = gaps[gaps > 0]
    return out


def test_lanl_time_between_failures_has_decreasing_hazard():
    """Reference: Schroeder & Gibson (DSN 2006) report Weibull TBF shape 0.7-0.8 (< 1) for
    the LANL systems; every system with > 2000 gaps has shape and its LR upper limit < 1."""
    gaps = _lanl_gaps()
    large = [s for s, g in gaps.items() if g.size > 2000]
    assert len(large) >= 4
    for system in large:
        fit = fit_weibull(gaps[system], None)
        assert 0.6 < fit.shape < 0.95, (system, fit.shape)
        assert fit.params.loc["shape", "high"] < 1.0
        assert fit.shape_meaning.startswith("burn-in")


@pytest.mark.parametrize(("seed", "truncate"), [(0, False), (3, True)])
def test_agrees_with_lifelines(seed, truncate):
    """Agreement: lifelines WeibullFitter (lambda_ = scale, rho_ = shape, entry=) to 1e-6."""
    t, d, e = _simulate(seed, 300, 1.4, truncate)
    fit = fit_weibull(t, d, entry=e)
    ref = WeibullFitter().fit(t, d, entry=e)
    assert fit.scale == pytest.approx(ref.lambda_, rel=1e-6)
    assert fit.shape == pytest.approx(ref.rho_, rel=1e-6)
    assert fit.log_likelihood == pytest.approx(ref.log_likelihood_, rel=1e-9)
    assert fit.log_likelihood >= ref.log_likelihood_ - 1e-9
    se_ref = ref.summary["se(coef)"].to_numpy()
    se_ours = np.array([fit.scale, fit.shape]) * np.sqrt(np.diag(fit.cov_log))
    np.testing.assert_allclose(se_ours, se_ref, rtol=1e-5)


def test_estimates_solve_the_score_equations():
    """Agreement: our MLE is a stationary point of the directly written likelihood."""
    t, d, e = _simulate(7, 500, 0.7, True)
    fit = fit_weibull(t, d, entry=e)
    grad = optimize.approx_fprime(np.log([fit.scale, fit.shape]),
                                  lambda p: _loglik(*np.exp(p), t, d, e), 1e-7)
    assert np.max(np.abs(grad)) < 1e-4
    assert fit.log_likelihood == pytest.approx(_loglik(fit.scale, fit.shape, t, d, e), rel=1e-12)


def test_profile_intervals_sit_on_the_likelihood_contour():
    """Agreement: at each LR limit the profile log-likelihood, maximised numerically here,
    equals l_max - chi2_1(0.95)/2 (Meeker & Escobar 1998, §8.3)."""
    df = _nist()
    t, d = df["time_hours"].to_numpy(float), df["event"].to_numpy(bool)
    fit = fit_weibull(t, d)
    target = fit.log_likelihood - stats.chi2.ppf(0.95, 1) / 2

    def best_over_shape(scale: float) -> float:
        res = optimize.minimize_scalar(lambda b: -_loglik(scale, b, t, d, None),
                                       bounds=(0.05, 20), method="bounded",
                                       options={"xatol": 1e-12})
        return -res.fun

    def best_over_scale(shape: float) -> float:
        res = optimize.minimize_scalar(lambda la: -_loglik(math.exp(la), shape, t, d, None),
                                       bounds=(3, 10), method="bounded", options={"xatol": 1e-12})
        return -res.fun

    for limit in fit.params.loc["scale", ["low", "high"]]:
        assert best_over_shape(limit) == pytest.approx(target, abs=1e-6)
    for limit in fit.params.loc["shape", ["low", "high"]]:
        assert best_over_scale(limit) == pytest.approx(target, abs=1e-6)
    mean = fit.quantities.loc["mean_life"]
    assert mean["low"] < mean["estimate"] < mean["high"]
    assert mean["wald_low"] < mean["estimate"] < mean["wald_high"]


def test_b10_profile_interval_on_contour():
    """Agreement: B10 LR limits: max over shape of l at scale = B10 / (-ln .9)^(1/shape)."""
    t, d, e = _simulate(11, 150, 2.0, True)
    fit = fit_weibull(t, d, entry=e)
    target = fit.log_likelihood - stats.chi2.ppf(0.95, 1) / 2
    for q in fit.quantities.loc["b10_life", ["low", "high"]]:
        res = optimize.minimize_scalar(
            lambda b, q=q: -_loglik(q / (-math.log(0.9)) ** (1 / b), b, t, d, e),
            bounds=(0.5, 6), method="bounded", options={"xatol": 1e-12})
        assert -res.fun == pytest.approx(target, abs=1e-6)


def test_shape_lr_interval_coverage_fast():
    """Regression (simulation with known truth): the 95% LR interval for the shape covers the
    true shape in 93-97% of 1000 seeded right-censored, left-truncated samples of 100 units."""
    rng = np.random.default_rng(20240601)
    true_shape, hits, reps = 1.5, 0, 1000
    for _ in range(reps):
        e = rng.uniform(0, 60, 250)
        t = 100 * rng.weibull(true_shape, 250)
        keep = t > e
        e, t = e[keep][:100], t[keep][:100]
        c = e + rng.uniform(20, 200, t.size)
        fit = fit_weibull(np.minimum(t, c), t <= c, entry=e)
        lo, hi = fit.params.loc["shape", ["low", "high"]]
        hits += lo <= true_shape <= hi
    assert 0.93 <= hits / reps <= 0.97


def test_survival_hazard_and_meaning():
    """Regression: h = -d ln S / dt; shape readings for burn-in and wear-out samples."""
    t, d, _ = _simulate(1, 2000, 0.5, False)
    fit = fit_weibull(t, d)
    x = np.array([5.0, 50.0, 150.0])
    sf = fit.at
    dlog = (np.log(sf(x + 1e-4)["survival"]) - np.log(sf(x - 1e-4)["survival"])) / 2e-4
    np.testing.assert_allclose(fit.at(x)["hazard"], -dlog, rtol=1e-6)
    assert len(fit.at(10.0)) == 1
    assert fit.shape_meaning.startswith("burn-in")
    assert fit_weibull(*_simulate(2, 2000, 3.0, False)[:2]).shape_meaning.startswith("wear-out")


def test_result_object_contract():
    """Regression: frozen result, JSON-safe to_dict, summary rows, HTML and a Figure plot."""
    df = _nist()
    fit = fit_weibull(df["time_hours"], df["event"], entry=np.zeros(20))
    assert isinstance(fit, WeibullFit)
    with pytest.raises(AttributeError):
        fit.scale = 1.0  # type: ignore[misc]
    assert list(fit.summary().index) == ["scale", "shape", "b10_life", "mean_life"]
    json.dumps(fit.to_dict())
    assert "WeibullFit" in fit._repr_html_()
    assert isinstance(fit.plot(), Figure)


@pytest.mark.parametrize(
    ("t", "d", "words"),
    [([5.0, 6.0, 7.0], [0, 0, 0], "0 failure(s) among 3"),
     ([5.0, 6.0, 7.0], [1, 0, 0], "1 failure(s) among 3"),
     ([4.0, 4.0, 4.0, 4.0], [1, 1, 0, 1], "all 4 durations are identical"),
     ([1.0, 2.0, 9.0, 9.0], [0, 0, 1, 1], "all 2 failures occur at the largest")],
)
def test_insufficient_data(t, d, words):
    """Edge case: too little information raises InsufficientDataError with the numbers."""
    with pytest.raises(InsufficientDataError, match=re.escape(words)):
        fit_weibull(t, d)


def test_input_validation():
    """Edge case: bad inputs raise ValueError naming the count and first bad index."""
    with pytest.raises(ValueError, match=r"1 negative duration\(s\) \(first at index 2\)"):
        fit_weibull([1.0, 2.0, -3.0, 4.0], [1, 1, 1, 0])
    with pytest.raises(ValueError, match=r"2 entry time\(s\) later .* \(first at index 1\)"):
        fit_weibull([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 0], entry=[0, 3, 0, 5])
    with pytest.raises(ValueError, match="observed has 2 values"):
        fit_weibull([1.0, 2.0, 3.0], [1, 1])
    with pytest.raises(ValueError, match="not 0/1"):
        fit_weibull([1.0, 2.0, 3.0], [1, 2, 0])
    with pytest.raises(ValueError, match="conf_level"):
        fit_weibull([1.0, 2.0, 3.0], [1, 1, 1], conf_level=95)
    with pytest.raises(ValueError, match="zero"):
        fit_weibull([0.0, 2.0, 3.0], [1, 1, 1])


# ------------------------------------------------------------- the probability plot (paper)
def test_johnson_adjusted_ranks_by_hand() -> None:
    """Reference: Abernethy (2006) §2.15, adjusted rank = (reverse rank x previous + (N + 1))
    / (reverse rank + 1), worked by hand for failures at 5100, 9500, 22000, 40000 and a
    suspension at 15000 (N = 5): ranks 1, 2, 10/3, 14/3."""
    from reliab.models._probplot import johnson_ranks

    t, r = johnson_ranks([22000, 5100, 15000, 40000, 9500], [1, 1, 0, 1, 1])
    np.testing.assert_allclose(t, [5100, 9500, 22000, 40000])
    np.testing.assert_allclose(r, [1, 2, 10 / 3, 14 / 3], rtol=1e-12)


def test_complete_data_plot_at_benard_median_ranks() -> None:
    """Reference: complete data sit at Benard's (i - 0.3) / (n + 0.4) on Weibull paper."""
    dur = np.array([16.0, 34.0, 53.0, 75.0, 93.0, 120.0])
    fit = fit_weibull(dur, None)
    fig = fit.plot()
    ax = fig.axes[0]
    pts = ax.collections[0].get_offsets()
    f = (np.arange(1, 7) - 0.3) / 6.4
    np.testing.assert_allclose(pts[:, 0], dur)
    np.testing.assert_allclose(pts[:, 1], np.log(-np.log1p(-f)), rtol=1e-12)


def test_weibull_plot_is_probability_paper_with_bounds() -> None:
    """Regression (issue 20 item 6): x log time with its unit, y labelled in percent
    unreliability, the fitted line straight with slope = shape, bounds around it."""
    dur = np.array([54.0, 187.0, 216.0, 240.0, 244.0, 335.0, 361.0, 373.0, 375.0, 386.0, 500.0, 500.0])
    fit = fit_weibull(dur, [1] * 10 + [0, 0])
    ax = fit.plot().axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "time (h)" and "(%)" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "10" in labels and "63.2" in labels and "90" in labels
    line, low, high = ax.get_lines()[:3]
    x, y = line.get_xdata(), line.get_ydata()
    slope = np.polyfit(np.log(x), y, 1)[0]
    assert slope == pytest.approx(fit.shape, rel=1e-9)
    assert np.all(low.get_ydata() <= y + 1e-12) and np.all(high.get_ydata() >= y - 1e-12)
    # the band is narrowest near the centre of the data, wider at the ends
    width = high.get_ydata() - low.get_ydata()
    assert width[0] > width.min() and width[-1] > width.min()
