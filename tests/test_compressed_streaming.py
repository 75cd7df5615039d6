"""Compressed input reads in bounded memory, like plain input: a small ``.zst`` of millions
of valid Xid lines goes through the bulk parser and, with ``output=``, to disk in batches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from _bombs import XID

_CHILD = """
import json, sys
def peak_mib():  # VmHWM: ru_maxrss also keeps the peak of the process that forked this one
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
import reliab
res = reliab.ingest(sys.argv[1], output=sys.argv[2], source="kernel")
acc = res.accounting.iloc[0]
print(json.dumps({"lines": int(acc["lines"]), "parsed": int(acc["parsed"]), "malformed": int(acc["malformed"]),
                  "rss_mib": peak_mib()}))
"""


def _xid_zst(path: Path, n: int) -> None:
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=3).stream_writer(fh) as out:
        block = XID * 10_000
        for _ in range(n // 10_000):
            out.write(block)


@pytest.mark.slow
def test_zst_of_millions_of_xid_lines_streams_in_bounded_memory(tmp_path: Path) -> None:
    """Regression: a 260 KB ``.zst`` of 26M valid Xid lines reached 3.5 GiB (the per-line
    route: small on disk, so no polars and no bulk parser); 3M lines here."""
    n = 3_000_000
    path = tmp_path / "node1807.log.zst"
    _xid_zst(path, n)
    assert path.stat().st_size < 1 << 20
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (out["lines"], out["parsed"], out["malformed"]) == (n, n, 0)
    assert out["rss_mib"] < 700, out


def test_zst_of_xid_lines_takes_the_bulk_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 3M-line case's sibling in the default tier (50,000 lines, in this process): a small
    ``.zst`` goes to the block reader with the bulk parser, and every line is counted and parsed."""
    import reliab
    from reliab.io import _lines

    real = _lines.fast_candidates
    bulk: list[bool] = []

    def spy(fh, literals, counter, **kwargs):
        bulk.append(kwargs.get("bulk") is not None)
        return real(fh, literals, counter, **kwargs)

    monkeypatch.setattr(_lines, "fast_candidates", spy)
    n = 50_000
    path = tmp_path / "node1807.log.zst"
    _xid_zst(path, n)
    res = reliab.ingest(path, output=tmp_path / "out", source="kernel")
    acc = res.accounting.iloc[0]
    assert (int(acc["lines"]), int(acc["parsed"]), int(acc["malformed"])) == (n, n, 0)
    assert bulk == [True]
