"""Files of identical content under other names: a copy, or the same file compressed and not.

Reading both would count every line and signal twice (``x.csv`` beside ``x.csv.xz``).
Files are compared by their decompressed bytes, cheaply: only files whose decompressed
length equals another's are hashed.  The length is the file size for a plain file, the
``ISIZE`` trailer for a gzip file (RFC 1952 section 2.3.1: the length modulo 2**32, so
lengths are compared modulo 2**32) and, for the other compressions (xz, bzip2, zstd),
the length of the decompressed stream, read once.  A folder of plain files of distinct
sizes costs one ``stat`` per file and nothing more.  Empty files are never twins (each
gets its ``empty`` row).
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections import defaultdict
from collections.abc import Sequence

from reliab.io._files import compression_of, content_size, open_binary

#: lengths are compared modulo this (a gzip trailer keeps no more)
_MOD = 1 << 32
_BLOCK = 1 << 20


def _length(path: str) -> int | None:
    """Decompressed length of ``path`` modulo 2**32, ``None`` if it cannot be told."""
    try:
        kind = compression_of(path)
        if kind is None:
            return os.stat(path).st_size % _MOD
        if kind == "gzip":
            with open(path, "rb") as fh:
                fh.seek(-4, os.SEEK_END)
                return int(struct.unpack("<I", fh.read(4))[0])
        return content_size(path) % _MOD
    except (OSError, ValueError, struct.error):
        return None
    except Exception:  # noqa: BLE001 - a file that cannot be measured is simply not compared
        return None


def _digest(path: str) -> bytes | None:
    """BLAKE2b of the decompressed bytes of ``path``; ``None`` if the stream cannot be read whole."""
    h = hashlib.blake2b(digest_size=32)
    try:
        with open_binary(path) as fh:
            while block := fh.read(_BLOCK):
                h.update(block)
    except Exception:  # noqa: BLE001 - an unreadable file is read (and accounted for) on its own
        return None
    return h.digest()


def content_twins(paths: Sequence[str]) -> dict[int, int]:
    """``{index: index of the first path with the same content}`` for the later copies.

    ``paths`` are regular files in reading order; the first of each set of identical
    (decompressed, non-empty) contents is the one read.
    """
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, path in enumerate(paths):
        length = _length(path)
        if length:  # None (unknown) or 0 (empty): not compared
            by_length[length].append(i)
    twins: dict[int, int] = {}
    for same in by_length.values():
        if len(same) < 2:
            continue
        first: dict[bytes, int] = {}
        for i in same:
            digest = _digest(paths[i])
            if digest is None:
                continue
            if digest in first:
                twins[i] = first[digest]
            else:
                first[digest] = i
    return twins


__all__ = ["content_twins"]
