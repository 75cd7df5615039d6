"""Job MTTF against job size (reliab.models.jobs.mttf): published projections and intervals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import reliab
from reliab.errors import InsufficientDataError
from reliab.models.jobs.mttf import fay_feuer_interval
from reliab.taxonomy.vocabulary import LLAMA3_PLANNED, table5

REF = pd.read_csv(Path(__file__).parent / "reference" / "job_reliability.csv").set_index("key")


def ref(key: str) -> tuple[float, float]:
    return float(REF.loc[key, "value"]), float(REF.loc[key, "abs_tol"])


@pytest.fixture(scope="module")
def table5_rates():
    t = table5()
    rows = t.loc[t.index.repeat(t["count"]), ["category", "component"]].assign(planned=False)
    planned = pd.DataFrame({"category": ["Planned"] * LLAMA3_PLANNED, "component": "Planned",
                            "planned": True})
    inter = pd.concat([rows, planned], ignore_index=True)
    return reliab.estimate_rates(inter, gpu_days=16_384 * 54, job_hours=54 * 24)


def test_published_rsc_projections():
    """Reference: Kokolis et al. (HPCA 2025) — 1.8 h at 16,384 GPUs, 0.23 h at 131,072 GPUs."""
    rate = ref("rsc1_node_failure_rate")[0] / 1000
    for key, gpus in (("rsc1_mttf_16384_gpus", 16_384), ("rsc1_mttf_131072_gpus", 131_072)):
        value, tol = ref(key)
        assert reliab.job_mttf(gpus, node_failure_rate_per_day=rate) == pytest.approx(value, abs=tol)
    # closed form: 24 h / (N_nodes r)
    assert reliab.job_mttf(16_384, node_failure_rate_per_day=rate) == pytest.approx(24 / (2048 * rate))


def test_llama3_mtti_from_table5(table5_rates):
    """Reference: Llama 3 — 419 unexpected interruptions in 54 days on 16,384 GPUs is 3.09 h."""
    value, tol = ref("llama3_mtti_16384_gpus")
    rate = ref("llama3_unexpected")[0] / (2048 * ref("llama3_days")[0])
    assert reliab.job_mttf(16_384, node_failure_rate_per_day=rate) == pytest.approx(value, abs=tol)
    # richer form: the 18 fitted category rates summed over the job's nodes
    assert reliab.job_mttf(16_384, rates=table5_rates) == pytest.approx(value, abs=tol)
    res = reliab.estimate_job_mttf(table5_rates)
    assert res.at(16_384) == pytest.approx(1296 / 419, rel=1e-12)


def test_interval_equals_time_terminated_chi_square(table5_rates):
    """Closed form: one exposure for all categories -> the exact Garwood interval, i.e. the
    time-terminated chi-square MTBF interval 2T/chi2(0.975, 2r+2) .. 2T/chi2(0.025, 2r)."""
    res = reliab.estimate_job_mttf(table5_rates, n_gpus=[16_384])
    row = res.curve.iloc[0]
    t, r = 1296.0, 419
    assert row["mttf_low_h"] == pytest.approx(2 * t / stats.chi2.ppf(0.975, 2 * r + 2), rel=1e-9)
    assert row["mttf_high_h"] == pytest.approx(2 * t / stats.chi2.ppf(0.025, 2 * r), rel=1e-9)
    assert (round(row["mttf_low_h"], 2), round(row["mttf_high_h"], 2)) == (2.81, 3.41)


def test_curve_scales_as_one_over_n(table5_rates):
    res = reliab.estimate_job_mttf(table5_rates)
    c = res.curve
    assert np.allclose(c["mttf_h"] * c["n_gpus"], c["mttf_h"].iloc[0] * c["n_gpus"].iloc[0])
    assert (c["mttf_low_h"] < c["mttf_h"]).all() and (c["mttf_h"] < c["mttf_high_h"]).all()


def test_fay_feuer_reduces_to_garwood():
    """Closed form: equal weights w give w x the exact Garwood interval of the total count."""
    counts = np.array([3, 0, 7, 12])
    lo, hi = fay_feuer_interval(counts, np.full(4, 2.5), 0.9)
    k = counts.sum()
    assert lo == pytest.approx(2.5 * stats.chi2.ppf(0.05, 2 * k) / 2, rel=1e-10)
    assert hi == pytest.approx(2.5 * stats.chi2.ppf(0.95, 2 * k + 2) / 2, rel=1e-10)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=6),
       st.lists(st.floats(0.01, 100.0), min_size=6, max_size=6))
def test_fay_feuer_brackets_the_estimate(counts, weights):
    x, w = np.array(counts), np.array(weights[: len(counts)])
    lo, hi = fay_feuer_interval(x, w, 0.95)
    assert 0 <= lo <= w @ x <= hi


def test_empirical_mttf_recovers_a_known_rate():
    """Simulation with known truth: jobs of 8..1024 GPUs failing at r per node-day; the
    measured MTTF per bucket matches the model (ratio ~ 1) and its interval covers it."""
    rng = np.random.default_rng(7)
    rate, rows, inter = 0.02, [], []
    start = pd.Timestamp("2024-01-01", tz="UTC")
    for k, gpus in enumerate(np.repeat([8, 64, 1024], 400)):
        hours = float(rng.uniform(10, 200))
        n_fail = rng.poisson(hours * gpus / 8 * rate / 24)
        rows.append((str(k), start, start + pd.Timedelta(hours=hours), gpus))
        inter += [(str(k), False)] * n_fail
    jobs = pd.DataFrame(rows, columns=["job_id", "start", "end", "ngpus"])
    interruptions = pd.DataFrame(inter, columns=["job_id", "planned"])
    node_days = float((jobs["end"] - jobs["start"]).dt.total_seconds().mul(jobs["ngpus"] / 8).sum() / 86400)
    res = reliab.estimate_job_mttf(
            pd.DataFrame({"category": ["all"], "count": [len(inter)],
                          "rate_per_1k_node_days": [1000 * len(inter) / node_days]}),
            jobs=jobs, interruptions=interruptions)
    e = res.empirical
    assert list(e["max_gpus"]) == [8, 64, 1024]
    truth = 24 / (e["max_gpus"] / 8 * rate)
    assert ((e["mttf_low_h"] <= truth) & (truth <= e["mttf_high_h"])).all()
    assert e["ratio"].between(0.8, 1.25).all()


def test_sample_measured_mttf(sample_ingest):
    """Regression: the bundled sample's 16,384-GPU job — measured MTTF is running hours / 419."""
    rates = reliab.estimate_rates(sample_ingest.interruptions, gpu_days=16_384 * 54, job_hours=1296)
    res = reliab.estimate_job_mttf(rates, jobs=sample_ingest.jobs.dropna(subset=["end"]),
                                   interruptions=sample_ingest.interruptions)
    e = res.empirical.set_index("bucket")
    # the run's 16,384-GPU allocations, and other users' 1-2 node jobs that never count
    assert int(e.loc["8193-16384", "failures"]) == 419 and (e["failures"].sum() == 419)
    assert e.loc["8193-16384", "mttf_h"] < 1296 / 419  # downtime is not running time
    assert e.loc["8193-16384", "mean_gpus"] == 16_384
    assert res.at(16_384) == pytest.approx(1296 / 419)


def test_result_api(table5_rates):
    res = reliab.estimate_job_mttf(table5_rates)
    assert isinstance(res.summary(), pd.DataFrame)
    json.dumps(res.to_dict())
    assert "JobMTTFResult" in res._repr_html_()
    assert res.plot() is not None


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_gpus": 0, "node_failure_rate_per_day": 0.01}, "n_gpus"),
    ({"n_gpus": 16, "node_failure_rate_per_day": -1.0}, "node_failure_rate_per_day"),
    ({"n_gpus": 16}, "exactly one"),
    ({"n_gpus": 16, "node_failure_rate_per_day": 0.01, "gpus_per_node": 0}, "gpus_per_node"),
])
def test_errors_name_the_parameter(kwargs, match):
    n = kwargs.pop("n_gpus")
    with pytest.raises(ValueError, match=match):
        reliab.job_mttf(n, **kwargs)


def test_zero_rate_and_no_exposure():
    assert reliab.job_mttf(8, node_failure_rate_per_day=0.0) == math.inf
    with pytest.raises(InsufficientDataError):
        reliab.estimate_job_mttf({"a": 0.01})
