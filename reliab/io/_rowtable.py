"""Rows of one file straight to Arrow, and per-file tables that stay Arrow until looked at.

Most files of a hand-over are small (an IPMI SEL of three records, a training log with
one watchdog line), and building a pandas frame per file, then casting and checking it
column by column (:func:`reliab.schema.conform_rows`), cost several milliseconds each:
more than reading the file.  :func:`arrow_rows` builds the file's table as Arrow columns
in one pass when every value already has its column's type (aware ``datetime``, ``str``,
``int``, ``float``, ``bool`` or ``None``: what the readers make) and tests the table's
boundary rules column-wise (every instant inside the nanosecond range, required values
present, value checks, finite numbers).  Whenever a value is of another type or a rule
fails it returns ``None`` and the caller takes the row-by-row route, which refuses the
offending rows with their reasons; so the fast route only ever handles tables that
route would pass whole, and makes the same columns and values.

:class:`FileTables` holds a file's tables as Arrow and turns one into a conformed pandas
frame the first time it is read (:func:`arrow_frame`); the ingest driver reads the Arrow
tables of all files instead (:meth:`FileTables.arrow`), concatenates them and converts
once per table.

Converting a few rows costs a fixed ~25 microseconds, more than the rows: inside
:func:`batching` (the local ingest loop), rows whose conversion cannot fail (:func:`_certain`:
UTC instants well inside the range, ASCII text, 64-bit integers, floats) are kept as
:class:`PendingRows` and the driver converts those of many files at once
(:func:`join_pending`).  Every file's route, and so its accounting, is decided on its own rows
as before; only the conversion is shared.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

import pandas as pd

from reliab import schema
from reliab._tables import nonempty, nonneg

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_rows", "arrow_frame", "conformed", "empty_rows", "FileTables", "part_of", "plain_rows",
           "PendingRows", "join_pending", "pending_part", "batching", "batching_on"]

#: tables whose rows :func:`arrow_rows` may build (telemetry has open-ended columns)
_FAST_TABLES = ("signals", "jobs", "quarantine")
#: Python types a value of each declared dtype may have on the fast route (``None`` apart)
_TYPES: dict[str, tuple[type, ...]] = {
    schema.UTC: (datetime, pd.Timestamp),
    "string": (str,),
    "Int64": (int,),
    "int64": (int,),
    "float64": (float, int),
    "bool": (bool,),
}


@cache
def _arrow_type(dtype: str) -> pa.DataType:
    import pyarrow as pa

    return {schema.UTC: pa.timestamp("ns", "UTC"), "string": pa.large_string(), "Int64": pa.int64(),
            "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}[dtype]


def _plain(values: list[Any], col: schema.Column) -> set[Any] | None:
    """The distinct non-null ``values`` if they are of the plain types of ``col`` and pass
    its value rules, else ``None``.

    The rules of :func:`reliab.schema.validate` a value can fail on its own: a required
    value present, the column's check (non-empty text, one of a set, non-negative) and,
    for floats, finiteness.  Tested on the Python values (a set of distinct values is
    built at C speed); the range of instants is left to the Arrow conversion.
    """
    distinct = set(values)
    has_null = None in distinct
    distinct.discard(None)
    if has_null and not col.nullable:
        return None
    allowed = _TYPES[col.dtype]
    if not all(isinstance(v, allowed) and (type(v) is not bool or col.dtype == "bool") for v in distinct):
        return None
    check = col.check
    if check is None or not distinct:
        pass
    elif getattr(check, "values", None) is not None:
        if not distinct <= set(check.values):  # type: ignore[attr-defined]
            return None
    elif check is nonempty:
        if "" in distinct:
            return None
    elif check is nonneg:
        if min(distinct) < 0:
            return None
    else:
        return None  # a check not known here: the row route runs it
    if col.dtype == "float64" and not all(math.isfinite(v) or (v != v and col.nullable) for v in distinct):
        return None  # (NaN is a missing value, as in pandas)
    return distinct


def arrow_rows(rows: list[dict[str, Any]], table: str) -> pa.Table | None:
    """``rows`` as a conformed Arrow table of ``table``, or ``None`` if the row route is needed.

    Parameters
    ----------
    rows : list of dict
        Rows as a reader made them (keys: column names of ``table``).
    table : str
        Name of the canonical table.

    Returns
    -------
    pyarrow.Table or None
        Every declared column in order (a nullable one absent from every row as nulls);
        ``None`` when a key is not a declared column, a value is not of its column's plain
        type or cannot be held (an instant outside 1677-2262, an integer beyond 64 bits,
        text that is not UTF-8), a required column is missing or a value fails a check:
        then :func:`reliab.schema.conform_rows` must decide row by row.
    """
    return None if _plain_columns(rows, table) is None else _convert(rows, table)


def plain_rows(rows: list[dict[str, Any]], table: str) -> pa.Table | PendingRows | None:
    """:func:`arrow_rows`, but rows whose conversion cannot fail stay rows (:class:`PendingRows`).

    Such rows are converted later with those of other files, in one call
    (:func:`join_pending`): the file's route and accounting are the same as with
    :func:`arrow_rows`, since that conversion could only have succeeded.
    """
    columns = _plain_columns(rows, table)
    if columns is None:
        return None
    if all(_certain(values, col.dtype) for col, values in columns):
        return PendingRows(list(rows), table)
    return _convert(rows, table)


def _plain_columns(rows: list[dict[str, Any]], table: str) -> list[tuple[schema.Column, set[Any]]] | None:
    """Per column present, its distinct non-null values, if every rule of :func:`arrow_rows`
    that can be tested on the Python values holds; else ``None``."""
    if table not in _FAST_TABLES or not rows:
        return None
    spec = schema.TABLES[table]
    names = {c.name for c in spec}
    present: set[str] = set()
    for row in rows:
        present.update(row)
    if not present <= names:
        return None
    out = []
    for col in spec:
        if col.name not in present:
            if not col.nullable:
                return None
            continue  # all null
        try:
            distinct = _plain([row.get(col.name) for row in rows], col)
        except TypeError:  # an unhashable value: the row route says which row
            return None
        if distinct is None:
            return None
        out.append((col, distinct))
    return out


def _convert(rows: list[dict[str, Any]], table: str) -> pa.Table | None:
    """Every column of ``rows`` in one conversion (a missing key is null); ``None`` if a value
    cannot be held."""
    import pyarrow as pa

    try:
        batch = pa.RecordBatch.from_struct_array(pa.array(rows, type=_struct(table)))
    except (pa.ArrowException, OverflowError, ValueError, TypeError, UnicodeError):
        return None  # out of range, too large, not UTF-8: the row route says which row
    return pa.Table.from_batches([batch])


#: instants whose conversion to nanoseconds cannot overflow (well inside 1677-09-21..2262-04-11)
_SAFE_TIMES = (datetime(1678, 1, 1, tzinfo=UTC), datetime(2262, 1, 1, tzinfo=UTC))
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _certain(values: set[Any], dtype: str) -> bool:
    """Whether the Arrow conversion of plain ``values`` (see :func:`_plain`) of a ``dtype``
    column cannot fail: UTC datetimes or Timestamps inside :data:`_SAFE_TIMES`, ASCII
    text, 64-bit integers, Python floats, booleans.  ``False`` decides nothing."""
    if dtype == schema.UTC:
        lo, hi = _SAFE_TIMES
        return all(type(v) in (datetime, pd.Timestamp) and v.tzinfo is UTC and lo <= v <= hi for v in values)
    if dtype == "string":
        return all(v.isascii() for v in values)
    if dtype in ("Int64", "int64"):
        return not values or (_INT64[0] <= min(values) and max(values) <= _INT64[1])
    if dtype == "float64":
        return all(type(v) is float for v in values)
    return dtype == "bool"


@dataclass(eq=False)
class PendingRows:
    """Plain rows of one file whose Arrow conversion cannot fail, not converted yet."""

    rows: list[dict[str, Any]]
    table: str

    def __len__(self) -> int:
        return len(self.rows)


def join_pending(parts: list[PendingRows]) -> pa.Table:
    """The rows of ``parts`` (of one table, in order) as one Arrow table: one conversion."""
    table = _convert([row for part in parts for row in part.rows], parts[0].table)
    if table is None:  # pragma: no cover - excluded by _certain
        raise AssertionError(f"rows of {parts[0].table} taken as certain failed to convert")
    return table


_BATCHING: ContextVar[bool] = ContextVar("reliab_batching_rows", default=False)


@contextmanager
def batching(on: bool = True) -> Iterator[None]:
    """Within the block, the line driver leaves plain rows unconverted (:func:`plain_rows`):
    for a caller that joins the files' tables with :func:`pending_part` and :func:`join_pending`.
    ``on=False`` converts them inside the block whatever the caller set."""
    token = _BATCHING.set(on)
    try:
        yield
    finally:
        _BATCHING.reset(token)


def batching_on() -> bool:
    """Whether the caller joins pending rows (see :func:`batching`)."""
    return _BATCHING.get()


@cache
def empty_rows(table: str) -> pa.Table | None:
    """The conformed empty Arrow table of ``table`` (``None`` for a table :func:`arrow_rows`
    does not build): one shared instance, since an Arrow table cannot be changed.  A file
    without rows costs nothing more, where a new empty pandas frame costs tens of
    microseconds; :class:`FileTables` makes it the frame of :func:`reliab.schema.empty` when
    it is looked at."""
    import pyarrow as pa

    if table not in _FAST_TABLES:
        return None
    return pa.Table.from_batches([], schema=pa.schema(list(_struct(table))))


@cache
def _struct(table: str) -> pa.DataType:
    """The row type of ``table``: one field per declared column, in order."""
    import pyarrow as pa

    return pa.struct([(c.name, _arrow_type(c.dtype)) for c in schema.TABLES[table]])


def _mapper(table: str) -> Any:
    """``types_mapper`` of ``pyarrow.Table.to_pandas`` giving the dtypes of :func:`schema.conform`."""
    import pyarrow as pa

    out: dict[Any, Any] = {pa.large_string(): schema.STRING, pa.string(): schema.STRING}
    dtypes = {c.dtype for c in schema.TABLES.get(table, ())}
    if "Int64" in dtypes and "int64" not in dtypes:
        out[pa.int64()] = pd.Int64Dtype()
    return out.get


def conformed(df: pd.DataFrame, table: str) -> bool:
    """Whether ``df`` already is what :func:`schema.conform` would make of it (RangeIndex)."""
    names = [c.name for c in schema.TABLES[table]]
    return (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1
            and list(df.columns[:len(names)]) == names
            and all(df[c.name].dtype == schema.dtype_of(c) for c in schema.TABLES[table]))


def arrow_frame(arrow: pa.Table, table: str) -> pd.DataFrame:
    """A conformed pandas frame of ``table`` from an Arrow table (strings stay Arrow-backed).

    ``to_pandas`` already makes a frame of its own (writeable numpy columns, string columns
    sharing the immutable Arrow buffers), so one that has the declared dtypes is returned
    as it is rather than copied once more by :func:`schema.conform`.
    """
    frame = arrow.to_pandas(types_mapper=_mapper(table))
    return frame if conformed(frame, table) else schema.conform(frame, table)


class FileTables(Mapping[str, pd.DataFrame]):
    """A file's tables by name: pandas frames, or Arrow tables converted when first read.

    Reads like the ``dict`` of frames it stands for (``tables["signals"]``, ``.items()``,
    ``{**tables}``); :meth:`arrow` hands out a table not yet converted, without converting it.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame | pa.Table | PendingRows]) -> None:
        self._frames: dict[str, pd.DataFrame] = {}
        self._arrow: dict[str, pa.Table | PendingRows] = {}
        for name, value in tables.items():
            if isinstance(value, pd.DataFrame):
                self._frames[name] = value
            else:
                self._arrow[name] = value

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            if name not in self._arrow:
                raise KeyError(name)
            self._frames[name] = arrow_frame(_arrow_of(self._arrow.pop(name)), name)
        return self._frames[name]

    def __contains__(self, name: object) -> bool:
        return name in self._frames or name in self._arrow

    def __iter__(self) -> Iterator[str]:
        return iter([*self._frames, *self._arrow])

    def __len__(self) -> int:
        return len(self._frames) + len(self._arrow)

    def arrow(self, name: str) -> pa.Table | None:
        """The Arrow table of ``name`` if it was not converted yet, else ``None``."""
        got = self._arrow.get(name)
        if isinstance(got, PendingRows):
            got = self._arrow[name] = _arrow_of(got)
        return got

    def pending(self, name: str) -> pa.Table | PendingRows | None:
        """:meth:`arrow`, but :class:`PendingRows` as they are."""
        return self._arrow.get(name)

    def __repr__(self) -> str:
        return f"FileTables({sorted(self)})"


def part_of(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | pa.Table:
    """``tables[name]``, as the Arrow table it still is when ``tables`` is :class:`FileTables`."""
    if isinstance(tables, FileTables):
        got = tables.arrow(name)
        if got is not None:
            return got
    return tables[name]


def pending_part(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | pa.Table | PendingRows:
    """:func:`part_of`, with rows left unconverted by :func:`plain_rows` as they are."""
    if isinstance(tables, FileTables):
        got = tables.pending(name)
        if got is not None:
            return got
    return tables[name]


def _arrow_of(part: pa.Table | PendingRows) -> pa.Table:
    return join_pending([part]) if isinstance(part, PendingRows) else part
