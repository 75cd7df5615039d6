"""The foundation's promises end to end: raw files -> ingest -> classify -> Table 5.

Reference values: Llama 3 Herd of Models (arXiv 2407.21783) Table 5 and §3.3.4; the
derived shares and mean time to interruption are computed from them
(tests/reference/llama3_table5.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.datasets import sample_path, simulate_cluster
from reliab.taxonomy.vocabulary import LLAMA3_PLANNED, TABLE5_COUNTS


@pytest.fixture(scope="module")
def sample(sample_ingest) -> reliab.IngestResult:
    return sample_ingest


def _unexpected_counts(inter: pd.DataFrame) -> dict[str, int]:
    return inter.loc[~inter["planned"], "category"].value_counts().to_dict()


def test_table5_counts_recovered_from_raw_logs(sample) -> None:
    """Reference: the bundled table5 replay gives exactly the 18 published counts, 419 and 47."""
    inter = sample.interruptions
    assert _unexpected_counts(inter) == dict(TABLE5_COUNTS)
    assert int((~inter["planned"]).sum()) == 419
    assert int(inter["planned"].sum()) == LLAMA3_PLANNED
    assert len(sample.quarantine) == 0


def test_shares_and_mtti_with_interval(sample) -> None:
    """Reference: Faulty GPU 35.3 %, GPU component 64.0 %, job-level MTTI 54*24/419 = 3.09 h [2.81, 3.41]."""
    inter = sample.interruptions
    by_cat = reliab.estimate_rates(inter, by="category", gpu_days=16384 * 54, job_hours=54 * 24).summary()
    row = by_cat.set_index("category")
    assert round(row.loc["Faulty GPU", "share_pct"], 1) == 35.3
    total = row.loc["Total"]
    assert round(total["mtti_job_hours"], 2) == 3.09
    assert (round(total["mtti_job_hours_low"], 2), round(total["mtti_job_hours_high"], 2)) == (2.81, 3.41)
    by_comp = reliab.estimate_rates(inter, by="component", gpu_days=16384 * 54, job_hours=54 * 24).summary()
    assert round(by_comp.set_index("component").loc["GPU", "share_pct"], 1) == 64.0


def _check_truth(result: reliab.IngestResult, truth: pd.DataFrame) -> None:
    got = result.interruptions
    both = truth.merge(got, on="job_id", how="outer", suffixes=("_truth", ""), indicator=True)
    missing = both[both["_merge"] != "both"]
    assert missing.empty, f"interruptions not matched to truth: {missing[['job_id', '_merge']].head()}"
    wrong = both[both["category_truth"] != both["category"]]
    assert wrong.empty, wrong[["job_id", "category_truth", "category", "attribution"]].head(10).to_string()
    assert (both["planned_truth"] == both["planned"]).all()
    truth_time = pd.to_datetime(both["time_truth"], utc=True)
    assert (truth_time - both["time"]).abs().max() < pd.Timedelta(seconds=1)
    hw = both[both["host"].notna() & both["hosts"].notna() & both["host"].astype(str).ne("")]
    assert all(h in hs.split(",") for h, hs in zip(hw["host"], hw["hosts"], strict=True))


def test_bundled_truth_equals_ingest(sample) -> None:
    """Simulation: every interruption the generator planted is found, at its time, in its category."""
    truth = pd.read_csv(sample_path() / "truth" / "interruptions.csv", dtype={"job_id": str, "host": str})
    _check_truth(sample, truth)


@pytest.mark.parametrize("counts,seed,n_gpus,days", [pytest.param("table5", 7, 16384, 54, marks=pytest.mark.slow),
                                                     ("expected", 3, 4096, 20)])
def test_fresh_simulation_round_trip(tmp_path: Path, counts: str, seed: int, n_gpus: int, days: int) -> None:
    """Simulation: a fresh seeded cluster written to raw files is recovered exactly by ingest."""
    sim = simulate_cluster(n_gpus=n_gpus, days=days, counts=counts, seed=seed)
    sim.write(tmp_path)
    res = reliab.ingest(tmp_path, policy="training-run")
    truth = sim.interruptions.assign(job_id=sim.interruptions["job_id"].astype(str))
    _check_truth(res, truth.astype({"host": "string"}))
    if counts == "table5":
        assert _unexpected_counts(res.interruptions) == dict(TABLE5_COUNTS)
    assert int(res.accounting["malformed"].sum()) == 0


CORRUPT = {
    "syslog": ("2024-06-03T14:02:11.000000+00:00 node0001 kernel: NVRM: Xid (PCI:0000:18:00): garbage, pid=1", "kernel"),
    "dmesg": ("[Mon Jun 99 99:99:99 2024] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.", "kernel"),
    "train": ("[rank0]:[E1399 99:99:99.000000000 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective"
              " operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
              " ran for 600081 milliseconds before timing out.", "nccl"),
    "slurm": ("4242|broken", "sacct"),
    "ipmi": ("  1a | 13/45/2024 | 25:61:00 | Power Supply #0xfb | Power Supply AC lost | Asserted", "sel"),
    "tickets": ("T-bad,not a time,node0001,,never,incident,broken,broken,broken", "tickets"),
    "telemetry": ("not-a-time,node0001,,x,y,z", "telemetry_csv"),
}


def test_corrupt_line_in_every_format_is_quarantined(tmp_path: Path) -> None:
    """Regression: one corrupt line in a file of every format is quarantined with file:line; nothing else changes."""
    data = tmp_path / "sample"
    shutil.copytree(sample_path(), data, ignore=shutil.ignore_patterns("truth"))
    planted = {}
    for folder, (line, _) in CORRUPT.items():
        target = sorted(p for p in (data / folder).iterdir() if p.is_file())[0]
        lines = target.read_text().splitlines(keepends=True)
        at = max(2, len(lines) // 2)  # 1-based line number of the corrupt line
        lines.insert(at - 1, line + "\n")
        target.write_text("".join(lines))
        planted[str(target)] = at
    res = reliab.ingest(data, policy="training-run")
    q = res.quarantine
    got = {(str(p), int(n)) for p, n in zip(q["path"], q["lineno"], strict=True)}
    assert set(planted.items()) <= got, (planted, got)
    assert len(q) == len(planted)
    acc = res.accounting
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    assert int(acc["malformed"].sum()) == len(planted)
    assert _unexpected_counts(res.interruptions) == dict(TABLE5_COUNTS)


def test_accounting_covers_every_line(sample) -> None:
    """Regression: accounted lines equal the newline count of every file ingest read."""
    acc = sample.accounting
    skipped = acc["source"].isin(["skipped", "manifest"]).to_numpy(dtype=bool)  # set aside by name, not opened
    truth = [p.name for p in (Path(reliab.sample_path()) / "truth").iterdir()]
    assert len(truth) >= 4  # interruptions, nodes, rates, … : the generator's ground truth
    set_aside = [Path(p).name for p in acc.loc[skipped, "path"]]
    assert sorted(n for n in set_aside if n != "__pycache__") == sorted(
        ["SOURCE.md", "cluster.json", "regenerate.py", "reliab.toml", *truth])
    acc = acc.loc[~skipped]
    counts = np.array([Path(p).read_bytes().count(b"\n") for p in acc["path"]])
    assert (acc["lines"].to_numpy() == counts).all()
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
