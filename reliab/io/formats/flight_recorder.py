"""PyTorch NCCL flight-recorder dumps: one pickle per rank, read without running code.

The dump format (``torch/csrc/distributed/c10d/FlightRecorder.hpp``, versions 2.x) is a
dict with ``version``, ``pg_config``, ``pg_status``, ``entries`` and ``nccl_comm_state``;
each entry has ``record_id``, ``pg_id``, ``process_group``, ``collective_seq_id``,
``p2p_seq_id``, ``op_id``, ``profiling_name`` (e.g. ``nccl:all_reduce``),
``time_created_ns``, ``duration_ms``, ``timeout_ms``, ``state`` (``scheduled``, ``started``,
``completed``), sizes and dtypes, ``retired``, ``time_discovered_started_ns``,
``time_discovered_completed_ns`` and ``is_p2p`` (PyTorch tutorial "Flight Recorder for
Debugging Stuck Jobs").

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
import reprlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, ParseError
from reliab.io._files import open_binary
from reliab.io._lines import unexpected
from reliab.io._quarantine import Quarantine, quarantine_frame
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._pickle_scan import scan_pickle

#: largest dump read: a pickle expands to at most ~8 bytes of references per byte (a list
#: of Nones), so this bounds the loaded objects to ~256 MiB (real dumps hold 2,000 entries
#: by default, ``TORCH_NCCL_TRACE_BUFFER_SIZE``, a few MiB)
MAX_DUMP_BYTES = 32 << 20
#: more entries than this and the dump is refused as a whole
MAX_ENTRIES = 1_000_000
_RANK_IN_NAME = re.compile(r"(?:rank[_-]?)(\d+)(?:\D*$)")
_STATES = ("scheduled", "started", "completed")
_INT63 = (1 << 63) - 1


class _ShortRepr(reprlib.Repr):
    """``repr`` in bounded time and size for hostile values: deep, cyclic or exponential
    structures, integers of thousands of digits, huge byte strings."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 3, 4, 4, 4
        self.maxset = self.maxfrozenset = self.maxdeque = self.maxarray = 4
        self.maxstring = self.maxother = 60

    def repr_int(self, x: int, level: int) -> str:  # noqa: D102
        return schema.safe_repr(x, self.maxother)

    def repr_dict(self, x: dict, level: int) -> str:  # noqa: D102 - no sorting of a huge dict
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        items = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in islice(x.items(), self.maxdict)]
        return "{" + ", ".join(items) + (", ..." if len(x) > self.maxdict else "") + "}"

    def repr_instance(self, x: object, level: int) -> str:  # noqa: D102
        if isinstance(x, bytes | bytearray):
            return repr(bytes(x[:40])) + ("..." if len(x) > 40 else "")
        return schema.safe_repr(x, self.maxother) if isinstance(x, float | complex | bool) else f"<{type(x).__name__}>"


