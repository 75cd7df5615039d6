"""Tests of reliab.datasets: the simulated cluster and the bundled llama3-54d sample."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.datasets import load_llama3_sample, sample_path, simulate_cluster
from reliab.taxonomy.vocabulary import TABLE5_COUNTS

MIN = pd.Timedelta(minutes=1)


@pytest.fixture(scope="module")
def sim():
    return simulate_cluster(counts="table5", seed=3)


@pytest.fixture(scope="module")
def sample() -> Path:
    return sample_path()


def _hashes(directory: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file() and p.name not in skip
            and "__pycache__" not in p.parts}


def test_table5_counts_exact(sim):
    got = sim.interruptions["category"].value_counts()
    for cat, n in TABLE5_COUNTS.items():
        assert got[cat] == n, cat
    assert (~sim.interruptions["planned"]).sum() == 419
    assert sim.interruptions["planned"].sum() == 47
    assert len(sim.jobs) == 467 and sim.jobs["state"].iloc[-1] == "RUNNING"


def test_expected_counts_vary_with_seed_and_average_466():
    table5 = {**TABLE5_COUNTS, "Planned": 47}  # Llama 3 means on a small, fast cluster
    totals = [len(simulate_cluster(n_gpus=64, rates=table5, counts="expected",
                                   seed=s).interruptions) for s in range(12)]
    assert len(set(totals)) > 3
    assert abs(np.mean(totals) - 466) < 25  # sd of the mean ≈ 6.2


def test_timeline_inside_window_and_outside_downtime(sim):
    p, it, jobs = sim.params, sim.interruptions, sim.jobs
    start = pd.Timestamp(p.start_us, unit="us", tz="UTC")
    end = start + pd.Timedelta(days=p.days)
    assert (it["failure_time"] > start).all() and (it["time"] < end).all()
    assert it["time"].is_monotonic_increasing
    assert (it["downtime_h"] >= 12 / 60 - 1e-9).all()
    # each interruption ends its own job; the next job starts after the downtime
    assert (jobs["end"].iloc[:-1].to_numpy() == it["time"].to_numpy()).all()
    starts = jobs["start"].iloc[1:].reset_index(drop=True)
    assert ((starts - it["time"]) >= 12 * MIN).all()
    assert (it["failure_time"] >= jobs["start"].iloc[:-1].to_numpy() + 2 * MIN).all()
    # attribution windows [end - 10 min, end + 5 min] never reach the next evidence
    nxt = it["failure_time"].iloc[1:].to_numpy() - 2 * MIN
    assert (nxt > it["time"].iloc[:-1].to_numpy() + 5 * MIN).all()


def test_background_kept_away_from_windows(sim):
    ends = sim.interruptions["time"].astype("int64").to_numpy() // 1000
    fails = sim.interruptions["failure_time"].astype("int64").to_numpy() // 1000
    m = 60_000_000
    times = ([r[0] for r in sim.evidence.kernel] + [r[0] for r in sim.evidence.sel if r[4]]
             + [r[3] for r in sim.evidence.tickets])
    for t in times:
        k = int(np.argmin(np.abs(ends - t)))
        inside = fails[k] - 2 * m <= t <= ends[k]
        assert inside or t < ends[k] - 30 * m or t > ends[k] + 25 * m


def test_lemon_nodes_fail_more(sim):
    nodes = sim.nodes
    lemons = nodes.loc[nodes["lemon"], "interruptions"].mean()
    others = nodes.loc[~nodes["lemon"], "interruptions"].mean()
    assert nodes["lemon"].sum() == 10
    assert lemons > 4 * others


def test_swapped_nodes_change_the_nodelist(sim):
    lists = sim.jobs["nodelist"]
    assert lists.iloc[0] == "node[0001-2048]"
    assert (lists != lists.iloc[0]).any()
    assert lists.str.contains(r"2049|205\d|206\d").any()  # spares continue the numbering


def test_diurnal_throughput_amplitude(sim):
    c = sim.telemetry["cluster"]
    run = c[c["throughput_tokens_per_s"] > 0]
    by_hour = run.groupby(run["time"].dt.hour)["throughput_tokens_per_s"].mean()
    amplitude = (by_hour.max() - by_hour.min()) / by_hour.mean()
    assert 0.01 <= amplitude <= 0.02
    # mid-day (local 12-17 h = 19-24 h UTC at UTC-7) is the slow part of the day
    assert by_hour.idxmin() in range(19, 24) or by_hour.idxmin() == 0


def test_checkpoint_power_drops(sim):
    g = sim.telemetry["gpus"]
    one = g[(g["host"] == g["host"].iloc[0]) & (g["gpu"] == "0")]
    load, idle = one[one["util_pct"] == 100], one[one["util_pct"] == 0]
    assert load["power_w"].median() > 650 and idle["power_w"].median() < 200
    drops = ((one["power_w"] < 200) & (one["power_w"].shift() > 600)).sum()
    assert drops >= 30  # about one per 30 min over the day
    c = sim.telemetry["cluster"]
    assert c["power_w"].max() - c["power_w"].min() > 8e6  # megawatt swings


def test_same_seed_same_files_different_seed_different(tmp_path):
    kw = {"n_gpus": 256, "days": 3, "counts": "expected"}
    simulate_cluster(seed=5, **kw).write(tmp_path / "a")
    simulate_cluster(seed=5, **kw).write(tmp_path / "b")
    simulate_cluster(seed=6, **kw).write(tmp_path / "c")
    a, b, c = (_hashes(tmp_path / k) for k in "abc")
    assert a == b
    assert a != c


def test_bundled_sample_matches_regeneration(sample, tmp_path):
    spec = importlib.util.spec_from_file_location("regen", sample / "regenerate.py")
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    regen.main(tmp_path)
    assert _hashes(tmp_path) == _hashes(sample, skip=("regenerate.py",))


def test_load_sample_truth(sample):
    data = load_llama3_sample()
    assert data["path"] == sample
    assert len(data["interruptions"]) == 466
    assert data["interruptions"]["planned"].sum() == 47
    assert sum(f.stat().st_size for f in sample.rglob("*") if f.is_file()) < 25e6


XID = re.compile(r"NVRM: Xid \(((?:PCI:)?[0-9a-fA-F:]+)\).*?: (\d+),")
SYSLOG = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00 node\d{4} [\w.-]+(\[\d+\])?: ")
DMESG = re.compile(r"^(\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] |"
                   r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{6}\+00:00 |"
                   r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000 node\d{4} kernel: )")
SEL = re.compile(r"^ *[0-9a-f]+ \| \d\d/\d\d/\d{4} \| \d\d:\d\d:\d\d \| [^|]+ \| [^|]+ \| "
                 r"(Asserted|Deasserted)$|^SEL has no entries$")
#: glog month padded (E0626) or not (E626, PyTorch >= 2.4)
GLOG = re.compile(r"^\[rank\d+\]:\[E(?:0[1-9]|1[0-2]|[1-9])[0-3]\d \d\d:\d\d:\d\d\.\d{9} ProcessGroupNCCL\.cpp:\d+\] ")


def test_formats_match_real_logs(sample):
    syslog = "".join(p.read_text() for p in sorted((sample / "syslog").glob("*.log")))
    lines = syslog.splitlines()
    assert all(SYSLOG.match(x) for x in lines)
    xids = [m.group(2) for m in map(XID.search, lines) if m]
    assert {"79", "48", "119"} <= set(xids)
    assert sum("Xid" in x for x in lines) / len(lines) < 0.1  # mostly ordinary noise
    assert "NVRM: GPU" in syslog and "RPC history (CPU -> GSP)" in syslog + "".join(
        p.read_text() for p in (sample / "dmesg").glob("*.log"))
    for p in sorted((sample / "dmesg").glob("*.log")):
        assert all(DMESG.match(x) for x in p.read_text().splitlines()), p
    for p in sorted((sample / "ipmi").glob("*.sel")):
        assert all(SEL.match(x) for x in p.read_text().splitlines()), p
    sacct = (sample / "slurm" / "sacct.txt").read_text().splitlines()
    assert sacct[0] == ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|"
                        "End|Elapsed|NNodes|NodeList|Restarts|AllocTRES")
    assert all(x.count("|") == 14 for x in sacct)
    assert any("|CANCELLED by 0|" in x for x in sacct) and any("|NODE_FAIL|" in x for x in sacct)
    assert "gres/gpu=16384" in sacct[1]
    train = "".join(p.read_text() for p in (sample / "train").glob("*.out")).splitlines()
    glog = [x for x in train if x.startswith("[rank")]
    assert glog and all(GLOG.match(x) for x in glog)
    assert any("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" in x for x in glog)
    assert any(x.endswith("CUDA error: an illegal memory access was encountered") for x in train)
    tickets = pd.read_csv(sample / "tickets" / "incidents.csv")
    assert list(tickets.columns) == ["ticket_id", "opened_at", "host", "job_id", "incident_time",
                                     "type", "title", "root_cause", "resolution"]
    assert set(tickets["type"]) == {"incident", "maintenance"}


def test_messy_hand_over_shapes(sample, sample_ingest):
    """The sample carries the untidy shapes of real hand-overs (reliab.datasets._messy) and
    reliab reads them: unpadded glog months, clean logs, empty SELs, corrected-error storms."""
    glog = [x for p in (sample / "train").glob("*.out") for x in p.read_text().splitlines() if x.startswith("[rank")]
    unpadded = [x for x in glog if re.match(r"\[rank\d+\]:\[E[1-9]\d\d ", x)]
    assert unpadded and len(unpadded) < len(glog)
    empty = [p for p in (sample / "ipmi").glob("*.sel") if p.read_text() == "SEL has no entries\n"]
    clean = sorted((sample / "train").glob("eval-*.log"))
    assert len(empty) == 3 and len(clean) == 2
    res = sample_ingest
    assert {res.sources[str(p)].source for p in empty} == {"sel"}
    assert {res.sources[str(p)].source for p in clean} == {"nccl"}
    signals = res.signals
    from_clean = signals["origin"].str.contains("eval-", regex=False)
    assert not from_clean.any()
    assert (signals["signal"] == "edac:correctable").sum() > 100
    ce_origins = set(signals.loc[signals["signal"] == "edac:correctable", "origin"])
    assert not any(o in ce_origins for e in res.interruptions["evidence"].dropna() for o in e.split(";"))
    timed_out = signals[(signals["source"] == "nccl") & (signals["signal"] == "nccl:watchdog_timeout")]
    assert timed_out["time"].between(pd.Timestamp("2024-06-01", tz="UTC"), pd.Timestamp("2024-07-26", tz="UTC")).all()
    assert int(res.accounting["malformed"].sum()) == 0


def test_default_rates_scale_with_size_and_time():
    small = simulate_cluster(n_gpus=2048, days=6.75, counts="expected", seed=1)
    expected = small.true_rates.set_index("category")["expected_count"]
    assert expected["Faulty GPU"] == pytest.approx(148 / 8 / 8)
    assert expected["Planned"] == pytest.approx(47 / 8)
    assert small.true_rates["rate_per_gpu_hour"].iloc[0] == pytest.approx(
        148 / (16384 * 54 * 24))


def test_argument_errors():
    with pytest.raises(ValueError, match="counts"):
        simulate_cluster(counts="nope")
    with pytest.raises(ValueError, match="multiple"):
        simulate_cluster(n_gpus=12)
