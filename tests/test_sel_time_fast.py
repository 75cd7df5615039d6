"""The SEL reader's integer route for ``MM/DD/YYYY`` + ``HH:MM:SS`` (no zone, no ``tz=``) gives
what the ``strptime`` route gives: the same UTC time, or the same ParseError message."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.errors import ParseError
from reliab.io.formats import _sel_time
from reliab.io.formats._sel_time import parse_sel_time
from reliab.io.formats._timestamps import localize, out_of_range


def _strptime_route(date: str, clock: str, tz: tzinfo | None) -> datetime:
    """``parse_sel_time`` as it was before the integer route: every time through strptime."""
    day = date.strip()
    if _sel_time.unset_clock(day):
        raise ParseError(f"record stamped {day!r} (logged before the BMC clock was set): no wall-clock time")
    hms, zone_name = _sel_time._clock_parts(clock)
    zone = _sel_time.zone_of(zone_name, tz) if zone_name else (tz or _sel_time.UTC)
    fmt = next((f for f, shape in _sel_time._DATE_FORMATS if shape.fullmatch(day)), None)
    try:
        if fmt is None or not hms.isascii():
            raise ValueError(day)
        when = localize(datetime.strptime(f"{day} {hms}", f"{fmt} %H:%M:%S"), zone)
    except (ValueError, OverflowError):
        raise ParseError(f"date/time {day!r} {hms!r} is not MM/DD/YYYY HH:MM:SS") from None
    error = out_of_range(when)
    if error is not None:
        raise ParseError(error)
    if when < _sel_time.CLOCK_SET_AFTER:
        raise ParseError(f"record dated {day} {hms}: the BMC clock was not set (reset to its default"
                         " date); no wall-clock time")
    return when


def _outcome(fn, date: str, clock: str, tz: tzinfo | None) -> tuple:
    try:
        when = fn(date, clock, tz)
    except ParseError as exc:
        return ("error", exc.message)
    return ("ok", when, when.tzinfo, when.utcoffset())


_TWO = st.integers(0, 99).map(lambda v: f"{v:02d}")
_MONTH = st.one_of(st.integers(0, 13).map(lambda v: f"{v:02d}"), _TWO, st.sampled_from(["1 ", " 1", "٠٢", "0x"]))
_DAY = st.one_of(st.integers(0, 32).map(lambda v: f"{v:02d}"), st.sampled_from(["29", "30", "31", "٠٣", "3 "]))
_YEAR = st.one_of(st.integers(0, 9999).map(lambda v: f"{v:04d}"),
                  st.sampled_from(["2000", "2001", "1900", "2100", "2024", "2023", "2262", "1677", "24", "99"]))
_HOUR = st.one_of(st.integers(0, 25).map(lambda v: f"{v:02d}"), st.sampled_from(["1", "٠١"]))
_MIN = st.one_of(st.integers(0, 61).map(lambda v: f"{v:02d}"), st.sampled_from(["5", "٥٥"]))
_SEP = st.sampled_from(["/", "/", "/", "-", "."])
_TAIL = st.sampled_from(["", "", "", " PM", " AM", " UTC", " CEST", " +02:00", " SAST", " IST", " x y"])
_PAD = st.sampled_from(["", "", " ", "  "])
_TZ = st.sampled_from([None, None, None, ZoneInfo("Europe/Berlin"), timezone(timedelta(hours=-5)),
                       ZoneInfo("UTC")])


@settings(max_examples=1000, deadline=None)
@given(_MONTH, _DAY, _YEAR, _SEP, _HOUR, _MIN, _MIN, _TAIL, _PAD, _TZ)
def test_integer_route_equals_strptime(mo: str, d: str, y: str, sep: str, hh: str, mm: str, ss: str,
                                       tail: str, pad: str, tz: tzinfo | None) -> None:
    date = f"{pad}{mo}{sep}{d}{sep}{y}{pad}"
    clock = f"{hh}:{mm}:{ss}{tail}"
    assert _outcome(parse_sel_time, date, clock, tz) == _outcome(_strptime_route, date, clock, tz)


def test_edges() -> None:
    cases = [("02/29/2024", "00:00:00"), ("02/29/2023", "00:00:00"), ("02/29/2000", "12:00:00"),
             ("02/29/2100", "12:00:00"), ("12/31/2000", "23:59:59"), ("01/01/2001", "00:00:00"),
             ("06/25/2024", "24:00:00"), ("06/25/2024", "23:60:00"), ("06/25/2024", "23:59:60"),
             ("06/25/2024", "23:59:61"), ("13/01/2024", "00:00:00"), ("00/10/2024", "00:00:00"),
             ("04/31/2024", "00:00:00"), ("06/25/0000", "00:00:00"), ("06/25/9999", "00:00:00"),
             ("04/11/2262", "23:47:16"), ("Pre-Init", "0000001234"), ("06/25/2024", "01:17:47 PM"),
             ("06/25/2024", "1:17:47"), ("6/25/2024", "01:17:47"), ("06/25/24", "01:17:47")]
    for date, clock in cases:
        assert _outcome(parse_sel_time, date, clock, None) == _outcome(_strptime_route, date, clock, None), (date, clock)
    assert _sel_time._plain_utc("06/25/2024", "01:17:47") == datetime(2024, 6, 25, 1, 17, 47, tzinfo=_sel_time.UTC)
