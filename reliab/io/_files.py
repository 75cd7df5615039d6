"""Opening input files: compression by magic bytes, clear errors for missing/broken files.

Every decompressor hands out bounded pieces, whatever the compression ratio: ``gzip``,
``bz2`` and ``lzma`` file objects decompress at most what a ``read(n)`` asks for, and
Zstandard (whose decompression objects return all the output of the input they are given)
is fed :data:`ZSTD_INPUT` compressed bytes at a time.  A Zstandard block expands at most
~32,768-fold (an RLE block: 4 bytes for 128 KiB, RFC 8878 §3.1.1.2), so one feed yields at
most ~32 MiB, and a 320 KB file of newlines that inflates to 8 GB streams through in
constant memory.  Only regular files are opened: a FIFO, socket or device would block or
never end (:class:`~reliab.errors.InputFileError` names it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from reliab._contain import check_regular
from reliab.errors import InputFileError

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


#: compressed bytes fed to the Zstandard decoder at a time (bounds its output, see above)
ZSTD_INPUT = 1024
#: largest Zstandard window accepted (the libzstd default limit, 2**27 bytes)
ZSTD_MAX_WINDOW = 1 << 27


def compression_of(path: str | Path) -> str | None:
    """``gzip``, ``bz2``, ``xz``, ``zstd`` or ``None``, read from the file's magic bytes.

    ``None`` without opening anything for a FIFO, socket or device (whose open may block);
    ``OSError`` for a missing or unreadable file.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None
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
    check_regular(p)
    try:
        fh = open(p, "rb")  # noqa: SIM115 - handed to the caller
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    try:
        head = fh.peek(6)[:6]  # the magic bytes, without moving the stream
    except OSError as exc:
        fh.close()
        raise InputFileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    if kind is None:
        return fh  # a plain file: opened once
    fh.close()
    if kind == "gzip":
        return gzip.open(p, "rb")  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.open(p, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.open(p, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        return io.BufferedReader(_ZstdRaw(open(p, "rb")))  # type: ignore[return-value]
    raise AssertionError(kind)  # pragma: no cover - every magic is handled above


class _ZstdRaw(io.RawIOBase):
    """Zstandard frames of a file as a raw stream; a truncated last frame raises EOFError.

    (``zstandard``'s own ``stream_reader`` ends silently on a truncated frame, which would
    drop the tail of a broken archive without a trace.)  The decoder gets
    :data:`ZSTD_INPUT` bytes at a time, so a single call never returns more than ~32 MiB.
    """

    def __init__(self, fh: BinaryIO) -> None:
        import zstandard

        self._fh = fh
        self._new = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).decompressobj
        self._dec = self._new()
        self._input = b""
        self._at = 0
        self._pending = b""
        self._pos = 0
        self._started = False

    def readable(self) -> bool:
        return True

    def _feed(self) -> bytes | None:
        """Next piece of compressed input (at most ZSTD_INPUT bytes); ``None`` at the end."""
        if self._at >= len(self._input):
            self._input, self._at = self._fh.read(1 << 17), 0
            if not self._input:
                return None
        piece = self._input[self._at:self._at + ZSTD_INPUT]
        self._at += len(piece)
        return piece

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._pos >= len(self._pending):
            chunk = self._feed()
            if chunk is None:
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
            self._pending, self._pos = b"".join(out) if len(out) > 1 else out[0], 0
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


class Head(list[str]):
    """The first lines of a file (what a sniffer reads) with the bytes they came from.

    ``raw`` holds the file's first bytes as stored (magic numbers of compressed or binary
    formats), ``data`` its first decompressed bytes (at least those of the lines).  Every
    sniffer gets the same :class:`Head`, so a file's start is read once, whatever the
    number of registered parsers.
    """

    raw: bytes = b""
    data: bytes = b""


def read_start(path: str | Path, n: int = 20, max_bytes: int = 65536) -> Head:
    """The first ``n`` lines of ``path`` as :func:`head_lines` gives them, as a :class:`Head`.

    A plain file is opened once (its first ``max_bytes`` bytes give magic number and
    lines); a compressed one is opened once more to decompress its first ``max_bytes``.

    Raises
    ------
    InputFileError
        If the file is missing, not a regular file, or not a single byte of it can be
        decompressed.
    """
    check_regular(path)
    try:
        with open(path, "rb") as fh:
            first = fh.read(max_bytes)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    data = read_head(path, max_bytes) if any(first.startswith(magic) for magic, _ in _MAGIC) else first
    out = Head(data[:_lines_end(data, n)].decode("utf-8", errors="replace").splitlines()[:n])
    out.raw, out.data = first, data
    return out


def _lines_end(data: bytes, n: int) -> int:
    """Where the ``n``-th ``\n`` of ``data`` ends (``len(data)`` if it has fewer).

    The first ``n`` lines of ``data`` (``str.splitlines`` also cuts at ``\r`` and other
    separators, never fewer times than at ``\n``) all lie before it, and a ``\n`` byte is
    never inside a UTF-8 sequence: decoding only that much gives the same lines.
    """
    end = 0
    for _ in range(n):
        nl = data.find(b"\n", end)
        if nl < 0:
            return len(data)
        end = nl + 1
    return end


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
    return Path(path).stat().st_size if plain else decompressed_end(path)[0]


def decompressed_end(path: str | Path) -> tuple[int, bytes]:
    """Decompressed length of compressed ``path`` in bytes and its last byte (``b""`` if none),
    streamed once; a broken stream ends with the bytes read before the break."""
    size, last = 0, b""
    try:
        with open_binary(path) as fh:
            while block := fh.read(1 << 20):
                size += len(block)
                last = block[-1:]
    except _decompression_errors():
        pass
    return size, last
