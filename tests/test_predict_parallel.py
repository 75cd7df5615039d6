"""The failure-risk fits run on threads: the same scores as one after the other."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.datasets import simulate_cluster
from reliab.datasets._simulate import default_rates
from reliab.predict._evaluate import evaluate, fold_rows
from reliab.predict._features import _us, build_features, collect_events, label


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    rates = {k: 40 * v for k, v in default_rates(128 / 16384, 1.0).items()}
    sim = simulate_cluster(n_gpus=128, days=50, seed=5, rates=rates, precursor_fraction=0.8)
    folder = tmp_path_factory.mktemp("risk")
    sim.write(folder)
    return reliab.ingest(folder)


def _inputs(data):
    sig, inter, jobs = data.signals, data.interruptions, data.jobs
    ev = collect_events(sig, inter, jobs)
    end = max(sig["time"].max(), inter["time"].max(), jobs["end"].max())
    start = pd.Timestamp(int(ev.first_seen.min()) * 1000, tz="UTC").floor("D")
    frame = build_features(ev, pd.date_range(start + pd.Timedelta(days=1), end, freq="D"))
    frame = frame[frame["in_service"].to_numpy() > 0].reset_index(drop=True)
    return frame, ev, sig, inter, int(_us(pd.Series([end]))[0])


def test_threaded_folds_score_exactly_as_sequential_ones(small):
    frame, ev, sig, inter, end_us = _inputs(small)
    y, y1d = label(ev, frame, 168.0), label(ev, frame, 24.0)
    kw = {"horizon_h": 168.0, "end_us": end_us}
    one = evaluate(frame, y, y1d, ev, sig, inter, **kw)
    with ThreadPoolExecutor(max_workers=2) as pool:
        two = evaluate(frame, y, y1d, ev, sig, inter, pool=pool, **kw)
    assert len(set(one.fold)) >= 2  # several fits ran side by side
    assert one.scores.keys() == two.scores.keys()
    for name in one.scores:
        np.testing.assert_array_equal(one.scores[name], two.scores[name], err_msg=name)
    np.testing.assert_array_equal(one.rows, two.rows)


def test_no_fold_raises_before_any_fit(small):
    frame, _, _, _, _ = _inputs(small)
    t = _us(frame["time"])
    # a horizon longer than the logs leaves no fold whose outcome closes
    with pytest.raises(reliab.InsufficientDataError, match="no rolling-origin fold"):
        fold_rows(t, int(t.max()), horizon_h=24.0 * 60)
