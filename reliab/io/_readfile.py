"""Choosing a file's reader and reading the file: the per-file step of every ingest engine.

:func:`choose_source` takes the reader named by ``source=`` or the hand-over manifest, else
sniffs (every registered parser scores the file's name and first lines; the highest score
wins, ties go to the parser registered first).  The in-process loop of :func:`reliab.ingest`,
the incremental store and the Dask tasks all read through :func:`read_file`, so each gives
the same :class:`~reliab.io._registry.FileResult` for the same file.
"""

from __future__ import annotations

import dataclasses
import inspect
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import zstandard

from reliab.errors import InputFileError, ParseError, UnknownFormatError
from reliab.io._files import read_head, read_start
from reliab.io._forced import FORCED_NOTHING
from reliab.io._hosttables import canonical_tables
from reliab.io._lines import quarantine_frame
from reliab.io._options import accepted_by, reader_options
from reliab.io._quarantine import check_limit, quarantine_limit
from reliab.io._registry import FileResult, Parser, get_parser, options_for, parsers
from reliab.io._registry import sources as live_sources
from reliab.io._result import SourceChoice
from reliab.io._unread import (
    BINARY,
    EMPTY,
    OPENED_NOT_READ,
    TAR_REASON,
    UNRECOGNIZED,
    binary_kind,
    encoding_note,
    magic_kind,
    not_read,
)

__all__ = ["UNREADABLE", "check_arguments", "choose_source", "read_file", "canonical_result", "failed_file",
           "forced_note"]

#: source name of a file of which not one byte can be read (one quarantined pseudo-line)
UNREADABLE = "unreadable"
_SNIFF_LINES = 20


def _sniff(path: Path, strict: bool = False) -> SourceChoice:
    """Best parser for ``path``; ``empty``, ``binary`` or ``unrecognized`` when there is none."""
    first = read_start(path, _SNIFF_LINES)
    if not first:
        return SourceChoice(EMPTY, 0.0, "empty file: nothing to read")
    container = magic_kind(first.data)
    if container is not None:
        return _binary(path, container, strict)
    scores: list[tuple[float, int, Parser]] = []
    name = str(path)
    for i, parser in enumerate(parsers()):
        try:
            score = float(parser.sniff(name, first))
        except Exception:  # noqa: BLE001 - a sniffer that fails on odd text just does not claim it
            score = 0.0
        scores.append((score, -i, parser))
    scores.sort(key=lambda s: (s[0], s[1]), reverse=True)
    best = scores[0]
    if best[0] <= 0:
        return _no_reader(path, strict)
    others = ", ".join(f"{p.name}={s:.2f}" for s, _, p in scores[1:] if s > 0)
    reason = f"sniffed: {best[2].name}={best[0]:.2f}" + (f" (also {others})" if others else "")
    return SourceChoice(best[2].name, best[0], reason)


def _no_reader(path: Path, strict: bool) -> SourceChoice:
    """The ``binary`` or ``unrecognized`` choice of a file no sniffer claims (strict: raise)."""
    kind = binary_kind(read_head(path, 8192))
    if kind is not None:
        return _binary(path, kind, strict)
    reason = (f"no reader recognises this file (tried {', '.join(p.name for p in parsers())});"
              " pass source= or name its source in reliab.toml")
    if strict:
        raise UnknownFormatError(f"{path}: {reason}")
    return SourceChoice(UNRECOGNIZED, 0.0, reason)


def _binary(path: Path, kind: str, strict: bool) -> SourceChoice:
    """The ``binary`` choice of a file of binary content ``kind`` (strict: raise)."""
    reason = TAR_REASON if kind == "tar archive" else f"{kind}: no reader takes binary content"
    if strict:
        raise UnknownFormatError(f"{path}: {reason}")
    return SourceChoice(BINARY, 0.0, reason)


def _takes_any(read: Callable[..., Any]) -> bool:
    """Whether ``read`` takes any keyword (``**kwargs``)."""
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(read).parameters.values())


def check_arguments(source: str | None, options: dict[str, Any]) -> None:
    """Fail early on a ``source`` that names no parser or an option no parser accepts.

    An option given with a forced ``source`` must be one of that reader's: it would
    otherwise drop it silently (``--columns`` to ``sacct``).

    Raises
    ------
    UnknownFormatError
        ``source`` names no registered parser.
    TypeError
        An option that no parser accepts, or that the forced reader does not.
    """
    if source is not None:
        try:
            get_parser(source)
        except KeyError as exc:
            raise UnknownFormatError(str(exc.args[0])) from None
    check_limit(options.get("quarantine_limit"))
    if not any(_takes_any(fn) for fn in [*(p.read for p in parsers()), *(s.read for s in live_sources())]):
        accepted = set(reader_options())
        unknown = sorted(set(options) - accepted - {"quarantine_limit"})  # read by read_file
        if unknown:
            raise TypeError(f"ingest() got option(s) {unknown} that no reader accepts;"
                            f" accepted: {', '.join(sorted(accepted))}")
    if source is None or _takes_any(get_parser(source).read):
        return
    taken = accepted_by(source)
    extra = sorted(set(options) - taken - {"quarantine_limit"})
    if extra:
        raise TypeError(f"source {source!r} takes no option(s) {', '.join(extra)};"
                        f" it takes: {', '.join(sorted(taken)) or 'none'}")


