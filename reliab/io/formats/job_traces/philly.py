"""Microsoft Philly ``cluster_job_log`` (JSON) -> ``jobs`` rows, one per scheduling attempt.

Format (msr-fiddle/philly-traces ``README.md``, "cluster_job_log"; Jeon et al., USENIX ATC
'19): one JSON array of jobs ``{"status", "vc", "jobid", "attempts", "submitted_time",
"user"}``; ``attempts`` lists each successful scheduling attempt ``{"start_time",
"end_time", "detail": [{"ip", "gpus": [...]}, ...]}``.  The README notes that a job may
have no attempt, that an attempt may lack a start or end time (a logging error), and that a
``None`` end of the last attempt means the job was still running when the snapshot was taken.

State vocabulary (README: "One of ``Pass``, ``Killed``, or ``Failed``"): ``Pass`` ->
``COMPLETED``, ``Killed`` -> ``CANCELLED``, ``Failed`` -> ``FAILED``; the status is the
job's end, so it is the state of the job's last attempt.  Every earlier attempt ended and
the job was scheduled again: ``REQUEUED``, Slurm's name for a run the scheduler ended and
started again (sacct ``--duplicates`` lists each run under one job id, as here); the trace
does not say why.  A last attempt without an end is ``RUNNING``.  A job without attempts
is one row without start, end or GPUs.

Mapping per attempt: ``jobid`` -> ``job_id`` (every attempt of a job shares it), ``user``,
``vc`` (virtual cluster) -> ``partition``, ``submitted_time`` -> ``submit``, the attempt's
times -> ``start``/``end``, its servers (``ip``, comma-joined) -> ``nodelist`` and their
number -> ``nnodes``, its GPUs -> ``ngpus``, the attempt's index -> ``restarts``.

Times are printed without a zone; the README names none.  The utilisation files of the
same release print US Pacific time (``2017-10-03 00:08:00 PDT``) and the project's
notebook compares job times with them after cutting the zone off, so the default ``tz`` is
``America/Los_Angeles`` (said in the file's notes).

Accounting: the first line of each job element is parsed (or malformed when the element
cannot be read); every other line is irrelevant.  The document is streamed one element at
a time (the released file holds 117,325 jobs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import tzinfo
from typing import Any

from reliab import schema
from reliab.errors import Origin, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import unexpected
from reliab.io._localtime import noting
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.job_traces._fields import state_of, text, wall_time, zone
from reliab.io.formats.slurm import JsonStream

SOURCE = "philly"
STATES = {"Pass": "COMPLETED", "Killed": "CANCELLED", "Failed": "FAILED"}
DEFAULT_TZ = "America/Los_Angeles"


def _servers(detail: Any, k: int) -> tuple[str | None, int | None, int | None]:
    """(nodelist, nnodes, ngpus) of one attempt's ``detail`` list."""
    if detail is None:
        return None, None, None
    if not isinstance(detail, list) or not all(isinstance(d, dict) for d in detail):
        raise ParseError(f"attempts[{k}].detail is not a list of objects")
    hosts: list[str] = []
    gpus = 0
    for d in detail:
        ip, devices = text(d.get("ip")), d.get("gpus") or []
        if not isinstance(devices, list):
            raise ParseError(f"attempts[{k}].detail.gpus is not a list")
        if ip is not None and ip not in hosts:
            hosts.append(ip)
        gpus += len(devices)
    return (",".join(hosts) or None), len(detail), gpus


def job_rows(job: Any, tz: tzinfo) -> list[dict[str, Any]]:
    """One Philly job object -> its ``jobs`` rows (one per attempt, or one without attempts).

    Raises
    ------
    ParseError
        For an element that is not a job object, an unknown status or a bad time.
    """
    if not isinstance(job, dict) or not isinstance(job.get("jobid"), str) or not job["jobid"].strip():
        raise ParseError("element is not a job object with a jobid")
    status = job.get("status")
    final = state_of(status, STATES, "Philly")
    attempts = job.get("attempts") or []
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        raise ParseError("attempts is not a list of objects")
    base = {"job_id": job["jobid"].strip(), "name": None, "user": text(job.get("user")),
            "partition": text(job.get("vc")), "exit_code": None, "failed_node": None,
            "submit": wall_time(job.get("submitted_time"), tz, "submitted_time")}
    if not attempts:
        return [{**base, "state": final, "state_raw": status, "start": None, "end": None, "nnodes": None,
                 "ngpus": None, "nodelist": None, "restarts": None}]
    rows = []
    for k, attempt in enumerate(attempts):
        last = k == len(attempts) - 1
        end = wall_time(attempt.get("end_time"), tz, f"attempts[{k}].end_time")
        state = ("RUNNING" if end is None else final) if last else "REQUEUED"
        nodelist, nnodes, ngpus = _servers(attempt.get("detail"), k)
        rows.append({**base, "state": state,
                     "state_raw": status if last else f"attempt {k + 1} of {len(attempts)} (job {status})",
                     "start": wall_time(attempt.get("start_time"), tz, f"attempts[{k}].start_time"),
                     "end": end, "nnodes": nnodes, "ngpus": ngpus, "nodelist": nodelist, "restarts": k})
    return rows


