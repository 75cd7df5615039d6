"""The shared line driver: stream a file, call a parser per line, keep the accounting.

Every physical line ends up counted exactly once as *parsed* (it produced one or more
rows), *irrelevant* (recognised as noise, a header or a continuation) or *malformed*
(the parser raised :class:`~reliab.errors.ParseError`, or any other exception, or made a
row that a table cannot hold; the line goes to quarantine with ``file:line`` and the
reason).  Lines are never held in memory all at once, and a line longer than
:data:`MAX_LINE_BYTES` is never held whole either: it is quarantined.  Lines end at
``\n``, ``\r\n`` or a lone ``\r`` (:class:`reliab.io._prefilter.Terminators`); line
numbers are Python integers (no 32-bit limit).  The quarantine keeps the first lines of a
file in full and counts the rest (:mod:`reliab.io._quarantine`).

A ``finish`` hook may resolve rows once the whole file is read (years of syslog lines,
boot-relative dmesg times).  A row it cannot resolve carries the key ``_reject`` with the
reason; the driver then moves that row's line from *parsed* to *malformed* and quarantines
it, so the accounting identity still holds.

A ``bulk`` hook may parse the common shapes of candidate lines column-wise (polars) on
the fast route; its rows count as *parsed* and are merged with the per-line rows in line
order, so the result is the same as if every line had gone through ``parse_line``.  A bulk
hook may also carry state across groups and hold rows back until the end of the file (see
:data:`BulkParser`): those join the per-line rows before ``finish``.
"""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, Origin, ParseError
from reliab.io import _localtime, _ranges
from reliab.io._fastscan import (
    by_path_ok,
    fast_candidates,
    open_stream,
    path_candidates,
    use_fast_path,
)
from reliab.io._files import compression_of, open_binary
from reliab.io._lineframe import bulk_arrow as _arrow_rows
from reliab.io._lineframe import lineno_of as _lineno_of
from reliab.io._lineframe import lines_frame as _frame
from reliab.io._prefilter import MAX_LINE_BYTES, Terminators, all_lines, candidate_lines
from reliab.io._quarantine import Quarantine, quarantine_frame
from reliab.io._registry import FileResult
from reliab.io._rowchunks import RowChunks, split_rejected
from reliab.io._rowtable import FileTables

__all__ = ["LineContext", "Row", "LineParser", "BulkParser", "BulkSink", "EVERY_LINE", "streaming",
           "scan_lines", "quarantine_frame", "unexpected"]

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa


@dataclass
class LineContext:
    """Mutable per-file state handed to ``parse_line``: where we are and what we know."""

    path: str
    source: str
    lineno: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """``file:line`` of the current line."""
        return f"{self.path}:{self.lineno}"


Row = dict[str, Any]
#: parse_line(text, ctx) -> row | list of rows | None (irrelevant); raises ParseError if malformed
LineParser = Callable[[str, LineContext], Row | list[Row] | None]
#: bulk(hits, ctx=ctx) -> (rows, rest): ``hits`` has columns ``i`` (0-based line) and
#: ``line``; ``rows`` holds ``_lineno`` plus table columns (at most one row per line) for the
#: lines it parsed, ``rest`` the hits it leaves to ``parse_line``.  It sees each group of
#: candidate lines before ``parse_line`` sees the rest of them, only reads ``ctx`` and must
#: never disagree with ``parse_line``.  The first bulk row is kept as
#: ``ctx.state["bulk_first"]`` (a dict) for ``finish``.
#:
#: Lines a hook keeps back for the end of the file: see :data:`LATE_ROWS`.
BulkParser = Callable[["pl.DataFrame", LineContext], tuple["pl.DataFrame", "pl.DataFrame"]]
#: ``literals=EVERY_LINE``: every line is a candidate (for a bulk hook that reads them all)
EVERY_LINE = (b"",)
#: Rows finished at the end of the file: a bulk hook may keep lines back (in neither of its
#: frames, in ``ctx.state`` across groups) when their rows need the whole file; ``finish`` then
#: completes them and sets ``ctx.state[LATE_ROWS] = (frame, rows)``: ``rows``, the kept lines'
#: rows it returns among its own (dicts with ``_lineno``; one carrying ``_reject`` and ``_text``
#: marks its line malformed), ``frame``, those it finished in bulk (a polars frame with
#: ``_lineno``, joining the bulk rows in line order) or ``None``.  Every kept line counts as
#: parsed (or malformed).
LATE_ROWS = "bulk_late_rows"


