"""``slurm://`` against a real Slurm: munge, MariaDB, slurmdbd, slurmctld and three slurmd.

The session fixture starts the daemons (``tests/live_servers.py``), submits real jobs with
``sbatch`` that end COMPLETED (with an ``srun`` step), FAILED (exit 1), CANCELLED (``scancel``),
TIMEOUT (``--time=1``), REQUEUED then COMPLETED (``scontrol requeue``), NODE_FAIL (its node set
DOWN with ``scontrol update nodename=rn3 state=down``) and an array of three tasks, waits for
the accounting to record every end, and stops everything at the end of the session.  The
``sacct`` output reliab read is kept (``raw_dir``) under the pytest temporary folder and, when
``RELIAB_TEST_ARTIFACTS`` is set (CI), copied there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from live_servers import SLURM_BINARIES, SlurmCluster, missing, run, wait_for
from typer.testing import CliRunner

import reliab
from reliab.errors import SourceError
from reliab.io.sources.slurm import JSON_SINCE, probe

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("live_slurm")]
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "REQUEUED", "NODE_FAIL"}


def _artifacts(raw: Path, name: str) -> None:
    target = os.environ.get("RELIAB_TEST_ARTIFACTS")
    if target:
        dest = Path(target) / name
        shutil.copytree(raw, dest, dirs_exist_ok=True)
        print(f"sacct output read by the test kept in {dest}")


def _all_recorded(cluster: SlurmCluster, t0: pd.Timestamp, n: int) -> bool:
    out = run(["sacct", "-X", "-n", "-P", "--allusers", "--duplicates", "--format=State",
               f"--starttime={t0:%Y-%m-%dT%H:%M:%S}"], {**cluster.env, "TZ": "UTC"})
    states = [s.split()[0] for s in out.splitlines() if s.strip()]
    return len(states) >= n and all(s in FINAL for s in states)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A running cluster with one finished job per end state; yields what the tests need."""
    absent = missing(SLURM_BINARIES)
    if absent:
        pytest.skip(f"Slurm test servers not installed ({', '.join(absent)}); Debian: apt-get install"
                    " slurmctld slurmd slurmdbd slurm-client munge mariadb-server")
    root = tmp_path_factory.mktemp("slurm")
    cluster = SlurmCluster(root)
    try:
        cluster.start()
        t0 = pd.Timestamp.now(tz="UTC").floor("s") - pd.Timedelta(seconds=2)
        ids = {"tlimit": cluster.sbatch("tlimit", "--time=1", wrap="sleep 600"),
               "ok": cluster.sbatch("ok", wrap="srun true"),
               "fail": cluster.sbatch("fail", wrap="exit 1"),
               "arr": cluster.sbatch("arr", "--array=0-2", wrap="true"),
               "cancel": cluster.sbatch("cancel", wrap="sleep 600"),
               "rq": cluster.sbatch("rq", "--requeue", wrap='[ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] || sleep 600'),
               "nf": cluster.sbatch("nf", "--no-requeue", "--nodelist=rn3", wrap="sleep 600")}
        cluster.wait_running(ids["cancel"])
        run(["scancel", ids["cancel"]], cluster.env)
        cluster.wait_running(ids["rq"])
        run(["scontrol", "requeue", ids["rq"]], cluster.env)
        wait_for(lambda: cluster.squeue_state(ids["rq"]) == "PENDING", "requeued job pending", 60)
        run(["scontrol", "update", f"jobid={ids['rq']}", "StartTime=now"], cluster.env)  # skip the requeue delay
        cluster.wait_running(ids["nf"])
        run(["scontrol", "update", "nodename=rn3", "state=down", "reason=reliab-live-test"], cluster.env)
        cluster.wait_queue_empty(240)
        wait_for(lambda: _all_recorded(cluster, t0, 10), "accounting of every job end", 60, 1.0)
        t1 = pd.Timestamp.now(tz="UTC").ceil("s") + pd.Timedelta(seconds=2)
        raw = tmp_path_factory.mktemp("sacct-capture")
        yield {"cluster": cluster, "conf": str(cluster.conf), "t0": t0, "t1": t1, "ids": ids, "raw": raw}
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def read(slurm):
    """``reliab.ingest("slurm://")`` of the whole run in 20-second chunks, sacct output kept."""
    res = reliab.ingest("slurm://", start=slurm["t0"], end=slurm["t1"], chunk="20s",
                        slurm_conf=slurm["conf"], raw_dir=slurm["raw"])
    _artifacts(slurm["raw"], "live-slurm")
    return res


def _by_name(res) -> dict[str, pd.DataFrame]:
    return {name: g.sort_values("submit") for name, g in res.jobs.groupby("name")}


