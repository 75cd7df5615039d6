"""sacct --parsable/--parsable2/--json readers (reliab.io.formats.slurm)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.errors import ParseError
from reliab.io._registry import FileResult, get_parser
from reliab.io.formats import slurm  # registers sacct, sacct_json

HEADER = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|"
          "NodeList|Restarts|AllocTRES")
SAMPLE = [  # the sample cluster's shape (docs/raw-formats.md)
    HEADER,
    "1001|1001|llama|alice|gpu|NODE_FAIL|0:0|2024-06-03T10:00:00|2024-06-03T10:01:00|"
    "2024-06-03T14:05:00|04:04:00|2048|node[0001-0420,0422-2048,2050]|0|billing=16384,cpu=2048,gres/gpu=16384,node=2048",
    "1001.batch|1001.batch|batch||||0:0|2024-06-03T10:01:00|2024-06-03T10:01:00|2024-06-03T14:05:00|04:04:00|1|node0001|0|cpu=8",
    "1001.extern|1001.extern|extern||||0:0|2024-06-03T10:01:00|2024-06-03T10:01:00|2024-06-03T14:05:00|04:04:00|2048|node[0001-2048]|0|",
    "1001.0|1001.0|python||||1:0|2024-06-03T10:01:00|2024-06-03T10:01:00|2024-06-03T14:05:00|04:04:00|2048|node[0001-2048]|0|",
    "1002|1002|llama|alice|gpu|CANCELLED by 0|0:15|2024-06-03T14:10:00|2024-06-03T14:10:00|"
    "2024-06-05T09:00:00|42:50:00|2|node[0421-0422]|1|billing=16,cpu=16,gres/gpu=16,node=2",
    "1003|1003|llama|alice|gpu|RUNNING|0:0|2024-06-05T09:10:00|2024-06-05T09:11:00|Unknown|01:00:00|"
    "2|node[0421-0422]|0|gres/gpu:h100=16,node=2",
    "1004|1004|llama|bob|gpu|FAILED|1:0|2024-06-05T09:10:00|2024-06-05T09:11:00|2024-06-05T09:20:00|"
    "00:09:00|1|node0007|0|cpu=8,gres/gpu=8",
]
# gc3pie/gc3pie gc3libs/backends/tests/test_slurm.py (sacct --noheader --parsable)
GC3PIE_FIELDS = "jobid,exitcode,state,ncpus,elapsed,totalcpu,submit,start,end,maxrss,maxvmsize"
GC3PIE = [
    "123|1:0|NODE_FAIL|8|01:21:47|00:00:00|2016-09-23T18:44:37|2016-09-23T18:44:37|2016-09-23T20:06:24|||",
    "123.0|-2:0|CANCELLED by 1000|8|01:21:47|00:00:00|2016-09-23T18:44:37|2016-09-23T18:44:37|2016-09-23T20:06:24|||",
    "124|0:1|TIMEOUT|4|00:01:11|00:00:00|2016-09-23T18:44:37|2016-09-23T18:44:37|2016-09-23T18:45:48|||",
]
# a real `sacct -X -n -P --format=JobID,JobName,Partition,State,Elapsed,ExitCode,Start,End,NodeList`
CAPTURE_FIELDS = ["JobID", "JobName", "Partition", "State", "Elapsed", "ExitCode", "Start", "End", "NodeList"]
CAPTURE = [
    "301099|ktg-loop|l40s|TIMEOUT|23:30:11|0:0|2026-09-04T18:52:13|2026-09-05T18:22:24|gl111",
    "314831|ktg-loop|b200,l40s|CANCELLED by 30154|00:00:00|0:0|None|2026-09-06T12:59:09|None assigned",
]


def _write(tmp_path: Path, lines: list[str], name: str = "sacct.txt") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _check(result: FileResult) -> None:
    assert result.lines == result.parsed + result.irrelevant + result.malformed
    schema.validate(result.tables["jobs"], "jobs")
    schema.validate(result.tables["signals"], "signals")
    schema.validate(result.quarantine, "quarantine")
    assert len(result.quarantine) == result.malformed


def test_parsable2_with_header(tmp_path: Path) -> None:
    r = get_parser("sacct").read(_write(tmp_path, SAMPLE))
    _check(r)
    assert (r.lines, r.parsed, r.irrelevant, r.malformed) == (8, 4, 4, 0)
    jobs = r.tables["jobs"].set_index("job_id")
    assert list(jobs.index) == ["1001", "1002", "1003", "1004"]
    assert jobs.loc["1001", "ngpus"] == 16384
    assert jobs.loc["1001", "nnodes"] == 2048
    assert jobs.loc["1003", "ngpus"] == 16  # typed gres/gpu:h100
    assert jobs.loc["1002", "state"] == "CANCELLED"
    assert jobs.loc["1002", "state_raw"] == "CANCELLED by 0"
    assert pd.isna(jobs.loc["1003", "end"])
    assert jobs.loc["1001", "end"] == pd.Timestamp("2024-06-03T14:05:00Z")
    sig = r.tables["signals"]
    assert list(sig["signal"]) == ["slurm:node_fail", "slurm:cancelled", "slurm:failed"]
    assert list(sig["job_id"]) == ["1001", "1002", "1004"]
    assert sig.loc[1, "message"] == "CANCELLED by 0"
    assert sig.loc[0, "time"] == pd.Timestamp("2024-06-03T14:05:00Z")
    assert sig.loc[0, "origin"].endswith("sacct.txt:2")


def test_gc3pie_parsable_trailing_delimiter(tmp_path: Path) -> None:
    """reference: gc3pie test fixtures (sacct -n -p)."""
    r = get_parser("sacct").read(_write(tmp_path, GC3PIE), fields=GC3PIE_FIELDS)
    _check(r)
    assert (r.parsed, r.irrelevant, r.malformed) == (2, 1, 0)
    assert list(r.tables["jobs"]["state"]) == ["NODE_FAIL", "TIMEOUT"]
    assert list(r.tables["signals"]["signal"]) == ["slurm:node_fail", "slurm:timeout"]
    assert r.tables["jobs"]["exit_code"].tolist() == ["1:0", "0:1"]


def test_noheader_capture_pending_then_cancelled(tmp_path: Path) -> None:
    """reference: a real sacct -X -n -P capture (a pending-then-cancelled job prints Start None)."""
    r = get_parser("sacct").read(_write(tmp_path, CAPTURE), fields=CAPTURE_FIELDS)
    _check(r)
    jobs = r.tables["jobs"].set_index("job_id")
    assert jobs.loc["301099", "nodelist"] == "gl111"
    assert jobs.loc["314831", "state"] == "CANCELLED"
    assert jobs.loc["314831", "state_raw"] == "CANCELLED by 30154"
    assert pd.isna(jobs.loc["314831", "start"]) and pd.isna(jobs.loc["314831", "nodelist"])
    assert jobs.loc["314831", "partition"] == "b200,l40s"
    assert r.tables["signals"]["message"].tolist() == ["TIMEOUT", "CANCELLED by 30154"]


def test_header_line_is_irrelevant_when_fields_given(tmp_path: Path) -> None:
    r = get_parser("sacct").read(_write(tmp_path, ["JobID|State|Start|End", "9|CD|Unknown|Unknown"]),
                                 fields=["JobID", "State", "Start", "End"])
    assert (r.parsed, r.irrelevant) == (1, 1)
    assert r.tables["jobs"]["state"].tolist() == ["COMPLETED"]
    assert r.tables["signals"].empty  # End Unknown: has not ended


@pytest.mark.parametrize(
    ("raw", "state"),
    [("NF", "NODE_FAIL"), ("CANCELLED+", "CANCELLED"), ("CANCELLED by 0", "CANCELLED"),
     ("OOM", "OUT_OF_MEMORY"), ("PREEMPTED", "PREEMPTED"), ("REQUEUED", "REQUEUED"),
     ("BOOT_FAIL", "BOOT_FAIL"), ("DEADLINE", "DEADLINE"), ("REVOKED", "REVOKED")],
)
def test_normalize_state(raw: str, state: str) -> None:
    assert slurm.normalize_state(raw) == state


def test_arrays_het_jobs_and_gpus_per_node(tmp_path: Path) -> None:
    lines = ["JobID|State|Start|End|NNodes",
             "123_4|COMPLETED|2024-01-01T00:00:00|2024-01-01T01:00:00|2",
             "124+0|FAILED|2024-01-01T00:00:00|2024-01-01T01:00:00|1",
             "124+0.batch|FAILED|2024-01-01T00:00:00|2024-01-01T01:00:00|1"]
    r = get_parser("sacct").read(_write(tmp_path, lines), gpus_per_node=8)
    _check(r)
    assert r.tables["jobs"]["job_id"].tolist() == ["123_4", "124+0"]
    assert r.tables["jobs"]["ngpus"].tolist() == [16, 8]


def test_local_time_zone(tmp_path: Path) -> None:
    lines = ["JobID|State|Start|End", "1|FAILED|2024-06-03T10:00:00|2024-06-03T12:00:00"]
    r = get_parser("sacct").read(_write(tmp_path, lines), tz="Europe/Berlin")
    assert r.tables["jobs"]["end"].iloc[0] == pd.Timestamp("2024-06-03T10:00:00Z")


def test_malformed_lines_are_quarantined(tmp_path: Path) -> None:
    lines = [*SAMPLE[:2], "1005|1005|x|y|z|NODE_FAIL|0:0", "1006|1006|x|y|z|WHAT is this|0:0|||||1||0|",
             "1007|1007|x|y|z|FAILED|0:0||2024-13-45T00:00:00|||1||0|"]
    r = get_parser("sacct").read(_write(tmp_path, lines))
    _check(r)
    assert (r.parsed, r.malformed) == (1, 3)
    q = r.quarantine
    assert q["lineno"].tolist() == [3, 4, 5]
    assert "expected 15" in q["reason"].iloc[0]
    assert "not a Slurm job state" in q["reason"].iloc[1]
    assert "SLURM_TIME_FORMAT" in q["reason"].iloc[2]
    with pytest.raises(ParseError, match=r"sacct.txt:3"):
        get_parser("sacct").read(_write(tmp_path, lines), strict=True)


def test_missing_header_is_malformed(tmp_path: Path) -> None:
    r = get_parser("sacct").read(_write(tmp_path, CAPTURE))
    assert r.malformed == 2 and "header" in r.quarantine["reason"].iloc[0]
    with pytest.raises(ValueError, match="required"):
        get_parser("sacct").read(_write(tmp_path, CAPTURE), fields="JobID,JobName")


def test_sniff() -> None:
    assert get_parser("sacct").sniff("slurm/sacct.txt", SAMPLE[:3]) > 0.9
    assert get_parser("sacct").sniff("x.log", ["Jun  3 14:02:11 node1 sshd[1]: hi"]) == 0


def test_sacct_json(tmp_path: Path) -> None:
    doc = {
        "meta": {"plugin": {"name": "Slurm OpenAPI"}},
        "errors": [],
        "jobs": [
            {"job_id": 301099, "name": "ktg-loop", "user": "bob", "partition": "l40s",
             "state": {"current": ["NODE_FAIL"], "reason": "None"},
             "exit_code": {"status": ["ERROR"], "return_code": {"set": True, "number": 1},
                           "signal": {"id": {"set": False, "number": 0}}},
             "time": {"submission": 1725475933, "start": 1725475933, "end": 1725560544},
             "nodes": "gl[111-112]", "allocation_nodes": 2, "restart_cnt": 1,
             "failed_node": "gl112", "array": {"job_id": 0, "task_id": {"set": False}},
             "tres": {"allocated": [{"type": "gres", "name": "gpu", "count": 16}]}},
            {"job_id": 7, "array": {"job_id": 6, "task_id": {"set": True, "number": 1}},
             "state": {"current": "RUNNING"}, "time": {"start": 1725475933, "end": 0},
             "nodes": "None assigned"},
            {"job_id": 8, "state": {"current": [3]}},
        ],
    }
    path = tmp_path / "sacct.json"
    path.write_text(json.dumps(doc, indent=2))
    r = get_parser("sacct_json").read(str(path))
    _check(r)
    assert (r.parsed, r.malformed) == (2, 1)
    jobs = r.tables["jobs"]
    assert jobs["job_id"].tolist() == ["301099", "6_1"]
    assert jobs["ngpus"].iloc[0] == 16 and jobs["failed_node"].iloc[0] == "gl112"
    assert jobs["exit_code"].iloc[0] == "1:0"
    sig = r.tables["signals"]
    assert sig["signal"].tolist() == ["slurm:node_fail"]
    assert sig["host"].iloc[0] == "gl112"
    assert sig["time"].iloc[0] == pd.Timestamp(1725560544, unit="s", tz="UTC")
    path.write_text('{"jobs": [ {"job_id": 1,\n "state": ')
    r = get_parser("sacct_json").read(str(path))
    assert r.malformed == 1 and "JSON" in r.quarantine["reason"].iloc[0]


_fragments = st.sampled_from([*SAMPLE, *GC3PIE, *CAPTURE, "", "JobID|State|Start|End", "----|----"])
_line = st.one_of(_fragments, st.text(max_size=80), _fragments.map(lambda s: s[: len(s) // 2] + "|x"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=12), st.sampled_from(["sacct", "sacct_json"]))
def test_fuzz_no_exception_escapes(lines: list[str], source: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.txt"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        _check(get_parser(source).read(str(path)))


# --- any column set; fixed-width and headerless output; hostile values

def test_only_jobid_and_state_are_required(tmp_path: Path) -> None:
    """Real-shaped (the default 'sacct -P' columns, sacct(1)): no Start/End, jobs read with
    empty times, one note saying how to get them; no slurm:<state> signal without an End."""
    lines = ["JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode",
             "239023|job|gpu|acct|8|COMPLETED|0:0", "239023.0|python|||8|CANCELLED|0:10",
             "239024|job|gpu|acct|8|CANCELLED by 1000|0:0"]
    r = get_parser("sacct").read(_write(tmp_path, lines))
    _check(r)
    jobs = r.tables["jobs"]
    assert jobs["job_id"].tolist() == ["239023", "239024"] and jobs["state"].tolist() == ["COMPLETED", "CANCELLED"]
    assert jobs["start"].isna().all() and jobs["end"].isna().all() and len(r.tables["signals"]) == 0
    assert len(r.notes) == 1 and "Start and End" in r.notes[0] and "--format=JobID,State,Start,End" in r.notes[0]


def test_fixed_width_output_is_read_by_its_rule(tmp_path: Path) -> None:
    """Real-shaped (nebius/soperator#321; plain 'sacct', no -p/-P): columns from the dashes."""
    lines = ["JobID           JobName  AllocCPUS     MaxRSS      State ExitCode    Start               End                 ",
             "------------ ---------- ---------- ---------- ---------- -------- ------------------- ------------------- ",
             "20                sleep          2                FAILED      1:0 2024-06-03T10:00:00 2024-06-03T10:05:00 ",
             "20.0              sleep          2      5872K     FAILED      1:0 2024-06-03T10:00:01 2024-06-03T10:05:00 ",
             "21                sleep          2            CANCELLED+      0:0 2024-06-03T11:00:00 Unknown             "]
    r = get_parser("sacct").read(_write(tmp_path, lines))
    _check(r)
    jobs = r.tables["jobs"]
    assert jobs[["job_id", "state"]].values.tolist() == [["20", "FAILED"], ["21", "CANCELLED"]]
    assert jobs["end"].iloc[0] == pd.Timestamp("2024-06-03T10:05:00Z") and pd.isna(jobs["end"].iloc[1])
    assert get_parser("sacct").sniff("out.txt", lines[:3]) >= 0.9


def test_fixed_width_row_off_the_rule_is_split_at_blanks(tmp_path: Path) -> None:
    """Real-shaped (an excerpt whose job ids were shortened by hand, so a row no longer lines
    up with the dash rule): the row is split at its blanks when that gives one value per column."""
    lines = ["       JobID    JobName      State ExitCode ",
             "------------ ---------- ---------- -------- ",
             "123456789012345 train     NODE_FAIL      0:0 ",
             "        4242      train     FAILED      1:0 "]
    r = get_parser("sacct").read(_write(tmp_path, lines))
    _check(r)
    jobs = r.tables["jobs"]
    assert jobs[["job_id", "state"]].values.tolist() == [["123456789012345", "NODE_FAIL"], ["4242", "FAILED"]]


def test_headerless_output_is_sniffed_and_read_with_fields(tmp_path: Path) -> None:
    """Real-shaped (snakemake-executor-plugin-slurm#157 'sacct -X -P -n --format=JobIdRaw,State';
    SDSC ucloud '-b -P -n'): recognised without a header; JobIdRaw stands for JobID."""
    lines = ["8183089|COMPLETED", "8183090|FAILED", "8183091|CANCELLED by 0"]
    path = _write(tmp_path, lines, name="poll.log")
    assert get_parser("sacct").sniff(path, lines) > 0
    res = __import__("reliab").ingest(path, fields="JobIdRaw,State")
    assert res.jobs[["job_id", "state"]].values.tolist() == [["8183089", "COMPLETED"], ["8183090", "FAILED"],
                                                             ["8183091", "CANCELLED"]]


@pytest.mark.parametrize(("cell", "reason"), [
    ("\u00b2", "not a non-negative integer"),  # a superscript digit ('²'.isdigit() is True)
    ("7" * 5000, "out of range"),  # beyond Python's int() digit limit
    (str(2**63), "out of range"),  # beyond int64
])
def test_hostile_integers_are_quarantined(tmp_path: Path, cell: str, reason: str) -> None:
    lines = ["JobID|State|NNodes|Start|End", f"1|FAILED|{cell}|2024-06-03T10:00:00|2024-06-03T10:05:00",
             "2|FAILED|2|2024-06-03T10:00:00|9999-06-03T10:05:00", "3|FAILED|2|2024-06-03T10:00:00|2024-06-03T10:05:00"]
    r = get_parser("sacct").read(_write(tmp_path, lines))
    _check(r)
    assert r.tables["jobs"]["job_id"].tolist() == ["3"]
    assert reason in r.quarantine["reason"].iloc[0] and "outside the range" in r.quarantine["reason"].iloc[1]
    tres = ["JobID|State|AllocTRES", f"4|FAILED|gres/gpu={'9' * 30}"]
    r = get_parser("sacct").read(_write(tmp_path, tres))
    assert r.malformed == 1 and "gres/gpu" in r.quarantine["reason"].iloc[0]


def test_fixed_width_id_cut_by_its_column_is_no_job(tmp_path: Path) -> None:
    """Real-shaped (slurm-minus-minus#9, plain 'sacct -j … --format=JobID,JobName,State,ExitCode'):
    '2681683_420+' is an id sacct cut to 12 characters (here the .batch step): no job, one note;
    a het-job id '123+0' is not cut."""
    p = tmp_path / "sacct.txt"
    p.write_text("JobID           JobName      State ExitCode \n"
                 "------------ ---------- ---------- -------- \n"
                 "2681683_420  entropy.sh     FAILED      1:0 \n"
                 "2681683_420+      batch     FAILED      1:0 \n"
                 "123+0             train  COMPLETED      0:0 \n")
    res = slurm.read_sacct(str(p))
    assert res.tables["jobs"]["job_id"].tolist() == ["2681683_420", "123+0"]
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (5, 2, 3, 0)
    assert any("cut a JobID" in n and "line 4" in n and "--parsable2" in n for n in res.notes)


def test_sacct_delimiter_is_told_from_the_first_line(tmp_path: Path) -> None:
    """Real-shaped: the first nine fields of rows of rug-cit-hpc/slurm-jobinfo test/data/sacct.txt
    ('sacct --parsable --noheader --delimiter=☃'), trailing delimiter kept: the snowman is recognised
    without delimiter=, as is a header with ';' (sacct -P --delimiter=';'); '|' stays the
    default and a fixed-width first line tells no delimiter."""
    from reliab.io.formats.slurm._delimiter import delimiter_of

    fields = "JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State"
    lines = ["20940996☃4CGN1IHUEDFZL☃user6☃regular☃mycluster2-node205☃1☃1☃☃FAILED☃",
             "20940996.batch☃batch☃☃☃mycluster2-node205☃1☃1☃1☃FAILED☃",
             "21085523☃VPQ0☃user13☃gpu☃None assigned☃1☃1☃☃PENDING☃"]
    path = _write(tmp_path, lines, name="jobs.txt")
    assert get_parser("sacct").sniff(path, lines) > 0
    res = __import__("reliab").ingest(path, fields=fields)
    assert res.jobs[["job_id", "state"]].values.tolist() == [["20940996", "FAILED"], ["21085523", "PENDING"]]
    assert len(res.quarantine) == 0
    semi = ["JobID;State;Start;End", "77;TIMEOUT;2024-01-02T03:04:05;2024-01-02T05:04:05"]
    res = __import__("reliab").ingest(_write(tmp_path, semi, name="semi.txt"))
    assert res.jobs[["job_id", "state"]].values.tolist() == [["77", "TIMEOUT"]]
    assert res.jobs["end"].tolist() == [pd.Timestamp("2024-01-02T05:04:05Z")]
    assert [delimiter_of(x) for x in ("1655360|FAILED|127:0", "       JobID    JobName  State",
                                      "123.batch☃batch", "hello|world")] == ["|", None, "☃", None]
