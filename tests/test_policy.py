"""What counts as an interruption: the fleet and training-run policies, on sacct text.

Reference: the fleet rule is that of Kokolis et al., "Revisiting Reliability in Large-Scale
Machine Learning Research Clusters" (HPCA 2025, arXiv 2410.21680, §III): NODE_FAIL, or
FAILED with a cause detected from 10 minutes before to 5 minutes after the job's end; the
RSC-1 end-state mix (60 % COMPLETED, 24 % FAILED, 10 % PREEMPTED, 2 % REQUEUED, 0.6 %
TIMEOUT, 0.1 % NODE_FAIL, 0.1 % OUT_OF_MEMORY) is that paper's Fig. 3.  The training-run
rule is the Llama 3 report's count (arXiv 2407.21783 §3.3.4).  The sacct text below follows
``sacct(1)`` (Slurm 25.11) ``--parsable2`` output; the kernel lines are NVRM Xid, mlx5 and
NVMe lines in rsyslog RFC 3339 form, and the SEL line is ``ipmitool sel list`` output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.schema import validate

T0 = pd.Timestamp("2024-03-01T00:00:00Z")
#: RSC-1 end states of 1,000 allocations (Kokolis et al., Fig. 3); CANCELLED takes the rest
RSC1_MIX = {"COMPLETED": 600, "FAILED": 240, "PREEMPTED": 100, "REQUEUED": 20, "TIMEOUT": 6,
            "NODE_FAIL": 1, "OUT_OF_MEMORY": 1, "CANCELLED": 32}
EXIT = {"COMPLETED": "0:0", "FAILED": "1:0", "PREEMPTED": "0:0", "REQUEUED": "0:0",
        "TIMEOUT": "0:0", "NODE_FAIL": "0:0", "OUT_OF_MEMORY": "0:125", "CANCELLED": "0:0"}
XID79 = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
XID48 = ("NVRM: Xid (PCI:0000:2a:00): 48, pid=2000001, name=pt_main_thread, An uncorrectable "
         "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, "
         "subpartition 0.")
# Xid 13 text as in the gpud fixture dmesg.decode.iso.log (leptonai/gpud, Apache-2.0)
XID13 = ("NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global "
         "Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors")
LINK = "mlx5_core 0000:1a:00.0 ens1f0np0: Link down"
NVME = "nvme nvme3: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff"
HW_TEXTS = (XID79, XID48, LINK, NVME)


def _iso(t: pd.Timestamp) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _syslog(t: pd.Timestamp, host: str, text: str, prog: str = "kernel") -> str:
    return f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}+00:00 {host} {prog}: {text}"


def _sacct_rows(i: int, state: str, end: pd.Timestamp, rng: np.random.Generator) -> list[str]:
    """Allocation and ``.batch`` rows of job ``i`` (sacct -P, default-like columns)."""
    job, host, uid = 500_000 + i, f"n{i + 1:04d}", 20_000 + int(rng.integers(100))
    start = end - pd.Timedelta(minutes=int(rng.integers(20, 50)))
    raw = f"CANCELLED by {uid}" if state == "CANCELLED" else state
    head = f"{job}|job{i % 7}|user{uid}|batch|{raw}|{EXIT[state]}|{_iso(start - pd.Timedelta('3min'))}"
    if state == "CANCELLED" and i % 3 == 0:  # cancelled while pending: never started
        return [f"{head}|None|{_iso(end)}|1|None assigned|"]
    tres = "billing=8,cpu=8,gres/gpu=8,mem=64G,node=1"
    step = {"COMPLETED": "COMPLETED|0:0", "FAILED": "FAILED|1:0", "OUT_OF_MEMORY": "OUT_OF_MEMORY|0:125"}
    return [f"{head}|{_iso(start)}|{_iso(end)}|1|{host}|{tres}",
            f"{job}.batch|batch|||{step.get(state, 'CANCELLED|0:15')}|{_iso(start)}|{_iso(start)}|"
            f"{_iso(end)}|1|{host}|cpu=8,gres/gpu=8,mem=64G,node=1"]


def _rsc_logs(root: Path) -> dict[str, object]:
    """Write sacct, kernel and SEL text for 1,000 allocations; return the hand-made truth."""
    rng = np.random.default_rng(2410_21680)
    states = np.array([s for s, n in RSC1_MIX.items() for _ in range(n)], dtype=object)
    states = states[rng.permutation(len(states))]
    ends = [T0 + pd.Timedelta(hours=i + 1) for i in range(len(states))]
    idx = {s: [i for i in range(len(states)) if states[i] == s] for s in RSC1_MIX}
    failed, requeued = idx["FAILED"], idx["REQUEUED"]
    kernel: list[tuple[pd.Timestamp, str]] = []
    host = [f"n{i + 1:04d}" for i in range(len(states))]

    def put(i: int, offset: str, text: str, where: str | None = None) -> None:
        t = ends[i] + pd.Timedelta(offset)
        kernel.append((t, _syslog(t, where or host[i], text)))

    hardware = failed[:12]  # in the window, on the job's node: infrastructure evidence
    for k, i in enumerate(hardware):
        put(i, f"-{30 + 45 * k}s", HW_TEXTS[k % len(HW_TEXTS)])
    for i in failed[12:15]:  # 11 minutes before the end: outside the window
        put(i, "-11min", XID79)
    for i in failed[15:18]:  # in the window but on a node the job did not use
        put(i, "-2min", XID79, where="n9999")
    for i in failed[18:22]:  # an application Xid (NVIDIA: RESTART_APP): user code
        put(i, "-1min", XID13)
    sel_job = failed[22]  # a PSU loss only the BMC saw
    for i in requeued[:2]:
        put(i, "+4min", XID79)  # 4 minutes after the end: inside [end - 10, end + 5]
    not_counted = [idx["CANCELLED"][1], idx["TIMEOUT"][0], idx["PREEMPTED"][0]]
    for i in not_counted:  # hardware evidence does not make these interruptions
        put(i, "-1min", XID79)
    for k in range(200):  # ordinary chatter
        t = T0 + pd.Timedelta(minutes=17 * k + 3)
        kernel.append((t, _syslog(t, host[k], "Accepted publickey for svc-health from 10.1.2.3 "
                                             "port 51234 ssh2", prog="sshd[4242]")))
    (root / "slurm").mkdir(parents=True)
    (root / "syslog").mkdir()
    (root / "ipmi").mkdir()
    rows = ["JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|NNodes|NodeList|AllocTRES"]
    for i, (s, e) in enumerate(zip(states, ends, strict=True)):
        rows += _sacct_rows(i, s, e, rng)
    (root / "slurm" / "sacct.txt").write_text("\n".join(rows) + "\n")
    lines = [text for _, text in sorted(kernel, key=lambda x: x[0])]
    (root / "syslog" / "messages").write_text("\n".join(lines) + "\n")
    t = ends[sel_job] - pd.Timedelta("90s")
    (root / "ipmi" / f"{host[sel_job]}.sel").write_text(
        f"   1 | {t:%m/%d/%Y} | {t:%H:%M:%S} | Power Supply #0xfb | Power Supply AC lost | Asserted\n")
    ids = [str(500_000 + i) for i in range(len(states))]
    counted = hardware + [sel_job] + requeued[:2] + idx["NODE_FAIL"]
    return {"ids": ids, "states": states, "counted": {ids[i] for i in counted},
            "user": {ids[i] for i in failed} - {ids[i] for i in hardware + [sel_job]},
            "app_xid": {ids[i] for i in failed[18:22]}, "node_fail": ids[idx["NODE_FAIL"][0]],
            "hardware_hosts": {host[i] for i in hardware + requeued[:2]}, "sel_host": host[sel_job]}


@pytest.fixture(scope="module")
def rsc(tmp_path_factory) -> tuple[reliab.IngestResult, dict[str, object]]:
    root = tmp_path_factory.mktemp("rsc1")
    truth = _rsc_logs(root)
    return reliab.ingest(root), truth


def test_rsc1_mix_fleet_counts_node_fail_and_failed_with_evidence(rsc) -> None:
    """Reference: the fleet view counts exactly NODE_FAIL + FAILED/REQUEUED with evidence in the window."""
    res, truth = rsc
    assert res.policy == "fleet" and len(res.jobs) == 1000
    inter = res.interruptions
    assert set(inter["job_id"]) == truth["counted"] and len(inter) == 16
    assert inter.set_index("job_id").loc[truth["node_fail"], "evidence_kind"] == "none"
    by_state = inter["job_state"].value_counts().to_dict()
    assert by_state == {"FAILED": 13, "REQUEUED": 2, "NODE_FAIL": 1}
    assert not inter["planned"].any()
    sel_row = inter[inter["hosts"] == truth["sel_host"]]
    assert list(sel_row["category"]) == ["Power Supply"]


def test_rsc1_mix_user_failures_are_kept_apart(rsc) -> None:
    """Reference: FAILED without infrastructure evidence (outside the window, another node, Xid 13) is a user failure."""
    res, truth = rsc
    user = res.user_failures
    validate(user, "interruptions")
    assert set(user["job_id"]) == truth["user"] and len(user) == 240 - 13
    assert set(user["job_state"]) == {"FAILED"}
    app = user[user["job_id"].isin(truth["app_xid"])]
    assert set(app["category"]) == {"Software Bug"} and set(app["evidence_kind"]) == {"other"}
    assert set(user["job_id"]) & set(res.interruptions["job_id"]) == set()
    notes = " ".join(res.notes)
    assert "227 FAILED job(s) without infrastructure evidence" in notes
    assert "Not interruptions: 600 COMPLETED, 100 PREEMPTED, 32 CANCELLED, 18 REQUEUED, 6 TIMEOUT, 1 OUT_OF_MEMORY." in notes


def test_rsc1_mix_every_job_has_one_outcome(rsc) -> None:
    """Regression: job_outcomes accounts for every ended allocation once; the summary adds up."""
    res, truth = rsc
    out = reliab.job_outcomes(res.signals, res.jobs)
    assert out.n == 1000 and out.outcomes["job_id"].is_unique
    table = out.summary()
    assert table.loc["Total", "total"] == 1000
    assert table.loc["Total", "interruption"] == 16 and table.loc["Total", "user_failure"] == 227
    assert table.loc["CANCELLED", "not_interruption"] == 32
    assert out.headline().startswith("policy fleet: 16 interruption(s) (0 planned), 227 user")
    assert json.loads(json.dumps(out.to_dict()))["policy"] == "fleet"
    assert "JobOutcomes" in out._repr_html_()


def test_rsc1_mix_coverage_notes(rsc) -> None:
    """Regression: coverage per interruption and the notes on missing families."""
    res, truth = rsc
    kinds = res.interruptions["evidence_kind"].value_counts().to_dict()
    assert kinds == {"hardware": 15, "none": 1}
    notes = res.notes
    assert notes[0].startswith("Interruption policy 'fleet'")
    assert any(n.startswith("Evidence coverage of 16 interruption(s): 15 by hardware evidence") for n in notes)
    # the PSU host has SEL evidence but no kernel-log signal anywhere: said, not a warning (1 of 15)
    gap = [n for n in notes if "no kernel-log signal" in n]
    assert len(gap) == 1 and gap[0].startswith("1 of 15 host(s)") and truth["sel_host"] in gap[0]
    assert any(n.startswith("No training-job logs were read") for n in notes)
    assert not any(n.startswith("Warning: ") for n in notes)  # 1 of 16 without evidence is < 20 %


def test_rsc1_mix_training_run_view_of_one_job_name(rsc) -> None:
    """Regression: the training-run view keeps one job name and counts every non-COMPLETED end of it."""
    res, _ = rsc
    jobs = res.jobs
    name = str(jobs.loc[jobs["state"] == "TIMEOUT", "name"].iloc[0])  # a name with every state
    run = reliab.job_outcomes(res.signals, jobs, policy="training-run", job_name=name)
    mine = jobs[jobs["name"] == name]
    ended = mine[mine["end"].notna()]
    pending = (ended["state"] == "CANCELLED") & ended["start"].isna()  # never ran: not interrupted
    expected = int(((ended["state"] != "COMPLETED") & ~pending).sum())
    assert pending.any()
    assert len(run.interruptions) == expected
    assert set(run.interruptions["job_id"]) <= set(mine["job_id"])
    inter = run.interruptions
    state_only = inter[inter["evidence_kind"] != "hardware"]  # decided by the end state alone
    assert state_only.loc[state_only["job_state"].isin(["TIMEOUT", "PREEMPTED"]), "planned"].all()
    unplanned = ["FAILED", "REQUEUED", "OUT_OF_MEMORY", "CANCELLED", "NODE_FAIL"]
    assert not state_only.loc[state_only["job_state"].isin(unplanned), "planned"].any()
    assert set(inter["job_state"]) >= {"TIMEOUT", "PREEMPTED", "FAILED"}
    assert (run.outcomes["outcome"] == "outside_run").sum() == 1000 - len(ended)


def _run_jobs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A training run requeued twice under one JobID (sacct -D), resubmitted, plus other users' jobs."""
    text = "\n".join([
        "JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|NNodes|NodeList|Restarts|AllocTRES",
        "7001|llama-70b|svc|train|NODE_FAIL|0:0|2024-05-01T00:00:00|2024-05-01T00:05:00|2024-05-01T09:00:00|64|gpu[001-064]|0|gres/gpu=512,node=64",
        "7001|llama-70b|svc|train|REQUEUED|0:0|2024-05-01T09:01:00|2024-05-01T09:20:00|2024-05-01T20:00:00|64|gpu[001-063,065]|1|gres/gpu=512,node=64",
        "7001|llama-70b|svc|train|FAILED|1:0|2024-05-01T20:01:00|2024-05-01T20:30:00|2024-05-02T08:00:00|64|gpu[001-063,065]|2|gres/gpu=512,node=64",
        "7005|llama-70b|svc|train|CANCELLED by 0|0:15|2024-05-02T08:10:00|2024-05-02T08:30:00|2024-05-02T12:00:00|64|gpu[001-063,065]|0|gres/gpu=512,node=64",
        "7009|llama-70b|svc|train|TIMEOUT|0:0|2024-05-02T12:10:00|2024-05-02T12:30:00|2024-05-04T12:30:00|64|gpu[001-063,065]|0|gres/gpu=512,node=64",
        "7012|llama-70b|svc|train|COMPLETED|0:0|2024-05-04T12:40:00|2024-05-04T13:00:00|2024-05-05T13:00:00|64|gpu[001-063,065]|0|gres/gpu=512,node=64",
        "7013|llama-70b|svc|train|RUNNING|0:0|2024-05-05T13:10:00|2024-05-05T13:30:00|Unknown|64|gpu[001-063,065]|0|gres/gpu=512,node=64",
        "7002|eval|alice|dev|FAILED|1:0|2024-05-01T01:00:00|2024-05-01T01:00:05|2024-05-01T02:00:00|1|gpu200|0|gres/gpu=8,node=1",
        "7003|eval|bob|dev|CANCELLED by 30154|0:0|2024-05-01T03:00:00|None|2024-05-01T03:30:00|1|None assigned|0|",
    ])
    return text, pd.DataFrame([
        {"time": pd.Timestamp("2024-05-02T07:58:00Z"), "host": "gpu017", "gpu": None, "job_id": None,
         "source": "kernel", "signal": "xid:79", "severity": "critical", "message": XID79,
         "origin": "messages:1"}])


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> tuple[pd.DataFrame, pd.DataFrame]:
    text, signals = _run_jobs()
    path = tmp_path_factory.mktemp("chain") / "sacct.txt"
    path.write_text(text + "\n")
    jobs = reliab.ingest(path, source="sacct").jobs
    return reliab.schema.conform(signals, "signals"), jobs


