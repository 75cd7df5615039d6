"""Parser registry: the small extension point of the ingest layer.

A parser is registered with :func:`register_parser`; it knows how to *sniff* a file (say
whether it recognises the first lines and the file name) and how to *read* one file into a
:class:`FileResult`.  The registry knows nothing about any log format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pandas as pd

#: (path, first decoded lines) -> confidence in [0, 1]; 0 means "not mine".
Sniffer = Callable[[str, Sequence[str]], float]


@dataclass(frozen=True)
class FileResult:
    """What one parser made of one file, with its line accounting.

    The identity ``lines == parsed + irrelevant + malformed`` always holds; malformed lines
    are listed in ``quarantine`` (columns path, lineno, source, reason, text).
    """

    path: str
    source: str
    lines: int
    parsed: int
    irrelevant: int
    malformed: int
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    quarantine: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    #: why the file was set aside (not read, or read no further), ``None`` for a file read
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.lines != self.parsed + self.irrelevant + self.malformed:
            raise AssertionError(
                f"{self.path}: accounting broken: {self.lines} lines != {self.parsed} parsed"
                f" + {self.irrelevant} irrelevant + {self.malformed} malformed"
            )


#: (path, options) -> FileResult
Reader = Callable[..., FileResult]


@dataclass(frozen=True)
class Parser:
    """A registered source format."""

    name: str
    read: Reader
    sniff: Sniffer
    table: str
    summary: str
    lines: bool = True


_PARSERS: dict[str, Parser] = {}


def register_parser(name: str, *, sniff: Sniffer, table: str = "signals",
                    lines: bool = True) -> Callable[[Reader], Reader]:
    """Register ``read(path, **options) -> FileResult`` as the reader of source ``name``.

    Parameters
    ----------
    name : str
        Source name used by ``ingest(..., source=name)`` and in the ``source`` column.
    sniff : callable
        ``sniff(path, first_lines) -> float`` confidence that the file is of this format.
    table : str
        The canonical table the parser mainly produces (``signals``, ``jobs``, ``telemetry``).
    lines : bool
        Whether a file of this format is a sequence of newline-ended lines (so that a last
        line without newline may be half written); ``False`` for Parquet, pickles, JSON.
    """

    def decorator(fn: Reader) -> Reader:
        if name in _PARSERS:
            raise ValueError(f"a parser named {name!r} is already registered")
        doc = (fn.__doc__ or "").strip().splitlines()
        _PARSERS[name] = Parser(name=name, read=fn, sniff=sniff, table=table, summary=doc[0] if doc else "",
                                lines=lines)
        return fn

    return decorator


def is_line_format(name: str) -> bool:
    """Whether source ``name`` reads newline-ended lines (unknown names: assumed so)."""
    parser = _PARSERS.get(name)
    return parser.lines if parser is not None else True


def get_parser(name: str) -> Parser:
    """The parser registered as ``name``; ``KeyError`` lists the known names."""
    try:
        return _PARSERS[name]
    except KeyError:
        known = ", ".join(sorted(_PARSERS)) or "(none)"
        raise KeyError(f"no parser for source {name!r}; known sources: {known}") from None


def parsers() -> tuple[Parser, ...]:
    """All registered parsers, in registration order."""
    return tuple(_PARSERS.values())


#: (url, **options) -> one FileResult per chunk read (its ``path`` names the chunk, e.g. a URL)
SourceReader = Callable[..., Iterable[FileResult]]


@dataclass(frozen=True)
class LiveSource:
    """A registered non-file source: paths ``<scheme>://…`` are handed to ``read``."""

    scheme: str
    read: SourceReader
    summary: str


_SOURCES: dict[str, LiveSource] = {}
#: ``scheme://`` at the start of a path argument: a live source, not a file
URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def register_source(scheme: str) -> Callable[[SourceReader], SourceReader]:
    """Register ``read(url, *, strict=False, **options)`` as the handler of ``scheme://`` paths.

    The seam for sources that are not files (a Slurm database, a Prometheus server): a path
    given to :func:`reliab.ingest` that starts with ``scheme://`` goes to ``read``, which
    yields one :class:`FileResult` per chunk it read (its ``path`` names the chunk, e.g. the
    URL with its time window, and is the chunk's accounting row).  ``read``'s keyword-only
    parameters are per-source options like a file reader's (CLI flags, manifest keys).
    """
    scheme = scheme.lower()

    def decorator(fn: SourceReader) -> SourceReader:
        if scheme in _SOURCES:
            raise ValueError(f"a source for scheme {scheme!r} is already registered")
        doc = (fn.__doc__ or "").strip().splitlines()
        _SOURCES[scheme] = LiveSource(scheme, fn, doc[0] if doc else "")
        return fn

    return decorator


def url_scheme(path: object) -> str | None:
    """The lower-cased scheme of a ``scheme://…`` path argument, else ``None``.

    A transport suffix is dropped: ``prometheus+https://…`` is a ``prometheus`` path.
    """
    match = URL.match(path) if isinstance(path, str) else None
    return match.group(1).lower().split("+", 1)[0] if match else None


def get_source(scheme: str) -> LiveSource:
    """The live source registered for ``scheme``; ``KeyError`` lists the known schemes."""
    try:
        return _SOURCES[scheme.lower()]
    except KeyError:
        known = ", ".join(f"{s}://" for s in sorted(_SOURCES)) or "none registered"
        raise KeyError(f"no source handles {scheme}:// paths (known: {known})") from None


def sources() -> tuple[LiveSource, ...]:
    """All registered live sources, in registration order."""
    return tuple(_SOURCES.values())


def options_for(fn: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``options`` that ``fn`` accepts as keyword arguments."""
    try:
        names = _keywords(fn)
    except TypeError:  # an unhashable callable: looked up each time
        names = _keywords.__wrapped__(fn)
    if names is None:
        return dict(options)
    return {k: v for k, v in options.items() if k in names}


@lru_cache(maxsize=256)
def _keywords(fn: Callable[..., Any]) -> frozenset[str] | None:
    """Parameter names of ``fn`` (``None`` if it takes ``**kwargs``), looked up once per reader."""
    import inspect

    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)
