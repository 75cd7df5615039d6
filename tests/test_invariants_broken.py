"""Each invariant family flags a result broken on purpose (a frozen result with one bad value).

The results are first estimated on small hand-made data (where every declared invariant
holds: asserted too), then one number is replaced by an impossible one; the check named for
that rule must fail.  Expectations are the definitions: a probability lies in [0, 1], a
survival curve never rises, incidences of competing causes sum to at most 1, a count is the
sum of its parts and equals rate x exposure, an interval contains its estimate.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab._checks import failures
from reliab.models.environment.clocks import ClockEventSummary
from reliab.models.environment.diurnal import DiurnalResult
from reliab.models.environment.swings import PowerSwingResult
from reliab.models.growth import fit_crow_amsaa
from reliab.models.trend import trend_test


def _failed(result) -> set[str]:
    return {c.name for c in failures(result)}


def _holds(result):
    assert _failed(result) == set(), _failed(result)
    return result


def _broken(result, **changes) -> set[str]:
    return _failed(dataclasses.replace(_holds(result), **changes))


def _with(frame: pd.DataFrame, row: int, column: str, value) -> pd.DataFrame:
    out = frame.copy()
    out.loc[out.index[row], column] = value
    return out


INTER = pd.DataFrame({"category": ["Faulty GPU", "Faulty GPU", "HBM3", "Network switch"],
                      "component": ["GPU", "GPU", "GPU", "Network"],
                      "planned": [False, False, False, False]})
DURATIONS = np.array([2.0, 3.0, 3.0, 5.0, 8.0, 9.0, 12.0, 13.0])
OBSERVED = np.array([1, 1, 0, 1, 1, 0, 1, 1])


def test_rates_counts_shares_and_exposure():
    r = reliab.estimate_rates(INTER, by="category", gpu_days=1000.0)
    tb = r.table
    assert {"groups_sum_to_n", "rate_x_exposure_is_count"} <= _broken(
        r, table=_with(tb, 0, "count", 5))
    assert "shares_in_0_100" in _broken(r, table=_with(tb, 1, "share_pct", 111.5))
    assert "shares_sum_to_100" in _broken(r, table=_with(tb, 1, "share_pct", 40.0))
    assert "rate_per_1k_gpu_days_interval_contains_estimate" in _broken(
        r, table=_with(tb, 0, "rate_per_1k_gpu_days_low", 50.0))
    assert "mtbf_positive" in _broken(r, table=_with(tb, 0, "mtbf_gpu_hours", -1.0))
    assert "total_is_n" in _broken(r, n=5)
    assert "groups_sum_to_n" in _broken(r, n=5)


def test_rate_comparison_and_mtbf():
    cmp = reliab.compare_rates(5, 100.0, 3, 100.0)
    assert "pvalue_in_unit_interval" in _broken(cmp, pvalue=1.2)
    assert "ratio_in_interval" in _broken(cmp, low=cmp.ratio * 1.1)
    m = reliab.estimate_mtbf(4, 1000.0)
    assert "mtbf_in_interval" in _broken(m, low=m.mtbf * 2)
    assert "rate_x_hours_is_failures" in _broken(m, rate=0.5)
    assert "mtbf_positive" in _broken(m, mtbf=float("inf"))  # infinite only with no failure
    assert _failed(reliab.estimate_mtbf(0, 1000.0)) == set()


def test_weibull_parametric_and_ranking():
    w = reliab.fit_weibull(DURATIONS, OBSERVED)
    bad = w.params_wald.copy()
    bad.loc["shape", "low"] = w.shape * 1.5
    assert "wald_interval_contains_estimate" in _broken(w, params_wald=bad)
    assert "failures_at_most_n" in _broken(w, n_failures=w.n + 1)
    p = reliab.fit_parametric(DURATIONS, OBSERVED, distribution="lognormal")
    assert "estimates_finite" in _broken(p, params=_with(p.params, 0, "estimate", np.inf))
    assert "interval_contains_estimate" in _broken(p, params=_with(p.params, 0, "high", -50.0))
    assert "bounds_not_infinite" in _broken(p, params=_with(p.params, 0, "high", np.inf))
    comp = reliab.compare_distributions(DURATIONS, OBSERVED)
    broken = dict(comp.fits)
    broken["lognormal"] = dataclasses.replace(p, aic=float("nan"))
    assert {"aic_finite", "lognormal.estimates_finite"} <= _broken(comp, fits=broken)


def test_survival_never_rises_and_hazard_never_falls():
    km = reliab.estimate_kaplan_meier(DURATIONS, OBSERVED)
    tb = km.table
    assert "survival_estimate_monotone" in _broken(km, table=_with(tb, 3, "survival", 0.99))
    assert "survival_estimate_in_range" in _broken(km, table=_with(tb, 0, "survival", 1.2))
    assert "survival_interval_contains_estimate" in _broken(km, table=_with(tb, 2, "low", 0.999))
    assert "events_sum_to_failures" in _broken(km, n_failures=9)
    na = reliab.estimate_nelson_aalen(DURATIONS, OBSERVED)
    assert "cumhaz_estimate_monotone" in _broken(na, table=_with(na.table, 4, "cumhaz", 0.01))
    assert "cumhaz_estimate_in_range" in _broken(na, table=_with(na.table, 4, "cumhaz", np.nan))


def test_cumulative_incidences_sum_to_at_most_one():
    causes = np.array(["GPU", "GPU", 0, "Network", "GPU", 0, "Network", "GPU"], dtype=object)
    cif = reliab.estimate_cumulative_incidence(DURATIONS, causes)
    tb = cif.table
    last = tb.index[tb["cause"] == "Network"][-1]
    over = tb.copy()
    over.loc[last, ["cif", "high"]] = 0.9
    assert "cif_sum_at_most_1" in _broken(cif, table=over)
    assert "events_sum_to_n_events" in _broken(cif, n_events=99)


def test_mcf_never_falls():
    ev = pd.DataFrame({"unit": ["a", "a", "b", "c"], "time": [1.0, 4.0, 2.0, 3.0]})
    obs = pd.DataFrame({"unit": ["a", "b", "c"], "start": 0.0, "end": [5.0, 6.0, 7.0]})
    m = reliab.estimate_mcf(ev, obs)
    assert "mcf_estimate_monotone" in _broken(m, table=_with(m.table, 2, "mcf", 0.0))
    assert "mcf_interval_contains_estimate" in _broken(m, table=_with(m.table, 1, "high", 0.0))


def test_growth_trend_lemons_and_periods():
    times = [3.0, 10.0, 18.0, 40.0, 41.0, 70.0]
    ca = fit_crow_amsaa(times, end=80.0)
    assert "estimates_positive" in _broken(ca, params=_with(ca.params, 0, "estimate", -0.3))
    tt = trend_test(times, end=80.0)
    assert "pvalue_in_unit_interval" in _broken(tt, pvalue=1.5)
    assert "trend_known" in _broken(tt, trend="sideways")
    assert "statistic_finite" in _broken(tt, statistic=float("inf"))
    pr = reliab.estimate_period_rates([("Q1", 10, 500.0), ("Q2", 4, 400.0)])
    assert "periods_sum_to_lifetime" in _broken(pr, table=_with(pr.table, 0, "count", 11))
    cur = reliab.estimate_rates(INTER, by="category", gpu_days=1000.0)
    prev = reliab.estimate_rates(INTER.iloc[:2], by="category", gpu_days=800.0)
    pc = reliab.compare_periods(cur, prev)
    assert "groups_sum_to_total" in _broken(pc, table=_with(pc.table, 0, "count_current", 7))
    assert "p_q_in_unit_interval" in _broken(pc, table=_with(pc.table, 0, "qvalue", 1.4))


def test_lemons_and_cox():
    from reliab.models.lemons import LemonsResult

    tb = pd.DataFrame({"host": ["n1", "n2"], "failures": [6, 1], "expected": [1.0, 1.0],
                       "ratio": [6.0, 1.0], "ratio_low": [2.2, 0.03], "ratio_high": [13.1, 5.6],
                       "pvalue": [0.0006, 0.63], "qvalue": [0.0012, 0.63],
                       "lemon": [True, False]})
    lem = LemonsResult(table=tb, fleet_rate_per_1k_node_days=1.0, n_nodes=2, n_failures=7, node_hours=100.0, fdr=0.05)
    assert "p_q_in_unit_interval" in _broken(lem, table=_with(tb, 1, "qvalue", 1.3))
    assert "lemons_below_fdr" in _broken(lem, table=_with(tb, 1, "lemon", True))
    assert "ratio_in_interval" in _broken(lem, table=_with(tb, 0, "ratio_high", 5.0))
    df = pd.DataFrame({"t": DURATIONS, "e": OBSERVED, "x": [0, 1, 0, 1, 1, 0, 1, 0.5]})
    cox = reliab.fit_cox(df, duration="t", event="e", covariates=["x"])
    assert "hr_in_interval" in _broken(cox, table=_with(cox.table, 0, "hr_low", 1e6))
    assert "p_in_unit_interval" in _broken(cox, table=_with(cox.table, 0, "p", -0.1))


def test_environment_results():
    d = _make(DiurnalResult, amplitude_pct=1.6, amplitude_low=1.5, amplitude_high=1.7, hour_of_min=21.0,
                      hour_of_max=10.0, temperature_amplitude_c=6.9, share_explained=0.9,
                      share_low=0.8, share_high=0.95, slope_pct_per_c=-0.2, level=100.0,
              cycles=7, missing_share=0.0, period_h=24.0, tz="UTC")
    assert "share_in_unit_interval" in _broken(d, share_explained=1.3, share_high=1.4)
    assert "hours_of_day" in _broken(d, hour_of_max=25.0)
    assert "amplitude_in_interval" in _broken(d, amplitude_low=1.65)
    c = ClockEventSummary(table=pd.DataFrame({"reason": ["sw power cap"], "n_active": [10],
                                              "share_active": [0.25]}), n=40, power_limit_w=None)
    assert "share_active_in_unit_interval" in _broken(
        c, table=_with(c.table, 0, "share_active", 1.5))
    sw = pd.DataFrame({"label": ["up", "Total"], "count": [3, 3], "per_day": [1.5, 1.5],
                       "per_day_low": [0.3, 0.3], "per_day_high": [4.4, 4.4]})
    p = _make(PowerSwingResult, swings=pd.DataFrame(), per_day=pd.DataFrame(), table=sw, n=3, days=2.0,
                         scale=1.0, min_step_w=1e5, grid_limit_mw=None, grid_ramp_mw_per_s=None)
    assert {"labels_sum_to_total", "rate_x_days_is_count"} <= _broken(
        p, table=_with(sw, 1, "count", 4))


def _make(cls, **fields):
    """``cls(**fields)`` with the required contract fields the test does not care about."""
    filler = {"conf_level": 0.95, "method": "m", "n": 1}
    for f in dataclasses.fields(cls):
        if (f.name in filler and f.name not in fields and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING):
            fields[f.name] = filler[f.name]
    return cls(**fields)


@pytest.mark.parametrize("fit", ["throughput", "glm"])
def test_environment_effects(fit):
    if fit == "throughput":
        from reliab.models.environment.throughput import ThroughputFit

        t = pd.DataFrame({"effect": ["total"], "pct_per_c": [-0.23], "se_naive": [0.01],
                          "low_naive": [-0.25], "high_naive": [-0.21], "se_hac": [0.02],
                          "low_hac": [-0.27], "high_hac": [-0.19], "p_hac": [0.001]})
        r = _make(ThroughputFit, table=t, coefficients=pd.DataFrame(), levels=pd.DataFrame(), n=10,
                          n_nodes=1, fixed_effects=False, lags=1, lag_rule="x", mediators=())
        assert "hac_interval_contains_effect" in _broken(r, table=_with(t, 0, "low_hac", -0.1))
        assert "p_in_unit_interval" in _broken(r, table=_with(t, 0, "p_hac", 2.0))
    else:
        from reliab.models.environment.failure_glm import FailureGLMFit

        t = pd.DataFrame({"model": ["poisson"], "term": ["temp"], "estimate": [0.1],
                          "std_error": [0.05], "irr": [np.exp(0.1)], "irr_low": [1.0],
                          "irr_high": [1.22], "z": [2.0], "p_value": [0.045]})
        r = _make(FailureGLMFit, table=t, family="poisson", covariates=("temp",), n=10, n_cells=None,
                          events=12.0, exposure=100.0, alpha=0.0, overdispersion_stat=1.0,
                          overdispersion_p=0.3, lr_alpha_p=0.5)
        assert "irr_positive" in _broken(r, table=_with(t, 0, "irr", -1.0))
        assert "estimates_finite" in _broken(r, table=_with(t, 0, "std_error", np.nan))