def test_training_run_on_a_requeue_chain(chain) -> None:
    """Reference: the run counts every non-COMPLETED end of its JobID's requeues and of its resubmissions."""
    signals, jobs = chain
    run = reliab.job_outcomes(signals, jobs, policy="training-run")
    assert run.run == "llama-70b"
    inter = run.interruptions
    assert list(inter["job_state"]) == ["NODE_FAIL", "REQUEUED", "FAILED", "CANCELLED", "TIMEOUT"]
    assert list(inter["job_id"]) == ["7001", "7001", "7001", "7005", "7009"]
    assert list(inter["planned"]) == [False, False, False, True, True]
    assert list(inter["attribution"]) == ["no evidence", "no evidence", "rule:xid-79",
                                          "rule:slurm-cancelled-admin", "rule:slurm-time-limit"]
    assert list(inter["evidence_kind"]) == ["none", "none", "hardware", "other", "other"]
    out = run.outcomes.set_index("job_id")["outcome"]
    assert out["7002"] == out["7003"] == "outside_run" and out["7012"] == "not_interruption"
    assert "7013" not in out.index  # still running
    assert any(n == "Not ended, not counted: 1 RUNNING." for n in run.notes)


def test_fleet_view_of_the_same_chain(chain) -> None:
    """Reference: fleet counts NODE_FAIL and the FAILED run with Xid 79; the FAILED eval job is a user failure."""
    signals, jobs = chain
    fleet = reliab.job_outcomes(signals, jobs)
    assert list(zip(fleet.interruptions["job_id"], fleet.interruptions["job_state"], strict=True)) == [
        ("7001", "NODE_FAIL"), ("7001", "FAILED")]
    assert list(fleet.user_failures["job_id"]) == ["7002"]
    reasons = fleet.outcomes.set_index(["job_id", "state"])["reason"]
    assert reasons[("7001", "REQUEUED")].endswith("without infrastructure evidence")
    assert reasons[("7003", "CANCELLED")].startswith("CANCELLED: ")
    # the Xid is 2 minutes before the FAILED end and on gpu017 of the nodelist
    assert fleet.interruptions["evidence_kind"].tolist() == ["none", "hardware"]


