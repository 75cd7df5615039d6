"""Tests of reliab.models.cox: agreement with lifelines, PH check, validation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxPHFitter, CoxTimeVaryingFitter
from lifelines.statistics import proportional_hazard_test
from matplotlib.figure import Figure

from reliab.errors import InsufficientDataError
from reliab.models import fit_cox

TIGHT = {"precision": 1e-12}  # lifelines' Newton tolerance, tightened for a 1e-6 comparison


def _units(seed: int, n: int = 400) -> pd.DataFrame:
    """Continuous (tie-free) times; covariate ``a`` has a time-varying effect."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    x[:, 2] = rng.random(n) < 0.4
    t = rng.exponential(np.exp(-x @ np.array([0.5, -0.3, 0.8]))) * (1 + 0.5 * x[:, 0] ** 2)
    c = rng.exponential(2.0, n)
    df = pd.DataFrame(x, columns=["a", "b", "c"])
    df["T"], df["E"] = np.minimum(t, c), (t <= c).astype(int)
    df["entry"] = np.where(rng.random(n) < 0.5, rng.random(n) * df["T"] * 0.9, 0.0)
    return df


def _compare(fit, ref) -> None:
    np.testing.assert_allclose(fit.table["coef"], ref.params_.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(fit.table["se"], ref.standard_errors_.to_numpy(), rtol=1e-6)
    assert fit.log_likelihood == pytest.approx(ref.log_likelihood_, rel=1e-9)


def test_agrees_with_lifelines_coxph():
    """Agreement: lifelines CoxPHFitter coefficients, SEs, log-likelihood (no ties)."""
    df = _units(5)
    fit = fit_cox(df, duration="T", event="E", covariates=["a", "b", "c"])
    ref = CoxPHFitter().fit(df[["a", "b", "c", "T", "E"]], "T", "E", fit_options=TIGHT)
    _compare(fit, ref)
    assert list(fit.table.columns) == ["covariate", "coef", "se", "hazard_ratio", "hr_low",
                                       "hr_high", "z", "p"]
    np.testing.assert_allclose(fit.table["p"], ref.summary["p"], rtol=1e-6)
    np.testing.assert_allclose(fit.table["hr_low"], ref.summary["exp(coef) lower 95%"], rtol=1e-6)
    lr = ref.log_likelihood_ratio_test()
    assert fit.lr_statistic == pytest.approx(lr.test_statistic, rel=1e-6)


def test_agrees_with_lifelines_with_entry():
    """Agreement: CoxPHFitter(entry_col=) with delayed entry."""
    df = _units(6)
    fit = fit_cox(df, duration="T", event="E", covariates=["a", "b", "c"], entry="entry")
    ref = CoxPHFitter().fit(df, "T", "E", entry_col="entry", fit_options=TIGHT)
    _compare(fit, ref)


def test_agrees_with_lifelines_time_varying():
    """Agreement: CoxTimeVaryingFitter on counting-process rows with a changing covariate."""
    df = _units(7, 300)
    rng = np.random.default_rng(8)
    cut = df["T"] * rng.random(len(df))
    first = pd.DataFrame({"id": df.index, "start": 0.0, "stop": cut, "E": 0, "a": df["a"],
                          "temp_c": rng.normal(60, 5, len(df))})
    second = pd.DataFrame({"id": df.index, "start": cut, "stop": df["T"], "E": df["E"],
                           "a": df["a"], "temp_c": rng.normal(60, 5, len(df)) + 3 * df["a"]})
    rows = pd.concat([first, second], ignore_index=True)
    fit = fit_cox(rows, start="start", stop="stop", event="E", covariates=["a", "temp_c"],
                  id="id")
    ref = CoxTimeVaryingFitter().fit(rows, id_col="id", event_col="E", start_col="start",
                                     stop_col="stop", fit_options=TIGHT)
    _compare(fit, ref)
    assert (fit.n, fit.n_subjects, fit.n_events) == (600, 300, int(df["E"].sum()))


@pytest.mark.parametrize("transform", ["rank", "km"])
def test_ph_check_agrees_with_lifelines(transform):
    """Agreement: per-covariate statistics of lifelines proportional_hazard_test (the 1994
    approximation, kept as ``version="1994"``)."""
    df = _units(5)[["a", "b", "c", "T", "E"]]
    fit = fit_cox(df, duration="T", event="E", covariates=["a", "b", "c"])
    ref = CoxPHFitter().fit(df, "T", "E", fit_options=TIGHT)
    test = proportional_hazard_test(ref, df, time_transform=transform)
    ours = fit.check_proportional_hazards(transform, version="1994")
    np.testing.assert_allclose(ours["test_statistic"].iloc[:3], test.test_statistic, rtol=1e-6)
    np.testing.assert_allclose(ours["p"].iloc[:3], test.p_value, rtol=1e-6)
    assert ours.loc["global", "df"] == 3


def test_ph_global_equals_single_covariate_test():
    """Regression (known truth): the effect of ``a`` flips sign at t = 1 (log-HR +1 then -1),
    ``b`` is proportional; the check flags ``a`` only.  With one covariate the global and
    per-covariate statistics coincide."""
    rng = np.random.default_rng(9)
    n = 1500
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.random(n)})
    h1, h2 = np.exp(df["a"] + 0.5 * df["b"]), np.exp(-df["a"] + 0.5 * df["b"])
    u = rng.exponential(size=n)
    t = np.where(u < h1, u / h1, 1 + (u - h1) / h2)
    c = rng.uniform(0.5, 4, n)
    df["T"], df["E"] = np.minimum(t, c), (t <= c).astype(int)
    one = fit_cox(df, duration="T", event="E", covariates=["b"]).check_proportional_hazards()
    assert one.loc["global", "test_statistic"] == pytest.approx(one.loc["b", "test_statistic"])
    full = fit_cox(df, duration="T", event="E", covariates=["a", "b", "c"])
    check = full.check_proportional_hazards()
    assert check.loc["a", "p"] < 1e-6 and check.loc["global", "p"] < 1e-6
    assert check.loc["b", "p"] > 0.01
    scaled = full.scaled_schoenfeld()
    assert len(scaled) == full.n_events
    np.testing.assert_allclose(scaled[["a", "b", "c"]].mean(), full.table["coef"], atol=1e-8)


