"""The local engine with ``output=``: tables streamed to partitioned Parquet equal the in-memory run.

``reliab.ingest(paths, output=folder)`` writes each file's tables as it is read and a large
kernel log's bulk rows in batches (:mod:`reliab.io._streamed`); everything read back (and
every table the result holds) must equal ``reliab.ingest(paths)``, row for row and in order.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ParseError
from reliab.io import _fastscan, _partitioned, _streamed
from reliab.io._result import OutputIngestResult

DATA = Path(__file__).resolve().parents[1] / "data" / "llama3-54d"
TABLES = ("signals", "jobs", "interruptions", "user_failures", "telemetry", "quarantine", "accounting")

# one line per shape: the bulk Xid parser takes the first two, the per-line parser the others
# (MCE, AER, "fallen off the bus" without an Xid, EDAC, SXid); the last two are malformed
_SHAPES = (
    "{t} {h} kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "{t} {h} kernel: NVRM: Xid (PCI:0000:3a:00): 48, pid=1234, name=python3, An uncorrectable double bit error",
    "{t} {h} kernel: mce: [Hardware Error]: Machine check events logged",
    "{t} {h} kernel: pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0",
    "{t} {h} kernel: NVRM: GPU at PCI:0000:18:00: GPU has fallen off the bus.",
    "{t} {h} kernel: EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0"
    " page:0x12345 offset:0x0 grain:32 syndrome:0x0)",
    "{t} {h} kernel: nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 33 egress non-posted"
    " PRIV error (First)",
    "2024-13-03T14:02:11+00:00 {h} kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, bad month",
    "{t} {h} kernel: NVRM: Xid (PCI:0000:18:00): 92a, x",
)
_NOISE = "{t} {h} systemd[1]: Started Session 12 of user root."


def write_kernel_log(path: Path, n: int, seed: int, *, events: list[tuple[pd.Timestamp, str]] = ()) -> None:
    """An RFC 3339 kernel log of ``n`` lines: noise, bulk Xid lines, per-line shapes, malformed lines.

    Times go forward in whole seconds (many rows share one) with a step back now and then, so
    that the final time sort and its ties matter; ``events`` adds an Xid 79 line per (time, host).
    """
    rng = random.Random(seed)
    t = pd.Timestamp("2024-06-03T00:00:00Z")
    weights = [30, 10, 3, 3, 3, 3, 3, 1, 1]
    extra = sorted(events)
    out = []
    for _ in range(n):
        t += pd.Timedelta(seconds=rng.choice([0, 0, 1, 7]))
        if rng.random() < 0.01:
            t -= pd.Timedelta(minutes=3)
        host = f"node{rng.randrange(4):04d}"
        stamp = t.isoformat()
        while extra and extra[0][0] <= t:
            when, who = extra.pop(0)
            out.append(_SHAPES[0].format(t=when.isoformat(), h=who))
        kind = _NOISE if rng.random() < 0.4 else _SHAPES[rng.choices(range(len(_SHAPES)), weights)[0]]
        out.append(kind.format(t=stamp, h=host))
    out += [_SHAPES[0].format(t=when.isoformat(), h=who) for when, who in extra]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def assert_same(memory: reliab.io.IngestResult, streamed: OutputIngestResult) -> None:
    """Every table, note and count of the two results, and the folder's tables, are equal."""
    assert isinstance(streamed, OutputIngestResult)
    assert streamed.to_dict() == memory.to_dict()  # before anything is loaded
    pd.testing.assert_frame_equal(streamed.summary(), memory.summary())
    assert streamed.loaded() == ()
    assert streamed.notes == memory.notes and streamed.policy == memory.policy
    assert dict(streamed.sources) == dict(memory.sources)
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(streamed, name), getattr(memory, name), obj=name)
        pd.testing.assert_frame_equal(_partitioned.read_table(streamed.output, name), getattr(memory, name),
                                      obj=f"{name} read back")
    assert streamed.loaded() == ("signals", "telemetry")


def _small_batches(monkeypatch: pytest.MonkeyPatch, batch: int = 40, bulk: int = 16, chunk: int = 97) -> None:
    """Polars route for small files, and small groups: a small log is cut as a 5 GB one is."""
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", bulk)
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", chunk)
    monkeypatch.setattr(_streamed, "BATCH_ROWS", batch)


def _pieces(folder: Path) -> int:
    """Signals parts written as numbered pieces (rows streamed while a file was read)."""
    parts = json.loads((folder / _partitioned.MANIFEST).read_text())["tables"]["signals"]
    return sum(len(Path(p["path"]).stem.split("-")) == 5 for p in parts)  # part-<run: 2>-<task>-<piece>


@pytest.mark.slow
def test_bundled_folder_streamed_equals_in_memory(tmp_path: Path) -> None:
    memory = reliab.ingest(DATA)
    streamed = reliab.ingest(DATA, output=tmp_path / "out")
    assert len(memory.interruptions) > 300 and len(memory.telemetry) > 0  # attribution with jobs
    assert_same(memory, streamed)


