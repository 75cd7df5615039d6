"""Raw-file writers: one function per format of ``docs/raw-formats.md``.

Formats follow real captures (primary sources in ``docs/raw-formats.md``): rsyslog RFC 3339
lines, ``dmesg -T`` / ``dmesg --time-format iso`` / ``journalctl -k -o short-iso``,
PyTorch glog lines, ``sacct --parsable2``, ``ipmitool sel list`` and a tickets CSV.  All
times are UTC.  Output is deterministic: records are sorted by time with a stable sort and
every random choice comes from the caller's generator.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SACCT_HEADER = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|"
                "Elapsed|NNodes|NodeList|Restarts|AllocTRES")


def iso_us(t_us: Iterable[int]) -> list[str]:
    """``YYYY-MM-DDTHH:MM:SS.ffffff`` (UTC) for each microsecond timestamp, vectorized."""
    arr = np.asarray(list(t_us) if not isinstance(t_us, np.ndarray) else t_us, dtype=np.int64)
    return list(np.datetime_as_string(arr.astype("datetime64[us]"), unit="us"))


def _write_lines(path: Path, lines: Iterable[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(f"{line}\n" for line in lines))
    return path


def write_syslog(directory: Path, records: list[tuple]) -> dict[str, Path]:
    """Central rsyslog files, one per UTC day: ``<RFC 3339> <host> <program>: <message>``."""
    records = sorted(records, key=lambda r: r[0])
    stamps = iso_us([r[0] for r in records])
    by_day: dict[str, list[str]] = defaultdict(list)
    for (_, host, prog, msg), ts in zip(records, stamps, strict=True):
        by_day[ts[:10].replace("-", "")].append(f"{ts}+00:00 {host} {prog}: {msg}")
    return {f"syslog/messages-{day}.log": _write_lines(directory / "syslog" /
                                                       f"messages-{day}.log", lines)
            for day, lines in sorted(by_day.items())}


def _dmesg_stamp(ts: str, style: int, host: str) -> str:
    if style == 0:  # dmesg -T
        y, mo, d = int(ts[:4]), int(ts[5:7]), int(ts[8:10])
        wd = _DAYS[int(np.datetime64(ts[:10], "D").astype(np.int64) + 3) % 7]
        return f"[{wd} {_MONTHS[mo - 1]} {d:2d} {ts[11:19]} {y}] "
    if style == 1:  # dmesg --time-format iso
        return f"{ts[:19]},{ts[20:26]}+00:00 "
    return f"{ts[:19]}+0000 {host} kernel: "  # journalctl -k -o short-iso


def _per_key(records: list[tuple]) -> Iterator[tuple[str, list[tuple], list[str]]]:
    """Records grouped by their key (field 1), sorted keys, each group in time order with stamps."""
    groups: dict[str, list[tuple]] = defaultdict(list)
    for rec in records:
        groups[rec[1]].append(rec)
    for key in sorted(groups):
        recs = sorted(groups[key], key=lambda r: r[0])
        yield key, recs, iso_us([r[0] for r in recs])


def write_dmesg(directory: Path, records: list[tuple], styles: dict[str, int]) -> dict[str, Path]:
    """Per-host kernel captures in one of three timestamp styles (host from the file name)."""
    out = {}
    for host, recs, stamps in _per_key(records):
        lines = [_dmesg_stamp(ts, styles[host], host) + r[3]
                 for r, ts in zip(recs, stamps, strict=True)]
        out[f"dmesg/{host}.log"] = _write_lines(directory / "dmesg" / f"{host}.log", lines)
    return out


def train_line(ts: str, style: str, text: str, unpadded: bool = False) -> str:
    """Format one training-log record: ISO logging line, glog line or raw text.

    ``unpadded`` prints the glog month without its leading zero (``E626``), as PyTorch's
    own C++ logger does since 2.4 (``c10/util/Logging.cpp``).
    """
    if style == "raw":
        return text
    if style.startswith("iso:"):
        return f"{ts[:10]} {ts[11:19]},{ts[20:23]} {style[4:]} {text}"
    _, level, rank, where = style.split(":", 3)
    ns = f"{ts[20:26]}{int(ts[24:26]) * 7 % 1000:03d}"
    month = str(int(ts[5:7])) if unpadded else ts[5:7]
    return f"[rank{rank}]:[{level}{month}{ts[8:10]} {ts[11:19]}.{ns} {where}] {text}"


def write_train(directory: Path, records: list[tuple],
                unpadded: frozenset[str] = frozenset()) -> dict[str, Path]:
    """Training stdout/stderr per job: ``train/slurm-<jobid>.out`` (glog months unpadded for
    the jobs in ``unpadded``)."""
    out = {}
    for job, recs, stamps in _per_key(records):
        lines = [train_line(ts, r[2], r[3], job in unpadded) for r, ts in zip(recs, stamps, strict=True)]
        out[f"train/slurm-{job}.out"] = _write_lines(directory / "train" / f"slurm-{job}.out",
                                                     lines)
    return out


def write_sel(directory: Path, records: list[tuple], empty: Sequence[str] = ()) -> dict[str, Path]:
    """``ipmitool sel list`` per host: ``  1a | 06/03/2024 | 14:01:55 | sensor | event | Asserted``;
    the hosts in ``empty`` get what ipmitool prints for an empty SEL."""
    out = {f"ipmi/{host}.sel": _write_lines(directory / "ipmi" / f"{host}.sel", ["SEL has no entries"])
           for host in empty}
    for host, recs, stamps in _per_key(records):
        lines = [f"{k + 1:4x} | {ts[5:7]}/{ts[8:10]}/{ts[:4]} | {ts[11:19]} | {r[2]} | {r[3]} | "
                 f"{'Asserted' if r[4] else 'Deasserted'}"
                 for k, (r, ts) in enumerate(zip(recs, stamps, strict=True))]
        out[f"ipmi/{host}.sel"] = _write_lines(directory / "ipmi" / f"{host}.sel", lines)
    return out


def write_tickets(directory: Path, records: list[tuple]) -> dict[str, Path]:
    """Incident tickets CSV (columns of docs/raw-formats.md), sorted by opening time."""
    recs = sorted(records, key=lambda r: (r[0], r[3]))
    opened = iso_us([r[0] for r in recs])
    incident = iso_us([r[3] for r in recs])
    path = directory / "tickets" / "incidents.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["ticket_id", "opened_at", "host", "job_id", "incident_time", "type",
                    "title", "root_cause", "resolution"])
        for k, (r, o, i) in enumerate(zip(recs, opened, incident, strict=True)):
            prefix = "MNT" if r[4] == "maintenance" else "INC"
            w.writerow([f"{prefix}-{k + 1:06d}", o[:19] + "Z", r[1], r[2], i[:19] + "Z", r[4],
                        r[5], r[6], r[7]])
    return {"tickets/incidents.csv": path}


def _elapsed(seconds: int) -> str:
    d, rest = divmod(int(seconds), 86_400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}" if d else f"{h:02d}:{m:02d}:{s:02d}"


def _step_state(state_raw: str, exit_code: str) -> tuple[str, str]:
    if state_raw == "NODE_FAIL":
        return "CANCELLED", "0:9"
    if state_raw.startswith("CANCELLED"):
        return "CANCELLED", "0:15"
    return state_raw, exit_code


def sacct_rows(jobs: list[tuple], gpus_per_node: int, now_us: int) -> list[str]:
    """``sacct --parsable2`` rows: allocation, ``.batch``, ``.extern`` and ``.0`` per job.

    ``jobs`` rows are (job_id, submit_us, start_us, end_us or -1, state_raw, exit_code,
    nodelist, nnodes, first_host).
    """
    rows = [SACCT_HEADER]
    for job, sub, start, end, state, code, nodelist, nnodes, first in jobs:
        t_sub, t_start, t_step = (s[:19] for s in iso_us([sub, start, start + 60_000_000]))
        running = end < 0
        t_end = "Unknown" if running else iso_us([end])[0][:19]
        el = _elapsed(((now_us if running else end) - start) // 1_000_000)
        el0 = _elapsed(((now_us if running else end) - start - 60_000_000) // 1_000_000)
        tres = (f"billing={nnodes * 224},cpu={nnodes * 224},gres/gpu={nnodes * gpus_per_node},"
                f"mem={nnodes * 2000}G,node={nnodes}")
        st, sc = ("RUNNING", "0:0") if running else _step_state(state, code)
        ext = "RUNNING" if running else "COMPLETED"
        rows += [
            f"{job}|{job}|llama3-405b-pretrain|svc-llama|train|{state}|{code}|{t_sub}|{t_start}|"
            f"{t_end}|{el}|{nnodes}|{nodelist}|0|{tres}",
            f"{job}.batch|{job}.batch|batch|||{st}|{sc}|{t_start}|{t_start}|{t_end}|{el}|1|"
            f"{first}||cpu=224,gres/gpu={gpus_per_node},mem=2000G,node=1",
            f"{job}.extern|{job}.extern|extern|||{ext}|0:0|{t_start}|{t_start}|{t_end}|{el}|"
            f"{nnodes}|{nodelist}||{tres}",
            f"{job}.0|{job}.0|torchrun|||{st}|{sc}|{t_step}|{t_step}|{t_end}|{el0}|{nnodes}|"
            f"{nodelist}||{tres}",
        ]
    return rows


def write_text(directory: Path, files: dict[str, list[str]]) -> dict[str, Path]:
    """Plain text files, name (relative to ``directory``) -> lines."""
    return {name: _write_lines(directory / name, lines) for name, lines in files.items()}


_OTHER_STEP = {"COMPLETED": ("COMPLETED", "0:0"), "FAILED": ("FAILED", "1:0"),
               "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "0:125")}


def other_sacct_rows(jobs: pd.DataFrame, nodelists: list[str], gpus_per_node: int) -> list[str]:
    """``sacct --parsable2`` rows of other users' jobs (``reliab.datasets._other_jobs``).

    A job cancelled while pending has Start ``None``, Elapsed ``00:00:00``, NodeList ``None
    assigned``, an empty AllocTRES and no steps (sacct(1): AllocTRES is blank for pending
    jobs); the others have an allocation row, ``.batch`` and ``.extern``.
    """
    rows = []
    for job, nodelist in zip(jobs.itertuples(index=False), nodelists, strict=True):
        t_sub, t_end = (s[:19] for s in iso_us([job.submit_us, job.end_us]))
        width = max(len(job.nodes), 1)
        head = f"{job.job_id}|{job.job_id}|{job.name}|{job.user}|dev|{job.state_raw}|{job.exit_code}|{t_sub}"
        if job.start_us < 0:
            rows.append(f"{head}|None|{t_end}|00:00:00|{width}|None assigned|0|")
            continue
        t_start = iso_us([job.start_us])[0][:19]
        el = _elapsed((job.end_us - job.start_us) // 1_000_000)
        tres = (f"billing={width * 224},cpu={width * 224},gres/gpu={width * gpus_per_node},"
                f"mem={width * 2000}G,node={width}")
        st, sc = _OTHER_STEP.get(job.state, ("CANCELLED", "0:15"))
        first = nodelist.replace("node[", "node").split("-")[0].split(",")[0]
        rows += [
            f"{head}|{t_start}|{t_end}|{el}|{width}|{nodelist}|0|{tres}",
            f"{job.job_id}.batch|{job.job_id}.batch|batch|||{st}|{sc}|{t_start}|{t_start}|{t_end}|"
            f"{el}|1|{first}||cpu=224,gres/gpu={gpus_per_node},mem=2000G,node=1",
            f"{job.job_id}.extern|{job.job_id}.extern|extern|||COMPLETED|0:0|{t_start}|{t_start}|"
            f"{t_end}|{el}|{width}|{nodelist}||{tres}",
        ]
    return rows


def merge_by_job_id(rows: list[str], extra: list[str]) -> list[str]:
    """Header plus both row lists in job-id order (steps stay after their allocation)."""
    body = rows[1:] + extra
    return rows[:1] + sorted(body, key=lambda r: int(r.split("|", 1)[0].split(".")[0]))


def write_sacct(directory: Path, rows: list[str]) -> dict[str, Path]:
    """``slurm/sacct.txt``."""
    return {"slurm/sacct.txt": _write_lines(directory / "slurm" / "sacct.txt", rows)}


def write_csv(directory: Path, name: str, frame: pd.DataFrame, *,
              date_format: str = "%Y-%m-%dT%H:%M:%SZ") -> dict[str, Path]:
    """A table as CSV with ISO-8601 UTC times (``…Z``) and no index."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, date_format=date_format, lineterminator="\n")
    return {name: path}
