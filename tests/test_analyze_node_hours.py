"""One report expands the job records' node lists once: the exposure check and the per-node
analyses share the hours per node."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import reliab.prepare
from reliab import schema
from reliab.study import analyze, fleet_facts
from reliab.study._coverage import exposure_coverage

T0 = pd.Timestamp("2024-03-01", tz="UTC")


def _cluster() -> SimpleNamespace:
    n = 12
    start = T0 + pd.to_timedelta(np.arange(n) * 48.0, unit="h")
    jobs = schema.conform(pd.DataFrame({
        "job_id": [str(100 + i) for i in range(n)], "state": "NODE_FAIL", "start": start,
        "end": start + pd.Timedelta(hours=40), "nnodes": 2, "ngpus": 16,
        "nodelist": [f"gpu[{i:03d}-{i + 1:03d}]" for i in range(n)], "origin": "sacct.txt:1"}), "jobs")
    inter = schema.conform(pd.DataFrame({
        "time": jobs["end"], "job_id": jobs["job_id"], "hosts": [f"gpu{i:03d}" for i in range(n)],
        "planned": False, "category": "Faulty GPU", "component": "GPU", "attribution": "rule:test",
        "downtime_h": np.nan, "lost_gpu_hours": np.nan}), "interruptions")
    signals = schema.conform(pd.DataFrame({
        "time": start, "host": [f"gpu{i:03d}" for i in range(n)], "source": "kernel",
        "signal": "xid:79", "severity": "critical", "origin": [f"kern.log:{i}" for i in range(n)]}),
        "signals")
    return SimpleNamespace(jobs=jobs, interruptions=inter, signals=signals, telemetry=None,
                           policy="fleet")


def test_analyze_expands_node_lists_once(monkeypatch: pytest.MonkeyPatch) -> None:
    ing = _cluster()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, gpus=104,
                        window=(T0, T0 + pd.Timedelta(days=25)))
    real = reliab.prepare.node_hours
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reliab.prepare, "node_hours", counted)
    results = analyze(ing, fleet)
    assert len(calls) == 1
    # 13 hosts gpu000..gpu012 named by the node lists: the coverage counts them all
    assert results["exposure_coverage"].n == 13


def test_coverage_from_given_node_hours_equals_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    ing = _cluster()
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, gpus=104,
                        window=(T0, T0 + pd.Timedelta(days=25)))
    own = exposure_coverage(fleet, ing)
    hours = reliab.prepare.node_hours(ing.jobs)

    def refuse(*args, **kwargs):
        raise AssertionError("node lists expanded again")

    monkeypatch.setattr(reliab.prepare, "node_hours", refuse)
    given = exposure_coverage(fleet, ing, node_hours=hours)
    assert given == own and given.n == 13
