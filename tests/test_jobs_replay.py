"""Mitigation replay (reliab.replay_mitigations): hand-worked run and the bundled sample."""

from __future__ import annotations

import json

import _jobs_fixtures as fx
import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.datasets._progress import CHECKPOINT_EVERY_MIN, CHECKPOINT_WRITE_S
from reliab.models.jobs import Scenario


@pytest.fixture(scope="module")
def hand():
    jobs, signals = fx.tables()
    return reliab.failure_cost(fx.interruptions(), jobs, signals, end=fx.at(10))


@pytest.fixture(scope="module")
def sample_cost(sample_ingest):
    facts = json.loads((reliab.sample_path() / "cluster.json").read_text())
    return reliab.failure_cost(sample_ingest.interruptions, sample_ingest.jobs, sample_ingest.signals,
                               start=facts["start"], end=facts["end"])


def _row(result, name):
    return result.table.set_index("scenario").loc[name]


def test_hand_worked_scenarios(hand):
    """Closed form (tests/_jobs_fixtures.py): each replay worked out by hand."""
    res = reliab.replay_mitigations(hand, restart_h=0, drain_after_first_critical=True)
    t = res.table.set_index("scenario")
    assert t.loc["observed", "ettr"] == pytest.approx(0.72)
    # the model with the logged interval (0.9 h) and write (0.1 h) gives the same split
    assert t.loc["replay, observed parameters", "ettr"] == pytest.approx(0.72, abs=1e-12)
    # no restart: 0.6 + 0.6 h of gaps disappear from the wall clock
    assert t.loc["restart in 0 min", "ettr"] == pytest.approx(7.2 / 8.8)
    assert t.loc["restart in 0 min", "lost_gpu_hours"] == pytest.approx((0.5 + 0.3) * 64)
    # draining node0001 after its Xid at 2.55 h avoids the second interruption (4.5 h)
    drain = t.loc["drain after first critical Xid"]
    assert drain["interruptions"] == 1
    assert drain["ettr"] == pytest.approx(7.5 / 9.4)
    assert drain["lost_gpu_hours"] == pytest.approx(1.1 * 64)
    both = t.loc["all of the above"]
    assert both["ettr"] == pytest.approx(7.5 / 8.8)


def test_hand_worked_checkpoint_change(hand):
    """Closed form: checkpoints every 0.4 h of training with 0.1-h blocking writes."""
    res = reliab.replay_mitigations(hand, checkpoint_interval_h=0.4)
    row = _row(res, "checkpoint every 24 min")
    # running times 2.5, 1.3 (interrupted) and 4.9 (censored); cycle 0.5 h
    productive = 5 * 0.4 + 2 * 0.4 + (4.9 - 9 * 0.1 - 0.0)
    assert row["ettr"] == pytest.approx(productive / 10)
    lost = (2.5 - 2.5) + (1.3 - 1.0)
    assert row["lost_gpu_hours"] == pytest.approx((lost + 0.6 + 0.6) * 64)


def test_replay_with_the_generators_own_parameters_reproduces_the_observed_run(sample_cost):
    """Truth: the sample's generator checkpoints every 30 min (29 min of training + a 60-s
    blocking write); replaying the observed interruptions with exactly those parameters
    gives the observed ETTR and lost GPU-hours."""
    interval = (CHECKPOINT_EVERY_MIN * 60 - CHECKPOINT_WRITE_S) / 3600
    res = reliab.replay_mitigations(sample_cost, scenarios=[Scenario(
        "generator", checkpoint_interval_h=interval, checkpoint_write_h=CHECKPOINT_WRITE_S / 3600,
        blocking_writes=True)])
    row = _row(res, "generator")
    assert row["ettr"] == pytest.approx(sample_cost.ettr, rel=1e-12)
    assert row["lost_gpu_hours"] == pytest.approx(sample_cost.lost_gpu_hours, rel=1e-12)
    assert row["interruptions"] == 466


def test_shorter_restart_gives_higher_ettr(sample_cost):
    res = reliab.replay_mitigations(sample_cost, restart_h="2min")
    row = _row(res, "restart in 2 min")
    assert row["ettr"] > sample_cost.ettr + 0.05
    assert row["lost_gpu_hours"] < sample_cost.lost_gpu_hours
    longer = _row(reliab.replay_mitigations(sample_cost, restart_h="1h"), "restart in 60 min")
    assert longer["ettr"] < sample_cost.ettr


