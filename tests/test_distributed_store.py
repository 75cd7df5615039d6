"""``store=`` with ``engine="dask"``: the daily cron of a fleet is one call, and equals the local store.

Two stores are fed the same folder run after run, one by the local engine and one by the
Dask engine: new files, lines appended, a log rotated (``messages`` -> ``messages.1``, a
new ``messages``), one compressed, a copy of a file whose family member was read in the
same run.  After every run both give the same tables, accounting and statuses, and the
ledgers agree.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from reliab.io import IngestResult, ingest
from reliab.io import distributed as dist

pytest.importorskip("dask.distributed")
SAMPLE = Path(__file__).parents[1] / "data" / "llama3-54d"
TABLES = ("signals", "jobs", "telemetry", "quarantine", "interruptions", "accounting")


def _lines(pattern: str, n: int) -> list[str]:
    out: list[str] = []
    for path in sorted(SAMPLE.glob(pattern)):
        out += path.read_text(encoding="utf-8").splitlines(keepends=True)
    return out[:n]


def _same(got: IngestResult, want: IngestResult) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name), obj=name)


def _ledger(store: Path) -> pd.DataFrame:
    cols = ["path", "source", "bytes", "lines", "parsed", "irrelevant", "malformed", "held"]
    return pd.read_parquet(store / "ledger.parquet")[cols].sort_values("path", ignore_index=True)


def test_store_runs_equal_local(dask_client: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dist, "RANGE_BYTES", 16 << 10)  # the growing syslog is read as ranges too
    logs = tmp_path / "logs"
    (logs / "central").mkdir(parents=True)
    shutil.copytree(SAMPLE / "dmesg", logs / "dmesg")
    messages = logs / "central" / "messages"
    sacct = logs / "sacct.txt"
    syslog = _lines("syslog/messages-*.log", 3000)
    sacct_lines = _lines("slurm/sacct.txt", 300)
    local, remote = tmp_path / "store-local", tmp_path / "store-dask"

    def run(expected: dict[str, str]) -> None:
        want = ingest(logs, store=local)
        got = ingest(logs, store=remote, engine="dask", client=dask_client)
        _same(got, want)
        statuses = dict(zip(got.accounting["path"].map(lambda p: Path(p).name), got.accounting["status"],
                            strict=True))
        assert {k: statuses[k] for k in expected} == expected
        pd.testing.assert_frame_equal(_ledger(remote).drop(columns="path"), _ledger(local).drop(columns="path"))

    messages.write_text("".join(syslog[:1000]))
    sacct.write_text("".join(sacct_lines[:150]))
    run({"messages": "new", "sacct.txt": "new"})
    with open(messages, "a") as fh:  # the day goes on
        fh.write("".join(syslog[1000:2000]))
    with open(sacct, "a") as fh:
        fh.write("".join(sacct_lines[150:]))
    run({"messages": "appended", "sacct.txt": "appended", "node0003.log": "unchanged"})
    os.replace(messages, logs / "central" / "messages.1")  # logrotate
    messages.write_text("".join(syslog[2000:2500]))
    with open(logs / "central" / "messages.1", "a") as fh:  # written just before the rotation
        fh.write("".join(syslog[2500:2600]))
    run({"messages.1": "rotated", "messages": "new"})
    with open(logs / "central" / "messages.1", "rb") as src, gzip.open(
            logs / "central" / "messages.2.gz", "wb") as dst:  # compressed by the next rotation
        shutil.copyfileobj(src, dst)
    (logs / "central" / "messages.1").unlink()
    with open(messages, "a") as fh:
        fh.write("".join(syslog[2600:]))
    run({"messages.2.gz": "rotated", "messages": "appended"})
