"""One folder holding one file per hostile case beside valid files.

Line cases (out-of-range years, huge and superscript integers, infinities, CR endings, an
unclosed quote, an overflowing rtc epoch, hosts the pattern cannot read, DST edges),
hostile flight-recorder values, small decompression and sparse bombs, names that used to
be skipped silently (``license-server.log``, ``truth/``), a hidden file, a FIFO, a file
name that is not UTF-8 and a folder that cannot be listed.  ``reliab ingest`` on it exits
0 within a minute, prints no traceback, gives every file an accounting row, and finds
every valid event of every file.  (The multi-GB bombs are in ``test_hostile_bombs.py``,
the store cases in ``test_store_integrity.py``.)
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from test_hostile_flight_recorder import _deep, _dump, _entry, _entry_with, _exponential, _ops
from test_hostile_lines import (
    CTIME,
    JOB,
    PLAIN_TICKET,
    PROM,
    SACCT_HEAD,
    SEL,
    SYSLOG,
    TICKET_HEAD,
    XID,
)
from test_ingest_folder import _unprivileged

import reliab
from reliab import schema

JOB2 = JOB.replace("4312001", "4312002")
LANL_HEAD = ("System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,"
             "fru type,mem,cputype,memtype,num intercon,purpose,Prob Started,Prob Fixed,Down Time,Facilities,"
             "Hardware,Human Error,Network,Undetermined,Software,Same Event\n")
LANL = ("2,cluster,49,6152,80,0,0,5-Apr,5-Jun,current,part,80,1,1,0,graphics.fe,6/21/2005 10:54,6/21/2005 11:00,"
        "6,,Graphics Accel Hdwr,,,,,No\n")


def _fr(entries: list) -> bytes:
    return pickle.dumps({"version": "2.4", "entries": entries}, protocol=4)


def _fr_entry(**changes: object) -> dict:
    entry = {"record_id": 1, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1,
             "p2p_seq_id": 0, "profiling_name": "nccl:all_reduce", "time_created_ns": 1_717_400_000_000_000_000,
             "state": "started", "is_p2p": False}
    return {**entry, **changes}


def _cyclic() -> list:
    out: list = []
    out.append(out)
    return out


#: a dump whose values unpickle cleanly but are hostile: one valid entry among them
FR_VALUES = _dump([_ops(_entry()), _entry_with("record_id", _deep(1_000_000)), _ops(_exponential(60)),
                   _ops(_cyclic()), _ops(_entry(duration_ms=float("inf")))])
RTC_OVERFLOW = ("[    1.000000] rtc_cmos 00:02: setting system clock to 2024-06-01T00:00:00 UTC (" + "9" * 40 + ")\n"
                + "".join(f"[{k}.5] noise {k}\n" for k in range(99)) + f"[200.0] {XID}\n")
#: America/New_York repeats 01:00-02:00 on 2024-11-03 and skips 02:00-03:00 on 2024-03-10
DST = f"[Sun Nov  3 01:30:00 2024] {XID}\n[Sun Mar 10 02:30:00 2024] {XID}\n"
MANIFEST = '[[files]]\nglob = "dst/*"\ntz = "America/New_York"\n'
#: a non-UTF-8 file name (Latin-1 "é"), kept as surrogateescape text
ODD_NAME = "misc/" + os.fsdecode(b"n\xe9ud-0421.log")
#: files set aside, with the accounting source they must get
SET_ASIDE = {"misc/.hidden.log": "skipped", "misc/README.md": "skipped", "misc/pipe.log": "special",
             "reliab.toml": "manifest"}


def _parquet(path: Path) -> None:
    table = pa.table({"time": pa.array([datetime(2024, 6, 1), datetime(9999, 1, 1)], pa.timestamp("us")),
                      "host": ["node0001", "node0002"], "temp_c": [40.0, 41.0]})
    pq.write_table(table, path)


#: file name -> (content, valid signals, valid jobs, valid telemetry rows)
CASES: dict[str, tuple[bytes, int, int, int]] = {
    "syslog/y9999.log": ((SYSLOG + SYSLOG.replace("2024", "9999")).encode(), 1, 0, 0),
    "syslog/y1600.log": ((SYSLOG + SYSLOG.replace("2024", "1600")).encode(), 1, 0, 0),
    "syslog/y0001.log": ((SYSLOG + SYSLOG.replace("2024", "0001")).encode(), 1, 0, 0),
    "dmesg/ctime9999.log": ((CTIME + CTIME.replace("2024", "9999")).encode(), 1, 0, 0),
    "dmesg/xidcode.log": ((SYSLOG + SYSLOG.replace(": 79,", ": " + "7" * 5000 + ",")).encode(), 1, 0, 0),
    "dmesg/superscript.log": ((SYSLOG + SYSLOG.replace(": 79,", ": 7\u00b2,")).encode(), 1, 0, 0),
    "dmesg/printk.log": (("[    1.000000] rtc_cmos 00:02: setting system clock to 2024-06-01T00:00:00 UTC (1717200000)\n"
                          f"[99999999999999.0] {XID}\n[  100.000000] {XID}\n").encode(), 1, 0, 0),
    "dmesg/cr_only.log": ("".join(SYSLOG.replace("node1807", f"node{i:04d}").replace("\n", "\r")
                                  for i in range(53)).encode(), 53, 0, 0),
    "dmesg/node0007.log.zst": (zstandard.ZstdCompressor().compress((SYSLOG * 3).encode() + b"\0" * (64 << 20)),
                               3, 0, 0),
    "slurm/sacct_y9999.txt": ((SACCT_HEAD + JOB + JOB.replace("2024", "9999")).encode(), 1, 1, 0),
    # another job than sacct_y9999.txt's: a record two exports repeat is kept once (in the later file)
    "slurm/sacct_nnodes.txt": ((SACCT_HEAD + JOB2 + JOB2.replace("|2048|", "|" + "9" * 5000 + "|")
                                + JOB2.replace("|2048|", "|99999999999999999999999|")
                                + JOB2.replace("gres/gpu=16384", "gres/gpu=99999999999999999999999")
                                + JOB2.replace("|2048|", "|2048\u00b2|")).encode(), 1, 1, 0),
    "slurm/sacct.json": (json.dumps({"meta": {"plugin": {"name": "slurm"}}, "jobs": [
        {"job_id": 1, "state": {"current": ["NODE_FAIL"]}, "time": {"start": 1717200000, "end": 1717203600}},
        {"job_id": 2, "state": {"current": ["FAILED"]}, "time": {"start": 1717200000, "end": "INF"}},
        {"job_id": 3, "state": {"current": ["FAILED"]}, "allocation_nodes": "HUGE"}]}, indent=1)
        .replace('"INF"', "Infinity").replace('"HUGE"', "9" * 5000).encode(), 1, 1, 0),
    "ipmi/node0001.sel": ((SEL + SEL.replace("2024", "0001")).encode(), 1, 0, 0),
    "tickets/incidents.csv": ((TICKET_HEAD + PLAIN_TICKET.replace(",GPU5", ',"GPU5')
                               + "".join(PLAIN_TICKET.replace("INC-000001", f"INC-{i:06d}") for i in range(100))
                               + PLAIN_TICKET.replace("2024", "1600")).encode(), 100, 0, 0),
    "telemetry/dcgm.prom": ((PROM + PROM.replace("1717200000000", "10000000000000000")
                             + PROM.replace("1717200000000", "9" * 5000)).encode(), 0, 0, 1),
    "telemetry/gpus.csv": (b"t_unix,host,temp_c\n1717200000,node0001,30\n99999999999,node0001,30\n"
                           b"1717200060,node0001,Infinity\n", 0, 0, 1),
    "lanl/LA-UR-05-7318.csv": ((LANL_HEAD + "\n" * 1000 + LANL + LANL.replace("2005", "9999")).encode(), 1, 0, 0),
    "train/nccl_trace_rank_0": (_fr([_fr_entry(), _fr_entry(record_id="abc"), _fr_entry(time_created_ns=2**80),
                                     _fr_entry(time_created_ns=10**5000)]), 1, 0, 0),
    "train/nccl_trace_rank_1": (_fr([None] * 1_000_001), 0, 0, 0),
    "train/nccl_trace_rank_2": (FR_VALUES, 1, 0, 0),
    "dmesg/rtc_overflow.log": (RTC_OVERFLOW.encode(), 0, 0, 0),
    "syslog/hosts.log": ((SYSLOG.replace("node1807", "2001:db8::7") + SYSLOG.replace("node1807", "[2001:db8::8]"))
                         .encode(), 2, 0, 0),
    "dst/node0005.log": (DST.encode(), 1, 0, 0),
    # names that are logs, whatever they start with, and a folder named truth/
    "misc/license-server.log": (SYSLOG.encode(), 1, 0, 0),
    "misc/notice.log": (SYSLOG.encode(), 1, 0, 0),
    "misc/copying-job.log": (SYSLOG.encode(), 1, 0, 0),
    "misc/readme-node7.log": (SYSLOG.encode(), 1, 0, 0),
    "truth/node0001.log": (SYSLOG.encode(), 1, 0, 0),
    ODD_NAME: (SYSLOG.encode(), 1, 0, 0),
}
#: files read (every one has lines) that hold no malformed line
CLEAN = {"dmesg/cr_only.log", "syslog/hosts.log", "misc/license-server.log", "misc/notice.log", "misc/copying-job.log",
         "misc/readme-node7.log", "truth/node0001.log", ODD_NAME}


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    # a world-traversable folder, so that the unreadable folder is unreadable to the user nobody
    root = Path(tempfile.mkdtemp(prefix="reliab-hostile-", dir="/tmp"))
    root.chmod(0o755)
    for name, (content, *_) in CASES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    _parquet(root / "telemetry" / "nodes.parquet")
    (root / "syslog" / "messages.gz").write_bytes(gzip.compress(SYSLOG.encode() * 5))
    with open(root / "dmesg" / "sparse.log", "wb") as fh:  # a valid line, a 16 MiB hole, a valid line
        fh.write(SYSLOG.encode())
        fh.seek(16 << 20)
        fh.write(b"\n" + SYSLOG.encode())
    (root / "misc" / ".hidden.log").write_text(SYSLOG)
    (root / "misc" / "README.md").write_text("# notes on this hand-over\n")
    os.mkfifo(root / "misc" / "pipe.log")
    (root / "reliab.toml").write_text(MANIFEST)
    (root / "closed").mkdir()
    (root / "closed" / "node0009.log").write_text(SYSLOG)
    (root / "closed").chmod(0)
    yield root
    (root / "closed").chmod(0o755)
    subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.fixture(scope="module")
def as_root(folder: Path) -> reliab.IngestResult:
    """The folder read by the test process's own user (root in CI: the closed folder is read)."""
    return reliab.ingest(folder)


