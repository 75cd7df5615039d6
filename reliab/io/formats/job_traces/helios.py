"""SenseTime Helios and Shanghai AI Lab Acme job traces (CSV) -> ``jobs`` rows.

Helios (HeliosData ``README.md``, schema of ``cluster_log.csv``; Hu et al., SC '21):
``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue``,
times ``YYYY-MM-DD HH:MM:SS`` without a zone (the README names none).  Acme (AcmeTrace
``README.md``, ``trace_seren.csv`` and ``trace_kalos.csv``; Hu et al., NSDI '24):
``job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time``,
Kalos adding ``mem_per_pod_GB,shared_mem_per_pod,fail_time,stop_time``; times carry their
offset (``+08:00``, ``+00:00``).  Columns are matched by name, in any order.

State vocabulary (both READMEs): ``COMPLETED`` finished successfully, ``CANCELLED``
terminated by the user, ``FAILED`` terminated by internal or external errors, ``TIMEOUT``
out of its time limit, ``NODE_FAIL`` terminated by a node crash; these are Slurm's job
state names and are kept as they are (``SUSPENDED``, seen once in Helios, and ``RUNNING``
/``PENDING`` too).  Under the fleet policy ``NODE_FAIL`` is an infrastructure
interruption and ``FAILED`` without infrastructure evidence a user failure: the trace
itself tells the two apart.

Mapping: ``vc`` (virtual cluster) -> ``partition``, Acme ``type`` (workload type) ->
``name``, ``gpu_num`` -> ``ngpus``, ``node_num`` -> ``nnodes``.  ``duration`` and ``queue``
are not read: the times are (in the Kalos example rows ``duration`` is ``end - submit``,
not ``end - start`` as the README says).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.job_traces._fields import (
    count,
    csv_line_parser,
    header_score,
    state_of,
    text,
    wall_time,
    zone,
)

#: the five documented end states, plus the Slurm states of a job not ended or suspended
STATES = {s: s for s in ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "SUSPENDED",
                         "RUNNING", "PENDING")}
REQUIRED = ("job_id", "state", "submit_time", "start_time", "end_time", "gpu_num")
HELIOS_HEADER = ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time",
                 "start_time", "end_time", "duration", "queue")
SEREN_HEADER = ("job_id", "user", "node_num", "gpu_num", "cpu_num", "type", "state", "submit_time",
                "start_time", "end_time", "duration", "queue", "gpu_time")
KALOS_HEADER = ("job_id", "user", "node_num", "gpu_num", "cpu_num", "mem_per_pod_gb", "shared_mem_per_pod",
                "type", "state", "submit_time", "start_time", "end_time", "fail_time", "stop_time",
                "duration", "queue", "gpu_time")
#: zone of times printed without an offset: SenseTime's and Shanghai AI Lab's clusters
DEFAULT_TZ = "Asia/Shanghai"


def _job(values: dict[str, str], options: dict[str, Any]) -> dict[str, Any]:
    job_id = text(values["job_id"])
    if job_id is None:
        raise ParseError("empty job_id")
    tz, naive = options["tz"], options["naive"]
    return {
        "job_id": job_id, "name": text(values.get("type")), "user": text(values.get("user")),
        "partition": text(values.get("vc")), "state": state_of(values["state"], STATES, options["trace"]),
        "state_raw": text(values["state"]), "exit_code": None,
        "submit": wall_time(values["submit_time"], tz, "submit_time", naive),
        "start": wall_time(values["start_time"], tz, "start_time", naive),
        "end": wall_time(values["end_time"], tz, "end_time", naive),
        "nnodes": count(values.get("node_num"), "node_num"), "ngpus": count(values["gpu_num"], "gpu_num"),
        "nodelist": None, "failed_node": None, "restarts": None,
    }


_PARSE = csv_line_parser((HELIOS_HEADER, SEREN_HEADER, KALOS_HEADER), REQUIRED, _job)


def _read(path: str, trace: str, tz: str, strict: bool) -> FileResult:
    zone_info = zone(tz)
    naive = [0]
    result = scan_lines(path, trace, _PARSE, table="jobs", strict=strict,
                        options={"tz": zone_info, "naive": naive, "trace": trace})
    if naive[0]:
        note = (f"{naive[0]} time(s) without a UTC offset read as local time in {tz}"
                f"{' (the default: the ' + trace + ' README names no zone)' if tz == DEFAULT_TZ else ''};"
                " the tz option changes it")
        result = replace(result, notes=(*result.notes, note))
    return result


def _sniff(lines: Sequence[str], helios: bool) -> float:
    head = next((ln for ln in lines[:2] if ln.strip()), "")
    vc = ("vc",)
    if header_score(head, REQUIRED, () if helios else vc) and (not helios or header_score(head, vc)):
        return 0.95
    return 0.0


@register_parser("helios", sniff=lambda path, lines: _sniff(lines, True), table="jobs")
def read_helios(path: str, *, tz: str = DEFAULT_TZ, strict: bool = False) -> FileResult:
    """SenseTime Helios ``cluster_log.csv`` job trace -> jobs (states as printed: Slurm's).

    Parameters
    ----------
    path : str
        A ``cluster_log.csv`` of HeliosData (possibly compressed).
    tz : str
        IANA zone of times printed without an offset (Helios prints none; default
        ``Asia/Shanghai``, said in the file's notes).
    strict : bool
        Raise the first malformed row instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["jobs"]``: one row per job; ``vc`` is the partition.

    References
    ----------
    S-Lab-System-Group/HeliosData ``README.md`` ("cluster_log.csv"); Hu et al., SC '21.
    """
    return _read(path, "helios", tz, strict)


@register_parser("acme", sniff=lambda path, lines: _sniff(lines, False), table="jobs")
def read_acme(path: str, *, tz: str = DEFAULT_TZ, strict: bool = False) -> FileResult:
    """Shanghai AI Lab Acme ``trace_seren.csv``/``trace_kalos.csv`` job trace -> jobs.

    Parameters
    ----------
    path : str
        A job trace of AcmeTrace (possibly compressed).
    tz : str
        IANA zone of a time printed without an offset (the release prints offsets, which win).
    strict : bool
        Raise the first malformed row instead of quarantining it.

    Returns
    -------
    FileResult
        ``tables["jobs"]``: one row per job; the workload ``type`` is the job name.

    References
    ----------
    InternLM/AcmeTrace ``README.md`` ("Job Trace"); Hu et al., NSDI '24.
    """
    return _read(path, "acme", tz, strict)


__all__ = ["read_helios", "read_acme", "STATES"]
