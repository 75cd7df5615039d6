"""A file's per-line rows converted to table chunks while it is read, so that memory does not grow with it.

The line driver (:func:`reliab.io._lines.scan_lines`) gathers the rows a reader makes as
Python dicts and converts them when the file ends: about 1.5 KB a row for a ``jobs`` row of
sacct, against ~200 bytes once in columns.  :class:`RowChunks` is the list it gathers them
in when the reader has neither bulk rows nor a ``finish`` hook: every :data:`CHUNK_ROWS`
rows it converts those held exactly as the driver converts a whole file's (lines whose row
asked to be rejected set apart, the table's conversion, rows the table cannot hold refused
with their line) and keeps only the chunk.  :meth:`RowChunks.finish` converts the rest and
joins the chunks, in line order: the result is that of one conversion of every row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CHUNK_ROWS", "RowChunks", "join_chunks", "split_rejected"]

#: rows held as dicts before they are converted (~15 MB of sacct job rows)
CHUNK_ROWS = 10_000

Row = dict[str, Any]


def split_rejected(rows: list[Row]) -> tuple[list[Row], dict[int, tuple[str, str | None]]]:
    """``(kept, rejected)``: rows without those of lines a row asked to reject (``_reject``).

    ``rejected`` maps each such line to its reason and text (the first row's); the rows kept
    lose their private keys but ``_lineno``.
    """
    from reliab.io._lineframe import lineno_of

    rejected: dict[int, tuple[str, str | None]] = {}
    kept: list[Row] = []
    for row in rows:
        if row.get("_reject"):
            rejected.setdefault(lineno_of(row) or 0, (str(row["_reject"]), row.get("_text")))
        else:
            kept.append(row)
    if rejected:  # the other rows of a rejected line go with it
        kept = [row for row in kept if (lineno_of(row) or 0) not in rejected]
    for row in kept:
        for key in [k for k in row if k.startswith("_") and k != "_lineno"]:
            del row[key]
    return kept, rejected


def join_chunks(chunks: list[pd.DataFrame | pa.Table], table: str) -> pd.DataFrame | pa.Table:
    """Converted chunks of one table as one: Arrow tables joined without a copy, else a frame."""
    import pyarrow as pa

    from reliab.io._rowtable import arrow_frame

    if len(chunks) == 1:
        return chunks[0]
    if all(isinstance(c, pa.Table) for c in chunks):
        return pa.concat_tables(chunks, promote_options="permissive")
    frames = [arrow_frame(c, table) if isinstance(c, pa.Table) else c for c in chunks]
    return pd.concat(frames, ignore_index=True)


class RowChunks(list):  # type: ignore[type-arg]
    """The rows of one file (a list to the driver), converted every :data:`CHUNK_ROWS` rows.

    Conversion happens between the batches :meth:`extend` receives, so the rows of one line
    always fall in one chunk.
    """

    def __init__(self, path: str, table: str, chunk_rows: int | None = None) -> None:
        super().__init__()
        self.path, self.table = path, table
        self.chunk_rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
        self.chunks: list[pd.DataFrame | pa.Table] = []
        self.rejected: dict[int, tuple[str, str | None]] = {}
        self.refused: dict[int, str] = {}

    def extend(self, rows: Any) -> None:
        super().extend(rows)
        if len(self) >= self.chunk_rows:
            self._convert()

    def _convert(self) -> None:
        from reliab.io._lineframe import lines_frame
        from reliab.io._rowtable import batching

        kept, rejected = split_rejected(list(self))
        self.clear()
        self.rejected.update(rejected)
        with batching(False):  # a chunk is converted now, never left as rows
            frame, refused = lines_frame(kept, [], self.path, self.table)
        self.refused.update(refused)
        if len(frame):
            self.chunks.append(frame)

    def finish(self) -> tuple[pd.DataFrame | pa.Table | None, dict[int, tuple[str, str | None]], dict[int, str]]:
        """``(table, rejected, refused)``; ``table`` is ``None`` when no chunk was converted
        (the driver then converts the rows still held, as always)."""
        if not self.chunks:
            return None, {}, {}
        self._convert()
        from reliab import schema
        from reliab.io._rowtable import empty_rows

        if not self.chunks:
            no_rows = empty_rows(self.table)
            return (schema.empty(self.table) if no_rows is None else no_rows), self.rejected, self.refused
        return join_chunks(self.chunks, self.table), self.rejected, self.refused
