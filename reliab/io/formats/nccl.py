"""Training-job logs (PyTorch ProcessGroupNCCL, NCCL, CUDA errors) -> ``signals`` (source ``"nccl"``).

A training job's stdout/stderr (e.g. Slurm's ``slurm-<jobid>.out``) mixes the job's own
logging lines (Python ``logging``: ``2024-06-03 14:00:00,123 INFO …``), glog-style lines of
the PyTorch C++ core, NCCL's own ``NCCL WARN`` lines and Python tracebacks, each possibly
behind launcher prefixes (srun, mpirun, Ray, torchrun) — see
:mod:`reliab.io.formats._nccl_messages`.  Signals (message texts from
``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``):

* ``nccl:watchdog_timeout``: ``[Rank N] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=…, OpType=…, …) ran for N milliseconds before timing out.``; the message
  keeps the WorkNCCL fields and the elapsed time.
* ``nccl:failure_detected``: ``failure detected by watchdog at work sequence id: N`` and its
  newer wording ``Exception (either an error or timeout) detected by watchdog at work: N``.
  and ``Timeout at NCCL work: N`` (PyTorch 2.3).
* ``nccl:error``: ``NCCL error in: <file>:<line>, <reason>, NCCL version …`` and ``NCCL Error
  <n>: <reason>`` (PyTorch ``NCCLUtils.hpp``).
* ``nccl:cuda_failure``: ``NCCL WARN Cuda failure <n> '<text>'`` (NCCL ``checks.h``).
* ``nccl:net_error``: ``NCCL WARN NET/IB : Got completion from peer … with status=<n>``.
* ``cuda:illegal_memory_access``, ``cuda:uncorrectable_ecc``, ``cuda:error``: ``CUDA error:
  <text>`` (``c10/cuda/CUDAException.h`` prefixes ``cudaGetErrorString``), and PyTorch 1.x's
  ``cuda runtime error (<n>) : <text>`` and ``THCudaCheck FAIL … error=<n> : <text>``.

One failure is printed several times.  A watchdog timeout or detection counts once per rank
and collective sequence number, whatever restates it ("Process group watchdog thread
terminated with exception: …", the ``what():`` of the C++ exception, an exact repeat); a
``what():`` line restating a CUDA or NCCL error the same rank stated just before is not a new
event either.  "Just before" is :data:`REPEAT_WINDOW_S` seconds when both lines are dated.
A glog record hard-wrapped by a terminal (the next line starts in the middle of a word) is
read as one record, at the line where it starts.

Times.  glog lines carry month and day but no year: it is the year of the nearest
preceding dated (ISO) line, else of the file's first dated line, else ``year=``, else the
file's modification time (inferred).  A line without a time of its own (a traceback's
``RuntimeError: CUDA error: …``, PyTorch 1.x ``[E ProcessGroupNCCL.cpp:737]``) takes the
last time seen before it in the file, else the first one after it, else the file's
modification time (inferred).  Rows whose time was inferred from the modification time are
listed by line in the file's notes.  Host is null (training lines name ranks, not hosts);
the rank is kept in the message; ``job_id`` comes from the file name ``slurm-<jobid>.out``
or ``job_id=``.

Large and compressed files are read by the bulk route of :mod:`._nccl_bulk` (storm shapes taken
apart column-wise, the same rules, the same rows).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timezone, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.errors import ParseError
from reliab.io._lines import EVERY_LINE, LineContext, Row, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._nccl_bulk import held_rows, make_bulk
from reliab.io.formats._nccl_bulk_info import info_line
from reliab.io.formats._nccl_messages import (
    Found,
    Split,
    classify,
    fraction_ns,
    nccl_who,
    rank_in,
    split_line,
)
from reliab.io.formats._nccl_quiet import iso_second_ns, quiet_line, settle_clock, utc_plus_ns
from reliab.io.formats._nccl_repeat import REPEAT_WINDOW_S as REPEAT_WINDOW_S
from reliab.io.formats._nccl_repeat import remember_statement, repeats
from reliab.io.formats._nccl_sniff import sniff_nccl
from reliab.io.formats._progress import progress_row
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN, localize, resolve_tz

SOURCE = "nccl"
_JOB = re.compile(r"slurm-([0-9]+(?:_[0-9]+)?)")


def job_from_path(path: str) -> str | None:
    """Slurm job id named by a training log's file name (``slurm-1234.out`` -> ``"1234"``)."""
    m = _JOB.search(Path(path).name)
    return None if m is None else m.group(1)