class BulkSink(Protocol):
    """Where :func:`scan_lines` sends the bulk rows of ``path`` in batches while it reads it.

    Set for one file with :func:`streaming` (the local engine with ``output=``, see
    :mod:`reliab.io._streamed`).  Once at least ``batch_rows`` bulk rows are waiting,
    :meth:`write` gets them (in line order, with ``_lineno``) and they are not kept; at the
    end of a file that sent any, the rest follow and :meth:`close` gets the result, whose
    table then holds only the per-line rows, with their lines (``linenos``, in the table's
    row order): the sink puts them at their lines among the bulk rows.
    """

    path: str
    batch_rows: int

    def write(self, rows: pa.Table, source: str, table: str) -> None: ...

    def close(self, result: FileResult, linenos: list[int]) -> None: ...


_SINK: ContextVar[BulkSink | None] = ContextVar("reliab_bulk_sink", default=None)


@contextmanager
def streaming(sink: BulkSink) -> Iterator[BulkSink]:
    """Within the block, :func:`scan_lines` of ``sink.path`` sends its bulk rows to ``sink``."""
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def _text(raw: bytes | str) -> str:
    """A line as text: ``str`` as is, ``bytes`` decoded with replacement characters."""
    return raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")


def _stream_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (EOFError, lzma.LZMAError, zlib.error, OSError)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - zstandard is a declared dependency
        pass
    return errors


def unexpected(exc: BaseException) -> str:
    """Quarantine reason for an exception a parser did not mean to raise."""
    try:
        detail = str(exc)
    except Exception:  # noqa: BLE001 - a message that cannot even be printed
        detail = ""
    detail = detail if len(detail) <= 300 else detail[:297] + "..."
    return f"unreadable line ({type(exc).__name__}{': ' + detail if detail else ''})"


def _finish_rows(finish: Callable[[list[Row], LineContext], list[Row]], rows: list[Row],
                 ctx: LineContext) -> list[Row]:
    """``finish(rows, ctx)``; if it raises, the rows that make it fail alone are rejected.

    The failing rows are found by bisection on copies (a few dozen tries for one bad row
    among 100,000), get ``_reject`` with the reason, and the others are finished together.
    Notes a failed try added are dropped.
    """
    notes = list(ctx.state.get("notes", ()))

    def fails(part: list[Row]) -> BaseException | None:
        try:
            finish([dict(row) for row in part], ctx)
        except Exception as exc:  # noqa: BLE001
            return exc
        finally:
            ctx.state["notes"] = list(notes)
            ctx.state.pop(LATE_ROWS, None)  # (a try's kept rows are not the run's)
        return None

    def failing(part: list[Row]) -> list[tuple[Row, BaseException]]:
        exc = fails(part)
        if exc is None:
            return []
        if len(part) == 1:
            return [(part[0], exc)]
        mid = len(part) // 2
        return failing(part[:mid]) + failing(part[mid:])

    try:
        return finish(rows, ctx)
    except Exception as first:  # noqa: BLE001 - isolate the row(s) that break the hook
        ctx.state["notes"] = list(notes)
        bad = failing(rows)
        for row, exc in bad:
            row["_reject"] = unexpected(exc)
        marked = {id(row) for row, _ in bad}
        good = [row for row in rows if id(row) not in marked]
        try:
            return finish(good, ctx) + [row for row, _ in bad]
        except Exception:  # noqa: BLE001 - together they still fail: reject them all
            ctx.state["notes"] = list(notes)
            ctx.state.pop(LATE_ROWS, None)
            for row in good:
                row["_reject"] = unexpected(first)
            return good + [row for row, _ in bad]


