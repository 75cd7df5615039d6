"""Flight-recorder dumps that unpickle cleanly but hold hostile values.

Dump layout: ``torch/csrc/distributed/c10d/FlightRecorder.hpp`` (PyTorch 2.x).  Values too
deep for ``pickle.dumps`` (a list nested a million deep) are written as raw pickle opcodes
(``EMPTY_LIST`` then ``APPEND``; protocol 2, ``pickletools`` documents each opcode).
"""

from __future__ import annotations

import pickle
import pickletools
import time
from pathlib import Path

import pytest

import reliab
from reliab.io.formats.flight_recorder import MAX_ENTRIES, read_flight_recorder, short_repr

T0 = 1_717_400_000_000_000_000  # ns


def _entry(**changes: object) -> dict:
    entry = {"record_id": 1, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1,
             "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce", "time_created_ns": T0,
             "duration_ms": 1.5, "timeout_ms": 600000, "state": "started", "retired": False, "is_p2p": False}
    entry.update(changes)
    return entry


def _ops(obj: object) -> bytes:
    """Opcodes that push ``obj`` (protocol 2, without PROTO and STOP)."""
    body = pickletools.optimize(pickle.dumps(obj, protocol=2))
    return body[2:-1]


def _deep(n: int) -> bytes:
    """Opcodes that push a list nested ``n`` deep: ``[[[...]]]``."""
    return b"]" * n + b"a" * (n - 1)


def _dump(entries: list[bytes]) -> bytes:
    """A dump dict ``{"version": "2.4", "entries": [...]}`` from the opcodes of each entry."""
    parts = [b"\x80\x02}", _ops("version"), _ops("2.4"), b"s", _ops("entries"), b"]"]
    for ops in entries:
        parts += [ops, b"a"]
    return b"".join([*parts, b"s."])


def _entry_with(key: str, value_ops: bytes) -> bytes:
    entry = _entry()
    entry.pop(key, None)
    return _ops(entry) + _ops(key) + value_ops + b"s"


def _exponential(levels: int) -> list:
    """A list whose repr has 2**levels leaves (shared sub-lists)."""
    out: list = []
    for _ in range(levels):
        out = [out, out]
    return out


def test_hostile_entry_values_are_quarantined_per_entry(tmp_path: Path) -> None:
    """Regression: ``record_id="abc"``, ``time_created_ns=2**80``, ``10**5000`` or a list
    nested 1e6 deep aborted the whole ingest."""
    cyclic: list = []
    cyclic.append(cyclic)
    entries = [
        _ops(_entry()),
        _ops(_entry(record_id="abc")),
        _ops(_entry(time_created_ns=2**80)),
        _ops(_entry(time_created_ns=10**5000)),
        _entry_with("record_id", _deep(1_000_000)),
        _entry_with("pg_id", _deep(10_000)),
        _ops(_exponential(60)),
        _ops(cyclic),
        _deep(10_000),
        _ops(_entry(duration_ms=float("inf"))),
        _ops(_entry(state=["started"])),
        _ops(_entry(is_p2p="yes")),
        _ops(_entry(record_id=2, state="completed")),
    ]
    path = tmp_path / "nccl_trace_rank_3"
    path.write_bytes(_dump(entries))
    started = time.perf_counter()
    res = read_flight_recorder(str(path))
    assert time.perf_counter() - started < 30
    assert (res.lines, res.parsed, res.malformed) == (13, 2, 11)
    reasons = dict(zip(res.quarantine["lineno"], res.quarantine["reason"], strict=True))
    assert reasons[2] == "record_id 'abc' is not an integer"
    assert reasons[3].startswith("time_created_ns 1208925819614629174706176 is outside")
    assert reasons[4].startswith("time_created_ns <integer of 16610 bits> is outside")
    assert reasons[5] == "record_id [[[[...]]]] is not an integer"
    assert reasons[6] == "pg_id [[[[...]]]] is not text"
    assert reasons[7] == reasons[8] == reasons[9] == "entry is a list, not a dict"
    assert "duration_ms inf" in reasons[10] and "unknown state" in reasons[11] and "is_p2p" in reasons[12]
    assert all(len(t) < 300 for t in res.quarantine["text"])  # bounded reprs
    assert res.tables["signals"]["signal"].tolist() == ["nccl:fr_pending"]


def test_huge_entry_lists_are_refused_as_a_whole(tmp_path: Path) -> None:
    """Regression: an entry list of 10M ``None`` used GBs; now one per-file reason."""
    path = tmp_path / "nccl_trace_rank_0"
    path.write_bytes(pickle.dumps({"version": "2.4", "entries": [None] * (MAX_ENTRIES + 1)}, protocol=4))
    res = reliab.ingest(path, source="flight_recorder")
    assert res.accounting[["lines", "malformed"]].values.tolist() == [[1, 1]]
    assert f"more than {MAX_ENTRIES}" in res.quarantine["reason"].iloc[0]


def test_dump_level_values(tmp_path: Path) -> None:
    deep_version = b"\x80\x02}" + _ops("version") + _deep(100_000) + b"s" + _ops("entries") + b"]" + _ops(_entry()) \
        + b"as" + _ops("rank") + _ops(2**80) + b"s."
    path = tmp_path / "nccl_trace_rank_5"
    path.write_bytes(deep_version)
    res = read_flight_recorder(str(path))
    assert (res.lines, res.parsed) == (1, 1)
    assert res.tables["flight_recorder"]["rank"].tolist() == [5]  # 2**80 is no rank: the name's is used
    assert res.tables["flight_recorder"]["version"].tolist() == ["?"]


@pytest.mark.parametrize("make", [lambda: 10**5000, lambda: b"x" * 10**7, lambda: {i: i for i in range(10**5)},
                                  lambda: _exponential(200)], ids=["int", "bytes", "dict", "exponential"])
def test_short_repr_is_bounded(make: object) -> None:
    value = make()  # type: ignore[operator]
    started = time.perf_counter()
    assert len(short_repr(value)) < 200
    assert time.perf_counter() - started < 1
