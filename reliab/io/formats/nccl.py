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
* ``nccl:watchdog_stuck``: ``ProcessGroupNCCL's watchdog got stuck for N seconds …`` (the
  heartbeat monitor).
* ``nccl:error``: ``NCCL error in: <file>:<line>, <reason>``.
* ``cuda:illegal_memory_access``, ``cuda:uncorrectable_ecc``, ``cuda:error``: ``CUDA error:
  <text>`` (``c10/cuda/CUDAException.h`` prefixes ``cudaGetErrorString``) and NCCL's
  ``Cuda failure '<text>'``.

One failure is printed several times: by the watchdog, again in "Process group watchdog
thread terminated with exception: …", again in the ``what():`` of the C++ exception, and
by other ranks.  A signal line that repeats an earlier one of the same rank (or of an
unknown rank) with the same collective sequence number or CUDA error text, within
:data:`REPEAT_WINDOW_S` seconds, is irrelevant: each failure counts once per rank.

Times.  glog lines carry month and day but no year: it is the year of the nearest
preceding dated (ISO) line, else of the file's first dated line, else ``year=``, else the
file's modification time (inferred).  A line without a time of its own (a traceback's
``RuntimeError: CUDA error: …``, PyTorch 1.x ``[E ProcessGroupNCCL.cpp:737]``) takes the
last time seen before it in the file, else the first one after it, else the file's
modification time (inferred).  Rows whose time was inferred from the modification time are
listed by line in the file's notes.  Host is null (training lines name ranks, not hosts);
the rank is kept in the message; ``job_id`` comes from the file name ``slurm-<jobid>.out``
or ``job_id=``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.io._lines import LineContext, Row, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._nccl_messages import Found, classify, fraction_ns, rank_in, split_line
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN, resolve_tz

SOURCE = "nccl"
#: a signal repeating one of the same rank within this many seconds is the same failure
REPEAT_WINDOW_S = 600.0
_REPEAT_LINES = 5000
_KEEP_RECENT = 256
_JOB = re.compile(r"slurm-([0-9]+(?:_[0-9]+)?)")
_TRAINING = re.compile(r"\b(?:loss|lm loss|train_loss|grad_norm|learning_rate|lr|iteration|iter|step|"
                       r"epoch|tokens/s|tflops|throughput|samples/s)\b\s*[:=|]?\s*[-+]?[0-9.]", re.I)


def job_from_path(path: str) -> str | None:
    """Slurm job id named by a training log's file name (``slurm-1234.out`` -> ``"1234"``)."""
    m = _JOB.search(Path(path).name)
    return None if m is None else m.group(1)


def sniff_nccl(path: str, first_lines: list[str] | tuple[str, ...]) -> float:
    """Confidence that ``path`` is a training-job log (file name, glog, logging or loss lines).

    A clean job log (step and loss lines only) is recognised too, with a low score.
    """
    name = Path(path).name
    if re.fullmatch(r"slurm-[0-9]+(?:_[0-9]+)?(?:-\S+)?\.(?:out|err|log)(?:\.\w+)?", name):
        return 0.9
    score, training = 0.0, 0
    for line in first_lines:
        part = split_line(line)
        if part.glog is not None or part.glog_untimed:
            return 0.8
        if part.iso is not None or "Traceback (most recent call last)" in line:
            score = 0.4
        if _TRAINING.search(line):
            training += 1
    if training >= 2 or (training and len([ln for ln in first_lines if ln.strip()]) <= 2):
        score = max(score, 0.35)
    return score


