"""Raw files -> canonical tables: the ingest driver.

:func:`ingest` walks the given paths, picks a parser per file by sniffing (every registered
parser scores the file's name and first lines; the highest score wins, ties go to the
parser registered first), reads each file with the shared line accounting, concatenates
and validates the tables, and attributes job interruptions with
:func:`reliab.taxonomy.attribute`.  :func:`available_sources` lists the parsers.

Parsers register themselves on import (:func:`reliab.io._registry.register_parser`);
the imports below fix the registration order used to break sniffing ties.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

# importing the formats package registers every parser, in a fixed order
import reliab.io.formats  # noqa: F401
from reliab import schema
from reliab.errors import InputFileError, ParseError, ReliabError, UnknownFormatError
from reliab.io._files import head_lines
from reliab.io._lines import quarantine_frame
from reliab.io._quarantine import quarantine_limit
from reliab.io._registry import FileResult, Parser, get_parser, options_for, parsers
from reliab.io._result import IngestResult, SourceChoice

__all__ = ["ingest", "IngestResult", "SourceChoice", "available_sources", "discover"]

#: documentation files that sit beside data and are never read as logs
_DOC_PREFIXES = ("readme", "license", "licence", "copying", "notice")
_DOC_NAMES = ("source.md", "sources.md", "cluster.json", "regenerate.py")
_SNIFF_LINES = 20
#: source name of a file of which not one byte can be read (one quarantined pseudo-line)
UNREADABLE = "unreadable"


def available_sources() -> pd.DataFrame:
    """Registered parsers: ``name``, the ``table`` each mainly produces, a one-line ``summary``."""
    rows = [(p.name, p.table, p.summary) for p in parsers()]
    return pd.DataFrame(rows, columns=["name", "table", "summary"]).astype("string")


def _skipped(name: str) -> bool:
    low = name.lower()
    return (name.startswith(".") or low in _DOC_NAMES or low.startswith(_DOC_PREFIXES)
            or low.endswith((".py", ".pyc")))


def _walk(root: Path, recursive: bool) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if recursive and d not in ("truth", "__pycache__") and not d.startswith("."))
        for name in sorted(filenames):
            if not _skipped(name):
                yield Path(dirpath) / name


def discover(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
             recursive: bool = True) -> list[Path]:
    """The files ``ingest`` reads for ``paths``, in a deterministic order.

    Directories are walked in sorted order, skipping ``truth/`` folders, hidden files and
    folders, documentation (``SOURCE.md``, ``README*``, ``LICENSE*``…), the fleet facts
    ``cluster.json``, Python sources and ``__pycache__``.  Files named
    explicitly are always read.

    Raises
    ------
    InputFileError
        If a path does not exist.
    """
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise ValueError("ingest needs at least one path")
    seen: dict[Path, None] = {}
    for item in items:
        p = Path(item)
        if not p.exists():
            raise InputFileError(f"{p}: no such file or directory")
        for f in _walk(p, recursive) if p.is_dir() else [p]:
            seen.setdefault(f, None)
    return list(seen)


def _sniff(path: Path) -> SourceChoice | None:
    """Best parser for ``path``; ``None`` for an empty file."""
    first = head_lines(path, _SNIFF_LINES)
    if not first:
        return None
    scores: list[tuple[float, int, Parser]] = []
    for i, parser in enumerate(parsers()):
        try:
            score = float(parser.sniff(str(path), first))
        except (ReliabError, ValueError, UnicodeError, OSError):
            score = 0.0
        scores.append((score, -i, parser))
    scores.sort(key=lambda s: (s[0], s[1]), reverse=True)
    best = scores[0]
    if best[0] <= 0:
        tried = ", ".join(p.name for p in parsers())
        raise UnknownFormatError(f"{path}: no parser recognises this file (tried {tried});"
                                 " pass source= to force one")
    others = ", ".join(f"{p.name}={s:.2f}" for s, _, p in scores[1:] if s > 0)
    reason = f"sniffed: {best[2].name}={best[0]:.2f}" + (f" (also {others})" if others else "")
    return SourceChoice(best[2].name, best[0], reason)


def _check_options(options: dict[str, Any]) -> None:
    accepted: set[str] = set()
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for parser in parsers():
        params = list(inspect.signature(parser.read).parameters.values())
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return
        accepted |= {p.name for p in params[1:] if p.kind in named}
    unknown = sorted(set(options) - accepted - {"quarantine_limit"})  # read by read_file
    if unknown:
        raise TypeError(f"ingest() got option(s) {unknown} that no parser accepts;"
                        f" accepted: {', '.join(sorted(accepted - {'strict'}))}")


def check_arguments(source: str | None, options: dict[str, Any]) -> None:
    """Fail early on a ``source`` that names no parser or an option no parser accepts.

    Raises
    ------
    UnknownFormatError
        ``source`` names no registered parser.
    TypeError
        An option that no parser accepts.
    """
    if source is not None:
        try:
            get_parser(source)
        except KeyError as exc:
            raise UnknownFormatError(str(exc.args[0])) from None
    _check_options(options)


def choose_source(path: Path, source: str | None = None, strict: bool = False) -> SourceChoice | None:
    """The parser that reads ``path``: forced by ``source``, else sniffed.

    Returns ``None`` for an empty file, and a choice named :data:`UNREADABLE` (its reason is
    the error) for a file of which not one byte can be decompressed, unless ``strict``.

    Raises
    ------
    UnknownFormatError
        No parser recognises the file.
    InputFileError
        With ``strict=True``, the start of the file cannot be read.
    """
    if source is not None:
        return SourceChoice(source, 1.0, "forced by source=")
    try:
        return _sniff(path)
    except InputFileError as exc:  # not one byte decompresses: a per-file failure
        if strict:
            raise
        return SourceChoice(UNREADABLE, 0.0, str(exc))


def _failed_file(path: str, source: str, reason: str) -> FileResult:
    """A file that could not be read at all: one malformed pseudo-line at lineno 0."""
    quarantine = quarantine_frame([(path, 0, source, reason, None)])
    return FileResult(path=path, source=source, lines=1, parsed=0, irrelevant=0, malformed=1,
                      quarantine=quarantine)


def read_file(path: str | os.PathLike[str], choice: SourceChoice | None,
              options: dict[str, Any] | None = None, strict: bool = False) -> FileResult:
    """Read one file with the parser of ``choice``: the per-file step of every driver.

    :func:`ingest` calls it in a loop and :func:`reliab.io.distributed.ingest_distributed`
    as one task per file, so both produce the same :class:`FileResult` for the same file.

    Parameters
    ----------
    path : path
        The file.
    choice : SourceChoice or None
        From :func:`choose_source`; ``None`` (empty file) gives an all-zero result and an
        :data:`UNREADABLE` choice one quarantined pseudo-line.
    options : dict, optional
        Parser options; each reader gets those it accepts.
    strict : bool
        Raise on the first malformed line or broken file instead of quarantining.
    """
    name = str(path)
    if choice is None:
        return FileResult(path=name, source="empty", lines=0, parsed=0, irrelevant=0, malformed=0)
    if choice.source == UNREADABLE:
        return _failed_file(name, UNREADABLE, choice.reason)
    parser = get_parser(choice.source)
    kwargs = options_for(parser.read, {**(options or {}), "strict": strict})
    try:
        with quarantine_limit((options or {}).get("quarantine_limit")):
            return parser.read(name, **kwargs)
    except ParseError as exc:
        if strict:
            if exc.origin is None:
                raise ParseError(f"{name}: {exc.message}") from exc
            raise
        return _failed_file(name, choice.source, str(exc))
    except InputFileError as exc:
        if strict:
            raise
        return _failed_file(name, choice.source, str(exc))
    except _BROKEN_STREAM as exc:  # a reader met a corrupt archive or undecodable table
        if strict:
            raise InputFileError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        return _failed_file(name, choice.source, f"unreadable ({type(exc).__name__}: {exc})")


def _broken_stream_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "this file's bytes cannot be decoded", whatever the parser."""
    import lzma
    import zlib

    errors: tuple[type[BaseException], ...] = (EOFError, zlib.error, lzma.LZMAError, OSError,
                                               UnicodeDecodeError, pd.errors.ParserError,
                                               pd.errors.EmptyDataError)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - declared dependency
        pass
    return errors


