"""Training-job logs (PyTorch ProcessGroupNCCL, CUDA errors) -> ``signals`` (source ``"nccl"``).

A training job's stdout/stderr (e.g. Slurm's ``slurm-<jobid>.out``) mixes the job's own
ISO-timestamped log lines (Python ``logging`` default ``%(asctime)s``: ``2024-06-03
14:00:00,123 INFO …``), glog-style lines of the PyTorch C++ core and Python tracebacks.

glog lines (``c10/util/Logging.cpp``; PyTorch prefixes ``[rank<N>]:`` when launched by
torchrun) read ``[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] <msg>``, the
plain glog form ``E1218 20:27:21.426415 12345 ProcessGroupNCCL.cpp:629] <msg>`` too.
Signals (message texts from ``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, domain.md §5.2):

* ``nccl:watchdog_timeout``: ``[Rank N] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=…, OpType=…, NumelIn=…, NumelOut=…, Timeout(ms)=…) ran for N milliseconds
  before timing out.``; the message keeps the WorkNCCL fields and the elapsed time.  The
  repeat of that text in "Process group watchdog thread terminated with exception: …" is
  the same event and counted irrelevant.
* ``nccl:failure_detected``: ``failure detected by watchdog at work sequence id: N``.
* ``cuda:illegal_memory_access``, ``cuda:uncorrectable_ecc``, ``cuda:error``: any line with
  ``CUDA error: <text>`` (``c10/cuda/CUDAException.h`` prefixes ``cudaGetErrorString``).

Times.  glog prints no year: it is the year of the nearest preceding ISO line, else of the
file's first ISO line, else the ``year=`` option; without any, the line is malformed.  A
line without a timestamp of its own (the final ``RuntimeError: CUDA error: …`` of a Python
traceback) takes the **last timestamp seen before it in the file**; with none before it,
it is malformed.  Host is null (training lines name ranks, not hosts); the rank is kept in
the message; ``job_id`` comes from the file name ``slurm-<jobid>.out`` or ``job_id=``.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from pathlib import Path

import pandas as pd

from reliab.errors import ParseError
from reliab.io._lines import LineContext, Row, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._progress import progress_row
from reliab.io.formats._timestamps import localize, resolve_tz

SOURCE = "nccl"

_PREFIX = re.compile(r"\[(?:rank(\d+)|[a-z]+\d+)\]:\s?")
_GLOG = re.compile(
    r"\[?([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?: +\d+)? ([^\s\]]+):(\d+)\] ?(.*)", re.S)
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?(?=\s|$)")
_SNIFF_ISO = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+[A-Za-z\[]")
_JOB = re.compile(r"slurm-(\d+(?:_\d+)?)")
_WORK = re.compile(r"WorkNCCL\((.*?)\) ran for (\d+) milliseconds")
_SEQ = re.compile(r"failure detected by watchdog at work sequence id: (\d+)")
_RANK = re.compile(r"\bRank (\d+)\]")
_CUDA = re.compile(r"CUDA error: ([^\n]*)")


def job_from_path(path: str) -> str | None:
    """Slurm job id named by a training log's file name (``slurm-1234.out`` -> ``"1234"``)."""
    m = _JOB.search(Path(path).name)
    return None if m is None else m.group(1)


def sniff_nccl(path: str, first_lines: list[str] | tuple[str, ...]) -> float:
    """Confidence that ``path`` is a training-job log (file name, glog or logging lines)."""
    name = Path(path).name
    if re.fullmatch(r"slurm-\d+(?:_\d+)?(?:-\S+)?\.(?:out|err|log)(?:\.\w+)?", name):
        return 0.9
    score = 0.0
    for line in first_lines:
        body = line[_PREFIX.match(line).end():] if _PREFIX.match(line) else line
        if _GLOG.match(body):
            return 0.8
        if _SNIFF_ISO.match(body) or "Traceback (most recent call last)" in line:
            score = 0.4
    return score


def _fraction_ns(digits: str | None) -> int:
    return 0 if not digits else int(digits.ljust(9, "0")[:9])


def _iso_time(m: re.Match[str], tz: tzinfo) -> pd.Timestamp:
    y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
    ns = _fraction_ns(m.group(7))
    ts = pd.Timestamp(datetime(y, mo, d, hh, mm, ss)) + pd.Timedelta(nanoseconds=ns)
    offset = m.group(8)
    if offset:
        return ts.tz_localize(datetime.fromisoformat("2000-01-01T00:00:00" + offset).tzinfo).tz_convert("UTC")
    return localize(ts, tz)


