"""Job records repeated by overlapping scheduler exports are counted once.

Daily ``sacct`` dumps (``-S`` midnight to ``-E`` midnight) both list a job that runs across
midnight; the second dump also knows its end.  Counting both copies would count one
interruption twice.  The text follows ``sacct -P`` output (``sacct(1)``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import reliab
from reliab.io._repeats import drop_repeated_jobs
from reliab.schema import conform

HEAD = "JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|AllocTRES\n"
ROW = ("{id}|{id}|pretrain|svc|train|{state}|0:0|2024-05-31T20:00:00|{start}|{end}|00:00:00|2|"
       "node[0001-0002]|billing=16,cpu=16,gres/gpu=16,node=2\n")


def _dumps(root: Path) -> None:
    day1 = [ROW.format(id=7001, state="RUNNING", start="2024-05-31T21:00:00", end="Unknown"),
            ROW.format(id=7000, state="COMPLETED", start="2024-05-31T20:10:00", end="2024-05-31T20:50:00")]
    day2 = [ROW.format(id=7001, state="NODE_FAIL", start="2024-05-31T21:00:00", end="2024-06-01T03:00:00"),
            ROW.format(id=7002, state="NODE_FAIL", start="2024-06-01T03:10:00", end="2024-06-01T05:00:00")]
    weekly = day1[1:] + day2  # a third capture repeating both days' ended records
    for name, rows in (("sacct-2024-05-31.txt", day1), ("sacct-2024-06-01.txt", day2),
                       ("sacct-week-22.txt", weekly)):
        (root / name).write_text(HEAD + "".join(rows))


def test_overlapping_dumps_count_each_job_once(tmp_path: Path) -> None:
    _dumps(tmp_path)
    res = reliab.ingest(tmp_path)
    assert sorted(res.jobs["job_id"]) == ["7000", "7001", "7002"]
    assert res.jobs.set_index("job_id").loc["7001", "state"] == "NODE_FAIL"
    assert sorted(res.interruptions["job_id"]) == ["7001", "7002"]
    assert int((res.signals["signal"] == "slurm:node_fail").sum()) == 2
    assert any("4 job record(s) repeated" in n for n in res.notes)
    acc = res.accounting
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()


def test_requeued_runs_are_not_repeats(tmp_path: Path) -> None:
    rows = [ROW.format(id=7001, state="NODE_FAIL", start="2024-05-31T21:00:00", end="2024-05-31T22:00:00"),
            ROW.format(id=7001, state="NODE_FAIL", start="2024-05-31T22:10:00", end="2024-05-31T23:00:00")]
    (tmp_path / "sacct.txt").write_text(HEAD + "".join(rows))
    res = reliab.ingest(tmp_path / "sacct.txt")
    assert res.interruptions["job_id"].tolist() == ["7001", "7001"]
    assert not any("repeated" in n for n in res.notes)


def test_kept_copy_is_the_ended_one_with_the_latest_end() -> None:
    t = pd.Timestamp("2024-06-01T00:00:00Z")
    base = {"name": "x", "user": "u", "partition": "p", "submit": t, "start": t, "nnodes": 1,
            "ngpus": 8, "nodelist": "n1"}
    jobs = conform(pd.DataFrame([
        {**base, "job_id": "1", "state": "FAILED", "state_raw": "FAILED", "end": t + pd.Timedelta("2h"),
         "origin": "b:1"},
        {**base, "job_id": "1", "state": "RUNNING", "state_raw": "RUNNING", "end": pd.NaT, "origin": "c:1"},
        {**base, "job_id": "1", "state": "FAILED", "state_raw": "FAILED", "end": t + pd.Timedelta("1h"),
         "origin": "a:1"}]), "jobs")
    sig = conform(pd.DataFrame([{"time": t + pd.Timedelta("1h"), "host": "n1", "gpu": None, "job_id": "1",
                                 "source": "slurm", "signal": "slurm:failed", "severity": "error",
                                 "message": None, "origin": "a:1"}]), "signals")
    kept, signals, note = drop_repeated_jobs(jobs, sig)
    assert kept["origin"].tolist() == ["b:1"] and signals.empty and note is not None
    same, same_sig, none = drop_repeated_jobs(kept, sig)
    assert none is None and same is kept and same_sig is sig


def test_output_folder_keeps_the_repeated_jobs_out_across_held_groups(tmp_path: Path) -> None:
    """With ``output=`` the job files are held to the end and written once the repeats are
    dropped; a kernel log between two of them splits them into two held groups (two tasks).
    The folder holds the rows of the in-memory run, in its order."""
    from reliab.io._partitioned import read_table

    logs = tmp_path / "logs"
    logs.mkdir()
    _dumps(logs)
    (logs / "sacct-2024-06-01.txt").rename(logs / "sacct-2024-06-01z.txt")  # after the kernel log
    (logs / "sacct-2024-06-01y.log").write_text(  # a kernel log between the dumps, in name order
        "2024-06-01T02:59:00.000000+00:00 node0001 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has"
        " fallen off the bus.\n")
    memory = reliab.ingest(logs)
    out = reliab.ingest(logs, output=tmp_path / "out")
    assert sorted(memory.jobs["job_id"]) == ["7000", "7001", "7002"]  # (as the test above)
    assert int((memory.signals["signal"] == "slurm:node_fail").sum()) == 2
    for name in ("jobs", "signals", "interruptions"):
        pd.testing.assert_frame_equal(read_table(tmp_path / "out", name), getattr(memory, name), obj=name)
    pd.testing.assert_frame_equal(out.jobs, memory.jobs)
    assert out.notes == memory.notes
