"""The Output sink (``ingest(paths, output=folder)``): tables go to partitioned Parquet as they are read.

The rows a large kernel log's bulk parser makes are written in batches of :data:`BATCH_ROWS`
while the file is read (:class:`reliab.io._lines.BulkSink`); its per-line rows are put at
their lines among them when the file ends, through the positions the manifest keeps
(:mod:`reliab.io._partitioned`).  The attribution reads back only the signals it can use
(:meth:`OutputWriter.attribution_signals`).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from reliab import schema
from reliab._allocator import release_freed
from reliab.io import _partitioned
from reliab.io._lines import streaming
from reliab.io._merge import concat
from reliab.io._plan import Merged, ReadEntry, RunPlan, Session, plan_notes
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, OutputIngestResult, SourceChoice
from reliab.io._rowtable import part_of

if TYPE_CHECKING:
    import pyarrow as pa

    from reliab.io._discover import Entry

__all__ = ["BATCH_ROWS", "written", "OutputWriter"]

#: bulk rows of one file written as one batch while it is read (~5 MiB of rows: each batch
#: is held about three times over while it is converted and written).  On a 5 GB kernel log
#: (1.6M signal rows, polars' allocator as the ``reliab`` command sets it) 16,384 peaked at
#: 360-372 MiB and 32,768 at 378-389 MiB, at the same speed
BATCH_ROWS = 16_384
#: signals whose attribution does not depend on the time window (tickets by job id, checkpoints)
_ANY_TIME = ("ticket:", "train:")
#: the columns read of every signals part to choose the rows attribution can use
_MARK_COLUMNS = ("time", "signal", "source", "host")
#: widening of the attribution window when reading back (the exact window is applied later)
_MARGIN = pd.Timedelta("1s")


class _FileSink:
    """The :class:`~reliab.io._lines.BulkSink` of one file: its bulk rows written as numbered pieces."""

    def __init__(self, writer: OutputWriter, path: str) -> None:
        self.writer, self.path, self.batch_rows = writer, path, writer.batch_rows
        self.task = -1  # given at the first write, after the files gathered before are written
        #: per piece: its manifest records (positions in the piece) and the rows' line numbers
        self.pieces: list[tuple[list[dict[str, Any]], Packed]] = []
        #: the writer's row counts before the first piece (back to them if the pieces are deleted)
        self.counts: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
        self.table = "signals"
        self.result: FileResult | None = None
        self.linenos: list[int] = []

    def write(self, rows: pa.Table, source: str, table: str) -> None:
        self.table = table
        if self.task < 0:
            self.writer.flush()
            self.task = self.writer._next()
            self.counts = (Counter(self.writer.rows), Counter(self.writer.signal_sources))
        lineno = rows["_lineno"].to_numpy()
        frame = concat([rows.drop_columns(["_lineno"])], table)
        records = self.writer.write_frame(frame, table, source, self.task, piece=len(self.pieces))
        self.pieces.append((records, _pack(lineno)))

    def close(self, result: FileResult, linenos: list[int]) -> None:
        self.result, self.linenos = result, linenos


#: a piece's line numbers: the first, and each one's offset from it (4 bytes a row where they fit)
Packed = tuple[int, np.ndarray]


def _pack(lineno: np.ndarray) -> Packed:
    """``lineno`` (increasing) kept as offsets from its first value, ``uint32`` where they fit."""
    first = int(lineno[0]) if len(lineno) else 0
    offsets = lineno - first
    return first, (offsets.astype(np.uint32) if len(offsets) and offsets[-1] < 2**32 else offsets)


def _unpack(packed: Packed) -> np.ndarray:
    return packed[0] + packed[1].astype(np.int64)


def _positions(pieces: Sequence[Packed], lines: np.ndarray) -> tuple[Iterator[np.ndarray], np.ndarray]:
    """Positions in the file's table of each piece's bulk rows (made one piece at a time, as
    they are used: never an array of every bulk row of the file, 26M Xid lines held three
    such arrays, ~600 MiB, at the end of the file) and of the per-line rows (both in line order).

    A per-line row comes after the bulk rows of lines up to its own (a line has bulk rows
    or per-line rows, never both), as :func:`reliab.io._lineframe.lines_frame` splices them.
    """
    at_line = np.arange(len(lines), dtype=np.int64)
    for packed in pieces:  # pieces in line order, each in line order
        at_line += np.searchsorted(_unpack(packed), lines, "right")

    def at_bulk() -> Iterator[np.ndarray]:
        start = 0
        for packed in pieces:
            lineno = _unpack(packed)
            yield np.arange(start, start + len(lineno), dtype=np.int64) + np.searchsorted(lines, lineno, "left")
            start += len(lineno)

    return at_bulk(), at_line


class OutputWriter(Session):
    """The Output session of either runner: writes one run's per-file tables to ``out``, task
    numbers in input order, and commits the run after finishing.

    A task is a run of consecutive small files (written once they hold :attr:`batch_rows`
    rows), a file whose bulk rows were streamed (its pieces), or a run of consecutive files
    with job records (held to the end: another input may repeat a job record,
    :mod:`reliab.io._repeats`; their signals stay in memory).  Keeps what the run's result
    needs (quarantine, the job files) and the manifest records of the parts written.  With a
    Dask runner (``by_tasks``) the tasks write the tables and hand their parts to :meth:`written`.
    """

    def __init__(self, plan: RunPlan, out: Path, run: str, by_tasks: bool = False) -> None:
        self.plan, self.out, self.by_tasks = plan, out, by_tasks
        self.folder, self.run, self.batch_rows = str(out), run, BATCH_ROWS
        self.tasks = self.folder  # (a folder: the Dask runner's tasks write there)
        self.parts: list[dict[str, Any]] = []
        self.quarantine: list[pd.DataFrame] = []
        #: runs of consecutive files with job records (a task each), written at the end
        self.held: list[tuple[int, list[FileResult]]] = []
        self.rows: Counter[str] = Counter()
        self.signal_sources: Counter[str] = Counter()
        #: the signals of the held job files, per task, as written (:meth:`attribution_signals`)
        self.kept: dict[int, pd.DataFrame] = {}
        self.pending: list[FileResult] = []  # consecutive files not yet written, one task
        self._pending_rows = 0
        self._task = 0

    def write_frame(self, frame: pd.DataFrame, table: str, source: str, task: int,
                    piece: int | None = None) -> list[dict[str, Any]]:
        """Write a conformed table of one file; count its rows; the records (not yet kept)."""
        if not len(frame):
            return []
        sources = np.full(len(frame), _partitioned.partition_value(source), dtype=object)
        records = _partitioned.write_table(frame, table, sources, self.folder, self.run, task, piece)
        self._count(frame, table)
        return records

    def _count(self, frame: pd.DataFrame, table: str) -> None:
        if table in ("signals", "telemetry"):
            self.rows[table] += len(frame)
        if table == "signals":
            self.signal_sources.update({str(k): int(v) for k, v in frame["source"].value_counts().items()})

    def flush(self) -> None:
        """Write the files gathered so far as one task."""
        if self.pending:
            pending, self.pending, self._pending_rows = self.pending, [], 0
            self.parts += _partitioned.write_parts(pending, self.folder, self.run, self._next(),
                                                   written_table=self._count)

    def written(self, parts: list[dict[str, Any]]) -> None:
        self.parts += parts

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read_entry: ReadEntry) -> list[tuple[FileResult, SourceChoice]]:
        """Read one input (a file with its bulk rows streamed) with the pipeline's ``read_entry``;
        ``(result, choice)`` per row, tables written."""
        if entry.result is not None or entry.url:
            return [(self.take(r), c) for r, c in read_entry(plan, entry, strict)]
        sink = _FileSink(self, entry.path)
        with streaming(sink):
            read = read_entry(plan, entry, strict)
        (result, choice), = read
        if sink.pieces:
            if sink.result is result:
                return [(self._streamed(sink, result), choice)]
            self._forget(sink)  # the reader failed after streaming, or changed the streamed result
            if sink.result is not None:
                (result, choice), = read_entry(plan, entry, strict)
        return [(self.take(result), choice)]

    def _next(self) -> int:
        self._task += 1
        return self._task - 1

    def take(self, result: FileResult) -> FileResult:
        """Gather (or hold, if it has job records) ``result``'s tables; the result without them."""
        if result.quarantine is not None and len(result.quarantine):
            self.quarantine.append(result.quarantine)
        if "jobs" in result.tables and len(part_of(result.tables, "jobs")):
            if self.pending or not self.held or self.held[-1][0] != self._task - 1:
                self.flush()
                self.held.append((self._next(), []))
            self.held[-1][1].append(result)  # consecutive job files: one task
        else:
            self.pending.append(result)
            self._pending_rows += sum(len(part_of(result.tables, k)) for k in result.tables) + (
                0 if result.quarantine is None else len(result.quarantine))
            if self._pending_rows >= self.batch_rows:
                self.flush()
        return dataclasses.replace(result, tables={}, quarantine=None)

    def _streamed(self, sink: _FileSink, result: FileResult) -> FileResult:
        """Write the per-line rows of a streamed file and put every piece's rows at their positions."""
        lines = np.asarray(sink.linenos, dtype=np.int64)
        order = np.argsort(lines, kind="stable")
        at_bulk, at_line = _positions([lineno for _, lineno in sink.pieces], lines[order])
        for (records, _), where in zip(sink.pieces, at_bulk, strict=True):  # (one piece's positions at a time)
            self.parts += [_partitioned.remap(r, where) for r in records]
        rest = part_of(result.tables, sink.table)
        rest = rest.take(order) if not isinstance(rest, pd.DataFrame) else rest.iloc[order].reset_index(drop=True)
        records = self.write_frame(concat([rest], sink.table), sink.table, result.source, sink.task,
                                   piece=len(sink.pieces))
        self.parts += [_partitioned.remap(r, at_line) for r in records]
        return self.take(dataclasses.replace(result, tables={k: v for k, v in result.tables.items()
                                                             if k != sink.table}))

    def _forget(self, sink: _FileSink) -> None:
        """Delete the pieces a sink wrote (their rows are not counted any more)."""
        for records, _ in sink.pieces:
            for r in records:
                (Path(self.folder) / r["path"]).unlink(missing_ok=True)
        self.rows, self.signal_sources = sink.counts

    def jobs(self) -> tuple[pd.DataFrame, str | None]:
        """Write the held job files, job records repeated by another input dropped; the jobs table."""
        from reliab.io._repeats import drop_repeated_jobs

        self.flush()
        held, self.held = self.held, []
        files = [r for _, group in held for r in group]
        group_of = np.repeat(np.arange(len(held)), [len(group) for _, group in held])
        source_of = np.array([_partitioned.partition_value(r.source) for r in files] + [""], dtype=object)
        both: dict[str, pd.DataFrame] = {}
        for name in ("jobs", "signals"):
            frames = [concat([part_of(r.tables, name)], name) if name in r.tables else schema.empty(name)
                      for r in files]
            both[name] = concat(frames, name)
            # each row's file, carried through the merge of repeated jobs (set in place: a copy
            # of a 1M-job table with the column added took ~30 MiB, of its signals ~25)
            both[name]["_file"] = np.repeat(np.arange(len(files), dtype=np.int32), [len(f) for f in frames])
            del frames
        kept_jobs, kept_signals, note = drop_repeated_jobs(both["jobs"], both["signals"])
        del both
        for name, frame in (("jobs", kept_jobs), ("signals", kept_signals)):
            file = frame.pop("_file").to_numpy(dtype=np.int64)
            for g, (task, _) in enumerate(held):
                mine = group_of[file] == g
                # one group (the usual case) writes the table as it is (a masked copy of 1M jobs took ~200 MiB)
                rows = frame if mine.all() else frame.loc[mine].reset_index(drop=True)
                if len(rows):
                    self.parts += _partitioned.write_table(rows, name, source_of[file[mine]], self.folder,
                                                           self.run, task)
                    self._count(rows, name)
                    if name == "signals":
                        self.kept[task] = rows
        for task, group in held:
            self.parts += _partitioned.write_parts(group, self.folder, self.run, task, skip=("signals", "jobs"),
                                                   written_table=self._count)
        return kept_jobs, note

    def attribution_signals(self, jobs: pd.DataFrame, before: Any, after: Any) -> pd.DataFrame:
        """The signals :func:`reliab.job_outcomes` can use, read back, in the order of the full table.

        Rows within ``before``/``after`` (widened by a second) of some job end, rows it
        matches by job id whatever their time (``ticket:``, ``train:``), and one row per
        (source, host) pair (the coverage notes ask which sources and which hosts have
        signals).  Of each part only ``time``, ``signal``, ``source`` and ``host`` are read
        (``time`` tested only when its date partition meets a window), then the whole rows
        of those kept.  Nothing is read when no job has an end.  The rows of the job files'
        tasks are taken from their tables still in memory (:attr:`kept`): read back, the 1M
        signals of a sacct file were held twice, and Parquet's reading took ~130 MiB more.
        """
        import pyarrow.parquet as pq

        held = {task: table for task, table in ((t, _arrow(f)) for t, f in self.kept.items()) if table is not None}
        self.kept = {}
        ends = pd.to_datetime(jobs["end"], utc=True).dropna() if len(jobs) else pd.Series(dtype="datetime64[ns, UTC]")
        if not len(ends):
            return schema.empty("signals")
        lo = (ends - pd.Timedelta(before) - _MARGIN).sort_values()
        hi = (ends + pd.Timedelta(after) + _MARGIN).sort_values()
        lo_ns, hi_ns = (pd.DatetimeIndex(t).as_unit("ns").asi8 for t in (lo, hi))
        dates = days_met(lo_ns, hi_ns)
        seen: set[tuple[Any, Any]] = set()
        records = _partitioned.parts_in_order([r for r in self.parts if r["table"] == "signals"])
        chosen = []
        for record in records:
            windowed = _date_of(record["path"]) in dates | {"unknown"}
            if record["task"] in held:
                cols = held[record["task"]].select(list(_MARK_COLUMNS)).take(_partitioned.positions(record))
            else:
                cols = pq.read_table(Path(self.folder) / record["path"], columns=list(_MARK_COLUMNS))
            chosen.append(np.flatnonzero(_marked(cols, seen, lo_ns if windowed else None, hi_ns)))
        return _partitioned.read_rows(self.folder, records, chosen, held)

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        """Locally: write the held job files; the jobs, the quarantine and the signals attribution
        can use, read back.  The tasks' tables: every one read back whole."""
        if self.by_tasks:
            tables = {t: _partitioned.read_parts(self.out, [p for p in self.parts if p["table"] == t], t)
                      for t in _partitioned.PARTITIONED}
            return Merged(tables, accounting, plan_notes(self.plan), "output=")
        jobs, repeated = self.jobs()
        release_freed()  # what writing the held job files freed, before the attribution's rows are gathered
        signals = self.attribution_signals(jobs, attribution["before"], attribution["after"])
        tables = {"signals": signals, "jobs": jobs, "telemetry": schema.empty("telemetry"),
                  "quarantine": concat(self.quarantine, "quarantine")}
        return Merged(tables, accounting, plan_notes(self.plan) + ((repeated,) if repeated else ()), "output=")

    def commit(self, result: IngestResult) -> OutputIngestResult:
        """Commit the run; locally the result reads ``signals`` and ``telemetry`` from the folder
        (the tasks' result holds them, read back to finish)."""
        if self.by_tasks:  # the rows of the finished tables, as a local run counts those it writes
            for table in ("signals", "telemetry"):
                if len(getattr(result, table)):
                    self._count(getattr(result, table), table)
        counts = {"rows": dict(self.rows), "signal_sources": dict(self.signal_sources)}
        release_freed()  # what attribution and costs freed, before the derived tables are written
        _partitioned.commit(self.out, self.run, self.parts, result, counts=counts)
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
        lazy = {} if self.by_tasks else {"signals": None, "telemetry": None}
        return OutputIngestResult(**{**fields, **lazy}, output=self.out, counts=counts)


