"""Raw files -> canonical tables: the ingest driver and its public API.

:func:`ingest` walks the given paths, picks a parser per file by sniffing (every registered
parser scores the file's name and first lines; the highest score wins, ties go to the
parser registered first), reads each file with the shared line accounting, concatenates
and validates the tables, and attributes job interruptions with
:func:`reliab.taxonomy.attribute`.  :func:`available_sources` lists the parsers.

Parsers register themselves on import (:func:`reliab.ingest._registry.register_parser`);
the imports below fix the registration order used to break sniffing ties.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from reliab import schema
from reliab.errors import InputFileError, ParseError, ReliabError, UnknownFormatError

# importing the parser modules registers their formats
from reliab.ingest import (  # noqa: F401
    flight_recorder,
    gpu_telemetry,
    kernel,
    lanl,
    nccl,
    sel,
    slurm,
    tickets,
)
from reliab.ingest import telemetry as _telemetry_parsers  # noqa: F401
from reliab.ingest._io import head_lines
from reliab.ingest._lines import quarantine_frame
from reliab.ingest._registry import FileResult, Parser, get_parser, options_for, parsers
from reliab.ingest._result import IngestResult, SourceChoice

__all__ = ["ingest", "IngestResult", "SourceChoice", "available_sources"]

#: documentation files that sit beside data and are never read as logs
_DOC_PREFIXES = ("readme", "license", "licence", "copying", "notice")
_DOC_NAMES = ("source.md", "sources.md", "cluster.json", "regenerate.py")
_SNIFF_LINES = 20


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
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise TypeError(f"ingest() got option(s) {unknown} that no parser accepts;"
                        f" accepted: {', '.join(sorted(accepted - {'strict'}))}")


def _failed_file(path: str, source: str, exc: ReliabError) -> FileResult:
    """A file that could not be read at all: one malformed pseudo-line at lineno 0."""
    quarantine = quarantine_frame([(path, 0, source, str(exc), None)])
    return FileResult(path=path, source=source, lines=1, parsed=0, irrelevant=0, malformed=1,
                      quarantine=quarantine)


def _read(path: Path, choice: SourceChoice, options: dict[str, Any], strict: bool) -> FileResult:
    parser = get_parser(choice.source)
    kwargs = options_for(parser.read, {**options, "strict": strict})
    try:
        return parser.read(str(path), **kwargs)
    except ParseError as exc:
        if strict:
            if exc.origin is None:
                raise ParseError(f"{path}: {exc.message}") from exc
            raise
        return _failed_file(str(path), choice.source, exc)
    except InputFileError as exc:
        if strict:
            raise
        return _failed_file(str(path), choice.source, exc)


def _concat(frames: list[pd.DataFrame], table: str) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return schema.empty(table)
    out = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return schema.conform(out.reset_index(drop=True), table)


def _attribute(signals: pd.DataFrame, jobs: pd.DataFrame, notes: list[str],
               **kwargs: Any) -> pd.DataFrame:
    from reliab.taxonomy import attribute

    return schema.validate(attribute(signals, jobs, **kwargs), "interruptions")


def _progress(files: list[Path], enabled: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    """(advance, close) callbacks of an optional rich progress bar."""
    if not enabled:
        return (lambda: None), (lambda: None)
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("ingest", total=len(files))
    bar.start()
    return (lambda: bar.advance(task)), bar.stop


def ingest(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str | None = None,
    recursive: bool = True,
    strict: bool = False,
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
    rules, before, after, job_filter
        Passed to :func:`reliab.taxonomy.attribute` (rules file, attribution window
        around the job end, which interrupted jobs to keep).
    progress : bool
        Show a rich progress bar over the files (nothing is printed otherwise).
    **options
        Parser options (``year``, ``tz``, ``boot_time``, ``host``, ``job_id``, column
        mappings…), each passed to the readers that accept it.

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
    if source is not None:
        try:
            get_parser(source)
        except KeyError as exc:
            raise UnknownFormatError(str(exc.args[0])) from None
    _check_options(options)
    files = discover(paths, recursive=recursive)
    choices: dict[str, SourceChoice | None] = {}
    unreadable: dict[str, InputFileError] = {}
    for f in files:
        if source is not None:
            choices[str(f)] = SourceChoice(source, 1.0, "forced by source=")
            continue
        try:
            choices[str(f)] = _sniff(f)
        except InputFileError as exc:  # not one byte decompresses: a per-file failure
            if strict:
                raise
            unreadable[str(f)] = exc
            choices[str(f)] = SourceChoice("unreadable", 0.0, str(exc))
    results: list[FileResult] = []
    advance, close = _progress(files, progress)
    try:
        for f in files:
            choice = choices[str(f)]
            if choice is None:
                results.append(FileResult(path=str(f), source="empty", lines=0, parsed=0,
                                          irrelevant=0, malformed=0))
            elif str(f) in unreadable:
                results.append(_failed_file(str(f), choice.source, unreadable[str(f)]))
            else:
                results.append(_read(f, choice, options, strict))
            advance()
    finally:
        close()
    return _assemble(results, choices, rules=rules, before=before, after=after, job_filter=job_filter)


def _assemble(results: list[FileResult], choices: dict[str, SourceChoice | None],
              **attribution: Any) -> IngestResult:
    tables = {name: _concat([r.tables.get(name, schema.empty(name)) for r in results], name)
              for name in ("signals", "jobs")}
    signals = tables["signals"].sort_values("time", kind="stable").reset_index(drop=True)
    telemetry = _concat([r.tables["telemetry"] for r in results if "telemetry" in r.tables], "telemetry")
    for name, frame in (("signals", signals), ("jobs", tables["jobs"]), ("telemetry", telemetry)):
        schema.validate(frame, name)
    quarantine = _concat([r.quarantine for r in results if r.quarantine is not None], "quarantine")
    accounting = schema.conform(pd.DataFrame(
        [(r.path, r.source, r.lines, r.parsed, r.irrelevant, r.malformed) for r in results],
        columns=["path", "source", "lines", "parsed", "irrelevant", "malformed"],
    ), "accounting") if results else schema.empty("accounting")
    notes: list[str] = []
    interruptions = _attribute(signals, tables["jobs"], notes, **attribution)
    sources: dict[str, SourceChoice] = {}
    for r in results:
        choice = choices.get(r.path) or SourceChoice("empty", 0.0, "empty file: nothing to read")
        if r.notes:
            choice = SourceChoice(choice.source, choice.confidence, f"{choice.reason}; {'; '.join(r.notes)}")
        sources[r.path] = choice
    return IngestResult(signals=signals, jobs=tables["jobs"], interruptions=interruptions,
                        telemetry=telemetry, quarantine=quarantine,
                        accounting=schema.validate(accounting, "accounting"),
                        sources=sources, notes=tuple(notes))


class _CallableModule(types.ModuleType):
    """Lets ``reliab.ingest(paths)`` work even after ``import reliab.ingest``.

    The public function and this package share a name; once the package is imported,
    Python binds ``reliab.ingest`` to the module, so the module forwards calls.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> IngestResult:
        return ingest(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
