"""The command line: version, demo, clear one-line errors with exit code 1 and no traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_in_process

import reliab


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m reliab ARGS`: a new interpreter, for the tests of the entry point itself."""
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "reliab", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def _cmd(*args: str) -> subprocess.CompletedProcess:
    """`reliab ARGS` in this process (tests/_cli.py): for tests of a command's options and output."""
    return run_in_process(*args, env={"COLUMNS": "200"})


def test_version() -> None:
    """Regression: `reliab --version` prints the package version."""
    out = _run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"reliab {reliab.__version__}"


def test_missing_file_is_one_line_error(tmp_path: Path) -> None:
    """Regression: a missing path ends with exit code 1 and one line on stderr, no traceback."""
    out = _run("ingest", str(tmp_path / "nope.log"))
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "nope.log" in out.stderr and out.stderr.startswith("reliab: error:")


def test_unknown_format_is_listed_and_strict_fails(tmp_path: Path) -> None:
    """Regression: a file no parser recognises is listed as not read; --strict makes it a one-line error."""
    p = tmp_path / "poem.txt"
    p.write_text("Shall I compare thee to a summer's day?\nThou art more lovely and more temperate.\n")
    out = _cmd("ingest", str(p), "-q")
    assert out.returncode == 0, out.stderr
    assert "1 not read: poem.txt (unrecognized)" in out.stdout
    out = _cmd("ingest", str(p), "--strict")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "poem.txt" in out.stderr


def test_any_crash_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    """Regression: an unexpected exception (not a ReliabError) is one line, exit 1; --debug shows it."""
    (tmp_path / "x.log").write_text("hello\n")
    args = ["ingest", str(tmp_path), "--out", str(tmp_path / "x.log" / "sub"), "-q"]  # a file as out folder
    out = _run(*args)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("reliab: error: ")
    assert "--debug" in out.stderr
    debug = _run("--debug", *args)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_per_source_options_on_the_command_line(tmp_path: Path) -> None:
    """Regression: reader options (--boot-time, --host, --fields, --tz, --year) reach the readers."""
    (tmp_path / "dmesg.txt").write_text("[  60.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off"
                                        " the bus.\n")
    (tmp_path / "jobs.txt").write_text("1001|NODE_FAIL|2024-06-03T10:00:00|2024-06-03T14:03:00\n")
    out = _cmd("ingest", str(tmp_path / "dmesg.txt"), "--source", "kernel", "--boot-time",
               "2024-06-03T14:00:00Z", "--host", "node7", "-q", "--out", str(tmp_path / "t"))
    assert out.returncode == 0, out.stderr
    sig = pd.read_parquet(tmp_path / "t" / "signals.parquet")
    assert (str(sig["time"].iloc[0]), sig["host"].iloc[0]) == ("2024-06-03 14:01:00+00:00", "node7")
    out = _cmd("ingest", str(tmp_path / "jobs.txt"), "--source", "sacct", "--fields", "JobID,State,Start,End",
               "--tz", "Europe/Paris", "-q", "--out", str(tmp_path / "j"))
    assert out.returncode == 0, out.stderr
    jobs = pd.read_parquet(tmp_path / "j" / "jobs.parquet")
    assert str(jobs["end"].iloc[0]) == "2024-06-03 12:03:00+00:00"
    out = _cmd("ingest", str(tmp_path / "dmesg.txt"), "--year", "twenty")
    assert out.returncode == 1 and "--year" in out.stderr and "Traceback" not in out.stderr


def test_unknown_source_is_one_line_error(tmp_path: Path) -> None:
    """Regression: --source naming no parser is an error listing nothing but one line."""
    p = tmp_path / "x.log"
    p.write_text("hello\n")
    out = _run("ingest", str(p), "--source", "carrier-pigeon")
    assert out.returncode == 1 and "carrier-pigeon" in out.stderr and "Traceback" not in out.stderr


def test_ingest_shows_accounting_and_writes_parquet(tmp_path: Path) -> None:
    """Regression: `reliab ingest DIR --out` prints the chosen formats' accounting and writes tables."""
    from reliab.datasets import sample_path

    src = sample_path() / "slurm"
    out = _cmd("ingest", str(src), "--out", str(tmp_path / "tables"), "-q")
    assert out.returncode == 0, out.stderr
    assert "sacct" in out.stdout and "2,290" in out.stdout
    jobs = pd.read_parquet(tmp_path / "tables" / "jobs.parquet")
    assert len(jobs) == 467 + 143  # the training run's allocations and other users' jobs
    # sacct alone under the default fleet policy: only NODE_FAIL counts, no FAILED job has
    # infrastructure evidence, and the missing evidence families are named, never silent
    assert "122 interruptions (122 unexpected, 0 planned; policy fleet; 334 user failures apart)" in out.stdout
    assert "Warning: no kernel logs" in out.stdout and "Warning: no IPMI SEL" in out.stdout
    assert "Warning: 122 of 122 interruptions (100%) have no evidence" in out.stdout


