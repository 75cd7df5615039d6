"""The columnar route of the ``sacct -p``/``-P`` text reader: big files read in blocks, in columns.

The per-line reader (:func:`reliab.io.formats.slurm.read_sacct` through
:func:`reliab.io._lines.scan_lines`) makes a Python dict per job and per end-state signal and
converts them every 10,000 rows: ~600 bytes a job at its peak, and time spent in Python for
every field.  Here the file is read in blocks of :data:`BLOCK_BYTES` (the same decoded
stream, ``\\r\\n`` and lone ``\\r`` read as ``\\n``); each block's lines are split and checked
with polars expressions, and the rows that pass are built as Arrow columns directly.

A line is read in columns only when its value is certain to be the one the per-line parser
gives: printable ASCII, the header's number of fields (one more if empty: ``--parsable``),
a non-empty JobID, a state of the form of sacct(1) JOB STATE CODES, times of the default
``SLURM_TIME_FORMAT`` (``YYYY-MM-DDTHH:MM:SS``, or ``Unknown``/``None``/``N/A``/empty) in
years 1678-2261, whose hour has one UTC offset in the zone (no DST change within it),
counts of up to 18 digits, and an ``AllocTRES`` with either one untyped ``gres/gpu=N`` or
only typed ones.  Every other line goes to the per-line parser, in line order, with the
same per-file state; so do the lines that name both JobID and State (only such a line can be
a header, which changes the fields of the lines after it) and runs of fewer than
:data:`_SHORT` lines between them.  When
the file turns out to be one the columnar route cannot follow at all (fixed-width columns,
a line over the length limit, a corrupt compressed stream, rows the per-line conversion
would refuse) it gives up (:class:`Fallback`) and the caller reads the file line by line.

References
----------
``sacct(1)``, Slurm 25.11 ``doc/man/man1/sacct.1``: ``-p``, ``-P``, ``--delimiter``, JOB STATE CODES.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from reliab.errors import ParseError
from reliab.io import _localtime
from reliab.io._files import open_binary
from reliab.io._lines import LineContext, LineParser, unexpected
from reliab.io._prefilter import MAX_LINE_BYTES, Terminators
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult
from reliab.io._rowtable import FileTables, arrow_rows, empty_rows
from reliab.io.formats.slurm._signals import SignalChunks, with_signal_chunks
from reliab.io.formats.slurm._states import _SEVERITY, NOT_ENDED

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

__all__ = ["BLOCK_BYTES", "COLUMNAR_MIN_BYTES", "ColumnarStats", "Fallback", "read_columnar", "wanted"]

#: files smaller than this are read line by line (the columnar route has a fixed cost)
COLUMNAR_MIN_BYTES = 1 << 20
#: bytes of the decoded stream read per block (~6,000 jobs of 15 fields): the reader's peak
#: grows by ~420 bytes a job from 50,000 to 250,000 jobs with blocks of 1 MiB (~440 with 4 MiB,
#: ~670 with 8 MiB), at the same speed; at 1M jobs all peak ~430 MiB above the interpreter
BLOCK_BYTES = 1 << 20

_SOURCE = "sacct"
#: runs of fewer lines between two headers are read line by line (a polars pass costs ~1 ms)
_SHORT = 16
_PRINTABLE = r"^[ -~]*$"
_HOUR = timedelta(hours=1) - timedelta(seconds=1)


class Fallback(Exception):  # noqa: N818 - a signal to the caller, not an error
    """The columnar route cannot read this file exactly: the caller reads it line by line."""


@dataclass
class ColumnarStats:
    """What the columnar route did with one file's lines."""

    #: lines read in columns (jobs, job steps and blank lines)
    columnar: int = 0
    #: lines handed to the per-line parser (headers, malformed lines, non-ASCII text, DST edges...)
    per_line: int = 0


