"""One contract for every public result class (as the parser contract does for parsers).

Every class reliab exports whose instances have ``summary`` is a result.  For each, a factory
below builds one from small inputs and names the call with empty input.  The contract:
``summary()`` returns a new DataFrame each call; ``to_dict()`` survives ``json.dumps``; ``n``,
``conf_level``, ``method`` and ``notes`` are present; ``plot(ax=None)`` returns a Figure (and
draws on a given axes); empty input raises ``InsufficientDataError``; the result renders
through the report's generic path.  A new public result class fails
``test_every_result_class_has_a_factory`` until it is added here.

Also the input checks: bad parameters raise ``ValueError`` naming the
parameter, never a bare arithmetic error, and times closer than floating-point resolution
are ties.  All regression tests.
"""

from __future__ import annotations

import inspect
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import reliab
from reliab import schema
from reliab.errors import InsufficientDataError

T0 = pd.Timestamp("2024-05-01", tz="UTC")
DUR = np.array([54.0, 187.0, 216.0, 240.0, 244.0, 335.0, 361.0, 373.0, 375.0, 386.0, 500.0, 500.0])
OBS = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
GRP = np.array(["a", "b"] * 6)
TIMES = np.array([4.0, 15.0, 40.0, 66.0, 110.0, 150.0, 197.0, 260.0, 300.0])


