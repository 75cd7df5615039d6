"""Incremental ingest: a folder of canonical tables plus a ledger of every content read.

Layout of a store folder::

    ledger.parquet            one record per file *content* read so far (see below); its
                              Parquet metadata lists the committed runs
    signals/<run>.parquet     rows added by each run (likewise jobs/, telemetry/, quarantine/)

A content is identified by a fingerprint of its decompressed head: the first ``head_bytes``
(``min(size, 64 KiB)``) bytes and their SHA-256.  For each file of a new run the store
looks for the record of the same path, else for a record of the same *rotation family*
(same folder, same name once ``.1``, ``.2.gz``, ``-20240603``… are stripped) whose
fingerprint matches the file's first ``head_bytes`` bytes:

* no record matches: **new**, the whole file is read;
* same path, same size and mtime, or no more decompressed bytes than recorded:
  **unchanged**, nothing is read;
* same path, more bytes: **appended**, the file is parsed and only rows and quarantine
  entries of lines beyond the recorded ``lines`` are kept;
* another path of the family (``messages`` read earlier, now ``messages.1`` or
  ``messages.2.gz``): **rotated**, read only if it grew, and then only its new lines.

Stored rows carry the ledger id of their content, so their ``origin`` (and the quarantine
``path``) always name the file where that content was last seen: ``messages:17`` becomes
``messages.1:17`` once ``messages`` is rotated, never two rows for one line.

This is exact for append-only logs: lines once read never change.  Rows without an
``origin`` (``telemetry_csv`` telemetry) are trimmed by position, one row per parsed line.
A run's parts are written to temporary files and renamed; the ledger is renamed last and
is the commit point, so a crashed run leaves no trace in the tables.  One writer at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from reliab import schema
from reliab.errors import InputFileError
from reliab.io._files import HEAD_BYTES, content_size, read_head
from reliab.io._plan import RunPlan
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice

#: tables kept in a store, each as one Parquet part per run
STORE_TABLES = ("signals", "jobs", "telemetry", "quarantine")
#: committed runs beyond which the parts are merged into one (bounds files read per ingest)
MAX_RUNS = 64
#: statuses of the ``status`` accounting column
STATUSES = ("new", "appended", "unchanged", "rotated")
_LEDGER = "ledger.parquet"
_RUNS_KEY = b"reliab.runs"
_LEDGER_COLUMNS = {
    "path": "string", "source": "string", "confidence": "float64", "reason": "string",
    "head_bytes": "int64", "head_sha256": "string", "bytes": "int64", "size": "int64",
    "mtime_ns": "int64", "lines": "int64", "parsed": "int64", "irrelevant": "int64",
    "malformed": "int64", "ingested_at": "datetime64[ns, UTC]", "run": "string", "id": "int64",
}
#: hidden column of stored parts: the ledger ``id`` of the content a row was read from
_CONTENT = "_content"
_COMPRESSED = re.compile(r"\.(gz|bz2|xz|zst|zstd)$", re.IGNORECASE)
_ROTATED = re.compile(r"\.\d+$")
_DATED = re.compile(r"[-_.]\d{8}(\d{2,6})?(?=(\.[A-Za-z]\w*)?$)")


@lru_cache(maxsize=1 << 16)
def family(path: str | os.PathLike[str]) -> tuple[str, str]:
    """``(folder, name)`` of ``path`` with rotation suffixes stripped.

    ``messages.1``, ``messages.2.gz``, ``messages-20240603`` and ``messages`` share one
    family; so do ``syslog-20240603.log`` and ``syslog.log``.
    """
    p = Path(path)
    name = _COMPRESSED.sub("", p.name)
    name = _ROTATED.sub("", name)
    name = _DATED.sub("", name)
    return str(p.parent), name


@dataclass(frozen=True)
class Plan:
    """What to do with one file: its status, matched ledger record and stat facts."""

    path: str
    status: str
    record: int | None
    read: bool
    size: int
    mtime_ns: int
    head: bytes = b""
    content: int = 0


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_numbers(origin: pd.Series) -> pd.Series:
    """Line numbers from ``path:line`` origins (NaN where there is none)."""
    return pd.to_numeric(origin.astype("string").str.rsplit(":", n=1).str[-1], errors="coerce")


def _beyond(frame: pd.DataFrame, lines: int, parsed: int) -> pd.DataFrame:
    """Rows of ``frame`` from lines after the first ``lines`` (by origin, else position)."""
    if not len(frame):
        return frame
    if "origin" in frame.columns:
        keep = (_line_numbers(frame["origin"]) > lines).fillna(False).to_numpy(dtype=bool)
        return frame.loc[keep].reset_index(drop=True)
    return frame.iloc[parsed:].reset_index(drop=True)


def trim(result: FileResult, lines: int, parsed: int) -> FileResult:
    """``result`` restricted to lines beyond the first ``lines`` (``parsed`` of them parsed).

    The accounting counts only the new lines: ``lines - lines_old`` lines, of which
    malformed are the quarantined new lines and parsed ``parsed - parsed_old`` (clamped so
    the identity ``lines = parsed + irrelevant + malformed`` holds).
    """
    if lines <= 0:
        return result
    tables = {name: _beyond(frame, lines, parsed) for name, frame in result.tables.items()}
    quarantine = result.quarantine
    if quarantine is not None:
        quarantine = quarantine.loc[(quarantine["lineno"] > lines).fillna(False).to_numpy(dtype=bool)]
        quarantine = quarantine.reset_index(drop=True)
    new = max(result.lines - lines, 0)
    malformed = min(len(quarantine) if quarantine is not None else 0, new)
    n_parsed = min(max(result.parsed - parsed, 0), new - malformed)
    return replace(result, lines=new, parsed=n_parsed, irrelevant=new - n_parsed - malformed,
                   malformed=malformed, tables=tables, quarantine=quarantine)


class Store:
    """A store folder: its ledger, committed runs and the parts of the run in progress."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise InputFileError(f"{self.directory}: store is not a folder")
        self.runs: list[str] = []
        self.records: list[dict[str, Any]] = []
        ledger = self.directory / _LEDGER
        if ledger.exists():
            table = pq.read_table(ledger)
            self.runs = json.loads((table.schema.metadata or {}).get(_RUNS_KEY, b"[]"))
            self.records = table.to_pandas().to_dict(orient="records")
        self.run = self._new_run()
        self._next_id = 1 + max((int(r["id"]) for r in self.records), default=0)
        self._by_path: dict[str, dict[int, None]] = {}
        self._by_family: dict[tuple[str, str], dict[int, None]] = {}
        for i, record in enumerate(self.records):
            self._index(i, record["path"])
        self._pending: list[FileResult] = []
        self._dirty = False

    def _new_run(self) -> str:
        """A fresh run id, ``run-<ns since epoch>``, later than every committed one."""
        stamps = (r.removeprefix("run-") for r in self.runs)
        last = max((int(t) for t in stamps if t.isdigit()), default=0)
        return f"run-{max(time.time_ns(), last + 1):020d}"

    def _index(self, i: int, path: str) -> None:
        self._by_path.setdefault(path, {})[i] = None
        self._by_family.setdefault(family(path), {})[i] = None

    def _candidates(self, path: str) -> list[int]:
        """Records that may hold this file's content: same path (latest first), then kin."""
        same = sorted((i for i in self._by_path.get(path, {}) if self.records[i]["path"] == path),
                      reverse=True)
        fam = family(path)
        kin = [i for i in self._by_family.get(fam, {})
               if self.records[i]["path"] != path and family(self.records[i]["path"]) == fam
               and self.records[i]["head_bytes"] > 0]
        kin.sort(key=lambda i: (-self.records[i]["head_bytes"], -self.records[i]["bytes"]))
        return same + kin

    def plan(self, path: str | os.PathLike[str]) -> Plan:
        """Match ``path`` against the ledger and decide its status (see the module doc)."""
        name = str(path)
        st = os.stat(name)
        candidates = self._candidates(name)
        for i in candidates:
            r = self.records[i]
            if r["path"] == name and r["size"] == st.st_size and r["mtime_ns"] == st.st_mtime_ns:
                return Plan(name, "unchanged", i, False, st.st_size, st.st_mtime_ns)
        try:
            head = read_head(name, HEAD_BYTES)
            content = content_size(name)
        except InputFileError:  # the reader quarantines it
            return Plan(name, "new", None, True, st.st_size, st.st_mtime_ns)
        for i in candidates:
            r = self.records[i]
            k = int(r["head_bytes"])
            if len(head) < k or _digest(head[:k]) != r["head_sha256"]:
                continue
            grown = content > r["bytes"]
            status = ("appended" if grown else "unchanged") if r["path"] == name else "rotated"
            return Plan(name, status, i, grown, st.st_size, st.st_mtime_ns, head, content)
        return Plan(name, "new", None, True, st.st_size, st.st_mtime_ns, head, content)

    def choice(self, plan: Plan) -> SourceChoice:
        """The stored source choice of a planned file that is not read again."""
        r = self.records[plan.record] if plan.record is not None else {}
        reason = f"{r.get('reason', '')}; {plan.status}: read by {r.get('run', '?')}"
        return SourceChoice(str(r.get("source", "empty")), float(r.get("confidence", 0.0)), reason)

    def skip(self, plan: Plan) -> FileResult:
        """Record that ``plan``'s file was seen (path, size, mtime) and read nothing."""
        r = self.records[plan.record] if plan.record is not None else {"source": "empty"}
        if plan.record is not None and (r["path"], r["size"], r["mtime_ns"]) != (
                plan.path, plan.size, plan.mtime_ns):
            r.update(path=plan.path, size=plan.size, mtime_ns=plan.mtime_ns)
            self._index(plan.record, plan.path)
            self._dirty = True
        return FileResult(path=plan.path, source=str(r["source"]), lines=0, parsed=0,
                          irrelevant=0, malformed=0)

    def add(self, plan: Plan, result: FileResult, choice: SourceChoice | None) -> FileResult:
        """Keep the new lines of a file read for ``plan``; update its ledger record.

        Returns
        -------
        FileResult
            ``result`` trimmed to the lines not read before (what this run adds).
        """
        old = self.records[plan.record] if plan.record is not None else None
        kept = trim(result, int(old["lines"]), int(old["parsed"])) if old else result
        head = plan.head[:HEAD_BYTES]
        record = {
            "path": plan.path, "source": result.source,
            "confidence": float(choice.confidence) if choice else 0.0,
            "reason": choice.reason if choice else "empty file: nothing to read",
            "head_bytes": len(head), "head_sha256": _digest(head),
            "bytes": max(plan.content, int(old["bytes"]) if old else 0),
            "size": plan.size, "mtime_ns": plan.mtime_ns, "lines": result.lines,
            "parsed": result.parsed, "irrelevant": result.irrelevant,
            "malformed": result.malformed, "ingested_at": pd.Timestamp.now(tz="UTC"),
            "run": self.run,
        }
        if old is not None and result.lines < int(old["lines"]):  # shrank: keep what was read
            record.update({k: old[k] for k in ("lines", "parsed", "irrelevant", "malformed")})
        if plan.record is None:
            record["id"], self._next_id = self._next_id, self._next_id + 1
            self.records.append(record)
            self._index(len(self.records) - 1, plan.path)
        else:
            old.update(record)
            self._index(plan.record, plan.path)
        content = int(record["id"] if plan.record is None else old["id"])
        tagged = {name: frame.assign(**{_CONTENT: content}) for name, frame in kept.tables.items()}
        quarantine = None if kept.quarantine is None else kept.quarantine.assign(**{_CONTENT: content})
        self._pending.append(replace(kept, tables=tagged, quarantine=quarantine))
        self._dirty = True
        return kept

    def _parts(self, table: str) -> list[Path]:
        return [self.directory / table / f"{run}.parquet" for run in self.runs]

    def _raw(self, table: str) -> pd.DataFrame | None:
        """The committed parts of ``table`` concatenated in run order, content ids kept."""
        frames = [pd.read_parquet(p) for p in self._parts(table) if p.exists()]
        frames = [f for f in frames if len(f)]
        if not frames:
            return None
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        return schema.conform(frame.reset_index(drop=True), table)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every committed table, runs concatenated in order, origins pointing at current paths."""
        out: dict[str, pd.DataFrame] = {}
        for table in STORE_TABLES:
            frame = self._raw(table)
            out[table] = schema.empty(table) if frame is None else schema.conform(
                self._relocate(frame, "path" if table == "quarantine" else "origin"), table)
        return out

    def _relocate(self, frame: pd.DataFrame, column: str) -> pd.DataFrame:
        """Point ``column`` (origin ``path:line`` or a bare path) at each content's current path."""
        if _CONTENT not in frame.columns:
            return frame
        if column in frame.columns:
            paths = {int(r["id"]): r["path"] for r in self.records}
            current = frame[_CONTENT].map(paths).astype("string")
            value = frame[column].astype("string")
            if column == "origin":
                current = current + ":" + value.str.rsplit(":", n=1).str[-1]
            frame[column] = current.where(current.notna(), value)
        return frame.drop(columns=[_CONTENT])

    def commit(self, tables_of: Callable[[list[FileResult]], dict[str, pd.DataFrame]]) -> None:
        """Write this run's parts, then the ledger (the commit point); no-op if nothing changed.

        ``tables_of`` concatenates per-file results into tables (the driver's own function).
        """
        if not self._dirty:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        runs = list(self.runs)
        frames = {t: f for t, f in tables_of(self._pending).items() if len(f)} if self._pending else {}
        for table, frame in frames.items():
            folder = self.directory / table
            folder.mkdir(exist_ok=True)
            _atomic(folder / f"{self.run}.parquet",
                    lambda tmp, f=frame, t=table: schema.write_parquet(f, str(tmp), t))
        if frames:
            runs.append(self.run)
        if len(runs) > MAX_RUNS:
            runs = self._compact(runs)
        ledger = pd.DataFrame(self.records, columns=list(_LEDGER_COLUMNS)).astype(_LEDGER_COLUMNS)
        arrow = pa.Table.from_pandas(ledger, preserve_index=False)
        metadata = {**(arrow.schema.metadata or {}), _RUNS_KEY: json.dumps(runs).encode()}
        _atomic(self.directory / _LEDGER,
                lambda tmp: pq.write_table(arrow.replace_schema_metadata(metadata), tmp))
        self.runs = runs
        self._pending, self._dirty = [], False
        self._sweep()

    def _compact(self, runs: list[str]) -> list[str]:
        """Merge the parts of ``runs`` into one new run; returns the new run list.

        The old parts stay valid until the ledger naming the merged run is renamed in.
        """
        self.runs = runs
        merged = self._new_run()
        for table in STORE_TABLES:
            frame = self._raw(table)
            if frame is not None:
                _atomic(self.directory / table / f"{merged}.parquet",
                        lambda tmp, f=frame, t=table: schema.write_parquet(f, str(tmp), t))
        return [merged]

    def _sweep(self) -> None:
        """Delete parts of runs that never committed (a crash between parts and ledger)."""
        for table in STORE_TABLES:
            folder = self.directory / table
            if folder.is_dir():
                for part in folder.glob("*.parquet"):
                    if part.stem not in self.runs:
                        part.unlink(missing_ok=True)

    def ledger(self) -> pd.DataFrame:
        """The ledger: one row per file content read, with its full line accounting."""
        return pd.DataFrame(self.records, columns=list(_LEDGER_COLUMNS)).astype(_LEDGER_COLUMNS)


