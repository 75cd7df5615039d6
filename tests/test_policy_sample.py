"""Both interruption policies on the bundled Llama-3-scale sample, and their invariants.

Simulation with known truth: the generator writes the training run's 466 interruptions
(Llama 3 Table 5: 419 unexpected + 47 planned) and other users' jobs with no evidence near
their ends (``truth/other_jobs.csv``).  The training-run policy must give Table 5; the
fleet policy (Kokolis et al., HPCA 2025) must set apart the run's ends that have no
infrastructure evidence (Software Bug: application Xids and CUDA errors; NCCL Watchdog
Timeouts: NCCL lines only) and every other user's FAILED job.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reliab
from reliab.datasets import sample_path
from reliab.schema import conform
from reliab.taxonomy.vocabulary import TABLE5_COUNTS

USER_CATEGORIES = ("Software Bug", "NCCL Watchdog Timeouts")


@pytest.fixture(scope="module")
def sample(sample_ingest) -> reliab.IngestResult:
    return sample_ingest


@pytest.fixture(scope="module")
def fleet(sample) -> reliab.JobOutcomes:
    return reliab.job_outcomes(sample.signals, sample.jobs, policy="fleet",
                               sources=sample.accounting["source"].unique())


def _truth() -> tuple[pd.DataFrame, pd.DataFrame]:
    truth = sample_path() / "truth"
    return (pd.read_csv(truth / "interruptions.csv", dtype={"job_id": str}),
            pd.read_csv(truth / "other_jobs.csv", dtype={"job_id": str}))


def test_training_run_policy_gives_table5(sample) -> None:
    """Reference: the sample under the policy it declares reproduces Table 5 (419 + 47)."""
    assert sample.policy == "training-run"
    inter = sample.interruptions
    assert inter.loc[~inter["planned"], "category"].value_counts().to_dict() == dict(TABLE5_COUNTS)
    assert int(inter["planned"].sum()) == 47 and sample.user_failures.empty
    assert sample.notes[0].startswith("Interruption policy 'training-run'")
    assert any("'llama3-405b-pretrain' (the job name with the most GPU-hours" in n for n in sample.notes)
    assert any("143 ended allocation(s) of other jobs are outside the training run" in n for n in sample.notes)


def test_fleet_policy_on_the_sample(fleet) -> None:
    """Simulation: fleet = 419 - 54 Software Bug - 7 NCCL = 358; user failures = those 61 + 37 other FAILED jobs."""
    truth, others = _truth()
    expect = truth.loc[~truth["planned"] & ~truth["category"].isin(USER_CATEGORIES), "job_id"]
    inter = fleet.interruptions
    assert len(inter) == 358 and set(inter["job_id"]) == set(expect)
    assert not inter["planned"].any()  # planned ends were CANCELLED by 0: not interruptions
    run_user = truth.loc[truth["category"].isin(USER_CATEGORIES), "job_id"]
    other_failed = others.loc[others["state"] == "FAILED", "job_id"]
    assert len(other_failed) == 37
    assert set(fleet.user_failures["job_id"]) == set(run_user) | set(other_failed)
    assert len(fleet.user_failures) == 98
    # the categories the taxonomy gives them stay visible
    cats = fleet.user_failures.set_index("job_id").loc[list(run_user), "category"]
    assert set(cats) == set(USER_CATEGORIES)


def test_other_users_jobs_are_never_interruptions(fleet, sample) -> None:
    """Simulation: no other user's job counts, under either policy; each state is in the sample."""
    _, others = _truth()
    assert set(others["state"]) == {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
                                    "PREEMPTED"}
    assert others["state_raw"].str.match(r"CANCELLED by \d+$").sum() == (others["state"] == "CANCELLED").sum()
    out = fleet.outcomes.set_index("job_id").loc[list(others["job_id"])]
    assert set(out.loc[out["state"] == "FAILED", "outcome"]) == {"user_failure"}
    assert set(out.loc[out["state"] != "FAILED", "outcome"]) == {"not_interruption"}
    assert not set(others["job_id"]) & set(sample.interruptions["job_id"])
    table = fleet.summary()
    assert table.loc["Total", "interruption"] == 358 and table.loc["Total", "user_failure"] == 98
    assert table.loc["TIMEOUT", "not_interruption"] == (others["state"] == "TIMEOUT").sum()


def test_sample_evidence_coverage(sample, fleet) -> None:
    """Regression: every interruption of the sample has evidence; the kinds add up."""
    kinds = sample.interruptions["evidence_kind"].value_counts().to_dict()
    assert kinds == {"hardware": 356, "other": 103, "nccl": 7}  # 7 = NCCL Watchdog Timeouts
    nccl = sample.interruptions[sample.interruptions["evidence_kind"] == "nccl"]
    assert set(nccl["category"]) == {"NCCL Watchdog Timeouts"}
    assert fleet.interruptions["evidence_kind"].value_counts().to_dict() == {"hardware": 356, "other": 2}
    assert not any(n.startswith("Warning: ") for n in sample.notes)


