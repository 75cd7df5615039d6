"""The pipeline, not the sinks' sessions, finishes every run (sort, validate, attribute, cost).

A two-file folder (a kernel log with one Xid 79, a ``sacct`` export with one NODE_FAIL job
ending 52 s after it, on the same node) is read in memory, with ``output=`` and with
``store=``; in each mode :func:`reliab.io._driver.finish` is called once, on the tables
the session hands back, and the job's end is attributed to the Xid.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reliab.io import _driver, ingest
from reliab.io._plan import Merged

XID = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
KERNEL = (f"2024-06-03T14:02:08.000000+00:00 node0421 kernel: {XID}\n"
          "2024-06-03T14:02:09.000000+00:00 node0421 kernel: usb 1-1: new high-speed USB device\n")
SACCT = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|Restarts"
         "|AllocTRES\n"
         "1001|1001|pretrain|alice|gpu|NODE_FAIL|0:0|2024-06-03T10:00:00|2024-06-03T10:05:00|2024-06-03T14:03:00"
         "|03:58:00|1|node0421|0|billing=8,cpu=32,gres/gpu=8,node=1\n")


@pytest.mark.parametrize("mode", ["memory", "output", "store"])
def test_the_pipeline_finishes_every_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kern.log").write_text(KERNEL, encoding="utf-8")
    (logs / "sacct.txt").write_text(SACCT, encoding="utf-8")
    calls: list[Merged] = []
    real = _driver.finish

    def spy(merged: Merged, *args: object, **kwargs: object) -> object:
        calls.append(merged)
        return real(merged, *args, **kwargs)

    monkeypatch.setattr(_driver, "finish", spy)  # (no such name before: the sessions finished)
    where = {"memory": {}, "output": {"output": tmp_path / "out"}, "store": {"store": tmp_path / "store"}}[mode]
    res = ingest(logs, **where)
    assert len(calls) == 1
    assert sorted(calls[0].accounting["path"].map(lambda p: Path(p).name)) == ["kern.log", "sacct.txt"]
    assert list(calls[0].tables["jobs"]["job_id"].astype(str)) == ["1001"]
    assert list(res.interruptions["job_id"].astype(str)) == ["1001"]
    assert res.signals["signal"].astype(str).str.startswith("xid:79").sum() == 1
