"""Partial windows combine exactly across task cuts at any time (a hypothesis property).

The telemetry of a few GPUs is written as files cut at random instants (inside a window, on
a window's edge, between two samples of one second), and reduced as the Dask path does it:
one :func:`reliab.fleet._chunk.reduce_run` per file, each continuing the one before, then
again with the group's sampling intervals where a run's differ
(:func:`reliab.fleet._chunk.check_intervals`).  The windows equal the one-machine reduction
of all samples at once: means, extremes, observed hours, hours above, swing counts across
the cuts and failures per window.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.fleet import reduce_telemetry
from reliab.fleet import telemetry as fleet_telemetry
from reliab.fleet._chunk import check_intervals, reduce_run

START = pd.Timestamp("2024-05-01T00:00:00Z")
SPAN_S = 3 * 3600
THRESHOLDS = {"gpu_temp_c": 64.0}
SWINGS = {"power_w": 300.0}
EVENTS = pd.DataFrame({"time": [START + pd.Timedelta(minutes=70)], "host": ["n1"]})


def _frame(seed: int, regular: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for host in ("n0", "n1"):
        for gpu in ("0", "1"):
            gaps = np.full(SPAN_S // 20, 20.0) if regular else rng.uniform(5.0, 40.0, SPAN_S // 12)
            t = START + pd.to_timedelta(np.cumsum(gaps), unit="s")
            t = t[t < START + pd.Timedelta(seconds=SPAN_S)]
            power = np.where(rng.random(len(t)) < 0.1, 120.0, 640.0)
            temp = (63 + 2 * rng.standard_normal(len(t))).round()
            temp[rng.random(len(t)) < 0.05] = np.nan
            frames.append(pd.DataFrame({"time": t, "host": host, "gpu": gpu, "gpu_temp_c": temp, "power_w": power}))
    return pd.concat(frames, ignore_index=True)


def _chained(files: list[str]) -> pd.DataFrame:
    kw = {"freq": "1h", "columns": None, "thresholds": THRESHOLDS, "swings": SWINGS, "duplicates": "mean",
          "events": EVENTS, "event_name": "failures"}
    spec = fleet_telemetry._spec(files[0], kw, "host")

    def chain(intervals: dict | None) -> list[dict]:
        out, carry = [], None
        for i, path in enumerate(files):
            out.append(reduce_run([path], carry, spec, last=i == len(files) - 1, given=intervals))
            carry = out[-1]["carry"]
        return out

    first = chain(None)
    intervals, redo = check_intervals(first)
    runs = chain(intervals) if redo else first
    got = pd.concat([r["windows"] for r in runs if r["windows"] is not None], ignore_index=True)
    return got.sort_values(["host", "window"], kind="stable").reset_index(drop=True)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), regular=st.booleans(),
       cuts=st.lists(st.integers(1, SPAN_S - 1), min_size=1, max_size=4, unique=True),
       on_edge=st.booleans())
def test_windows_do_not_depend_on_where_tasks_cut(seed: int, regular: bool, cuts: list[int], on_edge: bool) -> None:
    frame = _frame(seed, regular)
    instants = sorted({START + pd.Timedelta(seconds=3600 if on_edge and i == 0 else c) for i, c in enumerate(cuts)})
    edges = [frame["time"].min(), *instants, frame["time"].max() + pd.Timedelta(seconds=1)]
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            part = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
            if len(part):
                files.append(str(Path(folder) / f"part-{i}.parquet"))
                part.sort_values(["host", "gpu", "time"]).to_parquet(files[-1], index=False)
        got = _chained(files)
    want = reduce_telemetry(frame, thresholds=THRESHOLDS, swings=SWINGS, events=EVENTS)
    assert set(got.columns) == set(want.columns)
    pd.testing.assert_frame_equal(got, want[got.columns], check_exact=False, rtol=1e-12, atol=1e-12)
    assert got["failures"].sum() == 1
