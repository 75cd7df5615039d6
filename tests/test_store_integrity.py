"""The incremental store under damage: half-written lines, lost or corrupt parts and ledger,
stale locks, rewritten captures, odd file names.  Each case ends equal to a one-shot ingest
of the same files, or in a one-line error that names the fix (``--rebuild``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

from reliab.errors import InputFileError
from reliab.io import IngestResult, ingest
from reliab.io._store import Store
from reliab.io._storecheck import StoreError

SAMPLE = Path(__file__).parents[1] / "data" / "llama3-54d"
TABLES = ("signals", "jobs", "telemetry", "quarantine", "interruptions")
STAMP = "2024-06-03T14:02:{:02d}.000000+00:00 node0421 kernel: "
XID48 = "NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error"


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns), na_position="first", kind="stable").reset_index(drop=True)


def _assert_same(got: IngestResult, want: IngestResult) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(_canon(getattr(got, name)), _canon(getattr(want, name)), obj=name,
                                      check_dtype=False)


def _sample_lines(n: int) -> str:
    with open(SAMPLE / "syslog" / "messages-20240601.log", encoding="utf-8") as fh:
        return "".join(line for _, line in zip(range(n), fh, strict=False))


def _cli(*args: str) -> subprocess.CompletedProcess:
    """``reliab ARGS`` through the command line, in this process (tests/_cli.py)."""
    return run_in_process(*args, env={"COLUMNS": "200"})


def test_half_written_line_is_held_until_complete(tmp_path: Path) -> None:
    """A last line with no newline is not committed; completed later it is read as it ends."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    log = logs / "messages"
    partial = STAMP.format(2) + XID48[:len("NVRM: Xid (PCI:0000:3b:00): 4")]
    log.write_text(STAMP.format(1) + "usb 1-1: new high-speed USB device\n" + partial)
    first = ingest(logs, store=store)
    assert first.signals.empty, first.signals  # not xid:4
    assert first.accounting[["lines", "irrelevant"]].values.tolist() == [[1, 1]]
    assert "held" in first.sources[str(log)].reason
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(XID48[len("NVRM: Xid (PCI:0000:3b:00): 4"):] + "\n")
    second = ingest(logs, store=store)
    assert second.signals["signal"].tolist() == ["xid:48"]
    assert second.accounting[["status", "lines", "parsed"]].values.tolist() == [["appended", 1, 1]]
    _assert_same(second, ingest(logs))


def test_half_written_line_is_held_on_the_dask_engine(dask_client: object, tmp_path: Path) -> None:
    """``store=`` with ``engine="dask"`` holds the partial tail exactly as the local engine does."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "messages"
    cut = len("NVRM: Xid (PCI:0000:3b:00): 4")
    log.write_text(STAMP.format(1) + "usb 1-1: new high-speed USB device\n" + STAMP.format(2) + XID48[:cut])
    first = ingest(logs, store=tmp_path / "store", engine="dask", client=dask_client)
    assert first.signals.empty and first.accounting["lines"].tolist() == [1]
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(XID48[cut:] + "\n")
    second = ingest(logs, store=tmp_path / "store", engine="dask", client=dask_client)
    assert second.signals["signal"].tolist() == ["xid:48"]
    _assert_same(second, ingest(logs))


def test_half_written_line_of_a_rotated_file_is_committed(tmp_path: Path) -> None:
    """Once the file is rotated nobody completes the line: it is read as it is."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    log = logs / "messages"
    log.write_text(STAMP.format(1) + XID48 + "\n" + STAMP.format(2) + XID48)  # complete text, no newline
    assert len(ingest(logs, store=store).signals) == 1
    log.rename(logs / "messages.1")
    res = ingest(logs, store=store)
    assert res.accounting[["status", "lines"]].values.tolist() == [["rotated", 1]]
    assert len(res.signals) == 2
    _assert_same(res, ingest(logs))


def _two_runs(tmp_path: Path) -> tuple[Path, Path]:
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    text = _sample_lines(600)
    (logs / "messages").write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n")
    ingest(logs, store=store)
    (logs / "messages").write_text(text)
    ingest(logs, store=store)
    assert len(Store(store).runs) == 2
    return logs, store


