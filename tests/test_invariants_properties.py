"""Property tests: on random small clusters every invariant the results declare holds.

Hypothesis generates interruption tables (categories, components, hosts, planned flags,
GPU-days), lifetimes with censoring and competing causes, event times in a window and
recurrent events per unit; each estimator's result must pass every check it declares
(:func:`reliab._checks.failures` empty).  Counts are also conserved across results: the
per-category and per-component tables have the same total, the number of unexpected
interruptions.  An ``InsufficientDataError`` (too few events) is an allowed outcome, never
an impossible number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import reliab
from reliab._checks import failures
from reliab.errors import InsufficientDataError

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: category -> component, as the taxonomy maps them (a small subset)
CATEGORIES = {"Faulty GPU": "GPU", "HBM3": "GPU", "Network switch": "Network",
              "Host maintenance": "Host", "Software bug": "Software"}


def _ok(result) -> None:
    bad = failures(result)
    assert bad == (), [(c.name, c.detail) for c in bad]


@st.composite
def interruption_tables(draw):
    n = draw(st.integers(0, 30))
    cats = draw(st.lists(st.sampled_from(sorted(CATEGORIES)), min_size=n, max_size=n))
    planned = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    hosts = draw(st.lists(st.sampled_from([f"node{i:02d}" for i in range(8)]),
                          min_size=n, max_size=n))
    frame = pd.DataFrame({"category": cats, "component": [CATEGORIES[c] for c in cats],
                          "planned": planned, "hosts": hosts}).astype(
        {"category": object, "component": object, "planned": bool, "hosts": object})
    gpu_days = draw(st.floats(0.5, 1e6, allow_nan=False))
    return frame, gpu_days


@SETTINGS
@given(interruption_tables(), st.sampled_from([8, 4]), st.floats(1.0, 5000.0))
def test_rates_conserve_counts(table, gpus_per_node, job_hours):
    frame, gpu_days = table
    unexpected = int((~frame["planned"]).sum())
    totals = []
    for by in ("category", "component", ["component", "category"]):
        r = reliab.estimate_rates(frame, by=by, gpu_days=gpu_days, gpus_per_node=gpus_per_node,
                                  job_hours=job_hours)
        _ok(r)
        tb = r.summary()
        totals.append(int(tb.loc[tb[r.by[-1]].astype(str) == "Total", "count"].iloc[0]))
    assert totals == [unexpected] * 3  # interruptions = sum over categories = over components


@SETTINGS
@given(st.dictionaries(st.sampled_from(["Q1", "Q2", "Q3"]), st.integers(0, 40), min_size=1),
       st.floats(1.0, 1e5))
def test_period_rates_and_comparison(counts, gpu_days):
    periods = [(k, v, gpu_days * (i + 1)) for i, (k, v) in enumerate(counts.items())]
    _ok(reliab.estimate_period_rates(periods))
    cur = pd.DataFrame({"category": ["Faulty GPU"] * counts.get("Q1", 0) + ["HBM3"] * 2,
                        "component": "GPU", "planned": False})
    prev = pd.DataFrame({"category": ["Faulty GPU", "HBM3", "HBM3"], "component": "GPU",
                         "planned": False})
    _ok(reliab.compare_periods(reliab.estimate_rates(cur, gpu_days=gpu_days),
                               reliab.estimate_rates(prev, gpu_days=gpu_days * 2)))


@SETTINGS
@given(st.integers(0, 60), st.floats(0.1, 1e6), st.sampled_from(["time", "failure"]))
def test_mtbf(failures_, hours, termination):
    try:
        _ok(reliab.estimate_mtbf(failures_, hours, termination=termination))
    except InsufficientDataError:
        assert failures_ == 0 and termination == "failure"


@st.composite
def lifetimes(draw):
    n = draw(st.integers(3, 40))
    durations = draw(st.lists(st.floats(0.01, 500.0), min_size=n, max_size=n))
    causes = draw(st.lists(st.sampled_from([0, "GPU", "Network", "Host"]), min_size=n, max_size=n))
    entry = draw(st.booleans())
    return np.array(durations), np.array(causes, dtype=object), entry


@SETTINGS
@given(lifetimes())
def test_survival_hazard_and_incidence(data):
    durations, causes, delayed = data
    observed = causes != 0
    assume(observed.sum() >= 1)
    entry = np.round(durations * 0.3, 2) if delayed else None
    _ok(reliab.estimate_kaplan_meier(durations, observed, entry=entry))
    _ok(reliab.estimate_nelson_aalen(durations, observed, entry=entry))
    _ok(reliab.estimate_cumulative_incidence(durations, causes))


@SETTINGS
@given(lifetimes())
def test_weibull(data):
    durations, causes, _ = data
    observed = (causes != 0).astype(int)
    try:
        _ok(reliab.fit_weibull(durations, observed))
    except InsufficientDataError:  # too few failures, or no finite maximum: said so
        pass


@pytest.mark.slow
@settings(SETTINGS, max_examples=8)
@given(lifetimes())
def test_distribution_ranking(data):
    durations, causes, _ = data
    observed = (causes != 0).astype(int)
    assume(observed.sum() >= 2)
    _ok(reliab.compare_distributions(durations, observed))


@SETTINGS
@given(st.lists(st.floats(0.01, 1.0), min_size=3, max_size=40, unique=True),
       st.floats(1.0, 5000.0))
def test_point_process_trend_and_growth(fractions, end):
    times = np.sort(np.array(fractions)) * end
    try:
        _ok(reliab.fit_crow_amsaa(times, end=end))
    except InsufficientDataError:
        pass
    for method in ("laplace", "mil-hdbk-189", "reverse-arrangement"):
        try:
            _ok(reliab.trend_test(times, end=end, method=method))
        except InsufficientDataError:
            pass


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(0.0, 1.0)), min_size=1, max_size=40),
       st.lists(st.floats(10.0, 100.0), min_size=6, max_size=6))
def test_mean_cumulative_function(events, ends):
    units = [f"u{i}" for i in range(6)]
    ev = pd.DataFrame({"unit": [units[u] for u, _ in events],
                       "time": [f * ends[u] for u, f in events]})
    obs = pd.DataFrame({"unit": units, "start": 0.0, "end": ends})
    _ok(reliab.estimate_mcf(ev, obs))


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([128, 256]), st.integers(6, 14))
def test_analyze_on_simulated_clusters(tmp_path_factory, seed, gpus, days):
    """The whole analysis on a simulated week or two of a small cluster: every result shown
    passes its checks (job-level results are checked by their own tests)."""
    from reliab._checks import verify
    from reliab.study import fleet_facts
    from reliab.study._analyses import analyze

    sim = reliab.simulate_cluster(n_gpus=gpus, days=days, seed=seed, telemetry_nodes=1,
                                  noise_lines_per_node_day=0, background_per_node_day=0,
                                  other_jobs_per_day=0)
    folder = tmp_path_factory.mktemp("sim")
    sim.write(folder)
    ingest = reliab.ingest(folder, policy="training-run")
    fleet = fleet_facts(jobs=ingest.jobs, signals=ingest.signals, gpus=gpus)
    mine = {k: v for k, v in analyze(ingest, fleet, policy=ingest.policy).items()
            if k not in ("job_costs", "replay", "job_mttf", "plan")}
    verify(mine, raise_on_failure=True)


@SETTINGS
@given(interruption_tables(), st.lists(st.floats(0.5, 1e5), min_size=len(CATEGORIES),
                                       max_size=len(CATEGORIES)))
def test_rates_with_per_group_exposure(table, exposures):
    frame, _ = table
    gpu_days = pd.Series(exposures, index=sorted(CATEGORIES))
    _ok(reliab.estimate_rates(frame, by="category", gpu_days=gpu_days))


@SETTINGS
@given(st.integers(0, 50), st.integers(0, 50), st.floats(0.1, 1e5), st.floats(0.1, 1e5))
def test_rate_ratio(c1, c2, e1, e2):
    assume(c1 + c2 > 0)
    _ok(reliab.compare_rates(c1, e1, c2, e2))


@SETTINGS
@given(interruption_tables(),
       st.lists(st.tuples(st.sampled_from(["xid:79", "xid:48", "nic:link_down", "ticket:t"]),
                          st.integers(0, 7)), max_size=30),
       st.floats(1.0, 1e4))
def test_lemons(table, signals, hours):
    frame, _ = table
    hosts = [f"node{i:02d}" for i in range(8)]
    inter = frame.assign(job_id=[str(i) for i in range(len(frame))])
    sig = pd.DataFrame({"signal": [s for s, _ in signals], "host": [hosts[h] for _, h in signals]},
                       dtype=object)
    try:
        _ok(reliab.find_lemons(sig, inter, node_hours=pd.Series(hours, index=hosts),
                               anomaly=False))
    except InsufficientDataError:
        pass


@SETTINGS
@given(st.lists(st.tuples(st.floats(0.1, 100.0), st.booleans(), st.floats(-2.0, 2.0),
                          st.integers(0, 1)), min_size=8, max_size=40))
def test_cox(rows):
    df = pd.DataFrame(rows, columns=["t", "e", "x", "z"])
    assume(df["e"].sum() >= 3 and df["z"].nunique() == 2)
    try:
        fit = reliab.fit_cox(df, duration="t", event="e", covariates=["x", "z"])
    except InsufficientDataError:  # no finite maximum: said so, never printed
        return
    _ok(fit)
