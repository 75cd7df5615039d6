"""Slurm accounting (``sacct``) -> ``jobs`` rows and ``slurm:<state>`` signals.

Format (``sacct(1)``, Slurm 25.11 ``doc/man/man1/sacct.1``): ``-P/--parsable2`` prints fields
delimited by ``|`` (or the ``--delimiter=`` characters: the first line tells a one-character
one), ``-p/--parsable`` adds a trailing ``|``; the first line is a header of
field names unless ``-n/--noheader`` is given (then pass ``fields=``).  Without ``-p``/``-P``
sacct prints fixed-width columns under a header and a rule of dashes (``------------
----------``), values cut to the column width with a trailing ``+``; the rule gives the
columns.  Only ``JobID`` and ``State`` are required: any other field set is read (the
default ``sacct`` columns have no Start or End), times missing from it are left empty and
the file's notes say so — without an End no ``slurm:<state>`` signal can be dated.  Times follow
``SLURM_TIME_FORMAT`` (default ``YYYY-MM-DDTHH:MM:SS``, local time without an offset), with
``Unknown``/``None`` for times not reached.  ``JobID`` is ``JobID[.JobStep]`` with arrays
``ArrayJobID_ArrayTaskID`` and heterogeneous jobs ``HetJobID+Offset``; step rows
(``123.batch``, ``123.extern``, ``123.0``) are counted as irrelevant.  ``State`` is a job state
code (JOB STATE CODES in the man page), ``CANCELLED by <uid>``, possibly truncated with ``+``.

Besides the ``jobs`` table, every allocation that ended yields a signal ``slurm:<state>`` at
its End time (for example ``slurm:node_fail``, ``slurm:cancelled`` with message
``CANCELLED by 0``).  ``sacct --json`` is read by :func:`read_sacct_json` (source
``sacct_json``) into the same two tables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reliab._allocator import release_freed
from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._hostpath import named_for
from reliab.io.formats._timestamps import localize, out_of_range
from reliab.io.formats.slurm import _columnar
from reliab.io.formats.slurm._delimiter import delimiter_of
from reliab.io.formats.slurm._json import JsonStream as JsonStream  # philly reads its JSON with it
from reliab.io.formats.slurm._json import _sniff_json, read_sacct_json
from reliab.io.formats.slurm._signals import SignalChunks, with_signals
from reliab.io.formats.slurm._states import _STATE, STATE_CODES, end_signal, normalize_state

SOURCE = "sacct"
REQUIRED = ("jobid", "state")
#: fields without which jobs lose their times (said once per file)
_TIMED = ("start", "end")
#: integers beyond this are no job counts (int64 holds 19 digits)
_MAX_INT = 2**63 - 1

_GPU_TRES = re.compile(r"(?:^|,)gres/gpu(?::(?P<type>[^=,]+))?=(?P<n>[0-9]+)")
_RULE = re.compile(r"-+")
_UNSET_TIMES = frozenset({"", "unknown", "none", "n/a"})


def parse_slurm_time(text: str, tz: tzinfo) -> datetime | None:
    """A sacct time (``2016-09-23T18:44:37``) in zone ``tz`` -> aware UTC datetime.

    ``Unknown``, ``None`` and empty give ``None``; an explicit offset in the text wins over
    ``tz``.  Raises :class:`ParseError` for anything else.
    """
    text = text.strip()
    if text.lower() in _UNSET_TIMES:
        return None
    try:
        value = localize(datetime.fromisoformat(text), tz)  # naive: local time in tz, the one DST rule
    except (ValueError, OverflowError):
        raise ParseError(f"time {text!r} is not SLURM_TIME_FORMAT YYYY-MM-DDTHH:MM:SS") from None
    error = out_of_range(value)
    if error is not None:
        raise ParseError(error)
    return value


def gpus_from_tres(tres: str) -> int | None:
    """GPU count of a TRES string (``billing=8,cpu=8,gres/gpu=8,node=1``); ``None`` if absent.

    An untyped ``gres/gpu=N`` is the total; otherwise typed counts (``gres/gpu:h100=4``) add up.
    """
    untyped: int | None = None
    typed = 0
    found = False
    for m in _GPU_TRES.finditer(tres):
        found = True
        if m["type"] is None:
            untyped = _bounded(m["n"], "AllocTRES gres/gpu")
        else:
            typed += _bounded(m["n"], "AllocTRES gres/gpu")
    if not found:
        return None
    total = untyped if untyped is not None else typed
    if total > _MAX_INT:
        raise ParseError("AllocTRES gres/gpu count is out of range")
    return total


def _bounded(digits: str, field: str) -> int:
    """An integer of ASCII digits that fits int64, else :class:`ParseError` naming the field."""
    if len(digits) > 19 or int(digits) > _MAX_INT:
        raise ParseError(f"{field} {digits[:30]}{'…' if len(digits) > 30 else ''} is out of range")
    return int(digits)


def _int_or_none(text: str, field: str) -> int | None:
    text = text.strip()
    if text == "":
        return None
    if not (text.isascii() and text.isdigit()):
        raise ParseError(f"{field} {text[:30]!r} is not a non-negative integer")
    return _bounded(text, field)


def _is_header(cells: Sequence[str]) -> bool:
    names = {c.strip().lower() for c in cells}
    return bool({"jobid", "jobidraw"} & names) and "state" in names


def _none_if_blank(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text or None


def _field_names(cells: Sequence[str]) -> list[str]:
    """Lower-case field names; ``JobIDRaw`` stands for ``JobID`` when that is absent."""
    names = [c.strip().lower().split("%")[0] for c in cells]
    if "jobid" not in names and "jobidraw" in names:
        names[names.index("jobidraw")] = "jobid"
    return names


def _set_header(cells: list[str], ctx: LineContext) -> None:
    names = _field_names(cells)
    if names and names[-1] == "":
        names = names[:-1]  # --parsable: trailing delimiter
    missing = [f for f in REQUIRED if f not in names]
    if missing:
        ctx.state["fields"] = None
        raise ParseError(f"sacct header lacks required field(s) {', '.join(missing)}")
    ctx.state["fields"] = names
    _note_missing_times(names, ctx)


def _note_missing_times(names: list[str], ctx: LineContext) -> None:
    absent = [f for f in _TIMED if f not in names]
    if absent and "times_noted" not in ctx.state:
        ctx.state["times_noted"] = True
        words = " and ".join(a.title() for a in absent)
        ctx.state.setdefault("notes", []).append(
            f"sacct output without {words}: jobs keep those times empty"
            + (" and give no slurm:<state> signal (nothing dates the end)" if "end" in absent else "")
            + "; re-run sacct with --format=JobID,State,Start,End,… to get them")


def _note_cut_id(ctx: LineContext) -> None:
    """Say once per file that fixed-width rows whose JobID sacct cut (a trailing ``+``) were not read."""
    if "cut_noted" not in ctx.state:
        ctx.state["cut_noted"] = True
        ctx.state.setdefault("notes", []).append(
            f"sacct cut a JobID to its column width (ending in '+', first at line {ctx.lineno}): such rows"
            " (a step like 123_4.batch, or a longer id) are not read as jobs; re-run sacct with --parsable2"
            " or --format=JobID%30,…")


def _fixed_header(text: str, ctx: LineContext) -> bool:
    """A fixed-width header (``JobID JobName … State …``): remember its words."""
    words = text.split()
    if _is_header(words) and ctx.options["fields"] is None:
        ctx.state["fixed_names"] = _field_names(words)
        return True
    return False


def _fixed_rule(text: str, ctx: LineContext) -> None:
    """The rule of dashes under a fixed-width header: one run of dashes per column."""
    names = ctx.state.get("fixed_names")
    spans = [(m.start(), m.end()) for m in _RULE.finditer(text)]
    if names is None or len(spans) != len(names):
        return
    ctx.state["spans"] = spans
    ctx.state["fields"] = names
    _note_missing_times(names, ctx)


def _fixed_cells(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cells of a fixed-width row: each column from its rule's start to the next column's.

    A row that does not line up with the rule (a separating blank missing where the rule has
    one, as in an excerpt whose job ids were shortened by hand) is split at its blanks
    instead, when that gives one value per column.
    """
    starts = [a for a, _ in spans]
    aligned = all(a > len(text) or text[a - 1] == " " for a in starts[1:])
    words = text.split()
    if not aligned and len(words) == len(spans):
        return words
    ends = starts[1:] + [max(len(text), spans[-1][1])]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def job_record(values: dict[str, str], tz: tzinfo, gpus_per_node: int | None) -> dict[str, Any]:
    """One allocation's sacct fields (lower-case names) -> a ``jobs`` row (without origin).

    Only ``jobid`` and ``state`` are required; absent fields are left empty.
    """
    state_raw = values["state"].strip()
    state = normalize_state(state_raw)
    nnodes = _int_or_none(values.get("nnodes", values.get("allocnodes", "")), "NNodes")
    ngpus = gpus_from_tres(values.get("alloctres", ""))
    if ngpus is None and gpus_per_node is not None and nnodes is not None:
        ngpus = nnodes * gpus_per_node
        if ngpus > _MAX_INT:
            raise ParseError(f"NNodes {nnodes} x gpus_per_node {gpus_per_node} is out of range")
    nodelist = _none_if_blank(values.get("nodelist"))
    if nodelist is not None and nodelist.lower() == "none assigned":
        nodelist = None
    return {
        "job_id": values["jobid"].strip(),
        "name": _none_if_blank(values.get("jobname")),
        "user": _none_if_blank(values.get("user")),
        "partition": _none_if_blank(values.get("partition")),
        "state": state,
        "state_raw": state_raw,
        "exit_code": _none_if_blank(values.get("exitcode")),
        "submit": parse_slurm_time(values.get("submit", ""), tz),
        "start": parse_slurm_time(values.get("start", ""), tz),
        "end": parse_slurm_time(values.get("end", ""), tz),
        "nnodes": nnodes,
        "ngpus": ngpus,
        "nodelist": nodelist,
        "failed_node": _none_if_blank(values.get("failednode")),
        "restarts": _int_or_none(values.get("restarts", ""), "Restarts"),
    }


