"""The shared line driver: stream a file, call a parser per line, keep the accounting.

Every physical line ends up counted exactly once as *parsed* (it produced one or more
rows), *irrelevant* (recognised as noise, a header or a continuation) or *malformed*
(the parser raised :class:`~reliab.errors.ParseError`; the line goes to quarantine with
``file:line`` and the reason).  Lines are never held in memory all at once.
"""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, ParseError
from reliab.ingest._io import open_binary
from reliab.ingest._registry import FileResult

MAX_LINE_BYTES = 1 << 20  # longer lines are quarantined, not parsed


@dataclass
class LineContext:
    """Mutable per-file state handed to ``parse_line``: where we are and what we know."""

    path: str
    source: str
    lineno: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        return f"{self.path}:{self.lineno}"


Row = dict[str, Any]
#: parse_line(text, ctx) -> row | list of rows | None (irrelevant); raises ParseError if malformed
LineParser = Callable[[str, LineContext], Row | list[Row] | None]


def scan_lines(
    path: str,
    source: str,
    parse_line: LineParser,
    *,
    table: str = "signals",
    literals: Iterable[bytes] | None = None,
    options: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
    strict: bool = False,
    finish: Callable[[list[Row], LineContext], list[Row]] | None = None,
) -> FileResult:
    """Run ``parse_line`` over every line of ``path`` and account for each one.

    Parameters
    ----------
    literals : iterable of bytes, optional
        Literal prefilter: a line containing none of them is counted irrelevant without
        being decoded or parsed (the biggest speed lever on large logs).
    strict : bool
        Raise the first :class:`ParseError` (with its origin) instead of quarantining.
    finish : callable, optional
        Post-processes the rows once the whole file is read (e.g. to resolve years).
    """
    ctx = LineContext(path=str(path), source=source, options=dict(options or {}), state=dict(state or {}))
    lits = tuple(literals) if literals else None
    rows: list[Row] = []
    quarantine: list[tuple] = []
    lines = parsed = irrelevant = malformed = 0
    try:
        with open_binary(path) as fh:
            for lines, raw in enumerate(fh, 1):  # noqa: B007 - lines is the running count
                ctx.lineno = lines
                if lits is not None and not any(lit in raw for lit in lits):
                    irrelevant += 1
                    continue
                if len(raw) > MAX_LINE_BYTES:
                    reason = f"line of {len(raw)} bytes exceeds the {MAX_LINE_BYTES}-byte limit"
                    if strict:
                        raise ParseError(reason, _origin(ctx, raw[:200]))
                    quarantine.append((ctx.path, lines, source, reason, raw[:200].decode("utf-8", "replace")))
                    malformed += 1
                    continue
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                try:
                    out = parse_line(text, ctx)
                except ParseError as exc:
                    if strict:
                        raise ParseError(exc.message, _origin(ctx, raw)) from None
                    quarantine.append((ctx.path, lines, source, exc.message, text[:2000]))
                    malformed += 1
                    continue
                if out is None:
                    irrelevant += 1
                elif isinstance(out, list):
                    for row in out:
                        row.setdefault("origin", ctx.origin)
                    rows.extend(out)
                    parsed += 1
                else:
                    out.setdefault("origin", ctx.origin)
                    rows.append(out)
                    parsed += 1
    except (EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
        # truncated or corrupt compressed stream: keep what was read, quarantine the rest
        reason = f"stream ended abnormally after line {lines}: {exc}"
        if strict:
            raise InputFileError(f"{path}: {reason}") from exc
        quarantine.append((ctx.path, lines + 1, source, reason, None))
        malformed += 1
        lines += 1
    if finish is not None:
        rows = finish(rows, ctx)
    frame = schema.conform(pd.DataFrame(rows), table) if rows else schema.empty(table)
    return FileResult(
        path=ctx.path, source=source, lines=lines, parsed=parsed, irrelevant=irrelevant,
        malformed=malformed, tables={table: frame}, quarantine=quarantine_frame(quarantine),
    )


def _origin(ctx: LineContext, raw: bytes):
    from reliab.errors import Origin

    return Origin(ctx.path, ctx.lineno, raw.decode("utf-8", "replace"))


def quarantine_frame(rows: list[tuple]) -> pd.DataFrame:
    """Quarantine rows ``(path, lineno, source, reason, text)`` as a QUARANTINE table."""
    if not rows:
        return schema.empty("quarantine")
    df = pd.DataFrame(rows, columns=["path", "lineno", "source", "reason", "text"])
    return schema.conform(df, "quarantine")
