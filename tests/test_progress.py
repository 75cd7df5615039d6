"""Checkpoint saves and resumes read from training logs (reliab.io.formats._progress)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ParseError
from reliab.io.formats._progress import LOADED, SAVED, progress_row

REF = Path(__file__).parent / "reference" / "training_logs"


def _state() -> dict:
    return {"tz": UTC, "job_id": "7"}


def _read(path: Path) -> pd.DataFrame:
    res = reliab.ingest(path, source="nccl")
    assert res.accounting["malformed"].sum() == 0
    return res.signals[res.signals["signal"].astype(str).str.startswith("train:")]


def test_megatron_bridge_excerpt_takes_the_previous_timestamp(tmp_path):
    """Reference: real Megatron-Bridge output (tests/reference/training_logs/SOURCE.md)."""
    log = tmp_path / "slurm-4242.out"
    log.write_bytes((REF / "megatron_bridge_save.log").read_bytes())
    rows = _read(log)
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["signal"] == SAVED and row["job_id"] == "4242"
    assert row["time"] == pd.Timestamp("2025-10-06 03:27:07", tz="UTC")
    assert row["message"] == "step=10 via=megatron time=previous-line"


def test_torchtitan_excerpt_keeps_time_and_duration(tmp_path):
    """Reference: real torchtitan output; one save, its own time and the 5.53 s it took."""
    log = tmp_path / "slurm-99.out"
    log.write_bytes((REF / "torchtitan_save.log").read_bytes())
    rows = _read(log)
    assert list(rows["message"]) == ["write_s=5.53 via=torchtitan"]
    assert rows["time"].iloc[0] == pd.Timestamp("2025-04-01 00:25:59.616", tz="UTC")


@pytest.mark.parametrize(("line", "signal", "message"), [
    # message texts as printed by the frameworks' source (file named in the module docstring)
    ("2024-06-03 10:00:00,000 INFO   successfully saved checkpoint at iteration     200 to /ckpt",
     SAVED, "step=200 via=megatron"),
    ("[titan] 2024-06-03 10:00:00,000 - root - INFO - Finished saving the checkpoint in 0.60 seconds.",
     SAVED, "write_s=0.6 via=torchtitan"),
    ("2024-06-03 10:00:00,000 INFO Saving model checkpoint to out/checkpoint-500", SAVED,
     "step=500 via=transformers"),
    ("2024-06-03 10:00:00,000 Epoch 3, global step 1200: 'val_loss' reached 0.41000 (best 0.41000), "
     "saving model to '/ckpt/epoch=3-step=1200.ckpt' as top 1", SAVED, "step=1200 via=lightning"),
    ("2024-06-03 10:00:00,000 INFO  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] at "
     "iteration 845", LOADED, "step=845 via=megatron"),
    ("[rank0]:2024-06-03 10:00:00,000 - root - INFO - Finished loading the checkpoint in 54.49 seconds.",
     LOADED, "load_s=54.49 via=torchtitan"),
    ("2024-06-03 10:00:00,000 INFO   Continuing training from global step 500", LOADED,
     "step=500 via=transformers"),
    ("2024-06-03 10:00:00,000 Restored all states from the checkpoint at /ckpt/last.ckpt", LOADED,
     "via=lightning"),
    ("2024-06-03 10:00:00,000 Restored all states from the checkpoint file at /ckpt/last.ckpt",
     LOADED, "via=lightning"),
])
def test_framework_lines(tmp_path, line, signal, message):
    log = tmp_path / "slurm-1.out"
    log.write_text(line + "\n")
    rows = _read(log)
    assert list(rows["signal"]) == [signal]
    assert list(rows["message"]) == [message]
    assert rows["time"].iloc[0] == pd.Timestamp("2024-06-03 10:00:00", tz="UTC")


def test_not_checkpoint_lines(tmp_path):
    log = tmp_path / "slurm-1.out"
    log.write_text("2024-06-03 10:00:00,000 INFO [trainer] job 1 starting, resuming from checkpoint step 5\n"
                   "2024-06-03 10:00:01,000 INFO checkpoint_interval = 500\n"
                   "2024-06-03 10:00:02,000 INFO [trainer] step 6 | loss 1.9\n")
    assert _read(log).empty


def test_checkpoint_line_without_any_time_is_quarantined(tmp_path):
    log = tmp_path / "slurm-1.out"
    log.write_text("  successfully saved checkpoint from iteration      10 to /ckpt [ t 1/1, p 1/1 ]\n")
    res = reliab.ingest(log, source="nccl")
    assert len(res.quarantine) == 1
    assert "without a timestamp" in res.quarantine["reason"].iloc[0]
    acc = res.accounting.iloc[0]
    assert acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"] == 1


def test_progress_row_direct():
    state = _state()
    with pytest.raises(ParseError, match="without a timestamp"):
        progress_row("successfully saved checkpoint from iteration 3 to /c", None, state)
    progress_row(" [2024-08-01 09:44:55] iteration        1/       5 | consumed samples: 32", None, state)
    row = progress_row("successfully saved checkpoint from iteration 3 to /c", None, state)
    assert row["time"] == pd.Timestamp("2024-08-01 09:44:55", tz="UTC")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_never_crashes(text):
    """Any text is a row, None, or a ParseError — nothing else escapes."""
    try:
        row = progress_row(text, None, _state())
    except ParseError:
        return
    assert row is None or row["signal"] in (SAVED, LOADED)
