"""The dates an ``output=`` run reads back signals from: every UTC day some job's window meets.

``OutputWriter.attribution_signals`` tests the times of a signals part only when its ``date=``
partition meets a window around some job end.  The set used to be built with one
``pandas.date_range`` per job (44 s of a 52 s ``output=`` ingest of 100,000 sacct jobs);
:func:`days_met` merges the windows' days first.  Expectations below are written by hand; the
property compares with the per-window definition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io._streamed import days_met


def _ns(*stamps: str) -> np.ndarray:
    return pd.DatetimeIndex(stamps, tz="UTC").as_unit("ns").asi8


def test_windows_across_midnight_and_apart() -> None:
    lo = _ns("2024-03-01 23:00", "2024-03-05 10:00", "2024-02-28 12:00")
    hi = _ns("2024-03-02 01:00", "2024-03-05 11:00", "2024-03-01 00:00")
    # 02-28 .. 03-02 (two overlapping windows, 2024 is a leap year), then 03-05 alone
    assert days_met(lo, hi) == {"2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02", "2024-03-05"}


def test_a_window_ending_at_midnight_meets_that_day_and_none_is_empty() -> None:
    assert days_met(_ns("2023-12-31 22:00"), _ns("2024-01-01 00:00")) == {"2023-12-31", "2024-01-01"}
    assert days_met(_ns("1969-12-31 23:59:59"), _ns("1970-01-01 00:00:01")) == {"1969-12-31", "1970-01-01"}
    assert days_met(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == set()


_T = st.integers(min_value=-(10**9), max_value=10**9)  # seconds around 1970, either side


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_T, st.integers(min_value=0, max_value=10 * 86_400)), max_size=30))
def test_same_days_as_one_date_range_per_window(windows: list[tuple[int, int]]) -> None:
    lo = np.array([a for a, _ in windows], dtype=np.int64) * 10**9
    hi = lo + np.array([w for _, w in windows], dtype=np.int64) * 10**9
    expected = {d.strftime("%Y-%m-%d") for a, b in zip(lo, hi, strict=True)
                for d in pd.date_range(pd.Timestamp(a, tz="UTC").floor("D"),
                                       pd.Timestamp(b, tz="UTC").floor("D"), freq="D")}
    assert days_met(lo, hi) == expected