def read_columnar(path: str, parse_line: LineParser, options: dict[str, Any],
                  state: dict[str, Any]) -> tuple[FileResult, ColumnarStats]:
    """Read a ``sacct -p``/``-P`` file in columns, as ``scan_lines(path, "sacct", parse_line,
    table="jobs", ...)`` followed by the signals would.

    Parameters
    ----------
    path : str
        The file (possibly compressed).
    parse_line : callable
        The per-line parser, for the lines the columnar route does not read itself.
    options, state : dict
        The reader's options (``tz``, ``fields``, ``gpus_per_node``, ``delimiter``) and initial
        per-file state (``fields``, ``signals``, notes), as the per-line route gets them.

    Returns
    -------
    (FileResult, ColumnarStats)
        The result, equal to the per-line route's, and how many lines each route read.

    Raises
    ------
    Fallback
        When the file cannot be read exactly in columns; nothing of it is kept.
    """
    reader = _Reader(str(path), parse_line, options, state)
    with _localtime.noting() as log:
        try:
            raw = open_binary(path)
        except Exception as exc:  # noqa: BLE001 - the per-line route reports it
            raise Fallback(str(exc)) from exc
        try:
            for block in _blocks(Terminators(raw)):
                reader.block(block)
        except Fallback:
            raise
        except Exception as exc:  # noqa: BLE001 - a stream error or anything unforeseen: read line by line
            raise Fallback(f"{type(exc).__name__}: {exc}") from exc
        finally:
            raw.close()
    return reader.result(log.note()), reader.stats


def _blocks(fh: Terminators) -> Any:
    """The decoded text of ``fh`` in blocks of whole lines (without the last ``\\n``)."""
    carry = b""
    while True:
        data = fh.read(BLOCK_BYTES)
        if not data:
            break
        data = carry + data if carry else data
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
        else:
            carry = data[cut + 1:]
            yield data[:cut].decode("utf-8", errors="replace")
        if len(carry) >= MAX_LINE_BYTES - 4:
            raise Fallback("a line over the length limit")
    if carry:
        yield carry.decode("utf-8", errors="replace")


