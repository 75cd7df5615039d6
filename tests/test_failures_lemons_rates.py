"""Lemons and rates on job-less data: failure records, per-group node-days."""

from __future__ import annotations

import pandas as pd
import pytest

import reliab
from reliab import schema
from reliab.models.lemons import find_lemons


def _failures() -> pd.DataFrame:
    """Hand-made records: node a fails 6 times, b once, c once; all Host hardware, system s1."""
    units = ["a"] * 6 + ["b", "c"]
    start = pd.date_range("2020-01-01", periods=len(units), freq="7D", tz="UTC")
    return schema.conform(pd.DataFrame({
        "unit": units, "system": "s1", "start": start, "repair_h": 1.0, "cause": "Hardware",
        "category": "CPU", "component": "Host", "origin": [f"f.csv:{i + 2}" for i in range(len(units))]}), "failures")


def test_find_lemons_without_job_ids_counts_failure_records() -> None:
    """Regression: job-less interruptions raised KeyError 'job_id'; failure records count one each.

    Expected by hand: 8 failures over 3 nodes of equal hours -> 8/3 expected per node; node a has 6."""
    fail = _failures()
    sig = schema.empty("signals")
    res = find_lemons(sig, schema.empty("interruptions").drop(columns="job_id"), node_hours=1000.0,
                      hosts=["a", "b", "c"], failures=fail, anomaly=False)
    t = res.summary().set_index("host")
    assert t.loc["a", "failures"] == 6 and t.loc["b", "failures"] == 1
    assert t.loc["a", "expected"] == pytest.approx(8 / 3)
    assert res.n_failures == 8


def test_find_lemons_on_interruptions_without_job_id_column() -> None:
    inter = pd.DataFrame({"hosts": ["a", "a", "b"], "component": "Host", "planned": False})
    res = find_lemons(schema.empty("signals"), inter, node_hours=10.0, hosts=["a", "b"], anomaly=False)
    assert res.summary().set_index("host").loc["a", "failures"] == 2


def test_find_lemons_groups_use_their_own_rate() -> None:
    """Two groups: g1 nodes a, b (6 + 1 failures), g2 node c (1): c's expected count is 1, a's 3.5."""
    res = find_lemons(schema.empty("signals"), schema.empty("interruptions"), node_hours=100.0,
                      hosts=["a", "b", "c"], failures=_failures(), anomaly=False,
                      groups=pd.Series({"a": "g1", "b": "g1", "c": "g2"}))
    t = res.summary().set_index("host")
    assert t.loc["a", "expected"] == pytest.approx(3.5) and t.loc["c", "expected"] == pytest.approx(1.0)


def test_estimate_rates_takes_per_group_node_days() -> None:
    """Per-group node_days: cluster x 3 interruptions over 1,000 node-days = 3 per 1k node-days;
    with 8 GPUs per node that is 8,000 GPU-days."""
    inter = pd.DataFrame({"cluster": ["x", "x", "x", "y"], "planned": False, "category": "c", "component": "GPU"})
    res = reliab.estimate_rates(inter, by="cluster", node_days=pd.Series({"x": 1000.0, "y": 500.0}), gpus_per_node=8)
    t = res.summary().set_index("cluster")
    assert t.loc["x", "rate_per_1k_node_days"] == pytest.approx(3.0)
    assert t.loc["y", "rate_per_1k_node_days"] == pytest.approx(2.0)
    assert t.loc["x", "gpu_days"] == pytest.approx(8000.0)
    assert t.loc["Total", "rate_per_1k_node_days"] == pytest.approx(4 / 1.5)