def test_job_name_chooses_the_run_and_bad_arguments_name_the_parameter(chain) -> None:
    """Regression: job_name selects the run; errors name the parameter."""
    signals, jobs = chain
    run = reliab.job_outcomes(signals, jobs, policy="training-run", job_name="eval")
    assert list(run.interruptions["job_id"]) == ["7002"] and run.run == "eval"
    reason = run.outcomes.set_index("job_id").loc["7003", "reason"]
    assert reason == "CANCELLED while pending: the run was not interrupted"
    assert any("job_name='eval'" in n for n in run.notes)
    with pytest.raises(ValueError, match="policy"):
        reliab.job_outcomes(signals, jobs, policy="cluster")
    with pytest.raises(ValueError, match="job_name"):
        reliab.job_outcomes(signals, jobs, job_name="llama-70b")  # fleet has no run
    with pytest.raises(ValueError, match="job_name"):
        reliab.attribute(signals, jobs, policy="training-run", job_name="")
    both = reliab.job_outcomes(signals, jobs, policy="training_run", job_name=["eval", "llama-70b"])
    assert both.policy == "training-run" and len(both.interruptions) == 6


def test_unnamed_jobs_chain_by_job_id(chain) -> None:
    """Regression: without job names the run is the job id with the most GPU-hours, requeues included."""
    signals, jobs = chain
    anon = jobs.assign(name=pd.NA).astype({"name": "string"})
    run = reliab.job_outcomes(signals, anon, policy="training-run")
    assert run.run == "7009"  # 48 h x 512 GPUs beats 7001's three runs (8.9 + 10.7 + 11.5 h)
    assert list(run.interruptions["job_id"]) == ["7009"]
    assert any("no job has a name" in n for n in run.notes)


