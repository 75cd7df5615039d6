"""simulate_environment, its raw files through reliab.ingest, analyze_environment, the report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import reliab
from reliab import analyze_environment, simulate_environment
from reliab.report import build_report, render_html


@pytest.fixture(scope="module")
def env():
    return simulate_environment(n_nodes=64, days=8, rate_scale=40, seed=7)


@pytest.fixture(scope="module")
def written(env, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("env")
    env.write(out, hosts=2, day=2)
    return out


@pytest.fixture(scope="module")
def ingested(written):
    return reliab.ingest(written)


def written_env_interruptions(d: Path) -> list:
    """Failure-ended allocations in the written sacct records (the training-run policy's count)."""
    rows = (d / "slurm" / "sacct.txt").read_text().splitlines()[1:]
    return [r for r in rows if "|" in r and r.split("|")[0].isdigit()
            and r.split("|")[5] in ("FAILED", "NODE_FAIL")]


def _hashes(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


def test_simulation_truth_and_determinism(env, tmp_path) -> None:
    w = env.windows
    assert len(w) == 64 * 8 * 24 and w["hours"].eq(1.0).all()
    assert env.truth["temperature_irr"] == 1.08 and env.truth["diurnal_amplitude_pct"] == 1.5
    assert len(env.interruptions) == len(env.jobs) - 1  # every interruption ends one job
    assert env.jobs["state"].iloc[-1] == "RUNNING"
    again = simulate_environment(n_nodes=64, days=8, rate_scale=40, seed=7)
    pd.testing.assert_frame_equal(w, again.windows)
    other = simulate_environment(n_nodes=64, days=8, rate_scale=40, seed=8)
    assert not w["temp_c_mean"].equals(other.windows["temp_c_mean"])
    env.write(tmp_path / "a", hosts=1)
    again.write(tmp_path / "b", hosts=1)
    assert _hashes(tmp_path / "a") == _hashes(tmp_path / "b")
    with pytest.raises(ValueError, match="Table 5"):
        simulate_environment(categories=("Cosmic Rays",))


def test_raw_files_are_real_formats_and_fully_parsed(written, ingested) -> None:
    smi = (written / "telemetry" / "nvidia-smi" / "node0001.csv").read_text().splitlines()
    assert smi[0].startswith("timestamp, index, temperature.gpu, power.draw [W]")
    assert smi[1].endswith(("0x0000000000000004", "0x0000000000000001", "0x0000000000000000"))
    prom = (written / "telemetry" / "dcgm" / "node0001.prom").read_text()
    assert "# TYPE DCGM_FI_DEV_GPU_TEMP gauge" in prom and 'Hostname="node0001"' in prom
    acc = ingested.accounting
    assert (acc["malformed"] == 0).all()
    assert set(acc["source"]) == {"nvidia_smi_csv", "dcgm_prometheus", "telemetry_csv", "sacct",
                                  "manifest", "skipped"}  # reliab.toml skips truth/
    assert len(ingested.interruptions) == len(written_env_interruptions(written))
    tel = ingested.telemetry
    assert (tel["host"] == "cluster").sum() == 8 * 1440
    smi_rows = tel[tel["clock_event_reasons_flag"].notna()]
    assert len(smi_rows) == 2 * 8 * 1440
    assert json.loads((written / "truth" / "truth.json").read_text())["temperature_irr"] == 1.08


def test_study_on_ingested_files(env, ingested) -> None:
    study = analyze_environment(ingested.telemetry, jobs=ingested.jobs,
                                interruptions=ingested.interruptions, min_step_w=100.0 * 512,
                                tz="America/Phoenix")
    status = study.summary().set_index("analysis")["status"]
    assert status[["diurnal", "throughput", "power_swings", "clock_events"]].eq("done").all()
    assert status["failure_glm"] == "skipped"  # 2 monitored hosts: too few failures
    diurnal = study.get("diurnal")
    assert abs(diurnal.amplitude_pct - 1.5) < 0.2
    swings = study.get("power_swings").summary().set_index("label")["count"]
    assert swings["job start"] == len(env.jobs)
    assert swings["failure-induced"] == len(env.interruptions)
    cap = study.get("clock_events").reason("software power cap")
    assert cap["sm_clock_mhz_active"] < cap["sm_clock_mhz_inactive"] == 1980
    with pytest.raises(KeyError, match="did not run"):
        study.get("failure_glm")
    json.dumps(study.to_dict())


def test_study_glm_on_many_monitored_nodes(env) -> None:
    """All 64 nodes' hourly telemetry: the GLM runs on the window before each failure."""
    w = env.windows
    tel = pd.DataFrame({"time": w["window"] + pd.Timedelta(minutes=30), "host": w["host"].astype(str),
                        "gpu": pd.NA, "temp_c": w["temp_c_mean"]})
    inter = env.interruptions.assign(time=env.interruptions["failure_time"])
    study = analyze_environment(tel, interruptions=inter)
    fit = study.get("failure_glm")
    assert fit.covariates == ("temp_c_mean_lag1",)
    assert fit.events >= 10
    assert study.summary().set_index("analysis").loc["diurnal", "status"] == "skipped"


@pytest.mark.slow
def test_report_section_and_plots(ingested) -> None:
    """Regression: the study's parts render through the report's generic path, in the
    Environment section, and a skipped analysis shows as not available with its reason."""
    study = analyze_environment(ingested.telemetry, jobs=ingested.jobs,
                                interruptions=ingested.interruptions, min_step_w=51_200.0,
                                grid_limit_mw=0.3)
    rep = build_report({"environment": study}, ingest=ingested)
    assert "environment" in [s.key for s in rep.sections]
    sec = rep.section("environment")
    kinds = [type(b).__name__ for b in sec.blocks]
    assert kinds.count("Figure") == 4 and kinds.count("Table") == 4
    html = render_html(rep)
    assert "Power swings" in html and "Diurnal" in html
    assert "Failure glm: not available: too little data" in html
    alone = build_report({"swings": study.get("power_swings")})  # placed by its type
    assert [s.key for s in alone.sections][:1] == ["environment"]
    before = dict(mpl.rcParams)
    for name, res in study.results:
        fn = {"diurnal": reliab.plots.plot_diurnal, "throughput": reliab.plots.plot_throughput,
              "power_swings": reliab.plots.plot_power_swings,
              "clock_events": reliab.plots.plot_clock_events}[name]
        assert isinstance(fn(res), Figure)
    assert dict(mpl.rcParams) == before


def test_irr_forest_plot(env) -> None:
    fit = reliab.fit_failure_glm(env.windows, ["temp_c_mean", "util_pct_mean"], cells=True)
    fig = reliab.plots.plot_irr_forest(fit)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert any("temp_c_mean" in x for x in labels) and not any("intercept" in x for x in labels)
    assert np.isclose(fig.axes[0].lines[-1].get_xdata()[0], 1.0)  # the IRR = 1 reference line
    from matplotlib.collections import LineCollection, PathCollection

    ax = fig.axes[0]
    bars = next(c for c in ax.collections if isinstance(c, LineCollection))
    dots = next(c for c in ax.collections if isinstance(c, PathCollection))
    row = fit.irr("temp_c_mean")  # drawn first (top row): interval ends and the point
    top = int(np.argmax([seg[0, 1] for seg in bars.get_segments()]))
    np.testing.assert_allclose(bars.get_segments()[top][:, 0], [row["irr_low"], row["irr_high"]])
    assert np.isclose(dots.get_offsets()[:, 0], row["irr"]).any()


def test_cluster_power_from_jittered_gpu_series() -> None:
    """32 GPUs sampled at 1 Hz with different phases are summed on a common 1 s grid."""
    rng = np.random.default_rng(0)
    frames = []
    for g in range(32):
        t = pd.Timestamp("2024-06-01", tz="UTC") + pd.to_timedelta(
            np.arange(3600.0) + rng.uniform(0, 0.9), unit="s")
        watts = np.where((np.arange(3600) // 60) % 30 == 29, 110.0, 690.0) + rng.normal(0, 3, 3600)
        frames.append(pd.DataFrame({"time": t, "host": f"n{g // 8}", "gpu": str(g % 8),
                                    "power_w": watts}))
    study = analyze_environment(pd.concat(frames, ignore_index=True), min_step_w=32 * 300)
    sw = study.get("power_swings").swings
    assert sw["direction"].tolist() == ["drop", "rise", "drop"]
    np.testing.assert_allclose(sw["delta_w"].abs(), 32 * 580, rtol=0.01)
    assert "sum of 32 series" in study.notes[0]
