"""A worker killed mid-run: the task is re-run, or the run fails clearly; never a partial table.

A worker plugin kills its worker process (``os._exit``) the moment it starts the first
ingest task, once per test (a marker file says it happened).  The LocalCluster's nanny
then starts a fresh worker, and the scheduler either re-runs the lost task elsewhere
(Dask's default ``allowed-failures``) or, with no failures allowed, marks it failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from reliab.datasets import simulate_cluster
from reliab.errors import DistributedError, ParseError
from reliab.io import distributed as dist
from reliab.io import ingest
from reliab.io._partitioned import MANIFEST

distributed = pytest.importorskip("dask.distributed")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/


class KillOnce(distributed.WorkerPlugin):
    """Kill the worker process when it starts the first ``reliab-read`` task after ``marker`` is armed."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def transition(self, key: object, start: str, finish: str, **kwargs: object) -> None:
        if finish == "executing" and str(key).startswith("reliab-read-") and not os.path.exists(self.marker):
            with open(self.marker, "w") as fh:
                fh.write(str(key))
            os._exit(1)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults")
    simulate_cluster(n_gpus=256, days=3, counts="expected", seed=4).write(out)
    return out


@pytest.fixture
def killer(dask_client: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Arm the plugin (many small tasks, so the kill lands mid-run); restore the cluster after."""
    monkeypatch.setattr(dist, "BATCH_BYTES", 32 << 10)
    marker = tmp_path / "killed"
    dask_client.register_plugin(KillOnce(str(marker)), name="kill-once")
    try:
        yield marker
    finally:
        dask_client.unregister_worker_plugin("kill-once")
        dask_client.wait_for_workers(2, timeout=120)


def test_killed_worker_task_is_rerun(dask_client: object, folder: Path, killer: Path) -> None:
    local = ingest(folder)
    got = ingest(folder, engine="dask", client=dask_client)
    assert killer.exists()  # a worker did die mid-run
    for name in ("signals", "jobs", "telemetry", "quarantine", "interruptions", "accounting"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(local, name), obj=name)


def test_killed_worker_without_retries_is_a_clear_error(dask_client: object, folder: Path, killer: Path,
                                                        tmp_path: Path) -> None:
    scheduler = dask_client.cluster.scheduler
    allowed = scheduler.allowed_failures
    scheduler.allowed_failures = 0
    out = tmp_path / "tables"
    try:
        with pytest.raises(DistributedError, match=r"failed for good reading .*no table was returned"):
            ingest(folder, engine="dask", client=dask_client, output=out)
    finally:
        scheduler.allowed_failures = allowed
    assert killer.exists()
    assert not (out / MANIFEST).exists()
    assert not [p for p in out.rglob("*") if p.is_file()]  # the run's parts were deleted


def test_strict_error_comes_back_as_it_is(dask_client: object, tmp_path: Path) -> None:
    bad = tmp_path / "messages"
    bad.write_text("2024-06-03T01:00:00.000000+00:00 node0007 kernel: NVRM: Xid (PCI:0000:18:00): , pid=1\n")
    with pytest.raises(ParseError, match=r"messages:1"):
        ingest(bad, engine="dask", client=dask_client, strict=True)