GC3PIE = Path(__file__).parent / "reference" / "policy"
GC3PIE_FIELDS = "jobid,exitcode,state,ncpus,elapsed,totalcpu,submit,start,end,maxrss,maxvmsize"


@pytest.mark.parametrize("name,state,fleet,run_planned", [
    ("completed", "COMPLETED", "not_interruption", None),
    ("cancelled", "CANCELLED", "not_interruption", False),
    ("node-fail", "NODE_FAIL", "interruption", False),
    ("timeout", "TIMEOUT", "not_interruption", True),
])
def test_real_sacct_captures(name: str, state: str, fleet: str, run_planned: bool | None) -> None:
    """Reference: GC3Pie's real sacct captures (tests/reference/policy/SOURCE.md) under both policies."""
    res = reliab.ingest(GC3PIE / f"gc3pie-sacct-{name}.txt", source="sacct", fields=GC3PIE_FIELDS)
    assert list(res.jobs["job_id"]) == ["123"] and list(res.jobs["state"]) == [state]
    out = reliab.job_outcomes(res.signals, res.jobs)
    assert list(out.outcomes["outcome"]) == [fleet]
    run = reliab.job_outcomes(res.signals, res.jobs, policy="training-run")
    assert run.run == "123"
    if run_planned is None:
        assert run.interruptions.empty
    else:
        assert list(run.interruptions["planned"]) == [run_planned]
    if fleet == "interruption":  # NODE_FAIL and nothing else handed over: every family is missing
        warnings = [n for n in res.notes if n.startswith("Warning: ")]
        assert any("1 of 1 interruptions (100%) have no evidence" in w for w in warnings)
        assert any("no kernel logs" in w for w in warnings)
        assert any("no IPMI SEL" in w for w in warnings)


