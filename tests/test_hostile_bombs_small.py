"""The bombs of ``tests/test_hostile_bombs.py`` at about 1/100 of their size, in this process.

The full-size bombs (and their peak-RSS ceiling) are in the ``slow`` tier; these siblings
keep the default tier on the same readers and the same accounting: each bomb still holds a
line or record longer than the readers' limit (``_prefilter.MAX_LINE_BYTES``, 1 MiB) or more
malformed lines than the quarantine keeps, so the same bounded route handles it.
"""

from __future__ import annotations

from pathlib import Path

import _bombs as bombs
import pytest

MiB = 1 << 20


def _check(path: Path, source: str) -> dict:
    out = bombs.ingest_here(path, source)
    assert out["lines"] == out["parsed"] + out["irrelevant"] + out["malformed"]
    return out


def test_zstd_bomb(tmp_path: Path) -> None:
    path = tmp_path / "node0001.log.zst"
    bombs.zstd_zeros(path, 10 * MiB)
    out = _check(path, "kernel")
    assert (out["lines"], out["signals"], out["malformed"]) == (3, 2, 1)


def test_lanl_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "lanl.csv.gz"
    bombs.lanl_blank_lines(path, 1_000_000)
    out = _check(path, "lanl")
    assert (out["lines"], out["parsed"], out["malformed"], out["signals"]) == (1_000_002, 1, 0, 1)


def test_telemetry_csv_long_field(tmp_path: Path) -> None:
    path = tmp_path / "gpus.csv.gz"
    bombs.telemetry_long_field(path, 5 * MiB)
    out = _check(path, "telemetry_csv")
    assert (out["lines"], out["parsed"], out["malformed"], out["telemetry"]) == (3, 1, 1, 1)


def test_sacct_json_unclosed_string(tmp_path: Path) -> None:
    path = tmp_path / "sacct.json.gz"
    bombs.sacct_json_unclosed(path, 5 * MiB)
    out = _check(path, "sacct_json")
    assert (out["jobs"], out["malformed"]) == (1, 1) and "not valid JSON" in out["reasons"][0]


@pytest.mark.parametrize("shape", ["one_line", "many_lines"])
def test_ticket_unclosed_field(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "incidents.csv.gz"
    if shape == "one_line":
        bombs.tickets_unclosed(path, 5 * MiB)
    else:
        bombs.tickets_unclosed_lines(path, 4 * MiB)
    out = _check(path, "tickets")
    assert out["signals"] == (2 if shape == "one_line" else 1) and out["quarantine"] <= 2


def test_quarantine_of_many_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "node0001.log.gz"
    bombs.malformed_xid_lines(path, MiB)
    out = _check(path, "kernel")
    n = MiB // len(bombs.BAD_XID)
    assert n > 1001
    assert (out["signals"], out["malformed"], out["quarantine"]) == (2, n, 1001)


def test_sparse_file_after_a_valid_line(tmp_path: Path) -> None:
    path = tmp_path / "node0001.log"
    bombs.sparse_after_line(path, 10 * MiB)
    out = _check(path, "kernel")
    assert (out["lines"], out["signals"], out["malformed"]) == (2, 1, 1)


@pytest.mark.parametrize("shape", ["nones", "exponential"])
def test_flight_recorder_values(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "nccl_trace_rank_0"
    if shape == "nones":
        bombs.fr_nones(path, 100_000)
    else:
        bombs.fr_exponential(path, 64)
    out = _check(path, "flight_recorder")
    assert out["parsed"] == 0 and out["malformed"] >= 1


class _Skipped:
    """A stand-in for a polars batch of ``height`` lines of which none is a candidate."""

    def __init__(self, height: int) -> None:
        self.height = height

    def get_column(self, name: str):
        import polars as pl

        return pl.Series(name, [False]) if name == "bad" else pl.Series(name, [None], dtype=pl.String)


def test_line_numbers_past_2_to_the_32_on_the_polars_route(tmp_path: Path, monkeypatch) -> None:
    """The 2**32-line regression at 1/4000 of its size: the polars scan is made to report a
    first batch of 2**32 + 1 non-candidate lines (a seeded offset), then the real file's lines;
    the count and the 5 Xid signals after the offset must all survive (polars numbered lines
    with 32 bits: lines past ~4,294,600,000 were dropped)."""
    import polars as pl

    path = tmp_path / "node0001.log.gz"
    total = bombs.newline_gzip(path, 1 << 20, bombs.XID * 5)
    offset = (1 << 32) + 1
    real = pl.LazyFrame.collect_batches
    calls: list[bool] = []

    def seeded(self, *args, **kwargs):
        calls.append(True)
        yield _Skipped(offset)
        yield from real(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect_batches", seeded)
    out = _check(path, "kernel")
    assert calls, "the polars route was not taken"
    assert (out["lines"], out["signals"], out["malformed"]) == (offset + total, 5, 0)