def test_default_menu_with_lemons(sample_ingest, sample_cost):
    lemons = reliab.find_lemons(sample_ingest.signals, sample_ingest.interruptions, node_hours=1296.0)
    res = reliab.replay_mitigations(sample_cost, lemons=lemons)
    t = res.table.set_index("scenario")
    assert t.index[:2].tolist() == ["observed", "replay, observed parameters"]
    assert any(name.startswith("checkpoint at Daly optimum") for name in t.index)
    assert {"restart in 2 min", "non-blocking writes", "drain after first critical Xid"} <= set(t.index)
    lemon_row = t.loc[f"remove {len(lemons.lemons)} lemon node(s)"]
    inter = sample_cost.interruptions
    caused = inter["hosts"].fillna("").str.split(",").apply(lambda h: bool(set(h) & set(lemons.lemons)))
    expected = int((caused & inter["component"].isin(["GPU", "Host", "Network"])).sum())
    assert expected > 0 and lemon_row["interruptions"] == 466 - expected
    assert lemon_row["ettr"] > sample_cost.ettr
    # draining removes only repeat node faults: bounded by the truth's repeats per host
    truth = reliab.load_llama3_sample()["interruptions"]
    hw = truth[truth["component"].isin(["GPU", "Host"]) & truth["host"].notna()]
    repeats = int((hw.groupby("host").size() - 1).sum())
    removed = 466 - t.loc["drain after first critical Xid", "interruptions"]
    assert 0 < removed <= repeats
    assert (t["ettr"].iloc[2:] >= sample_cost.ettr - 1e-12).all()
    assert res.plot() is not None
    json.dumps(res.to_dict())


def test_errors(hand):
    with pytest.raises(ValueError, match="checkpoint_write_h"):
        reliab.replay_mitigations(hand, checkpoint_write_h="2h")
    with pytest.raises(ValueError, match="checkpoint_interval_h"):
        reliab.replay_mitigations(hand, checkpoint_interval_h=0)
    with pytest.raises(ValueError, match="restart_h"):
        reliab.replay_mitigations(hand, restart_h="-2min")


def test_no_checkpoint_lines_is_noted():
    jobs, signals = fx.tables(checkpoints=False)
    cost = reliab.failure_cost(fx.interruptions(), jobs, signals, end=fx.at(10))
    res = reliab.replay_mitigations(cost, restart_h=0.0)
    assert any("assumed interval" in n for n in res.notes)
    assert np.isfinite(res.table["ettr"]).all()
    assert isinstance(res.summary(), pd.DataFrame)


def test_report_section(sample_ingest, sample_cost):
    """The job-level results reach the report through the generic path: the cost under
    'Downtime, lost GPU-hours and ETTR' (and ETTR in the executive summary), the replay under
    'Job-level reliability', each from its summary, method, notes and plot."""
    rates = reliab.estimate_rates(sample_ingest.interruptions, by=["component", "category"],
                                  gpu_days=16_384 * 54, job_hours=1296)
    res = reliab.replay_mitigations(sample_cost)
    report = reliab.build_report({"rates": rates, "job_costs": sample_cost, "replay": res},
                                 ingest=sample_ingest)
    titles = [getattr(b, "title", "") for b in report.section("downtime").blocks]
    assert "Cost of interruptions by category" in titles
    titles = [getattr(b, "title", "") for b in report.section("jobs").blocks]
    assert "What each mitigation would have given" in titles
    html = reliab.report.render_html(report)
    assert "Job-level reliability" in html and f"{100 * sample_cost.ettr:.1f}%" in html
    keys = [s.key for s in report.sections]
    assert keys.index("jobs") == keys.index("downtime") + 1


def test_lemons_given_as_a_result_with_none_flagged(hand):
    class NoLemons:
        lemons: list[str] = []

    res = reliab.replay_mitigations(hand, lemons=NoLemons())
    assert not any(name.startswith("remove") for name in res.table["scenario"])
    res = reliab.replay_mitigations(hand, lemons=["node0001"])
    assert _row(res, "remove 1 lemon node(s)")["interruptions"] == 0


def test_drain_windows_avoid_only_the_interruptions_inside_them(hand):
    """Hand-worked: node0001 drained over [3 h, 6 h) avoids its interruption at 4.5 h, exactly as
    draining it after its Xid at 2.55 h does; drained over [5 h, 6 h) it avoids nothing."""
    res = reliab.replay_mitigations(hand, scenarios=[
        Scenario("drained 3-6 h", drain_windows=(("node0001", fx.at(3), fx.at(6)),)),
        Scenario("drained 5-6 h", drain_windows=(("node0001", fx.at(5), fx.at(6)),)),
        Scenario("other node drained", drain_windows=(("node0002", fx.at(3), fx.at(6)),))])
    t = res.table.set_index("scenario")
    assert t.loc["drained 3-6 h", "interruptions"] == 1
    assert t.loc["drained 3-6 h", "ettr"] == pytest.approx(7.5 / 9.4)
    assert t.loc["drained 5-6 h", "ettr"] == pytest.approx(0.72)
    assert t.loc["other node drained", "interruptions"] == 2
