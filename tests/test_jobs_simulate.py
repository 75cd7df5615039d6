"""Monte-Carlo job simulator (reliab.models.jobs.simulate) against the closed forms."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.models.jobs import FailureModel, FailureProcess, category_model
from reliab.models.jobs.simulate import simulate_policies

RSC1 = 6.5e-3


def _sim(**kwargs):
    args = {"n_runs": 1500, "seed": 3} | kwargs
    return reliab.simulate_job(**args)


def _within_ci(res, value, slack=3.0):
    half = (res.ettr_high - res.ettr_low) / 2
    return abs(res.ettr - value) <= slack * half + 1e-9


@pytest.mark.parametrize(("shape", "blocking"), [(1.0, True), (0.7, True), (1.5, True), (1.0, False)])
def test_simulator_converges_to_the_renewal_expectation(shape, blocking):
    """Closed form: the simulated mean ETTR matches the exact renewal-reward ETTR (the model
    it samples) within its Monte-Carlo interval, for exponential and Weibull failures."""
    res = _sim(n_gpus=8192, node_failure_rate_per_day=RSC1, shape=shape, checkpoint_interval_h=0.5,
               checkpoint_write_h=2 / 60, restart_h=10 / 60, blocking_writes=blocking, n_runs=4000)
    assert np.isfinite(res.ettr_renewal)
    assert _within_ci(res, res.ettr_renewal)


def _assumption_grid():
    for mttf_days, interval, restart, write in itertools.product(
            (0.2, 0.3, 1.0), (10, 30, 60), (5, 20), (0.0, 1.0)):
        yield mttf_days, interval, restart, write
    for interval, restart in itertools.product((10, 30), (5, 10)):  # the 0.1-day edge
        yield 0.1, interval, restart, 0.0


def test_agrees_with_first_order_form_within_2pp_where_it_holds():
    """Reference claim (Kokolis et al.): the closed form is close to Monte Carlo while the job
    MTTF (N r)^-1 >= 0.1 day.  Exponential failures, RSC study settings (interval <= 60 min,
    restart 5-20 min): within 2 percentage points for (N r)^-1 >= 0.2 day, and at 0.1 day for
    intervals <= 30 min and restarts <= 10 min (see test_where_the_first_order_form_breaks)."""
    worst = 0.0
    for mttf_days, interval, restart, write in _assumption_grid():
        nodes = int(round(1 / (mttf_days * RSC1)))
        res = _sim(n_gpus=8 * nodes, node_failure_rate_per_day=RSC1, checkpoint_interval_h=interval / 60,
                   restart_h=restart / 60, checkpoint_write_h=write / 60, n_runs=800)
        worst = max(worst, abs(res.ettr - res.ettr_first_order))
    assert worst < 0.02


def test_where_the_first_order_form_breaks():
    """The simulator shows where the closed form's assumptions break (> 2 pp off) while it
    still matches the exact renewal expectation: very large N (16k GPUs at the RSC-1 rate,
    MTTF 1.8 h), the 0.1-day edge at 60-min intervals and 20-min restarts, and Weibull
    shape 0.7 failures on 8k GPUs where exponential ones agree."""
    big = _sim(n_gpus=16_384, node_failure_rate_per_day=RSC1, checkpoint_interval_h=1.0,
               restart_h=5 / 60, n_runs=2000)
    assert big.ettr - big.ettr_first_order > 0.03 and _within_ci(big, big.ettr_renewal)
    assert any("0.1 day" in n for n in big.notes)
    edge = _sim(n_gpus=8 * 1538, node_failure_rate_per_day=RSC1, checkpoint_interval_h=1.0,
                restart_h=20 / 60)
    assert edge.ettr - edge.ettr_first_order > 0.04
    common = {"n_gpus": 8192, "node_failure_rate_per_day": RSC1, "checkpoint_interval_h": 1.0,
              "restart_h": 5 / 60, "n_runs": 4000}
    expo, weib = _sim(**common), _sim(shape=0.7, **common)
    assert abs(expo.ettr - expo.ettr_first_order) < 0.015
    assert weib.ettr - weib.ettr_first_order > 0.02
    assert _within_ci(weib, weib.ettr_renewal)


def test_per_category_processes_superpose_to_the_total(sample_ingest):
    """Closed form: independent exponential categories act as one process at the summed rate
    (Table-5 categories of the bundled sample, scaled to 16,384 GPUs)."""
    rates = reliab.estimate_rates(sample_ingest.interruptions, gpu_days=16_384 * 54, job_hours=1296)
    model = category_model(rates, 16_384)
    assert len(model.processes) == 18
    assert model.mtti_h == pytest.approx(1296 / 419, rel=1e-9)
    res = _sim(failures=model, checkpoint_interval_h=0.5, checkpoint_write_h=1 / 60, restart_h=0.25,
               n_runs=3000)
    assert res.interruptions == pytest.approx(1296 / (model.mtti_h + 0.25), rel=0.02)  # renewal cycles
    assert _within_ci(res, res.ettr_renewal)
    mixed = FailureModel(model.processes[:1] + (FailureProcess("burn-in", 0.1, 0.7),))
    assert np.isnan(_sim(failures=mixed, checkpoint_interval_h=0.5, restart_h=0.25, n_runs=50).ettr_renewal)


def test_common_random_numbers_and_seed():
    """Regression: same seed, same numbers; intervals compared on the same failure draws."""
    a = _sim(n_gpus=4096, node_failure_rate_per_day=RSC1, checkpoint_interval_h=0.5, restart_h=0.1, n_runs=200)
    b = _sim(n_gpus=4096, node_failure_rate_per_day=RSC1, checkpoint_interval_h=0.5, restart_h=0.1, n_runs=200)
    assert a.ettr == b.ettr
    model = reliab.models.jobs.node_model(4096, RSC1)
    runs = simulate_policies(model, [0.25, 0.5], write_h=0.0, restart_h=0.1, duration_h=200,
                             n_runs=50, seed=1)
    assert (runs[0.25]["interruptions"] == runs[0.5]["interruptions"]).all()


def test_accounting_adds_up():
    """Property: per run, productive + lost work + restarts + writes = wall time."""
    res = _sim(n_gpus=16_384, node_failure_rate_per_day=RSC1, checkpoint_interval_h=0.3,
               checkpoint_write_h=0.05, restart_h=0.2, queue_h=0.1, n_runs=300)
    r = res.runs
    total = r["ettr"] * res.duration_h + r["lost_work_h"] + r["restart_h"] + r["checkpoint_h"]
    assert np.allclose(total, res.duration_h)
    assert res.lost_gpu_hours == pytest.approx(((r["lost_work_h"] + r["restart_h"]) * 16_384).mean())


def test_result_api():
    res = _sim(n_gpus=1024, node_failure_rate_per_day=RSC1, checkpoint_interval_h="30min",
               restart_h="5min", n_runs=100)
    s = res.summary()
    assert isinstance(s, pd.DataFrame) and s["measure"].iloc[0] == "ettr (mean of runs)"
    assert res.ettr_low <= res.ettr <= res.ettr_high
    json.dumps(res.to_dict())
    assert "SimulationResult" in res._repr_html_()
    assert res.plot() is not None


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_gpus": 0}, "n_gpus"),
    ({"restart_h": -0.1}, "restart_h"),
    ({"checkpoint_interval_h": 0}, "checkpoint_interval_h"),
    ({"checkpoint_write_h": 1.0}, "checkpoint_write_h"),
    ({"queue_h": "-1min"}, "queue_h"),
    ({"n_runs": 1}, "n_runs"),
    ({"duration_h": 0}, "duration_h"),
    ({"node_failure_rate_per_day": None}, "exactly one"),
    ({"shape": 0}, "shape"),
    ({"conf_level": 1.0}, "conf_level"),
])
def test_nonsense_is_a_value_error_naming_the_parameter(kwargs, match):
    args = {"n_gpus": 64, "node_failure_rate_per_day": RSC1, "checkpoint_interval_h": 0.5,
            "restart_h": 0.1, "n_runs": 10} | kwargs
    with pytest.raises(ValueError, match=match):
        reliab.simulate_job(**args)


def test_failures_from_a_weibull_fit():
    """Simulation with known truth: gaps drawn Weibull(0.7) at 2,048 GPUs are fitted with
    reliab.fit_weibull; the model scaled to 4,096 GPUs halves the mean gap, keeps the shape,
    and the simulator run on it matches the renewal expectation."""
    from reliab.models.jobs import fitted_model

    rng = np.random.default_rng(11)
    true = FailureProcess("truth", 1 / 6.0, 0.7)
    gaps = true.draw(rng, (4000,))
    fit = reliab.fit_weibull(gaps, np.ones(len(gaps), dtype=int))
    model = fitted_model(fit, 4096, fitted_gpus=2048)
    assert model.processes[0].shape == pytest.approx(0.7, abs=0.03)
    assert model.mtti_h == pytest.approx(3.0, rel=0.05)
    res = _sim(failures=model, checkpoint_interval_h=0.25, restart_h=0.1, n_runs=2000)
    assert _within_ci(res, res.ettr_renewal)
    with pytest.raises(ValueError, match="fitted_gpus"):
        fitted_model(fit, 4096, fitted_gpus=0)
