"""The store's "hold an unterminated last line" rule is for line formats only: a Parquet
file or a flight-recorder pickle has no lines and never ends with a newline.  A run whose
accounting cannot be made never commits."""

from __future__ import annotations

import pickle
from pathlib import Path

import pandas as pd

from reliab.io import ingest
from reliab.io._store import Store

_ENTRY = {"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1,
          "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",
          "time_created_ns": 1_717_400_000_000_000_000, "duration_ms": 1.5, "timeout_ms": 600000,
          "state": "completed", "retired": True, "is_p2p": False}


def test_parquet_telemetry_keeps_its_last_row(tmp_path: Path) -> None:
    """Regression: the store held the Parquet file's last row as a half-written line, for good."""
    logs = tmp_path / "logs"
    logs.mkdir()
    frame = pd.DataFrame({"time": pd.date_range("2024-06-01", periods=3, freq="min", tz="UTC"),
                          "host": ["n1", "n1", "n1"], "gpu": ["0", "0", "0"], "power_w": [100.0, 200.0, 300.0]})
    frame.to_parquet(logs / "telemetry.parquet")
    res = ingest(logs, store=tmp_path / "store")
    assert sorted(res.telemetry["power_w"].tolist()) == [100.0, 200.0, 300.0]
    assert res.accounting[["lines", "parsed", "irrelevant"]].values.tolist() == [[3, 3, 0]]
    again = ingest(logs, store=tmp_path / "store")
    assert sorted(again.telemetry["power_w"].tolist()) == [100.0, 200.0, 300.0]


def test_flight_recorder_dump_keeps_its_last_entry(tmp_path: Path) -> None:
    """Regression: the store dropped the dump's last entry (it has no newline)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    entries = [dict(_ENTRY, record_id=i, collective_seq_id=i + 1) for i in range(3)]
    entries[-1]["state"] = "started"  # the pending one, seen only in the last entry
    (logs / "nccl_trace_rank_0").write_bytes(pickle.dumps({"version": "2.4", "entries": entries}, protocol=2))
    res = ingest(logs, store=tmp_path / "store")
    assert res.accounting[["lines", "parsed", "irrelevant"]].values.tolist() == [[3, 3, 0]]
    assert res.signals["signal"].tolist() == ["nccl:fr_pending"]


def test_unreadable_parquet_is_a_clean_row_and_the_run_commits_it(tmp_path: Path) -> None:
    """Regression: an unreadable Parquet file gave ``irrelevant = -1`` and the run failed
    after committing it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    good = logs / "messages"
    good.write_text("2024-06-03T14:02:01.000000+00:00 node0421 kernel: usb 1-1: new device\n")
    (logs / "telemetry.parquet").write_bytes(b"PAR1" + b"\x00" * 100 + b"PAR1")
    res = ingest(logs, store=tmp_path / "store")
    acc = res.accounting.set_index("path")
    row = acc.loc[str(logs / "telemetry.parquet")]
    assert (row["lines"], row["parsed"], row["irrelevant"], row["malformed"]) == (1, 0, 0, 1)
    assert (acc[["lines", "parsed", "irrelevant", "malformed"]] >= 0).all().all()
    assert Store(tmp_path / "store").ledger()["irrelevant"].min() >= 0


def test_a_failed_run_never_commits(tmp_path: Path, monkeypatch: object) -> None:
    """A run whose accounting fails leaves the store as it was (no ledger written)."""
    import pytest

    import reliab.io._driver as driver

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "messages").write_text("2024-06-03T14:02:01.000000+00:00 node0421 kernel: usb 1-1: new device\n")

    def broken(results: object) -> None:
        raise RuntimeError("accounting failed")

    monkeypatch.setattr(driver, "accounting_of", broken)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="accounting failed"):
        ingest(logs, store=tmp_path / "store")
    assert len(Store(tmp_path / "store").ledger()) == 0