def _iso_time(m: re.Match[str], tz: tzinfo) -> pd.Timestamp | None:
    """The UTC time of an ISO match, ``None`` if it is no calendar time or out of range."""
    offset = m.group(8)
    if offset or _fixed_zone(tz):  # no DST rule involved: integer arithmetic, one Timestamp
        second = _iso_second_ns(m.group(1, 2, 3, 4, 5, 6), offset or "", tz)
        return None if second is None else pd.Timestamp(second + fraction_ns(m.group(7)), tz=UTC)
    base = _iso_base(m.group(1, 2, 3, 4, 5, 6), offset, tz)
    if base is None:
        return None
    # (the same Timestamp as base + Timedelta(nanoseconds=...), built without the Timedelta)
    return pd.Timestamp(base.value + fraction_ns(m.group(7)), tz=base.tz)


def _fixed_zone(tz: tzinfo) -> bool:
    return isinstance(tz, timezone)


def _iso_base(fields: tuple[str, ...], offset: str | None, tz: tzinfo) -> pd.Timestamp | None:
    """The UTC instant of an ISO stamp's whole second, ``None`` if it is no calendar time or out of range."""
    try:
        y, mo, d, hh, mm, ss = (int(f) for f in fields)
        local = datetime(y, mo, d, hh, mm, min(ss, 59))
        zone = (datetime.fromisoformat("2000-01-01T00:00:00" + offset).tzinfo if offset else tz)
        when = localize(local, zone)  # naive: the one DST rule
    except (ValueError, OverflowError, ParseError):
        return None
    if not TIME_MIN <= when < TIME_MAX:
        return None
    return pd.Timestamp(when)


_iso_second_ns = iso_second_ns  # (the name the ISO fast path tests use)


def _wrapped(text: str, part: Split, ctx: LineContext) -> tuple[Split, int] | None:
    """The record a terminal-wrapped line continues (and its first line), if it is one.

    The previous line was a stamped record, long, without a signal and not ended like a
    sentence; this one has no prefix and starts in the middle of a word.
    """
    prev = ctx.state.get("prev")
    if (prev is None or prev[0] != ctx.lineno - 1 or part.prefixed or part.glog is not None
            or part.glog_untimed or part.iso is not None or not text[:1].islower()):
        return None
    return prev[1], prev[0]


def parse_nccl_line(text: str, ctx: LineContext) -> Row | None:
    """One training-log line -> a signal row, or ``None`` (irrelevant).

    A dated line without a failure or checkpoint word only moves the reader's clock
    (:func:`~reliab.io.formats._nccl_quiet.quiet_line`), NCCL ``INFO`` chatter without one
    carries nothing (:func:`~reliab.io.formats._nccl_bulk_info.info_line`); every other
    line is taken apart by :func:`parse_line_fully`, which gives the same result for those
    lines too.
    """
    if quiet_line(text, ctx.state) or info_line(text, ctx):
        return None
    return parse_line_fully(text, ctx)


def parse_line_fully(text: str, ctx: LineContext) -> Row | None:
    """:func:`parse_nccl_line` without the quiet-line shortcut: prefixes, stamp, message."""
    return read_split(text, split_line(text), ctx)


