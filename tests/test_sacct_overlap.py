"""The same jobs in several ``sacct`` captures of different column sets are one job each.

The captures are in ``tests/reference/sacct_overlap`` (real rows of GC3Pie, slurm-jobinfo,
torchx and gcm written in three column sets, with and without Submit, ``--parsable``,
``-P`` and fixed width; see its README).  Expectations are the README's, written by hand.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.io._job_merge import merge_job_copies
from reliab.schema import conform

CAPTURES = Path(__file__).parent / "reference" / "sacct_overlap"


CAPTURE_NAMES = ("daily-sacct-parsable.txt", "adhoc-sacct-P-no-submit.txt", "fixed-width-no-submit.txt")


def _folder(tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    for name in CAPTURE_NAMES:
        shutil.copy(CAPTURES / name, tmp_path / name)
    return tmp_path


def test_one_job_per_id_and_run_across_three_column_sets(tmp_path: Path) -> None:
    res = reliab.ingest(_folder(tmp_path), policy="fleet")
    assert sorted(res.jobs["job_id"]) == sorted(["123", "20940996", "20963999_982", "176+0", "176+1",
                                                 "176+2", "39326011", "39326011"])
    jobs = res.jobs.set_index("job_id")
    failed = jobs.loc["20940996"]
    # merged fields: Submit from the daily dump, name/user/nodes from the ad-hoc capture
    assert failed["submit"] == pd.Timestamp("2021-07-08T04:09:15Z")
    assert (failed["name"], failed["user"], failed["nodelist"]) == ("4CGN1IHUEDFZL", "user6",
                                                                    "mycluster2-node205")
    assert jobs.loc["176+1", "name"] == "echo-echo-1" and jobs.loc["176+1", "partition"] == "compute"
    runs = res.jobs[res.jobs["job_id"] == "39326011"].sort_values("start")
    assert runs["state"].tolist() == ["REQUEUED", "COMPLETED"]
    assert runs["start"].tolist() == [pd.Timestamp("2021-04-05T03:34:18Z"), pd.Timestamp("2021-04-08T00:10:02Z")]
    assert int((res.signals["signal"] == "slurm:node_fail").sum()) == 1


@pytest.mark.parametrize("written", [False, True])
def test_node_fail_once_under_fleet_policy(tmp_path: Path, written: bool) -> None:
    out = {"output": tmp_path / "out"} if written else {}  # the engine that writes as it reads
    res = reliab.ingest(_folder(tmp_path / "in") if written else _folder(tmp_path), policy="fleet", **out)
    assert res.interruptions["job_id"].tolist() == ["123"]
    assert res.user_failures["job_id"].tolist() == ["20940996"]


def test_node_fail_once_under_training_run_policy(tmp_path: Path) -> None:
    # job 123 has no name in any capture: alone in the captures, the run is its job id
    for name in CAPTURE_NAMES:
        lines = (CAPTURES / name).read_text().splitlines(keepends=True)
        head = 2 if name.startswith("fixed") else 1  # header (and the fixed-width rule of dashes)
        keep = lines[:head] + [ln for ln in lines[head:] if re.search(r"(?:^|\|)123(?:\.0)?[|\s]", ln)]
        (tmp_path / name).write_text("".join(keep))
    res = reliab.ingest(tmp_path, policy="training-run")
    assert sorted(res.jobs["job_id"]) == ["123"]
    assert res.interruptions["job_id"].tolist() == ["123"]


def test_failed_run_once_under_training_run_policy(tmp_path: Path) -> None:
    res = reliab.ingest(_folder(tmp_path), policy="training-run")
    assert res.interruptions["job_id"].tolist() == ["20940996"]
    assert any("'4CGN1IHUEDFZL'" in n for n in res.notes)


def _row(origin: str, **kw: object) -> dict[str, object]:
    return {"job_id": "5005_2", "state": "FAILED", "state_raw": "FAILED", "origin": origin, **kw}


def test_conflicting_values_are_noted_and_the_ended_latest_copy_wins() -> None:
    t = pd.Timestamp("2024-06-01T00:00:00Z")
    jobs = conform(pd.DataFrame([
        _row("a.txt:2", start=t, end=t + pd.Timedelta("1h"), nodelist="n1"),
        _row("b.txt:2", start=t, end=t + pd.Timedelta("2h"), nodelist="n2", user="u"),
        _row("c.txt:9", start=t, state="RUNNING", state_raw="RUNNING")]), "jobs")
    kept, gone, notes = merge_job_copies(jobs)
    assert len(kept) == 1 and sorted(gone) == ["a.txt:2", "c.txt:9"]
    row = kept.iloc[0]
    assert (row["origin"], row["nodelist"], row["user"], row["end"]) == ("b.txt:2", "n2", "u", t + pd.Timedelta("2h"))
    assert any("5005_2" in n and "nodelist" in n and "n1" in n and "n2" in n for n in notes)
    assert not any("state" in n.split("5005_2", 1)[1] for n in notes)  # a running snapshot is no conflict


@pytest.mark.parametrize("second", ["2024-06-01T05:00:00Z", None])
def test_startless_copy_joins_the_run_with_its_end_or_stays_apart(second: str | None) -> None:
    t = pd.Timestamp("2024-06-01T00:00:00Z")
    runs = [_row("a.txt:2", start=t, end=t + pd.Timedelta("1h"), state="NODE_FAIL", state_raw="NODE_FAIL"),
            _row("a.txt:3", start=t + pd.Timedelta("2h"), end=t + pd.Timedelta("5h"))]
    copy = _row("b.txt:2", end=pd.Timestamp(second) if second else None, exit_code="1:0")
    kept, gone, _ = merge_job_copies(conform(pd.DataFrame([*runs, copy]), "jobs"))
    if second:  # same end as the second run: merged into it
        assert len(kept) == 2 and len(gone) == 1 and gone[0] in ("a.txt:3", "b.txt:2")
        run = kept[kept["start"] == t + pd.Timedelta("2h")].iloc[0]
        assert run["exit_code"] == "1:0" and run["end"] == pd.Timestamp(second)
    else:  # two runs and no start or end to tell which: not merged
        assert len(kept) == 3 and gone == []