@pytest.mark.parametrize("damage", ["deleted part", "corrupt part", "truncated ledger", "ledger deleted"])
def test_damaged_store_is_detected_and_rebuilt(tmp_path: Path, damage: str) -> None:
    """A lost or corrupt part or ledger never yields a silently partial result."""
    logs, store = _two_runs(tmp_path)
    part = sorted((store / "signals").glob("*.parquet"))[0]
    ledger = store / "ledger.parquet"
    if damage == "deleted part":
        part.unlink()
    elif damage == "corrupt part":
        data = bytearray(part.read_bytes())
        data[len(data) // 2] ^= 0xFF
        part.write_bytes(bytes(data))
    elif damage == "truncated ledger":
        ledger.write_bytes(ledger.read_bytes()[:100])
    else:
        ledger.unlink()
    want = ingest(logs)
    if damage == "ledger deleted":  # parts without a ledger: discarded, everything read again
        res = ingest(logs, store=store)
        assert any("no ledger" in n for n in res.notes)
        _assert_same(res, want)
        return
    with pytest.raises(StoreError) as info:
        ingest(logs, store=store)
    message = str(info.value)
    assert "--rebuild" in message and "\n" not in message
    assert (part.name in message) if "part" in damage else ("ledger" in message)
    out = _cli("ingest", str(logs), "--store", str(store), "-q")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "--rebuild" in out.stderr
    out = _cli("ingest", str(logs), "--store", str(store), "--rebuild", "-q")
    assert out.returncode == 0, out.stderr
    _assert_same(ingest(logs, store=store), want)


def test_rewritten_capture_with_the_same_first_64_kib(tmp_path: Path) -> None:
    """An overwritten capture sharing its first 64 KiB drops the stale events."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    log = logs / "capture.log"
    filler = "".join(STAMP.format(0) + f"usb 1-1: noise line {i:05d} padding padding\n" for i in range(1200))
    assert len(filler) > 65536
    log.write_text(filler + STAMP.format(5) + XID48 + "\n")
    assert ingest(logs, store=store).signals["signal"].tolist() == ["xid:48"]
    xid79 = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    log.write_text(filler + STAMP.format(6) + xid79 + "\n" + STAMP.format(7) + "usb 1-1: more\n")
    res = ingest(logs, store=store)
    assert res.accounting["status"].tolist() == ["rewritten"]
    assert res.signals["signal"].tolist() == ["xid:79"]
    _assert_same(res, ingest(logs))
    assert ingest(logs, store=store).accounting["status"].tolist() == ["unchanged"]


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from reliab.io._storecheck import locked
    with locked(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(120)
""")


def _hold(store: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_lock_live_holder_refuses_and_dead_holder_frees(tmp_path: Path) -> None:
    """A live writer keeps others out (naming its pid); a killed one leaves no stale lock."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    (logs / "messages").write_text(_sample_lines(50))
    holder = _hold(store)
    try:
        with pytest.raises(InputFileError, match=f"in use by process {holder.pid}"):
            ingest(logs, store=store)
        out = _cli("ingest", str(logs), "--store", str(store), "-q")
        assert out.returncode == 1 and "in use" in out.stderr and "Traceback" not in out.stderr
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert str(holder.pid) in (store / ".lock").read_text()  # the dead holder's pid is still written
    res = ingest(logs, store=store)  # ... but the kernel released its lock
    assert res.accounting["status"].tolist() == ["new"]


def test_concurrent_writers_are_serialised(tmp_path: Path) -> None:
    """Of several ingests started at once, each either runs alone or is refused; none overlap."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    (logs / "messages").write_text(_sample_lines(300))
    script = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from reliab.io._storecheck import locked
        try:
            with locked(Path(sys.argv[1])):
                start = time.monotonic(); time.sleep(0.3); print(start, time.monotonic())
        except Exception as exc:
            print("refused", exc)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(store)], stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    spans = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        if not out.startswith("refused"):
            spans.append(tuple(map(float, out.split())))
    assert spans
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    _assert_same(ingest(logs, store=store), ingest(logs))


def test_store_keeps_a_non_utf8_file_name(tmp_path: Path) -> None:
    """A file name of non-UTF-8 bytes survives the store's Parquet parts and ledger."""
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    name = os.fsdecode(b"caf\xe9-node0421.log")
    (logs / name).write_text(STAMP.format(1) + XID48 + "\n")
    first = ingest(logs, store=store)
    assert first.signals["origin"].tolist() == [f"{logs / name}:1"]
    again = ingest(logs, store=store)
    assert again.accounting["status"].tolist() == ["unchanged"]
    assert Store(store).ledger()["path"].tolist() == [str(logs / name)]
    _assert_same(again, ingest(logs))


def test_a_fresh_store_has_no_notes(tmp_path: Path) -> None:
    """Regression: a first run into an empty store says nothing about lost ledgers."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "messages").write_text(_sample_lines(20))
    res = ingest(tmp_path / "logs", store=tmp_path / "store")
    assert not [n for n in res.notes if "store" in n]
