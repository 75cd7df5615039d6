"""``reliab report`` reads a hand-over as ``reliab ingest`` does, and says what it did not read.

The hand-over: a raw dmesg (printk seconds since boot, no wall clock) quoted verbatim from
gpud's SXid README (tests/reference/real_world/kernel/gpud-sxid-readme-xid79-sxid20034-raw.log),
whose boot time is known only from a note beside it, and a hand-written sacct capture with a
NODE_FAIL on the host that dmesg came from.  With the boot time the Xid 79 of line 3 (GPU fallen
off the bus, 2024-06-01 + 6,781,741.548779 s = 2024-08-18 11:49:01 UTC) falls 3 minutes before
the NODE_FAIL at 11:52 and the interruption is a faulty GPU; without it the six signal lines are
quarantined and the interruption has no evidence.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

_RAW = Path(__file__).parent / "reference" / "real_world" / "kernel" / "gpud-sxid-readme-xid79-sxid20034-raw.log"
_SACCT = """JobID|JobName|State|Start|End|NodeList|AllocTRES
7001|pretrain|NODE_FAIL|2024-08-18T09:00:00|2024-08-18T11:52:00|node7|cpu=64,gres/gpu=8,node=1
7002|pretrain|COMPLETED|2024-08-18T12:30:00|2024-08-18T18:00:00|node8|cpu=64,gres/gpu=8,node=1
"""
_MANIFEST = """# the note beside the dmesg capture: node7 booted 2024-06-01 00:00 UTC
[[files]]
glob = "dmesg.txt"
boot_time = 2024-06-01T00:00:00Z
host = "node7"
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    # the options, output and exit codes of the commands, run in this process (tests/_cli.py);
    # tests/test_cli.py spawns `python -m reliab` for the entry point itself
    return run_in_process(*args, env={"COLUMNS": "200"})


@pytest.fixture
def handover(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copyfile(_RAW, logs / "dmesg.txt")
    (logs / "sacct.txt").write_text(_SACCT)
    (tmp_path / "handover.toml").write_text(_MANIFEST)
    return tmp_path


def _interruptions(folder: Path) -> pd.DataFrame:
    table = pd.read_parquet(folder / "interruptions.parquet")
    return table.drop(columns=["evidence"])  # file paths: the same files, read from the same folder


def test_report_takes_the_manifest_ingest_takes(handover: Path) -> None:
    """Must show (issue 20 item 8): report --manifest M gives the interruptions ingest --manifest M gives."""
    logs, manifest = handover / "logs", handover / "handover.toml"
    ing = _run("ingest", str(logs), "--manifest", str(manifest), "-q", "--out", str(handover / "ing"))
    assert ing.returncode == 0, ing.stderr
    rep = _run("report", str(logs), "--manifest", str(manifest), "-q", "--no-pdf", "--out", str(handover / "rep"))
    assert rep.returncode == 0, rep.stderr
    ours, theirs = _interruptions(handover / "rep"), _interruptions(handover / "ing")
    pd.testing.assert_frame_equal(ours, theirs)
    assert ours[["job_id", "category", "root_signal"]].values.tolist() == [["7001", "Faulty GPU", "xid:79"]]
    assert str(ours["time"].iloc[0]) == "2024-08-18 11:52:00+00:00"


def test_report_takes_every_reader_option(handover: Path) -> None:
    """The reader options on report's command line: --boot-time and --host as for ingest."""
    logs = handover / "logs"
    rep = _run("report", str(logs), "--boot-time", "2024-06-01T00:00:00Z", "--host", "node7", "-q", "--no-pdf",
               "--out", str(handover / "rep"))
    assert rep.returncode == 0, rep.stderr
    signals = pd.read_parquet(handover / "rep" / "signals.parquet")
    xid = signals[signals["signal"] == "xid:79"]
    assert xid[["host"]].values.tolist() == [["node7"]]
    assert str(xid["time"].iloc[0]) == "2024-08-18 11:49:01.548779+00:00"
    assert "Faulty GPU" in set(pd.read_parquet(handover / "rep" / "interruptions.parquet")["category"])


def test_report_config_takes_manifest_and_reader_options(handover: Path) -> None:
    """The TOML configuration of a report takes the same keys: manifest, and reader options."""
    config = handover / "q.toml"
    config.write_text('logs = ["logs"]\nout = "rep"\npdf = false\nmanifest = "handover.toml"\n')
    rep = _run("report", "--config", str(config), "-q")
    assert rep.returncode == 0, rep.stderr
    assert set(pd.read_parquet(handover / "rep" / "interruptions.parquet")["category"]) == {"Faulty GPU"}
    config.write_text('logs = ["logs"]\nout = "rep2"\npdf = false\nboot_time = 2024-06-01T00:00:00Z\n'
                      'host = "node7"\n')
    rep = _run("report", "--config", str(config), "-q")
    assert rep.returncode == 0, rep.stderr
    assert set(pd.read_parquet(handover / "rep2" / "interruptions.parquet")["category"]) == {"Faulty GPU"}


def test_report_says_what_it_did_not_read(handover: Path) -> None:
    """The summary line and the executive summary name the files not read, the quarantined lines
    and the times inferred, as ingest does."""
    logs = handover / "logs"
    (logs / "poem.txt").write_text("Shall I compare thee to a summer's day?\nThou art more lovely and more temperate.\n")
    # RFC 3164 has no year: it is taken from the file's modification time
    (logs / "syslog").write_text("Aug 18 11:50:02 node8 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has"
                                 " fallen off the bus.\n")
    ing = _run("ingest", str(logs), "-q")
    assert ing.returncode == 0, ing.stderr
    rep = _run("report", str(logs), "-q", "--no-pdf", "--out", str(handover / "rep"))
    assert rep.returncode == 0, rep.stderr
    for out in (ing.stdout, rep.stdout):
        assert "1 not read: poem.txt (unrecognized)" in out
        assert "6 quarantined line(s)" in out  # the six dmesg signal lines, no boot time
        assert "times inferred: syslog (year" in out
    html = (handover / "rep" / "report.html").read_text()
    summary = html[html.index("Executive summary"):html.index("Executive summary") + 6000]
    assert "1 file(s) not read" in summary and "6 line(s) quarantined" in summary
    assert "syslog" in summary and "modification time" in summary


def test_report_errors_name_the_problem(handover: Path) -> None:
    """--job-name matching nothing lists the names; a one-value --window; --out a file."""
    logs, args = handover / "logs", ("-q", "--no-pdf")
    out = _run("report", str(logs), *args, "--policy", "training-run", "--job-name", "nosuch",
               "--out", str(handover / "r"))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "nosuch" in out.stderr and "pretrain" in out.stderr and "IndexError" not in out.stderr
    out = _run("report", str(logs), "--window", "2024-08-18", "--out", str(handover / "r"), *args)
    assert out.returncode == 1 and "--window" in out.stderr and "two" in out.stderr, out.stderr
    out = _run("report", str(logs), *args, "--window", "2024-08-18")
    assert out.returncode == 1 and "--window" in out.stderr and "2 arguments" in out.stderr, out.stderr
    (handover / "afile").write_text("")
    out = _run("report", str(logs), *args, "--out", str(handover / "afile"))
    assert out.returncode == 1 and "FileExistsError" not in out.stderr
    assert "afile" in out.stderr and "is a file" in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["ingest", "report"])
