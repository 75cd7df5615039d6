"""A folder run never aborts: what a real hand-over holds beside the logs is accounted, not fatal.

The hand-over here is the bundled sample plus what a cluster team actually leaves in such a
folder: a dashboard PNG, an empty file, a clean training log (loss lines only), an ipmitool
capture of an empty SEL, a FIFO, a file whose name is not UTF-8, and files that cannot be
read.  The API and the CLI complete, every input has an accounting row, and the Table 5
counts of the sample (419 unexpected, 47 planned) are unchanged.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.errors import InputFileError, UnknownFormatError
from reliab.io import ingest

SAMPLE = Path(__file__).parents[1] / "data" / "llama3-54d"
XID = ("NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
#: a non-UTF-8 file name (Latin-1 "é"), kept as surrogateescape text
ODD_NAME = os.fsdecode(b"n\xe9ud-0421.log")


def _png() -> bytes:
    """A valid 1x1 grey PNG (signature, IHDR, IDAT, IEND; PNG spec, W3C 2003)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


def _handover(root: Path) -> dict[str, str]:
    """Fill ``root`` with the sample (copied) and the odd files; name -> expected source.

    The sample is copied, not linked: the run is made as ``nobody``, who may not traverse
    the checkout's parent folders (a ``mktemp -d`` clone is mode 700).
    """
    shutil.copytree(SAMPLE, root / "sample", ignore=shutil.ignore_patterns("__pycache__"))
    extra = root / "extra"
    extra.mkdir()
    (extra / "dashboard.png").write_bytes(_png())
    (extra / "empty.log").write_bytes(b"")
    (extra / "train-clean.out").write_text("".join(
        f"[2024-06-03 14:{m:02d}:00] step {100 + m} loss {2.5 - m / 100:.3f} lr 3.0e-4 tokens/s 2.7e6\n"
        for m in range(20)))
    (extra / "node0099-sel.txt").write_text("SEL has no entries\n")
    os.mkfifo(extra / "pipe.log")
    (extra / ODD_NAME).write_text(f"2023-01-05T10:00:00.000000+00:00 node0421 kernel: {XID}\n")
    (extra / "locked.log").write_text(f"2023-01-05T10:00:01.000000+00:00 node0421 kernel: {XID}\n")
    (extra / "locked.log").chmod(0)
    (extra / "io-error.log").symlink_to("/proc/self/mem")  # a link out of the folder, to /proc: never opened
    return {"dashboard.png": "binary", "empty.log": "empty", "pipe.log": "special", "io-error.log": "outside"}


@pytest.fixture(scope="module")
def handover() -> Iterator[tuple[Path, dict[str, str]]]:
    # a world-traversable folder, so the unreadable-file check can run without root's rights
    root = Path(tempfile.mkdtemp(prefix="reliab-handover-", dir="/tmp"))
    root.chmod(0o755)
    expected = _handover(root)
    yield root, expected
    (root / "extra" / "locked.log").chmod(0o644)
    subprocess.run(["rm", "-rf", str(root)], check=False)