_BROKEN_STREAM = _broken_stream_errors()


def _conformed(df: pd.DataFrame, table: str) -> bool:
    """Whether ``df`` already is what :func:`schema.conform` would make of it (RangeIndex)."""
    names = [c.name for c in schema.TABLES[table]]
    return (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1
            and list(df.columns[:len(names)]) == names
            and all(df[c.name].dtype == schema.dtype_of(c) for c in schema.TABLES[table]))


def _concat(frames: list[pd.DataFrame], table: str) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return schema.empty(table)
    if len(frames) == 1 and _conformed(frames[0], table):
        return frames[0]  # one file's table, conformed by its reader: no copy
    out = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return schema.conform(out.reset_index(drop=True), table)


def _progress(total: int, enabled: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    """(advance, close) callbacks of an optional rich progress bar."""
    if not enabled:
        return (lambda: None), (lambda: None)
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("ingest", total=total)
    bar.start()
    return (lambda: bar.advance(task)), bar.stop


def ingest(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str | None = None,
    recursive: bool = True,
    strict: bool = False,
    store: str | os.PathLike[str] | None = None,
    rules: Any = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: Any = None,
    progress: bool = False,
    **options: Any,
) -> IngestResult:
    """Read raw log files into validated canonical tables and attribute interruptions.

    Parameters
    ----------
    paths : path, directory, or iterable of them
        Files to read; directories are walked (sorted), skipping ``truth/`` folders,
        hidden files and documentation files (``SOURCE.md``, ``README*``, ``LICENSE*``).
    source : str, optional
        Force one parser (see :func:`available_sources`) instead of sniffing each file.
    recursive : bool
        Walk sub-directories.
    strict : bool
        Raise :class:`~reliab.errors.ParseError` (naming file and line) at the first
        malformed line, and :class:`~reliab.errors.InputFileError` for a broken file;
        by default such lines are quarantined and the run completes.
    store : path, optional
        Incremental mode: a folder that keeps the canonical tables and a ledger of every
        file content read so far (:mod:`reliab.io._store`).  Files already read are
        skipped, grown files and rotated copies (``messages.1``, ``messages.2.gz``,
        ``messages-20240603``) contribute only their new lines, and the result holds the
        *whole* store, attributed afresh.  ``accounting`` then covers this run only (new
        lines per file) with a ``status`` column: new, appended, unchanged or rotated.
    rules, before, after, job_filter
        Passed to :func:`reliab.taxonomy.attribute` (rules file, attribution window
        around the job end, which interrupted jobs to keep).
    progress : bool
        Show a rich progress bar over the files (nothing is printed otherwise).
    **options
        Parser options (``year``, ``tz``, ``boot_time``, ``host``, ``job_id``, column
        mappings…), each passed to the readers that accept it; ``quarantine_limit=N``
        keeps at most N malformed lines per file in full and counts the rest in one
        summary row (default :data:`reliab.io._quarantine.QUARANTINE_LIMIT`).

    Returns
    -------
    IngestResult
        Tables, quarantine, per-file accounting and per-file source choices.

    Raises
    ------
    InputFileError
        A path does not exist (or, with ``strict=True``, a file cannot be read).  Without
        ``strict``, a file that cannot be read at all is accounted as one malformed line
        (quarantined with ``lineno`` 0 and the reason) and the run goes on.
    UnknownFormatError
        No parser recognises a file, or ``source`` names no parser.
    TypeError
        An option that no parser accepts.
    """
    check_arguments(source, options)
    files = discover(paths, recursive=recursive)
    attribution = {"rules": rules, "before": before, "after": after, "job_filter": job_filter}
    if store is not None:
        from reliab.io._store import ingest_into

        return ingest_into(store, files, source=source, strict=strict, options=options,
                           progress=progress, attribution=attribution)
    choices = {str(f): choose_source(f, source, strict) for f in files}
    results: list[FileResult] = []
    advance, close = _progress(len(files), progress)
    try:
        for f in files:
            results.append(read_file(f, choices[str(f)], options, strict))
            advance()
    finally:
        close()
    return assemble(results, choices, **attribution)


def file_tables(results: list[FileResult]) -> dict[str, pd.DataFrame]:
    """Per-file tables concatenated in file order: signals, jobs, telemetry, quarantine."""
    tables = {name: _concat([r.tables.get(name, schema.empty(name)) for r in results], name)
              for name in ("signals", "jobs")}
    tables["telemetry"] = _concat([r.tables["telemetry"] for r in results if "telemetry" in r.tables],
                                  "telemetry")
    tables["quarantine"] = _concat([r.quarantine for r in results if r.quarantine is not None],
                                   "quarantine")
    return tables


def accounting_of(results: list[FileResult]) -> pd.DataFrame:
    """One accounting row per file result (``lines = parsed + irrelevant + malformed``)."""
    if not results:
        return schema.empty("accounting")
    return schema.conform(pd.DataFrame(
        [(r.path, r.source, r.lines, r.parsed, r.irrelevant, r.malformed) for r in results],
        columns=["path", "source", "lines", "parsed", "irrelevant", "malformed"],
    ), "accounting")


def sources_of(results: list[FileResult],
               choices: dict[str, SourceChoice | None]) -> dict[str, SourceChoice]:
    """Per path, the source choice with the parser's notes appended to its reason."""
    sources: dict[str, SourceChoice] = {}
    for r in results:
        choice = choices.get(r.path) or SourceChoice("empty", 0.0, "empty file: nothing to read")
        if r.notes:
            choice = SourceChoice(choice.source, choice.confidence, f"{choice.reason}; {'; '.join(r.notes)}")
        sources[r.path] = choice
    return sources


def assemble(results: list[FileResult], choices: dict[str, SourceChoice | None],
             **attribution: Any) -> IngestResult:
    """Concatenate per-file results (in order), validate, attribute: the IngestResult."""
    return finish(file_tables(results), accounting_of(results), sources_of(results, choices),
                  **attribution)


def finish(tables: dict[str, pd.DataFrame], accounting: pd.DataFrame,
           sources: dict[str, SourceChoice], **attribution: Any) -> IngestResult:
    """Sort signals by time, validate every table and attribute interruptions.

    ``tables`` holds signals, jobs, telemetry and quarantine, already conformed.
    """
    from reliab.taxonomy import attribute

    signals = tables["signals"]
    if not signals["time"].is_monotonic_increasing:  # a stable sort keeps sorted rows as they are
        signals = signals.sort_values("time", kind="stable")
    if not (isinstance(signals.index, pd.RangeIndex) and signals.index.start == 0
            and signals.index.step == 1):
        signals = signals.reset_index(drop=True)
    for name in ("jobs", "telemetry", "quarantine"):
        schema.validate(tables[name], name)
    schema.validate(signals, "signals")
    # conform: the same (Arrow) string backing as every other table, e.g. after a Parquet trip
    interruptions = schema.validate(schema.conform(attribute(signals, tables["jobs"], **attribution),
                                                   "interruptions"), "interruptions")
    return IngestResult(signals=signals, jobs=tables["jobs"], interruptions=interruptions,
                        telemetry=tables["telemetry"], quarantine=tables["quarantine"],
                        accounting=schema.validate(accounting, "accounting"), sources=sources)
