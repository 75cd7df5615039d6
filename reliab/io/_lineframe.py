"""A file's rows as one table in line order: the per-line rows crossed to the schema, the bulk
rows spliced in (:func:`lines_frame`), for :func:`reliab.io._lines.scan_lines` and the row
chunks of a large file (:mod:`reliab.io._rowchunks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from reliab import schema
from reliab.io._rowtable import PendingRows, arrow_rows, batching_on, empty_rows, plain_rows

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

__all__ = ["lineno_of", "bulk_arrow", "lines_frame"]

Row = dict[str, Any]


def lineno_of(row: Row) -> int | None:
    """A row's line: ``_lineno``, else the number after the last ``:`` of its origin."""
    if row.get("_lineno") is not None:
        return int(row["_lineno"])
    origin = str(row.get("origin") or "")
    tail = origin.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def bulk_arrow(frame: pl.DataFrame, path: str) -> pa.Table:
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


#: at most this many per-line rows are spliced between the bulk rows rather than sorted with them
_SPLICE_ROWS = 4096


def _splice(tables: list[pa.Table], more: pa.Table) -> list[pa.Table]:
    """Pieces of the bulk ``tables`` (in line order, one after the other) with the rows of
    ``more`` put at their lines: zero-copy slices, so that no column of the bulk rows is
    copied (a sort would copy every one of them)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    bulk = pa.concat_tables(tables, promote_options="permissive")
    more = more.take(pc.sort_indices(more["_lineno"]))  # stable: the rows of one line keep their order
    at = np.searchsorted(bulk["_lineno"].to_numpy(), more["_lineno"].to_numpy(), side="right")
    pieces, start = [], 0
    for k, pos in enumerate(at.tolist()):
        if pos > start:
            pieces.append(bulk.slice(start, pos - start))
            start = pos
        pieces.append(more.slice(k, 1))
    if start < bulk.num_rows:
        pieces.append(bulk.slice(start))
    return pieces


def lines_frame(rows: list[Row], bulk_tables: list[pa.Table], path: str,
           table: str) -> tuple[pd.DataFrame | pa.Table | PendingRows, dict[int, str]]:
    """The table of ``rows`` (each with ``_lineno``) and the bulk rows, in line order.

    ``rows`` cross the schema boundary first: as Arrow columns in one pass when every value
    is plain and within range (:func:`reliab.io._rowtable.arrow_rows`), else row by row
    (:func:`reliab.schema.conform_rows`): a row with a value the table cannot hold is
    dropped with every other row of its line, and ``refused`` maps those lines to the
    reason.  The bulk rows arrive as Arrow tables (:func:`bulk_arrow`, in line order,
    already within range); the good ``rows`` are added as one more and the lot is put in
    line order column by column.  The result stays an Arrow table (conformed when first
    read, see :class:`reliab.io._rowtable.FileTables`) unless the row route made a pandas
    frame and there are no bulk rows, or stays rows the driver converts with other files'
    (:func:`reliab.io._rowtable.plain_rows`, inside :func:`reliab.io._rowtable.batching`).
    ``rows`` and ``bulk_tables`` are emptied on the way, so that each intermediate is freed
    as soon as the next one exists.
    """
    linenos = [lineno_of(row) or 0 for row in rows]
    for row in rows:
        row.pop("_lineno", None)
    fast = plain_rows(rows, table) if not bulk_tables and batching_on() else arrow_rows(rows, table)
    if fast is not None:
        rows.clear()
        if not bulk_tables:
            return fast, {}
        checked: pd.DataFrame | pa.Table = fast
        refused: dict[int, str] = {}
        keep = linenos
    else:
        no_rows = empty_rows(table)  # (an Arrow table of no rows is falsy: tested against None)
        checked, bad = schema.conform_rows(rows, table) if rows else (schema.empty(table) if no_rows is None else no_rows, {})
        rows.clear()
        refused = {linenos[i]: why for i, why in sorted(bad.items(), reverse=True)}
        keep = [ln for i, ln in enumerate(linenos) if i not in bad]
        if refused and any(ln in refused for ln in keep):  # other rows of a refused line go too
            mask = [ln not in refused for ln in keep]
            checked = checked.loc[mask].reset_index(drop=True)
            keep = [ln for ln in keep if ln not in refused]
        if not bulk_tables:
            return checked, refused
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = bulk_tables[:]
    bulk_tables.clear()
    ordered = not len(checked)
    if len(checked):
        more = checked if isinstance(checked, pa.Table) else pa.Table.from_pandas(checked, preserve_index=False)
        more = more.append_column("_lineno", pa.array(keep, pa.int64()))
        if more.num_rows <= _SPLICE_ROWS:  # a few rows spliced in: the bulk rows are not copied
            tables, ordered = _splice(tables, more), True
        else:
            tables.append(more)
    del checked
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
    return pa.table(data), refused
