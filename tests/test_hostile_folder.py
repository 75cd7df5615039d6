"""One folder holding one file per hostile case (line level) beside valid files.

``reliab ingest`` on it exits 0 within a minute, prints no traceback, gives every file an
accounting row, and finds every valid event of every file.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
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

import reliab

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
    "slurm/sacct_nnodes.txt": ((SACCT_HEAD + JOB + JOB.replace("|2048|", "|" + "9" * 5000 + "|")
                                + JOB.replace("|2048|", "|99999999999999999999999|")
                                + JOB.replace("gres/gpu=16384", "gres/gpu=99999999999999999999999")
                                + JOB.replace("|2048|", "|2048\u00b2|")).encode(), 1, 1, 0),
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
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for name, (content, *_) in CASES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    _parquet(root / "telemetry" / "nodes.parquet")
    (root / "syslog" / "messages.gz").write_bytes(gzip.compress(SYSLOG.encode() * 5))
    return root


def test_every_file_accounted_and_every_valid_event_found(folder: Path) -> None:
    res = reliab.ingest(folder)
    acc = res.accounting.set_index("path")
    assert len(acc) == len(CASES) + 2
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    for name, (_, signals, jobs, telemetry) in CASES.items():
        path = str(folder / name)
        got = (int((res.signals["origin"].str.rsplit(":", n=1).str[0] == path).sum()),
               int((res.jobs["origin"].str.rsplit(":", n=1).str[0] == path).sum()),
               int((res.telemetry["origin"].str.rsplit(":", n=1).str[0] == path).sum())
               if "origin" in res.telemetry and not name.endswith(".csv") else telemetry)
        assert got == (signals, jobs, telemetry), (name, res.quarantine[res.quarantine["path"] == path])
        assert acc.loc[path, "malformed"] >= (name != "dmesg/cr_only.log"), name
    assert len(res.telemetry) == 3  # dcgm, gpus.csv and the Parquet file: one good row each
    assert res.telemetry["time"].dt.year.eq(2024).all()


def test_cli_run_exits_0_without_traceback(folder: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "reliab", "ingest", str(folder), "-q"], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - started < 60
    assert "Traceback" not in out.stdout + out.stderr
    assert "signals" in out.stdout
