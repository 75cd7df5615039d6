"""Parser registry: the small extension point of the ingest layer.

A parser is registered with :func:`register_parser`; it knows how to *sniff* a file (say
whether it recognises the first lines and the file name) and how to *read* one file into a
:class:`FileResult`.  The registry knows nothing about any log format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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


_PARSERS: dict[str, Parser] = {}


def register_parser(name: str, *, sniff: Sniffer, table: str = "signals") -> Callable[[Reader], Reader]:
    """Register ``read(path, **options) -> FileResult`` as the reader of source ``name``.

    Parameters
    ----------
    name : str
        Source name used by ``ingest(..., source=name)`` and in the ``source`` column.
    sniff : callable
        ``sniff(path, first_lines) -> float`` confidence that the file is of this format.
    table : str
        The canonical table the parser mainly produces (``signals``, ``jobs``, ``telemetry``).
    """

    def decorator(fn: Reader) -> Reader:
        if name in _PARSERS:
            raise ValueError(f"a parser named {name!r} is already registered")
        doc = (fn.__doc__ or "").strip().splitlines()
        _PARSERS[name] = Parser(name=name, read=fn, sniff=sniff, table=table, summary=doc[0] if doc else "")
        return fn

    return decorator


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


def options_for(fn: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``options`` that ``fn`` accepts as keyword arguments."""
    import inspect

    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(options)
    return {k: v for k, v in options.items() if k in params}