def _atomic(target: Path, write: Callable[[Path], None]) -> None:
    """Write ``target`` through a temporary file in the same folder, then rename."""
    tmp = target.with_name(f".{target.name}.tmp")
    write(tmp)
    os.replace(tmp, target)


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the store's ``.lock`` file (one writer at a time; a dead holder's lock is taken).

    Raises
    ------
    InputFileError
        Another live process on this host holds the lock.
    """
    directory.mkdir(parents=True, exist_ok=True)
    lock = directory / ".lock"
    for attempt in (0, 1):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            holder = lock.read_text().strip() if lock.exists() else ""
            if attempt or _alive(holder):
                raise InputFileError(f"{directory}: store in use by process {holder or '?'}"
                                     f" (delete {lock} if no ingest is running)") from None
            lock.unlink(missing_ok=True)
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        break
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _alive(pid: str) -> bool:
    """Whether process ``pid`` runs on this host (unknown pids count as alive)."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ingest_into(store: str | os.PathLike[str], plan: RunPlan, *, strict: bool, progress: bool,
                attribution: dict[str, Any], rebuild: bool = False) -> IngestResult:
    """The incremental driver behind ``ingest(..., store=...)``.

    Plans every file against the ledger, reads those with new content through the shared
    per-file reader, commits the new rows and returns the attributed whole store with this
    run's accounting (column ``status``).
    """
    if any(e.url for e in plan.entries):
        raise ValueError("store= takes files only: live sources (scheme://) are read without a store")
    with locked(Path(store)):
        return _ingest_locked(Store(store), plan, strict=strict, progress=progress, attribution=attribution)


