"""The block/polars prefilter (``_fastscan``) against a line-by-line reference."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.ingest import _fastscan, _lines, _prefilter
from reliab.ingest.kernel import read_kernel

LIMIT = 64
XID = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus."
PIECES = [
    b"2024-06-03T14:02:11+00:00 n1 kernel: " + XID.encode(), b"Jun  3 14:02:11 n2 kernel: ",
    b"[12.5] EDAC MC0: 1 UE x", b"NVRM: Xid (PCI:zz): 1", b"noise ", b"mlx5_core a b: Link down",
    b"\n", b"\r\n", b"\xff\xfe", b"\x00", b"q" * 70, b"SXid", b"caf\xc3\xa9 ",
    b"[Mon Jun  3 14:02:11 2024] nvme nvme3: controller is down; will reset",
]


def reference(data: bytes, literals: tuple[bytes, ...]) -> tuple[list[tuple[int, str, bool]], int]:
    """Candidates ``(lineno, text, over-long)`` and line count, one line at a time."""
    lines = data.split(b"\n") if data else []
    if data.endswith(b"\n"):
        lines.pop()
    out = []
    for i, line in enumerate(lines, 1):
        size = len(line) + (i < len(lines) or data.endswith(b"\n"))
        if size > LIMIT:
            out.append((i, line[: LIMIT + 1].decode("utf-8", "replace")[:50], True))
        elif any(lit in line for lit in literals):
            out.append((i, line.decode("utf-8", "replace").rstrip("\r\n"), False))
    return out, len(lines)


def _small(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(_prefilter, "MAX_LINE_BYTES", LIMIT)
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", LIMIT)
    monkeypatch.setattr(_prefilter, "_CHUNK", 16)
    monkeypatch.setattr(_prefilter, "_BLOCK", LIMIT)
    monkeypatch.setattr(_fastscan, "BLOCK", block)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join), st.integers(8, 200))
def test_fast_candidates_match_reference(monkeypatch: pytest.MonkeyPatch, data: bytes, block: int) -> None:
    _small(monkeypatch, block)
    lits = (b"NVRM: Xid", b"EDAC", b"Link down", b"controller is down")
    counter = [0]
    got = []
    for n, raw, size in _fastscan.fast_candidates(io.BytesIO(data), lits, counter):
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        long = size > LIMIT
        got.append((n, text[:50] if long else text.rstrip("\r\n"), long))
    assert (got, counter[0]) == reference(data, lits)


def _result(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if fast else 1 << 60)
    res = read_kernel(str(path), year=2024)
    signals = res.tables["signals"].astype(str).values.tolist()
    return (res.lines, res.parsed, res.irrelevant, res.malformed, signals,
            res.quarantine.astype(str).values.tolist())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join), st.integers(8, 200),
       st.booleans())
def test_kernel_reader_fast_equals_reference(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                                             data: bytes, block: int, packed: bool) -> None:
    _small(monkeypatch, block)
    path = tmp_path_factory.mktemp("k") / ("node7.log.gz" if packed else "node7.log")
    path.write_bytes(gzip.compress(data) if packed else data)
    assert _result(path, True, monkeypatch) == _result(path, False, monkeypatch)


def test_gzip_multi_member_and_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    line = f"2024-06-03T14:02:11+00:00 node1 kernel: {XID}\n".encode()
    noise = b"2024-06-03T14:02:12+00:00 node1 CRON[1]: run\n"
    path = tmp_path / "node1.log.gz"
    path.write_bytes(gzip.compress(line + noise * 3) + gzip.compress(line) + b"\x00" * 8)
    res = read_kernel(str(path))
    assert (res.lines, res.parsed, res.malformed) == (5, 2, 0)
    big = gzip.compress((line + noise * 50) * 400)
    path.write_bytes(big[: len(big) // 2])
    res = read_kernel(str(path))
    assert res.lines == res.parsed + res.irrelevant + res.malformed and res.parsed > 0
    assert "stream ended abnormally" in res.quarantine["reason"].iloc[-1]
    path.write_bytes(gzip.compress(line) + b"garbage")
    res = read_kernel(str(path))
    assert res.parsed == 1 and "stream ended abnormally" in res.quarantine["reason"].iloc[-1]
