"""Alibaba PAI GPU trace (``cluster-trace-gpu-v2020``) job and task tables -> ``jobs`` rows.

Format (alibaba/clusterdata ``cluster-trace-gpu-v2020/README.md`` and the ``.header`` files
of its ``data/`` folder; Weng et al., NSDI '22): headerless CSV.

* ``pai_job_table``: ``job_name,inst_id,user,status,start_time,end_time``.  The job's
  ``start_time`` is its *submission* time and ``end_time`` its completion, so a job row has
  ``submit`` and ``end`` but no ``start`` (the launch is in the task table).
* ``pai_task_table``: ``job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,
  plan_mem,plan_gpu,gpu_type``; ``start_time`` is the task's launch.  Each task is one
  ``jobs`` row (``job_id`` = ``job_name``, ``name`` = ``task_name``; a job of several
  tasks has several rows), with ``ngpus`` = ceil(``inst_num`` x ``plan_gpu`` / 100):
  ``plan_gpu`` is percent of one GPU per instance, so the GPUs the task touches at least.

``job_name`` is the key all PAI tables share (the README pairs each ``job_name`` with one
``inst_id``), so it is the ``job_id`` of both readers.  A header line (``job_name,…``) is
accepted too, for a file that was given one.

Times are seconds "deducted by a constant number for desensitization": read as Unix time
in UTC+8 (Asia/Shanghai) they keep the trace's time of day and weekday, with fake dates
in 1970.  The readers add them to ``time_origin`` (default ``1970-01-01T00:00:00Z``, so the
stored instants are those Unix times) and say so in a note; ``0`` means not reached.

State vocabulary (README, ``status``): ``Terminated`` -> ``COMPLETED`` ("only 'Terminated'
tasks are successful"), ``Failed`` -> ``FAILED``, ``Running`` -> ``RUNNING``, ``Waiting``
-> ``PENDING``.  The trace does not say why a job failed, so under the fleet policy every
``FAILED`` job without infrastructure evidence is a user failure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.job_traces._fields import (
    count,
    csv_cells,
    csv_line_parser,
    offset_time,
    state_of,
    text,
    unset,
)

STATES = {"Terminated": "COMPLETED", "Failed": "FAILED", "Running": "RUNNING", "Waiting": "PENDING"}
JOB_HEADER = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
TASK_HEADER = ("job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
               "plan_mem", "plan_gpu", "gpu_type")
DEFAULT_ORIGIN = "1970-01-01T00:00:00Z"


def _job_id(values: dict[str, str]) -> str:
    job_id = text(values["job_name"])
    if job_id is None:
        raise ParseError("empty job_name")
    return job_id


def _job(values: dict[str, str], options: dict[str, Any]) -> dict[str, Any]:
    origin = options["origin"]
    return {
        "job_id": _job_id(values), "name": None, "user": text(values.get("user")), "partition": None,
        "state": state_of(values["status"], STATES, "PAI"), "state_raw": text(values["status"]),
        "exit_code": None, "submit": offset_time(values["start_time"], origin, "start_time"), "start": None,
        "end": offset_time(values["end_time"], origin, "end_time"), "nnodes": None, "ngpus": None,
        "nodelist": None, "failed_node": None, "restarts": None,
    }


def _gpus(inst_num: str, plan_gpu: str) -> int | None:
    if unset(plan_gpu):
        return None
    instances = count(inst_num, "inst_num")
    try:
        percent = float(plan_gpu)
    except ValueError:
        raise ParseError(f"plan_gpu {plan_gpu.strip()[:40]!r} is not a number") from None
    if instances is None or not math.isfinite(percent) or percent < 0 or percent > 1e6:
        raise ParseError(f"plan_gpu {plan_gpu.strip()[:40]!r} is not a GPU share in percent")
    return math.ceil(round(instances * percent / 100.0, 9))


def _task(values: dict[str, str], options: dict[str, Any]) -> dict[str, Any]:
    origin = options["origin"]
    return {
        "job_id": _job_id(values), "name": text(values.get("task_name")), "user": None, "partition": None,
        "state": state_of(values["status"], STATES, "PAI"), "state_raw": text(values["status"]),
        "exit_code": None, "submit": None, "start": offset_time(values["start_time"], origin, "start_time"),
        "end": offset_time(values["end_time"], origin, "end_time"), "nnodes": None,
        "ngpus": _gpus(values.get("inst_num", ""), values.get("plan_gpu", "")),
        "nodelist": None, "failed_node": None, "restarts": None,
    }


def _origin(time_origin: str) -> datetime:
    try:
        value = datetime.fromisoformat(time_origin.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise ValueError(f"time_origin={time_origin!r} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        raise ValueError(f"time_origin={time_origin!r} needs an offset (e.g. Z or +08:00)")
    return value.astimezone(UTC)


def _read(path: str, header: tuple[str, ...], make: Any, source: str, time_origin: str,
          strict: bool) -> FileResult:
    origin = _origin(time_origin)
    parse = csv_line_parser((header,), header, make)
    result = scan_lines(path, source, parse, table="jobs", strict=strict, options={"origin": origin},
                        state={"fields": list(header)})
    note = (f"times are seconds after {time_origin}"
            + (" (the default: PAI shifted its times by an undisclosed constant, so dates are fake;"
               " time of day and weekday are right in Asia/Shanghai)" if time_origin == DEFAULT_ORIGIN else "")
            + "; the time_origin option moves them")
    return replace(result, notes=(*result.notes, note))


def _row_like(line: str, header: tuple[str, ...]) -> bool:
    try:
        cells = [c.strip() for c in csv_cells(line)] if line.strip() else []
    except Exception:  # noqa: BLE001 - csv refuses some bytes (NUL): not a PAI row
        return False
    if tuple(c.lower() for c in cells) == header:
        return True
    if len(cells) != len(header):
        return False
    status, start, end = cells[3], cells[4], cells[5]
    numbers = all(unset(v) or v.replace(".", "", 1).isdigit() for v in (start, end))
    return status in STATES and numbers and all(c.isalnum() for c in cells[0]) and bool(cells[0])


def _sniff(path: str, lines: Sequence[str], header: tuple[str, ...], stem: str) -> float:
    rows = [ln for ln in lines[:20] if ln.strip()]
    if not rows or not all(_row_like(ln, header) for ln in rows):
        return 0.0
    named = stem in path.rsplit("/", 1)[-1]
    return 0.95 if named or tuple(c.strip().lower() for c in csv_cells(rows[0])) == header else 0.8


@register_parser("pai_job", sniff=lambda p, ln: _sniff(p, ln, JOB_HEADER, "pai_job_table"), table="jobs")
def read_pai_job(path: str, *, time_origin: str = DEFAULT_ORIGIN, strict: bool = False) -> FileResult:
    """Alibaba PAI ``pai_job_table`` (headerless CSV) -> jobs: submission, end, user, status.

    Parameters
    ----------
    path : str
        A ``pai_job_table.csv`` of cluster-trace-gpu-v2020 (possibly compressed).
    time_origin : str
        ISO 8601 instant (with offset) the trace's seconds count from; default the Unix epoch.
    strict : bool
        Raise the first malformed row instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["jobs"]``: one row per job, ``start`` empty (the job table has no launch time).

    References
    ----------
    alibaba/clusterdata ``cluster-trace-gpu-v2020/README.md`` ("pai_job_table"); Weng et al., NSDI '22.
    """
    return _read(path, JOB_HEADER, _job, "pai_job", time_origin, strict)


@register_parser("pai_task", sniff=lambda p, ln: _sniff(p, ln, TASK_HEADER, "pai_task_table"), table="jobs")
def read_pai_task(path: str, *, time_origin: str = DEFAULT_ORIGIN, strict: bool = False) -> FileResult:
    """Alibaba PAI ``pai_task_table`` (headerless CSV) -> one jobs row per task, with its GPUs.

    Parameters
    ----------
    path : str
        A ``pai_task_table.csv`` of cluster-trace-gpu-v2020 (possibly compressed).
    time_origin : str
        ISO 8601 instant (with offset) the trace's seconds count from; default the Unix epoch.
    strict : bool
        Raise the first malformed row instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["jobs"]``: ``job_id`` = job_name, ``name`` = task_name, launch and end,
        ``ngpus`` = ceil(inst_num x plan_gpu / 100).

    References
    ----------
    alibaba/clusterdata ``cluster-trace-gpu-v2020/README.md`` ("pai_task_table"); Weng et al., NSDI '22.
    """
    return _read(path, TASK_HEADER, _task, "pai_task", time_origin, strict)


__all__ = ["read_pai_job", "read_pai_task", "STATES"]
