"""Files of identical content under other names: a copy, or the same file compressed and not.

Reading both would count every line and signal twice (``x.csv`` beside ``x.csv.xz``).
Files are compared by their decompressed bytes, cheaply: only files whose decompressed
length equals another's are hashed.  The length is the file size for a plain file, the
``ISIZE`` trailer for a gzip file (RFC 1952 section 2.3.1: the length modulo 2**32, so
lengths are compared modulo 2**32) and, for the other compressions (xz, bzip2, zstd),
the length of the decompressed stream, read once.  A file is taken as compressed by its
name (``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zstd``; then by its magic bytes), so a
folder of plain files costs one ``stat`` per file, plus one read of each file whose
length another file shares.  Empty files are never twins (each gets its ``empty`` row).

Identical content is not the same data when the path names the host: per-host captures
such as ``ipmi/node0187.sel`` and ``ipmi/node1205.sel`` that both read ``SEL has no
entries`` are two hosts' records.  ``path_named(path)`` says whether the reader of a file
takes its host from the path (the readers with a ``host=`` option); such twins are kept.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections import defaultdict
from collections.abc import Callable, Sequence

from reliab.io._files import compression_of, content_size, open_binary

#: lengths are compared modulo this (a gzip trailer keeps no more)
_MOD = 1 << 32
_BLOCK = 1 << 20
#: names of compressed files (the magic bytes then tell the kind)
COMPRESSED_NAMES = (".gz", ".bz2", ".xz", ".zst", ".zstd")


def _length(path: str) -> int | None:
    """Decompressed length of ``path`` modulo 2**32, ``None`` if it cannot be told."""
    try:
        kind = compression_of(path) if path.lower().endswith(COMPRESSED_NAMES) else None
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


def content_twins(paths: Sequence[str], path_named: Callable[[str], bool] = lambda _: False) -> dict[int, int]:
    """``{index: index of the first path with the same content}`` for the later copies.

    ``paths`` are regular files in reading order; the first of each set of identical
    (decompressed, non-empty) contents is the one read, unless ``path_named`` says that
    the content's reader takes the host from the path (then every copy is read).
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
                if not path_named(paths[i]):
                    twins[i] = first[digest]
            else:
                first[digest] = i
    return twins


__all__ = ["content_twins"]
