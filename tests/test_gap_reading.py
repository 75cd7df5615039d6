"""The Weibull fit of the times between interruptions is read as a renewal fit, never as ageing.

A shape above 1 fitted to the gaps of a repairable system says the gaps are more regular than
Poisson gaps; whether the system wears out is a question about the trend of its rate
(Ascher & Feingold, *Repairable Systems Reliability*, 1984, ch. 2).  The report's text said
so already, but ``results.json`` archived the lifetime reading "wear-out (increasing hazard)"
for the same fit.  Regression test: 40 interruptions 10 h apart (a few minutes of jitter) on a
fleet of 8 hosts busy the whole window — clearly regular gaps, no trend.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd

from reliab import fit_weibull, schema
from reliab.study import analyze, fleet_facts
from reliab.study._archive import archive

T0 = pd.Timestamp("2024-03-01", tz="UTC")
HOURS = 410.0


def _regular_cluster() -> SimpleNamespace:
    rng = np.random.default_rng(7)
    n = 40
    times = T0 + pd.to_timedelta(5.0 + 10.0 * np.arange(n) + rng.uniform(-0.1, 0.1, n), unit="h")
    hosts = [f"gpu{i % 8:03d}" for i in range(n)]
    starts = pd.DatetimeIndex([T0, *times[:-1]])
    jobs = schema.conform(pd.DataFrame({
        "job_id": [str(100 + i) for i in range(n)], "state": "NODE_FAIL", "start": starts,
        "end": times, "nnodes": 8, "ngpus": 64, "nodelist": "gpu[000-007]",
        "origin": [f"sacct.txt:{i + 2}" for i in range(n)]}), "jobs")
    inter = schema.conform(pd.DataFrame({
        "time": times, "job_id": jobs["job_id"], "hosts": hosts, "planned": False,
        "category": "Faulty GPU", "component": "GPU", "attribution": "rule:test",
        "downtime_h": np.nan, "lost_gpu_hours": np.nan}), "interruptions")
    signals = schema.conform(pd.DataFrame({
        "time": times, "host": hosts, "source": "kernel", "signal": "xid:79",
        "severity": "critical", "origin": [f"kern.log:{i + 1}" for i in range(n)]}), "signals")
    return SimpleNamespace(jobs=jobs, interruptions=inter, signals=signals, telemetry=None,
                           policy="fleet")


def test_lifetime_and_gap_readings_of_one_shape() -> None:
    gaps = 10.0 + np.random.default_rng(3).uniform(-0.1, 0.1, 39)
    fit = fit_weibull(gaps, np.ones(gaps.size))
    assert fit.shape_meaning.startswith("wear-out")  # as unit lifetimes
    as_gaps = dataclasses.replace(fit, durations="gaps")
    assert as_gaps.shape == fit.shape
    assert as_gaps.shape_meaning == "as a renewal fit, the gaps are more regular than Poisson gaps"
    assert as_gaps.to_dict()["shape_meaning"] == as_gaps.shape_meaning


def test_the_archive_reads_the_gap_fit_as_a_renewal_fit() -> None:
    ing = _regular_cluster()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals,
                        window=(T0, T0 + pd.Timedelta(hours=HOURS)))
    results = analyze(ing, fleet)
    fit = results["tbi_weibull"]
    assert fit.durations == "gaps" and fit.shape > 5
    archived = json.loads(json.dumps(archive(results, label="now", fleet=fleet, previous=None)))
    reading = archived["results"]["tbi_weibull"]["shape_meaning"]
    assert reading == "as a renewal fit, the gaps are more regular than Poisson gaps"
