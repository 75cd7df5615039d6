"""Bounded costs: quarantine limit, bounded decompression, line endings, the schema boundary."""

from __future__ import annotations

import io
import os
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
import zstandard
from _cli import run_in_process
from hypothesis import given, settings
from hypothesis import strategies as st

import reliab
from reliab import schema
from reliab.errors import InputFileError
from reliab.io import _fastscan, _files, _prefilter
from reliab.io._quarantine import OMITTED, Quarantine, quarantine_limit, quarantined_lines
from reliab.io.formats.flight_recorder import read_flight_recorder

BAD_XID = "2024-06-01T01:20:46.707376+00:00 node1807 kernel: NVRM: Xid (PCI:0000:3a:00): no code {i}\n"
GOOD_XID = "2024-06-01T01:20:46.707376+00:00 node1807 kernel: NVRM: Xid (PCI:0000:3a:00): 79, GPU has fallen off the bus.\n"


# --- quarantine limit

def test_quarantine_keeps_the_first_lines_and_counts_the_rest(tmp_path: Path) -> None:
    """Regression: 1 GB of malformed Xid lines cost 8.8 GB of quarantine rows."""
    text = "".join(BAD_XID.format(i=i) for i in range(50)) + GOOD_XID
    (tmp_path / "n.log").write_text(text)
    res = reliab.ingest(tmp_path / "n.log", quarantine_limit=10)
    acc = res.accounting.iloc[0]
    assert (acc["lines"], acc["parsed"], acc["malformed"]) == (51, 1, 50)
    q = res.quarantine
    assert len(q) == 11 and q["lineno"].tolist() == [*range(1, 11), 11]
    summary = q["reason"].iloc[-1]
    assert summary.startswith(f"{OMITTED}=10: 40 more malformed line(s) not kept (lines 11-50)")
    assert quarantined_lines(q) == acc["malformed"] == 50
    assert len(reliab.ingest(tmp_path / "n.log").quarantine) == 50  # default limit: all kept
    with pytest.raises(ValueError, match="quarantine_limit"):
        reliab.ingest(tmp_path / "n.log", quarantine_limit=-1)


def test_quarantine_limit_in_the_manifest_and_on_the_command_line(tmp_path: Path) -> None:
    """N is configurable where a run is set up: ``reliab.toml`` (whole folder or per glob) and
    ``--quarantine-limit``; the CLI summary counts every malformed line, not the rows kept."""
    from reliab.io._manifest import ManifestError

    (tmp_path / "n.log").write_text("".join(BAD_XID.format(i=i) for i in range(30)))
    (tmp_path / "reliab.toml").write_text("quarantine_limit = 5\n")
    assert len(reliab.ingest(tmp_path).quarantine) == 6
    (tmp_path / "reliab.toml").write_text('[[files]]\nglob = "*.log"\nquarantine_limit = 2\n')
    assert len(reliab.ingest(tmp_path).quarantine) == 3
    (tmp_path / "reliab.toml").write_text("quarantine_limit = -1\n")
    with pytest.raises(ManifestError, match=r"reliab.toml:1: key 'quarantine_limit' must be a non-negative integer"):
        reliab.ingest(tmp_path)
    (tmp_path / "reliab.toml").unlink()
    out = run_in_process("ingest", str(tmp_path), "-q", "--quarantine-limit", "4")
    assert out.returncode == 0, out.stderr
    assert "30 quarantined line(s) (4 kept in full: --quarantine-limit)" in out.stdout


def test_quarantine_keeps_lowest_line_numbers_whatever_the_order() -> None:
    q = Quarantine("f", "s", limit=3)
    for n in (9, 2, 7, 1, 8, 3):  # a finish hook may reject earlier lines after later ones
        q.add(n, f"r{n}")
    rows = q.rows()
    assert [r[1] for r in rows] == [1, 2, 3, 7] and q.count == 6
    assert "3 more malformed line(s) not kept (lines 7-9)" in rows[-1][3]
    empty = Quarantine("f", "s", limit=0)
    empty.add(5, "x")
    assert [r[1] for r in empty.rows()] == [5] and "1 more" in empty.rows()[0][3]


