"""Stamp times of the bulk kernel parser (Arrow's ISO 8601 cast) against the strftime-format reference."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.kernel._bulk_time import reference_time, stamp_times, with_time

#: parts of a stamp: accepted forms first, then near misses the shapes refuse
_DATES = ["2024-06-03", "1999-12-31", "2024-02-29", "2259-12-31", "1900-01-01",
          "2023-02-29", "2024-02-30", "2024-13-01", "2024-00-10", "2260-01-01", "1899-12-31", "2024-6-03"]
_TIMES = ["14:02:11", "00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60"]
_FRACS = ["", ".5", ".123456", ".000001", ".1234567", "."]
_OFFS = ["+00:00", "Z", "-07:30", "+23:59", "+05:45", "+24:00", "+0000", "-0730", "+2400", "", "z"]
_TAILS = [" n1 kernel: EDAC MC0: 1 CE x", "", "  x", "\tx"]


def _reference(lines: list[str]) -> list[datetime | None]:
    """The time of every line whose first word is an accepted stamp, by the strftime reference."""
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    line = pl.col("line")
    stamp = line.str.head(line.str.find(" ", literal=True))
    ok = stamp.str.contains(r"^(?:19|2[0-2])[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                            r"(?:\.[0-9]{1,6})?(?:Z|[+-][0-9]{2}:?[0-9]{2})$")  # (``+0000``: journalctl -o short-iso)
    return frame.select(pl.when(ok).then(reference_time(stamp))).to_series().to_list()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(*(st.sampled_from(p) for p in (_DATES, _TIMES, _FRACS, _OFFS, _TAILS))),
                min_size=1, max_size=25))
def test_stamp_times_equal_the_reference(parts: list[tuple[str, ...]]) -> None:
    lines = [f"{d}T{t}{f}{o}{tail}" for d, t, f, o, tail in parts]
    got = stamp_times(pl.DataFrame({"line": lines})).to_list()
    want = _reference(lines)
    for line, g, w in zip(lines, got, want, strict=True):
        if g != w:  # the reference accepts a few forms the shapes refuse (year 2260+, hour 24...)
            assert g is None, line
            assert not line[:4].isdigit() or not (1900 <= int(line[:4]) <= 2259) or "T24" in line \
                or ":60" in line or "+24" in line, line


def test_accepted_stamps_read_the_same_and_bad_dates_fall_back_per_line() -> None:
    lines = ["2024-06-03T14:02:11.123456+00:00 n kernel: x", "2024-06-03T14:02:11Z n x",
             "1999-12-31T00:00:00.000001+23:59 n x", "2024-02-30T14:02:11+00:00 n x", "Jun  3 14:02:11 n x", ""]
    got = stamp_times(pl.DataFrame({"line": lines})).to_list()
    assert got[:3] == [datetime(2024, 6, 3, 14, 2, 11, 123456, tzinfo=UTC), datetime(2024, 6, 3, 14, 2, 11, tzinfo=UTC),
                       datetime(1999, 12, 30, 0, 1, 0, 1, tzinfo=UTC)]
    assert got[3:] == [None, None, None]  # not in the calendar; not a stamp; no line


def test_with_time_keeps_a_column_already_read() -> None:
    frame = pl.DataFrame({"line": ["2024-06-03T14:02:11Z n x"]})
    once = with_time(frame)
    assert with_time(once) is once and once.get_column("_time").dtype == pl.Datetime("us", "UTC")
