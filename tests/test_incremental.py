"""Incremental ingest into a store: nothing lost, nothing twice (re-ingest, append, rotation)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

from reliab.io import IngestResult, _store, ingest
from reliab.io._store import Store
from reliab.io._storecontent import family

SAMPLE = Path(__file__).parents[1] / "data" / "llama3-54d"
TABLES = ("signals", "jobs", "telemetry", "quarantine", "interruptions")
BAD_KERNEL = "2024-06-01T23:59:59.000000+00:00 node0421 kernel: NVRM: Xid (PCI:0000:18:00): garbage\n"


def _lines(rel: str, n: int) -> list[str]:
    with open(SAMPLE / rel, encoding="utf-8") as fh:
        return [line for _, line in zip(range(n), fh, strict=False)]


#: kind -> (file name, header lines, data lines) cut from the bundled sample
KINDS = {
    "kernel": ("messages", [], _lines("syslog/messages-20240601.log", 700)),
    "sacct": ("sacct.txt", *(lambda ls: ([ls[0]], ls[1:]))(_lines("slurm/sacct.txt", 400))),
    "tickets": ("incidents.csv", *(lambda ls: ([ls[0]], ls[1:]))(_lines("tickets/incidents.csv", 168))),
    "telemetry": ("cluster_1min.csv", *(lambda ls: ([ls[0]], ls[1:]))(_lines("telemetry/cluster_1min.csv", 400))),
}


def _parts(kind: str, n: int) -> tuple[str, list[str], list[list[str]]]:
    """File name, header and the data lines cut into ``n`` consecutive slices."""
    name, header, data = KINDS[kind]
    step = len(data) // n
    return name, header, [data[i * step:(i + 1) * step] for i in range(n)]


def _write(path: Path, lines: list[str], *, append: bool = False, gz: bool = False) -> None:
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.writelines(lines)
        return
    with open(path, "a" if append else "w", encoding="utf-8") as fh:
        fh.writelines(lines)


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns), na_position="first", kind="stable").reset_index(drop=True)


def _assert_same(got: IngestResult, want: IngestResult) -> None:
    """Same tables, origins included, up to row order."""
    for name in TABLES:
        pd.testing.assert_frame_equal(_canon(getattr(got, name)), _canon(getattr(want, name)), obj=name)


def _status(res: IngestResult) -> dict[str, str]:
    return {Path(p).name: s for p, s in zip(res.accounting["path"], res.accounting["status"], strict=True)}


@pytest.mark.parametrize("kind", ["kernel", "sacct", "tickets", "telemetry"])
def test_same_file_twice_adds_nothing(tmp_path: Path, kind: str) -> None:
    name, header, (data,) = _parts(kind, 1)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    _write(logs / name, header + data)
    first = ingest(logs, store=store)
    assert _status(first) == {name: "new"} and first.accounting["lines"].iloc[0] == len(header + data)
    ledger = (store / "ledger.parquet").stat().st_mtime_ns
    second = ingest(logs, store=store)
    assert _status(second) == {name: "unchanged"}
    assert second.accounting[["lines", "parsed", "irrelevant", "malformed"]].to_numpy().sum() == 0
    assert (store / "ledger.parquet").stat().st_mtime_ns == ledger  # nothing written
    _assert_same(second, first)
    _assert_same(second, ingest(logs))
    os.utime(logs / name, ns=(1, 1))  # touched, same content: still unchanged
    assert _status(ingest(logs, store=store)) == {name: "unchanged"}
    assert len(Store(store).runs) == 1


@pytest.mark.parametrize("kind", ["kernel", "sacct", "tickets", "telemetry"])
def test_append_reads_only_new_lines(tmp_path: Path, kind: str) -> None:
    name, header, (a, b, c) = _parts(kind, 3)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    _write(logs / name, header + a)
    ingest(logs, store=store)
    extra = [BAD_KERNEL] if kind == "kernel" else []
    _write(logs / name, b + extra, append=True)
    second = ingest(logs, store=store)
    assert _status(second) == {name: "appended"}
    acc = second.accounting.iloc[0]
    assert acc["lines"] == len(b) + len(extra)
    assert acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]
    assert acc["malformed"] == len(extra)
    _assert_same(second, ingest(logs))
    _write(logs / name, c, append=True)
    third = ingest(logs, store=store)
    assert _status(third) == {name: "appended"} and third.accounting["lines"].iloc[0] == len(c)
    scratch = ingest(logs)
    _assert_same(third, scratch)
    assert Store(store).ledger()["lines"].tolist() == scratch.accounting["lines"].tolist()


@pytest.mark.parametrize("kind", ["kernel", "sacct", "tickets"])
def test_rotation_keeps_every_line_once(tmp_path: Path, kind: str) -> None:
    name, header, (a, a2, b, b2, c) = _parts(kind, 5)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    log, one, two = logs / name, logs / f"{name}.1", logs / f"{name}.2.gz"
    _write(log, header + a)
    ingest(logs, store=store)
    # rotation 1: the log grew, was renamed to .1, and a fresh log started
    _write(log, a2, append=True)
    log.rename(one)
    _write(log, header + b)
    res = ingest(logs, store=store)
    assert _status(res) == {name: "new", f"{name}.1": "rotated"}
    assert res.accounting.set_index("status").loc["rotated", "lines"] == len(a2)
    _assert_same(res, ingest(logs))
    # rotation 2: .1 compressed to .2.gz unchanged; the log grew and became .1
    _write(two, (header + a + a2), gz=True)
    one.unlink()
    _write(log, b2, append=True)
    log.rename(one)
    _write(log, header + c)
    res = ingest(logs, store=store)
    assert _status(res) == {name: "new", f"{name}.1": "rotated", f"{name}.2.gz": "rotated"}
    lines = dict(zip(res.accounting["path"].map(lambda p: Path(p).name), res.accounting["lines"], strict=True))
    assert lines == {name: len(header + c), f"{name}.1": len(b2), f"{name}.2.gz": 0}
    # origins follow each content to its current file: exactly a from-scratch ingest
    _assert_same(res, ingest(logs))
    for table in ("signals", "jobs"):
        assert getattr(res, table)["origin"].is_unique
    assert _status(ingest(logs, store=store)) == dict.fromkeys((name, f"{name}.1", f"{name}.2.gz"), "unchanged")


def test_new_content_in_a_family_is_new_and_dated_names_match(tmp_path: Path) -> None:
    _, _, (a, b) = _parts("kernel", 2)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    _write(logs / "messages", a)
    ingest(logs, store=store)
    (logs / "messages").rename(logs / "messages-20240601")
    _write(logs / "messages", b)
    res = ingest(logs, store=store)
    assert _status(res) == {"messages": "new", "messages-20240601": "rotated"}
    _assert_same(res, ingest(logs))


def test_uncommitted_parts_are_ignored_and_swept(tmp_path: Path) -> None:
    _, _, (a, b) = _parts("kernel", 2)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    _write(logs / "messages", a)
    first = ingest(logs, store=store)
    stray = store / "signals" / "run-00000000000000000002.parquet"  # a crashed run: parts, no ledger
    first.signals.head(5).to_parquet(stray)
    _assert_same(ingest(logs, store=store), first)
    _write(logs / "messages", b, append=True)
    res = ingest(logs, store=store)
    _assert_same(res, ingest(logs))
    assert len(Store(store).runs) == 2 and not stray.exists()
    assert not list(store.glob("*/.*.tmp")) and (store / ".lock").read_text() == ""  # released


def test_many_runs_are_compacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_store, "MAX_RUNS", 3)
    _, _, parts = _parts("kernel", 6)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    for i, part in enumerate(parts):
        _write(logs / "messages", part, append=i > 0)
        res = ingest(logs, store=store)
        assert len(Store(store).runs) == (i % 3) + 1
        assert len(list((store / "signals").glob("*.parquet"))) == (i % 3) + 1
        _assert_same(res, ingest(logs))


def test_family() -> None:
    base = ("/var/log", "messages")
    for name in ("messages", "messages.1", "messages.2.gz", "messages-20240603", "messages-2024060312.xz"):
        assert family(f"/var/log/{name}") == base
    assert family("/var/log/syslog-20240603.log") == family("/var/log/syslog.log")
    assert family("/var/log/node0001.log") != family("/var/log/node0002.log")


def test_cli_store(tmp_path: Path) -> None:
    _, _, (a, b) = _parts("kernel", 2)
    logs, store = tmp_path / "logs", tmp_path / "store"
    logs.mkdir()
    _write(logs / "messages", a)

    def run() -> str:  # the command in this process (tests/_cli.py)
        out = run_in_process("ingest", str(logs), "--store", str(store), "-q", env={"COLUMNS": "200"})
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "1 new" in run()
    assert "1 unchanged" in run()
    _write(logs / "messages", b, append=True)
    assert "1 appended" in run()
