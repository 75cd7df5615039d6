"""Scale-out ingest: one Dask task per file on a LocalCluster gives exactly the local result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from reliab.datasets import simulate_cluster
from reliab.ingest import IngestResult, ingest

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


def test_distributed_equals_local(raw: Path, client: object) -> None:
    from reliab.ingest.distributed import ingest_distributed

    local = ingest(raw)
    assert len(local.accounting) > 20 and len(local.signals) and len(local.telemetry)
    _assert_equal(ingest_distributed(raw, client=client), local)


def test_distributed_parquet_partitions(raw: Path, client: object, tmp_path: Path) -> None:
    from reliab.ingest.distributed import ingest_distributed

    local = ingest(raw)
    out = tmp_path / "parts"
    _assert_equal(ingest_distributed(raw, client=client, output=out), local)
    assert sorted(p.name for p in out.iterdir()) == ["jobs", "signals", "telemetry"]
    n_files = len(local.accounting)
    assert all(int(p.stem.split("-")[1]) < n_files for p in out.glob("*/part-*.parquet"))
    assert not list(out.glob("*/.*.tmp"))


def test_missing_dask_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from reliab.ingest import distributed as dist

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ImportError, match=r"reliab\[distributed\]"):
        dist.ingest_distributed(".")