def _parse_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    if not text.strip():
        return None
    delimiter: str | None = ctx.options["delimiter"] or ctx.state.get("delimiter")
    if delimiter is None:  # not given: told by the first line (|, or sacct --delimiter=X)
        delimiter = ctx.state["delimiter"] = delimiter_of(text) or "|"
    if set(text.strip()) <= {"-", " "}:
        _fixed_rule(text, ctx)  # the dashed rule under a fixed-width header
        return None
    spans = ctx.state.get("spans")
    cells = _fixed_cells(text, spans) if spans is not None else text.split(delimiter)
    if _is_header(cells) or (spans is None and delimiter not in text and _fixed_header(text, ctx)):
        if ctx.options["fields"] is None and len(cells) > 1:
            _set_header(cells, ctx)
        return None
    fields: list[str] | None = ctx.state.get("fields")
    if fields is None:
        raise ParseError("sacct line before a usable header line (give fields=... for sacct -n)")
    if len(cells) == len(fields) + 1 and cells[-1] == "":
        cells = cells[:-1]
    if len(cells) != len(fields):
        raise ParseError(f"expected {len(fields)} '{delimiter}'-separated fields, got {len(cells)}")
    values = dict(zip(fields, cells, strict=True))
    job_id = values["jobid"].strip()
    if not job_id:
        raise ParseError("empty JobID")
    if "." in job_id:
        return None  # a job step (123.batch, 123.extern, 123.0): not an allocation
    if spans is not None and job_id.endswith("+"):
        _note_cut_id(ctx)  # sacct cut the id to its column: a step's or a longer id, unknown
        return None
    job = job_record(values, ctx.options["tz"], ctx.options["gpus_per_node"])
    signal = end_signal(job, SOURCE, ctx.origin)
    if signal is not None:
        ctx.state["signals"].append(signal)
    return job


