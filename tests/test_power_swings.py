"""Power swings: detection on synthetic steps, labels from the job timeline, grid-limit counts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from reliab import analyze_power_swings, detect_power_swings, label_power_swings

T0 = pd.Timestamp("2024-06-01T00:00:00Z")


def _steps(levels, hold=20, noise=0.0, seed=0, step_s=1.0) -> pd.Series:
    rng = np.random.default_rng(seed)
    x = np.repeat(np.asarray(levels, dtype=float), hold)
    x = x + rng.normal(0, noise, len(x)) if noise else x
    return pd.Series(x, index=T0 + pd.to_timedelta(np.arange(len(x)) * step_s, unit="s"))


def test_steps_sizes_levels_and_ramp() -> None:
    """Closed form: noiseless steps of +600 / -450 W sampled at 1 Hz."""
    sw = detect_power_swings(_steps([100, 700, 250]), min_step_w=300)
    assert sw["direction"].tolist() == ["rise", "drop"]
    assert sw["delta_w"].tolist() == [600.0, -450.0]
    assert sw["level_before_w"].tolist() == [100.0, 700.0]
    assert sw["start"].iloc[0] == T0 + pd.Timedelta(seconds=19)
    assert sw["end"].iloc[0] == T0 + pd.Timedelta(seconds=20)
    assert sw["ramp_w_per_s"].tolist() == [600.0, -450.0]  # one sample interval: a lower bound


def test_small_steps_and_noise_are_not_swings() -> None:
    sw = detect_power_swings(_steps([100, 200, 150, 220], noise=20, seed=1), min_step_w=300)
    assert sw.empty and list(sw.columns)[:5] == ["start", "end", "direction", "delta_w",
                                                  "ramp_w_per_s"]


def test_ramp_between_10_and_90_percent() -> None:
    x = np.r_[np.full(10, 100.0), np.linspace(100, 700, 13)[1:-1], np.full(10, 700.0)]
    s = pd.Series(x, index=T0 + pd.to_timedelta(np.arange(len(x)), unit="s"))
    sw = detect_power_swings(s, min_step_w=300).iloc[0]
    # 50 W per second: the 10 % level (160 W) is passed after 1.2 s, 90 % (640 W) after 10.8 s
    assert sw["duration_s"] == pytest.approx(10.0)
    assert sw["ramp_w_per_s"] == pytest.approx(50.0)


def test_min_duration_drops_spikes_and_dips() -> None:
    s = _steps([100, 700, 700, 700], hold=20)
    s.iloc[30:32] = 100.0  # a 2-second dip inside the plateau
    assert len(detect_power_swings(s, min_step_w=300)) == 3
    kept = detect_power_swings(s, min_step_w=300, min_duration_s=5)
    assert kept["direction"].tolist() == ["rise"]


def test_unsorted_duplicates_and_gaps_are_handled_and_reported() -> None:
    s = _steps([100, 700, 100], noise=2, seed=3)
    clean = detect_power_swings(s, min_step_w=300)
    dirty = pd.concat([s.iloc[::-1], s.iloc[5:8]])
    sw = detect_power_swings(dirty, min_step_w=300)
    assert len(sw) == 2 and {"unsorted", "duplicate timestamps"} <= set(sw.attrs["issues"]["check"])
    np.testing.assert_allclose(sw["delta_w"], clean["delta_w"], atol=1.0)
    gap = pd.concat([s.iloc[:20], s.iloc[20:].set_axis(s.index[20:] + pd.Timedelta(minutes=5))])
    g = detect_power_swings(gap, min_step_w=300)
    assert g["across_gap"].tolist() == [True, False] and np.isnan(g["ramp_w_per_s"].iloc[0])


def test_bad_arguments() -> None:
    s = _steps([100, 700])
    with pytest.raises(ValueError, match="min_step_w"):
        detect_power_swings(s, min_step_w=0)
    naive = detect_power_swings(s.set_axis(s.index.tz_localize(None)), min_step_w=100)
    assert naive["start"].iloc[0] == detect_power_swings(s, min_step_w=100)["start"].iloc[0]
    assert "localized as UTC" in naive.attrs["issues"]["action"].iloc[0]  # reported, not silent
    with pytest.raises(TypeError, match="Series"):
        detect_power_swings(s.to_frame(), min_step_w=100)


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(st.integers(0, 6), min_size=2, max_size=12), seed=st.integers(0, 999))
def test_detects_every_step_of_a_staircase(levels, seed) -> None:
    """Property: steps of >= 2 x min_step_w with noise < min_step_w / 10 are all found once."""
    watts = [100 + 400 * v for v in levels]
    s = _steps(watts, hold=8, noise=15, seed=seed)
    sw = detect_power_swings(s, min_step_w=200)
    changes = np.diff(watts)
    changes = changes[changes != 0]
    # consecutive moves in the same direction merge into one swing (no reversal between them)
    runs = [int(c) for c in changes]
    merged: list[int] = []
    for c in runs:
        if merged and np.sign(merged[-1]) == np.sign(c):
            merged[-1] += c
        else:
            merged.append(c)
    assert len(sw) == len(merged)
    # levels are medians of 8-sample plateaus: sd of a difference ~ 1.25 * 15 * sqrt(2/8) = 9.4 W
    np.testing.assert_allclose(sw["delta_w"], merged, atol=50)


def _jobs() -> pd.DataFrame:
    return pd.DataFrame({
        "job_id": ["1", "2"], "state": ["NODE_FAIL", "CANCELLED by 0"],
        "start": pd.to_datetime(["2024-06-01T00:01:00Z", "2024-06-01T00:30:00Z"]),
        "end": pd.to_datetime(["2024-06-01T00:20:00Z", "2024-06-01T00:50:00Z"])})


def _job_power() -> pd.Series:
    minutes = np.arange(60)
    watts = np.where(((minutes >= 1) & (minutes < 20)) | ((minutes >= 30) & (minutes < 50)),
                     700.0, 100.0)
    watts[10] = 110.0  # a one-minute checkpoint pause in job 1
    return pd.Series(watts, index=T0 + pd.to_timedelta(minutes, unit="min"))


def test_labels_from_the_job_timeline() -> None:
    sw = label_power_swings(detect_power_swings(_job_power(), min_step_w=300), jobs=_jobs())
    assert sw["label"].tolist() == ["job start", "pause (checkpoint/collective)",
                                    "pause (checkpoint/collective)", "failure-induced",
                                    "job start", "job stop"]
    assert sw["job_id"].tolist()[:1] == ["1"] and sw["job_id"].tolist()[-1] == "2"
    bare = label_power_swings(detect_power_swings(_job_power(), min_step_w=300))
    assert set(bare["label"]) == {"pause (checkpoint/collective)", "unexplained"}


def test_unplanned_interruption_makes_a_stop_failure_induced() -> None:
    jobs = _jobs().assign(state=["COMPLETED", "CANCELLED by 0"])
    inter = pd.DataFrame({"time": [pd.Timestamp("2024-06-01T00:52:00Z")], "planned": [False]})
    sw = label_power_swings(detect_power_swings(_job_power(), min_step_w=300), jobs=jobs,
                            interruptions=inter)
    assert sw["label"].tolist()[3] == "job stop" and sw["label"].tolist()[-1] == "failure-induced"


def test_analysis_scales_counts_and_limits() -> None:
    res = analyze_power_swings(_job_power(), min_step_w=300, jobs=_jobs(), scale=16_384,
                               grid_limit_mw=9.75, grid_ramp_mw_per_s=0.1625)
    tab = res.summary().set_index("label")
    assert tab.loc["Total", "count"] == 6 == res.n
    assert tab.loc["Total", "max_abs_delta_mw"] == pytest.approx(600 * 16_384 / 1e6)
    # job starts and stops move 600 W x 16,384 = 9.83 MW (0.164 MW/s over one minute);
    # the pause moves 590 W x 16,384 = 9.67 MW (0.161 MW/s): below both limits
    assert tab.loc["Total", "over_limit"] == 4 and tab.loc["Total", "over_ramp"] == 4
    assert res.per_day["swings"].sum() == 6
    lo, hi = tab.loc["Total", ["per_day_low", "per_day_high"]]
    assert lo < tab.loc["Total", "per_day"] < hi
    json.dumps(res.to_dict())
    assert isinstance(res.plot(), Figure)
    assert "sizes scaled by 16384" in " ".join(res.notes)


def test_sample_cluster_power_swings_match_the_job_timeline(sample_ingest) -> None:
    """Regression on the bundled sample: every start, stop and failure of the training job is
    one swing of its cluster power; the other (small) jobs of the cluster claim none of them."""
    tel = sample_ingest.telemetry
    c = tel[tel["host"] == "cluster"]
    power = pd.Series(c["power_w"].to_numpy(), index=pd.DatetimeIndex(c["time"]))
    jobs = sample_ingest.jobs
    train = jobs[jobs["name"] == "llama3-405b-pretrain"]
    res = analyze_power_swings(power, min_step_w=100.0 * 16_384, jobs=jobs)
    counts = res.summary().set_index("label")["count"]
    state = train["state"].astype(str).str.split(" ").str[0]
    assert counts["job start"] == len(train) == 467
    assert counts["failure-induced"] == int(state.isin(["FAILED", "NODE_FAIL"]).sum()) == 419
    assert counts["job stop"] == int((state == "CANCELLED").sum()) == 47
    assert "unexplained" not in counts.index
    assert counts["pause (checkpoint/collective)"] % 2 == 0
    assert set(res.swings["job_id"].dropna()) <= set(train["job_id"])
    big = res.swings["delta_mw"].abs()
    assert 9 < big.median() < 13  # ~10 MW checkpoint swings of 16,384 GPUs (Llama 3 §3.3.4)
