"""reliab.windows: telemetry windows whose partial results combine exactly, event counts, lags."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab import (
    combine_partials,
    count_events,
    finalize_windows,
    fit_cox,
    lag_windows,
    telemetry_windows,
    window_partials,
)
from reliab.windows import counting_process_rows

T0 = pd.Timestamp("2024-06-01T00:00:00Z")


def _telemetry(seed: int = 0, minutes: int = 180, hosts: int = 3, gpus: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = T0 + pd.to_timedelta(np.arange(minutes), unit="min")
    frames = [pd.DataFrame({"time": t, "host": f"node{h:04d}", "gpu": str(g),
                            "temp_c": np.round(rng.normal(60 + h, 4, minutes), 1),
                            "power_w": np.round(rng.normal(600, 40, minutes), 1)})
              for h in range(hosts) for g in range(gpus)]
    return pd.concat(frames, ignore_index=True)


def test_hand_computed_window() -> None:
    """Regression: 2 GPUs, 1-min samples, one GPU missing 15 minutes of the first hour."""
    t = T0 + pd.to_timedelta(np.arange(120), unit="min")
    a = pd.DataFrame({"time": t, "host": "n1", "gpu": "0", "temp_c": np.where(t.minute < 30, 70.0, 50.0),
                      "power_w": 700.0})
    b = pd.DataFrame({"time": t, "host": "n1", "gpu": "1", "temp_c": 60.0, "power_w": 100.0})
    b = b[~((t.hour == 0) & (t.minute < 15))]
    w = telemetry_windows(pd.concat([a, b]), thresholds={"temp_c": 65}).set_index("window")
    first = w.iloc[0]
    assert first["n_samples"] == 60 + 45 and first["n_series"] == 2
    assert first["temp_c_mean"] == pytest.approx((30 * 70 + 30 * 50 + 45 * 60) / 105)
    assert first["temp_c_max"] == 70 and first["temp_c_min"] == 50
    assert first["temp_c_hours_above"] == pytest.approx((0.5 + 0.0) / 2)  # mean over GPUs
    assert first["power_w_total"] == pytest.approx(800.0)  # power adds up across GPUs
    assert first["hours"] == pytest.approx(1.0)
    g = telemetry_windows(pd.concat([a, b]), level="gpu").set_index(["gpu", "window"])
    assert g.loc[("1", T0), "hours"] == pytest.approx(0.75)  # the gap lowers observed hours


def test_levels_rack_and_cluster() -> None:
    tel = _telemetry()
    racks = {"node0000": "r0", "node0001": "r0", "node0002": "r1"}
    host = telemetry_windows(tel, level="host")
    rack = telemetry_windows(tel, level="rack", racks=racks)
    clus = telemetry_windows(tel, level="cluster")
    assert len(host) == 9 and len(rack) == 6 and len(clus) == 3
    assert clus["power_w_total"].iloc[0] == pytest.approx(
        host.loc[host["window"] == T0, "power_w_total"].sum())
    assert clus["n_samples"].sum() == len(tel)
    with pytest.raises(ValueError, match="racks="):
        telemetry_windows(tel, level="rack")
    with pytest.raises(ValueError, match="no rack"):
        telemetry_windows(tel, level="rack", racks={"node0000": "r0"})


def test_dirty_input_is_cleaned_and_reported() -> None:
    tel = _telemetry(minutes=60, hosts=1, gpus=1)
    dirty = pd.concat([tel.iloc[::-1], tel.iloc[:5]], ignore_index=True)
    w = telemetry_windows(dirty)
    checks = set(w.attrs["issues"]["check"])
    assert {"unsorted", "duplicate timestamps"} <= checks
    pd.testing.assert_frame_equal(w.drop(columns=[]), telemetry_windows(tel))


def test_mixed_gpu_and_host_rows_are_flagged() -> None:
    tel = _telemetry(minutes=60, hosts=1, gpus=1)
    node_rows = tel.assign(gpu=pd.NA)
    w = telemetry_windows(pd.concat([tel, node_rows], ignore_index=True))
    assert "mixed levels" in set(w.attrs["issues"]["check"])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), parts=st.integers(1, 7), freq=st.sampled_from(["1h", "30min", "1D"]))
def test_partials_combine_exactly(seed: int, parts: int, freq: str) -> None:
    """Property: any split of the rows, reduced separately and combined, gives the one-shot table."""
    tel = _telemetry(seed, minutes=150)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, parts, len(tel))
    pieces = [window_partials(tel[labels == k], freq=freq, thresholds={"temp_c": 63})
              for k in range(parts)]
    split = finalize_windows(combine_partials(pieces))
    whole = finalize_windows(window_partials(tel, freq=freq, thresholds={"temp_c": 63}))
    exact = [c for c in whole.columns if c.endswith(("_max", "_min")) or c.startswith("n_")]
    pd.testing.assert_frame_equal(split[exact], whole[exact])
    pd.testing.assert_frame_equal(split, whole, check_exact=False, rtol=1e-12)


def test_window_length_is_never_guessed() -> None:
    parts = window_partials(_telemetry(), freq="30min")
    parts.attrs = {}  # e.g. read back from Parquet
    with pytest.raises(ValueError, match="freq="):
        finalize_windows(parts)
    assert len(finalize_windows(parts, freq="30min")) == 3 * 6


def test_count_events_places_and_reports() -> None:
    w = telemetry_windows(_telemetry())
    ev = pd.DataFrame({"time": pd.to_datetime(["2024-06-01T00:30:00Z", "2024-06-01T01:10:00Z",
                                               "2024-06-01T09:00:00Z", "2024-06-01T00:10:00Z"]),
                       "hosts": ["node0000,node0001", "node0001", "node0001", None]})
    out = count_events(w, ev)
    got = out.set_index(["host", "window"])["failures"]
    assert got[("node0000", T0)] == 1 and got[("node0001", T0)] == 1
    assert got[("node0001", T0 + pd.Timedelta(hours=1))] == 1 and got.sum() == 3
    assert out.attrs["unplaced"] == 2
    assert set(out.attrs["issues"]["check"]) == {"outside windows", "no host"}


def test_lag_windows_only_uses_the_window_right_before() -> None:
    w = telemetry_windows(_telemetry(minutes=240, hosts=1))
    w = w[w["window"] != T0 + pd.Timedelta(hours=2)]  # a missing hour
    lagged = lag_windows(w, ["temp_c_mean"]).set_index("window")["temp_c_mean_lag1"]
    means = w.set_index("window")["temp_c_mean"]
    assert np.isnan(lagged[T0])
    assert lagged[T0 + pd.Timedelta(hours=1)] == means[T0]
    assert np.isnan(lagged[T0 + pd.Timedelta(hours=3)])  # hour 2 is missing: no lag


def test_cox_with_time_varying_temperature_recovers_the_simulated_effect() -> None:
    """Simulation: the Andersen-Gill Cox fit on node-hour rows covers the true log IRR."""
    from reliab import simulate_environment

    env = simulate_environment(n_nodes=256, days=14, rate_scale=60, seed=11,
                               temperature_irr=1.10)
    w = env.windows.assign(host=env.windows["host"].astype(str))
    rows = counting_process_rows(w)
    fit = fit_cox(rows, start="start", stop="stop", event="failures", id="host",
                  covariates=["temp_c_mean"])
    hr = fit.summary().iloc[0]
    assert hr["hr_low"] < 1.10 < hr["hr_high"]
    assert hr["hazard_ratio"] > 1.0