#: every state name sacct prints (JOB STATE CODES of sacct(1))
_STATE_NAMES = frozenset(STATE_CODES.values()) | {"REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT",
                                                   "LAUNCH_FAILED", "STOPPED"}
_JOB_ID = re.compile(r"[0-9]+(?:[_+][0-9]+)?(?:\.[A-Za-z0-9_]+)?")
#: every headerless row holds one of the state names (one search rules out any other line)
_ANY_STATE = re.compile("|".join(sorted(_STATE_NAMES, key=len, reverse=True)))


def _headerless_row(line: str) -> bool:
    """``1655360|FAILED|127:0`` (or another ``--delimiter``): a job id first and a Slurm state in
    some cell."""
    if _ANY_STATE.search(line) is None:
        return False
    delimiter = "|" if "|" in line else delimiter_of(line)
    if delimiter is None:
        return False
    cells = [c.strip() for c in line.split(delimiter)]
    if len(cells) < 2 or not _JOB_ID.fullmatch(cells[0]):
        return False
    return any((m := _STATE.match(c)) is not None and m["state"] in _STATE_NAMES for c in cells[1:])


def _mostly_headerless(rows: Sequence[str]) -> bool:
    """Whether at least half of ``rows`` are headerless sacct rows (stops once half cannot be)."""
    misses = 0
    for line in rows:
        if not _headerless_row(line):
            misses += 1
            if misses * 2 > len(rows):
                return False
    return True