def test_every_end_state_comes_through(slurm, read):
    jobs = _by_name(read)
    ids = slurm["ids"]
    assert jobs["ok"]["state"].tolist() == ["COMPLETED"]
    assert jobs["fail"]["state"].tolist() == ["FAILED"]
    assert jobs["fail"]["exit_code"].tolist() == ["1:0"]
    assert jobs["cancel"]["state_raw"].tolist() == [f"CANCELLED by {os.getuid()}"]
    assert jobs["tlimit"]["state"].tolist() == ["TIMEOUT"]
    # --duplicates: the requeued run and the run after it, same job id
    assert jobs["rq"]["state"].tolist() == ["REQUEUED", "COMPLETED"]
    assert set(jobs["rq"]["job_id"]) == {ids["rq"]}
    assert jobs["nf"]["state"].tolist() == ["NODE_FAIL"]
    assert jobs["nf"]["nodelist"].tolist() == ["rn3"]
    assert sorted(jobs["arr"]["job_id"]) == [f"{ids['arr']}_{k}" for k in range(3)]
    assert set(jobs["arr"]["state"]) == {"COMPLETED"}
    assert (read.jobs["start"] >= slurm["t0"]).all() and (read.jobs["end"] <= slurm["t1"]).all()


def test_steps_are_read_and_counted_and_the_capture_is_kept(slurm, read):
    captures = sorted(slurm["raw"].glob("sacct_*.txt"))
    assert len(captures) == (read.accounting["source"] == "sacct").sum() > 1
    text = "".join(p.read_text() for p in captures)
    ok = slurm["ids"]["ok"]
    assert f"\n{ok}.batch|" in text and f"\n{ok}.0|" in text  # the srun step
    acc = read.accounting
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    assert acc["malformed"].sum() == 0
    # every line of every capture is accounted for: steps and repeats are irrelevant lines
    sacct = acc[acc["source"] == "sacct"]
    assert sacct["lines"].sum() == sum(len(p.read_text().splitlines()) for p in captures)
    assert sacct["parsed"].sum() == len(read.jobs)


def test_chunks_return_each_record_once(slurm, read):
    whole = reliab.ingest("slurm://", start=slurm["t0"], end=slurm["t1"], chunk="1D", slurm_conf=slurm["conf"])
    assert (whole.accounting["source"] == "sacct").sum() == 1
    cols = ["job_id", "name", "state", "state_raw", "exit_code", "submit", "start", "end", "nodelist"]
    key = ["job_id", "submit"]
    a = read.jobs[cols].sort_values(key).reset_index(drop=True)
    b = whole.jobs[cols].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert not read.jobs.duplicated(["job_id", "submit", "start"]).any()
    # the time-limit job ran ~1-2 min, through several 20 s chunks: repeats were dropped
    assert read.accounting["irrelevant"].sum() > whole.accounting["irrelevant"].sum()


def test_without_duplicates_only_the_last_run_of_a_requeued_job(slurm):
    res = reliab.ingest("slurm://", start=slurm["t0"], end=slurm["t1"], duplicates=False,
                        slurm_conf=slurm["conf"], events=False)
    assert res.jobs.loc[res.jobs["name"] == "rq", "state"].tolist() == ["COMPLETED"]


def test_interruptions_follow_the_policy_and_name_the_failed_node(slurm, read):
    """Fleet view (the default; Kokolis et al., HPCA 2025, §III): NODE_FAIL counts, the FAILED
    job without infrastructure evidence is a user failure set apart, CANCELLED, TIMEOUT and a
    REQUEUED without evidence are not interruptions.  Training-run view (Llama 3 §3.3.4) of the
    requeued job: its REQUEUED end is an interruption."""
    ids = slurm["ids"]
    assert read.policy == "fleet"
    inter = read.interruptions.set_index("job_id")
    assert dict(zip(inter.index, inter["job_state"], strict=True)) == {ids["nf"]: "NODE_FAIL"}
    assert read.user_failures["job_id"].tolist() == [ids["fail"]]
    # the node set DOWN is named: the sacctmgr event on rn3 is the evidence of the NODE_FAIL
    nf = inter.loc[ids["nf"]]
    assert nf["hosts"] == "rn3"
    assert nf["attribution"] == "rule:slurm-node-down"
    down = read.signals[read.signals["signal"] == "node_state:down"]
    assert down["host"].tolist() == ["rn3"] and "reliab-live-test" in down["message"].iloc[0]
    assert down["origin"].iloc[0] in nf["evidence"].split(";")
    assert abs(down["time"].iloc[0] - nf["time"]) <= pd.Timedelta(seconds=5)
    run = reliab.ingest("slurm://", start=slurm["t0"], end=slurm["t1"], slurm_conf=slurm["conf"],
                        policy="training-run", job_name="rq")
    assert run.interruptions[["job_id", "job_state"]].values.tolist() == [[ids["rq"], "REQUEUED"]]


def test_json_output_of_this_client(slurm, read):
    """``--json`` gives the same records; Slurm < 23.02 loses the exit code of a failed job."""
    res = reliab.ingest("slurm://", start=slurm["t0"], end=slurm["t1"], sacct_format="json",
                        slurm_conf=slurm["conf"], events=False)
    key = ["job_id", "state", "start", "end"]
    a = res.jobs[key].sort_values(key).reset_index(drop=True)
    b = read.jobs[key].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    client = probe(["sacct"], "slurm://", {"SLURM_CONF": slurm["conf"]}, 30)
    fail = res.jobs.loc[res.jobs["name"] == "fail", "exit_code"].tolist()
    assert fail == (["1:0"] if client.full_json else ["0:0"]), client.version
    assert client.full_json is (client.version[:2] >= JSON_SINCE)


