"""A file's tables with canonical host names (:mod:`reliab._hostnames`), read from a reader's
:class:`~reliab.io._rowtable.FileTables`: pandas frames, Arrow tables and pending rows alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reliab._hostnames import HOST_COLUMNS, canonical_host, canonical_hosts
from reliab.io._rowtable import FileTables, PendingRows

__all__ = ["canonical_tables"]


def _arrow_hosts(table: Any, column: str) -> Any:
    """An Arrow ``table`` with :func:`canonical_host` applied to ``column`` (itself if all ASCII)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(column)
    if pc.all(pc.string_is_ascii(col)).as_py() in (True, None):
        return table
    fixed = pa.array([v if v is None else canonical_host(v) for v in col.to_pylist()], type=col.type)
    return table.set_column(table.schema.get_field_index(column), column, fixed)


def canonical_tables(tables: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A file's tables with canonical host names, or ``None`` when none needed a change.

    ``tables`` is a reader's :class:`~reliab.io._rowtable.FileTables` (Arrow tables and
    pending rows are looked at without converting them to pandas) or a plain mapping.
    """
    changed: dict[str, Any] = {}
    for name in tables:
        got = tables.pending(name) if isinstance(tables, FileTables) else None
        if got is None:
            frame = tables[name]
            for col in HOST_COLUMNS & set(frame.columns):
                new = canonical_hosts(frame[col])
                if new is not frame[col]:
                    frame = frame.assign(**{col: new})
                    changed[name] = frame
        elif isinstance(got, PendingRows):
            for row in got.rows:
                for col in HOST_COLUMNS & row.keys():
                    v = row[col]
                    if isinstance(v, str) and not v.isascii():
                        row[col] = canonical_host(v)
        else:
            new_table = got
            for col in HOST_COLUMNS & set(got.column_names):
                new_table = _arrow_hosts(new_table, col)
            if new_table is not got:
                changed[name] = new_table
    if not changed:
        return None
    out = {name: (tables.pending(name) if isinstance(tables, FileTables) and tables.pending(name) is not None
                  else tables[name]) for name in tables}
    out.update(changed)
    return FileTables(out) if isinstance(tables, FileTables) else out
