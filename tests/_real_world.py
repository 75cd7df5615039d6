"""Score reliab against the real-world log corpus (``tests/reference/real_world``).

Each ``<family>/<slug>.expected.toml`` states, by hand, what a correct reader must extract
from the verbatim file beside it (format: ``tests/reference/real_world/README.md``).  This
module runs ``reliab.ingest(file, **options)`` with default settings on every file and
compares:

* **events** (kernel, pytorch, sel): an emitted signal matches an expected event when the
  signal key is the same (and the host / GPU, when the expectation names them) and its origin
  line is the expected line, or, failing that, its time is within ±1 s of the expected time.
  A matched signal must also carry the expected time (±1 s; month to second only when
  ``year_inferred``) and severity (when given), else the event is missed *and* the signal is
  spurious.  Recall is split into *timed* events (the thresholds) and *untimed* ones (the
  text carries no absolute clock); precision is matched / emitted signals of the file.
* **jobs** (sacct): one ``[[job]]`` per allocation, matched by ``job_id`` with the same
  normalised ``state``, ``start`` and ``end`` (``"none"``: must be empty).  The ``slurm:<state>``
  signals the sacct reader derives from its own job rows restate the job table and are not
  scored.
* **telemetry** (nvidia_smi, dcgm): the table must have ``rows`` rows and every
  ``[[telemetry.check]]`` cell must hold its value (``"nan"``: missing).  Recall counts the
  passed checks plus one check per file for the row count; precision is
  ``min(expected, emitted) / emitted`` rows (signals from a telemetry file count as emitted).
* **source**: the sniffed source must be the expected one (``"unrecognized"`` when ingest
  raises :class:`~reliab.errors.UnknownFormatError`);
* **accounting**: every line of a file reliab read is accounted for, ``lines == parsed +
  irrelevant + malformed`` and ``lines`` equals the number of lines in the file; a reader
  that crashes on the file fails it (an unrecognised file is the source check's business).

``tests/test_real_world.py`` holds the per-family thresholds and
``benchmarks/real_world_coverage.py`` prints the tables.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

import reliab
from reliab.errors import UnknownFormatError

ROOT = Path(__file__).resolve().parent / "reference" / "real_world"
FAMILIES = ("kernel", "pytorch", "sacct", "sel", "nvidia_smi", "dcgm")
EVENT_FAMILIES = ("kernel", "pytorch", "sel")
TELEMETRY_FAMILIES = ("nvidia_smi", "dcgm")
UNRECOGNIZED = "unrecognized"
TIME_TOLERANCE = pd.Timedelta(seconds=1)
CELL_TIME_TOLERANCE = pd.Timedelta(milliseconds=1)
_PCI = re.compile(r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.[0-7])?$")


# ----------------------------------------------------------------------------- loading
@dataclass(frozen=True)
class Case:
    """One corpus file and its hand-written expectation."""

    family: str
    slug: str
    expected_path: Path
    data_path: Path
    spec: dict[str, Any] = field(compare=False, hash=False, repr=False)

    @property
    def name(self) -> str:
        """``<family>/<slug>``."""
        return f"{self.family}/{self.slug}"


def _data_path(expected: Path, spec: dict[str, Any]) -> Path:
    if "file" in spec:
        return (expected.parent / spec["file"]).resolve()
    slug = expected.name.removesuffix(".expected.toml")
    matches = [p for p in expected.parent.iterdir()
               if p.name.startswith(slug + ".") and not p.name.endswith(".expected.toml")]
    if len(matches) != 1:
        raise FileNotFoundError(f"{expected}: expected exactly one data file {slug}.*, found {matches}")
    return matches[0]


def cases(family: str | None = None, root: Path = ROOT) -> list[Case]:
    """The corpus files of one family (or of all), in name order.

    Parameters
    ----------
    family : str, optional
        One of :data:`FAMILIES`; all families when omitted.
    root : Path
        The corpus folder (default: ``tests/reference/real_world``).

    Returns
    -------
    list of Case
    """
    out = []
    for fam in (family,) if family else FAMILIES:
        for expected in sorted((root / fam).glob("*.expected.toml")):
            spec = tomllib.loads(expected.read_text(encoding="utf-8"))
            out.append(Case(fam, expected.name.removesuffix(".expected.toml"), expected,
                            _data_path(expected, spec), spec))
    return out


# ----------------------------------------------------------------------------- helpers
def _utc(value: Any) -> pd.Timestamp | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    ts = pd.Timestamp(value)
    if ts is pd.NaT or pd.isna(ts):
        return None
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _line_of(origin: Any) -> int | None:
    if origin is None or (isinstance(origin, float) and math.isnan(origin)) or pd.isna(origin):
        return None
    tail = str(origin).rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def norm_gpu(value: Any) -> str | None:
    """A GPU named by index (``"3"``) or PCI bus id (any width) in one comparable form."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return None
    text = str(value).strip().lower()
    m = _PCI.match(text)
    if m is None:
        return text
    domain = (m[1] or "0")[-4:].rjust(4, "0")
    return f"{domain}:{m[2].rjust(2, '0')}:{m[3].rjust(2, '0')}"