def _sniff(path: str, lines: Sequence[str]) -> float:
    for line in lines[:3]:
        delimiter = "|" if "|" in line else delimiter_of(line)
        if delimiter is not None and _is_header(line.split(delimiter)):
            return 0.95
    rows = [ln for ln in lines if ln.strip()]
    # another --delimiter only where the file starts with a row: a CSV's own header is no sacct
    if rows and _mostly_headerless(rows) and (any("|" in r for r in rows) or _headerless_row(rows[0])):
        return 0.6  # sacct -n: pass fields= to read it
    for first, second in zip(lines[:3], lines[1:4], strict=False):
        low = first.lower()  # (a word that lower-cases to "jobid" lies in the lower-cased line)
        if "jobid" not in low or "state" not in low:
            continue
        words = {w.lower() for w in first.split()}
        if {"jobid", "state"} <= words and second.strip() and set(second.strip()) <= {"-", " "}:
            return 0.95  # fixed-width header and its rule of dashes
    if named_for(path, "sacct") and any(line.count("|") >= 3 for line in lines):
        return 0.5
    return 0.0


@register_parser(SOURCE, sniff=_sniff, table="jobs")
def read_sacct(
    path: str,
    *,
    tz: str = "UTC",
    fields: Sequence[str] | str | None = None,
    gpus_per_node: int | None = None,
    delimiter: str | None = None,
    strict: bool = False,
) -> FileResult:
    """Slurm ``sacct`` output (``-p``/``-P`` or fixed-width) -> jobs (+ ``slurm:<state>`` signals).

    Parameters
    ----------
    path : str
        A file of ``sacct -p``/``-P`` output (possibly compressed).
    tz : str
        IANA zone of the printed times (Slurm prints local time without an offset).
    fields : sequence of str or str, optional
        Field names for output without a header (``sacct -n --format=...``), either a list or
        the ``--format`` string ``"JobID,State,Start,End"``.  JobID and State are required;
        without Start and End the jobs have no times (said in the file's notes).
    gpus_per_node : int, optional
        GPUs per node, used as ``NNodes * gpus_per_node`` when AllocTRES has no ``gres/gpu``.
    delimiter : str, optional
        The ``--delimiter`` of the capture; by default the character after the first field
        of the first line (``|`` unless sacct was run with ``--delimiter=``), see
        :func:`reliab.io.formats.slurm._delimiter.delimiter_of`.
    strict : bool
        Raise the first malformed line instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables`` holds ``jobs`` (allocations only) and ``signals`` (one per ended allocation).

    References
    ----------
    ``sacct(1)``, Slurm 25.11: options ``-p``, ``-P``, ``-n``, JOB STATE CODES, field list.
    """
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"tz={tz!r} is not an IANA time zone") from exc
    names = None
    if fields is not None:
        seq = fields.split(",") if isinstance(fields, str) else list(fields)
        names = _field_names(seq)
        missing = [f for f in REQUIRED if f not in names]
        if missing:
            raise ValueError(f"fields= lacks required field(s) {', '.join(missing)}")
    options = {"tz": zone, "fields": names, "gpus_per_node": gpus_per_node, "delimiter": delimiter}
    if not strict and _columnar.wanted(str(path)):
        try:
            return _columnar.read_columnar(str(path), _parse_line, options, _initial_state(names))[0]
        except _columnar.Fallback:
            pass  # a file the columnar route cannot read exactly: line by line
    state = _initial_state(names)
    signals = state["signals"]
    result = scan_lines(path, SOURCE, _parse_line, table="jobs", options=options, state=state, strict=strict)
    if _columnar.wanted(str(path)):  # a big file read line by line: its rows' dicts were freed
        release_freed()
    return with_signals(result, signals)


def _initial_state(names: list[str] | None) -> dict[str, Any]:
    """The per-file state a read starts with (the ``fields=`` names and their note)."""
    state: dict[str, Any] = {"fields": names, "signals": SignalChunks()}
    if names is not None:
        ctx_notes: list[str] = []
        state["notes"] = ctx_notes
        absent = [f for f in _TIMED if f not in names]
        if absent:
            state["times_noted"] = True
            ctx_notes.append(f"sacct fields= without {' and '.join(a.title() for a in absent)}: jobs keep"
                             " those times empty" + (" and give no slurm:<state> signal" if "end" in absent else ""))
    return state


#: ``sacct --json`` (:mod:`reliab.io.formats.slurm._json`), registered after the text reader
read_sacct_json = register_parser("sacct_json", sniff=_sniff_json, table="jobs", lines=False)(read_sacct_json)


__all__ = ["read_sacct", "read_sacct_json", "normalize_state", "parse_slurm_time", "gpus_from_tres", "job_record",
           "end_signal", "STATE_CODES"]