def test_result_contract():
    """Regression: JSON-safe to_dict, HTML, forest plot Figure, LR test against null."""
    fit = fit_cox(_units(1), duration="T", event="E", covariates=["a", "c"])
    json.dumps(fit.to_dict())
    assert isinstance(fit.plot(), Figure)
    assert fit.lr_statistic == pytest.approx(2 * (fit.log_likelihood - fit.log_likelihood_null))
    assert fit.converged and fit.lr_p < 1e-6


def test_validation():
    """Edge case: argument and data errors name the problem and the first bad row."""
    df = _units(2, 50)
    with pytest.raises(ValueError, match="either duration= or stop="):
        fit_cox(df, duration="T", stop="T", event="E", covariates=["a"])
    with pytest.raises(ValueError, match=r"column\(s\) \['zz'\]"):
        fit_cox(df, duration="T", event="E", covariates=["zz"])
    bad = df.copy()
    bad.loc[3, "entry"] = bad.loc[3, "T"] + 1
    with pytest.raises(ValueError, match=r"start \(entry\) not before stop .* row position 3"):
        fit_cox(bad, duration="T", event="E", covariates=["a"], entry="entry")
    bad = df.copy()
    bad.loc[4, "a"] = np.nan
    with pytest.raises(ValueError, match=r"1 missing/non-finite value\(s\) of 'a'"):
        fit_cox(bad, duration="T", event="E", covariates=["a"])
    rows = pd.DataFrame({"id": [1, 1], "start": [0.0, 1.0], "stop": [2.0, 3.0], "E": [0, 1],
                         "x": [0.1, 0.2]})
    with pytest.raises(ValueError, match="overlap"):
        fit_cox(rows, start="start", stop="stop", event="E", covariates=["x"], id="id")
    with pytest.raises(ValueError, match="ties must be 'efron' or 'breslow'"):
        fit_cox(df, duration="T", event="E", covariates=["a"], ties="exact")  # type: ignore[arg-type]
    with pytest.raises(InsufficientDataError, match="0 events among 50 rows"):
        fit_cox(df.assign(E=0), duration="T", event="E", covariates=["a"])