def test_kernel_log_streamed_in_batches_equals_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_batches(monkeypatch)
    logs = tmp_path / "logs"
    logs.mkdir()
    write_kernel_log(logs / "kern.log", 3000, seed=3)
    (logs / "reltime.log").write_text(
        "[Mon Jun  3 14:02:11 2024] NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        "[  +0.000004] NVRM: GPU at PCI:0000:18:00: GPU has fallen off the bus.\n", encoding="utf-8")
    memory = reliab.ingest(logs)
    streamed = reliab.ingest(logs, output=tmp_path / "out")
    acc = memory.accounting.set_index("path")
    assert acc.loc[str(logs / "kern.log"), "malformed"] > 10  # quarantined lines among the streamed ones
    assert _pieces(tmp_path / "out") >= 10  # the log went out in many batches
    assert_same(memory, streamed)


def test_attribution_with_streamed_kernel_signals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs ending beside Xid lines of a streamed log: the same interruptions and causes."""
    _small_batches(monkeypatch)
    logs = tmp_path / "logs"
    shutil.copytree(DATA / "slurm", logs / "slurm")
    jobs = reliab.ingest(logs / "slurm").jobs.dropna(subset=["end"])
    failed = jobs.loc[jobs["state"].astype(str) == "FAILED"].head(12)  # node0001 runs each of them
    events = [(end - pd.Timedelta(minutes=1), "node0001") for end in failed["end"]]
    write_kernel_log(logs / "kern.log", 2500, seed=5, events=events)
    memory = reliab.ingest(logs)
    streamed = reliab.ingest(logs, output=tmp_path / "out")
    assert _pieces(tmp_path / "out") >= 5
    assert len(memory.interruptions) + len(memory.user_failures) > 0
    assert_same(memory, streamed)


def test_attribution_reads_nothing_without_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_batches(monkeypatch)
    write_kernel_log(tmp_path / "kern.log", 1500, seed=1)
    reads = []
    real = _streamed.OutputWriter.attribution_signals

    def counted(self, jobs, before, after):  # noqa: ANN001, ANN202
        import pyarrow.parquet as pq

        monkeypatch.setattr(pq, "read_table", lambda *a, **k: reads.append(a) or pytest.fail("read"))
        return real(self, jobs, before, after)

    monkeypatch.setattr(_streamed.OutputWriter, "attribution_signals", counted)
    streamed = reliab.ingest(tmp_path / "kern.log", output=tmp_path / "out")
    assert reads == [] and len(streamed.jobs) == 0
    assert streamed.to_dict()["signals"] > 0


def test_signals_are_read_only_when_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_batches(monkeypatch)
    write_kernel_log(tmp_path / "kern.log", 1500, seed=2)
    streamed = reliab.ingest(tmp_path / "kern.log", output=tmp_path / "out")
    reads: list[str] = []
    real = _partitioned.read_table
    monkeypatch.setattr(_partitioned, "read_table", lambda folder, table: reads.append(table) or real(folder, table))
    assert "signals" not in streamed.__dict__ and "telemetry" not in streamed.__dict__
    d = streamed.to_dict()
    streamed.summary(), streamed._repr_html_(), repr(streamed), streamed.not_read()
    assert reads == [] and streamed.loaded() == ()
    assert d["signals"] > 100 and d["telemetry_rows"] == 0
    signals = streamed.signals
    assert reads == ["signals"] and streamed.loaded() == ("signals",)
    assert streamed.signals is signals and len(signals) == d["signals"]  # read once, then kept
    assert streamed.summary()["signals"].sum() == len(signals)


def test_failed_run_commits_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """strict=True stops at the malformed line of the second file, after the first was streamed."""
    _small_batches(monkeypatch)
    logs = tmp_path / "logs"
    logs.mkdir()
    write_kernel_log(logs / "a.log", 1500, seed=4)
    (logs / "a.log").write_text("\n".join(line for line in (logs / "a.log").read_text().splitlines()
                                          if "bad month" not in line and "92a" not in line) + "\n")
    write_kernel_log(logs / "b.log", 300, seed=6)
    out = tmp_path / "out"
    with pytest.raises(ParseError):
        reliab.ingest(logs, output=out, strict=True)
    assert not (out / _partitioned.MANIFEST).exists()
    assert [p for p in out.rglob("*") if p.is_file()] == []


def test_store_with_output_still_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="store= keeps the tables in the store"):
        reliab.ingest(DATA / "slurm", store=tmp_path / "store", output=tmp_path / "out")


def test_a_reader_that_fails_after_streaming_leaves_its_file_row_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pieces already written for the file are deleted; the file gets its failed-reader row."""
    from reliab.io import _lines

    _small_batches(monkeypatch)
    write_kernel_log(tmp_path / "kern.log", 1500, seed=8)
    real = _lines._frame

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("boom at the end of the file")

    monkeypatch.setattr(_lines, "_frame", broken)
    memory = reliab.ingest(tmp_path / "kern.log")
    streamed = reliab.ingest(tmp_path / "kern.log", output=tmp_path / "out")
    monkeypatch.setattr(_lines, "_frame", real)
    assert memory.accounting["malformed"].tolist() == [1]
    assert_same(memory, streamed)
    assert _pieces(tmp_path / "out") == 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 300), bulk=st.integers(1, 80), chunk=st.integers(5, 400), seed=st.integers(0, 99))