short_repr = _ShortRepr().repr


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that resolves no globals, so loading cannot import or call anything."""

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - documented in class
        raise pickle.UnpicklingError(f"refused to load global {module}.{name}: a dump holds only plain data")


def load_dump(data: bytes) -> dict[str, Any]:
    """Unpickle one flight-recorder dump with :class:`SafeUnpickler`.

    Raises
    ------
    ParseError
        When the bytes are not a pickle, ask for a global, hash a container, share
        containers too often (:func:`~reliab.io.formats._pickle_scan.scan_pickle`), or
        are not a dump dict.
    """
    try:
        scan_pickle(data)
        obj = SafeUnpickler(io.BytesIO(data)).load()
    except ParseError as exc:
        raise ParseError(f"not a loadable flight-recorder pickle: {exc.message}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise ParseError(f"not a loadable flight-recorder pickle: {exc}") from None
    if not isinstance(obj, dict) or "entries" not in obj:
        raise ParseError("pickle is not a flight-recorder dump (no 'entries' key)")
    if not isinstance(obj["entries"], list):
        raise ParseError(f"'entries' is a {type(obj['entries']).__name__}, not a list")
    if len(obj["entries"]) > MAX_ENTRIES:
        raise ParseError(f"'entries' holds {len(obj['entries'])} items, more than {MAX_ENTRIES}:"
                         " not a flight-recorder ring buffer")
    return obj


def rank_of(path: str | Path, dump: dict[str, Any] | None = None) -> int | None:
    """Rank from the dump (``rank`` key of newer versions) or the file name suffix."""
    if dump is not None:
        rank = dump.get("rank")
        if isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank < 1 << 31:
            return rank
    m = _RANK_IN_NAME.search(Path(path).name)
    return int(m.group(1)) if m and len(m.group(1)) < 10 else None


def _int(e: dict[str, Any], key: str, *, required: bool = False, hi: int = _INT63) -> int | None:
    """Field ``key`` of an entry as a non-negative integer at most ``hi`` (``None`` if absent)."""
    value = e.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(f"{key} {short_repr(value)} is not an integer")
    if not 0 <= value <= hi:
        raise ParseError(f"{key} {short_repr(value)} is outside 0..{hi}")
    return value


def _float(e: dict[str, Any], key: str) -> float | None:
    value = e.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(f"{key} {short_repr(value)} is not a number")
    number = float(value) if not isinstance(value, int) or value.bit_length() < 64 else float("inf")
    if not (0 <= number < float("inf")):
        raise ParseError(f"{key} {short_repr(value)} is not a finite non-negative number")
    return number


def _text(value: Any, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ParseError(f"{key} {short_repr(value)} is not text")
    text = str(value) if isinstance(value, str) or value.bit_length() < 64 else None
    if text is None or len(text) > 1000:
        raise ParseError(f"{key} {short_repr(value)} is too long")
    return text


def _flag(e: dict[str, Any], key: str) -> bool:
    value = e.get(key, False)
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ParseError(f"{key} {short_repr(value)} is not a boolean")


def _entry_row(e: dict[str, Any], rank: int | None, version: str) -> dict[str, Any]:
    """One ring-buffer entry -> a row; every field read is checked for type and range.

    Raises
    ------
    ParseError
        Naming the first field of the wrong type or out of range.
    """
    state = e.get("state")
    if not isinstance(state, str) or state not in _STATES:
        raise ParseError(f"unknown state {short_repr(state)}")
    pg = e.get("process_group")
    pg_name = pg[0] if isinstance(pg, list | tuple) and pg else pg
    created = _int(e, "time_created_ns", required=True)
    return {
        "rank": rank,
        "version": version,
        "record_id": _int(e, "record_id"),
        "pg_id": _text(e.get("pg_id"), "pg_id") or "None",
        "pg_name": _text(pg_name, "process_group"),
        "collective_seq_id": _int(e, "collective_seq_id"),
        "p2p_seq_id": _int(e, "p2p_seq_id"),
        "op": _text(e.get("profiling_name", ""), "profiling_name") or "",
        "is_p2p": _flag(e, "is_p2p"),
        "state": state,
        "retired": _flag(e, "retired"),
        "timeout_ms": _float(e, "timeout_ms"),
        "duration_ms": _float(e, "duration_ms"),
        "time_created": pd.Timestamp(created, unit="ns", tz="UTC"),
    }


def read_dump_entries(path: str | Path) -> tuple[pd.DataFrame, list[tuple], int]:
    """Entries of one dump as a frame, its quarantine rows, and the number of entries.

    At most the quarantine limit of malformed entries is kept in full
    (:mod:`reliab.io._quarantine`); their text is a bounded ``repr``.
    """
    try:
        with open_binary(path) as fh:
            data = fh.read(MAX_DUMP_BYTES + 1)
    except (EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        raise InputFileError(f"{path}: compressed stream is broken ({exc})") from None
    if len(data) > MAX_DUMP_BYTES:
        raise InputFileError(f"{path}: larger than {MAX_DUMP_BYTES >> 20} MiB; not a flight-recorder dump")
    dump = load_dump(data)
    del data
    rank = rank_of(path, dump)
    version = _text(dump.get("version"), "version") if isinstance(dump.get("version"), str | int) else "?"
    rows = []
    bad = Quarantine(str(path), "flight_recorder")
    for i, e in enumerate(dump["entries"], 1):
        try:
            if not isinstance(e, dict):
                raise ParseError(f"entry is a {type(e).__name__}, not a dict")
            rows.append(_entry_row(e, rank, version or "?"))
        except ParseError as exc:
            bad.add(i, exc.message, short_repr(e))
        except Exception as exc:  # noqa: BLE001 - one entry never ends the read
            bad.add(i, unexpected(exc), short_repr(e))
    return pd.DataFrame(rows), bad.rows(), len(dump["entries"])


def _sniff(path: str, first_lines: Sequence[str]) -> float:
    head = getattr(first_lines, "data", b"")[:2]  # the driver's Head carries the first bytes
    if len(head) < 2:
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
    record = first["record_id"]
    row = {
        "time": first["time_created"], "host": None, "gpu": None, "job_id": job_id,
        "source": "flight_recorder", "signal": "nccl:fr_pending", "severity": "warning",
        "message": (f"rank {first['rank']} pg {first['pg_id']} seq {first['collective_seq_id']} "
                    f"{first['op']} state={first['state']}"),
        "origin": f"{path}:{int(record) + 1 if pd.notna(record) else 1}",
    }
    frame, _ = schema.conform_rows([row], "signals")
    return frame


@register_parser("flight_recorder", sniff=_sniff, table="signals", lines=False)
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
    malformed = n - len(entries)  # bad holds at most the quarantine limit of them, then a summary
    return FileResult(path=str(path), source="flight_recorder", lines=n, parsed=len(entries), irrelevant=0,
                      malformed=malformed, tables={"signals": _signals_from_entries(entries, str(path), job_id),
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
    missing.  This follows the reading PyTorch's ``fr_trace`` analyser does
    (``tools/flight_recorder/fr_trace.py``).
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
