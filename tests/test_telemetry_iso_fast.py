"""The telemetry CSV's ISO times read from their digits equal Arrow's ``strptime`` (with its
fields checked) and pandas: the same instants, and ``None`` for the same cells."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.telemetry import _fastcsv

_READ_BACK = ((0, 4, "year"), (5, 7, "month"), (8, 10, "day"), (11, 13, "hour"), (14, 16, "minute"),
              (17, 19, "second"))


def _strptime_route(values: pd.Series) -> pd.Series | None:
    """The route the digit arithmetic replaces: Arrow ``strptime``, then every field read back."""
    text = pc.utf8_trim_whitespace(pa.array(values, type=pa.string(), from_pandas=True))
    if text.null_count or not pc.all(pc.match_substring_regex(text, _fastcsv._ISO_Z)).as_py():
        return None
    try:
        times = pc.strptime(text, format="%Y-%m-%dT%H:%M:%SZ", unit="ns", error_is_null=True)
    except (pa.ArrowException, ValueError):
        return None
    if times.null_count:
        return None
    for start, stop, name in _READ_BACK:
        written = pc.cast(pc.utf8_slice_codeunits(text, start, stop), pa.int64())
        if not pc.all(pc.equal(written, getattr(pc, name)(times))).as_py():
            return None
    return pd.Series(times.to_numpy(zero_copy_only=False), index=values.index).dt.tz_localize("UTC")


def _pandas_route(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values.str.strip(), format="ISO8601", errors="coerce", utc=True)


def _cell(fields: tuple[int, ...]) -> str:
    y, mo, d, h, mi, s = fields
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z"


_YEAR = st.one_of(st.integers(1690, 2270), st.sampled_from([1700, 1800, 1900, 2000, 2024, 2100, 2200, 2259]))
_FIELDS = st.tuples(_YEAR, st.integers(0, 13), st.integers(0, 32), st.integers(0, 25), st.integers(0, 60),
                    st.integers(0, 61))
_PAD = st.sampled_from(["", " ", "\t", "  "])


def _check(cells: list[str]) -> None:
    values = pd.Series(cells, dtype=object, index=range(10, 10 + len(cells)))
    fast = _fastcsv.iso_utc(values)
    ref = _strptime_route(values)
    if ref is None:
        assert fast is None
        return
    assert fast is not None
    pd.testing.assert_series_equal(fast, ref, check_exact=True)
    pd.testing.assert_series_equal(fast, _pandas_route(values), check_exact=True)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_FIELDS, _PAD, _PAD), min_size=1, max_size=12))
def test_iso_utc_equals_strptime_route(cells: list[tuple[tuple[int, ...], str, str]]) -> None:
    _check([a + _cell(f) + b for f, a, b in cells])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1700, 2259), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
                          st.integers(0, 59), st.integers(0, 59)), min_size=1, max_size=40))
def test_valid_times_are_read(fields: list[tuple[int, ...]]) -> None:
    values = pd.Series([_cell(f) for f in fields], dtype=object)
    fast = _fastcsv.iso_utc(values)
    assert fast is not None
    pd.testing.assert_series_equal(fast, _pandas_route(values), check_exact=True)


def test_calendar_edges() -> None:
    good = ["2024-02-29T23:59:59Z", "2000-02-29T00:00:00Z", "1700-01-01T00:00:00Z", "2259-12-31T23:59:59Z",
            "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2024-12-31T00:00:00Z"]
    _check(good)
    assert _fastcsv.iso_utc(pd.Series(good)) is not None
    for bad in ("2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
                "2024-02-28T24:00:00Z", "2024-02-28T23:60:00Z", "2024-02-28T23:59:60Z", "2024-00-10T00:00:00Z",
                "2024-13-10T00:00:00Z", "2024-01-00T00:00:00Z", "1699-12-31T23:59:59Z", "2260-01-01T00:00:00Z",
                "2024-06-01T00:00:00.5Z", "2024-06-01T00:00:00+02:00", "2024-06-01 00:00:00", ""):
        assert _fastcsv.iso_utc(pd.Series([good[0], bad])) is None, bad
        _check([good[0], bad])


def test_sliced_and_large_arrays() -> None:
    cells = [_cell((2024, 6, 1 + k % 28, k % 24, k % 60, k % 60)) for k in range(100)]
    text = pa.array(cells, type=pa.string()).slice(7, 50)
    ref = pd.to_datetime(pd.Series(cells[7:57]), format="ISO8601", utc=True)
    assert (_fastcsv.iso_nanos(text) == pd.DatetimeIndex(ref).asi8).all()
    wide = pa.array(cells, type=pa.large_string()).slice(3, 20)
    assert (_fastcsv.iso_nanos(wide) == pd.DatetimeIndex(pd.to_datetime(pd.Series(cells[3:23]), utc=True)).asi8).all()