class _Reader:
    """One file's columnar read: the per-line context, the quarantine and the tables' parts."""

    def __init__(self, path: str, parse_line: LineParser, options: dict[str, Any], state: dict[str, Any]) -> None:
        self.ctx = LineContext(path=path, source=_SOURCE, options=dict(options), state=dict(state))
        self.ctx.state["signals"] = []  # a block's per-line signals, taken after each line
        self.parse_line = parse_line
        self.quarantine = Quarantine(path, _SOURCE)
        self.stats = ColumnarStats()
        self.lineno = 0
        self.parsed = 0
        self.jobs: list[pa.Table] = []
        self.signals: list[pa.Table] = []
        self.offsets: dict[datetime, int | None] = {}
        gpn = self.ctx.options.get("gpus_per_node")
        if gpn is not None and (type(gpn) is not int or gpn < 0):
            raise Fallback("gpus_per_node is not a non-negative int")

    # -- one block -------------------------------------------------------------------------
    def block(self, text: str) -> None:
        """Read the lines of one block, in columns where the state allows, in order."""
        import polars as pl

        lines = pl.Series("line", [text]).str.split("\n").explode()
        if len(text) >= MAX_LINE_BYTES - 4 and (lines.str.len_bytes().max() or 0) >= MAX_LINE_BYTES - 4:
            raise Fallback("a line over the length limit")
        first = self.lineno + 1
        self.lineno += len(lines)
        self._rows: list[tuple[int, dict[str, Any]]] = []
        self._sigs: list[tuple[int, dict[str, Any]]] = []
        self._col_jobs: list[pl.DataFrame] = []
        # a header can only be a line naming JobID and State: the lines between such
        # lines are read with the fields in force, each of those lines on its own
        barrier = lines.str.contains("(?i)jobid") & lines.str.contains("(?i)state")
        start = 0
        for at in [*barrier.arg_true().to_list(), len(lines)]:
            self._segment(lines, start, at, first)
            if at < len(lines):
                self._one(lines[at], first + at)
            start = at + 1
        self._flush()

    def _segment(self, lines: pl.Series, start: int, stop: int, first: int) -> None:
        """Lines ``start:stop`` of a block, none of them a header: line by line until the
        fields and the delimiter are known, then in columns (a short run line by line)."""
        i = start
        while i < stop and (not self._ready() or stop - i < _SHORT):
            self._one(lines[i], first + i)
            i += 1
        if i < stop:
            self._columns(lines.slice(i, stop - i), first + i)

    def _ready(self) -> bool:
        state = self.ctx.state
        if state.get("fixed_names") is not None or state.get("spans") is not None:
            raise Fallback("fixed-width sacct output")
        return (state.get("fields") is not None
                and (self.ctx.options.get("delimiter") or state.get("delimiter")) is not None)

    def _one(self, text: str, lineno: int) -> None:
        """One line through the per-line parser (what ``scan_lines`` does with it)."""
        ctx = self.ctx
        ctx.lineno = lineno
        self.stats.per_line += 1
        held = len(ctx.state["signals"])
        try:
            out = self.parse_line(text, ctx)
        except ParseError as exc:
            self.quarantine.add(lineno, exc.message, text[:2000])
            return
        except Exception as exc:  # noqa: BLE001 - one bad line never ends the run
            self.quarantine.add(lineno, unexpected(exc), text[:2000])
            return
        finally:
            new = ctx.state["signals"][held:]
            del ctx.state["signals"][held:]
            self._sigs.extend((lineno, s) for s in new)
        if out is None:
            return
        if not isinstance(out, dict):
            raise Fallback("the per-line parser gave several rows for a line")
        out.setdefault("origin", ctx.origin)
        self._rows.append((lineno, out))
        self.parsed += 1

    # -- columns -------------------------------------------------------------------------
    def _columns(self, lines: pl.Series, first: int) -> None:
        """Lines without a header among them: jobs and steps in columns, the rest one by one."""
        import polars as pl

        from reliab.io.formats.slurm._columns import job_columns

        fields: list[str] = self.ctx.state["fields"]
        delim: str = self.ctx.options.get("delimiter") or self.ctx.state["delimiter"]
        idx = {name: k for k, name in enumerate(fields)}  # (the last of a repeated name, as dict(zip))
        frame = pl.DataFrame({"line": lines, "n": pl.int_range(first, first + len(lines), eager=True)})
        frame = frame.with_columns(pl.col("line").str.split(delim).alias("c"))
        k = len(fields)
        cells = pl.col("c")
        plain = pl.col("line").str.contains(_PRINTABLE)
        blank = plain & (pl.col("line").str.strip_chars(" ") == "")
        counted = (cells.list.len() == k) | ((cells.list.len() == k + 1) & (cells.list.last() == ""))
        job_id = cells.list.get(idx["jobid"], null_on_oob=True).str.strip_chars(" ")
        frame = frame.with_columns(
            kind=pl.when(blank).then(pl.lit(0))  # irrelevant
            .when(plain & counted & (job_id != "") & job_id.str.contains(".", literal=True)).then(pl.lit(0))  # a step
            .when(plain & counted & (job_id != "")).then(pl.lit(1))  # a job
            .otherwise(pl.lit(2)))  # the per-line parser
        jobs = frame.filter(pl.col("kind") == 1)
        built, rest = job_columns(jobs, idx, self.ctx.options.get("gpus_per_node"), self._offset_of)
        special = pl.concat([frame.filter(pl.col("kind") == 2).select("n", "line"), rest.select("n", "line")])
        self.stats.columnar += len(frame) - len(special)
        if len(built):
            origin = pl.lit(f"{self.ctx.path}:") + pl.col("n").cast(pl.Utf8)
            built = built.with_columns(origin=origin)
            self._col_jobs.append(built)
            self.parsed += len(built)
        for lineno, text in special.sort("n").iter_rows():
            self._one(text, lineno)

    def _offset_of(self, hours: list[datetime]) -> dict[datetime, int | None]:
        """UTC offset (microseconds) of each wall-clock hour in the zone, ``None`` where it changes."""
        zone: tzinfo = self.ctx.options["tz"]
        for hour in hours:
            if hour in self.offsets:
                continue
            offs = {t.replace(tzinfo=zone, fold=f).utcoffset() for t in (hour, hour + _HOUR) for f in (0, 1)}
            one = offs.pop() if len(offs) == 1 else None
            self.offsets[hour] = None if one is None else one // timedelta(microseconds=1)
        return self.offsets

    # -- tables ----------------------------------------------------------------------------
    def _flush(self) -> None:
        """The block's jobs and signals as Arrow tables, in line order."""
        jobs = _part(self._col_jobs, self._rows, "jobs")
        signals = _part([_end_signals(f) for f in self._col_jobs], self._sigs, "signals")
        if jobs is not None:
            self.jobs.append(jobs)
        if signals is not None:
            self.signals.append(signals)
        self._col_jobs, self._rows, self._sigs = [], [], []

    def result(self, local_note: str | None) -> FileResult:
        """The file's result: jobs, quarantine, accounting, notes, then the signals."""
        import pyarrow as pa

        jobs = pa.concat_tables(self.jobs) if self.jobs else empty_rows("jobs")
        notes = list(self.ctx.state.get("notes", ()))
        if local_note:
            notes.append(local_note)
        result = FileResult(path=self.ctx.path, source=_SOURCE, lines=self.lineno, parsed=self.parsed,
                            irrelevant=self.lineno - self.parsed - self.quarantine.count,
                            malformed=self.quarantine.count, tables=FileTables({"jobs": jobs}),
                            quarantine=self.quarantine.frame(), notes=tuple(notes))
        chunks = SignalChunks()
        chunks.chunks = list(self.signals)
        return with_signal_chunks(result, chunks)


