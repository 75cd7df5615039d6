"""The fleet-scale sample: layout, determinism, bounded memory, and the truth it plants.

Tiny configurations only (the 100,000-GPU, 90-day fleet is for ``python -m benchmarks``).
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab import schema
from reliab.datasets import write_fleet
from reliab.datasets._fleet import LLAMA3_RATE_PER_1K_GPU_DAYS


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("fleet")
    sample = write_fleet(folder, n_gpus=2048, days=4, hosts_per_pod=64, telemetry_interval_s=600,
                         failures_per_1k_gpu_days=4.0, seed=3)
    return folder, sample


def test_layout_and_counts(fleet: tuple[Path, object]) -> None:
    folder, sample = fleet
    days = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
    assert sorted(p.name for p in (folder / "logs" / "syslog").iterdir()) == days
    assert len(list((folder / "logs" / "syslog").rglob("messages-pod*.log"))) == 4 * 4  # 256 hosts / 64
    assert sorted(p.name for p in (folder / "telemetry").iterdir()) == [f"date={d}" for d in days]
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert sample.files == len(files) and sample.bytes == sum(p.stat().st_size for p in files)
    log_lines = sum(p.read_bytes().count(b"\n") for p in (folder / "logs").rglob("*") if p.is_file())
    assert sample.log_lines == log_lines
    tel = pd.concat(pd.read_parquet(p) for p in sorted((folder / "telemetry").rglob("*.parquet")))
    assert sample.telemetry_rows == len(tel) == 2048 * 4 * 144
    schema.validate(schema.conform(tel, "telemetry"), "telemetry")
    per_series = tel.groupby(["host", "gpu"], observed=True)["time"].agg(["size", "min", "max"])
    assert (per_series["size"] == 4 * 144).all()
    truth = pd.read_csv(folder / "truth" / "failures.csv", parse_dates=["time"])
    assert len(truth) == sample.failures and json.loads((folder / "truth" / "params.json").read_text())["seed"] == 3
    assert sample.summary().set_index("quantity").loc["failures", "value"] == sample.failures


def test_every_failure_is_an_interruption(fleet: tuple[Path, object]) -> None:
    """The logs read back: each planted failure is one NODE_FAIL interruption with its Xid."""
    folder, sample = fleet
    result = reliab.ingest(folder / "logs")
    truth = pd.read_csv(folder / "truth" / "failures.csv", parse_dates=["time"])
    assert len(result.quarantine) == 0 and result.not_read().empty
    assert len(result.interruptions) == len(truth) > 10
    assert result.interruptions["attribution"].str.startswith("rule:xid").all()
    xids = result.signals[result.signals["signal"].isin([f"xid:{c}" for c in (79, 48, 94, 95, 119, 74)])]
    assert sorted(xids["host"]) == sorted(truth["host"])


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    kw = dict(n_gpus=256, days=2, hosts_per_pod=16, telemetry_interval_s=3600, seed=9)
    write_fleet(tmp_path / "a", **kw)
    write_fleet(tmp_path / "b", **kw)
    write_fleet(tmp_path / "c", **{**kw, "seed": 10})
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b") != _digest(tmp_path / "c")


def _peak(folder: Path, **kw: object) -> int:
    tracemalloc.start()
    try:
        write_fleet(folder, hosts_per_pod=32, telemetry_interval_s=300, **kw)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_is_bounded_by_one_pod_day(tmp_path: Path) -> None:
    """Eight times the fleet (four times the hosts, twice the days): the same peak, one pod-day's worth."""
    small = _peak(tmp_path / "s", n_gpus=512, days=2)
    large = _peak(tmp_path / "l", n_gpus=2048, days=4)
    assert large < 1.3 * small
    pod_day = 32 * 8 * (86_400 // 300) * 8 * 5  # samples x five 8-byte columns
    assert large < 8 * pod_day


def test_failure_rate_follows_the_temperature_truth(tmp_path: Path) -> None:
    """The planted rate: Poisson at ``rate x exp(beta (m - 65))`` per node-hour."""
    sample = write_fleet(tmp_path, n_gpus=8000, days=10, hosts_per_pod=250, telemetry=False,
                         failures_per_1k_gpu_days=2.0, temp_effect_per_c=0.0, seed=1)
    expected = 2.0 * 8000 * 10 / 1000
    assert abs(sample.failures - expected) < 4 * np.sqrt(expected)  # 4 sd
    assert LLAMA3_RATE_PER_1K_GPU_DAYS == pytest.approx(0.4736, abs=1e-4)


def test_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="n_gpus"):
        write_fleet(tmp_path, n_gpus=12, gpus_per_node=8)
    with pytest.raises(ValueError, match="telemetry_interval_s"):
        write_fleet(tmp_path, n_gpus=8, telemetry_interval_s=7)
    with pytest.raises(ValueError, match="days"):
        write_fleet(tmp_path, n_gpus=8, days=0)
