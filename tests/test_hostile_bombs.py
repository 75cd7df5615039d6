"""Memory stays bounded whatever the input: peak RSS < 600 MB on every bomb.

Each bomb is written as a stream (``tests/_bombs.py``) at a size where the old readers
needed well over 600 MB (they held the decompressed data, a whole file, or ~690 B per
malformed line), and ingested in a fresh interpreter whose own peak RSS is read back
(the many-lines ticket case is smaller: it checks the skipping, not the old cost).
The full sizes are measured by ``benchmarks/bench_hostile_memory.py``.
"""

from __future__ import annotations

from pathlib import Path

import _bombs as bombs
import pytest

pytestmark = pytest.mark.slow

LIMIT_MB = 600
GiB = 1 << 30


def _check(path: Path, source: str | None = None) -> dict:
    out = bombs.run_child(path, source)
    assert out["rss_mb"] < LIMIT_MB, out
    assert out["lines"] == out["parsed"] + out["irrelevant"] + out["malformed"]
    return out


def test_zstd_bomb(tmp_path: Path) -> None:
    """Regression: zstd chunks were decompressed whole (a 320 KB file of newlines: 8.3 GB)."""
    path = tmp_path / "node0001.log.zst"
    bombs.zstd_zeros(path, GiB)
    assert path.stat().st_size < 1 << 20
    out = _check(path, "kernel")
    assert (out["lines"], out["signals"], out["malformed"]) == (3, 2, 1)


def test_lanl_blank_lines(tmp_path: Path) -> None:
    """Regression: a 98 KB LANL file of blank lines passed 14 GB (read whole by pandas)."""
    path = tmp_path / "lanl.csv.gz"
    bombs.lanl_blank_lines(path, 100_000_000)
    assert path.stat().st_size < 200_000
    out = _check(path, "lanl")
    assert (out["lines"], out["parsed"], out["malformed"], out["signals"]) == (100_000_002, 1, 0, 1)


def test_telemetry_csv_long_field(tmp_path: Path) -> None:
    path = tmp_path / "gpus.csv.gz"
    bombs.telemetry_long_field(path, GiB // 2)
    out = _check(path, "telemetry_csv")
    assert (out["lines"], out["parsed"], out["malformed"], out["telemetry"]) == (3, 1, 1, 1)


def test_sacct_json_unclosed_string(tmp_path: Path) -> None:
    path = tmp_path / "sacct.json.gz"
    bombs.sacct_json_unclosed(path, GiB // 2)
    out = _check(path, "sacct_json")
    assert (out["jobs"], out["malformed"]) == (1, 1) and "not valid JSON" in out["reasons"][0]


@pytest.mark.parametrize("shape", ["one_line", "many_lines"])
def test_ticket_unclosed_field(tmp_path: Path, shape: str) -> None:
    """Regression: a ticket with one unclosed 1 GB field was held whole."""
    path = tmp_path / "incidents.csv.gz"
    if shape == "one_line":
        bombs.tickets_unclosed(path, GiB // 2)
    else:
        bombs.tickets_unclosed_lines(path, 64 << 20)
    out = _check(path, "tickets")
    assert out["signals"] == (2 if shape == "one_line" else 1) and out["quarantine"] <= 2


def test_quarantine_of_many_malformed_lines(tmp_path: Path) -> None:
    """Regression: ~690 B per malformed line (1 GB of malformed Xid lines: 8.8 GB)."""
    path = tmp_path / "node0001.log.gz"
    bombs.malformed_xid_lines(path, 100 << 20)
    out = _check(path, "kernel")
    n = (100 << 20) // len(bombs.BAD_XID)
    assert (out["signals"], out["malformed"], out["quarantine"]) == (2, n, 1001)


def test_sparse_file_after_a_valid_line(tmp_path: Path) -> None:
    """Regression: a 5 GB sparse file after a valid header used 10 GB (1 GiB here: 2 GB before)."""
    path = tmp_path / "node0001.log"
    bombs.sparse_after_line(path, GiB)
    out = _check(path, "kernel")
    assert (out["lines"], out["signals"], out["malformed"]) == (2, 1, 1)


@pytest.mark.parametrize("shape", ["nones", "exponential"])
def test_flight_recorder_values(tmp_path: Path, shape: str) -> None:
    """Regression: an entry list of 10M Nones, a self-referencing exponential list used GBs."""
    path = tmp_path / "nccl_trace_rank_0"
    if shape == "nones":
        bombs.fr_nones(path, 10_000_000)
    else:
        bombs.fr_exponential(path, 64)
    out = _check(path, "flight_recorder")
    assert out["parsed"] == 0 and out["malformed"] >= 1


def test_more_than_2_to_the_32_lines_on_the_polars_route(tmp_path: Path) -> None:
    """Regression: a 4.27 MB gzip of newlines followed by 5 Xid lines lost the 5
    signals (polars numbered lines with 32 bits; lines after ~4,294,600,000 were dropped)."""
    from reliab.io._fastscan import FAST_MIN_BYTES

    path = tmp_path / "node0001.log.gz"
    total = bombs.newline_gzip(path, (1 << 32) + 10, bombs.XID * 5)
    assert path.stat().st_size >= FAST_MIN_BYTES
    out = bombs.run_child(path, "kernel", spy=True)
    assert out["polars_route"], out
    assert (out["lines"], out["signals"], out["malformed"]) == (total, 5, 0)
    assert out["rss_mb"] < LIMIT_MB
