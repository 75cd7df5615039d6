"""Public GPU-cluster job traces (Philly, Helios, Acme, PAI) -> the ``jobs`` table.

The verbatim rows under ``tests/reference/job_traces/`` are the examples each project
printed in its documentation (see the ``SOURCE.md`` files); the expected jobs below were
written by hand from those rows and the projects' schema notes (time zones, state
vocabularies), not from running the readers.  The generated files are written in the
documented schemas to test volume and the edge cases the notes name (no attempts, a
missing end, still-running jobs, several attempts).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

import reliab
from reliab.io._readfile import choose_source
from reliab.io._registry import get_parser

REF = Path(__file__).resolve().parent / "reference" / "job_traces"


def _t(text: str | None) -> pd.Timestamp | None:
    return None if text is None else pd.Timestamp(text)


def _read(source: str, path: Path, **options: object) -> reliab.io._registry.FileResult:
    return get_parser(source).read(str(path), **options)


def _check(jobs: pd.DataFrame, expected: list[dict]) -> None:
    """Every expected field of every expected row, in order; NA where the expectation says None."""
    assert len(jobs) == len(expected)
    for (_, row), want in zip(jobs.iterrows(), expected, strict=True):
        for key, value in want.items():
            got = row[key]
            if value is None:
                assert pd.isna(got), (key, got)
            else:
                assert got == value, (key, got, value)


# ------------------------------------------------------------------ verbatim public rows
def test_philly_readme_entry_is_two_runs_in_pacific_time() -> None:
    # README example: job Pass, attempt 1 01:12:09-01:13:23 on m47, attempt 2
    # 01:13:30 (Oct 7)-06:53:12 (Oct 9) on m412, 8 GPUs each; October 2017 is PDT (UTC-7)
    res = _read("philly", REF / "philly" / "cluster_job_log")
    assert (res.parsed, res.malformed) == (1, 0)
    jid = "application_1506638472019_14199"
    common = {"job_id": jid, "user": "ce2f4c", "partition": "ee9e8c", "nnodes": 1, "ngpus": 8,
              "submit": _t("2017-10-07T08:11:39Z")}
    _check(res.tables["jobs"], [
        {**common, "state": "REQUEUED", "start": _t("2017-10-07T08:12:09Z"),
         "end": _t("2017-10-07T08:13:23Z"), "nodelist": "m47", "restarts": 0},
        {**common, "state": "COMPLETED", "state_raw": "Pass", "start": _t("2017-10-07T08:13:30Z"),
         "end": _t("2017-10-09T13:53:12Z"), "nodelist": "m412", "restarts": 1},
    ])
    assert any("America/Los_Angeles" in n for n in res.notes)


def test_philly_tz_option_moves_the_times() -> None:
    res = _read("philly", REF / "philly" / "cluster_job_log", tz="UTC")
    assert res.tables["jobs"]["submit"].iloc[0] == _t("2017-10-07T01:11:39Z")


def test_helios_readme_rows_in_shanghai_time() -> None:
    # README rows; no zone printed, read as Asia/Shanghai (UTC+8)
    res = _read("helios", REF / "helios" / "cluster_log.csv")
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (4, 3, 1, 0)
    _check(res.tables["jobs"], [
        {"job_id": "1425511", "user": "uXBbc", "partition": "vcJkd", "state": "COMPLETED", "ngpus": 1,
         "nnodes": 1, "submit": _t("2020-06-09T10:41:01Z"), "start": _t("2020-06-09T10:41:01Z"),
         "end": _t("2020-06-09T20:55:09Z")},
        {"job_id": "1425512", "user": "uVMrF", "partition": "vchbv", "state": "FAILED", "ngpus": 4,
         "nnodes": 1, "submit": _t("2020-06-09T10:41:27Z"), "start": _t("2020-06-09T10:41:27Z"),
         "end": _t("2020-06-09T10:45:36Z")},
        {"job_id": "1425513", "user": "uzqls", "partition": "vcpDC", "state": "CANCELLED", "ngpus": 1,
         "nnodes": 1, "submit": _t("2020-06-09T10:41:28Z"), "start": _t("2020-06-09T10:41:28Z"),
         "end": _t("2020-06-17T06:15:21Z")},
    ])
    assert any("Asia/Shanghai" in n for n in res.notes)


def test_acme_seren_rows_keep_their_offset() -> None:
    res = _read("acme", REF / "acme" / "trace_seren.csv")
    _check(res.tables["jobs"], [
        {"job_id": "5778432", "user": "u5907", "name": "Other", "state": "FAILED", "ngpus": 8, "nnodes": 1,
         "submit": _t("2023-02-28T16:18:22Z"), "start": _t("2023-02-28T16:18:54Z"),
         "end": _t("2023-02-28T16:20:51Z")},
        {"job_id": "5778469", "user": "u5907", "name": "Other", "state": "COMPLETED", "ngpus": 8, "nnodes": 1,
         "submit": _t("2023-02-28T16:23:58Z"), "start": _t("2023-02-28T16:24:11Z"),
         "end": _t("2023-02-28T17:09:04Z")},
    ])


def test_acme_kalos_rows_with_empty_cells() -> None:
    res = _read("acme", REF / "acme" / "trace_kalos.csv")
    assert res.malformed == 0
    _check(res.tables["jobs"], [
        {"job_id": "dlctk696s0jbvitv", "user": "uf794", "state": "FAILED", "ngpus": 64, "nnodes": 8,
         "submit": _t("2023-05-17T11:00:58Z"), "start": _t("2023-05-17T11:01:08Z"),
         "end": _t("2023-05-17T11:01:16Z")},
        {"job_id": "dlc1t2ypl09b8qtp", "user": "uf794", "state": "CANCELLED", "ngpus": 64, "nnodes": 8,
         "submit": _t("2023-05-17T11:28:42Z"), "start": _t("2023-05-17T11:28:54Z"),
         "end": _t("2023-05-17T11:30:04Z")},
    ])


def test_pai_job_table_row() -> None:
    # 4550879 s = 52 d 16:07:59 after 1970-01-01; the job's start_time is its submission
    res = _read("pai_job", REF / "pai" / "pai_job_table.csv")
    _check(res.tables["jobs"], [
        {"job_id": "4b3f04b66a525d2df903eb16", "user": "58540f191766", "state": "COMPLETED",
         "state_raw": "Terminated", "submit": _t("1970-02-22T16:07:59Z"), "start": None,
         "end": _t("1970-02-22T16:16:56Z"), "ngpus": None},
    ])
    assert any("1970" in n for n in res.notes)


def test_pai_task_table_row() -> None:
    # 1739162 s = 20 d 03:06:02; one instance at 50 % of a GPU occupies one GPU
    res = _read("pai_task", REF / "pai" / "pai_task_table.csv")
    _check(res.tables["jobs"], [
        {"job_id": "4f057009a5d481acec67b088", "name": "tensorflow", "state": "COMPLETED",
         "start": _t("1970-01-21T03:06:02Z"), "end": _t("1970-01-21T03:06:40Z"), "ngpus": 1},
    ])


def test_pai_time_origin_option() -> None:
    res = _read("pai_job", REF / "pai" / "pai_job_table.csv", time_origin="2020-07-01T00:00:00+08:00")
    assert res.tables["jobs"]["submit"].iloc[0] == pd.Timestamp("2020-06-30T16:00:00Z") + pd.Timedelta(
        seconds=4550879)


@pytest.mark.parametrize(("path", "source"), [
    ("philly/cluster_job_log", "philly"), ("helios/cluster_log.csv", "helios"),
    ("acme/trace_seren.csv", "acme"), ("acme/trace_kalos.csv", "acme"),
    ("pai/pai_job_table.csv", "pai_job"), ("pai/pai_task_table.csv", "pai_task"),
])
def test_sniffed_without_source(path: str, source: str) -> None:
    assert choose_source(REF / path).source == source


# ------------------------------------------------------------------ generated, documented schemas
def test_philly_generated_volume_and_edges(tmp_path: Path) -> None:
    rng = random.Random(7)
    jobs, expect_rows = [], 0
    status = {"Pass": "COMPLETED", "Killed": "CANCELLED", "Failed": "FAILED"}
    for i in range(2000):
        st = rng.choice(list(status))
        n_att = rng.choice([0, 1, 1, 1, 2, 3])
        atts = []
        for a in range(n_att):
            start = f"2017-11-{1 + a:02d} 10:00:{i % 60:02d}"
            atts.append({"start_time": start, "end_time": f"2017-11-{1 + a:02d} 11:00:00",
                         "detail": [{"ip": f"m{i % 50}", "gpus": [f"gpu{g}" for g in range(4)]}]})
        expect_rows += max(n_att, 1)
        jobs.append({"status": st, "vc": "vc1", "jobid": f"application_1_{i}", "attempts": atts,
                     "submitted_time": "2017-11-01 09:59:00", "user": f"u{i % 7}"})
    running = {"status": "Pass", "vc": "vc1", "jobid": "application_1_running", "user": "u1",
               "submitted_time": "2017-12-22 23:00:00",
               "attempts": [{"start_time": "2017-12-22 23:01:00", "end_time": None,
                             "detail": [{"ip": "m1", "gpus": ["gpu0"]}, {"ip": "m2", "gpus": ["gpu0"]}]}]}
    jobs += [running, {"jobid": 42}, "not a job"]
    path = tmp_path / "cluster_job_log"
    path.write_text(json.dumps(jobs, indent=4))
    res = _read("philly", path)
    df = res.tables["jobs"]
    assert res.parsed == 2001 and res.malformed == 2
    assert len(df) == expect_rows + 1
    last = df[df["job_id"] == "application_1_running"].iloc[0]
    assert last["state"] == "RUNNING" and pd.isna(last["end"]) and last["nnodes"] == 2 and last["ngpus"] == 2
    assert last["nodelist"] == "m1,m2"
    never = df[df["start"].isna() & (df["job_id"] != "application_1_running")]
    assert never["ngpus"].isna().all()  # a job without attempts: one row, no run


def test_helios_generated_volume_and_edges(tmp_path: Path) -> None:
    states = ["COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL"]
    lines = ["job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"]
    for i in range(5000):
        lines.append(f"{i},u{i % 9},vc{i % 3},{2 ** (i % 4)},4,1,{states[i % 5]},2020-06-09 18:41:01,"
                     f"2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0")
    lines.append("9001,uA,vcA,8,8,1,RUNNING,2020-09-30 23:00:00,2020-09-30 23:00:05,,,5")
    lines.append("9002,uA,vcA,8,8,1,EXPLODED,2020-09-30 23:00:00,2020-09-30 23:00:05,,,5")
    lines.append("9003,uA,vcA,eight,8,1,FAILED,2020-09-30 23:00:00,2020-09-30 23:00:05,,,5")
    path = tmp_path / "cluster_log.csv"
    path.write_text("\n".join(lines) + "\n")
    res = _read("helios", path)
    df = res.tables["jobs"]
    assert (res.parsed, res.malformed) == (5001, 2)
    assert df["state"].value_counts().to_dict() == {**{s: 1000 for s in states}, "RUNNING": 1}
    assert pd.isna(df.iloc[-1]["end"])
    assert set(res.quarantine["lineno"]) == {5003, 5004}



def test_acme_kalos_generated_volume_and_edges(tmp_path: Path) -> None:
    header = ("job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,"
              "start_time,end_time,fail_time,stop_time,duration,queue,gpu_time")
    states = ["COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL"]
    lines = [header]
    for i in range(4000):
        st = states[i % 5]
        fail = "2023-05-17 12:00:00+00:00" if st in ("FAILED", "NODE_FAIL") else ""
        lines.append(f"dlc{i:013x},u{i % 13},{1 + i % 4},{8 * (1 + i % 4)},96,1000,100.0,Pretrain,{st},"
                     f"2023-05-17 11:00:00+00:00,2023-05-17 11:00:10+00:00,2023-05-17 12:00:00+00:00,{fail},,"
                     f"3600,10.0,28800.0")
    lines.append("dlcrunning,u1,1,8,96,1000,100.0,SFT,RUNNING,2023-08-31 23:00:00+00:00,"
                 "2023-08-31 23:00:05+00:00,,,,,5.0,")
    lines.append("dlcnaive,u1,1,8,96,1000,100.0,SFT,COMPLETED,2023-08-31 23:00:00,"
                 "2023-08-31 23:00:05,2023-08-31 23:30:00,,,,5.0,")
    lines.append("dlcbad,u1,1,8,96,1000,100.0,SFT,COMPLETED,2023-08-31T25:00:00+00:00,,,,,,5.0,")
    path = tmp_path / "trace_kalos.csv"
    path.write_text("\n".join(lines) + "\n")
    res = _read("acme", path)
    df = res.tables["jobs"].set_index("job_id")
    assert (res.parsed, res.malformed) == (4002, 1)
    assert df["state"].value_counts().to_dict() == {**{s: 800 for s in states}, "RUNNING": 1, "COMPLETED": 801}
    assert df.loc["dlc0000000000003", ["nnodes", "ngpus"]].tolist() == [4, 32]
    assert pd.isna(df.loc["dlcrunning", "end"])
    # the one time without an offset is local time in the default zone (UTC+8), and said so
    assert df.loc["dlcnaive", "start"] == pd.Timestamp("2023-08-31T15:00:05Z")
    assert any("3 time(s) without a UTC offset" in n and "Asia/Shanghai" in n for n in res.notes)


def test_pai_generated_tables(tmp_path: Path) -> None:
    statuses = ["Terminated", "Failed", "Running", "Waiting"]
    job_rows, task_rows = [], []
    for i in range(3000):
        st = statuses[i % 4]
        name = f"{i:024x}"
        end = "" if st in ("Running", "Waiting") else f"{1000 + i * 10}.0"
        job_rows.append(f"{name},{i:060x},user{i % 5},{st},{1000 + i}.0,{end}")
        start = "0.0" if st == "Waiting" else f"{1001 + i}.0"
        task_rows.append(f"{name},worker,{1 + i % 4}.0,{st},{start},{end},600.0,29.3,{25.0 * (i % 5)},V100")
    (tmp_path / "pai_job_table.csv").write_text("\n".join(job_rows) + "\n")
    (tmp_path / "pai_task_table.csv").write_text("\n".join(task_rows) + "\n")
    jobs = _read("pai_job", tmp_path / "pai_job_table.csv").tables["jobs"]
    tasks = _read("pai_task", tmp_path / "pai_task_table.csv").tables["jobs"]
    assert jobs["state"].value_counts().to_dict() == {"COMPLETED": 750, "FAILED": 750, "RUNNING": 750,
                                                       "PENDING": 750}
    assert jobs.loc[jobs["state"] == "RUNNING", "end"].isna().all()
    assert tasks.loc[tasks["state"] == "PENDING", "start"].isna().all()  # start_time 0: not launched
    # ngpus = ceil(inst_num * plan_gpu / 100): i=3 -> 4 inst x 75 % = 3 GPUs; i=6 -> 3 x 25 % -> 1
    by_id = tasks.set_index("job_id")["ngpus"]
    assert by_id[f"{3:024x}"] == 3 and by_id[f"{6:024x}"] == 1 and by_id[f"{5:024x}"] == 0


# ------------------------------------------------------------------ options a reader does not take
def test_option_the_forced_reader_does_not_take_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"sacct.*columns.*takes.*tz"):
        reliab.ingest(REF / "helios" / "cluster_log.csv", source="sacct", columns={"a": "b"})


# ------------------------------------------------------------------ job-level analyses on a trace
def _philly_trace(path: Path, n: int = 300) -> Path:
    """A Philly-schema file with Pass/Killed/Failed jobs of 1-32 GPUs, some retried."""
    rng = random.Random(3)
    t0 = pd.Timestamp("2017-10-02")
    fmt = "%Y-%m-%d %H:%M:%S"
    jobs = []
    for i in range(n):
        t = t0 + pd.Timedelta(seconds=rng.uniform(0, 20 * 86400))
        sub, atts = t, []
        for _ in range(rng.choice([1, 1, 2])):
            start = t + pd.Timedelta(seconds=rng.uniform(10, 600))
            t = start + pd.Timedelta(seconds=rng.uniform(600, 20000))
            atts.append({"start_time": start.strftime(fmt), "end_time": t.strftime(fmt),
                         "detail": [{"ip": f"m{rng.randint(1, 40)}", "gpus": ["gpu0"] * rng.choice([1, 4, 8])}]})
        jobs.append({"status": ["Pass", "Killed", "Failed"][i % 3], "vc": "vc1", "jobid": f"app_{i}",
                     "attempts": atts, "submitted_time": sub.strftime(fmt), "user": f"u{i % 11}"})
    path.write_text(json.dumps(jobs))
    return path


def test_replay_on_a_trace_without_interruptions(tmp_path: Path) -> None:
    # Philly cannot tell user from infrastructure failures: under the fleet policy every
    # Failed job is a user failure (100 of 300), so the run has no interruption to replay
    ing = reliab.ingest(_philly_trace(tmp_path / "cluster_job_log"))
    assert len(ing.interruptions) == 0 and len(ing.user_failures) == 100
    cost = reliab.failure_cost(ing.interruptions, ing.jobs, ing.signals)
    table = reliab.replay_mitigations(cost).table.set_index("scenario")
    # the replay counts the interruptions the cost counts (none: a retried attempt's end is not
    # an interruption here) and reproduces the observed ETTR
    assert (~cost.segments["censored"]).sum() >= 1
    assert table.loc["observed", "interruptions"] == cost.n == 0
    assert table.loc["observed", "ettr"] == pytest.approx(cost.ettr)


def _hand_jobs() -> pd.DataFrame:
    """Five jobs, one retried (app5: REQUEUED then FAILED), run times 10, 2, 4, 1, 6 h."""
    t0 = pd.Timestamp("2024-01-01T00:00:00Z")
    rows = [("app1", "COMPLETED", 1, 0, 10), ("app2", "FAILED", 1, 0, 2), ("app3", "NODE_FAIL", 8, 0, 4),
            ("app4", "CANCELLED", 8, 0, 1), ("app5", "REQUEUED", 8, 0, 1), ("app5", "FAILED", 8, 2, 8)]
    return pd.DataFrame({"job_id": [r[0] for r in rows], "state": [r[1] for r in rows],
                         "ngpus": [r[2] for r in rows],
                         "start": [t0 + pd.Timedelta(hours=r[3]) for r in rows],
                         "end": [t0 + pd.Timedelta(hours=r[4]) for r in rows]})


def test_end_states_by_hand() -> None:
    from reliab.models.jobs import estimate_end_states

    jobs = _hand_jobs()
    res = estimate_end_states(jobs, interruptions=pd.DataFrame({"job_id": ["app3"]}),
                              user_failures=pd.DataFrame({"job_id": ["app2", "app5"]}))
    s = res.states.set_index("state")
    assert s["jobs"].to_dict() == {"FAILED": 2, "COMPLETED": 1, "NODE_FAIL": 1, "CANCELLED": 1}
    # Clopper-Pearson 95 %: 2 of 5 -> [0.0527, 0.8534], 1 of 5 -> [0.0051, 0.7164] (published tables)
    assert s.loc["FAILED", ["share", "share_low", "share_high"]].tolist() == pytest.approx(
        [0.4, 0.0527, 0.8534], abs=5e-4)
    assert s.loc["NODE_FAIL", ["share_low", "share_high"]].tolist() == pytest.approx([0.0051, 0.7164], abs=5e-4)
    b = res.by_size.table.set_index("bucket")
    # 1 GPU: app1 (10 h), app2 failed (2 h); 5-8 GPUs: app3 failed (4 h), app4 (1 h), app5 failed (last run 6 h)
    assert b.loc["1", ["jobs", "failed", "job_hours"]].tolist() == [2, 1, 12.0]
    assert b.loc["5-8", ["jobs", "failed", "job_hours", "infrastructure", "user"]].tolist() == [3, 2, 11.0, 1, 1]
    assert b.loc["5-8", "failures_per_1k_job_h"] == pytest.approx(2000 / 11)
    # Garwood 95 % for 2 events: [0.2422, 7.2247]
    assert b.loc["5-8", ["failures_per_1k_job_h_low", "failures_per_1k_job_h_high"]].tolist() == pytest.approx(
        [242.2 / 11, 7224.7 / 11], rel=1e-3)
    # KM: 1 (censored), 2 (fail, S=3/4), 4 (fail, S=1/2 exactly), 6 (fail, S=1/4): on the exact
    # 0.5 plateau [4, 6) the median is its midpoint, 5 h (R's quantile.survfit convention)
    assert res.ttf_median_h == 5.0
    assert (res.failed, res.infrastructure, res.user) == (3, 1, 2)


def test_end_states_in_the_report_of_a_trace(tmp_path: Path) -> None:
    from reliab.study import analyze, fleet_facts

    ing = reliab.ingest(_philly_trace(tmp_path / "cluster_job_log"))
    out = analyze(ing, fleet_facts(jobs=ing.jobs, signals=ing.signals))
    states = out["job_end_states"]
    assert states.states.set_index("state")["jobs"].to_dict() == {"COMPLETED": 100, "CANCELLED": 100,
                                                                 "FAILED": 100}
    assert states.infrastructure == 0 and states.user == 100
    assert out["job_failures_by_size"].table["failed"].sum() == 100
    assert any("cannot tell user from infrastructure" in n for n in states.notes)


def test_philly_times_around_dst_changes(tmp_path: Path) -> None:
    # America/Los_Angeles: 2017-11-05 01:00-02:00 happens twice (read as the earlier, PDT),
    # 02:30 that day is PST; 2017-03-12 02:30 does not exist (the job is malformed)
    def job(jid: str, t: str) -> dict:
        return {"status": "Pass", "vc": "v", "jobid": jid, "user": "u", "submitted_time": t,
                "attempts": [{"start_time": t, "end_time": "2017-11-06 00:00:00", "detail": []}]}

    path = tmp_path / "cluster_job_log"
    path.write_text(json.dumps([job("a", "2017-11-05 01:30:00"), job("b", "2017-11-05 02:30:00"),
                                job("c", "2017-03-12 02:30:00"), job("d", "2017-11-05 00:30:00")]))
    res = _read("philly", path)
    start = res.tables["jobs"].set_index("job_id")["start"]
    assert start.to_dict() == {"a": pd.Timestamp("2017-11-05T08:30:00Z"), "b": pd.Timestamp("2017-11-05T10:30:00Z"),
                               "d": pd.Timestamp("2017-11-05T07:30:00Z")}
    assert res.malformed == 1 and "does not exist" in res.quarantine["reason"].iloc[0]
    assert any("repeated hour" in n for n in res.notes)


def test_cli_names_the_options_of_the_forced_reader() -> None:
    out = run_in_process("ingest", str(REF / "helios" / "cluster_log.csv"), "--source", "sacct", "--columns", "a=b",
                         env={"COLUMNS": "200"})
    assert out.returncode != 0
    assert "source 'sacct' takes no option(s) columns; it takes: delimiter, fields, gpus_per_node, tz" in out.stderr