def test_monotone_likelihood_is_not_a_fit() -> None:
    """Every event has z = 1 and every censored row z = 0: the partial likelihood rises for
    ever in the coefficient of z (monotone likelihood; Therneau & Grambsch 2000, §3.5), so no
    hazard ratio exists.  Before: coef 272, se NaN, HR 1.2e118 returned as a fit."""
    df = pd.DataFrame({"t": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                       "e": [1, 1, 1, 0, 0, 0, 0, 0],
                       "x": [0.1, -0.3, 0.5, 0.2, -0.1, 0.4, 0.0, 0.3],
                       "z": [1, 1, 1, 0, 0, 0, 0, 0]})
    with pytest.raises(InsufficientDataError, match=r"no finite maximum.*'z'"):
        fit_cox(df, duration="t", event="e", covariates=["x", "z"])


def test_singular_information_is_a_clear_error() -> None:
    """One event, all tied at t = 1: the information matrix is singular (before: numpy's
    LinAlgError 'Singular matrix')."""
    df = pd.DataFrame({"t": [1.0] * 8, "e": [0, 0, 0, 0, 1, 0, 0, 0],
                       "x": [0.0, 0, 0, 0, 0, 1, 0, 0], "z": [0, 0, 0, 0, 1, 0, 0, 1]})
    with pytest.raises(InsufficientDataError, match="no finite maximum|singular"):
        fit_cox(df, duration="t", event="e", covariates=["x", "z"])


def test_quasi_separation_is_not_a_fit() -> None:
    """All tied; the only non-zero x and z are on censored rows: both coefficients run to
    minus infinity (before: HR 0 with interval [0, inf] returned as a fit)."""
    df = pd.DataFrame({"t": [1.0] * 8, "e": [0, 0, 0, 0, 0, 1, 1, 1],
                       "x": [0.0, 0, 0, 0, 0.03125, 0, 0, 0], "z": [0, 0, 0, 1, 0, 0, 0, 0]})
    with pytest.raises(InsufficientDataError, match="no finite maximum"):
        fit_cox(df, duration="t", event="e", covariates=["x", "z"])


def test_concordance_counts_pairs_by_definition() -> None:
    """Harrell's C over counting-process risk sets, strata and tied times, against the pair
    count written out: event row i at t, row j of its stratum with start_j < t <= stop_j and
    no event at t; concordant when eta_i > eta_j, half a pair when equal."""
    rng = np.random.default_rng(21)
    n = 120
    start = rng.integers(0, 5, n).astype(float)
    stop = start + rng.integers(1, 8, n)
    df = pd.DataFrame({"start": start, "stop": stop, "e": (rng.random(n) < 0.6).astype(int),
                       "x": rng.integers(0, 3, n).astype(float), "s": rng.integers(0, 2, n)})
    fit = fit_cox(df, start="start", stop="stop", event="e", covariates=["x"], strata="s")
    eta = df["x"].to_numpy() * fit.table["coef"].iloc[0]
    good = total = 0.0
    for i in np.flatnonzero(df["e"]):
        t = stop[i]
        at = ((df["s"] == df["s"][i]) & (start < t) & (t <= stop)
              & ~((df["e"] == 1) & (stop == t))).to_numpy()
        good += np.sum(eta[at] < eta[i]) + 0.5 * np.sum(eta[at] == eta[i])
        total += at.sum()
    assert fit.concordance() == pytest.approx(good / total, rel=1e-12)


def test_efron_is_the_default_and_differs_from_breslow_with_ties() -> None:
    """With tied times Efron's and Breslow's likelihoods differ; Efron is the default (R,
    lifelines)."""
    df = _units(3)
    df["T"] = np.ceil(df["T"] * 4) / 4
    default = fit_cox(df, duration="T", event="E", covariates=["a", "b"])
    efron = fit_cox(df, duration="T", event="E", covariates=["a", "b"], ties="efron")
    breslow = fit_cox(df, duration="T", event="E", covariates=["a", "b"], ties="breslow")
    assert default.ties == "efron" and default.log_likelihood == efron.log_likelihood
    assert abs(efron.table["coef"].iloc[0] - breslow.table["coef"].iloc[0]) > 1e-3
    ref = CoxPHFitter().fit(df[["a", "b", "T", "E"]], "T", "E", fit_options=TIGHT)
    _compare(efron, ref)