def _interruptions(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cats = rng.choice(["Faulty GPU", "GPU HBM3 Memory", "Network Switch/Cable"], n)
    comp = {"Faulty GPU": "GPU", "GPU HBM3 Memory": "GPU", "Network Switch/Cable": "Network"}
    df = pd.DataFrame({
        "time": T0 + pd.to_timedelta(np.sort(rng.uniform(0, 24 * 30, n)), unit="h"),
        "job_id": [str(1000 + i) for i in range(n)],
        "hosts": [f"node{int(h):03d}" for h in rng.choice([1, 1, 1, 2, 3, 4, 5, 6, 7, 8], n)],
        "planned": rng.uniform(size=n) < 0.1, "category": cats,
        "component": [comp[c] for c in cats], "attribution": "rule:test",
        "downtime_h": np.nan, "lost_gpu_hours": np.nan,
    })
    return schema.conform(df, "interruptions")


def _signals(interruptions: pd.DataFrame) -> pd.DataFrame:
    df = pd.DataFrame({"time": interruptions["time"], "host": interruptions["hosts"],
                       "source": "kernel", "signal": "xid:79", "severity": "critical",
                       "origin": [f"kern.log:{i}" for i in range(len(interruptions))]})
    return schema.conform(df, "signals")


def _tickets() -> pd.DataFrame:
    texts = {"Faulty GPU": "faulty GPU {g} replaced after it fell off the bus",
             "Power Supply": "power supply PSU{g} failed, replaced",
             "SSD": "SSD nvme{g} failing, disk replaced"}
    rows = [{"message": t.format(g=i % 8)} for t in texts.values() for i in range(8)]
    rows += [{"message": f"GPU {i} dropped off, board RMA"} for i in range(4)]
    df = pd.DataFrame(rows)
    df["time"] = T0 + pd.to_timedelta(np.arange(len(df)), unit="h")
    df["host"], df["source"], df["signal"], df["severity"] = "node001", "tickets", "ticket:incident", "info"
    df["origin"] = [f"tickets.csv:{i + 2}" for i in range(len(df))]
    return schema.conform(df, "signals")


SACCT = "\n".join([
    "JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|NNodes|NodeList|Restarts|AllocTRES",
    "7001|run|svc|train|NODE_FAIL|0:0|2024-05-01T00:00:00|2024-05-01T00:05:00|2024-05-01T09:00:00|2|gpu[001-002]|0|gres/gpu=16,node=2",
    "7002|run|svc|train|COMPLETED|0:0|2024-05-01T09:01:00|2024-05-01T09:20:00|2024-05-01T20:00:00|2|gpu[001-002]|0|gres/gpu=16,node=2",
]) + "\n"


def _job_outcomes(tmp: Path, empty: bool) -> reliab.JobOutcomes:
    path = tmp / "sacct.txt"
    path.write_text(SACCT)
    jobs = reliab.ingest(path, source="sacct").jobs
    return reliab.job_outcomes(schema.empty("signals"), jobs.head(0) if empty else jobs)


def _rates(seed: int, n: int = 30) -> reliab.RatesResult:
    return reliab.estimate_rates(_interruptions(n, seed) if n else _interruptions(1, seed).head(0),
                                 by=["component", "category"], gpu_days=800.0)


def _mcf(events: pd.DataFrame | None = None) -> reliab.MCFResult:
    obs = pd.DataFrame({"unit": ["a", "b", "c"], "start": [0.0, 0.0, 10.0], "end": [100.0, 80.0, 90.0]})
    ev = pd.DataFrame({"unit": ["a", "a", "b", "c"], "time": [10.0, 50.0, 30.0, 60.0]}) if events is None else events
    return reliab.estimate_mcf(ev, obs)


def _cox_frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = rng.normal(size=n)
    return pd.DataFrame({"t": rng.exponential(1 / np.exp(0.5 * x)), "e": rng.uniform(size=n) < 0.8, "x": x})


def _power() -> pd.Series:
    watts = np.r_[np.full(20, 100.0), np.full(20, 700.0), np.full(5, 110.0), np.full(20, 700.0)]
    return pd.Series(watts, index=T0 + pd.to_timedelta(np.arange(watts.size), unit="s"))


def _clocks() -> pd.DataFrame:
    busy = np.arange(40) % 4 != 0
    return pd.DataFrame({"clock_event_reasons_flag": np.where(busy, 4, 1),
                         "power_w": np.where(busy, 690.0, 110.0),
                         "sm_clock_mhz": np.where(busy, 1485.0, 1980.0), "power_limit_w": 700.0})


def _steps() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    temp = 55 + rng.normal(0, 3, 200)
    clock = 1480 - 3.4 * (temp - 55) + rng.normal(0, 2, 200)
    return pd.DataFrame({"time": T0 + pd.to_timedelta(np.arange(200), unit="min"), "temp_c": temp,
                         "sm_clock_mhz": clock, "tflops": 400 * clock / 1480})


def _daily() -> pd.Series:
    t = T0 + pd.to_timedelta(np.arange(24 * 5), unit="h")
    return pd.Series(100 + np.cos(2 * np.pi * np.arange(t.size) / 24), index=t)


def _node_windows() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    temp = np.round(rng.normal(60, 3, 2000), 1)
    return pd.DataFrame({"temp_c_mean": temp, "hours": 1.0,
                         "failures": rng.poisson(0.02 * 1.08 ** (temp - 60))})


def _failure_risk(tmp: Path) -> object:
    """A small simulated fleet (64 nodes, 54 days, failure rates x 8, precursors planted)."""
    from reliab.datasets._simulate import default_rates

    rates = {k: 8 * v for k, v in default_rates(512 / 16384, 1.0).items()}
    sim = reliab.simulate_cluster(n_gpus=512, days=54, seed=2, rates={**rates, "Planned": 3.0},
                                  precursor_fraction=0.8)
    sim.write(tmp)
    return reliab.predict_failures(reliab.ingest(tmp), n_boot=20)


@dataclass(frozen=True)
class Case:
    make: Callable[[Path], object]
    empty: Callable[[Path], object] | None
    why_no_empty: str = ""


CASES: dict[str, Case] = {
    "MTBFResult": Case(lambda _: reliab.estimate_mtbf(5, 1000.0), lambda _: reliab.estimate_mtbf(0, 0.0)),
    "RatesResult": Case(
        lambda _: reliab.estimate_rates(_interruptions(), gpu_days=800.0, job_hours=720.0),
        lambda _: reliab.estimate_rates(_interruptions().head(0), exposure=schema.empty("exposure"))),
    "RateComparison": Case(lambda _: reliab.compare_rates(9, 100.0, 3, 120.0),
                           lambda _: reliab.compare_rates(0, 100.0, 0, 100.0)),
    "WeibullFit": Case(lambda _: reliab.fit_weibull(DUR, OBS), lambda _: reliab.fit_weibull([], None)),
    "ParametricFit": Case(lambda _: reliab.fit_parametric(DUR, OBS, distribution="lognormal"),
                          lambda _: reliab.fit_parametric([], None, distribution="lognormal")),
    "AFTFit": Case(lambda _: reliab.fit_aft(_cox_frame(), "x", duration="t", event="e"),
                   lambda _: reliab.fit_aft(_cox_frame().head(0), "x", duration="t", event="e")),
    "GenGammaFit": Case(lambda _: reliab.fit_gengamma(DUR, OBS), lambda _: reliab.fit_gengamma([])),
    "Weibull3Fit": Case(lambda _: reliab.fit_weibull3(DUR, OBS), lambda _: reliab.fit_weibull3([])),
    "DistributionComparison": Case(lambda _: reliab.compare_distributions(DUR, OBS),
                                   lambda _: reliab.compare_distributions([], None)),
    "TurnbullResult": Case(lambda _: reliab.estimate_turnbull([0, 0, 1, 2], [2, 2, 3, 4]),
                           lambda _: reliab.estimate_turnbull([], [])),
    "KaplanMeierResult": Case(lambda _: reliab.estimate_kaplan_meier(DUR, OBS),
                              lambda _: reliab.estimate_kaplan_meier([], None)),
    "KaplanMeierGroups": Case(lambda _: reliab.estimate_kaplan_meier(DUR, OBS, groups=GRP),
                              lambda _: reliab.estimate_kaplan_meier([], None, groups=[])),
    "LogRankResult": Case(lambda _: reliab.logrank_test(DUR, OBS, GRP),
                          lambda _: reliab.logrank_test([], None, [])),
    "RMSTResult": Case(lambda _: reliab.estimate_rmst(DUR, OBS, tau=400.0, groups=GRP),
                       lambda _: reliab.estimate_rmst([], None, tau=400.0)),
    "FineGrayFit": Case(lambda _: reliab.fit_fine_gray(DUR, np.where(OBS == 1, np.arange(12) % 2 + 1, 0),
                                                       {"x": np.arange(12.0) % 3}, cause=1),
                        lambda _: reliab.fit_fine_gray([], [], {"x": []}, cause=1)),
    "GrayTestResult": Case(lambda _: reliab.gray_test(DUR, np.where(OBS == 1, np.arange(12) % 2 + 1, 0), GRP),
                           lambda _: reliab.gray_test([], [], [])),
    "NelsonAalenResult": Case(lambda _: reliab.estimate_nelson_aalen(DUR, OBS),
                              lambda _: reliab.estimate_nelson_aalen([], None)),
    "CoxFit": Case(lambda _: reliab.fit_cox(_cox_frame(), duration="t", event="e", covariates=["x"]),
                   lambda _: reliab.fit_cox(_cox_frame().head(0), duration="t", event="e", covariates=["x"])),
    "CumulativeIncidenceResult": Case(
        lambda _: reliab.estimate_cumulative_incidence(DUR, np.where(OBS == 1, np.arange(12) % 2 + 1, 0)),
        lambda _: reliab.estimate_cumulative_incidence([], [])),
    "MCFResult": Case(lambda _: _mcf(), lambda _: _mcf(pd.DataFrame({"unit": [], "time": []}))),
    "MCFComparison": Case(lambda _: reliab.compare_mcf(_mcf(), _mcf()), None,
                          "compares two MCFResults; an empty input already raised in estimate_mcf"),
    "CrowAMSAAResult": Case(lambda _: reliab.fit_crow_amsaa(TIMES, end=320.0),
                            lambda _: reliab.fit_crow_amsaa([], end=320.0)),
    "DuaneResult": Case(lambda _: reliab.fit_duane(TIMES), lambda _: reliab.fit_duane([])),
    "PowerLawNHPPResult": Case(
        lambda _: reliab.fit_power_law_nhpp(
            pd.DataFrame({"unit": [0] * 5 + [1] * 4, "time": np.r_[TIMES[:5], TIMES[5:]]}),
            pd.DataFrame({"unit": [0, 1, 2], "start": 0.0, "end": 320.0, "x": [0.0, 1.0, 1.0]}),
            covariates=["x"]),
        lambda _: reliab.fit_power_law_nhpp(pd.DataFrame({"unit": [], "time": []}),
                                            pd.DataFrame({"unit": [0], "start": 0.0, "end": 1.0}))),
    "TrendTestResult": Case(lambda _: reliab.trend_test(TIMES, end=320.0),
                            lambda _: reliab.trend_test([], end=320.0)),
    "TrendVerdict": Case(
        lambda _: reliab.trend_verdict(tests=[reliab.trend_test(TIMES, end=320.0)],
                                       crow=reliab.fit_crow_amsaa(TIMES, end=320.0),
                                       weibull=reliab.fit_weibull(DUR, OBS)),
        lambda _: reliab.trend_verdict(tests=[])),
    "LemonsResult": Case(
        lambda _: reliab.find_lemons(_signals(i := _interruptions(60)), i, node_hours=720.0),
        lambda _: reliab.find_lemons(schema.empty("signals"), schema.empty("interruptions"),
                                     node_hours=720.0)),
    "JobOutcomes": Case(lambda tmp: _job_outcomes(tmp, False), None,
                        "an empty job table is a valid accounting of zero job ends: ingest relies on "
                        "it for folders without scheduler records"),
    "PeriodComparison": Case(
        lambda _: reliab.compare_periods(_rates(1), _rates(2)),
        lambda _: reliab.compare_periods(_rates(1, 0), _rates(2, 0))),
    "PeriodRatesResult": Case(
        lambda _: reliab.estimate_period_rates([("2024Q1", 10, 900.0), ("2024Q2", 16, 910.0)]),
        lambda _: reliab.estimate_period_rates([])),
    "TicketSuggestions": Case(lambda _: reliab.suggest_ticket_categories(_tickets(), cv=3),
                              lambda _: reliab.suggest_ticket_categories(schema.empty("signals"))),
    # environment (reliab.models.environment)
    "PowerSwingResult": Case(lambda _: reliab.analyze_power_swings(_power(), min_step_w=300),
                             lambda _: reliab.analyze_power_swings(_power().iloc[:0], min_step_w=300)),
    "ClockEventSummary": Case(lambda _: reliab.summarize_clock_events(_clocks()),
                              lambda _: reliab.summarize_clock_events(_clocks().head(0))),
    "ThroughputFit": Case(
        lambda _: reliab.fit_throughput(_steps(), throughput="tflops", mediators=["sm_clock_mhz"]),
        lambda _: reliab.fit_throughput(_steps().head(0), throughput="tflops")),
    "DiurnalResult": Case(lambda _: reliab.diurnal_amplitude(_daily(), temperature=_daily(), n_boot=20),
                          lambda _: reliab.diurnal_amplitude(_daily().iloc[:0])),
    "FailureRiskResult": Case(_failure_risk, lambda _: reliab.predict_failures(
        {"signals": schema.empty("signals"), "interruptions": schema.empty("interruptions")})),
    "FailureGLMFit": Case(lambda _: reliab.fit_failure_glm(_node_windows(), ["temp_c_mean"]),
                          lambda _: reliab.fit_failure_glm(_node_windows().head(0), ["temp_c_mean"])),
}


def _result_classes() -> list[str]:
    names = []
    for name in reliab.__all__:
        obj = getattr(reliab, name)
        if inspect.isclass(obj) and callable(getattr(obj, "summary", None)) and name != "IngestResult":
            names.append(name)
    return sorted(names)


def test_every_result_class_has_a_factory() -> None:
    """Regression: a new public result class must join this contract."""
    missing = sorted(set(_result_classes()) - set(CASES))
    assert not missing, f"add a Case for {missing}"


@pytest.fixture(params=sorted(CASES), scope="module")
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[str, object, Case]:
    spec = CASES[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return request.param, spec.make(tmp_path_factory.mktemp("case")), spec


def test_is_the_class_it_claims(case) -> None:
    name, result, _ = case
    assert type(result).__name__ == name and isinstance(result, getattr(reliab, name))


def test_summary_is_a_new_frame(case) -> None:
    _, result, _ = case
    a, b = result.summary(), result.summary()
    assert isinstance(a, pd.DataFrame) and a is not b
    if len(a.columns):
        a.drop(columns=a.columns[0], inplace=True)  # changing one copy leaves the result untouched
        pd.testing.assert_frame_equal(b, result.summary())


def test_contract_attributes(case) -> None:
    _, result, _ = case
    assert isinstance(result.n, int) and result.n >= 0
    assert result.conf_level is None or 0 < result.conf_level < 1
    assert isinstance(result.method, str) and result.method
    assert isinstance(result.notes, tuple) and all(isinstance(n, str) for n in result.notes)


def test_to_dict_is_json(case) -> None:
    name, result, _ = case
    d = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert d["type"] == name
    for key in ("n", "conf_level", "method", "notes"):
        assert key in d


def test_plot_returns_a_figure_and_uses_the_axes(case) -> None:
    _, result, _ = case
    fig = result.plot()
    assert isinstance(fig, Figure) and fig.axes
    other = Figure()
    ax = other.add_subplot()
    assert result.plot(ax=ax) is other


def test_empty_input_raises(case, tmp_path: Path) -> None:
    name, _, spec = case
    if spec.empty is None:
        assert spec.why_no_empty
        pytest.skip(f"{name}: {spec.why_no_empty}")
    with pytest.raises(InsufficientDataError):
        spec.empty(tmp_path)


def test_renders_through_the_generic_report_path(case) -> None:
    from reliab.report import build_report, render_html

    name, result, _ = case
    html = render_html(build_report({name: result}, title="contract"))
    assert result.method.split(";")[0][:20].replace("&", "&amp;").replace("'", "&#39;") in html
    assert "<svg" in html


# ------------------------------------------------------------------ renames and aliases
@pytest.mark.parametrize("old, new", [("crow_amsaa", "fit_crow_amsaa"),
                                      ("cumulative_incidence", "estimate_cumulative_incidence")])
def test_old_names_warn_and_forward(old: str, new: str) -> None:
    args = (TIMES,) if "crow" in old else (DUR, np.where(OBS == 1, 1, 0))
    with pytest.warns(FutureWarning, match=new):
        got = getattr(reliab, old)(*args)
    assert type(got) is type(getattr(reliab, new)(*args))


def test_trend_test_alpha_is_deprecated_for_conf_level() -> None:
    with pytest.warns(FutureWarning, match="conf_level"):
        old = reliab.trend_test(TIMES, end=320.0, alpha=0.1)
    new = reliab.trend_test(TIMES, end=320.0, conf_level=0.9)
    assert old.conf_level == pytest.approx(new.conf_level) and old.pvalue == new.pvalue


@pytest.mark.parametrize("make, old, new", [
    (lambda: reliab.estimate_kaplan_meier(DUR, OBS), "survival_at", "survival"),
    (lambda: reliab.estimate_nelson_aalen(DUR, OBS), "cumhaz_at", "cumhaz"),
    (lambda: reliab.estimate_nelson_aalen(DUR, OBS), "survival_at", "survival"),
    (lambda: reliab.fit_weibull(DUR, OBS), "survival", "survival"),
    (lambda: reliab.fit_weibull(DUR, OBS), "hazard", "hazard"),
    (lambda: reliab.fit_parametric(DUR, OBS, distribution="lognormal"), "survival", "survival"),
    (lambda: reliab.fit_crow_amsaa(TIMES), "expected_failures", "expected_failures"),
])
def test_one_evaluator_at_t(make, old: str, new: str) -> None:
    """Regression: at(t) is the one way to evaluate at time t; old methods warn and agree."""
    res = make()
    t = np.array([50.0, 200.0])
    with pytest.warns(FutureWarning, match=r"\.at\(t\)"):
        legacy = np.asarray(getattr(res, old)(t), dtype=float)
    np.testing.assert_allclose(legacy, res.at(t)[new].to_numpy(), rtol=1e-12)


def test_time_indexed_results_share_at() -> None:
    cif = reliab.estimate_cumulative_incidence(DUR, np.where(OBS == 1, np.arange(12) % 2 + 1, 0))
    for res in (reliab.estimate_kaplan_meier(DUR, OBS), reliab.fit_weibull(DUR, OBS), cif, _mcf(),
                reliab.fit_crow_amsaa(TIMES)):
        out = res.at([10.0, 100.0])
        assert isinstance(out, pd.DataFrame) and "time" in out.columns


# ------------------------------------------------------------------ inputs
def test_crow_amsaa_extreme_scales_are_not_arithmetic_errors() -> None:
    """Regression: 1e-300 / 1e300 times used to raise ZeroDivisionError / OverflowError."""
    for times in ([1e-300, 2e-300, 5e-300], [1e-300, 1.0, 1e300], [1e300, 1.5e300, 1.7e300]):
        res = reliab.fit_crow_amsaa(times)
        assert math.isfinite(res.beta) and res.beta > 0
        json.dumps(res.to_dict())
        assert np.isfinite(res.at([times[1]])["expected_failures"]).all()


def test_times_closer_than_resolution_are_ties() -> None:
    """Regression: two times 1e-15 apart gave beta = 1.8e15; they are one tie, so beta is
    not identifiable; a third distinct time gives an ordinary estimate."""
    with pytest.raises(InsufficientDataError, match="equal"):
        reliab.fit_crow_amsaa([1.0, 1.0 + 1e-15])
    res = reliab.fit_crow_amsaa([1.0, 1.0 + 1e-15, 3.0])
    assert res.beta < 10
    same = reliab.fit_crow_amsaa([1.0, 1.0, 3.0])
    assert res.beta == same.beta
    assert reliab.trend_test([1.0, 1.0 + 1e-15, 3.0]).statistic == reliab.trend_test([1.0, 1.0, 3.0]).statistic


def test_fit_weibull_over_300_decades() -> None:
    """Regression: a 1e-300 ... 1e300 sample raised a bare OverflowError."""
    x = np.geomspace(1e-300, 1e300, 12)
    rng = np.random.default_rng(0)
    for obs in (None, (rng.uniform(size=12) < 0.7).astype(int) | (np.arange(12) < 3)):
        fit = reliab.fit_weibull(x, obs)
        summary = fit.summary()
        assert fit.shape > 0 and "mean_life" in summary.index
        json.dumps(fit.to_dict())


@pytest.mark.parametrize("kwargs, name", [
    ({"gpu_days": math.inf}, "gpu_days"), ({"gpu_days": -1.0}, "gpu_days"),
    ({"gpu_days": float("nan")}, "gpu_days"), ({"gpu_days": 100.0, "job_hours": 0}, "job_hours"),
    ({"gpu_days": 100.0, "job_hours": math.inf}, "job_hours"),
    ({"gpu_days": 100.0, "gpus_per_node": 0}, "gpus_per_node"),
    ({"node_days": 10.0, "gpus_per_node": 0}, "gpus_per_node"),
    ({"gpu_days": 100.0, "conf_level": 1.0}, "conf_level"),
])
def test_estimate_rates_rejects_bad_parameters(kwargs: dict, name: str) -> None:
    """Regression: gpu_days=inf and job_hours=0 were accepted (MTTI 0 [0, 0]);
    gpus_per_node=0 raised ZeroDivisionError."""
    with pytest.raises(ValueError, match=name):
        reliab.estimate_rates(_interruptions(), **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"gpu_days": pd.Series({"a": 10.0, "b": math.inf})}, r"gpu_days must be finite and > 0; got \{'b': inf\}"),
    ({"gpu_days": pd.Series({"a": 10.0, "b": 0.0})}, r"gpu_days must be finite and > 0; got \{'b': 0.0\}"),
    ({"gpu_days": 10.0, "job_hours": pd.Series({"a": 1.0})}, "job_hours as a Series"),
    ({"gpu_days": pd.Series({"a": 10.0, "b": 5.0}), "job_hours": pd.Series({"a": 1.0, "b": 0.0})},
     r"job_hours must be finite and > 0; got \{'b': 0.0\}"),
])
def test_per_group_exposure_is_checked(kwargs: dict, match: str) -> None:
    """Regression: an infinite per-group exposure was refused as "got {}"; a per-group
    job_hours of 0 or beside a scalar gpu_days was a bare broadcasting error."""
    interruptions = pd.DataFrame({"category": ["a", "b"], "component": ["x", "y"], "planned": [False, False]})
    with pytest.raises(ValueError, match=match):
        reliab.estimate_rates(interruptions, **kwargs)