def _same_host(expected: str | None, got: Any) -> bool:
    if expected is None:
        return True
    return got is not None and not pd.isna(got) and str(got).strip().lower() == expected.strip().lower()


def _time_ok(expected: pd.Timestamp, got: pd.Timestamp | None, year_inferred: bool) -> bool:
    if got is None:
        return False
    if year_inferred:
        try:
            got = got.replace(year=expected.year)
        except ValueError:  # 29 February
            return False
    return abs(got - expected) <= TIME_TOLERANCE


def file_line_count(path: Path) -> int:
    """Lines of a text file as ``wc -l`` counts them, plus a last line without newline."""
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# ----------------------------------------------------------------------------- results
@dataclass
class FileScore:
    """The comparison of one corpus file with its expectation."""

    case: Case
    expected_source: str
    sniffed_source: str
    error: str | None = None
    timed_expected: int = 0
    timed_matched: int = 0
    untimed_expected: int = 0
    untimed_matched: int = 0
    emitted: int = 0
    correct: int = 0
    missed: list[str] = field(default_factory=list)
    spurious: list[str] = field(default_factory=list)
    checks_total: int = 0
    checks_passed: int = 0
    check_failures: list[str] = field(default_factory=list)
    rows_expected: int | None = None
    rows_emitted: int | None = None
    accounting: dict[str, int] | None = None
    file_lines: int = 0
    quarantined: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def source_ok(self) -> bool:
        """The sniffed source is the expected one."""
        return self.sniffed_source == self.expected_source

    @property
    def accounting_ok(self) -> bool:
        """Every line accounted for once; a reader crash fails, an unrecognised file is skipped."""
        if self.accounting is None:  # not read: a crash fails, "unrecognized" is the source test's
            return self.error is None
        a = self.accounting
        return a["lines"] == a["parsed"] + a["irrelevant"] + a["malformed"] == self.file_lines

    @property
    def recall_units(self) -> tuple[int, int]:
        """(passed, total) over timed events, jobs or telemetry checks."""
        if self.case.family in TELEMETRY_FAMILIES:
            return self.checks_passed, self.checks_total
        return self.timed_matched, self.timed_expected

    @property
    def precision_units(self) -> tuple[int, int]:
        """(correct, emitted)."""
        return self.correct, self.emitted

    @property
    def perfect(self) -> bool:
        """Source, accounting, recall (timed and untimed) and precision all as expected."""
        passed, total = self.recall_units
        return (self.source_ok and self.accounting_ok and passed == total
                and self.untimed_matched == self.untimed_expected and self.correct == self.emitted)


def _ratio(num: int, den: int) -> float:
    return 1.0 if den == 0 else num / den