def _from(frame: pd.DataFrame, path: str) -> int:
    if "origin" not in frame:
        return 0
    return int((frame["origin"].str.rsplit(":", n=1).str[0] == path).sum())


def test_every_file_accounted_and_every_valid_event_found(folder: Path, as_root: reliab.IngestResult) -> None:
    # (as_root has imported every reader while privileged)
    with _unprivileged():
        res = reliab.ingest(folder)
    acc = res.accounting.set_index("path")
    assert acc.index.is_unique
    on_disk = {os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
               if not d.startswith(str(folder / "closed"))}
    assert on_disk <= set(acc.index), on_disk - set(acc.index)
    assert len(acc) == len(on_disk) + 1  # + the closed folder's row (as nobody) or its file (as a user)
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    for name, (_, signals, jobs, telemetry) in CASES.items():
        path = str(folder / name)
        got = (_from(res.signals, path), _from(res.jobs, path),
               _from(res.telemetry, path) if not name.endswith(".csv") else telemetry)
        assert got == (signals, jobs, telemetry), (name, res.quarantine[res.quarantine["path"] == path])
        assert acc.loc[path, "lines"] >= 1 and acc.loc[path, "malformed"] >= (name not in CLEAN), name
    for name, source in SET_ASIDE.items():
        assert acc.loc[str(folder / name), "source"] == source, name
    closed = acc.loc[str(folder / "closed")]  # mode 000 (root runs this as nobody)
    assert closed["source"] == "unreadable" and "cannot be listed" in closed["reason"]
    # line accounting of the odd cases: the whole rtc file, the sparse file in bounded lines
    assert acc.loc[str(folder / "dmesg/rtc_overflow.log"), "lines"] == 101
    assert _from(res.signals, str(folder / "dmesg/sparse.log")) == 2
    assert "exceeds" in res.quarantine.loc[res.quarantine["path"] == str(folder / "dmesg/sparse.log"), "reason"].iloc[0]
    # one DST rule: the repeated hour is the earlier instant, the skipped one is quarantined
    dst = res.signals.loc[res.signals["origin"] == f"{folder / 'dst/node0005.log'}:1", "time"]
    assert dst.tolist() == [pd.Timestamp("2024-11-03T05:30:00Z")]
    # the unreadable host is said, not silent
    assert "cannot read (first: '[2001:db8::8]'" in res.sources[str(folder / "syslog/hosts.log")].reason
    assert len(res.telemetry) == 3  # dcgm, gpus.csv and the Parquet file: one good row each
    assert res.telemetry["time"].dt.year.eq(2024).all()


