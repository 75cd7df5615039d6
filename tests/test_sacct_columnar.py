"""The columnar route of the sacct text reader gives what the per-line route gives.

Big ``sacct -P`` files are read in blocks with polars (:mod:`reliab.io.formats.slurm._columnar`)
instead of one Python dict per job; lines it cannot read exactly go to the per-line parser
in line order.  Here both routes read the same files (the size threshold moved either way):
random files mixing jobs, steps, het and array ids, malformed lines, headers with shuffled
or omitted columns and time zones with DST edges (a hypothesis property), the bundled sample
and the real sacct excerpts of ``tests/reference/real_world/sacct``, and must give equal
``jobs`` and ``signals`` frames, quarantine, accounting and notes.
"""

from __future__ import annotations

import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io.formats.slurm import _columnar, _initial_state, _parse_line, read_sacct

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "llama3-54d" / "slurm" / "sacct.txt"
REAL = sorted((ROOT / "tests" / "reference" / "real_world" / "sacct").glob("*.log"))


@pytest.fixture(autouse=True)
def _no_short_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short files read in columns too (runs of a few lines are otherwise read line by line)."""
    monkeypatch.setattr(_columnar, "_SHORT", 0)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[Any, Any]:
    """``(per-line, columnar)`` results of one file."""
    with monkeypatch.context() as m:
        m.setattr(_columnar, "COLUMNAR_MIN_BYTES", 1 << 62)
        per_line = read_sacct(str(path), **options)
    with monkeypatch.context() as m:
        m.setattr(_columnar, "COLUMNAR_MIN_BYTES", 0)
        columnar = read_sacct(str(path), **options)
    return per_line, columnar


def _assert_same(a: Any, b: Any) -> None:
    for name in ("jobs", "signals"):
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    pd.testing.assert_frame_equal(a.quarantine, b.quarantine)
    assert (a.lines, a.parsed, a.irrelevant, a.malformed, a.notes) == (b.lines, b.parsed, b.irrelevant,
                                                                       b.malformed, b.notes)


def _stats(path: Path, **options: Any) -> _columnar.ColumnarStats:
    from zoneinfo import ZoneInfo

    opts = {"tz": ZoneInfo(options.get("tz", "UTC")), "fields": None, "gpus_per_node": None, "delimiter": None}
    return _columnar.read_columnar(str(path), _parse_line, opts, _initial_state(None))[1]


def test_sample_is_read_in_columns_and_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled 54-day sample: 2,290 lines, its 610 allocations and 609 end signals
    (1,679 step rows), all but the header read in columns."""
    per_line, columnar = _both(SAMPLE, monkeypatch)
    _assert_same(per_line, columnar)
    assert (columnar.lines, columnar.parsed, columnar.malformed) == (2290, 610, 0)
    stats = _stats(SAMPLE)
    assert (stats.per_line, stats.columnar) == (1, 2289)


