"""The warning of a forced reader that recognised none of a file's lines.

A reader named with ``source=`` (or by the hand-over manifest) is not sniffed, so nothing
checks that the file is of its format: forcing the kernel reader on a BlueGene/L RAS log
counts every line irrelevant and finds no alert.  :func:`forced_note` notes such a file
(its accounting reason) and :func:`forced_notes` turns the notes into run warnings, which
the CLI prints.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reliab.io._registry import FileResult
from reliab.io._result import SourceChoice

#: the start of the note a forced reader that recognised no line leaves on its file
FORCED_NOTHING = "the forced reader "


def forced_note(result: FileResult, choice: SourceChoice) -> FileResult:
    """``result`` with a note when the forced reader of ``choice`` recognised none of its lines.

    A reader named with ``source=`` (or by the manifest) that parses no line of a file with
    lines, and whose format sniffing does not recognise in the file either, has most likely
    been given a file of another format; the note names what sniffing would choose.  A file
    sniffing gives the same reader (a log of that format with no failure lines) is not noted.
    """
    if not choice.forced or result.parsed or not result.lines or result.reason is not None:
        return result
    from reliab.io._driver import _sniff as sniff

    try:
        sniffed: SourceChoice | None = sniff(Path(result.path))
    except Exception:  # noqa: BLE001 - the hint is optional; the note stands without it
        sniffed = None
    if sniffed is not None and sniffed.source == choice.source:
        return result
    note = f"{FORCED_NOTHING}{choice.source} recognised 0 of {result.lines:,} lines"
    if sniffed is not None and sniffed.confidence > 0:
        note += f" (sniffing picks {sniffed.source})"
    return dataclasses.replace(result, notes=(*result.notes, note))


def forced_notes(sources: dict[str, SourceChoice]) -> tuple[str, ...]:
    """Run warnings for the files whose forced reader recognised none of their lines."""
    out = []
    for path, choice in sources.items():
        for part in choice.reason.split("; "):
            if part.startswith(FORCED_NOTHING):
                out.append(f"Warning: {path}: {part}")
    return tuple(out)


__all__ = ["forced_note", "forced_notes", "FORCED_NOTHING"]
