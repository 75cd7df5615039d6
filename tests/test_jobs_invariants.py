"""Invariants of the job-level numbers (issue 20): ETTR in [0, 1] under any window, savings that
agree with the ETTR change, replay counts equal to the cost's counts, and no overflow.

Every expectation is worked out by hand on the run of tests/_jobs_fixtures.py (times in hours
from T0, 64 GPUs, 0.1-h blocking writes every 0.9 h of training).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import _jobs_fixtures as fx
import pandas as pd
import pytest

import reliab
from reliab._checks import failures
from reliab.models.jobs import Scenario, expected_ettr
from reliab.models.jobs._segments import split
from reliab.schema import conform


def _cost(*, start=None, end=10.0, inter=None, **kw):
    jobs, signals = fx.tables(**kw)
    return reliab.failure_cost(fx.interruptions() if inter is None else inter, jobs, signals,
                               start=None if start is None else fx.at(start), end=fx.at(end))


def _row(res, name):
    return res.table.set_index("scenario").loc[name]


# --- the window clips every allocation ------------------------------------------------------

def test_window_starting_inside_the_first_allocation():
    """Window 1.6-10 h: A counts from 1.6 (resume 0.1 is before it: no restart in the window),
    its one save in the window is at 2.1 (write 2.0-2.1): productive 0.4, write 0.1, lost 0.5;
    B 0.9 / 0.1 / 0.3 after 0.4 down and 0.2 restart; C 4.5 / 0.4 after 0.5 down, 0.1 restart.
    Productive 5.8 of 8.4 h."""
    res = _cost(start=1.6)
    assert res.wall_h == pytest.approx(8.4)
    assert res.ettr == pytest.approx(5.8 / 8.4)
    assert res.breakdown == pytest.approx({"productive": 5.8, "checkpoint_writes": 0.6,
                                           "lost_work": 0.8, "downtime": 0.9, "restart": 0.3,
                                           "before_first_start": 0.0})
    assert res.interruptions["lost_work_h"].tolist() == pytest.approx([0.5, 0.3])


def test_window_inside_one_allocation_gives_an_ettr_below_one():
    """Window 6-7 h inside C (resumed 5.1): the save at 6.1 (write 6.0-6.1) is the only one in
    the window; the 7.1 save, written 7.0-7.1, is after it.  Productive 0.9 of 1 h."""
    res = _cost(start=6.0, end=7.0)
    assert res.ettr == pytest.approx(0.9)
    assert res.n == 0
    assert not failures(res)


def test_interruptions_outside_the_window_are_not_counted():
    """Window 3-10 h: A's interruption (2.6 h) is before it; B's is in it."""
    res = _cost(start=3.0)
    assert res.n == 1
    assert res.interruptions["job_id"].tolist() == ["2"]
    # B 0.9 + C 4.5 productive, of 7 h
    assert res.ettr == pytest.approx(5.4 / 7.0)


def test_downtime_after_the_last_interruption_counts_to_the_window_end():
    """Window 0-4.8 h: C starts at 5.0, after the window; B's downtime in it is 4.8 - 4.5."""
    res = _cost(end=4.8)
    assert sum(res.breakdown.values()) == pytest.approx(res.wall_h)
    assert res.interruptions["downtime_h"].tolist() == pytest.approx([0.4, 0.3])
    assert res.ettr == pytest.approx((1.8 + 0.9) / 4.8)


# --- replay: the same counts, and savings that agree with the ETTR ---------------------------

def test_replay_observed_row_is_the_cost():
    res = reliab.replay_mitigations(_cost(start=1.6))
    obs = _row(res, "observed")
    assert obs["ettr"] == pytest.approx(5.8 / 8.4)
    assert obs["interruptions"] == 2
    assert obs["lost_gpu_hours"] == pytest.approx((0.5 + 0.4 + 0.2 + 0.3 + 0.5 + 0.1) * 64)


def test_non_blocking_writes_save_what_the_ettr_gains():
    """Non-blocking writes, checkpoint every 0.9 h of training completing 0.1 h later: A (2.5 h)
    keeps 2 x 0.9, B (1.3 h) 1 x 0.9, C (censored) 4.9: productive 7.6 of 10 h (ETTR +4 pp).
    The interruptions lose more work (0.7 and 0.4 instead of 0.5 and 0.3), but training no
    longer pauses: the run spends 64 x 10 x 0.04 = 25.6 GPU-hours more on training."""
    res = reliab.replay_mitigations(_cost(), blocking_writes=False)
    row = _row(res, "non-blocking writes")
    assert row["ettr"] == pytest.approx(0.76)
    assert row["lost_gpu_hours"] == pytest.approx((0.7 + 0.6 + 0.4 + 0.6) * 64)
    assert row["saved_gpu_hours"] == pytest.approx(25.6)
    assert row["not_training_gpu_hours"] == pytest.approx(64 * 10 * 0.24)
    assert _row(res, "observed")["not_training_gpu_hours"] == pytest.approx(64 * 10 * 0.28)


def test_replay_counts_only_the_interruptions_the_cost_counts():
    """B's end is not in the interruptions table (a policy set it apart): the cost counts 1
    interruption (A: 1.1 h x 64), and so must the replay."""
    cost = _cost(inter=fx.interruptions().iloc[:1])
    res = reliab.replay_mitigations(cost, restart_h="2min")
    obs = _row(res, "observed")
    assert cost.n == 1
    assert obs["interruptions"] == 1
    assert obs["lost_gpu_hours"] == pytest.approx(cost.lost_gpu_hours) == pytest.approx(1.1 * 64)
    assert obs["saved_gpu_hours"] == 0
    assert _row(res, "restart in 2 min")["interruptions"] == 1


