"""Segment reductions of :class:`reliab.fleet._segments.Segments` equal a plain loop over
the segments, whichever layout they take (equal lengths: reshape; uneven: padded grid;
long: reduceat)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.fleet._segments import Segments


def _loop(x: list[float], starts: list[int]) -> dict[str, list[float]]:
    """Sum (NaN propagates), NaN-ignoring min/max, count of values above 0.5, by hand."""
    bounds = [*starts, len(x)]
    out: dict[str, list[float]] = {"sum": [], "min": [], "max": [], "above": [], "first": [], "last": []}
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        part = x[lo:hi]
        total = 0.0
        for v in part:
            total += v
        seen = [v for v in part if not math.isnan(v)]
        out["sum"].append(total)
        out["min"].append(min(seen) if seen else math.nan)
        out["max"].append(max(seen) if seen else math.nan)
        out["above"].append(sum(1 for v in part if v > 0.5))
        out["first"].append(part[0])
        out["last"].append(part[-1])
    return out


@settings(max_examples=60, deadline=None)
@given(lengths=st.one_of(st.lists(st.integers(1, 6), min_size=1, max_size=40),
                         st.integers(1, 9).flatmap(lambda k: st.lists(st.just(k), min_size=1, max_size=30)),
                         st.lists(st.integers(1, 200), min_size=1, max_size=5)),
       seed=st.integers(0, 1000), nan_share=st.sampled_from([0.0, 0.3, 1.0]))
def test_segments_equal_a_loop(lengths: list[int], seed: int, nan_share: float) -> None:
    rng = np.random.default_rng(seed)
    total = sum(lengths)
    x = rng.random(total)
    x[rng.random(total) < nan_share] = np.nan
    starts = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    seg = Segments(starts, total)
    want = _loop(x.tolist(), starts.tolist())
    np.testing.assert_allclose(seg.sum(x), want["sum"], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(seg.fmin(x), want["min"])
    np.testing.assert_array_equal(seg.fmax(x), want["max"])
    np.testing.assert_array_equal(seg.count(x > 0.5), want["above"])
    np.testing.assert_array_equal(seg.first(x), want["first"])
    np.testing.assert_array_equal(seg.last(x), want["last"])
    assert seg.count(x > 0.5).dtype == np.int64


def test_layouts() -> None:
    """Equal lengths reshape, uneven short ones pad, long ones fall back to reduceat."""
    assert Segments(np.array([0, 4, 8]), 12).grid and Segments(np.array([0, 4, 8]), 12).index is None
    uneven = Segments(np.array([0, 4, 7]), 12)
    assert uneven.grid and uneven.index is not None
    assert not Segments(np.array([0, 1]), 500).grid  # one segment of 499: the grid would be 998 cells
    assert Segments(np.zeros(0, np.int64), 0).sum(np.zeros(0)).shape == (0,)


@settings(max_examples=40, deadline=None)
@given(n_codes=st.integers(1, 6), pieces=st.integers(1, 4), seed=st.integers(0, 1000), full=st.booleans())
def test_stack_orders_rows_by_series_then_piece(n_codes: int, pieces: int, seed: int, full: bool) -> None:
    """Stacked rows equal a stable sort of the concatenated pieces by series (the pieces come
    in time order), whether every piece holds every series as often (reshape) or not."""
    from reliab.fleet._rows import stack

    rng = np.random.default_rng(seed)
    parts = []
    for p in range(pieces):
        per = np.full(n_codes, 1 + p) if full else rng.integers(0, 4, n_codes)
        series = np.repeat(np.arange(n_codes), per)
        parts.append({"series": series, "first": np.arange(len(series)) + 1000 * p,
                      "x": rng.random(len(series))})
    parts = [q for q in parts if len(q["series"])]
    if not parts:
        return
    got, fresh = stack(parts, n_codes)
    joined = {k: np.concatenate([q[k] for q in parts]) for k in parts[0]}
    order = np.argsort(joined["series"], kind="stable")
    for k in joined:
        np.testing.assert_array_equal(got[k], joined[k][order])
    want_fresh = np.concatenate([np.full(len(q["series"]), i > 0) for i, q in enumerate(parts)])[order]
    np.testing.assert_array_equal(fresh, want_fresh)
