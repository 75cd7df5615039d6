"""PyTorch NCCL flight-recorder dumps: one pickle per rank, read without running code.

The dump format (``torch/csrc/distributed/c10d/FlightRecorder.hpp``, versions 2.x) is a
dict with ``version``, ``pg_config``, ``pg_status``, ``entries`` and ``nccl_comm_state``;
each entry has ``record_id``, ``pg_id``, ``process_group``, ``collective_seq_id``,
``p2p_seq_id``, ``op_id``, ``profiling_name`` (e.g. ``nccl:all_reduce``),
``time_created_ns``, ``duration_ms``, ``timeout_ms``, ``state`` (``scheduled``, ``started``,
``completed``), sizes and dtypes, ``retired``, ``time_discovered_started_ns``,
``time_discovered_completed_ns`` and ``is_p2p`` (domain.md §5.3 [P]).

Dumps are pickles, and unpickling runs arbitrary code when a file asks it to.  This module
loads them with :class:`SafeUnpickler`, which refuses *every* global lookup: only the
pickle protocol's own containers, numbers, strings, bytes, booleans and None can appear,
which is all a flight-recorder dump contains.  A hostile dump raises ``ParseError``.
"""

from __future__ import annotations

import io
import lzma
import pickle
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_parser

MAX_DUMP_BYTES = 256 << 20
_RANK_IN_NAME = re.compile(r"(?:rank[_-]?)(\d+)(?:\D*$)")
_STATES = ("scheduled", "started", "completed")


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that resolves no globals, so loading cannot import or call anything."""

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - documented in class
        raise pickle.UnpicklingError(f"refused to load global {module}.{name}: a dump holds only plain data")


def load_dump(data: bytes) -> dict[str, Any]:
    """Unpickle one flight-recorder dump with :class:`SafeUnpickler`.

    Raises
    ------
    ParseError
        When the bytes are not a pickle, ask for a global, or are not a dump dict.
    """
    try:
        obj = SafeUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise ParseError(f"not a loadable flight-recorder pickle: {exc}") from None
    if not isinstance(obj, dict) or "entries" not in obj:
        raise ParseError("pickle is not a flight-recorder dump (no 'entries' key)")
    if not isinstance(obj["entries"], list):
        raise ParseError("'entries' is not a list")
    return obj


def rank_of(path: str | Path, dump: dict[str, Any] | None = None) -> int | None:
    """Rank from the dump (``rank`` key of newer versions) or the file name suffix."""
    if dump is not None and isinstance(dump.get("rank"), int):
        return int(dump["rank"])
    m = _RANK_IN_NAME.search(Path(path).name)
    return int(m.group(1)) if m else None


def _entry_row(e: dict[str, Any], rank: int | None, version: str) -> dict[str, Any]:
    state = e.get("state")
    if state not in _STATES:
        raise ParseError(f"entry {e.get('record_id')!r} has unknown state {state!r}")
    pg = e.get("process_group")
    pg_name = pg[0] if isinstance(pg, (list, tuple)) and pg else pg
    created = e.get("time_created_ns")
    if not isinstance(created, int):
        raise ParseError(f"entry {e.get('record_id')!r} has no integer time_created_ns")
    return {
        "rank": rank,
        "version": version,
        "record_id": e.get("record_id"),
        "pg_id": str(e.get("pg_id")),
        "pg_name": None if pg_name is None else str(pg_name),
        "collective_seq_id": e.get("collective_seq_id"),
        "p2p_seq_id": e.get("p2p_seq_id"),
        "op": str(e.get("profiling_name", "")),
        "is_p2p": bool(e.get("is_p2p", False)),
        "state": state,
        "retired": bool(e.get("retired", False)),
        "timeout_ms": e.get("timeout_ms"),
        "duration_ms": e.get("duration_ms"),
        "time_created": pd.Timestamp(created, unit="ns", tz="UTC"),
    }


def read_dump_entries(path: str | Path) -> tuple[pd.DataFrame, list[tuple], int]:
    """Entries of one dump as a frame, its quarantine rows, and the number of entries."""
    try:
        with open_binary(path) as fh:
            data = fh.read(MAX_DUMP_BYTES + 1)
    except (EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        raise InputFileError(f"{path}: compressed stream is broken ({exc})") from None
    if len(data) > MAX_DUMP_BYTES:
        raise InputFileError(f"{path}: larger than {MAX_DUMP_BYTES >> 20} MiB; not a flight-recorder dump")
    dump = load_dump(data)
    rank = rank_of(path, dump)
    version = str(dump.get("version", "?"))
    rows, bad = [], []
    for i, e in enumerate(dump["entries"], 1):
        try:
            if not isinstance(e, dict):
                raise ParseError(f"entry is a {type(e).__name__}, not a dict")
            rows.append(_entry_row(e, rank, version))
        except ParseError as exc:
            bad.append((str(path), i, "flight_recorder", exc.message, repr(e)[:500]))
    return pd.DataFrame(rows), bad, len(dump["entries"])


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    try:
        with open_binary(path) as fh:
            head = fh.read(2)
    except (InputFileError, OSError, EOFError, zlib.error, lzma.LZMAError):
        return 0.0
    if len(head) == 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        name = Path(path).name.lower()
        return 0.95 if ("nccl" in name or "trace" in name or "fr" in name) else 0.6
    return 0.0


def _signals_from_entries(entries: pd.DataFrame, path: str, job_id: str | None) -> pd.DataFrame:
    """One ``nccl:fr_pending`` signal for the oldest collective this rank had not completed."""
    if entries.empty:
        return schema.empty("signals")
    pending = entries[(entries["state"] != "completed") & ~entries["is_p2p"]]
    if pending.empty:
        return schema.empty("signals")
    first = pending.sort_values("time_created").iloc[0]
    row = {
        "time": first["time_created"], "host": None, "gpu": None, "job_id": job_id,
        "source": "flight_recorder", "signal": "nccl:fr_pending", "severity": "warning",
        "message": (f"rank {first['rank']} pg {first['pg_id']} seq {first['collective_seq_id']} "
                    f"{first['op']} state={first['state']}"),
        "origin": f"{path}:{int(first['record_id']) + 1 if pd.notna(first['record_id']) else 1}",
    }
    return schema.conform(pd.DataFrame([row]), "signals")


@register_parser("flight_recorder", sniff=_sniff, table="signals")
def read_flight_recorder(path: str, *, job_id: str | None = None, strict: bool = False) -> FileResult:
    """PyTorch NCCL flight-recorder dump (pickle, one per rank), loaded without running code.

    Accounting counts *entries* as lines: each ring-buffer entry is parsed or malformed.
    The ``signals`` table gets one ``nccl:fr_pending`` row for the oldest collective the
    rank had not completed; the full entry table is under ``tables["flight_recorder"]``.
    """
    try:
        entries, bad, n = read_dump_entries(path)
    except (ParseError, InputFileError) as exc:
        if strict:
            raise ParseError(exc.message) from None
        return FileResult(path=str(path), source="flight_recorder", lines=1, parsed=0, irrelevant=0,
                          malformed=1, tables={"signals": schema.empty("signals")},
                          quarantine=quarantine_frame([(str(path), 1, "flight_recorder", str(exc), None)]))
    if bad and strict:
        raise ParseError(f"{bad[0][3]} at {path}: entry {bad[0][1]}")
    return FileResult(path=str(path), source="flight_recorder", lines=n, parsed=n - len(bad), irrelevant=0,
                      malformed=len(bad), tables={"signals": _signals_from_entries(entries, str(path), job_id),
                                                   "flight_recorder": entries},
                      quarantine=quarantine_frame(bad))


@dataclass(frozen=True)
class FlightRecorderDiagnosis:
    """Cross-rank reading of a set of dumps: who is stuck on what.

    Attributes
    ----------
    ranks : DataFrame
        Per rank and process group: last enqueued (scheduled), started and completed
        collective sequence ids, and the op of the oldest pending collective.
    suspects : DataFrame
        Ranks that lag the others: ``missing`` (no dump), ``not_started`` (never started a
        collective other ranks started) or ``behind`` (completed fewer collectives).
    """

    ranks: pd.DataFrame
    suspects: pd.DataFrame
    expected_ranks: tuple[int, ...]

    def summary(self) -> pd.DataFrame:
        return self.suspects.copy()

    def __str__(self) -> str:
        if self.suspects.empty:
            return "no rank lags the others"
        parts = [f"rank {r.rank}: {r.reason} (pg {r.pg_id}, seq {r.seq}, {r.op})" for r in self.suspects.itertuples()]
        return "; ".join(parts)


def _per_rank(entries: pd.DataFrame) -> pd.DataFrame:
    coll = entries[~entries["is_p2p"]].copy()
    seq = coll["collective_seq_id"]
    coll["_sched"] = seq
    coll["_start"] = seq.where(coll["state"].isin(["started", "completed"]))
    coll["_done"] = seq.where(coll["state"] == "completed")
    g = coll.groupby(["pg_id", "rank"])
    out = g.agg(last_enqueued=("_sched", "max"), last_started=("_start", "max"), last_completed=("_done", "max"))
    return out.reset_index()


def diagnose_flight_recorder(paths: Sequence[str | Path], *, world_size: int | None = None) -> FlightRecorderDiagnosis:
    """Find the straggler or dead rank behind an NCCL timeout from per-rank dumps.

    For each process group the most advanced rank defines what the collective schedule
    reached; a rank whose last *started* collective is behind the others' is stuck before
    it (the others wait on it: the usual watchdog-timeout pattern), a rank with no dump is
    missing.  This follows the reading PyTorch's ``fr_trace`` analyser does (domain.md §5.3).
    """
    frames = []
    for p in paths:
        entries, _, _ = read_dump_entries(p)
        frames.append(entries)
    entries = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if entries.empty:
        raise InputFileError("no flight-recorder entries in the given dumps")
    present = sorted(int(r) for r in entries["rank"].dropna().unique())
    expected = tuple(range(world_size)) if world_size else tuple(range(max(present) + 1))
    ranks = _per_rank(entries)
    suspects = []
    for pg_id, grp in ranks.groupby("pg_id"):
        top_started = grp["last_started"].max()
        for r in grp.itertuples():
            if pd.notna(top_started) and (pd.isna(r.last_started) or r.last_started < top_started):
                seq = (0 if pd.isna(r.last_started) else int(r.last_started)) + 1
                op = entries[(entries["pg_id"] == pg_id) & (entries["collective_seq_id"] == seq)]["op"]
                suspects.append((int(r.rank), pg_id, "not_started", seq, op.iloc[0] if len(op) else "?"))
        for r in sorted(set(expected) - set(grp["rank"].astype(int))):
            suspects.append((r, pg_id, "missing", None, "?"))
    sus = pd.DataFrame(suspects, columns=["rank", "pg_id", "reason", "seq", "op"])
    return FlightRecorderDiagnosis(ranks=ranks, suspects=sus, expected_ranks=expected)