def _arrow(frame: pd.DataFrame) -> pa.Table | None:
    """A held task's signals as Arrow (its text columns shared, not copied), as its parts were
    written; ``None`` where a column holds text Arrow cannot (then its parts are read back)."""
    import pyarrow as pa

    table = schema.to_arrow(frame)
    return None if any(pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in table.schema) \
        else table


_DAY_NS = 86_400 * 10**9


def days_met(lo_ns: np.ndarray, hi_ns: np.ndarray) -> set[str]:
    """The UTC dates (``YYYY-MM-DD``) that some window ``[lo_ns[i], hi_ns[i]]`` (ns) meets.

    The windows' days are merged into runs first, so the work grows with the number of days
    met, not with windows times their length (one ``date_range`` per job end took 44 s for
    100,000 jobs).
    """
    if not lo_ns.size:
        return set()
    order = np.argsort(lo_ns, kind="stable")
    first, last = lo_ns[order] // _DAY_NS, np.maximum.accumulate(hi_ns[order] // _DAY_NS)
    new_run = np.r_[True, first[1:] > last[:-1] + 1]
    ends = np.r_[np.flatnonzero(new_run)[1:] - 1, first.size - 1]
    days = np.concatenate([np.arange(a, b + 1) for a, b in zip(first[new_run], last[ends], strict=True)])
    return {str(d) for d in days.astype("datetime64[D]")}


