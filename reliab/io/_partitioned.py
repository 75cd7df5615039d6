"""Partitioned Parquet output of an ingest (``output=``, either runner): tables by source and date.

Layout of an output folder::

    <table>/source=<source>/date=<YYYY-MM-DD>/part-<run>-<task>.parquet
    interruptions.parquet  user_failures.parquet  accounting.parquet
    _reliab_dataset.json

The tables read from files (``signals``, ``jobs``, ``telemetry``, ``quarantine``) are
written one part per task and (source, date) group (Hive-style folder names, so engines
that prune partitions can use them; the quarantine, which has no time, by source only).
The date is the UTC date of ``time``, or of a job's ``end`` (else ``start``, else
``submit``); rows without one are in ``date=unknown``.  The derived tables are single files.

``_reliab_dataset.json`` is the commit point, renamed in last: it lists every part with its
row count and the positions its rows had in the task's output, so :func:`read_table` gives
the rows in the order of a one-machine ingest.  The positions are ``first`` and ``steps``
(the gaps, zlib-compressed and base64-encoded: 1M jobs alternating between end dates made a
73 MB manifest of ``[start, length]`` runs, which manifests of earlier versions hold as
``runs`` and are still read).  Parts of a run that did not commit are not in the manifest and are
deleted by the next run into the folder; readers should read the manifest first.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import uuid
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab import schema
from reliab.io._merge import concat, file_tables
from reliab.io._registry import FileResult

__all__ = ["PARTITIONED", "DERIVED", "MANIFEST", "new_run", "write_parts", "write_table", "positions", "remap",
           "commit", "atomic", "part_files", "read_table", "read_parts", "read_manifest", "partition_value",
           "parts_in_order", "read_rows"]

#: tables written by the workers, partitioned
PARTITIONED = ("signals", "jobs", "telemetry", "quarantine")
#: tables derived by the client, one file each
DERIVED = ("interruptions", "user_failures", "accounting")
MANIFEST = "_reliab_dataset.json"
_UNKNOWN = "unknown"


@contextmanager
def new_run(folder: str | os.PathLike[str]) -> Iterator[tuple[Path, str]]:
    """A run into ``folder``: the folder (resolved) and a fresh run id, sortable by time and
    unique across clients.  If the block fails, every part (and temporary part) the run
    wrote is deleted: the run will not commit."""
    root, run = Path(folder).resolve(), f"{pd.Timestamp.now(tz='UTC'):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
    try:
        yield root, run
    except BaseException:
        for table in PARTITIONED:
            for pattern in (f"part-{run}-*", f".part-{run}-*"):
                for path in (root / table).rglob(pattern):  # (none where the folder is missing)
                    path.unlink(missing_ok=True)
        raise


def _dates(frame: pd.DataFrame, table: str) -> np.ndarray:
    """The partition date of every row (``YYYY-MM-DD`` or ``unknown``)."""
    if table == "jobs":
        when = frame["end"].fillna(frame["start"]).fillna(frame["submit"])
    elif "time" in frame.columns:
        when = frame["time"]
    else:
        return np.full(len(frame), _UNKNOWN, dtype=object)
    codes, days = pd.factorize(pd.DatetimeIndex(when).normalize())  # each day formatted once
    names = np.append(np.asarray(days.strftime("%Y-%m-%d"), dtype=object), _UNKNOWN)
    return names[codes]  # (code -1, a missing time: the last name)


def partition_value(value: object) -> str:
    """A partition value usable as a folder name (``/`` and NUL replaced, never empty)."""
    text = "" if value is None or value is pd.NA else str(value)
    text = text.replace("/", "_").replace("\x00", "_").replace(os.sep, "_")
    return text if text and text not in (".", "..") else _UNKNOWN


def _located(positions: np.ndarray) -> dict[str, Any]:
    """The manifest fields giving ``positions`` (increasing, not empty): the ``first`` and the
    ``steps`` (the gaps, 4-byte where they fit, compressed)."""
    gaps = np.diff(positions)
    kind = "<u4" if not gaps.size or int(gaps.max()) < 2**32 else "<i8"
    packed = zlib.compress(gaps.astype(kind).tobytes(), 6)
    return {"first": int(positions[0]), "steps": f"{kind}:{base64.b64encode(packed).decode('ascii')}"}


def write_parts(results: list[FileResult], folder: str, run: str, task: int, *, skip: tuple[str, ...] = (),
                written_table: Callable[[pd.DataFrame, str], None] | None = None) -> list[dict[str, Any]]:
    """Write one task's per-file results as parts of ``folder``; returns the parts' manifest records.

    The rows of each table are those of :func:`reliab.io._merge.file_tables` (files in
    order), partitioned by the source that read their file and by date.  Each record holds
    ``table``, ``path`` (relative to ``folder``), ``rows``, ``task``, ``first`` and ``steps``
    (the positions of the part's rows in the task's table).  Parts are
    written under a temporary name and renamed.  Tables named in ``skip`` are not written;
    ``written_table(frame, table)`` is called for each table written.
    """
    tables = file_tables(results)
    written: list[dict[str, Any]] = []
    for table in PARTITIONED:
        frame = tables[table]
        if table in skip or not len(frame):
            continue
        rows_of = [(r.quarantine if table == "quarantine" else r.tables.get(table)) for r in results]
        sources = np.repeat([partition_value(r.source) for r in results],
                            [0 if f is None else len(f) for f in rows_of]).astype(object)
        written += write_table(frame, table, sources, folder, run, task)
        if written_table is not None:
            written_table(frame, table)
    return written


def write_table(frame: pd.DataFrame, table: str, sources: np.ndarray, folder: str | os.PathLike[str],
                run: str, task: int, piece: int | None = None) -> list[dict[str, Any]]:
    """Write the rows of one table of task ``task`` (``sources``: each row's file source) as parts.

    ``piece`` numbers the pieces of a task written one after the other (the local engine
    writes a large file's rows in batches while it reads it): part names then end in
    ``-<piece>`` and the records' positions are those in the piece, which the caller
    maps to positions in the task (:func:`remap`).
    """
    root = Path(folder)
    written: list[dict[str, Any]] = []
    keys = pd.DataFrame({"source": sources, "date": "" if table == "quarantine" else _dates(frame, table)})
    name = f"part-{run}-{task:06d}" + ("" if piece is None else f"-{piece:06d}")
    schema.validate(frame, table)  # once: each part is a slice of it
    for (source, date), rows in keys.groupby(["source", "date"], sort=True).indices.items():
        rows = np.sort(rows)
        target = root / table / f"source={source}" / (f"date={date}" if date else "") / f"{name}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        part = (frame.iloc[rows[0]:rows[-1] + 1] if rows[-1] - rows[0] + 1 == len(rows)  # a slice: no copy
                else frame.iloc[rows])
        with atomic(target) as tmp:
            schema.write_parquet(part.reset_index(drop=True), str(tmp), table, check=False)
        written.append({"table": table, "path": str(target.relative_to(root)), "rows": int(len(rows)),
                        "task": int(task), **_located(rows)})
    return written


@contextmanager
def atomic(target: Path) -> Iterator[Path]:
    """A temporary path in ``target``'s folder for the block to write, renamed to ``target`` after it."""
    tmp = target.with_name(f".{target.name}.tmp")
    yield tmp
    os.replace(tmp, target)


def positions(record: dict[str, Any]) -> np.ndarray:
    """The positions of a part's rows (its record's ``steps``, or ``runs``, expanded), in the part's row order."""
    if "steps" in record:
        kind, _, text = record["steps"].partition(":")
        gaps = np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=kind)
        return np.cumsum(np.r_[np.int64(record["first"]), gaps.astype(np.int64)])
    runs = record["runs"]
    if not runs:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(s, s + n, dtype=np.int64) for s, n in runs])


