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


_CHILD = """
import sys
import polars, pyarrow, pyarrow.compute  # noqa: F401 - imported before the baseline is read
from reliab.io import _lines, _rowtable  # noqa: F401
from reliab.io.formats.slurm import read_sacct
def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key)) * 1024
before = status("VmRSS:")
result = read_sacct(sys.argv[1])
peak = status("VmHWM:") - before
assert result.parsed == int(sys.argv[2]), result.parsed
print(peak)
"""


@pytest.mark.slow
def test_reader_memory_per_job(tmp_path: Path) -> None:
    """100,000 jobs: the reader's peak above the interpreter's is under 1,500 bytes a job
    (the jobs and end-state signals held as dicts until the file ended took ~2,470; now ~900).
    The baseline includes polars' import (the columnar route's library: ~200 B a job at this
    size, not per-job memory; counting it put one CI run at 1,532)."""
    import os
    import subprocess
    import sys

    import reliab

    n = 100_000
    path = tmp_path / "sacct.txt"
    states = ["COMPLETED"] * 8 + ["FAILED", "NODE_FAIL", "TIMEOUT", "CANCELLED by 123"]
    with path.open("w") as fh:
        fh.write("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList"
                 "|Restarts|AllocTRES\n")
        for i in range(n):
            d, h, k = 1 + i % 27, i % 24, 1 << (i % 4)
            fh.write(f"{5_000_000 + i}|{5_000_000 + i}|job-{i % 500}|user{i % 300}|train|{states[i % 12]}|0:0|"
                     f"2024-06-{d:02d}T{h:02d}:00:00|2024-06-{d:02d}T{h:02d}:05:00|2024-06-{d:02d}T{h:02d}:55:00|"
                     f"00:50:00|{k}|node[{i % 2000:04d}-{i % 2000 + k - 1:04d}]|0|cpu=224,gres/gpu={8 * k},node={k}\n")
    env = {**os.environ, "PYTHONPATH": str(Path(reliab.__file__).parents[1])}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(n)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    per_job = int(proc.stdout.strip().splitlines()[-1]) / n
    assert per_job < 1_500, per_job
