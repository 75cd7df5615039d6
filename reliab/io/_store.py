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
* same path, same size and mtime, or the same content: **unchanged**, nothing is read;
* same path, more bytes, and the first ``bytes`` recorded bytes unchanged (SHA-256 of the
  whole stored prefix, ``prefix_sha256``): **appended**, the file is parsed and only rows
  and quarantine entries of lines beyond the recorded ``lines`` are kept;
* same path but the stored prefix changed, or the file shrank: **rewritten**, the old
  content's rows are dropped and the file is read afresh;
* another path of the family (``messages`` read earlier, now ``messages.1`` or
  ``messages.2.gz``) with the stored prefix: **rotated**, read only if it grew, and then
  only its new lines.

A last line without its newline is never committed: the writer may be in the middle of it.
It is held (``held`` bytes in the ledger) until it is complete or the file is final
(rotated or compressed), see :mod:`reliab.io._storecontent`.

Stored rows carry the ledger id of their content, so their ``origin`` (and the quarantine
``path``) always name the file where that content was last seen: ``messages:17`` becomes
``messages.1:17`` once ``messages`` is rotated, never two rows for one line.

This is exact for append-only logs: lines once read never change.  Rows without an
``origin`` (``telemetry_csv`` telemetry) are trimmed by position, one row per parsed line.
A run's parts are written to temporary files and renamed; the ledger is renamed last and
is the commit point, so a crashed run leaves no trace in the tables.  The ledger records
each part's size and checksum; a missing or corrupt part or ledger stops the run with the
fix (``--rebuild``), and one writer at a time holds the lock (:mod:`reliab.io._storecheck`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from reliab import schema
from reliab.errors import InputFileError
from reliab.io._files import HEAD_BYTES, read_head
from reliab.io._merge import concat, file_tables
from reliab.io._partitioned import atomic
from reliab.io._registry import FileResult, is_line_format
from reliab.io._result import SourceChoice
from reliab.io._storecheck import StoreError, part_record, rebuild_hint, verify_parts
from reliab.io._storecontent import (
    content_facts,
    family,
    hold_tail,
    is_final,
    prefix_digests,
    trim,
)

#: tables kept in a store, each as one Parquet part per run
STORE_TABLES = ("signals", "jobs", "telemetry", "quarantine")
#: committed runs beyond which the parts are merged into one (bounds files read per ingest)
MAX_RUNS = 64
#: the ledger file of a store folder (its commit point)
LEDGER = "ledger.parquet"
_RUNS_KEY = b"reliab.runs"
_PARTS_KEY = b"reliab.parts"
_LEDGER_COLUMNS = {
    "path": "string", "source": "string", "confidence": "float64", "reason": "string",
    "head_bytes": "int64", "head_sha256": "string", "bytes": "int64", "size": "int64",
    "mtime_ns": "int64", "lines": "int64", "parsed": "int64", "irrelevant": "int64",
    "malformed": "int64", "ingested_at": "datetime64[ns, UTC]", "run": "string", "id": "int64",
    "prefix_sha256": "string", "held": "int64",
}
#: values of ledger columns added after a store was first written
_LATER_COLUMNS = {"prefix_sha256": None, "held": 0}
#: hidden column of stored parts: the ledger ``id`` of the content a row was read from
_CONTENT = "_content"


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
    complete: bool = True
    prefix: str | None = None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Store:
    """A store folder: its ledger, committed runs and the parts of the run in progress.

    Raises
    ------
    StoreError
        The ledger cannot be read, or a part it lists is missing or corrupt.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise InputFileError(f"{self.directory}: store is not a folder")
        self.runs: list[str] = []
        self.parts: dict[str, dict[str, dict[str, Any]]] = {}
        self.records: list[dict[str, Any]] = []
        self.notes: list[str] = []
        ledger = self.directory / LEDGER
        if ledger.exists():
            self._load(ledger)
        elif any(next((self.directory / t).glob("*.parquet"), None) is not None for t in STORE_TABLES):
            self.notes.append(f"store {self.directory} had parts but no ledger: they were discarded and every"
                              " file was read afresh")
        verify_parts(self.directory, self.runs, self.parts)
        self.run = self._new_run()
        self._next_id = 1 + max((int(r["id"]) for r in self.records), default=0)
        self._by_path: dict[str, dict[int, None]] = {}
        self._by_family: dict[tuple[str, str], dict[int, None]] = {}
        for i, record in enumerate(self.records):
            self._index(i, record["path"])
        self._pending: list[FileResult] = []
        self._dirty = False

    def _load(self, ledger: Path) -> None:
        try:
            table = pq.read_table(ledger)
            meta = table.schema.metadata or {}
            self.runs = json.loads(meta.get(_RUNS_KEY, b"[]"))
            self.parts = json.loads(meta.get(_PARTS_KEY, b"{}"))
            records = schema.from_arrow(table).to_dict(orient="records")
        except Exception as exc:  # noqa: BLE001 - any damage to the ledger is the same fix
            raise StoreError(f"{self.directory}: ledger {LEDGER} is unreadable ({type(exc).__name__});"
                             f" {rebuild_hint(self.directory)}") from None
        for record in records:
            for key, default in _LATER_COLUMNS.items():
                if key not in record or pd.isna(record[key]):
                    record[key] = default
        self.records = records

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
        name = os.fspath(path)
        st = os.stat(name)
        candidates = self._candidates(name)
        for i in candidates:
            r = self.records[i]
            if r["path"] == name and r["size"] == st.st_size and r["mtime_ns"] == st.st_mtime_ns:
                return Plan(name, "unchanged", i, False, st.st_size, st.st_mtime_ns)
        try:
            head = read_head(name, HEAD_BYTES)
            size, complete = content_facts(name)
        except InputFileError:  # the reader quarantines it
            return Plan(name, "new", None, True, st.st_size, st.st_mtime_ns)
        new = Plan(name, "new", None, True, st.st_size, st.st_mtime_ns, head, size, complete)
        rewritten = None
        for i in candidates:
            r = self.records[i]
            same = r["path"] == name
            k = int(r["head_bytes"])
            if len(head) < k or _digest(head[:k]) != r["head_sha256"]:
                continue
            prefix = self._prefix(name, r, size)
            if prefix is False:  # shrank, or the stored prefix changed: not this content
                rewritten = i if same and rewritten is None else rewritten
                continue
            grown = size > int(r["bytes"]) or (int(r["held"]) > 0 and is_final(name))
            status = ("appended" if grown else "unchanged") if same else "rotated"
            return replace(new, status=status, record=i, read=grown, prefix=prefix if isinstance(prefix, str) else None)
        if rewritten is not None:
            return replace(new, status="rewritten", record=rewritten)
        return new

    @staticmethod
    def _prefix(name: str, r: dict[str, Any], size: int) -> str | bool:
        """Whether ``name`` still starts with the stored content of record ``r``.

        Returns the digest of the *whole* current content when the stored prefix matches
        (one pass computes both), ``True`` when the head fingerprint already covered the
        stored content, ``False`` when the file is shorter or its stored prefix changed.
        """
        stored = int(r["bytes"])
        if size < stored:
            return False
        if stored <= int(r["head_bytes"]) or r["prefix_sha256"] is None:
            return True
        old, whole = prefix_digests(name, stored, size)
        return (whole or True) if old == r["prefix_sha256"] else False

    def skip(self, plan: Plan) -> tuple[FileResult, SourceChoice]:
        """Record that the file of ``plan`` (not read again: a matched record) was seen (path, size,
        mtime); its row, which reads nothing, and its stored source choice."""
        r = self.records[plan.record]
        if (r["path"], r["size"], r["mtime_ns"]) != (plan.path, plan.size, plan.mtime_ns):
            r.update(path=plan.path, size=plan.size, mtime_ns=plan.mtime_ns)
            self._index(plan.record, plan.path)
            self._dirty = True
        reason = f"{r.get('reason', '')}; {plan.status}: read by {r.get('run', '?')}"
        return (FileResult(path=plan.path, source=str(r["source"]), lines=0, parsed=0, irrelevant=0, malformed=0),
                SourceChoice(str(r["source"]), float(r.get("confidence", 0.0)), reason))

    def add(self, plan: Plan, result: FileResult, choice: SourceChoice) -> FileResult:
        """Keep the new, complete lines of a file read for ``plan``; update its ledger record.

        A last line without newline is held (see the module doc) unless the file is final or
        not of a line format (Parquet, pickle, JSON: no newline at the end).

        Returns
        -------
        FileResult
            ``result`` trimmed to the lines not read before (what this run adds).
        """
        held = 0
        if not plan.complete and not is_final(plan.path) and result.lines > 0 and is_line_format(result.source):
            result, held = hold_tail(result), 1
        rewritten = plan.status == "rewritten"
        old = self.records[plan.record] if plan.record is not None and not rewritten else None
        kept = trim(result, int(old["lines"]), int(old["parsed"])) if old else result
        head = plan.head[:HEAD_BYTES]
        record = {
            "path": plan.path, "source": result.source,
            "confidence": float(choice.confidence), "reason": choice.reason,
            "head_bytes": len(head), "head_sha256": _digest(head),
            "bytes": max(plan.content, int(old["bytes"]) if old else 0),
            "size": plan.size, "mtime_ns": plan.mtime_ns, "lines": result.lines,
            "parsed": result.parsed, "irrelevant": result.irrelevant,
            "malformed": result.malformed, "ingested_at": pd.Timestamp.now(tz="UTC"),
            "run": self.run, "prefix_sha256": None if len(head) >= plan.content else
            (plan.prefix or prefix_digests(plan.path, plan.content, plan.content)[0]), "held": held,
        }
        if old is not None and result.lines < int(old["lines"]):  # shrank: keep what was read
            record.update({k: old[k] for k in ("lines", "parsed", "irrelevant", "malformed")})
        if old is not None:
            old.update(record)
        else:  # a new content (a rewritten file's old id disappears: its rows drop out of the store)
            record["id"], self._next_id = self._next_id, self._next_id + 1
            if rewritten:
                self.records[plan.record] = record
            else:
                self.records.append(record)
        self._index(len(self.records) - 1 if plan.record is None else plan.record, plan.path)
        content = int((record if old is None else old)["id"])
        tagged = {name: frame.assign(**{_CONTENT: content}) for name, frame in kept.tables.items()}
        quarantine = None if kept.quarantine is None else kept.quarantine.assign(**{_CONTENT: content})
        self._pending.append(replace(kept, tables=tagged, quarantine=quarantine))
        self._dirty = True
        return kept

    def _live(self, table: str) -> pd.DataFrame:
        """The committed parts of ``table`` concatenated in run order, content ids kept, without
        the rows of a content no longer in the ledger (a rewritten file's old content)."""
        frames = []
        for part in (self.directory / table / f"{run}.parquet" for run in self.runs):
            if not part.exists():
                continue
            try:
                frames.append(schema.from_arrow(pq.read_table(part)))
            except Exception as exc:  # noqa: BLE001 - a damaged part: the same fix as a missing one
                raise StoreError(f"{self.directory}: part {table}/{part.name} is unreadable"
                                 f" ({type(exc).__name__}); {rebuild_hint(self.directory)}") from None
        frame = concat(frames, table)
        if _CONTENT in frame.columns:
            live = {int(r["id"]) for r in self.records}
            frame = frame.loc[frame[_CONTENT].isin(live).to_numpy(dtype=bool)].reset_index(drop=True)
        return frame

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every committed table (:meth:`_live`), origins pointing at current paths."""
        return {t: schema.conform(self._relocate(self._live(t), "path" if t == "quarantine" else "origin"), t)
                for t in STORE_TABLES}

    def _relocate(self, frame: pd.DataFrame, column: str) -> pd.DataFrame:
        """Point ``column`` (origin ``path:line`` or a bare path) at each content's current path."""
        if _CONTENT not in frame.columns:
            return frame
        if column in frame.columns:
            paths = {int(r["id"]): r["path"] for r in self.records}
            current = frame[_CONTENT].map(paths)
            try:
                frame[column] = _repath(current.astype("string"), frame[column].astype("string"), column)
            except UnicodeEncodeError:  # a non-UTF-8 file name: the same on Python strings
                frame[column] = _repath(current.astype(schema.PY_STRING), frame[column].astype(schema.PY_STRING),
                                        column)
        return frame.drop(columns=[_CONTENT])

    def commit(self) -> None:
        """Write this run's parts, then the ledger (the commit point); no-op if nothing changed."""
        if not self._dirty:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        runs = list(self.runs)
        parts = {run: dict(facts) for run, facts in self.parts.items()}
        frames = {t: f for t, f in file_tables(self._pending).items() if len(f)} if self._pending else {}
        for table, frame in frames.items():
            parts.setdefault(self.run, {})[table] = self._write_part(table, self.run, frame)
        if frames:
            runs.append(self.run)
        if len(runs) > MAX_RUNS:
            runs, parts = self._compact(runs)
        arrow = schema.to_arrow(self.ledger())
        metadata = {**(arrow.schema.metadata or {}), _RUNS_KEY: json.dumps(runs).encode(),
                    _PARTS_KEY: json.dumps({r: parts[r] for r in runs if r in parts}).encode()}
        with atomic(self.directory / LEDGER) as tmp:
            pq.write_table(arrow.replace_schema_metadata(metadata), tmp)
        self.runs, self.parts = runs, {r: parts[r] for r in runs if r in parts}
        self._pending, self._dirty = [], False
        self._sweep()

    def _write_part(self, table: str, run: str, frame: pd.DataFrame) -> dict[str, Any]:
        folder = self.directory / table
        folder.mkdir(exist_ok=True)
        target = folder / f"{run}.parquet"
        with atomic(target) as tmp:
            schema.write_parquet(frame, str(tmp), table)
        return part_record(target, len(frame))

    def _compact(self, runs: list[str]) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """Merge the parts of ``runs`` into one new run; returns the new run list and its parts.

        The old parts stay valid until the ledger naming the merged run is renamed in.
        Rows of contents no longer in the ledger are dropped here for good.
        """
        self.runs = runs
        merged = self._new_run()
        facts: dict[str, Any] = {}
        for table in STORE_TABLES:
            frame = self._live(table)
            if len(frame):
                facts[table] = self._write_part(table, merged, frame)
        return [merged], {merged: facts}

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
        frame = pd.DataFrame(self.records, columns=list(_LEDGER_COLUMNS))
        frame = frame.astype({k: v for k, v in _LEDGER_COLUMNS.items() if v != "string"})
        text = {k: schema.as_string(frame[k]) for k, v in _LEDGER_COLUMNS.items() if v == "string"}
        return frame.assign(**text)  # the one string rule


def _repath(current: pd.Series, value: pd.Series, column: str) -> pd.Series:
    """``value`` with its path part replaced by ``current`` where a current path is known."""
    if column == "origin":
        current = current + ":" + value.str.rsplit(":", n=1).str[-1]
    return current.where(current.notna(), value)


__all__ = ["Store", "Plan", "LEDGER", "STORE_TABLES", "MAX_RUNS"]
