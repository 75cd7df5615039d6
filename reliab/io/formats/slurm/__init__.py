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

import codecs
import dataclasses
import json
import re
from collections.abc import Iterator, Sequence
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

from reliab import schema
from reliab.errors import Origin, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import LineContext, scan_lines, unexpected
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._hostpath import named_for
from reliab.io.formats._timestamps import localize, out_of_range
from reliab.io.formats.slurm._delimiter import delimiter_of
from reliab.io.formats.slurm._signals import SignalChunks, refuse_signals, with_signal_chunks
from reliab.io.formats.slurm.hostlist import expand_hostlist

SOURCE = "sacct"
REQUIRED = ("jobid", "state")
#: fields without which jobs lose their times (said once per file)
_TIMED = ("start", "end")
#: integers beyond this are no job counts (int64 holds 19 digits)
_MAX_INT = 2**63 - 1

#: JOB STATE CODES of sacct(1): abbreviation -> name
STATE_CODES = {
    "BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "DL": "DEADLINE", "F": "FAILED",
    "NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED",
    "R": "RUNNING", "RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED",
    "TO": "TIMEOUT",
}
#: states of an allocation that has not ended: no ``slurm:*`` signal
NOT_ENDED = frozenset({"RUNNING", "PENDING", "SUSPENDED", "RESIZING", "REQUEUE_HOLD"})
_SEVERITY = {
    "NODE_FAIL": "critical", "BOOT_FAIL": "critical", "FAILED": "error", "OUT_OF_MEMORY": "error",
    "TIMEOUT": "error", "DEADLINE": "error", "LAUNCH_FAILED": "error", "COMPLETED": "info",
}
_STATE = re.compile(r"^(?P<state>[A-Z][A-Z_]*)\+?(?: by (?P<by>\S+))?\+?$")
_GPU_TRES = re.compile(r"(?:^|,)gres/gpu(?::(?P<type>[^=,]+))?=(?P<n>[0-9]+)")
_RULE = re.compile(r"-+")
_UNSET_TIMES = frozenset({"", "unknown", "none", "n/a"})


def normalize_state(raw: str) -> str:
    """``'CANCELLED by 0'`` -> ``'CANCELLED'``; ``'CA'`` -> ``'CANCELLED'``; ``'FAILED+'`` -> ``'FAILED'``.

    Raises
    ------
    ParseError
        If ``raw`` is not a state code of the form of sacct(1) JOB STATE CODES.
    """
    m = _STATE.match(raw.strip())
    if m is None:
        raise ParseError(f"State {raw!r} is not a Slurm job state")
    return STATE_CODES.get(m["state"], m["state"])


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