def test_no_slurm_records_and_empty_sel_are_said(tmp_path: Path) -> None:
    """Regression: no jobs gives a warning; an SEL file read without entries counts as handed over."""
    (tmp_path / "messages").write_text(_syslog(T0, "n0001", XID79) + "\n")
    res = reliab.ingest(tmp_path / "messages")
    assert res.interruptions.empty
    assert any(n.startswith("Warning: no Slurm job records") for n in res.notes)
    text, signals = _run_jobs()
    jobs = reliab.ingest(_write(tmp_path / "sacct.txt", text), source="sacct").jobs
    signals = reliab.schema.conform(signals, "signals")
    without = reliab.job_outcomes(signals, jobs)
    assert any(n.startswith("Warning: no IPMI SEL") for n in without.notes)
    with_sel = reliab.job_outcomes(signals, jobs, sources=["kernel", "sel", "sacct"])
    assert not any("IPMI SEL" in n for n in with_sel.notes)


def _write(path: Path, text: str) -> Path:
    path.write_text(text + "\n")
    return path


def test_attribute_defaults_to_fleet(chain) -> None:
    """Regression: attribute() without a policy is the fleet view, and says nothing else."""
    signals, jobs = chain
    assert list(reliab.attribute(signals, jobs)["job_state"]) == ["NODE_FAIL", "FAILED"]
    assert len(reliab.attribute(signals, jobs, policy="training-run")) == 5


