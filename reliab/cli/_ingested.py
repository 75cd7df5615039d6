"""Read the Parquet tables that ``reliab ingest --out`` (or ``reliab demo``) wrote."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reliab.errors import InputFileError


def read_tables(folder: Path, names: tuple[str, ...] = ("signals", "jobs", "interruptions")
                ) -> dict[str, pd.DataFrame]:
    """The named canonical tables of an ingest output folder, validated.

    Raises
    ------
    InputFileError
        When the folder or one of ``<name>.parquet`` is missing.
    """
    from reliab.io import MANIFEST, read_table
    from reliab.schema import read_parquet

    if not folder.is_dir():
        raise InputFileError(f"{folder}: not a folder (expected the output of `reliab ingest --out`)")
    if (folder / MANIFEST).is_file():  # tables partitioned by source and date (--stream, --engine dask)
        return {name: read_table(folder, name) for name in names}
    out = {}
    for name in names:
        path = folder / f"{name}.parquet"
        if not path.is_file():
            raise InputFileError(f"{path}: missing; write it with `reliab ingest <logs> --out {folder}`")
        out[name] = read_parquet(str(path), name)
    return out