@pytest.mark.parametrize(("option", "value"), [("--tz", "Mars/Olympus"), ("--boot-time", "yesterday")])
def test_bad_reader_option_values_are_errors(handover: Path, command: str, option: str, value: str) -> None:
    """Issue 21 item 10: a zone or a time that does not exist stops the run, naming option and value."""
    out = _run(command, str(handover / "logs"), "-q", option, value,
               *(("--no-pdf", "--out", str(handover / "r")) if command == "report" else ()))
    assert out.returncode == 1, out.stdout
    assert option in out.stderr and value in out.stderr and "Traceback" not in out.stderr


def test_plan_refuses_negative_runs(tmp_path: Path) -> None:
    """Issue 21 item 10: --runs -1 is refused."""
    out = _run("plan", "--node-failure-rate", "0.0065", "--runs", "-1", "--out", str(tmp_path / "p.png"))
    assert out.returncode == 1 and "--runs" in out.stderr and not (tmp_path / "p.png").exists()


def test_toml_errors_name_the_file(handover: Path) -> None:
    """Issue 21 item 10: a configuration or manifest that is not TOML is an error naming the file."""
    bad = handover / "broken.toml"
    bad.write_text("logs = [\n")
    out = _run("report", "--config", str(bad))
    assert out.returncode == 1 and "broken.toml" in out.stderr
    out = _run("report", str(handover / "logs"), "--manifest", str(bad), "-q", "--no-pdf",
               "--out", str(handover / "r"))
    assert out.returncode == 1 and "broken.toml" in out.stderr


def test_plan_writes_a_figure_only_when_asked(tmp_path: Path) -> None:
    """plan without --out prints its tables and writes nothing."""
    out = run_in_process("plan", "--node-failure-rate", "0.0065", "--runs", "0", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == [] and "wrote" not in out.stdout


_COMMANDS = ("ingest", "report", "plan", "replay", "demo", "explain", "sources")


@pytest.mark.parametrize("command", _COMMANDS)
def test_help_has_no_placeholder_or_cut_sentence(command: str) -> None:
    """Every option's help says something (not its own name), no sentence is cut at 'e.g', and a
    flag reads as a flag (no value placeholder after --strict)."""
    import re

    out = run_in_process(command, "--help", env={"COLUMNS": "400"})
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert not re.search(r"\b(e\.g|i\.e)(?!\.)", text), text
    assert "<bool>" not in text
    rows = re.findall(r"│\s*(--[a-z0-9-]+)[^<│]*?(?:<[^>]*>(?:\.\.\.)?)?\s+(\S[^│]*?)\s*│", text)
    assert rows
    for flag, help_text in rows:
        assert help_text.strip(" .").lower() not in (flag[2:], flag[2:].replace("-", "_")), (flag, help_text)
