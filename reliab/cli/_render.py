"""Plain-text output of the CLI: readable piped, narrow or in a log file (no markup, no boxes).

Paths are shown relative to the folder the user gave, and text that cannot be printed
(file names of non-UTF-8 bytes) is shown with backslash escapes, never an encoding error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from reliab.io._registry import url_scheme


def printable(text: object) -> str:
    """``text`` safe for any stream: lone surrogates and undecodable bytes as ``\\xNN``."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def relative(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the first given folder that holds it (or the given file's name)."""
    if url_scheme(path) is not None:
        return path
    p = Path(path)
    for root in roots:
        r = Path(root)
        if p == r:
            return p.name or str(p)
        try:
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return str(p)


def folder_of(path: str, roots: Sequence[str]) -> str:
    """The folder of ``path`` as shown in the roll-up (``.`` for the given folder itself)."""
    if url_scheme(path) is not None:
        return path.split("?", 1)[0]
    rel = relative(path, roots)
    parent = os.path.dirname(rel)
    return parent or "."


def table(header: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[str] = ()) -> str:
    """Columns separated by two spaces; ``numeric`` columns right-aligned with thousands commas."""
    num = set(numeric)
    cells = [[printable(f"{v:,}" if isinstance(v, int) and h in num else v) for h, v in zip(header, row, strict=True)]
             for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if h in num else v.ljust(w) for h, v, w in zip(header, values, widths, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(header), *(line(r) for r in cells)])


__all__ = ["printable", "relative", "folder_of", "table"]
