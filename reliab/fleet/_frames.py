"""Tables too large for memory, as Dask DataFrames: from files, folders, ingest output or frames.

:func:`as_dask` accepts what the fleet functions are given: a Dask DataFrame; a pandas one
(split into partitions); the output folder of ``reliab.ingest(..., engine="dask",
output=...)`` (its manifest names the committed parts of each table); a folder of Parquet
files (every ``*.parquet`` below it, in sorted order: e.g. ``telemetry/date=…/pod….parquet``);
one file or a list of files.  Each file is one partition, read on the workers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["as_dask", "parquet_files", "Source"]

#: what a fleet function takes as a table
Source = Any


def _dd() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError("reliab.fleet needs dask: pip install 'reliab[distributed]'") from exc
    return dd


def parquet_files(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], table: str | None = None
                  ) -> list[str]:
    """The Parquet files of ``source``: an ingest output folder's parts of ``table``, a folder's
    ``*.parquet`` files (sorted), or the files given.

    Raises
    ------
    FileNotFoundError
        A path that does not exist, or a folder without Parquet files.
    """
    from reliab.io import MANIFEST, part_files

    paths = [source] if isinstance(source, str | os.PathLike) else list(source)
    files: list[str] = []
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder")
        if path.is_file():
            files.append(str(path))
        elif (path / MANIFEST).is_file():
            if table is None:
                raise ValueError(f"{path} is an ingest output folder: say which table (table=)")
            files += part_files(path, table)
        else:
            found = sorted(str(p) for p in path.rglob("*.parquet") if not p.name.startswith("."))
            if not found:
                raise FileNotFoundError(f"{path}: no Parquet files below this folder")
            files += found
    return files


def _read(path: str, columns: list[str] | None) -> pd.DataFrame:
    """One Parquet file as pandas (dictionary columns stay categorical)."""
    return pd.read_parquet(path, columns=columns)


def as_dask(source: Source, *, table: str | None = None, columns: Sequence[str] | None = None,
            npartitions: int | None = None) -> Any:
    """``source`` as a Dask DataFrame, one partition per file (see the module doc).

    Parameters
    ----------
    source : dask or pandas DataFrame, path, or list of paths
        The table.
    table : str, optional
        Which table of an ingest output folder.
    columns : sequence of str, optional
        Read only these columns.
    npartitions : int, optional
        Partitions of a pandas DataFrame (default: about 1 million rows each).
    """
    dd = _dd()
    cols = list(columns) if columns is not None else None
    if isinstance(source, dd.DataFrame):
        return source[cols] if cols else source
    if isinstance(source, pd.DataFrame):
        frame = source[cols] if cols else source
        return dd.from_pandas(frame, npartitions=npartitions or max(1, len(frame) // 1_000_000), sort=False)
    files = parquet_files(source, table)
    meta = _read(files[0], cols).iloc[:0]
    return dd.from_map(_read, files, columns=cols, meta=meta, enforce_metadata=False,
                       label="reliab-read-parquet")