def _classify(msg: str, rank: str | None) -> tuple[str, str, str] | None:
    """(signal, severity, message) for a training-log message, or ``None``."""
    who = f"rank {rank}: " if rank is not None else ""
    if "Watchdog caught collective operation timeout" in msg:
        if "terminated with exception" in msg:
            return None
        m = _WORK.search(msg)
        text = (f"Watchdog caught collective operation timeout: WorkNCCL({m.group(1)}) ran for"
                f" {m.group(2)} milliseconds" if m else msg.strip())
        return "nccl:watchdog_timeout", "error", who + text
    if "failure detected by watchdog" in msg:
        m = _SEQ.search(msg)
        text = f"failure detected by watchdog at work sequence id: {m.group(1)}" if m else msg.strip()
        return "nccl:failure_detected", "error", who + text
    if "CUDA error: " in msg:
        text = _CUDA.search(msg).group(1).strip()  # type: ignore[union-attr]
        low = text.lower()
        if "illegal memory access" in low:
            return "cuda:illegal_memory_access", "error", f"{who}CUDA error: {text}"
        if "uncorrectable ecc" in low:
            return "cuda:uncorrectable_ecc", "critical", f"{who}CUDA error: {text}"
        return "cuda:error", "error", f"{who}CUDA error: {text}"
    return None


def parse_nccl_line(text: str, ctx: LineContext) -> Row | None:
    """One training-log line -> a signal row, ``None`` (irrelevant) or :class:`ParseError`."""
    st = ctx.state
    pre = _PREFIX.match(text)
    rank = pre.group(1) if pre else None
    body = text[pre.end():] if pre else text
    first = body[:1]
    when: pd.Timestamp | None = None
    partial: tuple[int, ...] | None = None
    msg = body
    if first.isdigit():
        m = _ISO.match(body)
        if m is not None:
            try:
                when = _iso_time(m, st["tz"])
            except ValueError as exc:
                if _classify(body, rank) is not None:
                    raise ParseError(f"unreadable timestamp {m.group(0)!r} ({exc})") from None
                return None
            st["iso"] = when
            st.setdefault("first_iso", when)
            msg = body[m.end():]
    elif first in "[IWEF":
        g = _GLOG.match(body)
        if g is not None:
            partial = (*(int(g.group(i)) for i in range(2, 7)), _fraction_ns(g.group(7)))
            msg = g.group(10)
    previous = st.get("last")
    if when is not None:
        st["last"] = ("time", when)
    elif partial is not None:
        st["last"] = ("glog", partial, st.get("iso"))
    if "atchdog" not in msg and "CUDA error: " not in msg:
        return progress_row(msg, when, st)  # checkpoint saves and loads (formats/_progress.py)
    if rank is None:
        r = _RANK.search(msg)
        rank = r.group(1) if r else None
    found = _classify(msg, rank)
    if found is None:
        return None
    row: Row = {"time": when, "host": None, "gpu": None, "job_id": st["job_id"], "source": SOURCE,
                "signal": found[0], "severity": found[1], "message": found[2], "_text": text[:2000]}
    if when is not None:
        pass
    elif partial is not None:
        row["_glog"], row["_ref"] = partial, st.get("iso")
    elif previous is not None:
        if previous[0] == "time":
            row["time"] = previous[1]
        else:
            row["_glog"], row["_ref"] = previous[1], previous[2]
    else:
        raise ParseError(f"{found[0]} line without a timestamp and no timestamped line before it")
    return row


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    """Give glog rows their year (nearest preceding ISO line, file's first, ``year=``)."""
    first = ctx.state.get("first_iso")
    tz = ctx.state["tz"]
    for row in rows:
        if "_glog" not in row:
            continue
        mon, day, hh, mm, ss, ns = row["_glog"]
        ref = row.get("_ref") or first
        if ref is not None:
            local = ref.tz_convert(tz)
            year = local.year + (1 if mon < local.month - 6 else -1 if mon > local.month + 6 else 0)
        elif ctx.options.get("year") is not None:
            year = int(ctx.options["year"])
        else:
            row["_reject"] = (f"{row['signal']} glog line has no year: no ISO-timestamped line in"
                              " the file; pass year=")
            continue
        try:
            ts = pd.Timestamp(datetime(year, mon, day, hh, mm, ss)) + pd.Timedelta(nanoseconds=ns)
        except ValueError as exc:
            row["_reject"] = f"glog date {mon:02d}{day:02d} impossible in year {year} ({exc})"
            continue
        try:
            row["time"] = localize(ts, tz)
        except ParseError as exc:  # skipped by a DST change
            row["_reject"] = f"{row['signal']} glog line: {exc.message}"
    return rows


@register_parser(SOURCE, sniff=sniff_nccl, table="signals")
def read_nccl(
    path: str,
    *,
    year: int | None = None,
    tz: str | tzinfo | None = None,
    job_id: str | None = None,
    strict: bool = False,
) -> FileResult:
    """Training-job logs: PyTorch NCCL watchdog timeouts and CUDA errors.

    Parameters
    ----------
    path : str
        Training stdout/stderr file (``slurm-<jobid>.out``), optionally compressed.
    year : int, optional
        Year of glog lines when the file has no ISO-timestamped line.
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
    state = {"tz": resolve_tz(tz), "job_id": job_id or job_from_path(path)}
    return scan_lines(path, SOURCE, parse_nccl_line, options={"year": year}, state=state,
                      strict=strict, finish=_finish)
