"""``slurm://``: job records from Slurm's accounting database, read with the installed ``sacct``.

``reliab.ingest("slurm://", start=..., end=...)`` runs ``sacct`` (``slurm://<cluster>`` adds
``--clusters=<cluster>``) over the window in chunks and hands each chunk's output, unchanged, to
the file readers of :mod:`reliab.io.formats.slurm` (``sacct --parsable2`` to ``sacct``,
``sacct --json`` to ``sacct_json``), so the ``jobs`` rows and ``slurm:<state>`` signals are those
a saved capture would give.  What the client is asked for (``sacct(1)``, Slurm 22.05–25.11):

* ``--starttime/--endtime`` per chunk, with ``TZ=UTC`` and ``SLURM_TIME_FORMAT=standard`` so times
  are printed and read in UTC whatever the user's settings;
* ``--allusers`` (or ``--user=``), ``--partition=``, ``--duplicates`` (every requeued instance
  of a job is its own record: the REQUEUED, NODE_FAIL or PREEMPTED end of each run is kept),
  job steps unless ``steps=False`` (read and counted as irrelevant lines), array tasks as
  ``<array>_<task>``;
* for ``--parsable2`` the fields of interest that this client knows (``sacct --helpformat``:
  Slurm 22.05 has neither ``Restarts`` nor ``FailedNode``).

``--json`` is used by default only where the client is Slurm 23.02 or later: Slurm 22.05's
``sacct --json`` (``openapi/dbv0.0.38``) reports a job that exited 1 with ``return_code`` 0 and
drops ``CANCELLED by <uid>``, while ``--parsable2`` of the same client prints ``1:0`` and the
canceller (observed on 22.05.8; the live test shows both).

A job that runs across a chunk boundary is returned by both chunks: the record read last is
kept and the earlier copy is counted as an irrelevant line of its chunk.  Node state changes
(``sacctmgr show event``: a node set DOWN or DRAIN, with reason and time) become
``node_state:<down|fail|drain>`` signals on that host, the evidence that names the node behind a
NODE_FAIL where the client has no ``FailedNode`` field.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from reliab import schema
from reliab.errors import ParseError, SourceError
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_source
from reliab.io._repeats import job_record_key
from reliab.io.formats.slurm import parse_slurm_time, read_sacct, read_sacct_json
from reliab.io.sources._command import argv, command_of, run
from reliab.io.sources._http import MAX_BYTES
from reliab.io.sources._relabel import relabel
from reliab.io.sources._window import Moment, chunks, duration, iso, window

#: sacct fields requested with --parsable2, those the client knows (order kept)
SACCT_FIELDS = ("JobID", "JobIDRaw", "JobName", "User", "Account", "Partition", "State", "ExitCode",
                "DerivedExitCode", "Submit", "Eligible", "Start", "End", "ElapsedRaw", "NNodes",
                "NodeList", "AllocTRES", "Restarts", "FailedNode", "Reason", "Timelimit", "Cluster")
#: first Slurm release whose ``sacct --json`` carries exit codes, restarts and failed node
JSON_SINCE = (23, 2)
_INSTALL = "install the Slurm client (Debian/Ubuntu: apt-get install slurm-client) or pass sacct_command="
_ENV = {"TZ": "UTC", "SLURM_TIME_FORMAT": "standard"}
_EVENT_FIELDS = ("NodeName", "Start", "End", "State", "Reason", "User")
_URL_KEYS = ("start", "end", "partition", "user")
#: a cluster, partition or user name: the portable filename character set (IEEE Std
#: 1003.1-2017, 3.282), of which portable user names are made (3.437), and ``@`` of domain
#: users (``user@domain``); nothing a shell would read as code
_NAME = re.compile(r"[A-Za-z0-9._@-]+")


@dataclasses.dataclass(frozen=True)
class Client:
    """The installed ``sacct``: how to call it, its version and the fields it knows."""

    command: tuple[str, ...]
    version: tuple[int, int, int]
    fields: tuple[str, ...]

    @property
    def full_json(self) -> bool:
        """Whether ``sacct --json`` gives the whole record (Slurm >= 23.02)."""
        return self.version[:2] >= JSON_SINCE


def probe(command: Sequence[str], location: str, env: dict[str, str], timeout_s: float,
          max_bytes: int = MAX_BYTES) -> Client:
    """Ask ``sacct`` for its version and field list.

    Raises
    ------
    SourceError
        ``sacct`` is missing or fails, or prints no version.
    """
    text = run(argv(command, "--version"), location, "sacct", env=env, timeout_s=timeout_s,
               install_hint=_INSTALL, max_bytes=max_bytes).decode("utf-8", "replace")
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if m is None:
        raise SourceError(f"{location}: sacct --version printed no version ({text.strip()[:80]!r})")
    version = (int(m[1]), int(m[2]), int(m[3]))
    known = run(argv(command, "--helpformat"), location, "sacct", env=env, timeout_s=timeout_s,
                max_bytes=max_bytes)
    names = {w.lower() for w in known.decode("utf-8", "replace").split()}
    return Client(tuple(command), version, tuple(f for f in SACCT_FIELDS if f.lower() in names))


def _joined(value: str | Sequence[str] | None, name: str) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else ",".join(map(str, value))
    if not text.strip():
        raise ValueError(f"{name}={value!r} is not a name or a comma-separated list of names")
    return _names(text.strip(), name)


def _names(text: str, name: str) -> str:
    """``text`` if each of its comma-separated items is a Slurm name, else ``ValueError``."""
    for item in text.split(","):
        if not _NAME.fullmatch(item):
            raise ValueError(f"{name}={text!r}: {item!r} is not a Slurm name (letters, digits and . _ - @)")
    return text


def _url_options(location: str, given: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Cluster and options of ``slurm://[cluster][?start=…&end=…&partition=…&user=…]``.

    Raises
    ------
    ValueError
        An unknown query key, or a key given both in the URL and as an argument.
    """
    parts = urlsplit(location)
    cluster = _names(parts.hostname, "cluster") if parts.hostname else None
    merged = dict(given)
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _URL_KEYS:
            raise ValueError(f"{location}: unknown query key {key!r} (known: {', '.join(_URL_KEYS)})")
        if merged.get(key) is not None and str(merged[key]) != value:
            raise ValueError(f"{key}= given twice: {merged[key]!r} and {value!r} in the URL")
        merged[key] = value
    return cluster, merged


