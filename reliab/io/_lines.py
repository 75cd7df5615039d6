"""The shared line driver: stream a file, call a parser per line, keep the accounting.

Every physical line ends up counted exactly once as *parsed* (it produced one or more
rows), *irrelevant* (recognised as noise, a header or a continuation) or *malformed*
(the parser raised :class:`~reliab.errors.ParseError`; the line goes to quarantine with
``file:line`` and the reason).  Lines are never held in memory all at once, and a line
longer than :data:`MAX_LINE_BYTES` is never held whole either: it is quarantined.

A ``finish`` hook may resolve rows once the whole file is read (years of syslog lines,
boot-relative dmesg times).  A row it cannot resolve carries the key ``_reject`` with the
reason; the driver then moves that row's line from *parsed* to *malformed* and quarantines
it, so the accounting identity still holds.

A ``bulk`` hook may parse the common shapes of candidate lines column-wise (polars) on
the fast route; its rows count as *parsed* and are merged with the per-line rows in line
order, so the result is the same as if every line had gone through ``parse_line``.
"""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING, Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, Origin, ParseError
from reliab.io import _ranges
from reliab.io._fastscan import fast_candidates, open_stream, path_candidates, use_fast_path
from reliab.io._files import compression_of, open_binary
from reliab.io._prefilter import MAX_LINE_BYTES, all_lines, candidate_lines
from reliab.io._registry import FileResult

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
BulkParser = Callable[["pl.DataFrame", LineContext], tuple["pl.DataFrame", "pl.DataFrame"]]


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
        it raises :class:`ParseError` for a line it recognises but cannot read.
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
        it sees the rows of ``parse_line`` only.
    bulk : callable, optional
        Column-wise parser of the candidate lines on the polars route (plain and gzip
        files of at least ``FAST_MIN_BYTES``), see :data:`BulkParser`; its rows must be
        exactly those ``parse_line`` would give and need no ``finish``.

    Returns
    -------
    FileResult
        Rows as ``tables[table]``, quarantine and the line accounting.
    """
    ctx = LineContext(path=str(path), source=source, options=dict(options or {}), state=dict(state or {}))
    lits = tuple(literals) if literals else None
    rows: list[Row] = []
    quarantine: list[tuple] = []
    parsed = malformed = 0
    counter = [0]
    bulk_tables: list[pa.Table] = []

    def take(frame: pl.DataFrame) -> None:
        if not bulk_tables:
            ctx.state["bulk_first"] = frame.row(0, named=True)
        bulk_tables.append(_arrow_rows(frame, ctx.path))

    def reject(reason: str, text: str | None) -> None:
        nonlocal malformed
        if strict:
            raise ParseError(reason, Origin(ctx.path, ctx.lineno, text or ""))
        quarantine.append((ctx.path, ctx.lineno, source, reason, text))
        malformed += 1

    ranged = _ranges.active(ctx.path)  # a byte-range task of the Dask engine
    if ranged is not None and ranged.feed is None:
        return ranged.collect(lits, source)
    try:
        fast = ranged is None and bool(lits) and use_fast_path(str(path))
        by_path = fast and compression_of(str(path)) in (None, "gzip")
        opened = (nullcontext() if by_path or ranged is not None else open_stream(str(path)) if fast
                  else open_binary(path))
        with opened as fh:
            if ranged is not None:
                split = None if bulk is None else partial(bulk, ctx=ctx)
                numbered = ranged.candidates(counter, split, take)
            elif by_path:
                split = None if bulk is None else partial(bulk, ctx=ctx)
                numbered = path_candidates(str(path), lits, counter, split, take)  # type: ignore[arg-type]
            elif fast:
                numbered = fast_candidates(fh, lits, counter)  # type: ignore[arg-type]
            else:
                numbered = candidate_lines(fh, lits, counter) if lits else all_lines(fh, counter)
            for lineno, raw, size in numbered:
                ctx.lineno = lineno
                if size > MAX_LINE_BYTES:
                    reject(f"line of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit",
                           _text(raw[:200]))
                    continue
                text = _text(raw).rstrip("\r\n")
                try:
                    out = parse_line(text, ctx)
                except ParseError as exc:
                    reject(exc.message, text[:2000])
                    continue
                if out is None:
                    continue
                batch = out if isinstance(out, list) else [out]
                for row in batch:
                    row.setdefault("origin", ctx.origin)
                    row.setdefault("_lineno", lineno)
                rows.extend(batch)
                parsed += 1
        lines = counter[0]
    except _stream_errors() as exc:
        # truncated or corrupt compressed stream: keep what was read, quarantine the rest
        lines = counter[0]
        reason = f"stream ended abnormally after line {lines}: {exc}"
        if strict:
            raise InputFileError(f"{path}: {reason}") from exc
        ctx.lineno = lines + 1
        quarantine.append((ctx.path, lines + 1, source, reason, None))
        malformed += 1
        lines += 1
    if finish is not None:
        rows = finish(rows, ctx)
        rejected: dict[int, tuple[str, str | None]] = {}
        kept: list[Row] = []
        for row in rows:
            if row.get("_reject"):
                rejected.setdefault(row["_lineno"], (row["_reject"], row.get("_text")))
            else:
                kept.append(row)
        for lineno, (reason, text) in sorted(rejected.items()):
            ctx.lineno = lineno
            parsed -= 1
            reject(reason, text)
        rows = kept
        quarantine.sort(key=lambda q: q[1])
    for row in rows:
        for key in [k for k in row if k.startswith("_") and k != "_lineno"]:
            del row[key]
    parsed += sum(t.num_rows for t in bulk_tables)
    irrelevant = lines - parsed - malformed
    frame = _frame(rows, bulk_tables, ctx.path, table)
    return FileResult(
        path=ctx.path, source=source, lines=lines, parsed=parsed, irrelevant=irrelevant,
        malformed=malformed, tables={table: frame}, quarantine=quarantine_frame(quarantine),
        notes=tuple(ctx.state.get("notes", ())),
    )


def _arrow_rows(frame: pl.DataFrame, path: str) -> pa.Table:
    """Rows of a polars frame as Arrow, with ``origin`` filled in and times in nanoseconds.

    ``origin`` defaults to ``path:_lineno``; ``_lineno`` is kept for the ordering.  Arrow
    columns hold one buffer each (no views), which is the layout pandas keeps, so the table
    crosses to pandas without another copy of its strings.
    """
    import polars as pl

    lineno = pl.col("_lineno")
    origin = pl.concat_str(pl.lit(f"{path}:"), lineno.cast(pl.String))
    if "origin" in frame.columns:
        origin = pl.when(pl.col("origin").is_null()).then(origin).otherwise(pl.col("origin"))
    return frame.with_columns(
        origin=origin,
        # pandas' own unit: conform then keeps the column as it is
        **{name: pl.col(name).dt.cast_time_unit("ns") for name, dtype in frame.schema.items()
           if isinstance(dtype, pl.Datetime)},
    ).to_arrow()


def _frame(rows: list[Row], bulk_tables: list[pa.Table], path: str, table: str) -> pd.DataFrame:
    """The table of ``rows`` (each with ``_lineno``) and the bulk rows, in line order.

    The bulk rows arrive as Arrow tables (:func:`_arrow_rows`, in line order); ``rows`` are
    turned into one more and the lot is put in line order column by column.  The strings
    reach pandas as the Arrow buffers themselves (:data:`reliab.schema.STRING`), with no
    Python object per value.  ``rows`` and ``bulk_tables`` are emptied on the way, so that
    each intermediate is freed as soon as the next one exists.
    """
    if not bulk_tables:
        for row in rows:
            row.pop("_lineno", None)
        return schema.conform(pd.DataFrame(rows), table) if rows else schema.empty(table)
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = bulk_tables[:]
    bulk_tables.clear()
    ordered = not rows
    if rows:
        import polars as pl

        names = list(dict.fromkeys(chain.from_iterable(rows)))  # every key, first seen first
        columns = {name: [row.get(name) for row in rows] for name in names}
        rows.clear()
        tables.append(_arrow_rows(pl.DataFrame(columns, strict=False, infer_schema_length=None), path))
        del columns
    both = pa.concat_tables(tables, promote_options="permissive")
    tables.clear()
    data = dict(zip(both.column_names, both.columns, strict=True))
    del both
    lineno = data.pop("_lineno")
    if not ordered:  # a stable sort: the rows of one line keep their order
        order = pc.sort_indices(lineno)
        for name in data:  # one column at a time, each old one freed as its copy exists
            data[name] = data[name].take(order)
    del lineno
    arrow = pa.table(data)
    data.clear()
    out = arrow.to_pandas(types_mapper=_arrow_types().get)  # strings: the Arrow buffers
    del arrow
    return schema.conform(out, table)


def _arrow_types() -> dict[Any, Any]:
    """Arrow string types -> :data:`reliab.schema.STRING`, for ``pyarrow.Table.to_pandas``."""
    import pyarrow as pa

    return {pa.large_string(): schema.STRING, pa.string(): schema.STRING}


def quarantine_frame(rows: list[tuple]) -> pd.DataFrame:
    """Quarantine rows ``(path, lineno, source, reason, text)`` as a QUARANTINE table."""
    if not rows:
        return schema.empty("quarantine")
    df = pd.DataFrame(rows, columns=["path", "lineno", "source", "reason", "text"])
    return schema.conform(df, "quarantine")
