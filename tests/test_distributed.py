"""Scale-out ingest: one Dask task per file on a LocalCluster gives exactly the local result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from reliab.datasets import simulate_cluster
from reliab.io import IngestResult, discover, ingest

distributed = pytest.importorskip("dask.distributed")

TABLES = ("signals", "jobs", "telemetry", "quarantine", "interruptions", "accounting")


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cluster")
    simulate_cluster(n_gpus=512, days=7, counts="expected", seed=1).write(folder)
    return folder


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("origin", "path", "lineno", "job_id", "time", "host", "gpu") if c in df.columns]
    return df.sort_values(keys, kind="stable").reset_index(drop=True) if keys else df


def _assert_equal(got: IngestResult, want: IngestResult) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(_sorted(getattr(got, name)), _sorted(getattr(want, name)), obj=name)
    assert dict(got.sources) == dict(want.sources)


@pytest.fixture(scope="module")
def local(raw: Path) -> IngestResult:
    return ingest(raw)


@pytest.mark.parametrize("batch_bytes", [None, 1 << 16, 8 << 20], ids=["per-file", "64KiB", "8MiB"])
def test_distributed_equals_local(raw: Path, client: object, local: IngestResult,
                                  batch_bytes: int | None) -> None:
    from reliab.io.distributed import ingest_distributed

    assert len(local.accounting) > 20 and len(local.signals) and len(local.telemetry)
    _assert_equal(ingest_distributed(raw, client=client, batch_bytes=batch_bytes), local)


def test_distributed_parquet_partitions(raw: Path, client: object, local: IngestResult,
                                        tmp_path: Path) -> None:
    from reliab.io.distributed import batches, ingest_distributed

    out = tmp_path / "parts"
    _assert_equal(ingest_distributed(raw, client=client, output=out, batch_bytes=1 << 18), local)
    assert sorted(p.name for p in out.iterdir()) == ["jobs", "signals", "telemetry"]
    n_tasks = len(batches(discover(raw), 1 << 18))
    parts = list(out.glob("telemetry/part-*.parquet"))
    assert 1 < len(parts) and all(int(p.stem.split("-")[1]) < n_tasks for p in parts)
    assert not list(out.glob("*/.*.tmp"))


def test_batches_keep_order_and_size(tmp_path: Path) -> None:
    from reliab.io.distributed import batches

    files = []
    for i, size in enumerate([10, 10, 50, 10, 200, 5]):
        files.append(tmp_path / f"f{i}")
        files[-1].write_bytes(b"x" * size)
    assert batches(files, 60) == [[0, 1], [2, 3], [4], [5]]
    assert batches(files, None) == [[i] for i in range(6)]


def test_missing_dask_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from reliab.io import distributed as dist

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ImportError, match=r"reliab\[distributed\]"):
        dist.ingest_distributed(".")