def _elements(doc: JsonStream) -> Iterator[tuple[Any, int, str]]:
    """``(element, line, text of that line)`` for each element of the top-level array."""
    doc.take("[")
    while doc.peek() != "]":
        at = doc.pos
        line, text_ = doc.line(), doc.text_at(at)
        yield doc.value(), line, text_
        if doc.peek() == ",":
            doc.pos += 1
        elif doc.peek() != "]":
            raise json.JSONDecodeError("expected ',' or ']' between jobs", doc.buf, doc.pos)
    doc.pos += 1


def _sniff(path: str, lines: Sequence[str]) -> float:
    head = "\n".join(lines)
    if head.lstrip().startswith("[") and '"jobid"' in head and ('"attempts"' in head or '"submitted_time"' in head):
        return 0.9
    return 0.0


@register_parser(SOURCE, sniff=_sniff, table="jobs")
def read_philly(path: str, *, tz: str = DEFAULT_TZ, strict: bool = False) -> FileResult:
    """Microsoft Philly ``cluster_job_log`` (JSON) -> jobs, one row per scheduling attempt.

    Parameters
    ----------
    path : str
        The ``cluster_job_log`` file of philly-traces (possibly compressed).
    tz : str
        IANA zone of the trace's times (printed without one; default ``America/Los_Angeles``,
        the zone of the release's utilisation files).
    strict : bool
        Raise the first malformed job instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["jobs"]``: Pass/Killed/Failed as COMPLETED/CANCELLED/FAILED on the last
        attempt, REQUEUED on earlier ones, RUNNING for a last attempt without an end.

    References
    ----------
    msr-fiddle/philly-traces ``README.md`` ("cluster_job_log"); Jeon et al., USENIX ATC '19.
    """
    zone_info = zone(tz)
    quarantine = Quarantine(str(path), SOURCE)
    rows: list[dict[str, Any]] = []
    line_of_row: list[int] = []
    parsed = 0

    def bad(lineno: int, reason: str, line_text: str | None) -> None:
        if strict:
            raise ParseError(reason, Origin(str(path), lineno, line_text or ""))
        quarantine.add(lineno, reason, line_text)

    with open_binary(path) as fh, noting() as local_times:
        doc = JsonStream(fh)
        try:
            for element, lineno, line_text in (_elements(doc) if doc.peek() else ()):
                try:
                    made = job_rows(element, zone_info)
                except ParseError as exc:
                    bad(lineno, exc.message, line_text)
                    continue
                except Exception as exc:  # noqa: BLE001 - one bad job never ends the run
                    bad(lineno, f"bad job record: {unexpected(exc)}", line_text)
                    continue
                parsed += 1
                for row in made:
                    row["origin"] = f"{path}:{lineno}"
                rows += made
                line_of_row += [lineno] * len(made)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            at = min(max(exc.pos if isinstance(exc, json.JSONDecodeError) else doc.pos, 0), len(doc.buf))
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:200]
            bad(doc.line(at), f"not valid JSON: {msg} (the rest of the file is not read)", doc.text_at(at))
        n_lines = doc.rest_lines()
    return _result(str(path), rows, line_of_row, parsed, n_lines, quarantine, bad, tz, local_times.note())


def _result(path: str, rows: list[dict[str, Any]], line_of_row: list[int], parsed: int, n_lines: int,
            quarantine: Quarantine, bad: Any, tz: str, dst_note: str | None) -> FileResult:
    """The FileResult: rows the jobs table refuses make their whole job malformed."""
    frame, refused = schema.conform_rows(rows, "jobs")
    if refused:
        lines_out = {line_of_row[i]: why for i, why in refused.items()}
        for lineno, why in sorted(lines_out.items()):
            bad(lineno, why, None)
        keep = [ln not in lines_out for ln in line_of_row]
        frame, _ = schema.conform_rows([r for r, k in zip(rows, keep, strict=True) if k], "jobs")
        parsed -= len(lines_out)
    malformed = quarantine.count
    n_lines = max(n_lines, parsed + malformed)
    notes = [f"times read as local time in {tz}"
             + (" (the default: the Philly README names no zone; its utilisation files print US Pacific"
                " PDT/PST)" if tz == DEFAULT_TZ else "") + "; the tz option changes it"]
    if dst_note:
        notes.append(dst_note)
    return FileResult(path=path, source=SOURCE, lines=n_lines, parsed=parsed,
                      irrelevant=n_lines - parsed - malformed, malformed=malformed,
                      tables={"jobs": frame}, quarantine=quarantine.frame(), notes=tuple(notes))


__all__ = ["read_philly", "job_rows", "STATES"]