def read_split(text: str, part: Split, ctx: LineContext) -> Row | None:
    """:func:`parse_line_fully` of a line already taken apart (``part``: :func:`split_line`)."""
    st = ctx.state
    settle_clock(st)
    start = None
    wrapped = _wrapped(text, part, ctx)
    if wrapped is not None:
        first, start = wrapped
        part = Split(first.rank, _joined(first.body, text), first.host, first.glog, first.glog_untimed,
                     first.iso, first.prefixed)
    when = _iso_time(part.iso, st["tz"]) if part.iso is not None else None
    if part.dated is not None and part.iso is None:  # a collector's stamp dates the record's glog time
        dated = _iso_time(part.dated, st["tz"])
        if dated is not None:
            st["iso"] = dated
            st.setdefault("first_iso", dated)
    if when is not None:
        st["iso"] = when
        st.setdefault("first_iso", when)
        _settle(st, ("time", when))
    elif part.glog is not None:
        _settle(st, ("glog", part.glog, st.get("iso")))
    previous = st.get("last")
    if when is not None:
        st["last"] = ("time", when)
    elif part.glog is not None:
        st["last"] = ("glog", part.glog, st.get("iso"))
    st["prev"] = None
    found = _classify_once(part.body) if _ANY_TRIGGER.search(part.body) is not None else None
    rank = part.rank if part.rank is not None else _rank_once(part.body)
    who = f"rank {rank}: " if rank is not None else ""
    signalled = st.get("signalled")
    if start is not None and signalled is not None and signalled[0] == start:
        _rewrapped(start, signalled[1], found, who, st)  # the wrapped record already gave its row
        return None
    if found is None:
        _remember_record(text, part, ctx)
        return progress_row(part.body, when, st)  # checkpoint saves and loads (formats/_progress.py)
    host, gpu = _who_once(part.body) if "NCCL" in part.body else (None, None)
    row: Row = {"time": when, "host": part.host or host, "gpu": gpu, "job_id": st["job_id"],
                "source": SOURCE, "signal": found.signal, "severity": found.severity,
                "message": who + found.text, "_text": text[:2000]}
    if start is not None:
        row["origin"] = f"{ctx.path}:{start}"
    if when is None:
        _place(row, part.glog, previous, st)
    if found.always_once or found.repeat:
        if repeats(found, rank, row, ctx):
            return None
    else:
        remember_statement(found, rank, row, ctx)
    if start is None and _remember_record(text, part, ctx):  # its text may go on on the next line
        st["signalled"] = (ctx.lineno, found.signal)
    return row


def read_glog(text: str, rank: str | None, glog: tuple[int, ...], body: str, ctx: LineContext,
              words: bool) -> Row | None:
    """:func:`read_split` of a glog record (``[rankN]:`` prefix ``rank`` or none, no collector's
    stamp, no terminal's wrap possible, no ISO date and no checkpoint word: a shape of
    :mod:`._nccl_bulk`; ``words``: a failure trigger in ``body``), its row built only once the
    repeat rule keeps it."""
    st = ctx.state
    settle_clock(st)
    iso = st.get("iso")
    if "waiting" in st:
        _settle(st, ("glog", glog, iso))
    st["last"] = ("glog", glog, iso)
    st["prev"] = None
    found = _classify_once(body) if words else None
    part = (Split(rank, body, None, glog=glog, prefixed=rank is not None)  # type: ignore[arg-type]
            if len(text) >= 100 and not text.rstrip().endswith(_SENTENCE_END) else None)
    if found is None:  # (no date, no checkpoint word in a bulk shape: no progress row either)
        if part is not None:
            _remember_record(text, part, ctx)
        return None
    key, rank = (body, rank), rank if rank is not None else _rank_once(body)
    clock: Row = {"time": None, "_glog": glog}
    if found.always_once or found.repeat:
        if repeats(found, rank, clock, ctx):
            return None
        st.setdefault("anchors", {})[key] = st["recent"][-1]  # (see _nccl_repeat.anchored)
    else:
        remember_statement(found, rank, clock, ctx)
    host, gpu = _who_once(body) if "NCCL" in body else (None, None)
    row: Row = {"time": None, "host": host, "gpu": gpu, "job_id": st["job_id"], "source": SOURCE,
                "signal": found.signal, "severity": found.severity,
                "message": (f"rank {rank}: " if rank is not None else "") + found.text, "_text": text[:2000],
                "_glog": glog, "_ref": iso}
    if part is not None and _remember_record(text, part, ctx):
        st["signalled"] = (ctx.lineno, found.signal)
    return row


def read_nccl_own(text: str, ctx: LineContext, words: bool) -> Row | None:
    """:func:`read_split` of NCCL's own ``<host>:<pid>:<tid> [<dev>]`` line that continues no
    wrapped record (a shape of :mod:`._nccl_bulk`; ``words``: a failure trigger in it)."""
    st = ctx.state
    settle_clock(st)
    st["prev"] = None
    found = _classify_once(text) if words else None
    if found is None:
        return None
    rank = _rank_once(text)
    host, gpu = _who_once(text) if "NCCL" in text else (None, None)
    row: Row = {"time": None, "host": host, "gpu": gpu, "job_id": st["job_id"], "source": SOURCE,
                "signal": found.signal, "severity": found.severity,
                "message": (f"rank {rank}: " if rank is not None else "") + found.text, "_text": text[:2000]}
    _place(row, None, st.get("last"), st)
    if found.always_once or found.repeat:
        return None if repeats(found, rank, row, ctx) else row
    remember_statement(found, rank, row, ctx)
    return row


