"""Jobs at the edges of the nanosecond time range, and report files written atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import reliab

_HEAD = "JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|NodeList|Restarts|AllocTRES"


def _job(i: int, state: str, start: str, end: str) -> str:
    return f"{i}|{i}|train|u|p|{state}|0:0|{start}|{start}|{end}|05:00:00|1|node{i:04d}|0|gres/gpu=8,node=1"


def _folder(root: Path) -> Path:
    rows = [_job(100 + i, "NODE_FAIL" if i % 2 else "COMPLETED", f"2024-06-0{i + 1}T00:00:00",
                 f"2024-06-0{i + 1}T05:00:00") for i in range(6)]
    rows += [_job(200, "COMPLETED", "2024-06-01T00:00:00", "2262-04-10T00:00:00"),
             _job(201, "NODE_FAIL", "1677-09-23T00:00:00", "2024-06-02T00:00:00")]
    folder = root / "logs"
    folder.mkdir()
    (folder / "sacct.txt").write_text("\n".join([_HEAD, *rows]) + "\n", encoding="utf-8")
    return folder


def test_jobs_at_the_ends_of_the_time_range_do_not_stop_the_report(tmp_path: Path) -> None:
    """Regression: a job ending 2262-04-10 or starting 1677-09-23 stopped ``report`` with
    OverflowError (GPU-days, timeline padding)."""
    run = reliab.run_report(_folder(tmp_path), out=tmp_path / "out", pdf=False, tables=False)
    page = run.files["report.html"].read_text(encoding="utf-8")
    assert "2 job(s) set aside" in page
    assert "2024-06-01" in page and "2262" not in page.split("Window", 1)[1][:300]


def _fail_replace(src: object, dst: object) -> None:
    raise OSError("disk full")


@pytest.mark.parametrize("name", ["report.html", "report.pdf", "results.json"])
def test_report_files_are_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A write that fails before the rename leaves the previous file whole and no temp file."""
    from reliab.report import Report, write_html, write_pdf
    from reliab.study import write_archive

    target = tmp_path / name
    target.write_text("previous", encoding="utf-8")
    monkeypatch.setattr(os, "replace", _fail_replace)
    report = Report(title="t", sections=())
    write = {"report.html": lambda: write_html(report, target), "report.pdf": lambda: write_pdf(report, target),
             "results.json": lambda: write_archive({"label": "x"}, target)}[name]
    with pytest.raises(OSError):
        write()
    assert target.read_text(encoding="utf-8") == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
