"""Observed cost of failures (reliab.failure_cost, the interruptions hook) against truth."""

from __future__ import annotations

import json

import _jobs_fixtures as fx
import numpy as np
import pandas as pd
import pytest

import reliab
from reliab import attribute  # attribution, then the costs (reliab.models.jobs)

LOG_RESOLUTION_H = 1.001 / 3600  # sacct prints whole seconds


@pytest.fixture(scope="module")
def truth():
    return reliab.load_llama3_sample()


@pytest.fixture(scope="module")
def window():
    facts = json.loads((reliab.sample_path() / "cluster.json").read_text())
    return pd.Timestamp(facts["start"]), pd.Timestamp(facts["end"])


@pytest.fixture(scope="module")
def cost(sample_ingest, window):
    return reliab.failure_cost(sample_ingest.interruptions, sample_ingest.jobs, sample_ingest.signals,
                               start=window[0], end=window[1])


def test_hand_built_run():
    """Closed form: the run of tests/_jobs_fixtures.py, costs worked out by hand."""
    jobs, signals = fx.tables()
    res = reliab.failure_cost(fx.interruptions(), jobs, signals, end=fx.at(10))
    assert res.ettr == pytest.approx(0.72)
    assert res.breakdown == pytest.approx({"productive": 7.2, "checkpoint_writes": 0.7,
                                           "lost_work": 0.8, "downtime": 0.9, "restart": 0.4,
                                           "before_first_start": 0.0})
    i = res.interruptions
    assert list(i["lost_work_h"]) == pytest.approx([0.5, 0.3])
    assert list(i["downtime_h"]) == pytest.approx([0.4, 0.5])
    assert list(i["restart_h"]) == pytest.approx([0.2, 0.1])
    assert list(i["lost_gpu_hours"]) == pytest.approx([1.1 * 64, 0.9 * 64])
    assert res.checkpoint_interval_h == pytest.approx(0.9) and res.checkpoint_write_h == pytest.approx(0.1)
    assert res.first_critical.to_dict() == {"node0001": fx.at(2.55)}


def test_attribution_fills_the_columns():
    """The interruptions table out of attribute() carries the same costs and their basis."""
    jobs, signals = fx.tables()
    out = attribute(signals, jobs)
    assert list(out["job_id"]) == ["1", "2"]
    assert list(out["lost_gpu_hours"]) == pytest.approx([1.1 * 64, 0.9 * 64])
    assert list(out["cost_basis"]) == ["checkpoint lines"] * 2
    assert list(out.columns[-3:]) == ["co_occurring", "n_evidence", "n_signals"]


def test_missing_progress_lines_are_stated():
    """Without checkpoint lines: half an assumed interval; without resume lines: restart 0."""
    jobs, signals = fx.tables(checkpoints=False, resumes=False)
    out = attribute(signals, jobs)
    assert list(out["lost_work_h"]) == pytest.approx([0.5, 0.5])  # 60 min / 2
    assert list(out["restart_h"]) == [0.0, 0.0]
    assert out["cost_basis"].iloc[0] == ("no checkpoint lines: assumed every 60 min; "
                                         "no resume lines: restart counted 0")
    res = reliab.failure_cost(fx.interruptions(), jobs, signals, end=fx.at(10),
                              assumed_checkpoint_interval_h="30min")
    assert list(res.interruptions["lost_work_h"]) == pytest.approx([0.25, 0.25])
    assert any("assumed every 30 min" in n for n in res.notes)


def test_no_restart_and_no_gpu_count():
    jobs, signals = fx.tables()
    last = attribute(signals, jobs[jobs["job_id"] != "3"].assign(ngpus=pd.array([64, pd.NA], dtype="Int64")))
    b = last.iloc[1]
    assert np.isnan(b["downtime_h"]) and np.isnan(b["lost_gpu_hours"])
    assert "no later job in the chain: downtime unknown" in b["cost_basis"]
    assert "job has no GPU count" in b["cost_basis"]


