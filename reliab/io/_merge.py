"""Merging the files' tables: each table's parts concatenated in file order, conformed once
(:class:`TableParts` while the files are read, :func:`file_tables` for a list of results)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pandas as pd

from reliab import schema
from reliab.io._registry import FileResult
from reliab.io._rowtable import PendingRows, arrow_frame, join_pending, part_of, pending_part
from reliab.io._rowtable import conformed as _conformed

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["concat", "concat_frames", "TableParts", "file_tables", "accounting_of"]


def concat(frames: list[pd.DataFrame | pa.Table], table: str) -> pd.DataFrame:
    """The rows of ``frames`` (pandas, or Arrow left by :class:`FileTables`) as one conformed table.

    When some files left Arrow tables, all are joined as Arrow and converted once (a
    pandas frame per small file costs more than reading it); a frame Arrow cannot hold
    (text with lone surrogates) sends the lot through pandas.
    """
    frames = [f for f in frames if len(f)]
    if not frames:
        return schema.empty(table)
    if any(not isinstance(f, pd.DataFrame) for f in frames):
        joined = _concat_arrow(frames, table)
        if joined is not None:
            return joined
        frames = [f if isinstance(f, pd.DataFrame) else arrow_frame(f, table) for f in frames]
    out = frames[0] if len(frames) == 1 else concat_frames(frames)
    # a table conformed by its reader, or conformed tables joined (a new frame already): no copy
    return out if _conformed(out, table) else schema.conform(out.reset_index(drop=True), table)


def _concat_arrow(frames: list[pd.DataFrame | pa.Table], table: str) -> pd.DataFrame | None:
    """``frames`` joined as Arrow and converted once; ``None`` if a pandas frame will not go to Arrow."""
    import pyarrow as pa

    try:
        parts = [pa.Table.from_pandas(f, preserve_index=False) if isinstance(f, pd.DataFrame) else f
                 for f in frames]
        joined = pa.concat_tables(parts, promote_options="permissive")
    except (pa.ArrowException, UnicodeError, TypeError, ValueError):
        return None
    return arrow_frame(joined, table)


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """``pd.concat``; a text column that some file keeps in Python storage (a non-UTF-8
    file name, see :func:`reliab.schema.conform`) is concatenated in Python storage."""
    try:
        return pd.concat(frames, ignore_index=True)
    except UnicodeEncodeError:
        cols = {c for f in frames for c in f.columns if f[c].dtype == schema.PY_STRING}
        return pd.concat([f.astype({c: schema.PY_STRING for c in cols if c in f.columns}) for f in frames],
                         ignore_index=True)


class TableParts:
    """The files' tables gathered in file order while the files are read, kept small.

    :meth:`take` moves a result's tables here and returns the result without them (its
    accounting is all the driver keeps per file); runs of consecutive Arrow tables are
    joined every :attr:`JOIN` files, so that 50,000 small files cost kilobytes each, not
    a table apiece.  Rows a file left unconverted (:class:`~reliab.io._rowtable.PendingRows`,
    read inside :func:`~reliab.io._rowtable.batching`) wait for those of the next files and
    are converted together, every :attr:`JOIN` files or :attr:`ROWS` rows and before any
    other part.  :meth:`tables` is :func:`file_tables` of the results taken.
    """

    #: consecutive Arrow tables joined into one at a time
    JOIN = 512
    #: pending rows converted at a time at most
    ROWS = 16_384
    NAMES = ("signals", "jobs", "telemetry", "lifetimes", "failures")

    def __init__(self) -> None:
        self._parts: dict[str, list[pd.DataFrame | pa.Table]] = {name: [] for name in (*self.NAMES, "quarantine")}
        self._run: dict[str, int] = dict.fromkeys(self.NAMES, 0)
        self._pending: dict[str, list[PendingRows]] = {name: [] for name in self.NAMES}
        self._pending_rows: dict[str, int] = dict.fromkeys(self.NAMES, 0)

    def take(self, result: FileResult) -> FileResult:
        """Keep ``result``'s tables; the result without them."""
        for name in self.NAMES:
            if name in result.tables:
                self._add(name, pending_part(result.tables, name))
        if result.quarantine is not None and len(result.quarantine):
            self._parts["quarantine"].append(result.quarantine)
        return dataclasses.replace(result, tables={}, quarantine=None)

    def _add(self, name: str, part: pd.DataFrame | pa.Table | PendingRows) -> None:
        if not len(part):
            return
        if isinstance(part, PendingRows):
            self._pending[name].append(part)
            self._pending_rows[name] += len(part)
            if len(self._pending[name]) >= self.JOIN or self._pending_rows[name] >= self.ROWS:
                self._convert(name)
            return
        self._convert(name)  # the rows of the files before this one come first
        self._append(name, part)

    def _convert(self, name: str) -> None:
        """The pending rows of ``name`` as one Arrow part (one conversion)."""
        if self._pending[name]:
            pending, self._pending[name], self._pending_rows[name] = self._pending[name], [], 0
            self._append(name, join_pending(pending))

    def _append(self, name: str, part: pd.DataFrame | pa.Table) -> None:
        parts = self._parts[name]
        parts.append(part)
        self._run[name] = self._run[name] + 1 if not isinstance(part, pd.DataFrame) else 0
        if self._run[name] >= self.JOIN:  # the trailing run of Arrow tables, in order
            import pyarrow as pa

            run = self._run[name]
            self._run[name] = 0  # (the joined table starts no run: each row is copied once)
            try:
                joined = pa.concat_tables(parts[-run:], promote_options="permissive").combine_chunks()
            except (pa.ArrowException, TypeError, ValueError):
                return
            del parts[-run:]
            parts.append(joined)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Signals, jobs, telemetry and quarantine, each concatenated in file order.

        The parts are let go as they are joined (a second call finds none): the finishing
        step then holds each table once, not beside the files' pieces of it.
        """
        for name in self.NAMES:
            self._convert(name)
        parts, self._parts = self._parts, {name: [] for name in self._parts}
        return {name: concat(parts.pop(name), name) for name in list(parts)}


def file_tables(results: list[FileResult]) -> dict[str, pd.DataFrame]:
    """Per-file tables concatenated in file order: signals, jobs, telemetry, lifetimes, failures, quarantine."""
    tables = {name: concat([part_of(r.tables, name) for r in results if name in r.tables], name)
              for name in TableParts.NAMES}
    tables["quarantine"] = concat([r.quarantine for r in results if r.quarantine is not None],
                                   "quarantine")
    return tables


def accounting_of(results: list[FileResult]) -> pd.DataFrame:
    """One accounting row per file result (``lines = parsed + irrelevant + malformed``).

    ``reason`` says why a file was set aside (not read, or read no further), else NA.
    """
    if not results:
        return schema.empty("accounting")
    return schema.conform(pd.DataFrame(
        [(r.path, r.source, r.lines, r.parsed, r.irrelevant, r.malformed, r.reason) for r in results],
        columns=["path", "source", "lines", "parsed", "irrelevant", "malformed", "reason"],
    ), "accounting")
