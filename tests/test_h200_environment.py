"""Reference: what the real H200 capture shows, found by the code (tests/reference/h200_telemetry).

The capture's SOURCE.md describes the run: idle 10 s, compute 90 s, six cycles of (compute
10 s, idle 4 s), copy 15 s, idle 15 s on one H200 with a 700 W power limit; compute steps
run at ~790 TFLOP/s cool and uncapped, ~670 TFLOP/s hot and capped.  The only number the
code is given is ``min_step_w``; everything else below is measured from the files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab.io.formats.telemetry.delimited  # noqa: F401  (registers telemetry_csv, nvidia_smi_csv)
from reliab import align_asof, detect_power_swings, fit_throughput, summarize_clock_events
from reliab.io._registry import get_parser
from reliab.models.environment.clocks import decode_clock_events

H200 = Path(__file__).parent / "reference" / "h200_telemetry"


@pytest.fixture(scope="module")
def nvml() -> pd.DataFrame:
    return get_parser("telemetry_csv").read(str(H200 / "nvml_samples.csv"), host="h200").tables[
        "telemetry"]


@pytest.fixture(scope="module")
def steps(nvml: pd.DataFrame) -> pd.DataFrame:
    """Compute steps (mid-step time) joined to the nearest NVML sample within 100 ms."""
    raw = pd.read_csv(H200 / "steps.csv")
    raw = raw[raw["kind"] == "compute"]
    raw = raw.assign(time=pd.to_datetime((raw["t_start_unix"] + raw["t_end_unix"]) / 2,
                                         unit="s", utc=True))
    cap = decode_clock_events(nvml["clock_event_reasons_flag"])["software power cap"]
    tel = nvml[["time", "gpu_temp_c", "sm_clock_mhz", "power_w"]].assign(
        power_cap_flag=cap.astype(float).to_numpy())
    res = align_asof(raw, tel, tolerance="100ms", direction="nearest")
    assert res.n_matched == res.n  # NVML runs at ~10 Hz: every step has a sample within 50 ms
    return res.data


def _phase_changes(nvml: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    busy = nvml["phase"].isin(["compute", "copy"]).to_numpy()
    t = nvml["time"].reset_index(drop=True)
    up = t[1:][busy[1:] & ~busy[:-1]].reset_index(drop=True)
    down = t[1:][~busy[1:] & busy[:-1]].reset_index(drop=True)
    return up, down


@pytest.mark.parametrize("min_step_w", [150, 300, 450])
def test_every_compute_idle_step_is_found(nvml: pd.DataFrame, min_step_w: float) -> None:
    """Seven rises and seven drops, each at a phase change of the workload, of several 100 W."""
    power = pd.Series(nvml["power_w"].to_numpy(), index=pd.DatetimeIndex(nvml["time"]))
    sw = detect_power_swings(power, min_step_w=min_step_w)
    up, down = _phase_changes(nvml)
    rises, drops = sw[sw["direction"] == "rise"], sw[sw["direction"] == "drop"]
    assert len(rises) == len(up) == 7 and len(drops) == len(down) == 7
    lag_up = (rises["start"].reset_index(drop=True) - up).dt.total_seconds()
    lag_down = (drops["start"].reset_index(drop=True) - down).dt.total_seconds()
    assert lag_up.abs().max() < 0.5 and lag_down.abs().max() < 0.5
    compute = sw.iloc[:12]  # the 90 s block and the six 10 s cycles (the copy phase is last)
    assert compute["delta_w"].abs().between(550, 600).all()
    assert sw["delta_w"].iloc[12:].abs().between(450, 520).all()  # copy: ~610 W vs ~120 W idle
    assert compute["ramp_w_per_s"].abs().between(400, 800).all()  # ~1 s NVML power ramps
    assert compute["level_after_w"].where(compute["direction"] == "rise").dropna().between(
        685, 700).all()


def test_sixteen_thousand_gpus_swing_by_megawatts(nvml: pd.DataFrame) -> None:
    """The single-GPU step scaled to Llama 3's 16,384 GPUs: about 9.4 MW within about a second."""
    from reliab import analyze_power_swings

    power = pd.Series(nvml["power_w"].to_numpy(), index=pd.DatetimeIndex(nvml["time"]))
    res = analyze_power_swings(power, min_step_w=300, scale=16_384, grid_limit_mw=5.0)
    total = res.summary().set_index("label").loc["Total"]
    assert 9.0 < total["median_abs_delta_mw"] < 9.8
    assert 6.0 < total["median_ramp_mw_per_s"] < 12.0
    assert total["over_limit"] == 14