@dataclass
class FamilyScore:
    """A family's files and their pooled scores."""

    family: str
    files: list[FileScore]

    def _sum(self, attr: str) -> int:
        return sum(getattr(f, attr) for f in self.files)

    @property
    def recall(self) -> float:
        """Timed events (jobs, telemetry checks) found, over all files of the family."""
        return _ratio(sum(f.recall_units[0] for f in self.files), sum(f.recall_units[1] for f in self.files))

    @property
    def recall_untimed(self) -> float:
        """Events without an absolute clock found (matched by line)."""
        return _ratio(self._sum("untimed_matched"), self._sum("untimed_expected"))

    @property
    def precision(self) -> float:
        """Correct over emitted rows (signals, jobs or telemetry rows)."""
        return _ratio(self._sum("correct"), self._sum("emitted"))

    @property
    def sources_ok(self) -> int:
        """Files whose sniffed source is the expected one."""
        return sum(f.source_ok for f in self.files)

    @property
    def accounting_ok(self) -> int:
        """Files whose every line is accounted for."""
        return sum(f.accounting_ok for f in self.files)

    def counts(self) -> dict[str, int]:
        """The raw numerators and denominators behind the ratios."""
        return {
            "files": len(self.files),
            "recall_passed": sum(f.recall_units[0] for f in self.files),
            "recall_total": sum(f.recall_units[1] for f in self.files),
            "untimed_matched": self._sum("untimed_matched"),
            "untimed_expected": self._sum("untimed_expected"),
            "correct": self._sum("correct"),
            "emitted": self._sum("emitted"),
        }


# ----------------------------------------------------------------------------- scoring
def _ingest(case: Case) -> tuple[Any, str, str | None]:
    options = dict(case.spec.get("options", {}))
    try:
        res = reliab.ingest(str(case.data_path), **options)
    except UnknownFormatError:
        return None, UNRECOGNIZED, None
    except Exception as exc:  # noqa: BLE001 - any reader failure is a finding, not a crash
        return None, "error", f"{type(exc).__name__}: {exc}"
    choice = res.sources.get(str(case.data_path))
    if choice is None and len(res.sources) == 1:
        choice = next(iter(res.sources.values()))
    return res, (choice.source if choice is not None else "?"), None


def _describe(row: pd.Series) -> str:
    t = _utc(row.get("time"))
    return f"line {_line_of(row.get('origin'))}: {row.get('signal')} at {t.isoformat() if t else 'no time'}"


def _score_events(case: Case, signals: pd.DataFrame, fs: FileScore) -> None:
    expected = case.spec.get("event", [])
    rows = signals.reset_index(drop=True)
    lines = [_line_of(o) for o in rows["origin"]] if len(rows) else []
    times = [_utc(t) for t in rows["time"]] if len(rows) else []
    taken: set[int] = set()
    found: dict[int, int] = {}

    def candidates(ev: dict[str, Any]) -> list[int]:
        out = []
        for i in range(len(rows)):
            if i in taken or rows.at[i, "signal"] != ev["signal"]:
                continue
            if not _same_host(ev.get("host"), rows.at[i, "host"]):
                continue
            if "gpu" in ev and norm_gpu(rows.at[i, "gpu"]) != norm_gpu(ev["gpu"]):
                continue
            out.append(i)
        return out

    def acceptable(ev: dict[str, Any], i: int) -> bool:
        if "time" in ev and not _time_ok(_utc(ev["time"]), times[i], bool(ev.get("year_inferred"))):
            return False
        return "severity" not in ev or rows.at[i, "severity"] == ev["severity"]

    for k, ev in enumerate(expected):  # pass 1: same line
        for i in candidates(ev):
            if lines[i] == ev["line"] and acceptable(ev, i):
                found[k] = i
                taken.add(i)
                break
    for k, ev in enumerate(expected):  # pass 2: same time (±1 s)
        if k in found or "time" not in ev:
            continue
        for i in candidates(ev):
            if times[i] is not None and acceptable(ev, i):
                found[k] = i
                taken.add(i)
                break
    for k, ev in enumerate(expected):
        timed = "time" in ev
        fs.timed_expected += timed
        fs.untimed_expected += not timed
        if k in found:
            fs.timed_matched += timed
            fs.untimed_matched += not timed
            continue
        on_line = [i for i in range(len(rows)) if lines[i] == ev["line"] and i not in taken]
        if on_line:
            why = "emitted " + "; ".join(_describe(rows.loc[i]) for i in on_line)
        elif any(rows.at[i, "signal"] == ev["signal"] for i in range(len(rows))):
            why = f"{ev['signal']} emitted elsewhere, none at this line/time"
        else:
            why = "not emitted"
        want = ev.get("time", "untimed")
        fs.missed.append(f"line {ev['line']}: {ev['signal']} ({want}) - {why}")
    fs.emitted += len(rows)
    fs.correct += len(taken)
    unset = {u["line"] for u in case.spec.get("unset_clock", [])}
    for i in range(len(rows)):
        if i not in taken:
            tag = " [unset-clock line]" if lines[i] in unset else ""
            fs.spurious.append(_describe(rows.loc[i]) + tag)


