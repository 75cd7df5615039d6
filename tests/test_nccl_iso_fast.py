"""The NCCL reader's integer-arithmetic ISO time equals the datetime route it replaces."""

from __future__ import annotations

from datetime import UTC, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats import nccl

_FIELD = st.tuples(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
                   st.integers(0, 61), st.integers(0, 99))
_OFFSET = st.sampled_from(["", "Z", "+00:00", "+05:30", "-0800", "+1400", "-12:00", "+99:99", "+0545"])
_ZONE = st.sampled_from([UTC, timezone(timedelta(hours=-5)), timezone(timedelta(hours=9, minutes=30))])


@settings(max_examples=500, deadline=None)
@given(_FIELD, _OFFSET, _ZONE)
def test_iso_second_ns_equals_iso_base(fields: tuple[int, ...], offset: str, tz: timezone) -> None:
    text = (f"{fields[0]:04d}", *(f"{f:02d}" for f in fields[1:]))
    base = nccl._iso_base(text, offset or None, tz)
    assert nccl._iso_second_ns(text, offset, tz) == (None if base is None else base.value)


def test_range_edges() -> None:
    assert nccl._iso_second_ns(("1677", "09", "21", "23", "59", "59"), "", UTC) is None
    assert nccl._iso_second_ns(("1677", "09", "22", "00", "00", "00"), "", UTC) is not None
    assert nccl._iso_second_ns(("2262", "04", "11", "00", "00", "00"), "", UTC) is None
    assert nccl._iso_second_ns(("2024", "02", "30", "00", "00", "00"), "", UTC) is None