def test_power_cap_engages_and_pins_power_at_the_limit(nvml: pd.DataFrame) -> None:
    cap = summarize_clock_events(nvml).reason("software power cap")
    compute = nvml["phase"] == "compute"
    active = decode_clock_events(nvml["clock_event_reasons_flag"])["software power cap"]
    assert active[compute].mean() > 0.99  # the cap is on through every compute phase
    assert 0.97 < cap["power_share_of_limit_active"] <= 1.0  # ~692 W of 700 W
    assert cap["sm_clock_mhz_inactive"] == 1980
    assert 1400 < cap["sm_clock_mhz_active"] < 1550  # the clock falls to ~1450-1500 MHz
    assert cap["clock_change_pct"] < -20


def test_throughput_falls_from_cool_uncapped_to_hot_capped(steps: pd.DataFrame) -> None:
    fit = fit_throughput(steps, throughput="rate", temperature="gpu_temp_c",
                         mediators=["power_cap_flag", "sm_clock_mhz"])
    lv = fit.levels.set_index("state")
    assert 770 < lv.loc[0, "throughput_median"] < 800  # ~790 TFLOP/s, cool and uncapped
    assert 660 < lv.loc[1, "throughput_median"] < 680  # ~670 TFLOP/s, hot and capped
    assert lv.loc[0, "temperature_mean"] < 45 < lv.loc[1, "temperature_mean"]
    total = fit.effect("total")
    assert total["high_hac"] < 0  # hotter is slower, also with autocorrelation-robust errors
    assert total["se_hac"] > 2 * total["se_naive"]  # 20 Hz steps: naive errors far too small
    assert fit.effect("indirect")["pct_per_c"] < 0
    s = fit.summary()
    assert {"low_naive", "high_naive", "low_hac", "high_hac"} <= set(s.columns)
    tot = s.set_index("effect")["pct_per_c"]
    assert tot["total"] == pytest.approx(tot["direct"] + tot["indirect"], abs=1e-9)
    # the five 4 s idle pauses between compute cycles are gaps in the steps, and said so
    assert any(n.startswith("5 gap(s) in 'time'") for n in fit.notes)


def test_nvidia_smi_csv_of_the_same_run_agrees() -> None:
    smi = get_parser("nvidia_smi_csv").read(str(H200 / "nvidia_smi_query.csv"), host="h200")
    tel = smi.tables["telemetry"]
    power = pd.Series(tel["power_w"].to_numpy(), index=pd.DatetimeIndex(tel["time"]))
    sw = detect_power_swings(power, min_step_w=300)
    assert (sw["direction"] == "drop").sum() == 7 and (sw["direction"] == "rise").sum() == 7
    assert np.median(sw["delta_w"].abs()) > 500


@pytest.mark.skipif(not (Path(__file__).parents[1] / "analyses" / "h200").exists(),
                    reason="analyses/ not in this checkout")
def test_scripted_h200_study(tmp_path: Path) -> None:
    """analyses/h200/run.py reads the capture through reliab.ingest and writes what it claims."""
    import importlib.util
    import json

    root = Path(__file__).parents[1]
    spec = importlib.util.spec_from_file_location("h200_study", root / "analyses/h200/run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = mod.main(["--data", str(H200), "--out", str(tmp_path)])
    assert n["sm_clock_mhz_uncapped"] == 1980 and 1400 < n["sm_clock_mhz_capped"] < 1550
    assert 0.97 < n["power_share_of_limit_capped"] <= 1.0
    assert n["swings_rise"] == n["swings_drop"] == 7 and 500 < n["swing_median_abs_w"] < 600
    assert 770 < n["tflops_median_uncapped"] < 800 and 660 < n["tflops_median_capped"] < 680
    lo, hi = n["slope_hac"]
    assert lo < n["slope_naive"][0] < n["slope_pct_per_c"] < n["slope_naive"][1] < hi < 0
    assert {p.name for p in tmp_path.iterdir()} >= {"report.html", "results.json",
                                                    "power_swings.png", "throughput.csv"}
    assert json.loads((tmp_path / "results.json").read_text())["numbers"] == json.loads(
        json.dumps(n))
    assert "Power swings" in (tmp_path / "report.html").read_text()