def _ingest_locked(st: Store, run: RunPlan, *, strict: bool, progress: bool,
                   attribution: dict[str, Any]) -> IngestResult:
    """:func:`ingest_into` once the store is locked."""
    from reliab.io._driver import (
        _progress,
        accounting_of,
        choose_source,
        file_tables,
        finish,
        plan_notes,
        read_file,
        sources_of,
    )

    results: list[FileResult] = []
    statuses: list[str] = []
    choices: dict[str, SourceChoice | None] = {}
    advance, close = _progress(len(run.entries), progress)
    try:
        for entry in run.entries:
            if entry.result is not None:
                result, choice, status = entry.result, None, "set aside"
            else:
                plan = st.plan(entry.path)
                if plan.read:
                    forced, why, options = run.file_options(entry.path)
                    choice = choose_source(Path(entry.path), forced, strict, why)
                    result = st.add(plan, read_file(entry.path, choice, options, strict), choice)
                else:
                    result, choice = st.skip(plan), st.choice(plan)
                status = plan.status
            choices[result.path] = choice
            results.append(result)
            statuses.append(status)
            advance()
    finally:
        close()
    st.commit(file_tables)
    accounting = accounting_of(results)
    accounting["status"] = pd.Series(statuses, dtype="string", index=accounting.index)
    return finish(st.tables(), accounting, sources_of(results, choices), notes=plan_notes(run), **attribution)


__all__ = ["Store", "Plan", "family", "trim", "locked", "ingest_into", "STATUSES", "STORE_TABLES",
           "MAX_RUNS"]
