"""Files the driver opens but no reader takes: empty, binary or unrecognised — counted, not read.

A real hand-over holds a dashboard PNG, a ``boot_time.txt`` note, a job log with loss
lines only.  Such a file is not an error: it gets an accounting row (source ``empty``,
``binary`` or ``unrecognized``) with the reason, and its lines are counted (as
``irrelevant``) so the run's line total covers every byte handed over.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reliab.io._files import open_binary
from reliab.io._registry import FileResult

EMPTY = "empty"
BINARY = "binary"
UNRECOGNIZED = "unrecognized"
#: sources of accounting rows for files that were opened but not read by any parser
OPENED_NOT_READ = (EMPTY, BINARY, UNRECOGNIZED)
#: magic bytes of binary formats a hand-over commonly holds
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
          (b"%PDF-", "PDF document"), (b"PK\x03\x04", "ZIP archive"), (b"\x7fELF", "ELF executable"),
          (b"SQLite format 3\x00", "SQLite database"), (b"\xd0\xcf\x11\xe0", "MS Office document"))
#: share of control bytes (other than tab, newline, CR, form feed, escape) that marks binary
_CONTROL_SHARE = 0.10
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0c\x1b\x08")


#: where a tar header block holds its magic (``ustar``: POSIX.1-1988 ustar, pax and GNU tar)
_TAR_MAGIC_AT = 257
TAR_REASON = ("tar archive: its members are not read (unpack it, e.g. tar -xf, into the hand-over"
              " folder, and each member gets its own row)")


def magic_kind(head: bytes) -> str | None:
    """The container or document format ``head`` (first decompressed bytes) starts with.

    Only formats no reader takes (images, archives, documents, executables): checked
    before sniffing, since a tar of text logs holds lines a log sniffer would claim.  The
    tar magic ``ustar`` sits at byte 257 of the first header block (POSIX.1-2017, pax
    "ustar Interchange Format"; GNU tar writes ``ustar  ``).
    """
    for magic, label in _MAGIC:
        if head.startswith(magic):
            return label
    if head[_TAR_MAGIC_AT:_TAR_MAGIC_AT + 5] == b"ustar":
        return "tar archive"
    return None


def binary_kind(head: bytes) -> str | None:
    """What binary content ``head`` (the first decompressed bytes) is, or ``None`` for text."""
    if (label := magic_kind(head)) is not None:
        return label
    if not head:
        return None
    if b"\x00" in head:
        return "binary content (NUL bytes)"
    sample = head[:8192]
    controls = sum(1 for b in sample if b < 32 and b not in _TEXT_CONTROLS)
    if controls / len(sample) > _CONTROL_SHARE:
        return "binary content (control bytes)"
    return None


def count_lines(path: str | Path) -> tuple[int, str]:
    """Lines of a (possibly compressed) file, a last line without newline included.

    Returns the count and a remark (empty, or why the count stopped early).
    """
    lines, last = 0, b"\n"
    try:
        with open_binary(path) as fh:
            while block := fh.read(1 << 20):
                lines += block.count(b"\n")
                last = block[-1:]
    except Exception as exc:  # noqa: BLE001 - a broken stream ends the count, not the run
        return lines + (last != b"\n"), f"; counting stopped ({type(exc).__name__}: {exc})"
    return lines + (last != b"\n"), ""


def not_read(path: str, source: str, reason: str) -> FileResult:
    """The accounting row of a file opened but not read: every line counted as irrelevant."""
    if source == EMPTY:
        return FileResult(path=path, source=EMPTY, lines=0, parsed=0, irrelevant=0, malformed=0,
                          reason=reason)
    n, remark = count_lines(path)
    return FileResult(path=path, source=source, lines=n, parsed=0, irrelevant=n, malformed=0,
                      reason=reason + remark)


def encoding_note(result: FileResult) -> FileResult:
    """``result`` with a note when its malformed lines hold bytes that are not UTF-8.

    Lines are decoded as UTF-8 with U+FFFD for each invalid byte (the codec's
    ``errors="replace"``, Python ``codecs``); a capture saved in a legacy encoding
    (GB18030, Latin-1) then fails to parse where the bytes matter (a localized month).  The
    note names the first such line and says how to convert the file.
    """
    q = result.quarantine
    if q is None or not len(q) or "text" not in q.columns:
        return result
    bad = q[q["text"].astype("string").str.contains("\ufffd", regex=False).fillna(False).to_numpy(dtype=bool)]
    if bad.empty:
        return result
    note = (f"{len(bad):,} malformed line(s) hold bytes that are not UTF-8 (shown as U+FFFD; first:"
            f" line {int(bad['lineno'].iloc[0])}): the file may be in another encoding; convert it"
            " (iconv -f <encoding> -t UTF-8) and read it again")
    return dataclasses.replace(result, notes=(*result.notes, note))


__all__ = ["encoding_note", "binary_kind", "magic_kind", "TAR_REASON", "count_lines", "not_read", "EMPTY", "BINARY", "UNRECOGNIZED", "OPENED_NOT_READ"]