def end_signal(job: dict[str, Any], source: str, origin: str) -> dict[str, Any] | None:
    """The ``slurm:<state>`` signal of an ended allocation, or ``None`` if it has not ended."""
    if job["end"] is None or job["state"] in NOT_ENDED:
        return None
    state = job["state"]
    return {
        "time": job["end"], "host": job["failed_node"], "gpu": None, "job_id": job["job_id"],
        "source": source, "signal": f"slurm:{state.lower()}",
        "severity": _SEVERITY.get(state, "warning"), "message": job["state_raw"], "origin": origin,
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
    signals = SignalChunks()
    options = {"tz": zone, "fields": names, "gpus_per_node": gpus_per_node, "delimiter": delimiter}
    state: dict[str, Any] = {"fields": names, "signals": signals}
    if names is not None:
        ctx_notes: list[str] = []
        state["notes"] = ctx_notes
        absent = [f for f in _TIMED if f not in names]
        if absent:
            state["times_noted"] = True
            ctx_notes.append(f"sacct fields= without {' and '.join(a.title() for a in absent)}: jobs keep"
                             " those times empty" + (" and give no slurm:<state> signal" if "end" in absent else ""))
    result = scan_lines(path, SOURCE, _parse_line, table="jobs", options=options, state=state, strict=strict)
    return with_signals(result, signals)


def with_signals(result: FileResult, signals: list[dict[str, Any]]) -> FileResult:
    """``result`` with a ``signals`` table added next to its ``jobs`` table.

    Signals of lines the reader quarantined (a job row refused at the schema boundary) are
    dropped; a signal the table cannot hold makes its line malformed and drops its job.
    """
    if isinstance(signals, SignalChunks):
        return with_signal_chunks(result, signals)
    bad = result.quarantine if result.quarantine is not None else schema.empty("quarantine")
    gone = {f"{p}:{n}" for p, n in zip(bad["path"], bad["lineno"], strict=True)}
    kept = [s for s in signals if s["origin"] not in gone]
    frame, refused = schema.conform_rows(kept, "signals")
    if not refused:
        return dataclasses.replace(result, tables={**result.tables, "signals": frame})
    return refuse_signals(result, bad, frame, {kept[i]["origin"]: why for i, why in refused.items()})



# --- sacct --json -------------------------------------------------------------------------


class _Huge:
    """A JSON number the reader refuses to hold (more digits than Python converts, or not finite)."""

    def __init__(self, text: str) -> None:
        self.text = text if len(text) <= 40 else f"<number of {len(text)} digits>"

    def __repr__(self) -> str:
        return self.text


def _json_int(text: str) -> int | _Huge:
    return int(text) if len(text) <= 4000 else _Huge(text)


_DECODER = json.JSONDecoder(parse_int=_json_int, parse_constant=_Huge)


def _number(value: Any, name: str = "value") -> int | None:
    """A plain int, or the ``{"set": true, "number": n}`` form of data_parser >= v0.0.39.

    Raises
    ------
    ParseError
        For a value that is not a (finite, integral) number.
    """
    if isinstance(value, dict):
        if not value.get("set") or value.get("number") is None:
            return None
        value = value["number"]
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ParseError(f"{name} {schema.safe_repr(value)} is not an integer")


def _epoch(value: Any, name: str) -> pd.Timestamp | None:
    seconds = _number(value, name)
    if not seconds:
        return None
    try:
        return pd.Timestamp(seconds, unit="s", tz="UTC").as_unit("ns")
    except (ValueError, OverflowError):
        raise ParseError(f"{name} {schema.safe_repr(seconds)} is not an epoch time within 1677-2262") from None


def _json_gpus(tres: Any) -> int | None:
    for key in ("allocated", "requested"):
        items = tres.get(key) if isinstance(tres, dict) else None
        if isinstance(items, list):
            counts = [_number(t.get("count", 0), "tres count") or 0 for t in items
                      if isinstance(t, dict) and t.get("type") == "gres"
                      and str(t.get("name", "")).split(":")[0] == "gpu"]
            if counts:
                return sum(counts)
    return None


def _text_or_none(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    raise ParseError(f"{name} {schema.safe_repr(value)} is not text")


def _json_job_id(job: dict[str, Any]) -> str:
    array, het = job.get("array") or {}, job.get("het") or {}
    if not isinstance(array, dict) or not isinstance(het, dict):
        raise ParseError("array/het of a job is not an object")
    task, offset = _number(array.get("task_id"), "array.task_id"), _number(het.get("job_offset"), "het.job_offset")
    if array.get("job_id") and task is not None:
        return f"{_number(array['job_id'], 'array.job_id')}_{task}"
    if het.get("job_id") and offset is not None:
        return f"{_number(het['job_id'], 'het.job_id')}+{offset}"
    job_id = _text_or_none(job["job_id"], "job_id")
    if job_id is None:
        raise ParseError("empty job_id")
    return job_id


def json_job_record(job: dict[str, Any], gpus_per_node: int | None) -> dict[str, Any]:
    """One element of ``sacct --json`` ``jobs[]`` -> a ``jobs`` row (without origin).

    Raises
    ------
    ParseError
        For a field of the wrong type (a state that is not text, a count that is not an
        integer, an epoch beyond 2262, ...).
    """
    state = job.get("state") or {}
    current = state.get("current") if isinstance(state, dict) else state
    words = current if isinstance(current, list) else [current]
    if not words or not isinstance(words[0], str):
        raise ParseError(f"job {schema.safe_repr(job.get('job_id'))}: state.current"
                         f" {schema.safe_repr(current)} is not a state")
    exit_code = job.get("exit_code") or {}
    if not isinstance(exit_code, dict):
        raise ParseError("exit_code is not an object")
    rc = _number(exit_code.get("return_code"), "exit_code.return_code")
    signal = exit_code.get("signal") or {}
    sig = _number(signal.get("id") if isinstance(signal, dict) else None, "exit_code.signal.id") or 0
    nodes = _text_or_none(job.get("nodes"), "nodes")
    if nodes is not None and nodes.lower() == "none assigned":
        nodes = None
    nnodes = _number(job.get("allocation_nodes"), "allocation_nodes")
    if nnodes is None and nodes is not None:
        nnodes = len(expand_hostlist(nodes))
    ngpus = _json_gpus(job.get("tres"))
    if ngpus is None and gpus_per_node is not None and nnodes is not None:
        ngpus = nnodes * gpus_per_node
    times = job.get("time") or {}
    if not isinstance(times, dict):
        raise ParseError("time is not an object")
    return {
        "job_id": _json_job_id(job), "name": _text_or_none(job.get("name"), "name"),
        "user": _text_or_none(job.get("user"), "user"), "partition": _text_or_none(job.get("partition"), "partition"),
        "state": normalize_state(words[0]), "state_raw": " ".join(str(w) for w in words if isinstance(w, str)),
        "exit_code": None if rc is None else f"{rc}:{sig}",
        "submit": _epoch(times.get("submission"), "time.submission"),
        "start": _epoch(times.get("start"), "time.start"), "end": _epoch(times.get("end"), "time.end"),
        "nnodes": nnodes, "ngpus": ngpus, "nodelist": nodes,
        "failed_node": _text_or_none(job.get("failed_node"), "failed_node"),
        "restarts": _number(job.get("restart_cnt"), "restart_cnt"),
    }


class _JsonStream:
    """A JSON document read through a bounded text window (never the whole file).

    :meth:`value` decodes the value at the cursor, reading more text while the window ends
    inside it, up to :data:`MAX_JSON_VALUE` characters; line numbers are counted as the
    cursor moves (the consumed text is dropped).
    """

    def __init__(self, fh: Any, chunk: int = 1 << 20) -> None:
        self._fh, self._chunk = fh, chunk
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.buf, self.pos, self.eof, self.last = "", 0, False, ""
        self._lines, self._counted = 0, 0  # newlines before self._counted (an index of buf)

    def fill(self, size: int = 0) -> bool:
        """Read one more chunk (at least ``size`` bytes); ``False`` at the end of the stream."""
        if self.eof:
            return False
        data = self._fh.read(max(self._chunk, size))
        text = self._decode(data, final=not data)
        if self.pos > len(self.buf) // 2:  # drop what was consumed, keeping the line count
            self.line()
            self.buf, self._counted, self.pos = self.buf[self.pos:], self._counted - self.pos, 0
        self.buf += text
        self.last = text[-1:] or self.last
        self.eof = not data
        return bool(data) or bool(text)

    def line(self, at: int | None = None) -> int:
        """1-based line of buffer index ``at`` (default: the cursor); never moves backwards."""
        at = self.pos if at is None else at
        if at > self._counted:
            self._lines += self.buf.count("\n", self._counted, at)
            self._counted = at
        return self._lines + 1

    def peek(self) -> str:
        """The next non-blank character ('' at the end), the cursor moved onto it."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf) or not self.fill():
                return self.buf[self.pos:self.pos + 1]

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise json.JSONDecodeError(f"expected {char!r}", self.buf, self.pos)
        self.pos += 1

    def value(self) -> Any:
        """Decode the value at the cursor and move past it."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:  # a number may go on in the next chunk
                    self.pos = end
                    return value
            except json.JSONDecodeError:
                if self.eof or len(self.buf) - self.pos > MAX_JSON_VALUE:
                    raise
            # a value cut by the window: read as much again (doubling, so a long value
            # is decoded a logarithmic number of times)
            if not self.fill(len(self.buf) - self.pos) and not self.eof:  # pragma: no cover - fill sets eof
                raise json.JSONDecodeError("unexpected end", self.buf, self.pos)

    def rest_lines(self) -> int:
        """Count the lines of the rest of the stream (its text is not kept)."""
        self.pos = len(self.buf)
        while self.fill():
            self.pos = len(self.buf)
        return self.line(len(self.buf)) - (1 if self.last in ("\n", "") else 0)

    def text_at(self, at: int) -> str:
        """The line of the window around index ``at`` (for the quarantine)."""
        start = self.buf.rfind("\n", 0, at) + 1
        end = self.buf.find("\n", at)
        return self.buf[start: end if end >= 0 else len(self.buf)][:2000]


#: longest JSON value (one element of ``jobs``, or any other top-level member) read, in characters
MAX_JSON_VALUE = 16 << 20


def _json_jobs(doc: _JsonStream) -> Iterator[tuple[Any, int, str]]:
    """Yield ``(element, line, text of that line)`` for each element of the top-level ``jobs`` array.

    Raises ``json.JSONDecodeError`` where the document stops being JSON (or a value is too
    long), ``ValueError``/``RecursionError`` for a value Python cannot decode.
    """
    doc.take("{")
    while doc.peek() != "}":
        key = doc.value()
        doc.take(":")
        if key == "jobs" and doc.peek() == "[":
            doc.pos += 1
            while doc.peek() != "]":
                at = doc.pos
                line, text = doc.line(), doc.text_at(at)
                element = doc.value()
                yield element, line, text
                if doc.peek() == ",":
                    doc.pos += 1
                elif doc.peek() != "]":
                    raise json.JSONDecodeError("expected ',' or ']' in jobs", doc.buf, doc.pos)
            doc.pos += 1
        else:
            doc.value()
        if doc.peek() == ",":
            doc.pos += 1
        elif doc.peek() != "}":
            raise json.JSONDecodeError("expected ',' or '}'", doc.buf, doc.pos)


def _sniff_json(path: str, lines: Sequence[str]) -> float:
    head = "\n".join(lines)
    if head.lstrip().startswith("{") and '"meta"' in head and ("slurm" in head or '"jobs"' in head):
        return 0.9
    return 0.0


@register_parser("sacct_json", sniff=_sniff_json, table="jobs", lines=False)
def read_sacct_json(path: str, *, gpus_per_node: int | None = None, strict: bool = False) -> FileResult:
    """Slurm ``sacct --json`` output -> jobs (+ ``slurm:<state>`` signals), best effort.

    Reads ``jobs[]``: ``job_id`` (with ``array``/``het`` ids), ``name``, ``user``,
    ``partition``, ``state.current``, ``exit_code``, ``time.submission/start/end`` (epoch
    seconds, 0 = not reached), ``nodes``, ``allocation_nodes``, ``tres.allocated/requested``,
    ``restart_cnt``, ``failed_node``; both the plain and the ``{"set", "number"}`` integer
    forms of Slurm's data_parser plugins.  Steps are nested in their job and not read.

    Accounting: the first line of each job element is parsed (or malformed if the element
    cannot be read: a field of the wrong type, an integer beyond 64 bits or of thousands of
    digits, ``Infinity``, an epoch beyond 2262); every other line is irrelevant.  The
    document is streamed (one element at a time, each at most :data:`MAX_JSON_VALUE`
    characters); where it stops being JSON, that line is malformed and the rest of the
    file is counted but not read.

    References
    ----------
    ``sacct(1)`` ``--json``; Slurm REST API data_parser schema (``v0.0.37``-``v0.0.42``).
    """
    source = "sacct_json"
    quarantine = Quarantine(str(path), source)
    jobs: list[dict[str, Any]] = []
    signals: dict[int, dict[str, Any]] = {}
    linenos: list[int] = []

    def bad(lineno: int, reason: str, text: str | None) -> None:
        if strict:
            raise ParseError(reason, Origin(str(path), lineno, text or ""))
        quarantine.add(lineno, reason, text)

    with open_binary(path) as fh:
        doc = _JsonStream(fh)
        try:
            for element, lineno, text in (_json_jobs(doc) if doc.peek() else ()):
                try:
                    if not isinstance(element, dict) or "job_id" not in element:
                        raise ParseError("jobs[] element without job_id")
                    job = json_job_record(element, gpus_per_node)
                except ParseError as exc:
                    bad(lineno, exc.message, text)
                    continue
                except Exception as exc:  # noqa: BLE001 - one bad element never ends the run
                    bad(lineno, f"bad job record: {unexpected(exc)}", text)
                    continue
                job["origin"] = f"{path}:{lineno}"
                jobs.append(job)
                linenos.append(lineno)
                signal = end_signal(job, source, job["origin"])
                if signal is not None:
                    signals[lineno] = signal
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            at = exc.pos if isinstance(exc, json.JSONDecodeError) else doc.pos
            at = min(max(at, 0), len(doc.buf))
            msg = (exc.msg if isinstance(exc, json.JSONDecodeError)
                   else "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200])
            lineno = doc.line(at)
            bad(lineno, f"not valid JSON: {msg} (the rest of the file is not read)", doc.text_at(at))
        n_lines = doc.rest_lines()
    frame, refused = schema.conform_rows(jobs, "jobs")
    for i, why in sorted(refused.items()):
        bad(linenos[i], why, None)
        signals.pop(linenos[i], None)
    parsed = len(jobs) - len(refused)
    malformed = quarantine.count
    n_lines = max(n_lines, parsed + malformed)
    result = FileResult(
        path=str(path), source=source, lines=n_lines, parsed=parsed,
        irrelevant=n_lines - parsed - malformed, malformed=malformed,
        tables={"jobs": frame}, quarantine=quarantine.frame(),
    )
    return with_signals(result, list(signals.values()))


__all__ = ["read_sacct", "read_sacct_json", "normalize_state", "parse_slurm_time", "gpus_from_tres", "job_record",
           "end_signal", "STATE_CODES"]
