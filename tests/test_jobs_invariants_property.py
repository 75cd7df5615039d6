"""Property test: every invariant of the job cost, the replay and the plan holds on generated
training runs (allocations, checkpoints, resumes, interruptions a policy may set apart,
windows that cut allocations, every mitigation setting), and on a simulated 64-node week."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab
from reliab._checks import failures
from reliab.schema import conform

T0 = pd.Timestamp("2025-01-06", tz="UTC")


def _at(h: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=round(h, 6))


@st.composite
def runs(draw):
    """(jobs, signals, interruptions, window) of one chain of 1-5 allocations on 8 nodes."""
    n = draw(st.integers(1, 5))
    t, jobs, sig, inter = 0.0, [], [], []
    gpus = draw(st.sampled_from([8, 64, None]))
    resumes, saves = draw(st.booleans()), draw(st.booleans())
    for k in range(n):
        t += draw(st.floats(0.0, 2.0)) if k else 0.0
        dur = draw(st.floats(0.05, 12.0))
        running = k == n - 1 and draw(st.booleans())
        jobs.append({"job_id": str(100 + k), "name": "train", "state": "RUNNING" if running else "NODE_FAIL",
                     "start": _at(t), "end": None if running else _at(t + dur), "nnodes": 1,
                     "ngpus": gpus, "nodelist": "n0001", "origin": f"g:{k}"})
        resume = t + draw(st.floats(0.0, 0.3)) * dur
        if resumes:
            sig.append((resume, "train:checkpoint_loaded", str(100 + k), "via=test", None, "info"))
        if saves:
            every, write_s = draw(st.floats(0.2, 2.0)), draw(st.integers(0, 600))
            for c in np.arange(resume + every, t + dur, every):
                sig.append((float(c), "train:checkpoint_saved", str(100 + k), f"write_s={write_s} via=test",
                            None, "info"))
        if draw(st.booleans()):
            sig.append((t + dur * draw(st.floats(0.0, 1.0)), "xid:79", None, "GPU has fallen off the bus.",
                        "n0001", "critical"))
        if not running and draw(st.booleans()):  # an end a policy may set apart
            inter.append({"time": _at(t + dur), "job_id": str(100 + k), "hosts": "n0001",
                          "planned": False, "category": "Faulty GPU", "component": "GPU"})
        t += dur
    rows = [{"time": _at(h), "host": host, "gpu": "0000:18:00" if host else None, "job_id": job,
             "source": key.split(":")[0], "signal": key, "severity": sev, "message": msg,
             "origin": f"s:{i}"} for i, (h, key, job, msg, host, sev) in enumerate(sig)]
    signals = conform(pd.DataFrame(rows), "signals").sort_values("time", ignore_index=True) if rows \
        else None
    a = draw(st.floats(-1.0, t))
    b = draw(st.floats(max(a, 0.0) + 0.1, t + 3.0))
    window = (_at(a) if draw(st.booleans()) else None, _at(b))
    inter_df = pd.DataFrame(inter, columns=["time", "job_id", "hosts", "planned", "category", "component"])
    return conform(pd.DataFrame(jobs), "jobs"), signals, inter_df, window


mitigations = st.fixed_dictionaries({
    "checkpoint_interval_h": st.none() | st.floats(0.2, 3.0),
    "restart_h": st.none() | st.floats(0.0, 1.0),
    "blocking_writes": st.none() | st.booleans(),
    "drain_after_first_critical": st.booleans(),
})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), mitigation=mitigations)
def test_every_invariant_holds_on_generated_runs(run, mitigation):
    jobs, signals, inter, (start, end) = run
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        cost = reliab.failure_cost(inter, jobs, signals, start=start, end=end)
        assert not failures(cost), failures(cost)
        for res in (reliab.replay_mitigations(cost),
                    reliab.replay_mitigations(cost, **mitigation, lemons=["n0001"])):
            assert not failures(res), failures(res)
            obs = res.table.iloc[0]
            assert obs["ettr"] == pytest.approx(cost.ettr, rel=1e-9, abs=1e-12)
            assert obs["interruptions"] == cost.n == len(cost.interruptions)


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """A 64-node cluster's logs from 2026-07-30 for 14 days, written by reliab's simulator."""
    folder = tmp_path_factory.mktemp("week")
    reliab.datasets.simulate_cluster(n_gpus=512, days=14, start="2026-07-30T00:00:00Z",
                                     counts="expected", seed=3).write(folder)
    return folder


@pytest.mark.parametrize("days", [("2026-08-03", "2026-08-10"), ("2026-08-07", "2026-08-08")])
def test_a_week_window_narrower_than_the_logs(week, days):
    """The README's --window pattern on a week (and a day) inside 14 days of logs: the run
    started before the window and runs past it.  ETTR in [0, 1], equal to the replay's
    baseline, the wall clock split into non-negative hours adding up to the window."""
    res = reliab.ingest(week, policy="training-run")
    start, end = pd.Timestamp(days[0], tz="UTC"), pd.Timestamp(days[1], tz="UTC")
    assert res.jobs["start"].min() < start and res.jobs["end"].max() > end  # logs extend beyond
    cost = reliab.failure_cost(res.interruptions, res.jobs, res.signals, start=start, end=end)
    assert 0.0 <= cost.ettr <= 1.0
    assert cost.wall_h == pytest.approx((end - start) / pd.Timedelta(hours=1))
    assert min(cost.breakdown.values()) >= 0.0
    assert sum(cost.breakdown.values()) == pytest.approx(cost.wall_h)
    assert not failures(cost)
    replay = reliab.replay_mitigations(cost)
    assert not failures(replay)
    assert replay.table["ettr"].between(0.0, 1.0).all()
    assert replay.table.iloc[0]["ettr"] == pytest.approx(cost.ettr, rel=1e-12)
    nb = replay.table.set_index("scenario").loc["non-blocking writes"]
    assert nb["ettr"] > cost.ettr and nb["saved_gpu_hours"] > 0
    # the interruptions inside the window are the ones the cost counts
    when = res.interruptions["time"]
    inside = res.interruptions[(when > start) & (when <= end)]
    assert cost.n == len(inside[inside["job_id"].isin(cost.segments["job_id"])])


@pytest.mark.slow
def test_report_with_a_narrow_window(week, tmp_path):
    """``reliab report --gpus 512 --window ... --policy training-run``: results.json's ETTR in
    [0, 1] and equal to the replay's observed row."""
    import json

    from typer.testing import CliRunner

    from reliab.cli import app

    out = tmp_path / "rep"
    res = CliRunner().invoke(app, ["report", str(week), "--gpus", "512", "--window", "2026-08-03",
                                   "2026-08-10", "--policy", "training-run", "--out", str(out), "--no-pdf"])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())["results"]
    ettr = results["job_costs"]["ettr"]
    assert 0.0 <= ettr <= 1.0
    assert results["replay"]["summary"][0]["ettr"] == pytest.approx(ettr, rel=1e-12)
    assert all(0.0 <= row["ettr"] <= 1.0 for row in results["replay"]["summary"])
    # the headline and the rate tables count the window's interruptions, not the whole log's
    ing = reliab.ingest(week, policy="training-run")
    when = ing.interruptions["time"]
    start, end = pd.Timestamp("2026-08-03", tz="UTC"), pd.Timestamp("2026-08-10", tz="UTC")
    inside = ing.interruptions[(when > start) & (when <= end)]
    assert len(inside) < len(ing.interruptions)  # the logs hold interruptions outside the window
    unexpected = int((~inside["planned"].astype(bool)).sum())
    total = next(r for r in results["rates"]["summary"] if r["category"] == "Total")
    assert total["count"] == unexpected
    assert f"{len(inside):,} interruptions ({unexpected:,} unexpected)" in res.output
