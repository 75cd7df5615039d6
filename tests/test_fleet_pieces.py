"""A run whose files share no window, finished file by file, equals the joined run bitwise.

:func:`reliab.fleet._chunk.reduce_run` finishes a run piece by piece when no window lies in
two of its files (:mod:`reliab.fleet._pieces`).  Files cut on window edges at random hours
(some GPUs missing from some files, temperatures missing, power stepping by more than the
swing level across the cuts, regular or irregular sampling) are reduced in runs of random
lengths, each continuing the one before, once that way and once with the piece path turned
off (every run joined first): the windows, the interval values, the intervals used and what
each run carries to the next are the same, floats compared as bits.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.fleet import _pieces
from reliab.fleet import telemetry as fleet_telemetry
from reliab.fleet._chunk import reduce_run
from reliab.fleet._rows import sketch

START = pd.Timestamp("2024-05-01T00:00:00Z")
HOURS = 8
KW = {"freq": "1h", "columns": None, "thresholds": {"gpu_temp_c": 64.0}, "swings": {"power_w": 300.0},
      "duplicates": "mean", "events": pd.DataFrame({"time": [START + pd.Timedelta(minutes=70)], "host": ["n1"]}),
      "event_name": "failures"}


def _frame(rng: np.random.Generator, regular: bool) -> pd.DataFrame:
    frames = []
    for host in ("n0", "n1", "n2"):
        for gpu in ("0", "1", "2"):
            gaps = np.full(HOURS * 60, 60.0) if regular else rng.uniform(20.0, 160.0, HOURS * 60)
            t = START + pd.to_timedelta(7.5 + np.cumsum(gaps), unit="s")
            t = t[t < START + pd.Timedelta(hours=HOURS)]
            power = np.where(rng.random(len(t)) < 0.2, 100.0, 650.0) + rng.normal(0, 5, len(t))
            temp = (63 + 2 * rng.standard_normal(len(t))).round()
            temp[rng.random(len(t)) < 0.05] = np.nan
            keep = rng.random(len(t)) > 0.02  # a few samples lost
            frames.append(pd.DataFrame({"time": t[keep], "host": host, "gpu": gpu, "gpu_temp_c": temp[keep],
                                        "power_w": power[keep]}))
    return pd.concat(frames, ignore_index=True).astype({"gpu_temp_c": "float32", "power_w": "float32"})


def _chain(files: list[str], lengths: list[int]) -> list[dict]:
    spec = fleet_telemetry._spec(files[0], KW, "host")
    runs, at = [], 0
    for n in lengths:
        runs.append(files[at:at + n])
        at += n
    out, carry = [], None
    for i, run in enumerate(runs):
        out.append(reduce_run(run, carry, spec, last=i == len(runs) - 1))
        carry = out[-1]["carry"]
    return out


def _same(a: object, b: object) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        for c in a.columns:
            if a[c].dtype.kind == "f":
                assert (a[c].to_numpy().view(np.int64) == b[c].to_numpy().view(np.int64)).all(), c
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert (a.view(np.uint8) == b.view(np.uint8)).all()
    else:
        assert (a is None) == (b is None)


def _median_inputs(sketch: tuple) -> list[tuple]:
    """A sketch as its multiset of (code, value) with counts summed (pieces may split a triple)."""
    got: dict[tuple, int] = {}
    for c, v, n in zip(*sketch, strict=True):
        got[(int(c), float(v))] = got.get((int(c), float(v)), 0) + int(n)
    return sorted(got.items())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), regular=st.booleans(),
       edges=st.lists(st.integers(1, HOURS - 1), min_size=1, max_size=5, unique=True),
       lengths=st.lists(st.integers(1, 4), min_size=1, max_size=6),
       drop_gpu=st.booleans())
def test_pieces_equal_the_joined_run(seed: int, regular: bool, edges: list[int], lengths: list[int],
                                     drop_gpu: bool) -> None:
    rng = np.random.default_rng(seed)
    frame = _frame(rng, regular)
    cuts = [START, *(START + pd.Timedelta(hours=h) for h in sorted(edges)), START + pd.Timedelta(hours=HOURS)]
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            part = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
            if drop_gpu and i % 2:  # a GPU silent for a whole file
                part = part[~((part["host"] == "n1") & (part["gpu"] == "2"))]
            files.append(str(Path(folder) / f"part-{i}.parquet"))
            part.sort_values(["host", "gpu", "time"]).to_parquet(files[-1], index=False)
        # runs of the given lengths, the rest in one last run
        lengths = [n for n in lengths if n][: len(files)]
        while sum(lengths) > len(files):
            lengths[-1] -= sum(lengths) - len(files)
            lengths = [n for n in lengths if n > 0]
        if sum(lengths) < len(files):
            lengths.append(len(files) - sum(lengths))
        pieces = _chain(files, lengths)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(_pieces, "disjoint", lambda held, parts: False)
            joined = _chain(files, lengths)
    assert len(pieces) == len(joined)
    for a, b in zip(pieces, joined, strict=True):
        _same(a["windows"], b["windows"])
        assert a["names"] == b["names"]
        assert _median_inputs(a["per"]) == _median_inputs(b["per"])
        assert _median_inputs(a["gaps"]) == _median_inputs(b["gaps"])
        assert list(a["used"]) == list(b["used"])
        assert np.array(list(a["used"].values())).tobytes() == np.array(list(b["used"].values())).tobytes()
        ca, cb = a["carry"], b["carry"]
        assert ca.names == cb.names and sorted(ca.held) == sorted(cb.held)
        for k in ca.held:
            _same(ca.held[k], cb.held[k])
        for x, y in ((ca.tail_last, cb.tail_last), (ca.prev_first, cb.prev_first),
                     *((ca.tail_value[c], cb.tail_value[c]) for c in ca.tail_value)):
            _same(x, y)
    got = pd.concat([r["windows"] for r in pieces if r["windows"] is not None], ignore_index=True)
    assert got["window"].nunique() == HOURS and got["failures"].sum() == 1
    assert (got["power_w_swings"] > 0).any()


def test_files_sharing_a_window_are_joined() -> None:
    """The piece path takes only runs whose files' windows follow each other."""
    def rows(series: list[int], window: list[int]) -> dict:
        return {"series": np.array(series), "window": np.array(window)}

    assert _pieces.disjoint({}, [rows([0, 0, 1], [3, 4, 3]), rows([0, 1], [5, 5])])
    assert not _pieces.disjoint({}, [rows([0, 0, 1], [3, 4, 3]), rows([0, 1], [4, 5])])  # window 4 twice
    assert not _pieces.disjoint(rows([0], [5]), [rows([0], [5])])  # the held window continues
    assert _pieces.disjoint(rows([0], [4]), [rows([0], [5])])
    assert not _pieces.disjoint({}, [rows([1, 0], [3, 3])])  # not by series
    assert not _pieces.disjoint({}, [])


def test_sketch_of_one_value_counts_per_series() -> None:
    """Regular sampling: every window of every series gives 900 s; the sketch is one triple
    per series with its count (hand-written), told where the series start or not."""
    codes = np.array([0, 0, 2, 2, 2])
    values = np.full(5, 900.0)
    for starts in (None, np.array([0, 2])):
        c, v, n = sketch(codes, values, starts)
        assert (c.tolist(), v.tolist(), n.tolist()) == ([0, 2], [900.0, 900.0], [2, 3])
    values[1] = np.nan  # a window of one sample has no within-window interval: dropped
    c, v, n = sketch(codes, values, np.array([0, 2]))
    assert (c.tolist(), v.tolist(), n.tolist()) == ([0, 2], [900.0, 900.0], [1, 3])
    values[4] = 450.0  # one window sampled twice as often: its own triple
    c, v, n = sketch(codes, values, np.array([0, 2]))
    assert sorted(zip(c.tolist(), v.tolist(), n.tolist(), strict=True)) == [(0, 900.0, 1), (2, 450.0, 1),
                                                                           (2, 900.0, 2)]
