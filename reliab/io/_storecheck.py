"""Keeping an incremental store sound: one writer at a time, parts checked, rebuild on request.

* **Lock.**  ``.lock`` in the store folder is held with ``flock(2)`` for the whole run.  The
  kernel takes the lock atomically and releases it when its holder dies (``kill -9``
  included), so a stale lock cannot exist and a lock is never "taken over" from a live
  writer; the holder's pid is written into the file only to name it in the message.
* **Parts.**  The ledger's metadata records, per committed run and table, the part's size
  and SHA-256.  A part that is missing, of another size or checksum, or unreadable, and a
  ledger that cannot be read, stop the run with one line that names the file and the fix:
  ``reliab ingest --store DIR --rebuild LOGS…`` (``ingest(..., store=DIR, rebuild=True)``),
  which discards the store and reads the raw files afresh.  Nothing is guessed: a store
  keeps rows of files that may no longer exist, so rebuilding is the user's decision.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reliab.errors import InputFileError

#: the lock file inside a store folder
LOCK = ".lock"


class StoreError(InputFileError):
    """A store whose ledger or parts are missing or corrupt; the message names the fix."""


def rebuild_hint(directory: Path) -> str:
    """The fix named in every store error."""
    return (f"rebuild it from the raw files: reliab ingest --store {directory} --rebuild <logs…>"
            " (API: ingest(..., store=..., rebuild=True))")


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, streamed."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def part_record(path: Path, rows: int) -> dict[str, Any]:
    """What the ledger remembers of a part it commits: rows, size and checksum."""
    return {"rows": int(rows), "bytes": path.stat().st_size, "sha256": file_digest(path)}


def verify_parts(directory: Path, runs: list[str], parts: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
    """Check every part the ledger lists for ``runs`` against its recorded size and checksum.

    Raises
    ------
    StoreError
        A part is missing, has another size or checksum; the message names it and the fix.
    """
    for run in runs:
        for table, facts in parts.get(run, {}).items():
            part = directory / table / f"{run}.parquet"
            if not part.exists():
                raise StoreError(f"{directory}: part {table}/{run}.parquet is missing; {rebuild_hint(directory)}")
            size = part.stat().st_size
            if size != facts.get("bytes", size) or file_digest(part) != facts.get("sha256"):
                raise StoreError(f"{directory}: part {table}/{run}.parquet is corrupt (size or checksum differs"
                                 f" from the ledger); {rebuild_hint(directory)}")


def wipe(directory: Path, tables: tuple[str, ...], ledger: str) -> int:
    """Delete a store's ledger and parts (nothing else); returns the number of files removed."""
    removed = 0
    target = directory / ledger
    if target.exists():
        target.unlink()
        removed += 1
    for table in tables:
        folder = directory / table
        if folder.is_dir():
            for part in folder.glob("*.parquet"):
                part.unlink()
                removed += 1
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink()
    for tmp in directory.glob(".*.tmp"):
        tmp.unlink()
    return removed


def _holder(lock: Path) -> str:
    try:
        return lock.read_text(errors="replace").strip() or "?"
    except OSError:
        return "?"


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the store's lock for the duration (one writer at a time).

    Raises
    ------
    InputFileError
        Another live process holds the lock (its pid is named), or the folder cannot be
        created.
    """
    import fcntl

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputFileError(f"{directory}: cannot create the store folder ({exc.strerror or exc})") from None
    if not directory.is_dir():
        raise InputFileError(f"{directory}: store is not a folder")
    lock = directory / LOCK
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise InputFileError(f"{directory}: store in use by process {_holder(lock)} (one ingest at a time;"
                                 " the lock is released when that process ends)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing releases the flock


__all__ = ["StoreError", "locked", "verify_parts", "part_record", "wipe", "rebuild_hint", "file_digest", "LOCK"]