def test_sample_costs_equal_generator_truth(sample_ingest, truth):
    """Truth: per interruption, downtime, restart and lost work within the logs' 1-s time
    resolution; lost GPU-hours (which depend only on log-line times) to 1e-6 relative."""
    costs = truth["costs"]
    got = sample_ingest.interruptions.set_index(sample_ingest.interruptions["job_id"].astype(str))
    got = got.loc[costs["job_id"].astype(str)]
    assert (got["category"].astype(str).to_numpy() == costs["category"].astype(str).to_numpy()).all()
    for col in ("downtime_h", "restart_h", "lost_work_h"):
        assert np.abs(got[col].to_numpy() - costs[col].to_numpy()).max() <= LOG_RESOLUTION_H, col
    assert np.allclose(got["lost_gpu_hours"].to_numpy(), costs["lost_gpu_hours"].to_numpy(), rtol=1e-6, atol=0)
    assert set(got["cost_basis"]) == {"checkpoint lines"}


def test_sample_ettr_and_category_totals_equal_truth(cost, truth, window):
    """Truth: the run's ETTR and lost GPU-hours per category equal the generator's."""
    c, ck = truth["costs"], truth["checkpoints"]
    wall = (window[1] - window[0]) / pd.Timedelta(hours=1)
    startup = 5 / 60  # the first allocation's checkpoint load
    lost = c["lost_work_h"] + c["downtime_h"] + c["restart_h"]
    true_ettr = 1 - (lost.sum() + ck["write_s"].sum() / 3600 + startup) / wall
    assert cost.ettr == pytest.approx(true_ettr, abs=1e-6)
    by_cat = cost.summary().set_index("category")["lost_gpu_hours"].drop("Total")
    expected = c.groupby("category")["lost_gpu_hours"].sum()
    pd.testing.assert_series_equal(by_cat.sort_index(), expected.sort_index(), rtol=1e-6,
                                   check_names=False)
    assert cost.checkpoint_interval_h == pytest.approx(29 / 60) and cost.checkpoint_write_h == pytest.approx(1 / 60)


def test_summaries_add_up(cost):
    total = cost.lost_gpu_hours
    for by in ("category", "component", "week", "quarter"):
        s = cost.summary(by=by)
        assert s.iloc[-1][by] == "Total"
        assert s.iloc[-1]["lost_gpu_hours"] == pytest.approx(total)
        assert s.iloc[:-1]["lost_gpu_hours"].sum() == pytest.approx(total)
        assert s.iloc[-1]["interruptions"] == 466
    assert cost.wall()["hours"].sum() == pytest.approx(cost.wall_h)
    assert cost.summary(by="quarter")["quarter"].tolist() == ["2024Q2", "2024Q3", "Total"]
    with pytest.raises(ValueError, match="by must be"):
        cost.summary(by="day")


def test_result_api(cost):
    json.dumps(cost.to_dict())
    assert "FailureCostResult" in cost._repr_html_()
    assert cost.plot() is not None and cost.plot(by="component") is not None


def test_errors():
    jobs, signals = fx.tables()
    with pytest.raises(ValueError, match="job_name"):
        reliab.failure_cost(fx.interruptions(), jobs, signals, job_name="other")
    with pytest.raises(ValueError, match="assumed_checkpoint_interval_h"):
        reliab.failure_cost(fx.interruptions(), jobs, signals, assumed_checkpoint_interval_h=-1)
    with pytest.raises(ValueError, match="ends"):
        reliab.failure_cost(fx.interruptions(), jobs, signals, start=fx.at(5), end=fx.at(1))


def test_checkpoint_lines_match_the_generators_checkpoints(sample_ingest, truth):
    """Truth: every checkpoint the generator wrote is read back from the training logs, at
    its time to the logs' millisecond resolution, with its 60-s write."""
    s = sample_ingest.signals
    saves = s[s["signal"].astype(str) == "train:checkpoint_saved"]
    ck = truth["checkpoints"]
    assert len(saves) == len(ck)
    got = np.sort(saves["time"].astype("int64").to_numpy())
    want = np.sort(pd.to_datetime(ck["time"], utc=True).astype("int64").to_numpy())
    assert np.abs(got - want).max() < 1e6  # ns
    assert set(saves["message"].astype(str).str.extract(r"write_s=(\S+)")[0]) == {"60"}
    loads = s[s["signal"].astype(str) == "train:checkpoint_loaded"]
    assert len(loads) == len(truth["costs"]) + 1  # every allocation of the run resumed once


