"""The training-log lines that carry nothing but their time, read without the per-line parser.

Most lines of a training job's output are the job's own dated logging with no failure and
no checkpoint in them (``2024-06-03 14:00:00,123 INFO [trainer] step 350001 | loss 1.84 |``:
Python ``logging``'s default ``asctime`` format, ``%Y-%m-%d %H:%M:%S,%f``).  Such a line
changes only the reader's clock: the last time seen (what an untimed line takes), the time
that dates the glog lines after it (their year) and the time a checkpoint line without a
stamp takes.  :func:`quiet_line` recognises it with one literal test per failure and
checkpoint word and one anchored regex, and keeps its time as integer nanoseconds;
:func:`settle_clock` turns that into the ``pandas.Timestamp`` the per-line parser of
:mod:`reliab.io.formats.nccl` reads, only when a line that needs it comes.  Every line
this path declines goes to that parser, so the rows are the same either way.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

import pandas as pd

from reliab.io.formats._nccl_messages import ISO, fraction_ns
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN

__all__ = ["quiet_line", "settle_clock", "iso_second_ns", "utc_plus_ns"]

_EPOCH_DAY = date(1970, 1, 1).toordinal()
_NS = 1_000_000_000
#: TIME_MIN and TIME_MAX in nanoseconds since the epoch
_NS_RANGE = tuple((t - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000
                  for t in (TIME_MIN, TIME_MAX))
#: the per-line parser looks further at a message holding one of these: failure triggers
#: (``nccl._TRIGGERS``) and checkpoint words (``_progress._LITERALS``)
_WORDS = ("atchdog", "rror", "NCCL WARN", "Timeout at NCCL work", "heckpoint", "global step", "state loaded")
_ANY_WORD = re.compile("|".join(re.escape(word) for word in _WORDS))
#: the per-line parser searches this many characters of a line for its ISO time
ISO_WITHIN = 48
_PENDING = "_clock_ns"


def iso_second_ns(fields: tuple[str, ...], offset: str, tz: tzinfo) -> int | None:
    """Nanoseconds since the epoch of an ISO stamp's whole second, for a fixed offset (the
    text's, else ``tz``'s), computed without building a datetime and a Timestamp: the
    calendar checks of ``datetime`` (seconds above 59 read as 59), the offset subtracted,
    the range a ``datetime64[ns]`` column holds (``None`` outside it or for no calendar time)."""
    y, mo, d, hh, mm, ss = fields
    base = _day_ns(y, mo, d, offset, tz)
    h, m = int(hh), int(mm)
    if base is None or h > 23 or m > 59:
        return None
    ns = base + (h * 3600 + m * 60 + min(int(ss), 59)) * _NS
    return ns if _NS_RANGE[0] <= ns < _NS_RANGE[1] else None


@lru_cache(maxsize=4096)
def _day_ns(y: str, mo: str, d: str, offset: str, tz: tzinfo) -> int | None:
    """Nanoseconds since the epoch of the day's midnight at the offset, ``None`` for no
    calendar day (a log repeats its days: cached per day, not per second)."""
    try:
        day = date(int(y), int(mo), int(d)).toordinal() - _EPOCH_DAY
        zone = datetime.fromisoformat("2000-01-01T00:00:00" + offset).tzinfo if offset else tz
    except ValueError:
        return None
    if zone is None:
        return None
    off = zone.utcoffset(None) or timedelta(0)
    return day * 86400 * _NS - off // timedelta(microseconds=1) * 1000


def quiet_line(text: str, st: dict[str, Any]) -> bool:
    """Whether ``text`` is a dated line without a signal that the per-line parser would
    only take the time of; if so, that time is kept in ``st`` (see :func:`settle_clock`).

    Declined (``False``, ``st`` untouched): a line not starting with its ISO stamp (launcher
    prefixes, glog lines, colour codes), holding a failure or checkpoint word, with a local
    time under a DST rule or no calendar time, the file's first dated line, and any line
    while untimed rows wait for the next time.
    """
    if not text[:1].isdigit() or "\x1b" in text or "first_iso" not in st or "waiting" in st:
        return False
    m = ISO.match(text, 0, ISO_WITHIN)
    if m is None:
        return False
    if _ANY_WORD.search(text, m.end()) is not None:
        return False
    offset, tz = m.group(8), st["tz"]
    if not offset and not isinstance(tz, timezone):
        return False
    second = iso_second_ns(m.group(1, 2, 3, 4, 5, 6), offset or "", tz)
    if second is None:
        return False
    st[_PENDING] = second + fraction_ns(m.group(7))
    st["prev"] = None
    return True


def settle_clock(st: dict[str, Any]) -> None:
    """Give ``st`` the time of the last quiet line as the per-line parser would have left it:
    the latest ISO time, the last time seen, the time checkpoint lines fall back on."""
    ns = st.pop(_PENDING, None)
    if ns is not None:
        when = pd.Timestamp(ns, tz=UTC)
        st["iso"] = when
        st["last"] = ("time", when)
        st["progress_time"] = when


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def utc_plus_ns(when: datetime, nanos: int) -> pd.Timestamp:
    """``pd.Timestamp(when) + pd.Timedelta(nanoseconds=nanos)`` for a UTC ``when`` (a glog
    line's second and its fraction), built from integers: one Timestamp, no Timedelta."""
    return pd.Timestamp((when - _EPOCH) // _US * 1000 + nanos, tz=UTC)