@pytest.mark.parametrize("log", REAL, ids=lambda p: p.stem)
def test_real_excerpts_equal(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = tomllib.loads((log.parent / f"{log.stem}.expected.toml").read_text())
    per_line, columnar = _both(log, monkeypatch, **expected.get("options", {}))
    _assert_same(per_line, columnar)


def test_what_the_columns_cannot_read_goes_line_by_line(tmp_path: Path) -> None:
    """Hand-written: a header, two jobs in columns, a step, a job with a non-ASCII name, a
    line short of fields, a bad time and a skipped DST hour (per line), a blank line."""
    path = tmp_path / "sacct.txt"
    path.write_text(
        "JobID|JobName|State|Start|End\n"
        "10|a|COMPLETED|2024-03-09T01:00:00|2024-03-09T02:00:00\n"
        "10.batch|batch|COMPLETED|2024-03-09T01:00:00|2024-03-09T02:00:00\n"
        "11|b\u00fc|FAILED|2024-03-09T01:00:00|2024-03-09T03:00:00\n"
        "12|c|FAILED\n"
        "13|d|FAILED|2024-03-09T01:00:00|yesterday\n"
        "14|e|NODE_FAIL|2024-03-10T01:00:00|2024-03-10T02:30:00\n"
        "\n"
        "15|f|CANCELLED by 0|2024-03-09T01:00:00|2024-03-09T05:00:00\n")
    per_line = read_sacct(str(path), tz="America/New_York")
    got = _stats(path, tz="America/New_York")
    assert (got.per_line, got.columnar) == (5, 4)  # header, 11, 12, 13, 14 | 10, 10.batch, blank, 15
    assert per_line.quarantine["lineno"].tolist() == [5, 6, 7]
    assert "does not exist in America/New_York" in per_line.quarantine["reason"].iloc[2]



@pytest.mark.parametrize("shape", ["gzip", "truncated gzip", "long line", "fixed width", "strict"])
def test_files_the_columns_leave_to_the_lines(shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compressed files are read in columns too; a truncated stream, a line over the 1 MiB
    limit and fixed-width output fall back to the per-line route (same result), and
    ``strict=True`` never takes the columnar route."""
    import gzip

    from reliab.errors import ParseError

    rows = "".join(f"{i}|COMPLETED|2024-06-01T00:00:00|2024-06-01T01:00:00\n" for i in range(1, 200))
    text = "JobID|State|Start|End\n" + rows
    path = tmp_path / "sacct.txt"
    if shape == "gzip":
        path = tmp_path / "sacct.txt.gz"
        path.write_bytes(gzip.compress(text.encode()))
    elif shape == "truncated gzip":
        path = tmp_path / "sacct.txt.gz"
        path.write_bytes(gzip.compress(text.encode())[:-40])
    elif shape == "long line":
        path.write_text(text + "7|FAILED|" + "x" * (1 << 20) + "\n" + rows)
    elif shape == "fixed width":
        path.write_text("JobID           State \n------------ ---------- \n123          COMPLETED \n")
    else:
        path.write_text(text + "bad|line\n")
    if shape == "strict":
        monkeypatch.setattr(_columnar, "COLUMNAR_MIN_BYTES", 0)
        with pytest.raises(ParseError, match="expected 4"):
            read_sacct(str(path), strict=True)
        return
    per_line, columnar = _both(path, monkeypatch)
    _assert_same(per_line, columnar)
    if shape == "gzip":
        assert _stats(path).columnar == 199
    else:
        with pytest.raises(_columnar.Fallback):
            _stats(path)


def test_header_like_lines_everywhere_stay_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """20,000 jobs whose name names JobID and State (each line could be a header, so each is
    read on its own): the same result, every line read line by line, in about the per-line time."""
    import time

    monkeypatch.setattr(_columnar, "_SHORT", 16)
    path = tmp_path / "sacct.txt"
    path.write_text("JobID|JobName|State\n" + "".join(f"{i}|jobid-state|COMPLETED\n" for i in range(1, 20_001)))
    started = time.process_time()
    per_line, columnar = _both(path, monkeypatch)
    _assert_same(per_line, columnar)
    assert columnar.parsed == 20_000
    assert _stats(path).per_line == 20_001
    assert time.process_time() - started < 10  # (rescanning the block after each such line: 26 s)

# -- the property ----------------------------------------------------------------------------

_OPTIONAL = ["JobName", "User", "Partition", "ExitCode", "Submit", "Start", "End", "Elapsed", "NNodes",
             "AllocNodes", "NodeList", "Restarts", "AllocTRES", "FailedNode", "JobIDRaw"]
_IDS = ["123", "123.batch", "123.extern", "123.0", "123+0", "123+1.0", "123_4", "123_[5-9]", "123_4.batch",
        "", " 77 ", "9" * 25]
_STATES = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED by 0", "CANCELLED by 4294967294+", "CA", "TO",
           "RUNNING", "PENDING", "TIMEOUT+", "OUT_OF_MEMORY", "REQUEUED", "failed", "BOOT_FAIL", " PREEMPTED "]
_TIMES = ["2024-06-01T12:34:56", "2024-03-10T02:30:00", "2024-11-03T01:30:00", "2024-10-27T02:30:00",
          "2024-03-31T02:30:00", "Unknown", "None", "", "N/A", "2024-02-30T00:00:00", "2300-01-01T00:00:00",
          "2024-06-01 00:00:00", "2024-06-01T00:00:00+02:00", "2024-06-01T24:00:00", " 2024-06-02T00:00:00 ",
          "1677-01-01T00:00:00", "2024-06-01T00:00"]
_COUNTS = ["1", "16", "", "0007", "abc", "-1", "9" * 19, "9" * 20, " 3 "]
_TRES = ["cpu=8,gres/gpu=8,node=1", "gres/gpu:h100=4,gres/gpu:a100=2", "gres/gpu=4,gres/gpu:h100=4", "",
         "billing=1", "gres/gpu=" + "9" * 20, "gres/gpu=1,gres/gpu=2", "cpu=1,gres/gpumem=2"]
_TEXT = ["train", "", "  ", "none assigned", "None assigned", "node[001-004]", "n\u00e9", "x y", "a\tb"]
_VALUES = {"JobName": _TEXT, "User": _TEXT, "Partition": _TEXT, "ExitCode": ["0:0", "1:0", ""],
           "Submit": _TIMES, "Start": _TIMES, "End": _TIMES, "Elapsed": ["1-02:03:04", "00:50:00", ""],
           "NNodes": _COUNTS, "AllocNodes": _COUNTS, "NodeList": _TEXT, "Restarts": _COUNTS, "AllocTRES": _TRES,
           "FailedNode": _TEXT, "JobIDRaw": _IDS}


@st.composite
def sacct_files(draw: st.DrawFn) -> tuple[bytes, dict[str, Any], int, int]:
    """A random sacct file, the reader options, the block size and the shortest run read in columns."""
    ident = draw(st.sampled_from(["JobID", "JobID", "JobIDRaw", "JobID%20"]))
    optional = draw(st.lists(st.sampled_from(_OPTIONAL if ident != "JobIDRaw" else _OPTIONAL[:-1]), max_size=8))
    fields = draw(st.permutations([ident, "State", *optional]))  # (a repeated name: its last cell counts)
    delimiter = draw(st.sampled_from(["|", "|", ";"]))
    trailing = draw(st.booleans())
    header = draw(st.booleans())
    options: dict[str, Any] = {"tz": draw(st.sampled_from(["UTC", "America/New_York", "Europe/Berlin",
                                                          "Australia/Lord_Howe"]))}
    if not header:
        options["fields"] = ",".join(fields)
    if delimiter != "|" and draw(st.booleans()):
        options["delimiter"] = delimiter

    def row(d: st.DrawFn) -> str:
        def pick(values: list[str]) -> str:  # the first (plain) value half of the time
            return d(st.sampled_from(values[:1] * len(values) + values))

        cells = [pick(_IDS) if f.startswith("JobID") else pick(_STATES) if f == "State"
                 else pick(_VALUES[f.split("%")[0]]) for f in fields]
        return delimiter.join(cells) + (delimiter if trailing else "")

    noise = st.sampled_from(["", "   ", "-----------", "just text", "JobID|State", delimiter.join(["1"] * 30),
                             "12" + delimiter + "COMPLETED", "\u00a0", "JobID State Start End"])
    lines = [delimiter.join(fields) + (delimiter if trailing else "")] if header else []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.integers(0, 9))
        lines.append(row(draw) if kind < 7 else draw(noise) if kind < 9
                     else delimiter.join(draw(st.permutations(fields))))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    return text.encode(), options, draw(st.sampled_from([8, 64, 1 << 24])), draw(st.sampled_from([0, 0, 4]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sacct_files())
def test_columnar_equals_per_line(case: tuple[bytes, dict[str, Any], int, int]) -> None:
    data, options, block, short = case
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as m:
        path = Path(tmp) / "sacct.txt"
        path.write_bytes(data)
        m.setattr(_columnar, "BLOCK_BYTES", block)
        m.setattr(_columnar, "_SHORT", short)
        per_line, columnar = _both(path, m, **options)
    _assert_same(per_line, columnar)


# -- memory ----------------------------------------------------------------------------------

_CHILD = """
import sys
import polars, pyarrow, pyarrow.compute  # noqa: F401 - loaded before the baseline is read
from reliab.io.formats.slurm import _columnar, read_sacct
if sys.argv[2] == "per-line":
    _columnar.COLUMNAR_MIN_BYTES = 1 << 62
def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key)) * 1024
before = status("VmRSS:")
result = read_sacct(sys.argv[1])
print(status("VmHWM:") - before, result.parsed)
"""


def _reader_peak(path: Path, route: str) -> int:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), route], capture_output=True, text=True,
                          timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.split()[0])


@pytest.mark.slow
def test_reader_memory_per_added_job(tmp_path: Path) -> None:
    """The reader's peak grows by < 550 bytes per job from 50,000 to 250,000 jobs of the
    benchmark's shape (measured 400-500 on a loaded machine; the per-line route: ~680; the
    jobs and signals tables alone hold ~365).  A slope, so the fixed cost of the first polars
    call is left out."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_hostile_memory import sacct_jobs

    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    sacct_jobs(small, 50_000)
    sacct_jobs(big, 250_000)
    peaks = {n: _reader_peak(p, "columnar") for n, p in ((50_000, small), (250_000, big))}
    slope = (peaks[250_000] - peaks[50_000]) / 200_000
    assert slope < 550, (slope, peaks)


def test_release_freed_is_a_no_op_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off Linux nothing is trimmed (no C library is looked up); on Linux the call returns
    whether glibc gave memory back (a bool), and never raises."""
    import sys

    from reliab._allocator import release_freed

    assert isinstance(release_freed(), bool)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr("ctypes.CDLL", lambda *a, **k: (_ for _ in ()).throw(AssertionError("looked up")))
    assert release_freed() is False
