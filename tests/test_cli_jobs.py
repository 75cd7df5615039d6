"""``reliab plan`` and ``reliab replay``: tables printed, figures written, one-line errors."""

from __future__ import annotations

from pathlib import Path

import _jobs_fixtures as fx
import pytest
from typer.testing import CliRunner

from reliab.cli import app
from reliab.io import IngestResult
from reliab.schema import empty

RUNNER = CliRunner()


def _invoke(*args: str):
    return RUNNER.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """An ingest output folder holding the hand-built run of tests/_jobs_fixtures.py."""
    jobs, signals = fx.tables()
    from reliab import attribute

    out = tmp_path_factory.mktemp("ingested")
    IngestResult(signals=signals, jobs=jobs, interruptions=attribute(signals, jobs),
                 telemetry=empty("telemetry"), quarantine=empty("quarantine"),
                 accounting=empty("accounting")).write_parquet(out)
    return out


def test_plan_with_a_rate_prints_the_optimum_and_writes_the_figure(tmp_path):
    fig = tmp_path / "plan.png"
    res = _invoke("plan", "--gpus", "16384", "--node-failure-rate", "0.0065", "--checkpoint-write",
                  "5min", "--restart", "5min", "--runs", "50", "--out", str(fig))
    assert res.exit_code == 0, res.output
    assert "16,384 GPUs, restart 5 min, checkpoint write 5 min" in res.output
    row = next(line for line in res.output.splitlines() if "6.500" in line)
    assert "1.80" in row and "32.9" in row and "29.6" in row  # MTTF, Young, Daly (min)
    assert fig.is_file() and fig.stat().st_size > 10_000


def test_plan_from_an_ingest_folder(folder, tmp_path):
    res = _invoke("plan", "--gpus", "64", "--from", str(folder), "--runs", "0",
                  "--out", str(tmp_path / "p.svg"))
    assert res.exit_code == 0, res.output
    assert "2 unexpected interruptions" in res.output
    assert (tmp_path / "p.svg").is_file()


def test_replay_prints_cost_and_scenarios(folder, tmp_path):
    res = _invoke("replay", str(folder), "--checkpoint-interval", "24min", "--restart", "0min",
                  "--drain-after-first-critical", "--end", str(fx.at(10)), "--out", str(tmp_path / "r.png"))
    assert res.exit_code == 0, res.output
    assert "ETTR 0.720" in res.output
    for name in ("observed", "checkpoint every 24 min", "restart in 0 min",
                 "drain after first critical Xid", "all of the above"):
        assert name in res.output
    assert (tmp_path / "r.png").is_file()


@pytest.mark.parametrize("args", [
    ("replay", "/no/such/folder"),
    ("replay", "{folder}", "--checkpoint-write", "2h", "--checkpoint-interval", "10min"),
    ("plan", "--checkpoint-write", "-5min"),
    ("plan", "--gpus", "0", "--node-failure-rate", "0.001"),
    ("plan", "--from", "{folder}", "--node-failure-rate", "0.001"),
])
def test_errors_are_one_line(folder, args):
    res = _invoke(*(a.format(folder=folder) for a in args))
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reliab: error:"), res.output


def test_replay_writes_a_figure_only_when_asked(folder, tmp_path, monkeypatch):
    """Issue 20 item 8: without --out, replay prints its tables and writes no file."""
    monkeypatch.chdir(tmp_path)
    res = _invoke("replay", str(folder), "--end", str(fx.at(10)))
    assert res.exit_code == 0, res.output
    assert "ETTR" in res.output and "wrote" not in res.output
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def bare_folder(tmp_path_factory) -> Path:
    """The hand-built run without checkpoint or resume lines, and with B's end set apart."""
    jobs, signals = fx.tables(checkpoints=False, resumes=False)
    out = tmp_path_factory.mktemp("bare")
    from reliab import attribute

    inter = attribute(signals, jobs)
    IngestResult(signals=signals, jobs=jobs, interruptions=inter[inter["job_id"] == "1"],
                 telemetry=empty("telemetry"),
        quarantine=empty("quarantine"), accounting=empty("accounting")).write_parquet(out)
    return out


def _row_of(output: str, name: str) -> list[str]:
    line = next(x for x in output.splitlines() if x.strip("│┃ ").startswith(name))
    return [c.strip() for c in line.strip("│┃ ").split("│")]


def test_readme_replay_command_without_checkpoint_lines(bare_folder, tmp_path):
    """The README's command on a run whose logs have no checkpoint or resume line: a sane ETTR
    (not -8.5e18 from an overflowing cast), the assumptions printed, one interruption counted as
    the cost counts it.  By hand (1-h interval assumed, half of it lost, no restart, 64 GPUs):
    productive (2.6 - 0.5) + (1.5 - 0.5) + 5.0 = 8.1 of 10 h (B's end, set apart, still loses
    0.5 h); A costs 0.5 + 0.4 h of downtime = 0.9 h x 64 = 58 GPU-hours."""
    res = _invoke("replay", str(bare_folder), "--checkpoint-interval", "10min", "--restart", "2min",
                  "--drain-after-first-critical", "--end", str(fx.at(10)), "--out", str(tmp_path / "r.png"))
    assert res.exit_code == 0, res.output
    assert "RuntimeWarning" not in res.output
    assert "1 interruptions, ETTR 0.810, lost 58 GPU-hours" in res.output
    assert "write time 0 assumed" in res.output and "resume lines" in res.output
    observed = _row_of(res.output, "observed")
    assert observed[1:3] == ["1", "0.810"]
    for name in ("checkpoint every 10 min", "restart in 2 min", "all of the above"):
        row = _row_of(res.output, name)
        assert row[1] in ("0", "1") and 0.0 <= float(row[2]) <= 1.0