def test_replay_without_checkpoint_lines_states_its_assumptions():
    """No checkpoint line: a new interval is replayed with the write time assumed 0, and said."""
    cost = _cost(checkpoints=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = reliab.replay_mitigations(cost, checkpoint_interval_h="10min", restart_h="2min",
                                        drain_after_first_critical=True)
    assert res.table["ettr"].between(0, 1).all()
    assert res.table["assumptions"].str.contains("write time 0").all()
    assert any("assumed" in n and "write time" in n for n in res.notes)
    assert not failures(res)


def test_split_refuses_unknown_write_time():
    with pytest.raises(ValueError, match="write"):
        split([1.0, 2.0], 1 / 6, math.nan)


def test_allocation_ending_before_it_starts_is_reported():
    jobs, signals = fx.tables()
    bad = conform(pd.DataFrame([{"job_id": "9", "name": "run", "state": "FAILED",
                                 "start": fx.at(9.5), "end": fx.at(9.2), "ngpus": 64,
                                 "origin": "t:9"}]), "jobs")
    res = reliab.failure_cost(fx.interruptions(), pd.concat([jobs, bad], ignore_index=True), signals,
                              end=fx.at(10))
    assert res.ettr == pytest.approx(0.72)
    assert any("end before they start" in n and "9" in n for n in res.notes)
    assert any("end before they start" in n for n in reliab.replay_mitigations(res).notes)


def test_subnormal_failure_rate_gives_a_finite_ettr():
    """A rate so small that 1/rate overflows: the limit of no failures, I / (I + w)."""
    for rate in (5e-324, 1e-310, 2.2e-308):
        for method in ("renewal", "first-order"):
            value = expected_ettr(n_nodes=1, node_failure_rate_per_day=rate, checkpoint_interval_h=1.0,
                                  checkpoint_write_h=0.1, restart_h=0.1, method=method)
            assert value == pytest.approx(1 / 1.1)
        plan = reliab.plan_checkpoints(checkpoint_write_h=0.1, node_failure_rate_per_day=rate,
                                       n_gpus=(8,), checkpoint_intervals_h=(1.0,), simulate=False)
        assert plan.grid["ettr"].to_numpy() == pytest.approx([1 / 1.1] * len(plan.grid))
        assert not failures(plan)


# --- the invariants fire on the numbers of the bugs ------------------------------------------

def test_cost_invariants_catch_ettr_above_one():
    cost = _cost()
    assert not failures(cost)
    bad = dataclasses.replace(cost, ettr=1.115)
    assert {c.name for c in failures(bad)} >= {"ettr_in_unit_interval"}


def test_cost_invariants_catch_a_breakdown_that_does_not_add_up():
    cost = _cost()
    bad = dataclasses.replace(cost, breakdown={**cost.breakdown, "before_first_start": -8.76})
    assert {c.name for c in failures(bad)} >= {"wall_clock_adds_up", "hours_not_negative"}


def test_cost_invariants_catch_lost_count_mismatch():
    cost = _cost()
    bad = dataclasses.replace(cost, n=3)
    assert "interruptions_conserved" in {c.name for c in failures(bad)}


def test_replay_invariants_catch_the_published_bugs():
    res = reliab.replay_mitigations(_cost())
    assert not failures(res)
    t = res.table.copy()
    t.loc[t["scenario"] == "non-blocking writes", "saved_gpu_hours"] = -108_407.0
    names = {c.name for c in failures(dataclasses.replace(res, table=t))}
    assert {"saved_agrees_with_ettr_change", "saved_is_not_training_difference"} <= names
    t = res.table.copy()
    t.loc[1, "ettr"] = -85_229_949_285_972_928.0
    names = {c.name for c in failures(dataclasses.replace(res, table=t))}
    assert "ettr_in_unit_interval" in names
    t = res.table.copy()
    t.loc[0, "interruptions"] = 10
    assert "observed_counts_equal_cost" in {c.name for c in failures(dataclasses.replace(res, table=t))}


def test_plan_invariants_catch_ettr_out_of_range():
    plan = reliab.plan_checkpoints(checkpoint_write_h="1min", node_failure_rate_per_day=0.0065,
                                   n_gpus=(512,), simulate=False)
    assert not failures(plan)
    g = plan.grid.copy()
    g.loc[0, "ettr"] = math.inf
    assert "ettr_in_unit_interval" in {c.name for c in failures(dataclasses.replace(plan, grid=g))}


def test_generator_scenario_keeps_counts():
    res = reliab.replay_mitigations(_cost(), scenarios=[Scenario("same")])
    assert _row(res, "same")["interruptions"] == 2


def test_window_holding_no_allocation_of_the_run():
    """A window (5-6 h) after the last allocation of a run that ended at 4.5 h: no training,
    ETTR 0, the hour waiting, nothing to replay."""
    jobs, signals = fx.tables()
    jobs = jobs[jobs["job_id"] != "3"]
    res = reliab.failure_cost(fx.interruptions(), jobs, signals, start=fx.at(5.0), end=fx.at(6.0))
    assert res.ettr == 0.0 and res.n == 0
    assert res.breakdown["before_first_start"] == pytest.approx(1.0)
    assert not failures(res)
    rep = reliab.replay_mitigations(res)
    assert rep.table["ettr"].tolist() == [0.0] * len(rep.table)
    assert not failures(rep)
