"""Speed of failure-risk prediction: 2,048 nodes × 54 days, features and rolling evaluation.

The simulated Llama 3 cluster (16,384 GPUs, 8 per node, 54 days, precursors before 80 % of
GPU, network and host-memory failures) is written and ingested once (not timed); then timed
on whatever the machine is doing:

* ``features`` — indexing the canonical tables by node and building every trailing-window
  feature for every node and day (:func:`reliab.predict._features.build_features`);
* ``rolling evaluation`` — every fold's boosted trees, Platt map, Poisson hazard and lemon
  baseline (:func:`reliab.predict._evaluate.evaluate`);
* ``predict_failures`` — the whole call: the two above, labels, every metric with 200 bootstrap
  resamples of the nodes, the drain curve and the final risk table.

``python benchmarks/bench_predict.py [n_gpus] [days]`` (default 16384 54).  Target: under
60 s on 2 cores for the first two together.
"""

from __future__ import annotations

import sys
import tempfile
import time

import pandas as pd

import reliab
from reliab.datasets import simulate_cluster
from reliab.predict._evaluate import evaluate
from reliab.predict._features import _us, build_features, collect_events, label


def main(argv: list[str] | None = None) -> dict:
    args = list(sys.argv[1:] if argv is None else argv)
    n_gpus = int(args[0]) if args else 16_384
    days = float(args[1]) if len(args) > 1 else 54.0
    sim = simulate_cluster(n_gpus=n_gpus, days=days, seed=7, precursor_fraction=0.8)
    with tempfile.TemporaryDirectory() as tmp:
        sim.write(tmp)
        data = reliab.ingest(tmp)
    sig, inter, jobs = data.signals, data.interruptions, data.jobs
    t0 = time.perf_counter()
    ev = collect_events(sig, inter, jobs)
    end = max(sig["time"].max(), inter["time"].max(), jobs["end"].max())
    start = pd.Timestamp(int(ev.first_seen.min()) * 1000, tz="UTC").floor("D")
    frame = build_features(ev, pd.date_range(start + pd.Timedelta(days=1), end, freq="D"))
    frame = frame[frame["in_service"].to_numpy() > 0].reset_index(drop=True)
    t_feat = time.perf_counter() - t0
    y, y1d = label(ev, frame, 168.0), label(ev, frame, 24.0)
    t1 = time.perf_counter()
    folds = evaluate(frame, y, y1d, ev, sig, inter, horizon_h=168.0,
                     end_us=int(_us(pd.Series([end]))[0]))
    t_eval = time.perf_counter() - t1
    t2 = time.perf_counter()
    res = reliab.predict_failures(data, horizon="7d", n_boot=200)
    t_all = time.perf_counter() - t2
    return {"nodes": len(ev.units), "node-days": len(frame), "folds": int(len(set(folds.fold))),
            "hardware interruptions": len(ev.failures[1]),
            "features": {"value": t_feat, "unit": "s"},
            "rolling evaluation": {"value": t_eval, "unit": "s"},
            "features + rolling evaluation": {"value": t_feat + t_eval, "unit": "s"},
            "predict_failures (with 200 bootstraps)": {"value": t_all, "unit": "s"},
            "boosted AUROC": res.metric("boosted")[0], "hazard AUROC": res.metric("hazard")[0]}


if __name__ == "__main__":
    for name, value in main().items():
        print(f"{name}: {value}")