def _score_jobs(case: Case, jobs: pd.DataFrame, fs: FileScore) -> None:
    expected = case.spec.get("job", [])
    rows = jobs.reset_index(drop=True)
    taken: set[int] = set()
    for ev in expected:
        fs.timed_expected += 1
        same_id = [i for i in range(len(rows)) if str(rows.at[i, "job_id"]) == ev["job_id"] and i not in taken]
        if not same_id:
            fs.missed.append(f"line {ev['line']}: job {ev['job_id']} {ev['state']} - not emitted")
            continue
        i = same_id[0]
        problems = []
        if rows.at[i, "state"] != ev["state"]:
            problems.append(f"state {rows.at[i, 'state']!r}")
        for col in ("start", "end"):
            want = ev.get(col)
            if want is None:
                continue
            got = _utc(rows.at[i, col])
            if want == "none":
                if got is not None:
                    problems.append(f"{col} {got.isoformat()} (must be empty)")
            elif got is None or abs(got - _utc(want)) > TIME_TOLERANCE:
                problems.append(f"{col} {got.isoformat() if got else 'empty'} (expected {want})")
        taken.add(i)
        if problems:
            fs.missed.append(f"line {ev['line']}: job {ev['job_id']} {ev['state']} - " + ", ".join(problems))
        else:
            fs.timed_matched += 1
            fs.correct += 1
    fs.emitted += len(rows)
    for i in range(len(rows)):
        if i not in taken:
            fs.spurious.append(f"line {_line_of(rows.at[i, 'origin'])}: job {rows.at[i, 'job_id']} {rows.at[i, 'state']}")


def _cell_ok(want: Any, got: Any) -> bool:
    missing = got is None or (isinstance(got, float) and math.isnan(got)) or bool(pd.isna(got))
    if isinstance(want, str) and want.lower() == "nan":
        return missing
    if missing:
        return False
    if isinstance(want, str):
        t = _utc(got)
        return t is not None and abs(t - _utc(want)) <= CELL_TIME_TOLERANCE
    try:
        return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-6)
    except (TypeError, ValueError):
        return False


def _data_lines(path: Path) -> list[int]:
    """1-based numbers of the non-blank, non-comment lines after the first (header) line."""
    text = path.read_text(encoding="utf-8", errors="replace").split("\n")
    return [i for i, line in enumerate(text, start=1) if i > 1 and line.strip() and not line.startswith("#")]