def chunk_url(cluster: str | None, a: pd.Timestamp, b: pd.Timestamp, partition: str | None,
              user: str | None) -> str:
    """``slurm://[cluster]?start=…&end=…[&partition=…][&user=…]``: a location that reruns the chunk."""
    query = {"start": iso(a), "end": iso(b), **({"partition": partition} if partition else {}),
             **({"user": user} if user else {})}
    return f"slurm://{cluster or ''}?{urlencode(query, safe=':,')}"


def _sacct_args(client: Client, a: pd.Timestamp, b: pd.Timestamp, fmt: str, *, cluster: str | None,
                partition: str | None, user: str | None, duplicates: bool, steps: bool) -> list[str]:
    args = ["--json" if fmt == "json" else "--parsable2",
            f"--starttime={iso(a)}", f"--endtime={iso(b)}",
            f"--user={user}" if user else "--allusers"]
    if fmt != "json":
        args.append(f"--format={','.join(client.fields)}")
        if not steps:
            args.append("--allocations")
    if duplicates:
        args.append("--duplicates")
    if partition:
        args.append(f"--partition={partition}")
    if cluster:
        args.append(f"--clusters={cluster}")
    return argv(client.command, *args)


def drop_repeats(results: list[FileResult]) -> list[FileResult]:
    """Keep each job record once, from the last chunk that returned it.

    A dropped copy moves from *parsed* to *irrelevant* in its chunk's accounting, and its
    ``slurm:<state>`` signal (same origin) goes with it.
    """
    seen: set[str] = set()
    out: list[FileResult] = []
    for r in reversed(results):
        jobs = r.tables.get("jobs")
        if jobs is None or not len(jobs):
            out.append(r)
            continue
        keys = job_record_key(jobs)
        repeat = keys.isin(seen).to_numpy()
        seen.update(keys[~repeat])
        if repeat.any():
            gone = set(jobs.loc[repeat, "origin"].astype(str))
            signals = r.tables.get("signals", schema.empty("signals"))
            kept = signals[~signals["origin"].astype(str).isin(gone).to_numpy()].reset_index(drop=True)
            n = int(repeat.sum())
            r = dataclasses.replace(
                r, parsed=r.parsed - n, irrelevant=r.irrelevant + n,
                tables={**r.tables, "jobs": jobs[~repeat].reset_index(drop=True), "signals": kept},
                notes=(*r.notes, f"{n} job record(s) also returned by a later chunk, kept there"))
        out.append(r)
    return out[::-1]


def _node_signal(state: str) -> tuple[str, str] | None:
    """``'IDLE+DRAIN'`` -> ``('node_state:drain', 'warning')``; ``None`` for other states.

    The ``node_state:`` keys are kept apart from the ``slurm:<job state>`` keys of job ends
    (a job ends ``slurm:node_fail``; a node goes ``node_state:fail``).
    """
    words = {w.strip("*~#!%$@^-") for w in state.upper().split("+")}
    for word, severity in (("FAIL", "error"), ("DOWN", "error"), ("DRAIN", "warning")):
        if word in words or word + "ED" in words or word + "ING" in words:
            return f"node_state:{word.lower()}", severity
    return None


