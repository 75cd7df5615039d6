"""Optimum checkpoint interval (Young 1974, Daly 2006) and the what-if plan."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

import reliab
from reliab.models.jobs._failures import node_model
from reliab.models.jobs.ettr import renewal_ettr

REF = pd.read_csv(Path(__file__).parent / "reference" / "job_reliability.csv").set_index("key")


@pytest.mark.parametrize(("key", "mtti_h"), [("daly_fig3_tau_min", 24.0), ("daly_fig4_tau_min", 6.0),
                                              ("daly_fig5_tau_min", 0.25)])
def test_daly_worked_optima(key, mtti_h):
    """Reference: Daly (2006) Figs. 3-5, delta = 5 min: tau_opt = 117, 57 and 9.1 min."""
    value, tol = REF.loc[key, ["value", "abs_tol"]]
    got = 60 * reliab.optimal_checkpoint_interval(mtti_h=mtti_h, checkpoint_write_h="5min")
    assert got == pytest.approx(value, abs=tol)


@settings(max_examples=50, deadline=None)
@given(m=st.floats(0.1, 1000.0), delta=st.floats(1e-4, 1.0))
def test_young_minimises_its_first_order_cost(m, delta):
    """Closed form: Young's sqrt(2 delta M) minimises delta/tau + tau/(2M) (numeric minimiser)."""
    young = reliab.optimal_checkpoint_interval(mtti_h=m, checkpoint_write_h=delta, method="young")
    assert young == pytest.approx(math.sqrt(2 * delta * m), rel=1e-12)
    best = minimize_scalar(lambda x: delta / math.exp(x) + math.exp(x) / (2 * m),
                           bounds=(math.log(young) - 5, math.log(young) + 5), method="bounded",
                           options={"xatol": 1e-10})
    assert math.exp(best.x) == pytest.approx(young, rel=1e-4)


def test_llama3_illustration():
    """Closed form: Llama 3 job MTTI 3.093 h with a 1-minute blocking save -> Young ~19.3 min."""
    young = 60 * reliab.optimal_checkpoint_interval(mtti_h=1296 / 419, checkpoint_write_h="1min",
                                                    method="young")
    assert young == pytest.approx(math.sqrt(2 * 1 * 1296 / 419 * 60), rel=1e-12)
    assert round(young, 1) == 19.3


def test_daly_regimes():
    """Daly Eq. 37: tau = M once delta >= 2M; below, it lies under Young's estimate."""
    assert reliab.optimal_checkpoint_interval(mtti_h=1.0, checkpoint_write_h=2.0) == 1.0
    assert reliab.optimal_checkpoint_interval(mtti_h=1.0, checkpoint_write_h=3.0) == 1.0
    for m in (0.5, 3.0, 24.0):
        daly = reliab.optimal_checkpoint_interval(mtti_h=m, checkpoint_write_h=0.1)
        young = reliab.optimal_checkpoint_interval(mtti_h=m, checkpoint_write_h=0.1, method="young")
        assert daly < young


@pytest.mark.parametrize("nodes", [512, 2048, 16384])
def test_daly_is_the_optimum_of_the_exponential_cost_model(nodes):
    """Closed form: Daly's estimate maximises the exact renewal ETTR within 1 %."""
    model = node_model(nodes * 8, 6.5e-3)
    write = 1 / 60
    daly = reliab.optimal_checkpoint_interval(mtti_h=model.mtti_h, checkpoint_write_h=write)
    best = minimize_scalar(lambda x: -renewal_ettr(model, math.exp(x), write, 0.1),
                           bounds=(math.log(daly / 5), math.log(daly * 5)), method="bounded",
                           options={"xatol": 1e-8})
    assert math.exp(best.x) == pytest.approx(daly, rel=0.01)


def test_plan_grid_and_optima():
    plan = reliab.plan_checkpoints(checkpoint_write_h="1min", n_gpus=[4096, 16384],
                                   restarts_h=["2min", "10min"], n_runs=200)
    g = plan.grid
    assert set(g["scenario"]) == {"Llama 3 (Table 5)", "RSC-1", "RSC-2"}
    assert len(g) == 3 * 2 * 2 * 10
    # more GPUs or longer restarts never help
    piv = g.groupby(["scenario", "checkpoint_interval_h", "restart_h"])["ettr"].apply(
        lambda s: s.is_monotonic_decreasing)
    assert piv.all()
    o = plan.optima
    assert len(o) == 3 * 2 * 2
    assert np.allclose(o["daly_h"], o["renewal_optimum_h"], rtol=0.01)
    assert (o["simulated_h"] / o["daly_h"]).between(0.75, 1.33).all()
    llama = o[(o["scenario"] == "Llama 3 (Table 5)") & (o["n_gpus"] == 16384)]
    assert llama["mtti_h"].iloc[0] == pytest.approx(1296 / 419)
    pivot = plan.what_if(scenario="RSC-1", n_gpus=16384)
    assert pivot.shape == (10, 2) and pivot.columns.tolist() == [2.0, 10.0]
    assert plan.plot() is not None
    json.dumps(plan.to_dict())


def test_plan_errors():
    with pytest.raises(ValueError, match="checkpoint_write_h"):
        reliab.plan_checkpoints(checkpoint_write_h=0)
    with pytest.raises(ValueError, match="checkpoint_write_h"):
        reliab.plan_checkpoints(checkpoint_write_h="10min", checkpoint_intervals_h=["5min"])
    with pytest.raises(ValueError, match="n_gpus"):
        reliab.plan_checkpoints(checkpoint_write_h="1min", n_gpus=[0], simulate=False)
    with pytest.raises(ValueError, match="node_failure_rate_per_day"):
        reliab.plan_checkpoints(checkpoint_write_h="1min", node_failure_rate_per_day=-1.0)
    plan = reliab.plan_checkpoints(checkpoint_write_h="1min", n_gpus=[8], simulate=False,
                                   node_failure_rate_per_day=1e-3)
    with pytest.raises(ValueError, match="scenario"):
        plan.what_if(scenario="nope")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"mtti_h": 0, "checkpoint_write_h": 0.1}, "mtti_h"),
    ({"mtti_h": -3, "checkpoint_write_h": 0.1}, "mtti_h"),
    ({"mtti_h": 3, "checkpoint_write_h": 0}, "checkpoint_write_h"),
    ({"mtti_h": 3, "checkpoint_write_h": 0.1, "method": "fast"}, "method"),
])
def test_optimum_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        reliab.optimal_checkpoint_interval(**kwargs)