def test_whole_file_readers_honour_the_limit(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("time,host,temp_c\n" + "not a time,n1,3\n" * 30)
    (tmp_path / "k.csv").write_text("ticket_id,opened_at,host,incident_time,type\n" + "I1,x,n1,never,incident\n" * 30)
    for name, source in (("t.csv", "telemetry_csv"), ("k.csv", "tickets")):
        with quarantine_limit(5):
            res = reliab.ingest(tmp_path / name, source=source)
        assert res.accounting["malformed"].iloc[0] == 30 and len(res.quarantine) == 6
        assert quarantined_lines(res.quarantine) == 30


def test_flight_recorder_entries_use_the_limit(tmp_path: Path) -> None:
    import pickle

    (tmp_path / "nccl_trace_rank_0").write_bytes(pickle.dumps({"version": "2.4", "entries": [None] * 5000}))
    res = read_flight_recorder(str(tmp_path / "nccl_trace_rank_0"))
    assert (res.lines, res.parsed, res.malformed) == (5000, 0, 5000)
    assert len(res.quarantine) == 1001 and quarantined_lines(res.quarantine) == 5000


# --- the schema boundary

def test_conform_rows_refuses_rows_never_the_table() -> None:
    row = {"source": "k", "signal": "xid:79", "severity": "error", "origin": "f:1"}
    rows = [
        {**row, "time": datetime(2024, 1, 1, tzinfo=UTC)},
        {**row, "time": pd.Timestamp(10**16, unit="ms", tz="UTC")},  # pandas would wrap it to 1970
        {**row, "time": pd.Timestamp("9999-01-01", tz="UTC")},
        {**row, "time": datetime(1, 1, 1, tzinfo=UTC)},
        {**row, "time": datetime(2024, 1, 1, tzinfo=UTC), "message": 10**5000},
        {**row, "time": datetime(2024, 1, 1, tzinfo=UTC), "message": float("inf"), "severity": "x"},
        {**row, "time": None},
        {**row, "time": datetime(2024, 1, 1, tzinfo=UTC), "severity": "odd"},
    ]
    frame, refused = schema.conform_rows(rows, "signals")
    assert len(frame) == 1 and sorted(refused) == list(range(1, 8))
    assert frame["time"].iloc[0] == pd.Timestamp("2024-01-01", tz="UTC")
    assert "318857-05-20" in refused[1] and "not a time a table can hold" in refused[1]
    assert "16610 bits" in refused[4] and "fails the check" in refused[5]
    assert refused[6] == "no time" and "fails the check" in refused[7]
    jobs, refused = schema.conform_rows([{"job_id": "1", "state": "FAILED", "origin": "o", "nnodes": 2**64},
                                         {"job_id": "2", "state": "FAILED", "origin": "o", "ngpus": float("inf")},
                                         {"job_id": "3", "state": "FAILED", "origin": "o", "nnodes": 2**63 - 1}],
                                        "jobs")
    assert jobs["job_id"].tolist() == ["3"] and jobs["nnodes"].iloc[0] == 2**63 - 1
    assert "64-bit integer" in refused[0] and "64-bit integer" in refused[1]
    tel = pd.DataFrame({"time": pd.to_datetime(["2024-01-01"] * 3, utc=True), "host": "h",
                        "temp_c": [1.0, float("-inf"), float("nan")]})
    frame, refused = schema.conform_rows(tel, "telemetry")
    assert len(frame) == 2 and list(refused) == [1]  # NaN is a missing value, -inf is not a value


# --- line terminators and bounded lines

@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"ab", b"\r", b"\n", b"\r\n", b"x" * 70, b"\r\r", b"q"]), max_size=40).map(b"".join),
       st.integers(1, 9))
def test_terminators_split_like_universal_newlines(data: bytes, k: int) -> None:
    """``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line, however the reads cut the stream."""
    class Chunks(io.RawIOBase):
        def __init__(self) -> None:
            self.pos = 0

        def readable(self) -> bool:
            return True

        def read1(self, n: int = -1) -> bytes:
            out = data[self.pos:self.pos + k]
            self.pos += len(out)
            return out

    counter = [0]
    got = [raw.rstrip(b"\n") for _, raw, _ in _prefilter.all_lines(_prefilter.Terminators(Chunks()), counter)]
    assert got == data.splitlines() and counter[0] == len(data.splitlines())


