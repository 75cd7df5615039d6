"""Results that divide by the exposure are not shown when it covers a sliver of the fleet, and
job MTTF beyond the observed job sizes is marked as extrapolation (issue 20 item 5).

The cluster below is the issue's case written by hand: 200 hosts log for 30 days, yet the job
records hold 20 one-GPU allocations of 6 minutes, each ended by a NODE_FAIL.  The exposure
derived from them is 20 x 0.1 h = 2 GPU-hours, so "GPU-level MTBF" would read 0.1 GPU-h;
the hosts seen give at least 200 x 8 x 30 = 48,000 GPU-days.  Regression tests.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab import schema
from reliab.report.formatting import DASH
from reliab.report.summary import summary_section
from reliab.study import analyze, fleet_facts
from reliab.study._coverage import MIN_COVERAGE, exposure_coverage

T0 = pd.Timestamp("2024-03-01", tz="UTC")


def _sliver() -> SimpleNamespace:
    n = 20
    start = T0 + pd.to_timedelta(np.arange(n) * 30.0, unit="h")
    jobs = schema.conform(pd.DataFrame({
        "job_id": [str(100 + i) for i in range(n)], "state": "NODE_FAIL", "start": start,
        "end": start + pd.Timedelta(minutes=6), "nnodes": 1, "ngpus": 1,
        "nodelist": [f"gpu{i:03d}" for i in range(n)], "origin": "sacct.txt:1"}), "jobs")
    inter = schema.conform(pd.DataFrame({
        "time": jobs["end"], "job_id": jobs["job_id"], "hosts": jobs["nodelist"], "planned": False,
        "category": "Faulty GPU", "component": "GPU", "attribution": "rule:test",
        "downtime_h": np.nan, "lost_gpu_hours": np.nan}), "interruptions")
    hosts = [f"gpu{i:03d}" for i in range(200)]
    signals = schema.conform(pd.DataFrame({
        "time": T0 + pd.to_timedelta(np.linspace(0, 30 * 24, 200), unit="h"), "host": hosts,
        "source": "kernel", "signal": "xid:79", "severity": "critical",
        "origin": [f"kern.log:{i}" for i in range(200)]}), "signals")
    return SimpleNamespace(jobs=jobs, interruptions=inter, signals=signals, telemetry=None,
                           policy="fleet")


def test_sliver_exposure_is_flagged() -> None:
    ing = _sliver()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, window=(T0, T0 + pd.Timedelta(days=30)))
    assert fleet.gpu_days == pytest.approx(20 * 0.1 / 24)
    cov = exposure_coverage(fleet, ing)
    assert cov.n == 200 and cov.fleet_gpu_days == pytest.approx(200 * 8 * 30)
    assert cov.coverage == pytest.approx((2 / 24) / 48_000) and cov.coverage < MIN_COVERAGE
    assert not cov.adequate and "--gpus" in cov.reason


def test_sliver_hides_gpu_mtbf_and_job_mttf() -> None:
    ing = _sliver()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, window=(T0, T0 + pd.Timedelta(days=30)))
    results = analyze(ing, fleet)
    assert isinstance(results["job_mttf"], reliab.NotAvailable)
    assert "GPU-time" in results["job_mttf"].reason
    section = summary_section(results)
    tile = next(b for b in section.blocks if getattr(b, "label", "") == "GPU-level MTBF")
    assert tile.value == DASH and "not shown" in tile.detail
    from reliab.report import build_report, render_html

    html = render_html(build_report(results, fleet=fleet))
    rates = html.split('id="rates"')[1].split("</section>")[0]
    assert "MTBF (GPU-h)" not in rates and "not shown" in rates


def test_whole_fleet_exposure_is_not_flagged() -> None:
    ing = _sliver()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, gpus=1600,
                        window=(T0, T0 + pd.Timedelta(days=30)))
    cov = exposure_coverage(fleet, ing)
    assert cov.coverage == pytest.approx(1.0) and cov.adequate and cov.reason == ""


def test_job_mttf_marks_sizes_beyond_the_observed_jobs() -> None:
    ing = _sliver()
    jobs = ing.jobs.copy()
    jobs["ngpus"] = pd.array([8, 16, 32, 64] * 5, dtype="Int64")
    rates = reliab.estimate_rates(ing.interruptions, by="component", gpu_days=1000.0)
    res = reliab.estimate_job_mttf(rates, jobs=jobs, interruptions=ing.interruptions)
    curve = res.summary()
    assert res.observed_gpus == (8.0, 64.0)
    assert curve.loc[curve["n_gpus"].between(8, 64), "extrapolated"].eq(False).all()
    assert curve.loc[curve["n_gpus"] > 64, "extrapolated"].all()
    assert any("extrapolation" in n for n in res.notes)
    ax = res.plot().axes[0]
    labels = [a.get_label() for a in (*ax.get_lines(), *ax.patches)]
    assert "beyond the largest observed job" in labels
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert dashed and "extrapolated" in dashed[0].get_label()