def choose_source(path: Path, source: str | None = None, strict: bool = False,
                  why: str = "forced by source=") -> SourceChoice:
    """The parser that reads ``path``: forced by ``source``, else sniffed.

    Never raises unless ``strict``: an empty file is ``empty``, a file no parser
    recognises ``unrecognized`` or ``binary``, and a file whose start cannot be read (or
    whose sniffing fails) is :data:`UNREADABLE` with the error as its reason.

    Raises
    ------
    UnknownFormatError
        With ``strict=True``, no parser recognises the file.
    InputFileError
        With ``strict=True``, the start of the file cannot be read.
    """
    if source is not None:
        return SourceChoice(source, 1.0, why, forced=True)
    try:
        return _sniff(path, strict)
    except UnknownFormatError:  # raised only when strict
        raise
    except InputFileError as exc:
        if strict:
            raise
        return SourceChoice(UNREADABLE, 0.0, str(exc))
    except Exception as exc:  # noqa: BLE001 - any failure to open the file is this file's row
        if strict:
            raise InputFileError(f"{path}: cannot read the start of the file ({type(exc).__name__}: {exc})") from exc
        return SourceChoice(UNREADABLE, 0.0, f"cannot read the start of the file ({type(exc).__name__}: {exc})")


def failed_file(path: str, source: str, reason: str) -> FileResult:
    """A file that could not be read at all: one malformed pseudo-line at lineno 0."""
    quarantine = quarantine_frame([(path, 0, source, reason, None)])
    return FileResult(path=path, source=source, lines=1, parsed=0, irrelevant=0, malformed=1,
                      quarantine=quarantine, reason=reason)


def read_file(path: str | os.PathLike[str], choice: SourceChoice,
              options: dict[str, Any] | None = None, strict: bool = False) -> FileResult:
    """Read one file with the parser of ``choice``: the per-file step of every driver.

    Whatever goes wrong inside the reader becomes this file's accounting row (one
    quarantined pseudo-line at ``lineno`` 0 naming the error), unless ``strict``.

    Parameters
    ----------
    path : path
        The file.
    choice : SourceChoice
        From :func:`choose_source`; ``empty``, ``binary`` and ``unrecognized`` choices give
        a row with the file's lines counted as irrelevant, an :data:`UNREADABLE` choice one
        quarantined pseudo-line.
    options : dict, optional
        Parser options; each reader gets those it accepts.
    strict : bool
        Raise on the first malformed line or broken file instead of quarantining.
    """
    name = path if isinstance(path, str) else os.fsdecode(os.fspath(path))
    if choice.source in OPENED_NOT_READ:
        return not_read(name, choice.source, choice.reason)
    if choice.source == UNREADABLE:
        return failed_file(name, UNREADABLE, choice.reason)
    parser = get_parser(choice.source)
    kwargs = options_for(parser.read, {**(options or {}), "strict": strict})
    try:
        with quarantine_limit((options or {}).get("quarantine_limit")):
            return canonical_result(forced_note(encoding_note(parser.read(name, **kwargs)), choice))
    except (ParseError, InputFileError) as exc:
        if strict and isinstance(exc, ParseError) and exc.origin is None:
            raise ParseError(f"{name}: {exc.message}") from exc
        if strict:
            raise
        return failed_file(name, choice.source, str(exc))
    except Exception as exc:  # noqa: BLE001 - per-file isolation: the run goes on
        if strict:
            raise InputFileError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        kind = "unreadable" if isinstance(exc, _BROKEN_STREAM) else "reader failed"
        return failed_file(name, choice.source, f"{kind} ({type(exc).__name__}: {exc})")


def canonical_result(result: FileResult) -> FileResult:
    """``result`` with its host names made canonical (:mod:`reliab.io._hosttables`)."""
    tables = canonical_tables(result.tables)
    return result if tables is None else dataclasses.replace(result, tables=tables)


#: exceptions that mean "this file's bytes cannot be decoded", whatever the parser
_BROKEN_STREAM = (EOFError, zlib.error, lzma.LZMAError, zstandard.ZstdError, OSError, UnicodeDecodeError,
                  pd.errors.ParserError, pd.errors.EmptyDataError)


def forced_note(result: FileResult, choice: SourceChoice) -> FileResult:
    """``result`` with a note when the forced reader of ``choice`` recognised none of its lines.

    A reader named with ``source=`` (or by the manifest) that parses no line of a file with
    lines, and whose format sniffing does not recognise in the file either, has most likely
    been given a file of another format; the note names what sniffing would choose.  A file
    sniffing gives the same reader (a log of that format with no failure lines) is not noted.
    """
    if not choice.forced or result.parsed or not result.lines or result.reason is not None:
        return result
    try:
        sniffed: SourceChoice | None = _sniff(Path(result.path))
    except Exception:  # noqa: BLE001 - the hint is optional; the note stands without it
        sniffed = None
    if sniffed is not None and sniffed.source == choice.source:
        return result
    note = f"{FORCED_NOTHING}{choice.source} recognised 0 of {result.lines:,} lines"
    if sniffed is not None and sniffed.confidence > 0:
        note += f" (sniffing picks {sniffed.source})"
    return dataclasses.replace(result, notes=(*result.notes, note))