def test_explain_and_sources() -> None:
    """Regression: `explain xid:79` names its rule and category; `sources` lists the parsers."""
    out = _cmd("explain", "xid:79")
    assert out.returncode == 0 and "Faulty GPU" in out.stdout
    out = _cmd("sources")
    assert out.returncode == 0 and all(s in out.stdout for s in ("kernel", "sacct", "nccl", "sel", "tickets"))
    names = [ln.split()[0] for ln in out.stdout.splitlines()[1:]]
    assert names == sorted(names) and "``" not in out.stdout and "\x1b[" not in out.stdout


def test_explain_unknown_key_lists_near_matches() -> None:
    """Regression: an unknown key is called unknown, with the closest known keys."""
    out = _cmd("explain", "nccl:watchdog_timout")
    assert out.returncode == 0
    assert "Unknown signal 'nccl:watchdog_timout'" in out.stdout and "nccl:watchdog_timeout" in out.stdout
    out = _cmd("explain", "xid:7")
    assert "Unknown" in out.stdout and "xid:79" in out.stdout


@pytest.fixture
def demo_dir(demo_run: reliab.ReportRun) -> Path:
    """The folder `reliab demo --out D -q` wrote, once per test session (tests/conftest.py ``demo_run``)."""
    return demo_run.files["report.html"].parent


def test_demo_writes_report_and_tables(demo_dir: Path) -> None:
    """Regression: `reliab demo` writes report.html, report.pdf and the Parquet tables."""
    for name in ("report.html", "report.pdf", "signals.parquet", "interruptions.parquet",
                 "accounting.parquet", "quarantine.parquet"):
        assert (demo_dir / name).stat().st_size > 0, name
    assert (demo_dir / "report.pdf").read_bytes()[:4] == b"%PDF"
    inter = pd.read_parquet(demo_dir / "interruptions.parquet")
    assert len(inter) == 466 and str(inter["time"].dtype) == "datetime64[ns, UTC]"
    html = (demo_dir / "report.html").read_text()
    assert "35.3" in html and "30.1" in html  # recomputed share beside the printed one


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium)")
def test_demo_html_opens_in_chromium(demo_dir: Path, tmp_path: Path) -> None:
    """Regression: the demo report renders in headless Chromium with no console errors."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=5000", "--dump-dom", (demo_dir / "report.html").as_uri()]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Reliability report" in proc.stdout and "<svg" in proc.stdout
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console


def test_ingest_reports_format_and_compression(tmp_path: Path) -> None:
    """Regression: `reliab ingest` says which format and compression it chose for each file."""
    import gzip
    import lzma

    from reliab.datasets import sample_path

    sacct = (sample_path() / "slurm" / "sacct.txt").read_bytes()
    (tmp_path / "jobs.txt.xz").write_bytes(lzma.compress(sacct))
    tickets = (sample_path() / "tickets" / "incidents.csv").read_bytes()
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(tickets))
    out = _cmd("ingest", str(tmp_path), "-q", "--why")
    assert out.returncode == 0, out.stderr
    rows = {ln.split()[0]: ln for ln in out.stdout.splitlines() if ln.startswith(("jobs.txt", "t.csv"))}
    xz_row = next(v for k, v in rows.items() if "jobs.txt" in k)
    gz_row = next(v for k, v in rows.items() if "t.csv" in k)
    assert "sacct" in xz_row and "xz" in xz_row and "sniffed" in xz_row
    assert "tickets" in gz_row and "gzip" in gz_row


def test_ingest_with_user_rules(tmp_path: Path) -> None:
    """Regression: --rules overrides a shipped rule by id, and the interruption categories follow."""
    from reliab.datasets import sample_path

    rules = tmp_path / "site.csv"
    rules.write_text("id,signal,message,category,component,planned,priority,root_cause,confidence,note\n"
                     "xid-79,xid:79,,NVLink,GPU,false,90,true,L,site decision\n")
    data = sample_path()
    args = [str(data / d) for d in ("syslog", "dmesg", "slurm", "train", "ipmi", "tickets")]
    plain = _cmd("ingest", *args, "-q")
    site = _cmd("ingest", *args, "-q", "--rules", str(rules))
    assert plain.returncode == site.returncode == 0, site.stderr
    assert "Faulty GPU 148" in plain.stdout
    assert "Faulty GPU 148" not in site.stdout and "NVLink" in site.stdout


def test_usage_errors_are_one_line() -> None:
    """Regression: a missing argument or an unknown option is one line, exit 1, naming where help is."""
    for args in (("ingest",), ("ingest", "--bogus", "x")):
        out = _run(*args)
        assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert out.stderr.startswith("reliab: error: ") and "--help" in out.stderr
    assert _run("ingest", "--help").returncode == 0