@contextmanager
def _unprivileged() -> Iterator[None]:
    """Run as user ``nobody`` (effective uid) when root, so mode 000 means unreadable."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.mark.slow
def test_handover_folder_completes_with_every_input_accounted(handover, sample_ingest) -> None:
    root, expected = handover
    baseline = sample_ingest
    ingest(SAMPLE / "slurm")  # import every module a run needs while still privileged
    with _unprivileged():
        res = ingest(root, policy="training-run")  # the sample is one training run, counted as Llama 3 did
    acc = res.accounting
    names = {Path(p).name: row for p, row in zip(acc["path"], acc.to_dict(orient="records"), strict=True)}
    walked = {p.name for p in (root / "extra").iterdir()}
    assert walked <= set(names), walked - set(names)
    for name, source in expected.items():
        assert names[name]["source"] == source, (name, names[name])
        assert isinstance(names[name]["reason"], str) and names[name]["reason"]
    assert "PNG image" in names["dashboard.png"]["reason"]
    assert "FIFO" in names["pipe.log"]["reason"]
    assert names["locked.log"]["source"] == "unreadable" and "ermission" in names["locked.log"]["reason"]
    # a clean job log and an empty SEL hold no events: accounted, whatever reads them
    for name in ("train-clean.out", "node0099-sel.txt"):
        assert names[name]["parsed"] == 0 and names[name]["lines"] >= 1
    # the odd name is kept exactly, and its Xid is found
    odd = names[ODD_NAME]
    assert odd["source"] == "kernel" and odd["parsed"] == 1
    assert os.fsencode(odd["path"]).endswith(b"n\xe9ud-0421.log")
    assert res.signals["origin"].str.contains(ODD_NAME, regex=False).sum() == 1
    # the sample: every file read as before, truth/ and cluster.json skipped by its manifest
    sample = acc.loc[acc["path"].str.startswith(str(root / "sample")).to_numpy(dtype=bool)]
    read = sample.loc[sample["reason"].isna().to_numpy(dtype=bool)]
    on_disk = [f for f in Path(SAMPLE).rglob("*") if f.is_file()
               and not {"truth", "__pycache__"} & set(f.relative_to(SAMPLE).parts)
               and f.name not in {"SOURCE.md", "cluster.json", "regenerate.py", "reliab.toml"}]
    assert len(read) == baseline.accounting["reason"].isna().sum() == len(on_disk) > 1400
    assert (read["lines"].to_numpy() == baseline.accounting.loc[baseline.accounting["reason"].isna(),
                                                                "lines"].to_numpy()).all()
    inter = res.interruptions
    assert (int((~inter["planned"]).sum()), int(inter["planned"].sum())) == (419, 47)
    pd.testing.assert_series_equal(inter["category"].value_counts().sort_index(),
                                   baseline.interruptions["category"].value_counts().sort_index())
    assert any("file(s) not read" in n for n in res.notes)
    # every line of every input accounted
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    schema.validate(acc, "accounting")


def test_handover_extras_alone_are_each_accounted(handover) -> None:
    """The whole hand-over's sibling in the default tier (the slow tier adds the sample's copy):
    each odd file has its accounting row, source and reason, and the odd name's Xid is found."""
    root, expected = handover
    ingest(SAMPLE / "slurm")  # import every module a run needs while still privileged
    with _unprivileged():
        res = ingest(root / "extra")
    acc = res.accounting
    names = {Path(p).name: row for p, row in zip(acc["path"], acc.to_dict(orient="records"), strict=True)}
    assert {p.name for p in (root / "extra").iterdir()} <= set(names)
    for name, source in expected.items():
        assert names[name]["source"] == source, (name, names[name])
        assert isinstance(names[name]["reason"], str) and names[name]["reason"]
    assert "PNG image" in names["dashboard.png"]["reason"]
    assert "FIFO" in names["pipe.log"]["reason"]
    assert names["locked.log"]["source"] == "unreadable" and "ermission" in names["locked.log"]["reason"]
    for name in ("train-clean.out", "node0099-sel.txt"):
        assert names[name]["parsed"] == 0 and names[name]["lines"] >= 1
    odd = names[ODD_NAME]
    assert odd["source"] == "kernel" and odd["parsed"] == 1
    assert res.signals["origin"].str.contains(ODD_NAME, regex=False).sum() == 1
    assert any("file(s) not read" in n for n in res.notes)
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    schema.validate(acc, "accounting")


def test_handover_extras_through_the_cli(handover) -> None:
    """The CLI run's sibling in the default tier: the odd files alone, on a narrow terminal."""
    from typer.testing import CliRunner

    from reliab.cli import app

    root, _ = handover
    out = CliRunner().invoke(app, ["ingest", str(root / "extra"), "-q"], env={"COLUMNS": "60"})
    assert out.exit_code == 0, out.output
    assert "Traceback" not in out.output
    assert not any("│" in ln or "\x1b[" in ln for ln in out.stdout.splitlines())
    summary = next(ln for ln in out.stdout.splitlines() if "not read" in ln)
    for name in ("dashboard.png (binary)", "pipe.log (special)", "empty.log (empty)"):
        assert name in summary, summary


def test_handover_folder_round_trips_parquet(handover, tmp_path: Path) -> None:
    root, _ = handover
    res = ingest(root / "extra")
    written = res.write_parquet(tmp_path)
    for name in ("accounting", "signals", "quarantine"):
        back = schema.read_parquet(str(written[name]), name)
        pd.testing.assert_frame_equal(back, getattr(res, name), check_dtype=False)
    assert ODD_NAME in set(schema.read_parquet(str(written["accounting"]), "accounting")["path"].map(
        lambda p: Path(p).name))


