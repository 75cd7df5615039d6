"""diurnal_amplitude: closed-form cosine, simulated clusters with a known amplitude, gaps."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from reliab import InsufficientDataError, diurnal_amplitude, simulate_cluster, simulate_environment


def _cosine(days: int = 10, amp_pct: float = 1.5, step: str = "10min", noise: float = 0.0,
            seed: int = 0, peak_h: float = 4.0) -> pd.Series:
    t = pd.date_range("2024-06-01", periods=days * pd.Timedelta("1D") // pd.Timedelta(step),
                      freq=step, tz="UTC")
    h = (t - t[0]) / pd.Timedelta(hours=1)
    x = 1000 * (1 + amp_pct / 200 * np.cos(2 * np.pi * (np.asarray(h) - peak_h) / 24))
    rng = np.random.default_rng(seed)
    return pd.Series(x * (1 + rng.normal(0, noise, len(x))), index=t)


def test_pure_cosine_closed_form() -> None:
    """Closed form: the hourly mean of six 10-minute samples of a cosine centred on its peak
    keeps sin(6 d / 2) / (6 sin(d / 2)) of the range, d = 2 pi / 144."""
    res = diurnal_amplitude(_cosine(peak_h=4 + 25 / 60), n_boot=50)
    d = 2 * np.pi / 144
    expected = 1.5 * np.sin(3 * d) / (6 * np.sin(d / 2))
    assert res.amplitude_pct == pytest.approx(expected, rel=1e-3)
    assert res.hour_of_max == 4.0 and res.hour_of_min == 16.0
    assert res.amplitude_low <= res.amplitude_pct <= res.amplitude_high + 1e-9


def test_local_time_of_the_minimum() -> None:
    res = diurnal_amplitude(_cosine(peak_h=4 + 25 / 60), n_boot=50, tz="America/Phoenix")
    assert res.hour_of_min == 9.0  # 16:00 UTC is 09:00 at UTC-7 (no DST)


def test_simulated_amplitude_recovered_within_0_2_pp() -> None:
    """Simulation (truth 1.5 %): the amplitude within ±0.2 pp, its interval covers the truth,
    the hot hour (15:00 local) is the slow one and temperature explains the profile."""
    env = simulate_environment(n_nodes=16, days=21, rate_scale=0.0, diurnal_amplitude_pct=1.5,
                               seed=2)
    c = env.cluster.set_index("time")
    tput = c["throughput_tokens_per_s"].where(lambda s: s > 0)
    res = diurnal_amplitude(tput, temperature=c["ambient_c"], tz="America/Phoenix", seed=1)
    hourly_truth = 1.5 * np.sin(np.pi / 24) / (np.pi / 24)
    assert abs(res.amplitude_pct - 1.5) < 0.2
    assert res.amplitude_low < hourly_truth < res.amplitude_high
    assert abs(res.hour_of_min - 15) <= 1
    assert res.share_explained > 0.95
    assert res.temperature_amplitude_c == pytest.approx(7.0, abs=0.5)  # ±3.5 °C ambient
    json.dumps(res.to_dict())
    assert isinstance(res.plot(), Figure)


def test_llama3_sample_generator_amplitude() -> None:
    """Simulation: simulate_cluster's throughput swings 2 x 3.5 °C x 3.4 MHz/°C / 1480 MHz."""
    c = simulate_cluster(n_gpus=1024, days=14, seed=4).telemetry["cluster"].set_index("time")
    res = diurnal_amplitude(c["throughput_tokens_per_s"].where(lambda s: s > 0))
    truth = 2 * 3.5 * 3.4 / 1480 * 100  # 1.61 %
    assert abs(res.amplitude_pct - truth) < 0.2
    assert 1.0 <= res.amplitude_pct <= 2.0  # Llama 3 §3.3.4: "1-2%"


def test_gaps_unsorted_and_duplicates() -> None:
    s = _cosine(days=12, noise=0.001, seed=3)
    rng = np.random.default_rng(0)
    holey = s[rng.random(len(s)) > 0.3]
    holey = holey.iloc[rng.permutation(len(holey))]
    res = diurnal_amplitude(pd.concat([holey, holey.iloc[:50]]), n_boot=100)
    assert abs(res.amplitude_pct - 1.5) < 0.2
    notes = " | ".join(res.notes)  # each repair is reported, none silent
    assert "series: unsorted" in notes and "sorted by time" in notes
    assert "series: duplicate timestamps (100 row(s)) - merged (mean) into 50 row(s)" in notes
    t = s.index
    gappy = s[(t < t[0] + pd.Timedelta(days=3)) | (t > t[0] + pd.Timedelta(days=6))]
    res2 = diurnal_amplitude(gappy, n_boot=100)
    assert res2.missing_share == pytest.approx(3 / 12, abs=0.01)
    assert "25.0% of grid points missing" in res2.notes[0]


def test_too_little_data() -> None:
    with pytest.raises(InsufficientDataError, match="whole cycle"):
        diurnal_amplitude(_cosine(days=2))
    s = _cosine(days=10)
    t = s.index
    with pytest.raises(InsufficientDataError, match="missing"):
        diurnal_amplitude(s[(t < t[0] + pd.Timedelta(days=2)) | (t >= t[0] + pd.Timedelta(days=9))])
    with pytest.raises(ValueError, match="method"):
        diurnal_amplitude(s, method="fft")
    with pytest.raises(ValueError, match="multiple"):
        diurnal_amplitude(s, freq="7h")


def test_mstl_with_a_weekly_cycle() -> None:
    s = _cosine(days=28)
    week = 1 + 0.01 * np.sin(2 * np.pi * ((s.index - s.index[0]) / pd.Timedelta(days=7)))
    res = diurnal_amplitude(s * week, method="mstl", n_boot=50)
    assert abs(res.amplitude_pct - 1.5) < 0.2


def test_share_near_one_gets_no_interval_that_misses_it() -> None:
    """Throughput that follows temperature almost exactly: the share is ~1 and resampled days
    only add noise, so every bootstrap share lies below the estimate.  A percentile interval
    that misses its estimate is not printed; the share is, with a note saying why."""
    from reliab._checks import failures

    t = pd.date_range("2024-06-01", periods=10 * 144, freq="10min", tz="UTC")
    h = np.asarray((t - t[0]) / pd.Timedelta(hours=1))
    rng = np.random.default_rng(0)
    temp = 25 + 3.5 * np.cos(2 * np.pi * (h - 15) / 24) + rng.normal(0, 0.3, len(h))
    x = 1000 * (1 - 0.0023 * (temp - 25)) * (1 + rng.normal(0, 0.0005, len(h)))
    res = diurnal_amplitude(pd.Series(x, index=t), temperature=pd.Series(temp, index=t),
                            n_boot=200, seed=1)
    assert res.share_explained > 0.999
    assert failures(res) == ()
    assert np.isnan(res.share_low) and np.isnan(res.share_high)
    assert any("does not contain the estimate" in n for n in res.notes)


def test_without_temperature_the_share_is_not_estimable_and_passes_its_checks() -> None:
    from reliab._checks import failures

    res = diurnal_amplitude(_cosine(noise=0.001), n_boot=50)
    assert np.isnan(res.share_explained)
    assert failures(res) == ()
