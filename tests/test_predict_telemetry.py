"""Telemetry aggregates in the failure-risk features: hand values, and nothing from after T."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reliab.predict._features import build_features, collect_events

CUT = pd.Timestamp("2024-06-20T00:00:00Z")


def _tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    sig = pd.DataFrame({"time": pd.to_datetime(["2024-06-19T12:00:00Z", "2024-06-19T13:00:00Z"], utc=True),
                        "host": ["n1", "n2"], "signal": ["xid:63", "xid:63"]})
    inter = pd.DataFrame({"time": pd.to_datetime(["2024-06-22T00:00:00Z"], utc=True), "hosts": ["n1"],
                          "component": ["GPU"], "planned": False, "lost_gpu_hours": 100.0})
    tel = pd.DataFrame({
        "time": pd.to_datetime(["2024-06-19T23:30:00Z",   # in the last hour before the cut
                                "2024-06-19T22:00:00Z",   # 2 h before
                                "2024-06-17T00:00:00Z",   # 3 days before: 7 d window only
                                "2024-06-20T00:00:00Z",   # at the cut: not before it
                                "2024-06-20T00:10:00Z",   # after the cut
                                "2024-06-19T23:00:00Z"],  # a host that is no unit
                               utc=True),
        "host": ["n1", "n1", "n1", "n1", "n1", "cluster"],
        "temp_c": [70.0, 80.0, 90.0, 99.0, 99.0, 120.0],
        "power_w": [400.0, 600.0, 300.0, 1000.0, 1000.0, 5000.0]})
    return sig, inter, tel


def _at_cut(tel: pd.DataFrame, lookahead_h: float = 0.0) -> pd.DataFrame:
    sig, inter, _ = _tables()
    ev = collect_events(sig, inter, telemetry=tel)
    return build_features(ev, pd.DatetimeIndex([CUT]), lookahead_h=lookahead_h).set_index("unit")


def test_telemetry_aggregates_match_hand_values() -> None:
    f = _at_cut(_tables()[2])
    # n1, last day: samples 70/400 and 80/600; last 7 days also 90/300; the samples at and
    # after the cut are not seen, nor the 'cluster' row
    assert f.loc["n1", "temp_max_1d"] == 80.0 and f.loc["n1", "temp_max_7d"] == 90.0
    assert f.loc["n1", "power_mean_1d"] == pytest.approx(500.0)
    assert f.loc["n1", "power_sd_1d"] == pytest.approx(math.sqrt(2 * 100.0 ** 2 / 1))
    assert f.loc["n1", "power_mean_7d"] == pytest.approx((400 + 600 + 300) / 3)
    assert f.loc["n1", "power_sd_7d"] == pytest.approx(float(np.std([400, 600, 300], ddof=1)))
    # n2 has no telemetry: missing, not zero
    assert f.loc["n2", ["temp_max_1d", "power_mean_7d", "power_sd_1d"]].isna().all()


def test_moving_later_samples_changes_no_telemetry_feature() -> None:
    sig, inter, tel = _tables()
    later = tel["time"] >= CUT
    moved = tel.assign(time=tel["time"].where(~later, tel["time"] + pd.Timedelta(days=3)),
                       temp_c=tel["temp_c"].where(~later, 150.0))
    cols = ["temp_max_1d", "temp_max_7d", "power_mean_1d", "power_sd_1d", "power_mean_7d", "power_sd_7d"]
    pd.testing.assert_frame_equal(_at_cut(tel)[cols], _at_cut(moved)[cols])


def test_a_window_reaching_past_the_cut_is_caught() -> None:
    """The leakage check can fail: with windows reaching 1 h past the cut the 99 °C sample at
    the cut is seen."""
    assert _at_cut(_tables()[2], lookahead_h=1.0).loc["n1", "temp_max_1d"] == 99.0


def test_no_telemetry_adds_no_column() -> None:
    sig, inter, _ = _tables()
    f = build_features(collect_events(sig, inter), pd.DatetimeIndex([CUT]))
    assert not any(c.startswith(("temp_max", "power_")) for c in f.columns)


def test_temperature_maxima_equal_a_sample_by_sample_scan() -> None:
    """Many hosts, times and gaps: every trailing maximum is the largest sample of the unit
    whose hour ends by T's hour and lies within the window (NaN where there is none)."""
    from reliab.predict._telemetry import TELEMETRY_WINDOWS_H, US_PER_H, telemetry_features

    rng = np.random.default_rng(11)
    units = tuple(f"n{i}" for i in range(7))
    t0 = pd.Timestamp("2024-06-01T00:00:00Z")
    n = 400
    hours = rng.integers(0, 24 * 12, n) + rng.random(n)
    tel = pd.DataFrame({"time": t0 + pd.to_timedelta(hours, unit="h"),
                        "host": rng.choice([*units[:-1], "other"], n),  # n6: never any sample
                        "temp_c": np.where(rng.random(n) < 0.1, np.nan, rng.normal(70, 10, n)),
                        "power_w": rng.normal(500, 50, n)})
    t_us = np.array([(t0 + pd.Timedelta(hours=h)).value // 1000 for h in (0, 5, 30, 100, 170.5, 290)])
    unit = np.repeat(np.arange(len(units)), len(t_us))
    t = np.tile(t_us, len(units))
    got = telemetry_features(tel, units, unit, t)
    s_bin = (tel["time"].astype("int64") // 1000) // US_PER_H
    for name, w in TELEMETRY_WINDOWS_H.items():
        for u, at, value in zip(unit, t, got[f"temp_max_{name}"], strict=True):
            q = at // US_PER_H
            seen = tel["temp_c"][(tel["host"] == units[u]) & (s_bin < q) & (s_bin >= q - w)].dropna()
            assert (math.isnan(value) if seen.empty else value == seen.max()), (units[u], at, name)
