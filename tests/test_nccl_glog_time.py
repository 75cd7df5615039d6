"""A glog line's time built from integers equals the Timestamp-plus-Timedelta it replaces."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats._nccl_quiet import utc_plus_ns
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN

_SECONDS = st.integers(int(TIME_MIN.timestamp()) + 1, int(TIME_MAX.timestamp()) - 1)


def _same(when: datetime, nanos: int) -> None:
    fast, ref = utc_plus_ns(when, nanos), pd.Timestamp(when) + pd.Timedelta(nanoseconds=nanos)
    assert (fast, fast.unit, fast.tz, repr(fast)) == (ref, ref.unit, ref.tz, repr(ref))


@settings(max_examples=500, deadline=None)
@given(_SECONDS, st.integers(0, 999_999_999))
def test_equals_timestamp_plus_timedelta(second: int, nanos: int) -> None:
    _same(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=second), nanos)


def test_edges() -> None:
    for when in (datetime(1970, 1, 1, tzinfo=UTC), datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
                 datetime(2024, 2, 29, 12, 0, 0, tzinfo=UTC), datetime(1700, 3, 1, tzinfo=UTC),
                 datetime(2262, 4, 11, 23, 47, 15, tzinfo=UTC), datetime(1677, 9, 21, 0, 12, 44, tzinfo=UTC)):
        for nanos in (0, 1, 999, 476387609, 999_999_999):
            if TIME_MIN <= when < TIME_MAX:
                _same(when, nanos)
