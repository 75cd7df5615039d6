"""What the incremental store knows of a file's content (its rotation family, decompressed size,
prefix digests), and how it cuts a reader's result to the lines not stored yet (:func:`trim`)
or to its complete lines (:func:`hold_tail`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from reliab.io._files import compression_of, decompressed_end, open_binary
from reliab.io._registry import FileResult

_COMPRESSED = re.compile(r"\.(gz|bz2|xz|zst|zstd)$", re.IGNORECASE)
_ROTATED = re.compile(r"\.\d+$")
_DATED = re.compile(r"[-_.]\d{8}(\d{2,6})?(?=(\.[A-Za-z]\w*)?$)")
_BLOCK = 1 << 20


@lru_cache(maxsize=1 << 16)
def family(path: str | os.PathLike[str]) -> tuple[str, str]:
    """``(folder, name)`` of ``path`` with rotation suffixes stripped.

    ``messages.1``, ``messages.2.gz``, ``messages-20240603`` and ``messages`` share one
    family; so do ``syslog-20240603.log`` and ``syslog.log``.
    """
    p = Path(path)
    name = _COMPRESSED.sub("", p.name)
    name = _ROTATED.sub("", name)
    name = _DATED.sub("", name)
    return str(p.parent), name


def is_final(path: str | os.PathLike[str]) -> bool:
    """Whether nobody appends to ``path`` any more: a rotated, dated or compressed name."""
    return family(path)[1] != Path(path).name


def content_facts(path: str) -> tuple[int, bool]:
    """Decompressed size of ``path`` and whether its content ends with a newline (or is empty);
    plain files from ``stat`` and their last byte.

    A compressed stream that breaks off counts the bytes read before the break.
    """
    if compression_of(path) is None:
        size = os.stat(path).st_size
        if size == 0:
            return 0, True
        with open(path, "rb") as fh:
            fh.seek(size - 1)
            return size, fh.read(1) == b"\n"
    size, last = decompressed_end(path)
    return size, last in (b"", b"\n")


def prefix_digests(path: str, first: int, total: int) -> tuple[str | None, str | None]:
    """SHA-256 of the first ``first`` and of the first ``total`` decompressed bytes, in one pass
    (the check that a grown file was appended to, not rewritten with the same first 64 KiB).

    Either is ``None`` if the content is shorter.
    """
    digest, seen, out = hashlib.sha256(), 0, {}
    with contextlib.suppress(Exception), open_binary(path) as fh:  # a broken stream is shorter
        for mark in sorted({first, total}):
            while seen < mark and (block := fh.read(min(_BLOCK, mark - seen))):
                digest.update(block)
                seen += len(block)
            if seen < mark:
                break
            out[mark] = digest.hexdigest()
    return out.get(first), out.get(total)


def _line_numbers(origin: pd.Series) -> pd.Series:
    """Line numbers from ``path:line`` origins (NaN where there is none)."""
    return pd.to_numeric(origin.astype("string").str.rsplit(":", n=1).str[-1], errors="coerce")


def _beyond(frame: pd.DataFrame, lines: int, parsed: int) -> pd.DataFrame:
    """Rows of ``frame`` from lines after the first ``lines`` (by origin, else position)."""
    if not len(frame):
        return frame
    if "origin" in frame.columns:
        keep = (_line_numbers(frame["origin"]) > lines).fillna(False).to_numpy(dtype=bool)
        return frame.loc[keep].reset_index(drop=True)
    return frame.iloc[parsed:].reset_index(drop=True)


def trim(result: FileResult, lines: int, parsed: int) -> FileResult:
    """``result`` restricted to lines beyond the first ``lines`` (``parsed`` of them parsed).

    The accounting counts only the new lines: ``lines - lines_old`` lines, of which
    malformed are the quarantined new lines and parsed ``parsed - parsed_old`` (clamped so
    the identity ``lines = parsed + irrelevant + malformed`` holds).
    """
    if lines <= 0:
        return result
    tables = {name: _beyond(frame, lines, parsed) for name, frame in result.tables.items()}
    quarantine = result.quarantine
    if quarantine is not None:
        quarantine = quarantine.loc[(quarantine["lineno"] > lines).fillna(False).to_numpy(dtype=bool)]
        quarantine = quarantine.reset_index(drop=True)
    new = max(result.lines - lines, 0)
    malformed = min(len(quarantine) if quarantine is not None else 0, new)
    n_parsed = min(max(result.parsed - parsed, 0), new - malformed)
    return replace(result, lines=new, parsed=n_parsed, irrelevant=new - n_parsed - malformed,
                   malformed=malformed, tables=tables, quarantine=quarantine)


def hold_tail(result: FileResult) -> FileResult:
    """``result`` without its last line (one with no newline yet: a writer may be in the middle
    of it, ``… Xid (PCI:0000:3b:00): 4`` becomes ``48`` a moment later), accounting adjusted.

    Rows are matched to the line by ``origin``; a table without origins (one row per
    parsed line, e.g. ``telemetry_csv``) loses its last row when the line was parsed.
    """
    last = result.lines
    if last <= 0:
        return result
    quarantine = result.quarantine
    malformed = quarantine is not None and bool((quarantine["lineno"] == last).any())
    if malformed:
        quarantine = quarantine.loc[(quarantine["lineno"] != last).to_numpy(dtype=bool)].reset_index(drop=True)
    produced = False
    tables = {}
    for name, frame in result.tables.items():
        if len(frame) and "origin" in frame.columns:
            mine = (_line_numbers(frame["origin"]) == last).fillna(False).to_numpy(dtype=bool)
            produced = produced or bool(mine.any())
            frame = frame.loc[~mine].reset_index(drop=True)
        elif len(frame) and not malformed and result.parsed > 0:
            frame, produced = frame.iloc[:-1].reset_index(drop=True), True
        tables[name] = frame
    parsed = result.parsed - (produced and not malformed and result.parsed > 0)
    bad = result.malformed - malformed
    irrelevant = (last - 1) - parsed - bad
    note = "last line has no newline yet: held until it is complete or the file is rotated"
    return replace(result, lines=last - 1, parsed=parsed, irrelevant=irrelevant, malformed=bad, tables=tables,
                   quarantine=quarantine, notes=(*result.notes, note))


__all__ = ["family", "is_final", "content_facts", "prefix_digests", "trim", "hold_tail"]
