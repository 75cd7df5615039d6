"""Slurm ``sacct --json`` -> ``jobs`` rows and ``slurm:<state>`` signals (source ``sacct_json``).

Registered as a reader by :mod:`reliab.io.formats.slurm`, after the text reader.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import Origin, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import unexpected
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult
from reliab.io.formats.slurm._signals import with_signals
from reliab.io.formats.slurm._states import end_signal, normalize_state
from reliab.io.formats.slurm.hostlist import expand_hostlist


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


class JsonStream:
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


def _json_jobs(doc: JsonStream) -> Iterator[tuple[Any, int, str]]:
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
        doc = JsonStream(fh)
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


__all__ = ["read_sacct_json", "json_job_record", "MAX_JSON_VALUE"]