def _joined(first: str, text: str) -> str:
    """A wrapped record's text: its lines joined as the terminal cut them, or, when only that
    reads as no failure, with the space a copy dropped at the end of the first line
    (``… detected`` / ``by watchdog at work: 2070``)."""
    whole = first + text
    if first.endswith(" ") or _classify_once(whole) is not None:
        return whole
    spaced = f"{first} {text}"
    return spaced if _classify_once(spaced) is not None else whole


def _rewrapped(start: int, signal: str, found: Found | None, who: str, st: dict) -> None:
    """A terminal-wrapped record whose first line already gave a row (``signal``): when the
    whole text classifies otherwise (``CUDA error: an illegal me`` + ``mory access was
    encountered``), the row of line ``start`` is corrected in :func:`_finish`, and so is what
    the repeat rule remembers of it."""
    if found is None or found.signal == signal:
        return
    st.setdefault("rewrap", {})[start] = (found.signal, found.severity, who + found.text)
    recent = st.get("recent", [])
    for k, entry in enumerate(recent):
        if entry[0] == start:
            recent[k] = (start, found.signal, entry[2], found.core, *entry[4:])
    st.pop("recent_by", None)  # (built again from ``recent``)
    st.pop("anchors", None)
    st["signalled"] = (start, found.signal)


#: a message holding none of these cannot carry a signal
_TRIGGERS = ("atchdog", "rror", "NCCL WARN", "Timeout at NCCL work")
#: any of :data:`_TRIGGERS` (one regex scan instead of one substring test each)
_ANY_TRIGGER = re.compile("|".join(re.escape(k) for k in _TRIGGERS))
#: :func:`classify` once per distinct message: a storm repeats a few messages (one per rank
#: and collective) thousands of times behind different stamps (``Found`` is frozen)
_classify_once = lru_cache(maxsize=4096)(classify)
_rank_once = lru_cache(maxsize=4096)(rank_in)
_who_once = lru_cache(maxsize=4096)(nccl_who)


_SENTENCE_END = (".", "!", "?", ")", "]")


def _remember_record(text: str, part: Split, ctx: LineContext) -> bool:
    """Keep a stamped record that a terminal may have wrapped; whether it was kept."""
    if ((part.glog is not None or part.glog_untimed) and len(text) >= 100
            and not text.rstrip().endswith(_SENTENCE_END)):
        ctx.state["prev"] = (ctx.lineno, part)
        return True
    return False


def _place(row: Row, glog: tuple[int, ...] | None, previous: tuple | None, st: dict[str, Any]) -> None:
    """Give an untimed row its glog stamp, the time before it, or wait for the time after it."""
    if glog is not None:
        row["_glog"], row["_ref"] = glog, st.get("iso")
    elif previous is not None and previous[0] == "time":
        row["time"] = previous[1]
    elif previous is not None:
        row["_glog"], row["_ref"] = previous[1], previous[2]
    else:
        st.setdefault("waiting", []).append(row)  # the first time after it, or the mtime


def _settle(st: dict[str, Any], stamp: tuple) -> None:
    """Rows before any time take the first time after them."""
    for row in st.pop("waiting", ()):
        if stamp[0] == "time":
            row["time"] = stamp[1]
        else:
            row["_glog"], row["_ref"] = stamp[1], stamp[2]


def _mtime(ctx: LineContext) -> pd.Timestamp | None:
    try:
        when = pd.Timestamp(os.stat(ctx.path).st_mtime, unit="s", tz="UTC")
    except (OSError, ValueError, OverflowError):
        return None
    return when if pd.Timestamp(TIME_MIN) <= when < pd.Timestamp(TIME_MAX) else None


@lru_cache(maxsize=1024)
def _local_year_month(ref: pd.Timestamp, tz: tzinfo) -> tuple[int, int]:
    """Year and month of ``ref`` in ``tz`` (a file's glog rows share a few references)."""
    local = ref.tz_convert(tz)
    return local.year, local.month


@lru_cache(maxsize=4096)
def _local_second(year: int, mon: int, day: int, hh: int, mm: int, ss: int, tz: tzinfo) -> datetime:
    """The UTC instant of a glog second (a storm repeats its seconds); raises as ``localize``."""
    return localize(datetime(year, mon, day, hh, mm, min(ss, 59)), tz)