def _score_telemetry(case: Case, table: pd.DataFrame, signals: pd.DataFrame, fs: FileScore) -> None:
    spec = case.spec.get("telemetry", {})
    rows = table.reset_index(drop=True)
    fs.rows_expected = spec.get("rows", 0)
    fs.rows_emitted = len(rows)
    fs.checks_total += 1
    if fs.rows_emitted == fs.rows_expected:
        fs.checks_passed += 1
    else:
        fs.check_failures.append(f"rows: {fs.rows_emitted} (expected {fs.rows_expected})")
    if "origin" in rows and rows["origin"].notna().any():
        lines = [_line_of(o) for o in rows["origin"]]
    else:  # no file:line on the rows: the n-th row is the n-th data line (after the header)
        lines = _data_lines(case.data_path)[:len(rows)]
        lines += [None] * (len(rows) - len(lines))
        if len(rows):
            fs.notes.append("telemetry rows carry no origin (file:line); rows matched to data lines by order")
    for chk in spec.get("check", []):
        fs.checks_total += 1
        sel = list(range(len(rows)))
        if "line" in chk:
            sel = [i for i in sel if lines[i] == chk["line"]]
        if "gpu" in chk:
            sel = [i for i in sel if "gpu" in rows and norm_gpu(rows.at[i, "gpu"]) == norm_gpu(chk["gpu"])]
        if "host" in chk:
            sel = [i for i in sel if "host" in rows and _same_host(chk["host"], rows.at[i, "host"])]
        where = ", ".join(f"{k}={chk[k]}" for k in ("line", "gpu", "host") if k in chk)
        if not sel:
            fs.check_failures.append(f"{where}: no such row (for {chk['column']} = {chk['value']})")
            continue
        i = min(sel, key=lambda j: lines[j] if lines[j] is not None else 0)
        got = rows.at[i, chk["column"]] if chk["column"] in rows else None
        if _cell_ok(chk["value"], got):
            fs.checks_passed += 1
        else:
            shown = "absent" if chk["column"] not in rows else repr(got)
            fs.check_failures.append(f"{where}: {chk['column']} = {shown} (expected {chk['value']})")
    fs.emitted += len(rows) + len(signals)
    fs.correct += min(fs.rows_expected, len(rows))
    for i in range(len(signals)):
        fs.spurious.append(_describe(signals.reset_index(drop=True).loc[i]))


def score_case(case: Case) -> FileScore:
    """Run reliab on one corpus file and compare with its expectation.

    Parameters
    ----------
    case : Case

    Returns
    -------
    FileScore
    """
    res, sniffed, error = _ingest(case)
    fs = FileScore(case, case.spec.get("source", UNRECOGNIZED), sniffed, error,
                   file_lines=file_line_count(case.data_path))
    empty = pd.DataFrame(columns=["time", "host", "gpu", "signal", "severity", "origin", "job_id", "state"])
    signals = res.signals if res is not None else empty
    jobs = res.jobs if res is not None else empty
    telemetry = res.telemetry if res is not None else pd.DataFrame()
    if res is not None:
        acc = res.accounting
        if len(acc):
            row = acc.iloc[0]
            fs.accounting = {k: int(row[k]) for k in ("lines", "parsed", "irrelevant", "malformed")}
        if len(res.quarantine):
            fs.quarantined = sorted(int(x) for x in res.quarantine["lineno"])
    if case.family == "sacct":
        _score_jobs(case, jobs, fs)
        others = signals[~signals["signal"].astype(str).str.startswith("slurm:")] if len(signals) else signals
        fs.emitted += len(others)
        fs.spurious += [_describe(r) for _, r in others.iterrows()]
    elif case.family in TELEMETRY_FAMILIES:
        _score_telemetry(case, telemetry, signals, fs)
    else:
        _score_events(case, signals, fs)
        fs.emitted += len(jobs)
        fs.spurious += [f"job {j}" for j in (jobs["job_id"] if len(jobs) else [])]
    return fs


@cache
def score_family(family: str) -> FamilyScore:
    """Score every file of one family (cached for the test session).

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.

    Returns
    -------
    FamilyScore
    """
    return FamilyScore(family, [score_case(c) for c in cases(family)])