def _iso_time(m: re.Match[str], tz: tzinfo) -> pd.Timestamp | None:
    """The UTC time of an ISO match, ``None`` if it is no calendar time or out of range."""
    try:
        y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
        local = datetime(y, mo, d, hh, mm, min(ss, 59))
        offset = m.group(8)
        zone = (datetime.fromisoformat("2000-01-01T00:00:00" + offset).tzinfo if offset else tz)
        when = local.replace(tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    if not TIME_MIN <= when < TIME_MAX:
        return None
    return pd.Timestamp(when) + pd.Timedelta(nanoseconds=fraction_ns(m.group(7)))


def _clock(row: Row) -> float | None:
    """Seconds of a row's known time (ISO) or glog stamp, for the repeat window."""
    if row.get("time") is not None:
        return row["time"].timestamp()
    if "_glog" in row:
        mon, day, hh, mm, ss, _ = row["_glog"]
        return float((((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss)
    return None


def _repeats(found: Found, rank: str | None, row: Row, ctx: LineContext) -> bool:
    """Whether this signal restates one already counted (same rank or unknown, same core)."""
    recent: list[tuple[int, str, str | None, str | None, float | None, bool]] = ctx.state.setdefault("recent", [])
    clock = _clock(row)
    glog = "_glog" in row
    for lineno, signal, other_rank, core, other_clock, other_glog in reversed(recent):
        if ctx.lineno - lineno > _REPEAT_LINES:
            break
        if signal != found.signal:
            continue
        if rank is not None and other_rank is not None and rank != other_rank:
            continue
        if found.core is not None and core is not None and found.core != core:
            continue
        if clock is not None and other_clock is not None and glog == other_glog:
            if abs(clock - other_clock) > REPEAT_WINDOW_S:
                continue
        return True
    recent.append((ctx.lineno, found.signal, rank, found.core, clock, glog))
    if len(recent) > _KEEP_RECENT:
        del recent[0]
    return False


def parse_nccl_line(text: str, ctx: LineContext) -> Row | None:
    """One training-log line -> a signal row, or ``None`` (irrelevant)."""
    st = ctx.state
    part = split_line(text)
    when = _iso_time(part.iso, st["tz"]) if part.iso is not None else None
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
    if "atchdog" not in part.body and "rror" not in part.body and "Cuda failure" not in part.body \
            and "Heartbeat" not in part.body:
        return None
    found = classify(part.body)
    if found is None:
        return None
    rank = part.rank if part.rank is not None else rank_in(part.body)
    who = f"rank {rank}: " if rank is not None else ""
    row: Row = {"time": when, "host": None, "gpu": None, "job_id": st["job_id"], "source": SOURCE,
                "signal": found.signal, "severity": found.severity, "message": who + found.text,
                "_text": text[:2000]}
    if when is None:
        _place(row, part.glog, previous, st)
    if _repeats(found, rank, row, ctx):
        return None
    return row


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


def _glog_year(row: Row, ctx: LineContext) -> tuple[int | None, str]:
    mon = row["_glog"][0]
    ref = row.get("_ref") or ctx.state.get("first_iso")
    if ref is not None:
        local = ref.tz_convert(ctx.state["tz"])
        return local.year + (1 if mon < local.month - 6 else -1 if mon > local.month + 6 else 0), "dated"
    if ctx.options.get("year") is not None:
        return int(ctx.options["year"]), "year="
    mtime = _mtime(ctx)
    if mtime is None:
        return None, "none"
    local = mtime.tz_convert(ctx.state["tz"])
    return local.year - (1 if mon > local.month else 0), "mtime"


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    """Give glog rows their year and untimed rows the file's modification time if need be."""
    tz = ctx.state["tz"]
    inferred: list[int] = []
    for row in rows:
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
    return rows


def _glog_time(row: Row, ctx: LineContext, tz: tzinfo, inferred: list[int]) -> None:
    mon, day, hh, mm, ss, ns = row["_glog"]
    year, how = _glog_year(row, ctx)
    if year is None:
        row["_reject"] = f"{row['signal']} glog line has no year: no dated line, no modification time; pass year="
        return
    try:
        local = datetime(year, mon, day, hh, mm, min(ss, 59), tzinfo=tz)
        when = local.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        row["_reject"] = f"glog date {mon:02d}{day:02d} impossible in year {year} ({exc})"
        return
    if not TIME_MIN <= when < TIME_MAX:
        row["_reject"] = f"glog date {mon:02d}{day:02d} in year {year} is outside the range a timestamp column holds"
        return
    row["time"] = pd.Timestamp(when) + pd.Timedelta(nanoseconds=ns)
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
    return scan_lines(path, SOURCE, parse_nccl_line, options={"year": year}, state=state,
                      strict=strict, finish=_finish)
