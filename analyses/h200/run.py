"""The real H200 capture (``data/h200_telemetry``) through reliab's public API.

One NVIDIA H200 ran idle, a 90 s matrix-multiply block, six (10 s compute, 4 s idle)
cycles, a copy phase and idle again (``SOURCE.md`` of the capture).  This study reads the
folder with :func:`reliab.ingest` (NVML samples, ``nvidia-smi --query-gpu`` CSV and
``nvidia-smi -q``), and finds, with no threshold but ``--min-step-w``:

* the clock-event reason that held the clock down (NVML "software power cap"), the power
  it pinned (share of the 700 W limit) and the clock drop;
* every compute/idle power step (:func:`reliab.analyze_power_swings`), scaled to a cluster
  of ``--scale`` GPUs swinging in sync (16,384 as in Llama 3, arXiv 2407.21783 §3.3.4);
* throughput against temperature (:func:`reliab.fit_throughput`): the matrix steps of
  ``steps.csv`` (the workload's own log) joined to the nearest NVML sample, with the power
  cap and SM clock as mediators and naive beside Newey–West intervals.

Run ``python analyses/h200/run.py`` from the repository root; tables, figures, the report
(``report.html``) and ``results.json`` go to ``analyses/h200/out/``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd

import reliab
from reliab.models.environment import decode_clock_events

ROOT = Path(__file__).resolve().parents[2]


def steps_with_telemetry(folder: Path, nvml: pd.DataFrame) -> pd.DataFrame:
    """Matrix-multiply steps (mid-step time) with the nearest NVML sample within 100 ms."""
    raw = pd.read_csv(folder / "steps.csv")
    raw = raw[raw["kind"] == "compute"]
    mid = (raw["t_start_unix"] + raw["t_end_unix"]) / 2
    raw = raw.assign(time=pd.to_datetime(mid, unit="s", utc=True))
    cap = decode_clock_events(nvml["clock_event_reasons_flag"])["software power cap"]
    tel = nvml[["time", "gpu_temp_c", "sm_clock_mhz", "power_w"]].assign(
        power_cap_flag=cap.astype(float).to_numpy())
    joined = reliab.align_asof(raw, tel, tolerance="100ms", direction="nearest")
    return joined.data.dropna(subset=["gpu_temp_c"])


def study(folder: Path, *, min_step_w: float, scale: float,
          grid_limit_mw: float | None) -> dict[str, Any]:
    """The three results and the numbers a reader checks first."""
    ingest = reliab.ingest(str(folder))
    tel = ingest.telemetry
    nvml = tel[tel["host"] == "nvml_samples"].sort_values("time").reset_index(drop=True)
    clocks = reliab.summarize_clock_events(nvml)
    power = pd.Series(nvml["power_w"].to_numpy(), index=pd.DatetimeIndex(nvml["time"]))
    swings = reliab.analyze_power_swings(power, min_step_w=min_step_w, scale=scale,
                                         grid_limit_mw=grid_limit_mw)
    fit = reliab.fit_throughput(steps_with_telemetry(folder, nvml), throughput="rate",
                                temperature="gpu_temp_c",
                                mediators=["power_cap_flag", "sm_clock_mhz"])
    cap = clocks.reason("software power cap")
    sw = swings.swings
    levels = fit.levels.set_index("state")
    total = fit.effect("total")
    numbers = {
        "power_cap_share_of_samples": float(cap["share_active"]),
        "power_w_capped": float(cap["power_w_active"]),
        "power_share_of_limit_capped": float(cap["power_share_of_limit_active"]),
        "sm_clock_mhz_uncapped": float(cap["sm_clock_mhz_inactive"]),
        "sm_clock_mhz_capped": float(cap["sm_clock_mhz_active"]),
        "clock_change_pct": float(cap["clock_change_pct"]),
        "swings_rise": int((sw["direction"] == "rise").sum()),
        "swings_drop": int((sw["direction"] == "drop").sum()),
        "swing_median_abs_w": float(sw["delta_w"].abs().median()),
        "swing_median_abs_mw_scaled": float(sw["delta_mw"].abs().median()),
        "ramp_median_mw_per_s_scaled": float(sw["ramp_mw_per_s"].abs().median()),
        "tflops_median_uncapped": float(levels.loc[0, "throughput_median"]),
        "tflops_median_capped": float(levels.loc[1, "throughput_median"]),
        "temp_c_uncapped": float(levels.loc[0, "temperature_mean"]),
        "temp_c_capped": float(levels.loc[1, "temperature_mean"]),
        "slope_pct_per_c": float(total["pct_per_c"]),
        "slope_naive": [float(total["low_naive"]), float(total["high_naive"])],
        "slope_hac": [float(total["low_hac"]), float(total["high_hac"])],
        "hac_over_naive": float(total["hac_over_naive"]),
        "hac_lags": fit.lags,
    }
    return {"ingest": ingest, "clock_events": clocks, "power_swings": swings,
            "throughput": fit, "numbers": numbers}


def write(out: Path, res: dict[str, Any]) -> None:
    """Tables (CSV), figures (PNG), ``results.json`` and ``report.html`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    results = {k: res[k] for k in ("clock_events", "power_swings", "throughput")}
    for name, r in results.items():
        r.summary().to_csv(out / f"{name}.csv", index=False)
        r.plot().savefig(out / f"{name}.png", dpi=120)
    res["power_swings"].swings.to_csv(out / "swings.csv", index=False)
    doc = {"numbers": res["numbers"], **{k: r.to_dict() for k, r in results.items()}}
    (out / "results.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    report = reliab.build_report(results, ingest=res["ingest"], title="One H200 under load",
                                 subtitle="data/h200_telemetry: power cap, power swings, "
                                          "throughput against temperature")
    reliab.write_html(report, out / "report.html")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "h200_telemetry")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--min-step-w", type=float, default=300.0)
    parser.add_argument("--scale", type=float, default=16_384.0)
    parser.add_argument("--grid-limit-mw", type=float, default=None)
    args = parser.parse_args(argv)
    res = study(args.data, min_step_w=args.min_step_w, scale=args.scale,
                grid_limit_mw=args.grid_limit_mw)
    write(args.out, res)
    n = res["numbers"]
    print(f"power cap: {n['power_w_capped']:.0f} W ({n['power_share_of_limit_capped']:.1%} of "
          f"the limit) in {n['power_cap_share_of_samples']:.0%} of samples; SM clock "
          f"{n['sm_clock_mhz_uncapped']:.0f} -> {n['sm_clock_mhz_capped']:.0f} MHz "
          f"({n['clock_change_pct']:+.0f} %)")
    print(f"power swings: {n['swings_rise']} rises, {n['swings_drop']} drops, median "
          f"{n['swing_median_abs_w']:.0f} W; x{args.scale:,.0f} GPUs: "
          f"{n['swing_median_abs_mw_scaled']:.2f} MW at {n['ramp_median_mw_per_s_scaled']:.1f} MW/s")
    print(f"throughput: {n['tflops_median_uncapped']:.0f} TFLOP/s uncapped at "
          f"{n['temp_c_uncapped']:.0f} °C, {n['tflops_median_capped']:.0f} TFLOP/s capped at "
          f"{n['temp_c_capped']:.0f} °C; slope {n['slope_pct_per_c']:+.3f} %/°C, naive "
          f"[{n['slope_naive'][0]:+.3f}, {n['slope_naive'][1]:+.3f}], HAC "
          f"[{n['slope_hac'][0]:+.3f}, {n['slope_hac'][1]:+.3f}] ({n['hac_lags']} lags)")
    print(f"wrote {args.out}")
    return n


if __name__ == "__main__":
    main()