def test_zstd_output_is_bounded_per_read(tmp_path: Path) -> None:
    """Regression: a 320 KB zstd of newlines decompressed whole (8.3 GB)."""
    path = tmp_path / "z.zst"
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress(b"\n" * (256 << 20)))
    assert path.stat().st_size < 64 << 10
    raw = _files._ZstdRaw(open(path, "rb"))
    buf = bytearray(1 << 20)
    total, largest = 0, 0
    while n := raw.readinto(memoryview(buf)):
        total += n
        largest = max(largest, len(raw._pending))
    raw.close()
    assert total == 256 << 20 and largest <= 40 << 20  # one feed of ZSTD_INPUT bytes: ~32 MiB at most


def test_polars_route_guards(tmp_path: Path) -> None:
    short, long = tmp_path / "short.log", tmp_path / "long.log"
    short.write_bytes(GOOD_XID.encode() * 50_000)
    long.write_bytes(GOOD_XID.encode() * 10 + b"x" * (3 << 20) + b"\n" + GOOD_XID.encode())
    assert _fastscan.lines_are_short(str(short)) and not _fastscan.lines_are_short(str(long))
    with open(tmp_path / "sparse.log", "wb") as fh:  # a valid line, then 64 MiB of holes
        fh.write(GOOD_XID.encode())
        fh.truncate(64 << 20)
    assert not _fastscan.by_path_ok(str(tmp_path / "sparse.log"), None)
    import gzip

    (tmp_path / "bomb.gz").write_bytes(gzip.compress(b"\0" * (64 << 20)))
    varied = "".join(GOOD_XID.replace("01:20:46.707376", f"01:{i // 60 % 60:02d}:{i % 60:02d}.{i * 7919 % 10**6:06d}")
                     .replace("node1807", f"node{i % 2048:04d}") for i in range(50_000))
    (tmp_path / "log.gz").write_bytes(gzip.compress(varied.encode()))  # ~10x, like real logs
    assert not _fastscan.gzip_is_plausible(str(tmp_path / "bomb.gz"))
    assert _fastscan.gzip_is_plausible(str(tmp_path / "log.gz"))


def test_sparse_file_after_a_valid_line_is_read_in_bounded_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    with open(tmp_path / "n.log", "wb") as fh:
        fh.write(GOOD_XID.encode())
        fh.seek(64 << 20)
        fh.write(b"\n" + GOOD_XID.encode())
    res = reliab.ingest(tmp_path / "n.log")
    assert res.accounting[["lines", "parsed", "malformed"]].values.tolist() == [[3, 2, 1]]
    assert "exceeds" in res.quarantine["reason"].iloc[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert _files.compression_of(tmp_path / "pipe") is None
    with pytest.raises(InputFileError, match="a FIFO, not a regular file"):
        _files.open_binary(tmp_path / "pipe")


def test_telemetry_csv_streams_in_chunks_with_the_same_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunked reading gives the table of a whole-file read, a clockless nvidia-smi capture's
    sample count per GPU carrying over from chunk to chunk."""
    from reliab.io.formats.telemetry import delimited

    text = "index, temperature.gpu\n" + "".join(f"{g}, {40 + s}\n" for s in range(5) for g in range(2))
    (tmp_path / "smi.csv").write_text(text)
    whole = delimited.read_nvidia_smi_csv(str(tmp_path / "smi.csv"), start="2024-06-01T00:00:00Z")
    monkeypatch.setattr(delimited, "CHUNK_LINES", 3)
    chunked = delimited.read_nvidia_smi_csv(str(tmp_path / "smi.csv"), start="2024-06-01T00:00:00Z")
    pd.testing.assert_frame_equal(whole.tables["telemetry"], chunked.tables["telemetry"])
    times = chunked.tables["telemetry"]["time"]
    assert times.dt.second.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
