"""The warning of a forced reader that recognised none of a file's lines.

A reader named with ``source=`` (or by the hand-over manifest) is not sniffed, so nothing
checks that the file is of its format: forcing the kernel reader on a BlueGene/L RAS log
counts every line irrelevant and finds no alert.  :func:`reliab.io._readfile.forced_note` notes
such a file (its accounting reason) and :func:`forced_notes` turns the notes into run warnings, which
the CLI prints.
"""

from __future__ import annotations

from reliab.io._result import SourceChoice

#: the start of the note a forced reader that recognised no line leaves on its file
FORCED_NOTHING = "the forced reader "


def forced_notes(sources: dict[str, SourceChoice]) -> tuple[str, ...]:
    """Run warnings for the files whose forced reader recognised none of their lines."""
    out = []
    for path, choice in sources.items():
        for part in choice.reason.split("; "):
            if part.startswith(FORCED_NOTHING):
                out.append(f"Warning: {path}: {part}")
    return tuple(out)


__all__ = ["forced_notes", "FORCED_NOTHING"]