def node_events(text: str, url: str) -> FileResult:
    """``sacctmgr -P -n show event … format=NodeName,Start,End,State,Reason,User`` -> signals.

    One line per node state change; DOWN, FAIL and DRAIN become ``node_state:<state>``
    signals at the event's start on that node, other states are irrelevant, lines that do not
    read are quarantined.
    """
    zone = ZoneInfo("UTC")
    lines = text.splitlines()
    rows: list[dict[str, Any]] = []
    bad: list[tuple[str, int, str, str, str]] = []
    for n, line in enumerate(lines, 1):
        cells = line.split("|")
        if len(cells) != len(_EVENT_FIELDS):
            bad.append((url, n, "sacctmgr_events", f"expected {len(_EVENT_FIELDS)} '|'-separated fields,"
                        f" got {len(cells)}", line[:2000]))
            continue
        node, start, _end, state, reason, user = (c.strip() for c in cells)
        kind = _node_signal(state)
        if not node or kind is None:
            continue
        try:
            when = parse_slurm_time(start, zone)
        except ParseError as exc:
            bad.append((url, n, "sacctmgr_events", exc.message, line[:2000]))
            continue
        if when is None:
            bad.append((url, n, "sacctmgr_events", "event without a start time", line[:2000]))
            continue
        rows.append({"time": when, "host": node, "gpu": None, "job_id": None, "source": "sacctmgr_events",
                     "signal": kind[0], "severity": kind[1],
                     "message": f"node {state}: {reason or 'no reason'}" + (f" (by {user})" if user else ""),
                     "origin": f"{url}:{n}"})
    signals = schema.conform(pd.DataFrame(rows), "signals") if rows else schema.empty("signals")
    return FileResult(path=url, source="sacctmgr_events", lines=len(lines), parsed=len(rows),
                      irrelevant=len(lines) - len(rows) - len(bad), malformed=len(bad),
                      tables={"signals": signals}, quarantine=quarantine_frame(bad))


def _events(client: Client, a: pd.Timestamp, b: pd.Timestamp, url: str, cluster: str | None,
            env: dict[str, str], timeout_s: float, capture: Path, max_bytes: int) -> FileResult | None:
    """Node events of one chunk, or ``None`` when no ``sacctmgr`` sits beside ``sacct``."""
    program = client.command[-1]
    if not program.endswith("sacct"):
        return None
    cmd = [*client.command[:-1], program + "mgr"]
    args = argv(cmd, "--parsable2", "--noheader", "show", "event", f"Start={iso(a)}", f"End={iso(b)}",
                "Event=Node", f"Format={','.join(_EVENT_FIELDS)}", *([f"Clusters={cluster}"] if cluster else []))
    raw = run(args, url, "sacctmgr", env=env, timeout_s=timeout_s, max_bytes=max_bytes)
    path = capture / f"sacctmgr_events_{iso(a)}_{iso(b)}.txt".replace(":", "-")
    path.write_bytes(raw)
    return node_events(raw.decode("utf-8", "replace"), url + "#node-events")


def _drop_repeated_events(results: list[FileResult]) -> list[FileResult]:
    """A node event spanning chunks is listed by each: keep its first listing."""
    seen: set[tuple] = set()
    out = []
    for r in results:
        sig = r.tables["signals"]
        keys = list(zip(sig["host"].astype(str), sig["time"].astype(str), sig["signal"].astype(str), strict=True))
        repeat = np.array([k in seen for k in keys], dtype=bool)
        seen.update(keys)
        if repeat.any():
            n = int(repeat.sum())
            r = dataclasses.replace(r, parsed=r.parsed - n, irrelevant=r.irrelevant + n,
                                    tables={"signals": sig[~repeat].reset_index(drop=True)})
        out.append(r)
    return out


