"""Opening input files: compression by magic bytes, clear errors for missing/broken files."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from pathlib import Path
from typing import BinaryIO

from reliab.errors import InputFileError

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


def compression_of(path: str | Path) -> str | None:
    """``gzip``, ``bz2``, ``xz``, ``zstd`` or ``None``, read from the file's magic bytes."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def open_binary(path: str | Path) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing transparently.

    Raises
    ------
    InputFileError
        If the file does not exist, is a directory or cannot be read.
    """
    p = Path(path)
    if not p.exists():
        raise InputFileError(f"{p}: no such file")
    if p.is_dir():
        raise InputFileError(f"{p}: is a directory")
    try:
        kind = compression_of(p)
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if kind == "gzip":
        return gzip.open(p, "rb")  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.open(p, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.open(p, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        return io.BufferedReader(_ZstdRaw(open(p, "rb")))  # type: ignore[return-value]
    return open(p, "rb")


class _ZstdRaw(io.RawIOBase):
    """Zstandard frames of a file as a raw stream; a truncated last frame raises EOFError.

    (``zstandard``'s own ``stream_reader`` ends silently on a truncated frame, which would
    drop the tail of a broken archive without a trace.)
    """

    def __init__(self, fh: BinaryIO) -> None:
        import zstandard

        self._fh = fh
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._dec = self._new()
        self._pending = b""
        self._pos = 0
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._pos >= len(self._pending):
            chunk = self._fh.read(1 << 17)
            if not chunk:
                if self._started and not self._dec.eof:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                return 0
            out = []
            while chunk:
                if self._dec.eof:  # next frame
                    self._dec = self._new()
                self._started = True
                out.append(self._dec.decompress(chunk))
                chunk = self._dec.unused_data if self._dec.eof else b""
            self._pending, self._pos = b"".join(out), 0
        n = min(len(buffer), len(self._pending) - self._pos)
        buffer[:n] = memoryview(self._pending)[self._pos:self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def _decompression_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - zstandard is a declared dependency
        pass
    return errors


def head_lines(path: str | Path, n: int = 20, max_bytes: int = 65536) -> list[str]:
    """The first ``n`` lines of a (possibly compressed) file, decoded leniently.

    A stream that breaks off (truncated archive) still yields the lines read before the
    break; only a file whose start cannot be read at all raises.

    Raises
    ------
    InputFileError
        If the file is missing, or not a single byte of it can be decompressed.
    """
    chunks: list[bytes] = []
    size = 0
    try:
        with open_binary(path) as fh:
            while size < max_bytes:
                block = fh.read(min(8192, max_bytes - size))
                if not block:
                    break
                chunks.append(block)
                size += len(block)
                if sum(c.count(b"\n") for c in chunks) > n:
                    break
    except _decompression_errors() as exc:
        if not chunks:
            raise InputFileError(f"{path}: cannot read the start of the file ({exc})") from exc
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return text.splitlines()[:n]


#: bytes of decompressed content that identify a file (its fingerprint)
HEAD_BYTES = 65536


def read_head(path: str | Path, n: int = HEAD_BYTES) -> bytes:
    """Up to ``n`` decompressed bytes from the start of ``path`` (fewer if it is shorter).

    A stream that breaks off yields the bytes read before the break.

    Raises
    ------
    InputFileError
        If the file is missing or not a single byte of it can be decompressed.
    """
    chunks: list[bytes] = []
    size = 0
    try:
        with open_binary(path) as fh:
            while size < n:
                block = fh.read(n - size)
                if not block:
                    break
                chunks.append(block)
                size += len(block)
    except _decompression_errors() as exc:
        if not chunks:
            raise InputFileError(f"{path}: cannot read the start of the file ({exc})") from exc
    return b"".join(chunks)


def content_size(path: str | Path) -> int:
    """Decompressed length of ``path`` in bytes (bytes readable before a broken stream ends).

    Plain files are answered from ``os.stat``; compressed ones are streamed once.

    Raises
    ------
    InputFileError
        If the file is missing or cannot be opened.
    """
    try:
        plain = compression_of(path) is None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if plain:
        return Path(path).stat().st_size
    size = 0
    try:
        with open_binary(path) as fh:
            while block := fh.read(1 << 20):
                size += len(block)
    except _decompression_errors():
        pass
    return size