def _glog_year(row: Row, ctx: LineContext) -> tuple[int | None, str]:
    mon = row["_glog"][0]
    ref = row.get("_ref") or ctx.state.get("first_iso")
    if ref is not None:
        year, month = _local_year_month(ref, ctx.state["tz"])
        return year + (1 if mon < month - 6 else -1 if mon > month + 6 else 0), "dated"
    if ctx.options.get("year") is not None:
        return int(ctx.options["year"]), "year="
    mtime = _mtime(ctx)
    if mtime is None:
        return None, "none"
    local = mtime.tz_convert(ctx.state["tz"])
    return local.year - (1 if mon > local.month else 0), "mtime"


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    """Give glog rows their year and untimed rows the file's modification time if need be (with
    the rows the bulk route held among them)."""
    rows, rejected = held_rows(rows, ctx)
    settle_clock(ctx.state)
    tz = ctx.state["tz"]
    inferred: list[int] = []
    rewrap = ctx.state.get("rewrap", {})
    for row in rows:
        if row.get("_lineno") in rewrap:  # a wrapped record read whole (_rewrapped)
            row["signal"], row["severity"], row["message"] = rewrap[row["_lineno"]]
        if "_glog" in row:
            _glog_time(row, ctx, tz, inferred)
        elif row.get("time") is None:
            mtime = _mtime(ctx)
            if mtime is None:
                row["_reject"] = (f"{row['signal']} line without a time, no dated line in the file and"
                                  " no usable modification time")
            else:
                row["time"] = mtime
                inferred.append(row["_lineno"])
    if inferred:
        ctx.state.setdefault("notes", []).append(
            f"time of {len(inferred)} signal line(s) inferred from the file's modification time"
            f" (no dated line in the file; pass year= for glog lines): lines {_ranges(inferred)}")
    return rows + rejected


def _glog_time(row: Row, ctx: LineContext, tz: tzinfo, inferred: list[int]) -> None:
    mon, day, hh, mm, ss, ns = row["_glog"]
    year, how = _glog_year(row, ctx)
    if year is None:
        row["_reject"] = f"{row['signal']} glog line has no year: no dated line, no modification time; pass year="
        return
    try:
        when = _local_second(year, mon, day, hh, mm, ss, tz)
    except (ValueError, OverflowError) as exc:
        row["_reject"] = f"glog date {mon:02d}{day:02d} impossible in year {year} ({exc})"
        return
    except ParseError as exc:  # skipped by a DST change
        row["_reject"] = f"{row['signal']} glog line: {exc.message}"
        return
    if not TIME_MIN <= when < TIME_MAX:
        row["_reject"] = f"glog date {mon:02d}{day:02d} in year {year} is outside the range a timestamp column holds"
        return
    row["time"] = utc_plus_ns(when, ns)
    if how == "mtime":
        inferred.append(row["_lineno"])


def _ranges(numbers: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"`` (at most 20 ranges shown)."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}-{prev}" if prev != start else str(start))
        if n is not None:
            start = prev = n
    return ", ".join(out[:20]) + (f", … ({len(out) - 20} more)" if len(out) > 20 else "")


@register_parser(SOURCE, sniff=sniff_nccl, table="signals")
def read_nccl(
    path: str,
    *,
    year: int | None = None,
    tz: str | tzinfo | None = None,
    job_id: str | None = None,
    strict: bool = False,
) -> FileResult:
    """Training-job logs: PyTorch NCCL watchdog timeouts, NCCL and CUDA errors.

    Parameters
    ----------
    path : str
        Training stdout/stderr file (``slurm-<jobid>.out``), optionally compressed.
    year : int, optional
        Year of glog lines when the file has no dated (ISO) line; without it the year is
        inferred from the file's modification time (said in the file's notes).
    tz : str or tzinfo, optional
        Zone of the (offset-less) ISO and glog times; default UTC.
    job_id : str, optional
        Job id when the file name does not carry one.
    strict : bool
        Raise :class:`~reliab.errors.ParseError` at the first malformed line.

    Returns
    -------
    FileResult
        ``tables["signals"]`` plus accounting and quarantine.
    """
    if year is not None and not isinstance(year, int):
        raise TypeError(f"year must be an int, not {type(year).__name__}")
    state = {"tz": resolve_tz(tz), "job_id": job_id or job_from_path(path), "recent": []}
    return scan_lines(path, SOURCE, parse_nccl_line, literals=EVERY_LINE, options={"year": year}, state=state,
                      strict=strict, finish=_finish, bulk=_BULK)


#: large and compressed files: storm shapes taken apart column-wise (``_nccl_bulk``)
_BULK = make_bulk(parse_nccl_line, read_nccl_own, read_glog, read_split)
