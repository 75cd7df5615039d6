"""A sacct file read in chunks: the jobs, signals, quarantine and accounting of one conversion.

The reader converts its rows every ``CHUNK_ROWS`` jobs (:mod:`reliab.io._rowchunks`,
:mod:`reliab.io.formats.slurm._signals`); with chunks of 2 rows the file below crosses
chunk boundaries at a malformed line, a job step, a running job and a job whose end a table
cannot hold, and everything comes out as read in one piece (hand-written expectations).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from reliab.io import _rowchunks
from reliab.io.formats.slurm import read_sacct

SACCT = """JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|NNodes|NodeList|AllocTRES
101|train|alice|gpu|COMPLETED|0:0|2024-06-01T00:00:00|2024-06-01T00:01:00|2024-06-01T01:00:00|1|node01|gres/gpu=8
101.batch|batch||gpu|COMPLETED|0:0|2024-06-01T00:00:00|2024-06-01T00:01:00|2024-06-01T01:00:00|1|node01|
102|train|bob|gpu|NODE_FAIL|1:0|2024-06-01T00:00:00|2024-06-01T00:02:00|2024-06-01T02:00:00|2|node[02-03]|gres/gpu=16
103|only|three|fields
104|eval|carol|gpu|RUNNING|0:0|2024-06-01T00:00:00|2024-06-01T00:03:00|Unknown|1|node04|gres/gpu=8
105|train|dave|gpu|FAILED|2:0|2024-06-01T00:00:00|2024-06-01T00:04:00|2024-06-01T03:00:00|1|node05|gres/gpu=8
106|late|erin|gpu|TIMEOUT|0:1|2024-06-01T00:00:00|2024-06-01T00:05:00|2300-01-01T00:00:00|1|node06|gres/gpu=8
107|train|frank|gpu|CANCELLED by 0|0:15|2024-06-01T00:00:00|2024-06-01T00:06:00|2024-06-01T04:00:00|1|node07|gres/gpu=8
"""


@pytest.fixture()
def sacct(tmp_path: Path) -> str:
    path = tmp_path / "sacct.txt"
    path.write_text(SACCT)
    return str(path)


@pytest.mark.parametrize("chunk", [1, 2, 3])
def test_chunked_read_is_one_read(sacct: str, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read_sacct(sacct)
    monkeypatch.setattr(_rowchunks, "CHUNK_ROWS", chunk)
    parts = read_sacct(sacct)
    assert whole.tables["jobs"]["job_id"].tolist() == ["101", "102", "104", "105", "107"]
    assert whole.tables["signals"]["signal"].tolist() == ["slurm:completed", "slurm:node_fail", "slurm:failed",
                                                         "slurm:cancelled"]
    assert whole.quarantine["lineno"].tolist() == [5, 8]
    assert (whole.lines, whole.parsed, whole.irrelevant, whole.malformed) == (9, 5, 2, 2)
    for name in ("jobs", "signals"):
        pd.testing.assert_frame_equal(parts.tables[name], whole.tables[name])
    pd.testing.assert_frame_equal(parts.quarantine, whole.quarantine)
    assert (parts.lines, parts.parsed, parts.irrelevant, parts.malformed) == (9, 5, 2, 2)
