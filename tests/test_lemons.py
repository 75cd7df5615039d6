"""Lemon-node ranking on simulated fleets with planted lemons (known truth)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliab.errors import InsufficientDataError
from reliab.models import find_lemons


def _fleet(seed: int, n: int = 600, lemons: int = 6, base: float = 1.0, factor: float = 12.0):
    rng = np.random.default_rng(seed)
    hosts = [f"node{i:04d}" for i in range(n)]
    lemon_hosts = list(rng.choice(hosts, size=lemons, replace=False))
    mu = np.where(np.isin(hosts, lemon_hosts), base * factor, base)
    k = rng.poisson(mu)
    t0 = pd.Timestamp("2024-06-01", tz="UTC")
    rows, sig = [], []
    for h, kk in zip(hosts, k, strict=True):
        for j in range(kk):
            job = f"{h}-{j}"
            rows.append({"time": t0 + pd.Timedelta(hours=int(rng.integers(0, 1000))), "job_id": job, "hosts": h,
                         "planned": False, "component": "GPU", "category": "Faulty GPU"})
            sig.append({"host": h, "signal": f"xid:{rng.choice([79, 48, 119, 62, 94])}"})
    # software interruptions never count as node failures
    rows.append({"time": t0, "job_id": "sw", "hosts": hosts[0], "planned": False, "component": "Dependency",
                 "category": "Software Bug"})
    return pd.DataFrame(rows), pd.DataFrame(sig), hosts, lemon_hosts


def test_planted_lemons_rank_first() -> None:
    """Simulation: 6 lemons at 12x the fleet rate are the top 6 in at least 9 of 10 seeded fleets."""
    hits = 0
    for seed in range(10):
        inter, sig, hosts, lemons = _fleet(seed)
        res = find_lemons(sig, inter, node_hours=1000.0, hosts=hosts, anomaly=seed == 0)
        top = set(res.table.head(6)["host"])
        hits += top == set(lemons)
        assert set(res.lemons) <= set(lemons) | set(res.table.head(8)["host"])
    assert hits >= 9


def test_fdr_keeps_false_flags_rare() -> None:
    """Simulation: in fleets without lemons, BH at 5% flags a node in few fleets."""
    flagged = 0
    for seed in range(20):
        inter, sig, hosts, _ = _fleet(seed, lemons=0)
        flagged += bool(find_lemons(sig, inter, node_hours=1000.0, hosts=hosts, anomaly=False).lemons)
    assert flagged <= 3


def test_exposure_is_used() -> None:
    """Regression: a node with 8 failures in 10x the hours of the others is not a lemon."""
    inter, sig, hosts, _ = _fleet(1, lemons=0, base=0.5)
    extra = pd.DataFrame([{"time": pd.Timestamp("2024-06-02", tz="UTC"), "job_id": f"x{i}", "hosts": "node0000",
                           "planned": False, "component": "GPU", "category": "Faulty GPU"} for i in range(8)])
    inter = pd.concat([inter[inter["hosts"] != "node0000"], extra])
    hours = pd.Series(100.0, index=hosts)
    hours["node0000"] = 1000.0
    res = find_lemons(sig, inter, node_hours=hours)
    assert "node0000" not in res.lemons
    hours["node0000"] = 100.0
    assert "node0000" in find_lemons(sig, inter, node_hours=hours).lemons
    d = res.to_dict()
    assert d["n_nodes"] == len(hosts) and isinstance(d["summary"], list)


def test_no_failures_is_insufficient() -> None:
    """Edge: no hardware interruptions at all gives InsufficientDataError, not a ranking."""
    inter = pd.DataFrame(columns=["time", "job_id", "hosts", "planned", "component", "category"])
    sig = pd.DataFrame({"host": ["a"], "signal": ["xid:63"]})
    with pytest.raises(InsufficientDataError, match="no hardware interruptions"):
        find_lemons(sig, inter, node_hours=10.0, hosts=["a", "b"])
