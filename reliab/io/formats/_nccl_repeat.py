"""The NCCL reader's repeat rule: one failure printed several times counts once.

A watchdog timeout or detection counts once per rank and collective sequence number whatever
restates it, a ``what():`` line restating an error the same rank stated just before is not a
new event (:mod:`reliab.io.formats.nccl`).  The rule looks back over the last
:data:`KEEP_RECENT` statements (``state["recent"]``: line, signal, rank, core, clock, glog
flag), at most :data:`REPEAT_LINES` lines back, within :data:`REPEAT_WINDOW_S` seconds when
both are dated alike; they are also kept by signal (``state["recent_by"]``) so that a storm of
one signal does not scan the others'.
"""

from __future__ import annotations

from typing import Any

from reliab.io._lines import LineContext, Row
from reliab.io.formats._nccl_messages import Found

__all__ = ["REPEAT_WINDOW_S", "REPEAT_LINES", "KEEP_RECENT", "clock_of", "repeats", "remember_statement",
           "anchored"]

#: a signal repeating one of the same rank within this many seconds is the same failure
REPEAT_WINDOW_S = 600.0
REPEAT_LINES = 5000
KEEP_RECENT = 256


def clock_of(row: Row) -> float | None:
    """Seconds of a row's known time (ISO) or glog stamp, for the repeat window."""
    if row.get("time") is not None:
        return row["time"].timestamp()
    if "_glog" in row:
        mon, day, hh, mm, ss, _ = row["_glog"]
        return float((((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss)
    return None


def repeats(found: Found, rank: str | None, row: Row, ctx: LineContext) -> bool:
    """Whether this signal restates one already counted (same rank or unknown, same core)."""
    clock = clock_of(row)
    glog = "_glog" in row
    since = ctx.lineno - REPEAT_LINES
    # (only the entries of the same signal, newest first; lines only grow along ``recent``, so
    # the first entry too far back ends the scan as it would unfiltered)
    for entry in reversed(_by_signal(ctx.state).get(found.signal, ())):
        if entry[0] < since:
            break
        _, _, other_rank, core, other_clock, other_glog = entry
        if rank is not None and other_rank is not None and rank != other_rank:
            continue
        if found.core is not None and core is not None and found.core != core:
            continue
        if clock is not None and other_clock is not None and glog == other_glog:
            if abs(clock - other_clock) > REPEAT_WINDOW_S:
                continue
        return True
    _remember((ctx.lineno, found.signal, rank, found.core, clock, glog), ctx.state)
    return False


def remember_statement(found: Found, rank: str | None, row: Row, ctx: LineContext) -> None:
    """Record a first statement so that a later ``what():`` can be recognised as its repeat."""
    _remember((ctx.lineno, found.signal, rank, found.core, clock_of(row), "_glog" in row), ctx.state)


def _remember(entry: tuple, st: dict[str, Any]) -> None:
    """Append to the last :data:`KEEP_RECENT` statements (``st["recent"]``) and their index by signal."""
    by = _by_signal(st)
    recent = st["recent"]
    recent.append(entry)
    by.setdefault(entry[1], []).append(entry)
    if len(recent) > KEEP_RECENT:
        old = recent.pop(0)
        by[old[1]].pop(0)  # (the oldest entry of its signal)


def _by_signal(st: dict[str, Any]) -> dict[str, list[tuple]]:
    """``st["recent"]`` by signal, in order (built once, kept by :func:`_remember`)."""
    by = st.get("recent_by")
    if by is None:
        by = st["recent_by"] = {}
        for entry in st.setdefault("recent", []):
            by.setdefault(entry[1], []).append(entry)
    return by




def anchored(entry: tuple, lineno: int, clock: float, st: dict[str, Any]) -> bool:
    """Whether the glog statement ``entry`` still makes line ``lineno``, a glog record of the
    same message and rank prefix with glog ``clock``, a repeat: it is still among the recent
    statements (they are kept in line order; a terminal's wrap that rewrites one drops the
    anchors, ``state["anchors"]``), at most :data:`REPEAT_LINES` back and within
    :data:`REPEAT_WINDOW_S`.  :func:`repeats` would then find it, or a newer one, and say yes.
    """
    recent = st["recent"]
    return (entry[0] >= lineno - REPEAT_LINES and bool(recent) and recent[0][0] <= entry[0]
            and abs(clock - entry[4]) <= REPEAT_WINDOW_S)
