"""Host names from untrusted text, made canonical: one machine, one name.

A log line is written by whoever can write to the log, and a host name of ``node01``
followed by a right-to-left override (U+202E), preceded by a zero-width space (U+200B),
split by a zero-width joiner (U+200D) or spelt in fullwidth letters (``ｎｏｄｅ01``) shows
as the same name in a table yet counts as another host: one node split into six look-alike
rows (and a lemon split in six).  Every host name stored is therefore:

1. NFKC-normalised (Unicode Standard Annex #15): compatibility forms such as fullwidth
   letters and digits become their ordinary letters;
2. stripped of every format character (general category ``Cf``: bidi controls U+202A-E
   and U+2066-9, zero-width U+200B-D, word joiner U+2060, byte-order mark U+FEFF, soft
   hyphen U+00AD…; Unicode Standard Annex #9 and Unicode Technical Standard #39 §3), which
   no host name needs and which only hide or reorder text.

Letters of other scripts that merely look alike (Cyrillic ``о`` for Latin ``o``) are kept
as they are: they may be real names, and telling them apart needs the confusables data of
UTS #39, which this module does not apply.  Names that are plain ASCII, as nearly all are,
are not touched (checked column-wise in Arrow first).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

import pandas as pd

#: columns holding host names (or Slurm host lists)
HOST_COLUMNS = frozenset({"host", "nodelist"})


def canonical_host(name: str) -> str:
    """``name`` NFKC-normalised, without format (``Cf``) characters (see the module doc)."""
    if name.isascii():
        return name
    text = unicodedata.normalize("NFKC", name)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _all_ascii(s: pd.Series) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = pa.array(s, type=pa.string(), from_pandas=True)
        return bool(pc.all(pc.string_is_ascii(arr)).as_py() in (True, None))
    except Exception:  # noqa: BLE001 - text Arrow cannot hold (lone surrogates): look value by value
        return all(v.isascii() for v in s.dropna().unique() if isinstance(v, str))


def canonical_hosts(s: pd.Series) -> pd.Series:
    """``s`` with :func:`canonical_host` applied to every name (the same object if all are ASCII)."""
    if s.empty or _all_ascii(s):
        return s
    uniques = s.dropna().unique()
    mapping = {v: canonical_host(v) for v in uniques if isinstance(v, str) and not v.isascii()}
    if not mapping:
        return s
    return s.map(lambda v: mapping.get(v, v) if isinstance(v, str) else v).astype(s.dtype)




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
    from reliab.io._rowtable import FileTables, PendingRows

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


__all__ = ["HOST_COLUMNS", "canonical_host", "canonical_hosts", "canonical_tables"]