@pytest.mark.parametrize("call, name", [
    (lambda: reliab.compare_rates(3, math.inf, 2, 10.0), "exposure1"),
    (lambda: reliab.compare_rates(3, 10.0, 2, 0.0), "exposure2"),
    (lambda: reliab.compare_rates(-1, 10.0, 2, 10.0), "count1"),
    (lambda: reliab.estimate_mtbf(3, math.inf), "hours"),
    (lambda: reliab.fit_crow_amsaa([1.0, math.nan]), "times"),
    (lambda: reliab.fit_crow_amsaa([1.0, 2.0], end=math.inf), "end"),
    (lambda: reliab.trend_test([-1.0, 2.0]), "times"),
    (lambda: reliab.trend_test([1.0, 2.0], conf_level=0.0), "conf_level"),
    (lambda: reliab.fit_weibull([1.0, math.inf], None), "durations"),
    (lambda: reliab.estimate_kaplan_meier([1.0, 2.0], None, conf_level=2), "conf_level"),
    (lambda: reliab.find_lemons(_signals(i := _interruptions()), i, node_hours=-5.0), "node_hours"),
    (lambda: reliab.find_lemons(_signals(i := _interruptions()), i, node_hours=5.0, fdr=0), "fdr"),
])
def test_bad_parameters_name_themselves(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()