@register_source("slurm")
def read_slurm(
    location: str,
    *,
    start: Moment | None = None,
    end: Moment | None = None,
    partition: str | Sequence[str] | None = None,
    user: str | Sequence[str] | None = None,
    chunk: str | pd.Timedelta = "1D",
    duplicates: bool = True,
    steps: bool = True,
    events: bool = True,
    sacct_format: Literal["auto", "json", "parsable2"] = "auto",
    sacct_command: str | Sequence[str] = "sacct",
    slurm_conf: str | Path | None = None,
    raw_dir: str | Path | None = None,
    timeout_s: float = 600.0,
    max_bytes: int = MAX_BYTES,
    gpus_per_node: int | None = None,
    strict: bool = False,
) -> list[FileResult]:
    """Slurm accounting through ``sacct`` (``slurm://[cluster]``): jobs, end-state and node signals.

    Parameters
    ----------
    location : str
        ``slurm://`` (the cluster of the client's ``slurm.conf``) or ``slurm://<cluster>``;
        ``?start=…&end=…&partition=…&user=…`` may replace the arguments of those names.
    start, end : str or datetime
        The window (UTC when naive; ``end`` defaults to now).  sacct returns the jobs that
        were eligible or running in it.
    partition, user : str or list of str, optional
        Only these partitions / users (default: all users, ``--allusers``).
    chunk : str or Timedelta
        Length of one ``sacct`` call (default one day), which keeps each answer small and
        within slurmdbd's ``MaxQueryTimeRange``.
    duplicates : bool
        ``--duplicates``: every run of a requeued job is a record (default).
    steps : bool
        Also fetch job steps (they are counted, not tabled).
    events : bool
        Also read node state changes with ``sacctmgr show event``.
    sacct_format : {"auto", "json", "parsable2"}
        ``auto``: ``--json`` on Slurm >= 23.02, else ``--parsable2``.
    sacct_command : str or list of str
        How to run sacct, e.g. ``"ssh login1 sacct"`` (the arguments added are then quoted
        for the remote shell; cluster, partition and user names must be Slurm names).
    slurm_conf : path, optional
        ``SLURM_CONF`` for the client (another cluster's configuration).
    raw_dir : path, optional
        Keep every captured answer here (``sacct_<start>_<end>.txt`` …), written only when the
        whole read succeeded.
    timeout_s : float
        Longest wait for one client call (a total deadline: the client is killed past it).
    max_bytes : int
        Most output read from one client call (default 512 MiB); past it the client is
        killed and the read fails naming the limit.
    gpus_per_node : int, optional
        Passed to the sacct readers (GPUs when AllocTRES has no ``gres/gpu``).
    strict : bool
        Raise on the first malformed record instead of quarantining it.

    Returns
    -------
    list of FileResult
        One per sacct call (path ``slurm://…?start=…&end=…``) and one per node-event call.

    Raises
    ------
    SourceError
        sacct is missing or fails (no slurmdbd, permission…), or the window holds no job.
    ValueError
        A bad window, chunk or option.

    References
    ----------
    ``sacct(1)`` and ``sacctmgr(1)`` (SchedMD Slurm documentation): ``--starttime``,
    ``--endtime``, ``--duplicates``, ``--parsable2``, ``--json``, ``--helpformat``,
    ``SLURM_TIME_FORMAT``; ``show event``.
    """
    if sacct_format not in ("auto", "json", "parsable2"):
        raise ValueError(f"sacct_format={sacct_format!r}: use 'auto', 'json' or 'parsable2'")
    cluster, opts = _url_options(location, {"start": start, "end": end, "partition": partition, "user": user})
    a, b = window(opts["start"], opts["end"])
    parts = _joined(opts["partition"], "partition")
    users = _joined(opts["user"], "user")
    size = duration(chunk, "chunk")
    env = {**_ENV, **({"SLURM_CONF": str(slurm_conf)} if slurm_conf is not None else {})}
    client = probe(command_of(sacct_command, "sacct_command"), location, env, timeout_s, max_bytes)
    fmt = ("json" if client.full_json else "parsable2") if sacct_format == "auto" else sacct_format
    capture = Path(tempfile.mkdtemp(prefix="reliab-sacct-"))
    try:
        jobs, node = [], []
        for lo, hi in chunks(a, b, size):
            url = chunk_url(cluster, lo, hi, parts, users)
            raw = run(_sacct_args(client, lo, hi, fmt, cluster=cluster, partition=parts, user=users,
                                  duplicates=duplicates, steps=steps), url, "sacct", env=env, timeout_s=timeout_s,
                      max_bytes=max_bytes)
            path = capture / f"sacct_{iso(lo)}_{iso(hi)}.{'json' if fmt == 'json' else 'txt'}".replace(":", "-")
            path.write_bytes(raw)
            read = (read_sacct_json(str(path), gpus_per_node=gpus_per_node, strict=strict) if fmt == "json"
                    else read_sacct(str(path), tz="UTC", gpus_per_node=gpus_per_node, strict=strict))
            jobs.append(relabel(read, url))
            if events:
                got = _events(client, lo, hi, url, cluster, env, timeout_s, capture, max_bytes)
                node += [got] if got is not None else []
        jobs = drop_repeats(jobs)
        if not sum(len(r.tables["jobs"]) for r in jobs):
            scope = "".join(f", {k}={v}" for k, v in (("partition", parts), ("user", users)) if v)
            raise SourceError(f"{location}: sacct found no jobs between {iso(a)} and {iso(b)} UTC{scope}")
        if raw_dir is not None:
            keep = Path(raw_dir)
            keep.mkdir(parents=True, exist_ok=True)
            for f in sorted(capture.iterdir()):
                shutil.copyfile(f, keep / f.name)
    finally:
        shutil.rmtree(capture, ignore_errors=True)
    return jobs + _drop_repeated_events(node)