def test_report_states_policy_and_coverage(sample) -> None:
    """Regression: the methods section states the policy; data quality shows evidence coverage."""
    rates = reliab.estimate_rates(sample.interruptions, gpu_days=16384 * 54, job_hours=54 * 24)
    report = reliab.build_report({"rates": rates}, ingest=sample)
    methods = next(s for s in report.sections if s.key == "methods")
    texts = [b.body for b in methods.blocks if hasattr(b, "body")]
    assert any(t.startswith("Interruption policy 'training-run'") for t in texts)
    quality = next(s for s in report.sections if s.key == "data-quality")
    table = next(b for b in quality.blocks if getattr(b, "title", "") == "Evidence coverage")
    assert list(table.data["Interruptions"]) == ["356", "103", "7", "0"]


def test_report_shows_coverage_warnings(tmp_path) -> None:
    """Regression: warnings reach the data-quality section as a highlighted note."""
    sacct = sample_path() / "slurm" / "sacct.txt"
    res = reliab.ingest(sacct)
    rates = reliab.estimate_rates(res.interruptions, gpu_days=16384 * 54, job_hours=54 * 24)
    quality = next(s for s in reliab.build_report({"rates": rates}, ingest=res).sections
                   if s.key == "data-quality")
    note = next(b for b in quality.blocks if getattr(b, "kind", "") == "note")
    assert any(i.startswith("no kernel logs") for i in note.items)
    html = reliab.report.render_html(reliab.build_report({"rates": rates}, ingest=res))
    assert "Evidence coverage" in html and "Interruption policy &#39;fleet&#39;" in html


# ------------------------------------------------------------------ invariants
STATES = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
          "PREEMPTED", "REQUEUED", "BOOT_FAIL", "DEADLINE", "RUNNING", "REVOKED"]
T0 = pd.Timestamp("2024-06-01T00:00:00Z")


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(jobs=st.lists(st.tuples(st.sampled_from(STATES), st.sampled_from(["run", "other"]),
                               st.integers(0, 30), st.booleans()), min_size=1, max_size=25),
       evidence=st.lists(st.tuples(st.integers(0, 30 * 60), st.integers(0, 3),
                                   st.sampled_from(["xid:79", "xid:13", "nccl:watchdog_timeout",
                                                    "sel:power_supply_ac_lost"])), max_size=15))
def test_policy_invariants(jobs, evidence) -> None:
    """Property: one outcome per ended job; fleet counts only its states; fleet is within the run's ends."""
    rows = [{"job_id": str(100 + k), "name": name, "state": s, "state_raw": s,
             "start": T0 + pd.Timedelta(hours=h) - pd.Timedelta("2h"),
             "end": None if s == "RUNNING" and not ran else T0 + pd.Timedelta(hours=h),
             "nnodes": 1, "ngpus": 8, "nodelist": f"n{k % 4}", "origin": f"sacct:{k}"}
            for k, (s, name, h, ran) in enumerate(jobs)]
    job_frame = conform(pd.DataFrame(rows), "jobs")
    sig = conform(pd.DataFrame(
        [{"time": T0 + pd.Timedelta(minutes=m), "host": f"n{h}", "gpu": "0", "job_id": None,
          "source": "kernel", "signal": key, "severity": "error", "message": key,
          "origin": f"k:{i}"} for i, (m, h, key) in enumerate(evidence)],
        columns=["time", "host", "gpu", "job_id", "source", "signal", "severity", "message",
                 "origin"]), "signals")
    fleet = reliab.job_outcomes(sig, job_frame)
    if not (job_frame["name"] == "run").any():  # a name that matches nothing lists the names present
        with pytest.raises(ValueError, match="job_name='run' matches no job; the job names present"):
            reliab.job_outcomes(sig, job_frame, policy="training-run", job_name="run")
        return
    run = reliab.job_outcomes(sig, job_frame, policy="training-run", job_name="run")
    for out in (fleet, run):
        assert out.outcomes["job_id"].is_unique
        assert out.summary().loc["Total", "total"] == out.n == len(out.outcomes)
        assert len(out.interruptions) == (out.outcomes["outcome"] == "interruption").sum()
    counted = set(fleet.outcomes.loc[fleet.outcomes["outcome"] == "interruption", "state"])
    assert counted <= {"FAILED", "NODE_FAIL", "REQUEUED", "BOOT_FAIL", "REVOKED"}
    assert set(fleet.user_failures["job_state"]) <= {"FAILED"}
    assert {"NODE_FAIL", "BOOT_FAIL"} & set(fleet.outcomes["state"]) <= counted
    run_ids = set(job_frame.loc[job_frame["name"] == "run", "job_id"])
    fleet_in_run = set(fleet.interruptions["job_id"]) & run_ids
    assert fleet_in_run <= set(run.interruptions["job_id"])


@settings(max_examples=5, deadline=None)
@given(jobs=st.lists(st.tuples(st.sampled_from(STATES), st.sampled_from(["run", "other"]),
                               st.integers(0, 30), st.booleans()), min_size=1, max_size=25),
       evidence=st.lists(st.tuples(st.integers(0, 30 * 60), st.integers(0, 3),
                                   st.sampled_from(["xid:79", "xid:13", "nccl:watchdog_timeout",
                                                    "sel:power_supply_ac_lost"])), max_size=15))
def test_policy_invariants_on_a_few_examples(jobs, evidence) -> None:
    """The property's default-tier sibling: the same body on 5 examples (the slow tier runs 25)."""
    test_policy_invariants.hypothesis.inner_test(jobs, evidence)
