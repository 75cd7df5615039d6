"""The plumbing of ``python -m benchmarks`` (no timing here): scripts' figures, results files.

The kernel and folder scripts are called through their ``main(argv)`` when it takes
arguments; what it returns (figures, or a dict of them) becomes rows of the one table, and
``--append`` adds a later run's sections to the day's results file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _suite  # noqa: E402
from benchmarks._suite import Figure  # noqa: E402


def test_script_main_with_argv_is_called_and_its_dict_read() -> None:
    seen: list[list[str]] = []

    def main(argv: list[str] | None = None) -> dict:
        seen.append(list(argv or []))
        return {"grep -c -F": {"value": 0.5, "unit": "s"},
                "ingest() call": {"value": 0.6, "unit": "s", "baseline": "grep -c -F", "baseline_value": 0.5},
                "lines": 1_000_000}

    got = _suite.from_script("kernel ingest", SimpleNamespace(main=main), ["--lines", "10"], lambda: [])
    assert seen == [["--lines", "10"]]
    assert [(f.section, f.name, f.value, f.unit) for f in got] == [
        ("kernel ingest", "grep -c -F", 0.5, "s"), ("kernel ingest", "ingest() call", 0.6, "s"),
        ("kernel ingest", "lines", 1e6, "")]
    assert got[1].ratio == pytest.approx(1.2)


def test_script_without_argv_runs_the_fallback() -> None:
    fig = Figure("folder ingest", "x", 1.0, "s")
    got = _suite.from_script("folder ingest", SimpleNamespace(main=lambda: None), ["--files", "3"], lambda: [fig])
    assert got == [fig]
    listed = _suite.from_script("s", SimpleNamespace(main=lambda argv: {"figures": [fig]}), [], lambda: [])
    assert listed == [fig]
    with pytest.raises(TypeError, match="'bad'"):
        _suite.figures_of("s", {"bad": "text"})


def test_append_replaces_the_sections_run_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_suite, "RESULTS", tmp_path)
    first = [Figure("kernel ingest", "a", 1.0, "s"), Figure("fleet", "old", 9.0, "s")]
    _suite.write(first, {"date": "d", "load_average": [1.0, 1.0, 1.0]}, "d.json")
    figures, info = _suite.appended(json.loads((tmp_path / "d.json").read_text()), [Figure("fleet", "new", 2.0, "s", "grep", 1.0)],
                                    {"load_average": [3.0, 3.0, 3.0]})
    assert [(f.section, f.name) for f in figures] == [("kernel ingest", "a"), ("fleet", "new")]
    assert info["runs"] == [{"date": "d", "load_average": [1.0, 1.0, 1.0]}]
    path = _suite.write(figures, info, "d.json")
    saved = json.loads(path.read_text())
    assert [f["name"] for f in saved["figures"]] == ["a", "new"] and saved["figures"][1]["ratio"] == 2.0
    assert "fleet" in _suite.table(figures) and "2.00 x" in _suite.table(figures)


@pytest.mark.slow
def test_kernel_script_runs_whole_on_a_tiny_log(tmp_path, monkeypatch):
    """The kernel script end to end (every child, the big-log rows in memory and streamed,
    with reliab's allocator setting and polars' defaults) on a tiny log: every figure printable."""
    import benchmarks._suite as suite
    from benchmarks import bench_ingest_kernel as kernel

    monkeypatch.setattr(suite, "WORK", tmp_path)
    monkeypatch.setattr(kernel, "WORK", tmp_path)
    out = kernel.main(["--lines", "2000", "--repeat", "1", "--big-lines", "4000"])
    names = [f["name"] for f in out["figures"]]
    assert any("output= (streamed)" in n for n in names)
    assert any("polars' allocator defaults" in n for n in names)
    peaks = [f for f in out["figures"] if f["name"].startswith("peak RSS")]
    assert len(peaks) == 4 and all(f["value"] > 0 for f in peaks)
