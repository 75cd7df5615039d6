"""NCCL flight-recorder dumps: safe loading and the cross-rank straggler diagnosis."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.errors import ParseError
from reliab.io.formats.flight_recorder import (
    diagnose_flight_recorder,
    load_dump,
    read_flight_recorder,
)

T0 = 1_717_400_000_000_000_000  # ns


def _entry(seq: int, state: str, *, op: str = "nccl:all_reduce", pg: str = "0") -> dict:
    return {
        "record_id": seq, "pg_id": int(pg), "process_group": (pg, "default_pg"),
        "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq, "profiling_name": op,
        "time_created_ns": T0 + seq * 1_000_000, "duration_ms": 1.5, "timeout_ms": 600000,
        "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2501}],
        "state": state, "input_sizes": [[1024]], "input_dtypes": ["Float"],
        "output_sizes": [[1024]], "output_dtypes": ["Float"], "retired": state == "completed",
        "time_discovered_started_ns": None, "time_discovered_completed_ns": None, "is_p2p": False,
    }


def _dump(entries: list[dict], version: str = "2.4") -> dict:
    return {"version": version, "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
            "pg_status": {}, "entries": entries, "nccl_comm_state": {}}


def _write(tmp: Path, rank: int, dump: dict) -> Path:
    p = tmp / f"nccl_trace_rank_{rank}"
    p.write_bytes(pickle.dumps(dump, protocol=4))
    return p


def test_straggler_rank_is_found(tmp_path: Path) -> None:
    """Regression: ranks 0,1,3 started seq 548 and wait; rank 2 never started it -> rank 2 suspected."""
    paths = []
    for rank in range(4):
        entries = [_entry(s, "completed") for s in range(540, 548)]
        if rank != 2:
            entries.append(_entry(548, "started"))
        paths.append(_write(tmp_path, rank, _dump(entries)))
    diag = diagnose_flight_recorder(paths)
    assert diag.suspects[["rank", "reason", "seq", "op"]].values.tolist() == [[2, "not_started", 548, "nccl:all_reduce"]]
    assert "rank 2" in str(diag)


def test_missing_rank_is_found(tmp_path: Path) -> None:
    """Regression: a world of 4 with only 3 dumps reports the absent rank as missing."""
    paths = [_write(tmp_path, r, _dump([_entry(1, "completed")])) for r in (0, 1, 3)]
    diag = diagnose_flight_recorder(paths, world_size=4)
    assert diag.suspects.loc[diag.suspects["reason"] == "missing", "rank"].tolist() == [2]


def test_reader_accounts_for_every_entry(tmp_path: Path) -> None:
    """Regression: entries are the accounting unit; a broken entry is quarantined, not fatal."""
    entries = [_entry(1, "completed"), _entry(2, "started"), {"state": "exploded"}]
    p = _write(tmp_path, 0, _dump(entries))
    res = read_flight_recorder(str(p))
    assert (res.lines, res.parsed, res.malformed) == (3, 2, 1)
    assert res.quarantine["lineno"].tolist() == [3]
    assert res.tables["signals"]["signal"].tolist() == ["nccl:fr_pending"]


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/reliab_pwned_by_pickle",))


def test_malicious_pickle_is_refused(tmp_path: Path) -> None:
    """Security: a dump whose pickle calls os.system is refused and nothing runs."""
    marker = Path("/tmp/reliab_pwned_by_pickle")
    marker.unlink(missing_ok=True)
    p = tmp_path / "nccl_trace_rank_0"
    p.write_bytes(pickle.dumps({"entries": [_Evil()]}))
    with pytest.raises(ParseError, match="refused"):
        load_dump(p.read_bytes())
    res = read_flight_recorder(str(p))
    assert res.malformed == 1 and "refused to load global" in res.quarantine["reason"].iloc[0]
    assert not marker.exists()


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_escape(data: bytes) -> None:
    """Fuzz: arbitrary bytes give ParseError or a dict, never another exception."""
    try:
        out = load_dump(data)
    except ParseError:
        return
    assert isinstance(out, dict)