# ---------------------------------------------------------------- errors: one line, nothing written
def _one_line_cli_error(args: list[str], out: Path) -> str:
    from reliab.cli import app

    result = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("reliab: error: "), result.output
    assert not out.exists()
    return lines[0]


def test_sacct_not_installed(slurm, tmp_path):
    with pytest.raises(SourceError, match="sacct is not installed"):
        reliab.ingest("slurm://", start=slurm["t0"], sacct_command=str(tmp_path / "no" / "sacct"))


def test_no_slurmdbd(slurm, tmp_path):
    conf = tmp_path / "slurm.conf"
    text = Path(slurm["conf"]).read_text()
    port = next(line for line in text.splitlines() if line.startswith("AccountingStoragePort="))
    conf.write_text(text.replace(port, "AccountingStoragePort=1"))
    raw = tmp_path / "raw"
    line = _one_line_cli_error(["ingest", "slurm://", "--start", str(slurm["t0"]), "--slurm-conf", str(conf),
                                "--raw-dir", str(raw)], tmp_path / "out")
    assert "sacct failed (exit 1)" in line and "Connection refused" in line
    assert not raw.exists()


def test_permission_denied(slurm):
    """A slurm.conf the user may not read (as root: run sacct as ``nobody``)."""
    folder = Path(tempfile.mkdtemp(prefix="reliab-perm-"))  # traversable, unlike pytest's tmp
    try:
        folder.chmod(0o755)
        conf = folder / "slurm.conf"
        shutil.copyfile(slurm["conf"], conf)
        conf.chmod(0o600 if os.geteuid() == 0 else 0o000)
        command = ["runuser", "-u", "nobody", "--", "sacct"] if os.geteuid() == 0 else ["sacct"]
        with pytest.raises(SourceError) as info:
            reliab.ingest("slurm://", start=slurm["t0"], sacct_command=command, slurm_conf=conf)
    finally:
        shutil.rmtree(folder)
    message = str(info.value)
    assert "\n" not in message and f'unable to read "{conf}": Permission denied' in message


def test_empty_window(slurm, tmp_path):
    line = _one_line_cli_error(["ingest", "slurm://", "--start", "2001-01-01", "--end", "2001-01-02",
                                "--slurm-conf", slurm["conf"]], tmp_path / "out")
    assert "sacct found no jobs between 2001-01-01T00:00:00 and 2001-01-02T00:00:00 UTC" in line


def test_cli_reads_the_cluster(slurm, tmp_path):
    from reliab.cli import app

    out = tmp_path / "tables"
    result = CliRunner().invoke(app, ["ingest", "slurm://", "--start", slurm["t0"].isoformat(),
                                      "--end", slurm["t1"].isoformat(), "--chunk", "1min",
                                      "--slurm-conf", slurm["conf"], "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    jobs = reliab.schema.read_parquet(str(out / "jobs.parquet"), "jobs")
    assert set(jobs["state"]) == FINAL
    acc = reliab.schema.read_parquet(str(out / "accounting.parquet"), "accounting")
    assert acc["path"].str.startswith("slurm://?start=").all() and len(acc) >= 2


def test_bad_arguments_fail_before_sacct_runs():
    """Without a server the window and options are still checked before anything runs."""
    with pytest.raises(ValueError, match="start= is required"):
        reliab.ingest("slurm://")
    with pytest.raises(ValueError, match="end=.* must be after start="):
        reliab.ingest("slurm://", start="2024-06-02", end="2024-06-01")
    with pytest.raises(ValueError, match="chunk="):
        reliab.ingest("slurm://", start="2024-06-01", chunk="-1h")
    with pytest.raises(ValueError, match="unknown query key 'foo'"):
        reliab.ingest("slurm://?foo=1", start="2024-06-01")


def test_report_names_source_and_window_of_each_table(slurm, read):
    from reliab.report.document import Table
    from reliab.report.quality import quality_section

    section = quality_section(read.accounting, read.quarantine, 5,
                              tables={"signals": read.signals, "jobs": read.jobs, "telemetry": read.telemetry})
    where = next(b for b in section.blocks if isinstance(b, Table) and b.title == "Where each table comes from")
    rows = where.data.set_index(["Table", "From"])
    asked = f"{slurm['t0']:%Y-%m-%dT%H:%M:%S} – {slurm['t1']:%Y-%m-%dT%H:%M:%S}"
    assert rows.loc[("jobs", "slurm:// (sacct)"), "Window asked"] == asked
    assert rows.loc[("jobs", "slurm:// (sacct)"), "Rows"] == str(len(read.jobs))
    assert rows.loc[("signals", "slurm:// (sacctmgr_events)"), "Rows"] == "1"