GCM = Path(__file__).parent / "reference" / "real_world" / "sacct" / "gcm-sacct-P-jobid-state-start-end.log"


@pytest.mark.skipif(not GCM.exists(), reason="real-world sacct corpus not in this checkout")
def test_meta_gcm_capture_under_both_policies() -> None:
    """Reference: Meta GCM's real `sacct -P --format=JobID,State,Start,End` capture (33 allocations).

    Written by hand from the text: 12 COMPLETED, 14 'CANCELLED by 1185300516', 2 REQUEUED,
    2 FAILED (39387491, 39586130), 1 TIMEOUT, 2 OUT_OF_MEMORY; no log evidence handed over.
    Fleet: no interruption, the 2 FAILED are user failures, the other 31 are not counted, and
    the missing kernel logs and SEL are warned about.  Training-run: no job has a name, so
    the run is the job id with the most allocation-hours, REQUEUED 38872175 (04-04 23:59 ->
    04-07 23:55, 71.9 h, beating 39125563's 70.0 h): one unplanned interruption.
    """
    res = reliab.ingest(GCM, source="sacct")
    assert len(res.jobs) == 33 and res.interruptions.empty
    assert sorted(res.user_failures["job_id"]) == ["39387491", "39586130"]
    assert "Not interruptions: 14 CANCELLED, 12 COMPLETED, 2 REQUEUED, 2 OUT_OF_MEMORY, 1 TIMEOUT." in res.notes
    warnings = [n for n in res.notes if n.startswith("Warning: ")]
    assert any("no kernel logs" in w and "user failure" in w for w in warnings)
    assert any("no IPMI SEL" in w for w in warnings)
    run = reliab.job_outcomes(res.signals, res.jobs, policy="training-run")
    assert run.run == "38872175"
    assert list(zip(run.interruptions["job_id"], run.interruptions["job_state"], run.interruptions["planned"],
                    strict=True)) == [("38872175", "REQUEUED", False)]
