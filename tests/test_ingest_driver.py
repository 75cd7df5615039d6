"""The ingest driver: discovery, sniffing, errors, compression, accounting, Parquet, attribution."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import shutil
from pathlib import Path

import pandas as pd
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.errors import InputFileError, ParseError, UnknownFormatError
from reliab.io import FileResult, IngestResult, available_sources, discover, ingest

GPUD = Path(__file__).parent / "reference" / "gpud_nvidia_kernel_logs"
XID = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
KERNEL = "".join(f"2024-06-03T14:02:{s:02d}.000000+00:00 node0421 kernel: {m}\n" for s, m in (
    (1, "usb 1-1: new high-speed USB device"), (11, XID), (12, "random noise"),
    (13, "NVRM: Xid (PCI:0000:18:00): garbage"), (14, "mlx5_core 0000:1a:00.0 ens1f0np0: Link down")))
TRAIN = ("2024-06-03 14:00:00,123 INFO step 1\n"
         "[rank5]:[E0603 14:02:40.000000001 ProcessGroupNCCL.cpp:629] [Rank 5] Watchdog caught collective"
         " operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,"
         " Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
SACCT = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|Restarts|AllocTRES\n"
         "1001|1001|pretrain|alice|gpu|NODE_FAIL|0:0|2024-06-03T10:00:00|2024-06-03T10:05:00|2024-06-03T14:03:00"
         "|03:58:00|2|node[0421-0422]|0|billing=16,cpu=64,gres/gpu=16,node=2\n")


@pytest.fixture()
def cluster(tmp_path: Path) -> Path:
    """A small raw-data folder in the layout of docs/raw-formats.md."""
    (tmp_path / "syslog").mkdir()
    (tmp_path / "syslog" / "messages-20240603.log").write_text(KERNEL)
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "slurm-1001.out").write_text(TRAIN)
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "sacct.txt").write_text(SACCT)
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "interruptions.csv").write_text("not,a,log\n")
    (tmp_path / ".hidden.log").write_text("whatever\n")
    (tmp_path / "SOURCE.md").write_text("# docs\n")
    (tmp_path / "README.txt").write_text("docs\n")
    return tmp_path


def test_discover_skips_hidden_and_exact_doc_names_only(cluster: Path) -> None:
    """Regression: only hidden files and exact documentation names are skipped by name."""
    for name in ("license-server.log", "notice.log", "copying-job.log", "readme-node7.log"):
        (cluster / "syslog" / name).write_text(KERNEL)  # logs whose names start like docs
    files = [p.relative_to(cluster).as_posix() for p in discover(cluster)]
    assert files == ["slurm/sacct.txt", "syslog/copying-job.log", "syslog/license-server.log",
                     "syslog/messages-20240603.log", "syslog/notice.log", "syslog/readme-node7.log",
                     "train/slurm-1001.out", "truth/interruptions.csv"]
    (cluster / "reliab.toml").write_text('skip = ["truth/"]\n')
    assert "truth/interruptions.csv" not in [p.relative_to(cluster).as_posix() for p in discover(cluster)]
    assert "truth/interruptions.csv" in [p.relative_to(cluster).as_posix()
                                         for p in discover(cluster, manifest=False)]
    assert discover(cluster, recursive=False) == []
    assert discover(cluster / "SOURCE.md") == [cluster / "SOURCE.md"]  # named explicitly
    res = ingest(cluster)
    skipped = res.not_read(skipped=True)
    reasons = dict(zip([Path(p).relative_to(cluster).as_posix() for p in skipped["path"]],
                       skipped["reason"], strict=True))
    assert set(reasons) == {".hidden.log", "README.txt", "SOURCE.md", "reliab.toml", "truth/interruptions.csv"}
    assert "skip = 'truth/'" in reasons["truth/interruptions.csv"] and "hidden" in reasons[".hidden.log"]
    assert res.accounting.loc[res.accounting["path"].str.endswith("notice.log"), "parsed"].item() == 2


def test_ingest_directory(cluster: Path) -> None:
    res = ingest(cluster)
    assert isinstance(res, IngestResult)
    acc = res.accounting.set_index("path")
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    by_src = {Path(p).name: c.source for p, c in res.sources.items()}
    assert by_src == {"sacct.txt": "sacct", "messages-20240603.log": "kernel", "slurm-1001.out": "nccl",
                      "interruptions.csv": "unrecognized", ".hidden.log": "skipped", "README.txt": "skipped",
                      "SOURCE.md": "skipped"}
    kern = acc.loc[str(cluster / "syslog" / "messages-20240603.log")]
    assert (kern["lines"], kern["parsed"], kern["irrelevant"], kern["malformed"]) == (5, 2, 2, 1)
    assert set(res.signals["signal"]) >= {"xid:79", "nic:link_down", "nccl:watchdog_timeout"}
    assert res.signals["time"].is_monotonic_increasing
    q = res.quarantine.iloc[0]
    assert (q["path"], q["lineno"], q["source"]) == (str(cluster / "syslog" / "messages-20240603.log"), 4, "kernel")
    assert "numeric Xid code" in q["reason"]
    assert len(res.jobs) == 1
    for name in ("signals", "jobs", "interruptions", "telemetry", "quarantine", "accounting"):
        schema.validate(getattr(res, name), name)


def test_attribution(cluster: Path) -> None:
    pytest.importorskip("reliab.taxonomy")
    res = ingest(cluster)
    assert len(res.interruptions) == 1
    row = res.interruptions.iloc[0]
    assert (row["job_id"], row["root_signal"], row["category"]) == ("1001", "xid:79", "Faulty GPU")


def test_strict_names_file_and_line(cluster: Path) -> None:
    with pytest.raises(ParseError) as info:
        ingest(cluster, strict=True)
    assert "messages-20240603.log:4" in str(info.value)


def test_gpud_captures_through_the_driver() -> None:
    files = [GPUD / n for n in ("dmesg-with-xid-119.log", "dmesg-decode-iso-xid13-xid43-oom.log",
                                "dmesg-decode-iso-nccl-segfault.log")]
    res = ingest(files)
    assert res.signals["signal"].value_counts().to_dict() == {"xid:13": 16, "xid:119": 5, "xid:43": 1}
    assert res.accounting["lines"].tolist() == [43, 24, 2]
    assert res.quarantine.empty
    assert all(c.source == "kernel" for c in res.sources.values())


def test_missing_and_unknown(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="nope.log"):
        ingest(tmp_path / "nope.log")
    acc = ingest(GPUD / "fabricmanager.log").accounting.iloc[0]  # not a failure: a row, lines counted
    assert (acc["source"], acc["lines"], acc["irrelevant"]) == ("unrecognized", 101, 101)
    assert "no reader recognises" in acc["reason"]
    with pytest.raises(UnknownFormatError) as info:
        ingest(GPUD / "fabricmanager.log", strict=True)
    assert "fabricmanager.log" in str(info.value) and "\n" not in str(info.value)
    assert ingest(GPUD / "fabricmanager.log", source="kernel").accounting["irrelevant"].iloc[0] == 101
    with pytest.raises(UnknownFormatError, match="no parser for source 'bogus'"):
        ingest(GPUD / "fabricmanager.log", source="bogus")
    with pytest.raises(TypeError, match="yeer"):
        ingest(GPUD / "dmesg-with-xid-119.log", yeer=2024)
    with pytest.raises(ValueError, match="at least one path"):
        ingest([])


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    res = ingest(tmp_path)
    assert res.accounting[["source", "lines"]].values.tolist() == [["empty", 0]]


PACK = {"gz": gzip.compress, "bz2": lambda b: bz2.compress(b, 1), "xz": lzma.compress,
        "zst": lambda b: zstandard.ZstdCompressor().compress(b)}


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz", "zst"])
def test_compressed_inputs(tmp_path: Path, kind: str) -> None:
    data = KERNEL.encode()
    packed = PACK[kind](data)
    (tmp_path / f"node0421.log.{kind}").write_bytes(packed)
    res = ingest(tmp_path)
    assert res.accounting[["source", "lines", "parsed", "malformed"]].values.tolist() == [["kernel", 5, 2, 1]]


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz", "zst"])
def test_truncated_archives(tmp_path: Path, kind: str) -> None:
    clean = "".join(ln + "\n" for ln in KERNEL.splitlines() if "garbage" not in ln)
    data = PACK[kind]("".join(f"{clean}2024-06-03T14:03:00+00:00 node1 CRON[{i * 7919 % 10007}]: run {i}\n"
                              for i in range(4000)).encode())
    path = tmp_path / f"node1.log.{kind}"
    path.write_bytes(data[: len(data) // 2])
    res = ingest(path)
    acc = res.accounting.iloc[0]
    assert acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]
    assert "stream ended abnormally" in res.quarantine["reason"].iloc[-1]
    assert acc["parsed"] > 0
    with pytest.raises(InputFileError, match=f"node1.log.{kind}"):
        ingest(path, strict=True)


def test_unreadable_archive(tmp_path: Path) -> None:
    path = tmp_path / "node1.log.gz"
    path.write_bytes(gzip.compress(KERNEL.encode())[:12])
    res = ingest(path)
    q = res.quarantine.iloc[0]
    assert (q["lineno"], q["source"]) == (0, "unreadable") and "cannot read the start" in q["reason"]
    assert res.accounting[["lines", "malformed"]].values.tolist() == [[1, 1]]
    with pytest.raises(InputFileError, match="node1.log.gz"):
        ingest(path, strict=True)


def test_options_reach_readers(tmp_path: Path) -> None:
    (tmp_path / "dmesg.txt").write_text(f"[  60.000000] {XID}\n")
    res = ingest(tmp_path, source="kernel", boot_time="2024-06-03T14:00:00Z", host="node7")
    row = res.signals.iloc[0]
    assert (row["time"], row["host"]) == (pd.Timestamp("2024-06-03 14:01:00", tz="UTC"), "node7")


def test_summary_dict_html_and_quiet(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = ingest(cluster)
    assert capsys.readouterr() == ("", "")
    summ = res.summary().set_index("source")
    assert summ.loc["kernel", "files"] == 1 and summ.loc["kernel", "malformed"] == 1
    d = res.to_dict()
    json.dumps(d)
    assert (d["files"], d["not_read"], d["skipped"], d["quarantined"]) == (7, 1, 3, 1)
    assert any("1 file(s) not read (1 unrecognized)" in n for n in res.notes)
    assert "IngestResult" in res._repr_html_() and "kernel" in res._repr_html_()
    assert "signals=" in repr(res)
    ingest(cluster, progress=True)


def test_parquet_round_trip(cluster: Path, tmp_path: Path) -> None:
    res = ingest(cluster)
    out = tmp_path / "out"
    written = res.write_parquet(out)
    assert sorted(p.name for p in written.values()) == sorted(
        f"{n}.parquet" for n in ("signals", "interruptions", "accounting", "quarantine", "jobs", "telemetry",
                                 "user_failures"))
    for name, path in written.items():
        back = schema.read_parquet(str(path), name)
        pd.testing.assert_frame_equal(back, getattr(res, name), check_dtype=True)
    assert str(pd.read_parquet(written["signals"])["time"].dtype) == "datetime64[ns, UTC]"


def test_available_sources() -> None:
    src = available_sources()
    assert list(src.columns) == ["name", "table", "summary"]
    assert {"kernel", "nccl"} <= set(src["name"])
    assert src.set_index("name").loc["kernel", "table"] == "signals"


def test_copy_of_reference_data_is_intact(tmp_path: Path) -> None:
    shutil.copytree(GPUD, tmp_path / "gpud")
    (tmp_path / "gpud" / "fabricmanager.log").unlink()
    res = ingest(tmp_path / "gpud")  # LICENSE and SOURCE.md are skipped as documentation
    assert res.accounting["source"].tolist().count("kernel") == 3 and len(res.signals) == 22
    assert sorted(Path(p).name for p in res.not_read(skipped=True)["path"]) == ["LICENSE-Apache-2.0.txt", "SOURCE.md"]


# --- the literal prefilter yields exactly the lines a line-by-line scan would keep

class _ShortReads(io.RawIOBase):
    """A raw stream that returns at most ``k`` bytes per read (like a pipe or a decoder)."""

    def __init__(self, data: bytes, k: int) -> None:
        self.data, self.pos, self.k = data, 0, k

    def readable(self) -> bool:
        return True

    def readinto(self, buf: memoryview) -> int:  # type: ignore[override]
        n = min(len(buf), self.k, len(self.data) - self.pos)
        buf[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


PIECES = [b"ab", b"X", b"\n", b"zz" * 20, b"q" * 70, b"\r\n", b"aXb", b"b" * 63, b"c" * 64, b"d" * 65]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=50).map(b"".join), st.integers(1, 100))
def test_prefilter_matches_line_scan(monkeypatch: pytest.MonkeyPatch, data: bytes, k: int) -> None:
    from reliab.io import _prefilter

    monkeypatch.setattr(_prefilter, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(_prefilter, "_BLOCK", 64)
    monkeypatch.setattr(_prefilter, "_CHUNK", 16)
    lits = (b"X", b"ab")
    fast_n, slow_n = [0], [0]
    stream = io.BufferedReader(_ShortReads(data, k), buffer_size=16)
    fast = list(_prefilter.candidate_lines(stream, lits, fast_n))
    slow = [(n, raw, size) for n, raw, size in _prefilter.all_lines(io.BytesIO(data), slow_n)
            if size > 64 or any(lit in raw for lit in lits)]
    assert (fast, fast_n) == (slow, slow_n)


def test_long_lines_keep_line_numbers(tmp_path: Path) -> None:
    line = f"2024-06-03T14:02:11+00:00 node1 kernel: {XID}\n".encode()
    data = line + b"y" * (5 << 19) + b"\n" + line + b"NVRM: Xid " + b"z" * (3 << 19) + b"\n" + line + line[:-1]
    (tmp_path / "n.log").write_bytes(data)
    res = ingest(tmp_path / "n.log")
    assert res.accounting[["lines", "parsed", "irrelevant", "malformed"]].values.tolist() == [[6, 4, 0, 2]]
    assert [o.rsplit(":", 1)[1] for o in res.signals["origin"]] == ["1", "3", "5", "6"]
    assert res.quarantine["lineno"].tolist() == [2, 4]


def test_ingest_stays_the_function_after_importing_the_engine() -> None:
    """``reliab.ingest`` is the public function, whatever submodules were imported before."""
    import reliab
    import reliab.io._driver  # noqa: F401
    import reliab.io.formats.kernel  # noqa: F401

    assert callable(reliab.ingest) and reliab.ingest.__module__ == "reliab.io._driver"


def test_live_source_seam(tmp_path: Path) -> None:
    """Regression: a ``scheme://`` path goes to the registered live source; one row per chunk."""
    from reliab.io import _registry
    from reliab.io._registry import FileResult, register_source

    calls: list[tuple[str, str | None]] = []
    (tmp_path / "chunk.txt").write_text(SACCT)

    @register_source("testjobs")
    def read_testjobs(url: str, *, window: str | None = None, strict: bool = False) -> list[FileResult]:
        """Jobs from a fake accounting service (test only)."""
        calls.append((url, window))
        out = ingest(tmp_path / "chunk.txt", source="sacct", manifest=False)
        return [FileResult(path=f"{url}?chunk={i}", source="sacct", lines=1, parsed=1, irrelevant=0, malformed=0,
                           tables={"jobs": out.jobs}) for i in range(2)]

    try:
        res = ingest(["testjobs://db.example/cluster", tmp_path / "chunk.txt"], window="1d")
        assert calls == [("testjobs://db.example/cluster", "1d")]
        assert res.accounting["path"].tolist()[:2] == ["testjobs://db.example/cluster?chunk=0",
                                                        "testjobs://db.example/cluster?chunk=1"]
        assert res.sources["testjobs://db.example/cluster?chunk=0"].reason == "live source testjobs://"
        assert len(res.jobs) == 3
        assert "testjobs://" in available_sources()["name"].tolist()
        with pytest.raises(UnknownFormatError, match="no source handles nosuch://"):
            ingest("nosuch://x")
        with pytest.raises(ValueError, match="live sources"):
            ingest("testjobs://x", store=tmp_path / "store")
    finally:
        _registry._SOURCES.pop("testjobs")


def test_a_reader_crash_is_that_files_row(tmp_path: Path) -> None:
    """Regression: any exception inside a reader becomes the file's accounting row; the run goes on."""
    from reliab.io import _registry
    from reliab.io._registry import register_parser

    @register_parser("test_boom", sniff=lambda path, lines: 1.0 if path.endswith(".boom") else 0.0)
    def read_boom(path: str, *, strict: bool = False) -> FileResult:
        """Always fails (test only)."""
        return 1 // 0

    try:
        (tmp_path / "a.boom").write_text("anything\n")
        (tmp_path / "messages.log").write_text(KERNEL)
        res = ingest(tmp_path)
        row = res.accounting.set_index("path").loc[str(tmp_path / "a.boom")]
        assert (row["source"], row["lines"], row["malformed"]) == ("test_boom", 1, 1)
        assert "reader failed (ZeroDivisionError" in row["reason"]
        assert res.quarantine["reason"].str.contains("ZeroDivisionError").any()
        assert len(res.signals) == 2  # the other file is read
        with pytest.raises(InputFileError, match="a.boom"):
            ingest(tmp_path, strict=True)
    finally:
        _registry._PARSERS.pop("test_boom")
