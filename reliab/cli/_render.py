"""Plain-text output of the CLI: readable piped, narrow or in a log file (no markup, no boxes).

Paths are shown relative to the folder the user gave, and text that cannot be printed
(file names of non-UTF-8 bytes, control characters) is shown with backslash escapes, never
an encoding error or a terminal control sequence: every line goes through :func:`echo`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import typer

from reliab.io import hide_password, url_scheme

#: C0 controls but tab and newline, DEL and the C1 controls (ECMA-48 sections 5.2 and 5.3;
#: ESC and CSI start the sequences that move the cursor, retitle the window or, with xterm's
#: OSC 52, write the clipboard)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match[0]):02x}"


def printable(text: object) -> str:
    """``text`` safe for any stream and terminal, the one filter of everything the CLI prints.

    Lone surrogates and undecodable bytes become ``\\xNN``; control characters other than
    newline and tab become visible ``\\xNN`` escapes (a file name, log line or server message
    cannot drive the terminal); a ``scheme://user:password@`` shows ``user:***@``.
    """
    shown = str(text).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return hide_password(_CONTROLS.sub(_visible, shown))


def echo(text: object = "", *, err: bool = False) -> None:
    """Print one message of the CLI through :func:`printable` (stderr with ``err``)."""
    typer.echo(printable(text), err=err)


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


__all__ = ["printable", "echo", "relative", "folder_of", "table"]