def parts_in_order(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Manifest records of one table in the order of their rows: by task, then first position."""
    def first(record: dict[str, Any]) -> int:
        return record["first"] if "steps" in record else record["runs"][0][0] if record["runs"] else 0

    return sorted(parts, key=lambda r: (r["task"], first(r)))


def read_rows(folder: str | os.PathLike[str], parts: list[dict[str, Any]], chosen: list[np.ndarray],
              held: dict[int, Any] | None = None) -> pd.DataFrame:
    """Signal rows read from parts: of part ``parts[k]`` the rows at positions ``chosen[k]``.

    ``held`` maps a task to its whole signals table (``pyarrow.Table``, in task order), still
    in memory: the rows of that task's parts are taken from it, not read from the files.  The
    tables are taken out of ``held`` (so that each column is freed once it is reordered).

    The rows are put back in task and position order, then sorted by time (stably, missing
    times last), as the in-memory ingest orders them: some rows of the whole table, in its
    order.  Both orders are applied as one permutation of the Arrow rows (a copy of the 1M
    signals of a sacct file each, in pandas, took ~150 MiB).
    """
    import pyarrow as pa

    table, key = _gathered(folder, parts, chosen, {} if held is None else held)
    if table is None:
        return schema.empty("signals")
    order = _table_order(table, key)
    del key
    if (order != np.arange(len(order))).any():  # column by column: one column is held twice, not the table
        schema_of, columns = table.schema, table.columns
        del table
        index = pa.array(order)
        for i in range(len(columns)):
            columns[i] = columns[i].take(index)
        table = pa.Table.from_arrays(columns, schema=schema_of)
    return schema.from_parquet_arrow(table, "signals")


def _gathered(folder: str | os.PathLike[str], parts: list[dict[str, Any]], chosen: list[np.ndarray],
              held: dict[int, Any]) -> tuple[Any, np.ndarray]:
    """The chosen rows of the parts in one ``pyarrow.Table`` (``None`` if none), and their
    ``(task, position)`` keys; the tables of ``held`` are taken out of it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables, keys = [], []
    taken: dict[int, list[np.ndarray]] = {}
    for record, rows in zip(parts, chosen, strict=True):
        if not len(rows):
            continue
        if record["task"] in held:
            taken.setdefault(record["task"], []).append(positions(record)[rows])
            continue
        part = pq.read_table(Path(folder) / record["path"])
        tables.append(part if len(rows) == part.num_rows else part.take(pa.array(rows)))
        keys.append(np.column_stack([np.full(len(rows), record["task"]), positions(record)[rows]]))
    for task, wheres in taken.items():
        where, whole = np.sort(np.concatenate(wheres)), held.pop(task)
        tables.append(whole if len(where) == whole.num_rows else whole.take(pa.array(where)))
        keys.append(np.column_stack([np.full(len(where), task), where]))
    if not tables:
        return None, np.zeros((0, 2), dtype=np.int64)
    return pa.concat_tables(tables, promote_options="permissive"), np.concatenate(keys)


def _table_order(table: Any, key: np.ndarray) -> np.ndarray:
    """The row order of ``table``: by ``key`` (task, position), then by time, stably, missing times last."""
    import pyarrow as pa
    import pyarrow.compute as pc

    order = np.lexsort((key[:, 1], key[:, 0]))
    time = table["time"]
    missing = time.is_null().to_numpy(zero_copy_only=False)[order]
    ns = pc.fill_null(time.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)[order]
    return order[np.lexsort((ns, missing))]


def remap(record: dict[str, Any], where: np.ndarray) -> dict[str, Any]:
    """``record`` with its row positions ``p`` replaced by ``where[p]`` (``where`` increasing)."""
    kept = {k: v for k, v in record.items() if k not in ("first", "steps")}
    return {**kept, **_located(where[positions(record)])}


def _sweep(root: Path, keep: set[str]) -> None:
    """Delete part files (and temporary ones) under the partitioned tables not in ``keep``."""
    for table in PARTITIONED:
        base = root / table
        if not base.is_dir():
            continue
        for path in base.rglob("*.parquet*"):
            if path.is_file() and str(path.relative_to(root)) not in keep:
                path.unlink(missing_ok=True)
        for sub in sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                sub.rmdir()  # only empty partition folders go


def commit(folder: str | os.PathLike[str], run: str, parts: list[dict[str, Any]], result: Any, **facts: Any) -> Path:
    """Write the derived tables of ``result`` (an :class:`~reliab.io._result.IngestResult`) and
    the manifest (the commit point, with its policy, notes and ``facts``); drop older runs' parts."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    for table in DERIVED:
        with atomic(root / f"{table}.parquet") as tmp:
            schema.write_parquet(getattr(result, table), str(tmp), table)
    manifest = {"format": "reliab partitioned tables", "version": 2, "run": run,
                "tables": {t: [p for p in parts if p["table"] == t] for t in PARTITIONED},
                "derived": sorted(DERIVED), "policy": result.policy, "notes": list(result.notes), **facts}
    target = root / MANIFEST
    with atomic(target) as tmp:
        tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    _sweep(root, {p["path"] for p in parts})
    return target


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a committed output folder.

    Raises
    ------
    FileNotFoundError
        ``folder`` holds no committed run (no ``_reliab_dataset.json``).
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no {MANIFEST}: not the output folder of a committed ingest")
    return json.loads(path.read_text(encoding="utf-8"))


def part_files(folder: str | os.PathLike[str], table: str) -> list[str]:
    """Absolute paths of the committed parts of ``table``, in task order."""
    if table not in PARTITIONED:
        raise ValueError(f"table must be one of {PARTITIONED}, got {table!r}")
    parts = read_manifest(folder)["tables"].get(table, [])
    return [str(Path(folder) / p["path"]) for p in sorted(parts, key=lambda p: p["task"])]


def read_table(folder: str | os.PathLike[str], table: str) -> pd.DataFrame:
    """One table of an output folder, rows in the order of a one-machine ingest.

    Partitioned tables are read part by part and put back in task order and, within a task,
    in the order the task produced them (the manifest's positions), signals then sorted by time
    (stable) as :func:`reliab.ingest` returns them; derived tables are read as is.
    """
    manifest = read_manifest(folder)
    if table in DERIVED:
        return schema.read_parquet(str(Path(folder) / f"{table}.parquet"), table)
    if table not in PARTITIONED:
        raise ValueError(f"table must be one of {PARTITIONED + DERIVED}, got {table!r}")
    frame = read_parts(folder, manifest["tables"].get(table, []), table)
    if table == "signals" and not frame["time"].is_monotonic_increasing:  # as ingest returns them
        frame = frame.sort_values("time", kind="stable").reset_index(drop=True)
    return frame


def read_parts(folder: str | os.PathLike[str], parts: list[dict[str, Any]], table: str) -> pd.DataFrame:
    """The rows of ``parts`` (manifest records of one table) in task order, then task row order."""
    frames: list[pd.DataFrame] = []
    for task in sorted({p["task"] for p in parts}):
        mine = [p for p in parts if p["task"] == task]
        data = [schema.read_parquet(str(Path(folder) / p["path"]), table) for p in mine]
        where = np.concatenate([positions(p) for p in mine])
        frame = concat(data, table)
        frames.append(frame.iloc[np.argsort(where, kind="stable")].reset_index(drop=True))
    return concat(frames, table)