def test_requeued_job_keeps_its_id(tmp_path):
    """Regression: a job requeued by Slurm keeps its job id (``sacct --duplicates`` lists each
    run); two interrupted runs of one id crashed failure_cost (and ``reliab report``) with
    pandas' InvalidIndexError.  Each run is its own allocation: closed-form costs with the
    assumed 60-minute checkpoint interval (work lost = min(run, 30 min))."""
    head = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|"
            "Restarts|AllocTRES\n")
    run = ("4312001|4312001|pretrain|svc|train|{state}|0:0|2024-05-31T23:53:00|{start}|{end}|00:00:00|2|"
           "node[0001-0002]|{n}|billing=16,cpu=16,gres/gpu=16,node=2\n")
    runs = [("NODE_FAIL", "2024-06-01T00:00:00", "2024-06-01T00:12:00"),
            ("NODE_FAIL", "2024-06-01T00:18:00", "2024-06-01T01:18:00"),
            ("COMPLETED", "2024-06-01T01:30:00", "2024-06-01T02:00:00")]
    (tmp_path / "sacct.txt").write_text(head + "".join(run.format(state=state, start=start, end=end, n=n)
                                                       for n, (state, start, end) in enumerate(runs)))
    got = reliab.ingest(tmp_path / "sacct.txt")
    assert got.interruptions["job_id"].tolist() == ["4312001", "4312001"]
    res = reliab.failure_cost(got.interruptions, got.jobs, got.signals)
    assert list(res.interruptions["lost_work_h"]) == pytest.approx([0.2, 0.5])
    assert list(res.interruptions["downtime_h"]) == pytest.approx([0.1, 0.2])
    assert res.breakdown["lost_work"] == pytest.approx(0.7) and res.breakdown["downtime"] == pytest.approx(0.3)
    assert not any("not in the interruptions table" in n for n in res.notes)


def test_costs_read_only_the_timelines_they_need(monkeypatch):
    """Beside 200 completed jobs, the costs build the timeline of the run's three allocations
    alone (B's restart is C, never interrupted) and its hand-worked costs do not move."""
    import reliab.models.jobs._costed as costed

    jobs, signals = fx.tables()
    others = pd.DataFrame([{"job_id": str(100 + k), "name": f"other-{k}", "state": "COMPLETED",
                            "start": fx.at(k / 25), "end": fx.at(k / 25 + 1), "nnodes": 1, "ngpus": 8,
                            "nodelist": "node0100", "origin": f"t:{100 + k}"} for k in range(200)])
    jobs = reliab.schema.conform(pd.concat([jobs, others], ignore_index=True), "jobs")
    seen = []
    real = costed.allocation_progress
    monkeypatch.setattr(costed, "allocation_progress", lambda j, s, **kw: seen.append(j) or real(j, s, **kw))
    out = attribute(signals, jobs)
    assert sorted(seen[0]["job_id"]) == ["1", "2", "3"]
    assert list(out["job_id"]) == ["1", "2"]
    assert list(out["lost_gpu_hours"]) == pytest.approx([1.1 * 64, 0.9 * 64])
    assert list(out["downtime_h"]) == pytest.approx([0.4, 0.5])


def test_needed_allocations_give_the_costs_of_every_allocation():
    """Ties of start and end, zero-length allocations, unnamed jobs, a job named like an
    unnamed one's chain, requeued ids: the costs from the needed allocations are those from all."""
    from reliab.models.jobs._timeline import (
        allocation_progress,
        interruption_costs,
        needed_allocations,
    )

    rng = np.random.default_rng(7)
    n = 400
    start = fx.T0 + pd.to_timedelta(rng.integers(0, 30, n), unit="h")
    names = np.array(["a", "b", "c", None, "job:7"], dtype=object)[rng.integers(0, 5, n)]
    jobs = reliab.schema.conform(pd.DataFrame({
        "job_id": [str(rng.integers(0, 300)) for _ in range(n)], "name": names, "state": "FAILED",
        "start": start, "end": start + pd.to_timedelta(rng.integers(0, 3, n), unit="h"),
        "ngpus": rng.integers(1, 9, n), "origin": "t"}), "jobs")
    jobs.loc[jobs.index[::37], "end"] = pd.NaT
    picked = jobs.iloc[::11].dropna(subset=["end"])
    table = pd.DataFrame({"job_id": picked["job_id"].to_numpy(), "time": picked["end"].to_numpy()})
    _, signals = fx.tables()
    signals = signals.assign(job_id=signals["job_id"].replace({"1": "7", "2": "8", "3": "9"}))
    every = interruption_costs(table, jobs, signals, progress=allocation_progress(jobs, signals))
    mask = needed_allocations(jobs, signals, [table])
    assert mask.sum() < n
    pd.testing.assert_frame_equal(interruption_costs(table, jobs, signals), every)