def test_any_batch_size_and_cut_points_give_the_in_memory_tables(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        batch: int, bulk: int, chunk: int, seed: int) -> None:
    _small_batches(monkeypatch, batch=batch, bulk=bulk, chunk=chunk)
    tmp = tmp_path_factory.mktemp("cut")
    write_kernel_log(tmp / "kern.log", 600, seed=seed)
    memory = reliab.ingest(tmp / "kern.log")
    streamed = reliab.ingest(tmp / "kern.log", output=tmp / "out")
    for name in ("signals", "quarantine", "accounting"):
        pd.testing.assert_frame_equal(getattr(streamed, name), getattr(memory, name), obj=name)
    assert streamed.to_dict() == memory.to_dict()


def test_cli_stream_writes_partitioned_tables_that_other_commands_read(tmp_path: Path) -> None:
    """``reliab ingest --out --stream``; ``reliab plan --from`` then reads the same records as from ``--out``."""
    from typer.testing import CliRunner

    from reliab.cli import app

    logs = tmp_path / "logs"
    shutil.copytree(DATA / "slurm", logs / "slurm")
    jobs = reliab.ingest(logs / "slurm").jobs.dropna(subset=["end"])
    ends = jobs.loc[jobs["state"].astype(str) == "FAILED", "end"].head(8)
    write_kernel_log(logs / "kern.log", 800, seed=9, events=[(e - pd.Timedelta(minutes=2), "node0001") for e in ends])
    runner = CliRunner()
    said = {}
    for kind, extra in (("flat", ()), ("stream", ("--stream",))):
        res = runner.invoke(app, ["ingest", str(logs), "--out", str(tmp_path / kind), "-q", *extra],
                            env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
        plan = runner.invoke(app, ["plan", "--gpus", "64", "--from", str(tmp_path / kind), "--runs", "0",
                                   "--out", str(tmp_path / f"{kind}.svg")], env={"COLUMNS": "200"})
        assert plan.exit_code == 0, plan.output
        said[kind] = (res.output.splitlines()[-2:], plan.output.replace(str(tmp_path / kind), "<out>").splitlines()[0])
    assert (tmp_path / "stream" / _partitioned.MANIFEST).is_file()
    assert not (tmp_path / "flat" / _partitioned.MANIFEST).exists()
    assert "partitioned by source and date" in said["stream"][0][-1]
    assert said["stream"][1] == said["flat"][1] and "unexpected interruptions" in said["flat"][1]
    bad = runner.invoke(app, ["ingest", str(logs), "--stream", "-q"])
    assert bad.exit_code == 1 and "--stream goes with --out" in bad.output


def test_a_reader_that_changes_a_streamed_result_is_read_again_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that edits what scan_lines gave it: the streamed pieces are dropped, the file re-read whole."""
    import dataclasses

    from reliab.io import _registry

    _small_batches(monkeypatch)
    write_kernel_log(tmp_path / "kern.log", 1500, seed=11)
    kernel = _registry.get_parser("kernel")

    def edited(path, **options):  # noqa: ANN001, ANN003, ANN202
        result = kernel.read(path, **options)
        frame = result.tables["signals"]
        return dataclasses.replace(result, tables={"signals": frame.iloc[::-1].reset_index(drop=True)},
                                   notes=(*result.notes, "reversed"))

    monkeypatch.setitem(_registry._PARSERS, "kernel", dataclasses.replace(kernel, read=edited))
    memory = reliab.ingest(tmp_path / "kern.log", source="kernel")
    streamed = reliab.ingest(tmp_path / "kern.log", source="kernel", output=tmp_path / "out")
    assert "reversed" in memory.sources[str(tmp_path / "kern.log")].reason
    assert_same(memory, streamed)
    assert _pieces(tmp_path / "out") == 0


def test_positions_piece_by_piece():
    """Hand-worked: bulk rows on lines 1, 2, 5 (piece 0) and 7, 9 (piece 1), per-line rows on
    lines 3, 8, 10; the file's table in line order is 1 2 (3) 5 7 (8) 9 (10)."""
    import numpy as np

    from reliab.io._streamed import _pack, _positions

    pieces = [_pack(np.array([1, 2, 5])), _pack(np.array([7, 9]))]
    assert pieces[1][0] == 7 and pieces[1][1].dtype == np.uint32 and pieces[1][1].tolist() == [0, 2]
    at_bulk, at_line = _positions(pieces, np.array([3, 8, 10]))
    assert [a.tolist() for a in at_bulk] == [[0, 1, 3], [4, 6]]
    assert at_line.tolist() == [2, 5, 7]
    at_bulk, at_line = _positions([_pack(np.array([4, 6]))], np.zeros(0, dtype=np.int64))
    assert [a.tolist() for a in at_bulk] == [[0, 1]] and at_line.tolist() == []