def test_cli_run_exits_0_without_traceback(folder: Path, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "reliab", "ingest", str(folder), "-q", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - started < 60
    assert "Traceback" not in out.stdout + out.stderr
    assert "signals" in out.stdout and "1 not read: misc/pipe.log (special)" in out.stdout
    assert "3 skipped by name (--files lists them)" in out.stdout  # hidden file, README, manifest
    # the tables written: a row for every file, every valid event
    acc = schema.read_parquet(str(tmp_path / "accounting.parquet"), "accounting").set_index("path")
    on_disk = {os.path.join(d, f) for d, _, files in os.walk(folder) for f in files}
    assert on_disk <= set(acc.index), on_disk - set(acc.index)
    signals = schema.read_parquet(str(tmp_path / "signals.parquet"), "signals")
    for name, (_, want, *_) in CASES.items():
        assert _from(signals, str(folder / name)) == want, name


@pytest.mark.slow
def test_report_on_the_folder(folder: Path, tmp_path: Path) -> None:
    """Regression: ``reliab report`` on this folder died of the non-UTF-8 name (UnicodeEncodeError
    writing report.html and inputs.sha256).  The page shows the name's bytes as ``\\xNN``
    (as the CLI does); inputs.sha256 keeps the bytes, as ``sha256sum`` writes them."""
    run = reliab.run_report(folder, out=tmp_path, pdf=False)
    page = run.files["report.html"].read_text(encoding="utf-8")
    assert "misc/n\\xe9ud-0421.log" in page
    digests = (tmp_path / "inputs.sha256").read_bytes()
    assert b"  misc/n\xe9ud-0421.log\n" in digests
    json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_dask_engine_gives_the_same_tables(folder: Path, as_root: reliab.IngestResult, dask_client: object,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder on the Dask engine, the sparse kernel log cut into 1 MiB byte ranges: every table
    and the accounting equal the local run's."""
    from reliab.io import distributed as dist

    monkeypatch.setattr(dist, "RANGE_BYTES", 1 << 20)
    want, got = as_root, reliab.ingest(folder, engine="dask", client=dask_client)
    for name in ("accounting", "signals", "jobs", "telemetry", "quarantine", "interruptions"):
        a, b = getattr(got, name), getattr(want, name)
        keys = list(b.columns[:3])
        pd.testing.assert_frame_equal(a.sort_values(keys, kind="stable").reset_index(drop=True),
                                      b.sort_values(keys, kind="stable").reset_index(drop=True), obj=name)
