"""Failure-risk prediction against the simulator's truth: planted precursors and the null.

The simulator plants precursor bursts before 80 % of GPU, network and host-memory failures
(``precursor_fraction``); in the null variant the same bursts fall on random nodes at random
times.  A predictor must find the planted lift, and find none in the null.
"""

from __future__ import annotations

import numpy as np
import pytest

import reliab
from reliab._checks import failures
from reliab.datasets import simulate_cluster
from reliab.datasets._simulate import default_rates

pytestmark = pytest.mark.slow


def _run(tmp_path_factory, null: bool):
    rates = {k: 6 * v for k, v in default_rates(1024 / 16384, 1.0).items()}
    rates["Planned"] = 5.0
    sim = simulate_cluster(n_gpus=1024, days=54, seed=3, rates=rates, precursor_fraction=0.8,
                           precursor_null=null)
    folder = tmp_path_factory.mktemp("null" if null else "planted")
    sim.write(folder)
    data = reliab.ingest(folder)
    return sim, reliab.predict_failures(data, horizon="7d", n_boot=100, seed=0), folder, data


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return _run(tmp_path_factory, null=False)


@pytest.fixture(scope="module")
def null(tmp_path_factory):
    return _run(tmp_path_factory, null=True)


def test_precursors_are_planted_before_failures_only_in_the_planted_run(planted, null):
    sim = planted[0]
    p = sim.precursors
    assert len(p) > 10
    assert (p["last"] < p["failure_time"]).all()
    assert ((p["failure_time"] - p["first"]).dt.total_seconds() <= 7 * 86400 + 120).all()
    assert null[0].precursors["failure_time"].isna().all()
    # same burst sizes in both variants: the null keeps the marginal rate
    assert abs(len(null[0].precursors) - len(p)) <= 0.3 * len(p)


def test_planted_lift_is_recovered_above_the_baselines(planted):
    r = planted[1]
    assert not failures(r)
    est, lo, _ = r.metric("hazard", "auroc")
    assert lo > 0.5
    k = r.at_k.set_index(["model", "k"])
    best = max(k.loc[("boosted", 10), "lift"], k.loc[("hazard", 10), "lift"])
    model = "boosted" if k.loc[("boosted", 10), "lift"] >= best else "hazard"
    assert k.loc[(model, 10), "lift_low"] > 1.0  # a lift with its interval above 1
    for base in ("lemon", "past_rate"):
        assert best > 2 * k.loc[(base, 10), "lift"]
    # the planted ECC family carries the largest rate ratio, its interval well above 1
    rr = r.rate_ratios.set_index("term")
    assert rr.loc["ecc in last 7 d", "low"] > 3


def test_null_simulation_gives_chance(null):
    r = null[1]
    assert not failures(r)
    for model in ("boosted", "hazard", "correctable_7d"):
        _, lo, hi = r.metric(model, "auroc")
        assert lo <= 0.5 <= hi, model


def test_result_contract(planted):
    r = planted[1]
    d = r.to_dict()
    assert d["type"] == "FailureRiskResult" and d["summary"]
    assert r.risk["probability"].is_monotonic_decreasing
    assert np.all((r.risk["low"] <= r.risk["probability"]) & (r.risk["probability"] <= r.risk["high"]))
    fig = r.plot()
    assert [a.get_title() for a in fig.axes] == ["Calibration (out of sample)", "Precision at k",
                                                 "Drain the top k nodes each week (replay)"]


def test_hazard_is_calibrated_in_the_large(planted):
    # out of sample, the mean predicted probability is within a factor 2 of the observed share
    r = planted[1]
    cal = r.calibration[r.calibration["model"] == "hazard"]
    pred = (cal["predicted"] * cal["n"]).sum() / cal["n"].sum()
    obs = (cal["observed"] * cal["n"]).sum() / cal["n"].sum()
    assert 0.5 < pred / obs < 2.0


def test_cli_writes_the_ranked_risk_table(planted, tmp_path):
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from reliab.cli import app

    folder = planted[2]
    res = CliRunner().invoke(app, ["predict", str(folder), "--horizon", "7d", "--boot", "20",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    risk = pd.read_csv(tmp_path / "out" / "risk.csv")
    assert list(risk.columns[:5]) == ["rank", "unit", "probability", "low", "high"]
    assert risk["probability"].is_monotonic_decreasing
    assert pd.read_parquet(tmp_path / "out" / "risk.parquet")["unit"].tolist() == risk["unit"].tolist()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["horizon_h"] == 168.0
    assert set(pd.read_csv(tmp_path / "out" / "drain.csv")["model"]) >= {"boosted", "lemon"}


def test_cli_names_a_missing_folder(tmp_path):
    from typer.testing import CliRunner

    from reliab.cli import app

    res = CliRunner().invoke(app, ["predict", str(tmp_path / "nothing")])
    assert res.exit_code == 1


def test_drains_through_the_mitigation_replay_are_nested_in_k(planted):
    # the top k of a decision contain the top k-1: the avoided interruptions can only grow
    r = planted[1]
    rp = r.drain_replay
    assert set(rp["model"]) == {"boosted", "hazard", "lemon"}
    for _, g in rp.groupby("model"):
        g = g.sort_values("k")
        assert g["interruptions"].is_monotonic_decreasing
        assert g["saved_gpu_hours"].iloc[0] == pytest.approx(0, abs=1e-6)
        assert g["interruptions"].iloc[-1] < g["interruptions"].iloc[0]


def test_no_feature_sees_past_the_cut_on_simulated_logs(planted):
    """Every signal, interruption, job start and job end at or after the cut moved 3 days later:
    the features at the cut are the same; a window reaching 1 h past the cut is caught."""
    import pandas as pd

    from reliab.predict._features import build_features, collect_events

    data = planted[3]
    cut = pd.Timestamp("2024-07-01T00:00:00Z")

    def later(frame: pd.DataFrame, column: str) -> pd.DataFrame:
        t = frame[column]
        return frame.assign(**{column: t.where(~(t >= cut), t + pd.Timedelta(days=3))})

    jobs = later(later(data.jobs, "start"), "end")
    moved = (later(data.signals, "time"), later(data.interruptions, "time"), jobs)
    for ahead, same in ((0.0, True), (1.0, False)):
        a = build_features(collect_events(data.signals, data.interruptions, data.jobs),
                           pd.DatetimeIndex([cut]), lookahead_h=ahead)
        b = build_features(collect_events(*moved), pd.DatetimeIndex([cut]), lookahead_h=ahead)
        assert a.equals(b) is same