def _date_of(path: str) -> str:
    """The ``date=`` partition of a part's path."""
    return next((piece[len("date="):] for piece in Path(path).parts if piece.startswith("date=")), "unknown")


def _marked(cols: pa.Table, seen: set[tuple[Any, Any]], lo: np.ndarray | None, hi: np.ndarray) -> np.ndarray:
    """Rows of a signals part kept for attribution (see :meth:`OutputWriter.attribution_signals`).

    ``lo``/``hi`` are the windows' sorted starts and ends (``None``: the part's date is in
    no window); ``seen`` holds the (source, host) pairs already taken, and grows.
    """
    import pyarrow.compute as pc

    keep = np.zeros(cols.num_rows, dtype=bool)
    if lo is not None:
        t = cols["time"].cast("int64").to_numpy(zero_copy_only=False)
        # inside some window [lo_k, hi_k]: more windows started at or before t than ended before t
        keep |= np.searchsorted(lo, t, "right") > np.searchsorted(hi, t, "left")
    signal = cols["signal"]
    for prefix in _ANY_TIME:
        keep |= pc.fill_null(pc.starts_with(signal, prefix), False).to_numpy(zero_copy_only=False)
    pairs = pd.DataFrame({"source": cols["source"].to_pandas(), "host": cols["host"].to_pandas()})
    first = pairs.drop_duplicates()
    for i, source, host in zip(first.index, first["source"], first["host"], strict=True):
        pair = (source, None if pd.isna(host) else host)
        if pair not in seen:
            seen.add(pair)
            keep[i] = True
    return keep


@contextmanager
def written(plan: RunPlan, output: str | os.PathLike[str], *, by_tasks: bool = False) -> Iterator[OutputWriter]:
    """The Output session of :func:`reliab.ingest` with ``output`` (``by_tasks``: a Dask runner's
    tasks write the tables); a run that fails inside the ``with`` deletes its parts, commits nothing."""
    with _partitioned.new_run(output) as (out, run):
        yield OutputWriter(plan, out, run, by_tasks)