def _end_signals(jobs: pl.DataFrame) -> pl.DataFrame:
    """The ``slurm:<state>`` signal of every ended job (:func:`reliab.io.formats.slurm.end_signal`)."""
    import polars as pl

    ended = jobs.filter(pl.col("end").is_not_null() & ~pl.col("state").is_in(sorted(NOT_ENDED)))
    return ended.select(
        time=pl.col("end"), host=pl.col("failed_node"), gpu=pl.lit(None, pl.Utf8), job_id=pl.col("job_id"),
        source=pl.lit(_SOURCE), signal=pl.lit("slurm:") + pl.col("state").str.to_lowercase(),
        severity=pl.col("state").replace_strict(_SEVERITY, default="warning", return_dtype=pl.Utf8),
        message=pl.col("state_raw"), origin=pl.col("origin"), n=pl.col("n"))


def _part(frames: list[pl.DataFrame], rows: list[tuple[int, dict[str, Any]]], table: str) -> pa.Table | None:
    """One block's rows of ``table``: the columnar frames and the per-line rows, in line order."""
    import polars as pl
    import pyarrow as pa

    target = empty_rows(table).schema
    names = target.names
    frames = [f for f in frames if len(f)]
    parts = [pl.concat(frames).select(*names, "n").to_arrow()] if frames else []
    if parts:
        parts[0] = parts[0].cast(target.append(pa.field("n", pa.int64())))
    if rows:
        converted = arrow_rows([row for _, row in rows], table)
        if converted is None:  # the per-line route would refuse some of them: it must decide
            raise Fallback(f"per-line {table} rows the Arrow conversion refuses")
        parts.append(converted.append_column("n", pa.array([n for n, _ in rows], pa.int64())))
    if not parts:
        return None
    out = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    if rows and frames:
        out = out.sort_by("n")
    return out.drop_columns(["n"]).combine_chunks() if len(parts) > 1 else out.drop_columns(["n"])



def wanted(path: str) -> bool:
    """Whether ``path`` is read in columns: a file of at least :data:`COLUMNAR_MIN_BYTES` on
    disk, outside a byte-range task of the Dask engine (which reads its own lines)."""
    import os

    from reliab.io import _ranges

    if _ranges.active(path) is not None:
        return False
    try:
        return os.stat(path).st_size >= COLUMNAR_MIN_BYTES
    except OSError:
        return False  # the per-line route says why