@pytest.mark.slow
def test_handover_folder_through_the_cli(handover) -> None:
    root, _ = handover
    env = {"COLUMNS": "60"}  # narrow terminal; the command runs in this process (tests/_cli.py)
    out = run_in_process("ingest", str(root), "-q", "--policy", "training-run", env=env)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stdout.splitlines()
    rollup = lines[:lines.index("")]
    assert len(rollup) < 40 and not any("│" in ln or "\x1b[" in ln for ln in out.stdout.splitlines())
    assert any(ln.startswith("sample/dmesg ") for ln in rollup)  # relative to the folder given
    summary = next(ln for ln in lines if "not read" in ln)
    for name in ("extra/dashboard.png (binary)", "extra/pipe.log (special)", "extra/empty.log (empty)"):
        assert name in summary, summary
    assert "419 unexpected, 47 planned" in out.stdout
    per_file = run_in_process("ingest", str(root / "extra"), "-q", "--files", env=env)
    assert per_file.returncode == 0, per_file.stderr
    assert "n\\xe9ud-0421.log" in per_file.stdout  # the odd name shown escaped, not a crash
    assert any(ln.startswith("pipe.log ") and "special" in ln for ln in per_file.stdout.splitlines())


def test_strict_turns_inputs_not_read_into_failures(handover, tmp_path: Path) -> None:
    root, _ = handover
    with pytest.raises(InputFileError, match="FIFO"):
        ingest(root / "extra", strict=True)
    (tmp_path / "dashboard.png").write_bytes(_png())
    with pytest.raises(UnknownFormatError, match="PNG image"):
        ingest(tmp_path, strict=True)
    out = subprocess.run([sys.executable, "-m", "reliab", "ingest", str(tmp_path), "--strict", "-q"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1 and "PNG" in out.stderr
    (tmp_path / "dashboard.png").unlink()
    (tmp_path / "empty.log").write_bytes(b"")  # empty and skipped files are not failures
    (tmp_path / "README.md").write_text("# notes\n")
    res = ingest(tmp_path, strict=True)
    assert sorted(res.accounting["source"]) == ["empty", "skipped"]


def test_unreadable_folder_is_accounted(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="reliab-closed-", dir="/tmp"))
    try:
        base.chmod(0o755)
        (base / "closed").mkdir()
        (base / "closed" / "x.log").write_text(f"2024-06-03T14:02:11+00:00 n1 kernel: {XID}\n")
        (base / "closed").chmod(0)
        (base / "open.log").write_text(f"2024-06-03T14:02:11+00:00 n1 kernel: {XID}\n")
        ingest(base / "open.log")
        with _unprivileged():
            res = ingest(base)
        rows = dict(zip(res.accounting["path"].map(lambda p: Path(p).name), res.accounting["source"], strict=True))
        assert rows == {"closed": "unreadable", "open.log": "kernel"}
        assert "cannot be listed" in res.not_read()["reason"].iloc[0]
    finally:
        (base / "closed").chmod(0o755)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def test_symlink_loop_and_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "back").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "dangling.log").symlink_to(tmp_path / "nowhere.log")
    res = ingest(tmp_path)
    reasons = dict(zip(res.accounting["path"].map(lambda p: Path(p).name), res.accounting["reason"], strict=True))
    assert "symbolic link loop" in reasons["back"] and "broken symbolic link" in reasons["dangling.log"]


NAME_BYTES = st.binary(min_size=1, max_size=12).filter(
    lambda b: b"/" not in b and b"\x00" not in b and b not in (b".", b".."))
CONTENT = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([f"2024-06-03T14:02:11+00:00 n1 kernel: {XID}", "step 1 loss 2.0", "",
                              "SEL has no entries", "\x00\x01\x02", "a,b,c"]), max_size=8).map(
        lambda ls: "\n".join(ls).encode()))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(NAME_BYTES, CONTENT, min_size=1, max_size=6))
def test_any_names_and_bytes_are_accounted_once(tmp_path_factory, files: dict[bytes, bytes]) -> None:
    """Fuzz: whatever the file names (any bytes) and contents, the run completes and every
    file has exactly one accounting row whose lines add up."""
    root = tmp_path_factory.mktemp("fuzz")
    for name, data in files.items():
        with open(os.path.join(os.fsencode(root), name), "wb") as fh:
            fh.write(data)
    res = ingest(root)
    acc = res.accounting
    assert sorted(os.fsencode(Path(p).name) for p in acc["path"]) == sorted(files)
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    for path, lines in zip(acc["path"], acc["lines"], strict=True):
        data = files[os.fsencode(Path(path).name)]
        assert lines <= data.count(b"\n") + data.count(b"\r") + 1, (path, lines)
