"""Models on the Llama-3-scale sample: rates cover the generator's truth, lemons rise to the top.

Simulation with known truth: the generator (reliab.datasets) plants per-category rates and
lemon nodes (frailty x 15); these tests check the estimators recover them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.datasets import sample_path, simulate_cluster


@pytest.fixture(scope="module")
def sample(sample_ingest) -> reliab.IngestResult:
    return sample_ingest


def _true_per_1k_gpu_days(path) -> pd.Series:
    rates = pd.read_csv(path / "truth" / "rates.csv").set_index("category")
    return rates["rate_per_gpu_hour"] * 24 * 1000


def test_bundled_rates_cover_truth(sample) -> None:
    """Simulation: every category's exact 95% interval on the sample covers the generator's rate."""
    est = reliab.estimate_rates(sample.interruptions, gpu_days=16384 * 54, job_hours=54 * 24).summary()
    est = est.set_index("category").drop(index="Total")
    truth = _true_per_1k_gpu_days(sample_path()).reindex(est.index)
    assert truth.notna().all()
    assert ((est["rate_per_1k_gpu_days_low"] <= truth) & (truth <= est["rate_per_1k_gpu_days_high"])).all()


def test_rate_intervals_cover_truth_across_seeds() -> None:
    """Simulation: over 30 seeded clusters with Poisson counts, >= 93% of the 18 category intervals cover."""
    hits = total = 0
    for seed in range(30):
        sim = simulate_cluster(n_gpus=16384, days=54, counts="expected", seed=100 + seed)
        est = reliab.estimate_rates(sim.interruptions, gpu_days=16384 * 54).summary().set_index("category")
        truth = sim.true_rates.set_index("category")
        truth = truth.loc[~truth["planned"], "rate_per_gpu_hour"] * 24 * 1000
        est = est.reindex(truth.index)
        low = est["rate_per_1k_gpu_days_low"].fillna(0.0)
        high = est["rate_per_1k_gpu_days_high"]
        if high.isna().any():  # a category with no event: upper bound of a zero count
            from statsmodels.stats.rates import confint_poisson

            high = high.fillna(pd.Series(confint_poisson(0, 16384 * 54 / 1000, method="exact-c")[1], index=high.index))
        hits += int(((low <= truth) & (truth <= high)).sum())
        total += len(truth)
    assert 0.93 <= hits / total <= 1.0


def test_planted_lemons_top_the_ranking(sample) -> None:
    """Simulation: detectable planted lemons (>= 2 hardware failures) rank in the top 15 of 2,110 nodes."""
    nodes = pd.read_csv(sample_path() / "truth" / "nodes.csv").set_index("host")
    hours = reliab.node_hours(sample.jobs, end="2024-07-25T00:00:00Z").reindex(nodes.index, fill_value=0.0)
    res = reliab.find_lemons(sample.signals, sample.interruptions, node_hours=hours, jobs=sample.jobs)
    table = res.table.set_index("host")
    lemons = nodes.index[nodes["lemon"]]
    ranks = table.loc[lemons, "rank"]
    detectable = table.loc[lemons, "failures"] >= 2
    assert detectable.sum() >= 3
    assert (ranks[detectable] <= 15).all(), ranks.sort_values().to_dict()
    assert (ranks <= 50).sum() >= 6  # most lemons within the top 2.4 %
    assert set(res.lemons) <= set(lemons) | set(table.index[table["failures"] >= 3])
    precision = np.isin(table.head(10).index, lemons).mean()
    assert precision >= 0.4
