"""One Output session for both runners: ``ingest(..., output=)`` gives the same kind of result,
the same row counts and the same manifest facts whether the files are read in process or by
Dask tasks (which write the parts themselves).

The input is a two-file folder (a kernel log with one Xid 79 and one unrelated line, a
``sacct`` export with one NODE_FAIL job ending 52 s after it, on the same node): by hand, 2
signal rows (``xid:79``, ``slurm:node_fail``) in the folder, no telemetry, one interruption.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from reliab.io import OutputIngestResult, ingest
from reliab.io._partitioned import read_manifest
from tests.test_ingest_pipeline import KERNEL, SACCT

pytest.importorskip("dask.distributed")


def test_dask_output_result_is_the_local_output_result(dask_client: object, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kern.log").write_text(KERNEL, encoding="utf-8")
    (logs / "sacct.txt").write_text(SACCT, encoding="utf-8")
    local = ingest(logs, output=tmp_path / "local")
    remote = ingest(logs, engine="dask", client=dask_client, output=tmp_path / "dask")
    assert isinstance(local, OutputIngestResult) and isinstance(remote, OutputIngestResult)
    assert local.loaded() == () and remote.loaded() == ("signals", "telemetry")  # (the tasks' result holds them)
    assert remote.output == (tmp_path / "dask").resolve()
    assert local.counts == remote.counts
    assert dict(remote.counts["rows"]) == {"signals": 2}
    assert read_manifest(tmp_path / "dask")["counts"] == read_manifest(tmp_path / "local")["counts"] == local.counts
    assert remote.to_dict() == local.to_dict() and len(remote.interruptions) == 1
    pd.testing.assert_frame_equal(remote.signals, local.signals)