def _reject_coarse_times(rows: list[Row]) -> list[Row]:
    """Mark rows whose ``pd.Timestamp`` values lie beyond the nanosecond range.

    ``pd.Timestamp(10**16, unit="ms")`` is a valid millisecond Timestamp of year 318857;
    any pandas operation that puts it in a column (a pivot in a ``finish`` hook) wraps it
    into another year without an error, so such rows are refused before (and returned).
    """
    out = []
    for row in rows:
        for key, value in row.items():
            if isinstance(value, pd.Timestamp) and value.unit != "ns" and not key.startswith("_"):
                why = schema.bad_time(value)
                if why is not None:
                    row["_reject"] = f"{key}: {why}"
                    out.append(row)
                    break
    return out


def _safe_bulk(bulk: BulkParser, ctx: LineContext) -> Callable[[pl.DataFrame], tuple[pl.DataFrame, pl.DataFrame]]:
    """The bulk hook for ``ctx``; a batch it fails on goes to ``parse_line`` line by line."""
    def split(hits: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        import polars as pl

        try:
            return bulk(hits, ctx=ctx)  # type: ignore[call-arg]
        except (Exception, pl.exceptions.PanicException):  # noqa: BLE001 - the per-line parser isolates each line
            return hits.head(0), hits

    return split


def _in_line_order(tables: list[pa.Table]) -> None:
    """The bulk ``tables`` joined into one in line order (the rows of ``LATE_ROWS`` come last)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    both = pa.concat_tables(tables, promote_options="permissive")
    tables[:] = [both.take(pc.sort_indices(both["_lineno"]))]


#: microsecond datetimes that fit in nanoseconds (pandas' range, rounded inwards)
_BULK_RANGE = (datetime(1677, 9, 21, 0, 12, 44, tzinfo=UTC), datetime(2262, 4, 11, 23, 47, 16, tzinfo=UTC))


def _time_range_mask(frame: pl.DataFrame) -> pl.Series | None:
    """Rows of a bulk frame whose datetimes fit in nanoseconds (``None``: all do)."""
    import polars as pl

    lo, hi = _BULK_RANGE
    names = [n for n, dt in frame.schema.items() if isinstance(dt, pl.Datetime)]
    if not names:
        return None
    ok = pl.all_horizontal([pl.col(n).is_null() | pl.col(n).is_between(
        pl.lit(lo).dt.cast_time_unit("us"), pl.lit(hi).dt.cast_time_unit("us")) for n in names])
    mask = frame.select(ok.alias("ok")).to_series()
    return None if mask.all() else mask


def scan_lines(
    path: str,
    source: str,
    parse_line: LineParser,
    *,
    table: str = "signals",
    literals: Iterable[bytes] | None = None,
    options: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
    strict: bool = False,
    finish: Callable[[list[Row], LineContext], list[Row]] | None = None,
    bulk: BulkParser | None = None,
) -> FileResult:
    """Run ``parse_line`` over every line of ``path`` and account for each one.

    Parameters
    ----------
    path : str
        File to read (compressed files are opened transparently, see ``_io``).
    source : str
        Parser name written to the ``source`` column and to quarantine rows.
    parse_line : callable
        ``parse_line(text, ctx)`` returns a row, a list of rows, or ``None`` (irrelevant);
        it raises :class:`ParseError` for a line it recognises but cannot read.  Any other
        exception it raises is caught too: the line is quarantined as unreadable (naming
        the exception) and the scan goes on.
    table : str
        Canonical table the rows belong to.
    literals : iterable of bytes, optional
        Literal prefilter: a line containing none of them is counted irrelevant without
        being decoded or parsed (the biggest speed lever on large logs).  Files of at
        least ``_fastscan.FAST_MIN_BYTES`` are scanned in large blocks with one polars
        pass per block (:mod:`reliab.io._fastscan`), smaller ones in Python.
    options, state : dict, optional
        Reader options and initial per-file state, exposed on the :class:`LineContext`.
    strict : bool
        Raise the first :class:`ParseError` (with its origin) instead of quarantining.
    finish : callable, optional
        Post-processes the rows once the whole file is read (e.g. to resolve years);
        it sees the rows of ``parse_line`` only.  If it raises, the rows that make it fail
        on their own are quarantined and the others finished.
    bulk : callable, optional
        Column-wise parser of the candidate lines on the polars routes (compressed files
        and plain files of at least ``FAST_MIN_BYTES``), see :data:`BulkParser`; its rows must be
        exactly those ``parse_line`` would give and need no ``finish``.  A batch it fails
        on is handed to ``parse_line``.

    Returns
    -------
    FileResult
        Rows as ``tables[table]``, quarantine and the line accounting.  Rows whose values
        a table cannot hold (:func:`reliab.schema.conform_rows`) are quarantined with their
        line, which then counts as malformed.  At most the quarantine limit of malformed
        lines is kept in full (:mod:`reliab.io._quarantine`).
    """
    ctx = LineContext(path=str(path), source=source, options=dict(options or {}), state=dict(state or {}))
    lits = tuple(literals) if literals else None
    rows: list[Row] = RowChunks(ctx.path, table) if bulk is None and finish is None else []
    quarantine = Quarantine(ctx.path, source)
    parsed = 0
    counter = [0]
    bulk_tables: list[pa.Table] = []
    sink = _SINK.get()
    sink = sink if sink is not None and bulk is not None and sink.path == ctx.path else None
    sent = [0, 0]  # bulk rows sent to the sink, bulk rows waiting in bulk_tables

    def reject(reason: str, text: str | None, lineno: int | None = None) -> None:
        lineno = ctx.lineno if lineno is None else lineno
        if strict:
            raise ParseError(reason, Origin(ctx.path, lineno, text or ""))
        quarantine.add(lineno, reason, text)

    def take(frame: pl.DataFrame) -> None:
        mask = _time_range_mask(frame)
        if mask is not None:  # bulk rows beyond the nanosecond range: their lines are malformed
            for lineno in frame.filter(~mask)["_lineno"].to_list():
                reject("time outside the range a table can hold"
                       f" ({schema.TIME_RANGE[0]:%Y-%m-%d} to {schema.TIME_RANGE[1]:%Y-%m-%d} UTC)",
                       None, int(lineno))
            frame = frame.filter(mask)
            if not frame.height:
                return
        if not bulk_tables and not sent[0]:
            ctx.state["bulk_first"] = frame.row(0, named=True)
        bulk_tables.append(_arrow_rows(frame, ctx.path))
        sent[1] += frame.height
        if sink is not None and sent[1] >= sink.batch_rows:
            send()

    def send() -> None:
        import pyarrow as pa

        assert sink is not None
        batch = pa.concat_tables(bulk_tables, promote_options="permissive")
        bulk_tables.clear()
        sent[0] += batch.num_rows
        sent[1] = 0
        sink.write(batch, source, table)

    ranged = _ranges.active(ctx.path)  # a byte-range task of the Dask engine
    sink = None if ranged is not None else sink
    if ranged is not None and ranged.feed is None:
        return ranged.collect(lits, source)
    with _localtime.noting() as local_times:
        try:
            fast = ranged is None and bool(lits) and use_fast_path(str(path))
            kind = compression_of(str(path)) if fast else None
            by_path = fast and kind in (None, "gzip") and by_path_ok(str(path), kind)
            opened = (nullcontext() if by_path or ranged is not None else open_stream(str(path)) if fast
                      else Terminators(open_binary(path)))
            with opened as fh:
                if ranged is not None:
                    split = None if bulk is None else _safe_bulk(bulk, ctx)
                    numbered = ranged.candidates(counter, split, take)
                elif by_path:
                    split = None if bulk is None else _safe_bulk(bulk, ctx)
                    numbered = path_candidates(str(path), lits, counter, split, take)  # type: ignore[arg-type]
                elif fast:  # a compressed stream or a file with long lines: bulk rows too
                    split = None if bulk is None else _safe_bulk(bulk, ctx)
                    numbered = fast_candidates(fh, lits, counter, bulk=split, sink=take)  # type: ignore[arg-type]
                else:
                    numbered = (candidate_lines(fh, lits, counter) if lits and lits != EVERY_LINE
                                else all_lines(fh, counter))
                for lineno, raw, size in numbered:
                    ctx.lineno = lineno
                    if size > MAX_LINE_BYTES:
                        reject(f"line of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit",
                               _text(raw[:200]))
                        continue
                    text = _text(raw).rstrip("\r\n")
                    try:
                        out = parse_line(text, ctx)
                        if out is None:
                            continue
                        batch = out if isinstance(out, list) else [out]
                        for row in batch:
                            row.setdefault("origin", ctx.origin)
                            row.setdefault("_lineno", lineno)
                    except ParseError as exc:
                        reject(exc.message, text[:2000])
                        continue
                    except Exception as exc:  # noqa: BLE001 - one bad line never ends the run
                        if strict:
                            raise ParseError(unexpected(exc), Origin(ctx.path, lineno, text[:2000])) from exc
                        reject(unexpected(exc), text[:2000])
                        continue
                    rows.extend(batch)
                    parsed += 1
            lines = counter[0]
        except _stream_errors() as exc:
            # truncated or corrupt compressed stream: keep what was read, quarantine the rest
            lines = counter[0]
            reason = f"stream ended abnormally after line {lines}: {exc}"
            if strict:
                raise InputFileError(f"{path}: {reason}") from exc
            quarantine.add(lines + 1, reason, None)
            lines += 1
        if finish is not None:
            early = _reject_coarse_times(rows)  # before a finish hook can wrap them (pandas does)
            rows = _finish_rows(finish, [r for r in rows if "_reject" not in r] if early else rows, ctx) + early
            late, late_rows = ctx.state.pop(LATE_ROWS, (None, ()))  # lines the bulk hook kept back (see LATE_ROWS)
            parsed += len({_lineno_of(row) for row in late_rows})
            _reject_coarse_times([row for row in late_rows if "_reject" not in row])  # (as the other rows were)
            if late is not None and late.height and sink is None:
                take(late)
                _in_line_order(bulk_tables)
            elif late is not None and late.height:  # (a sink gets bulk rows in line order: these join the rows)
                rows += [{**row, "origin": f"{ctx.path}:{row['_lineno']}"} for row in late.to_dicts()]
                parsed += late.height
    chunked, early, refused = rows.finish() if isinstance(rows, RowChunks) else (None, {}, {})
    kept, rejected = split_rejected(rows)
    rejected = {**early, **rejected}
    for lineno, (reason, text) in sorted(rejected.items()):
        reject(reason, text, lineno)
    parsed -= len(rejected)
    parsed += sum(t.num_rows for t in bulk_tables) + sent[0]  # (_frame empties the list)
    linenos: list[int] = []
    if sent[0]:  # streamed: the last bulk rows to the sink, the per-line rows stay (with their lines)
        if bulk_tables:
            send()
        linenos = [_lineno_of(row) or 0 for row in kept]
    frame, refused = (chunked, refused) if chunked is not None else _frame(kept, bulk_tables, ctx.path, table)
    for lineno, reason in sorted(refused.items()):
        reject(reason, None, lineno)
    parsed -= len(refused)
    notes = list(ctx.state.get("notes", ()))
    if local_times.note():
        notes.append(local_times.note())
    result = FileResult(
        path=ctx.path, source=source, lines=lines, parsed=parsed, irrelevant=lines - parsed - quarantine.count,
        malformed=quarantine.count, tables=FileTables({table: frame}), quarantine=quarantine.frame(),
        notes=tuple(notes),
    )
    if sent[0] and sink is not None:
        sink.close(result, [ln for ln in linenos if ln not in refused])
    return result
