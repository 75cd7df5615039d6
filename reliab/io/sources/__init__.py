"""Live sources: locations of the form ``scheme://…`` read from a running system.

Where a file reader turns one file into a :class:`~reliab.io._registry.FileResult`, a live
source turns a location such as ``slurm://`` (the accounting database, through ``sacct``) or
``prometheus://host:9090`` (``/api/v1/query_range``) into one FileResult *per query it ran*:
its ``path`` is the URL of that query (for example ``slurm://?start=…&end=…``), so the
accounting has one row per chunk, the quarantine names the query and the position in its
answer, and :func:`reliab.ingest` assembles the same canonical tables as from files.

A source is registered with :func:`register_source`; its reader takes the location first and
options as keywords, and raises :class:`~reliab.errors.SourceError` (one line: location and
cause) when the system cannot be read or the window holds nothing, so nothing partial is
returned.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reliab.errors import UnknownFormatError
from reliab.io._registry import FileResult, options_for
from reliab.io._result import SourceChoice

__all__ = ["register_source", "live_sources", "split_locations", "read_live", "accepted_options",
           "scheme_of", "relabel"]

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9.-]*)(?:\+[A-Za-z0-9.-]+)?://")

#: (location, **options) -> one FileResult per query run
LiveReader = Callable[..., list[FileResult]]


@dataclass(frozen=True)
class LiveSource:
    """A registered live source: the URL scheme it answers and its reader."""

    scheme: str
    read: LiveReader
    summary: str


_SOURCES: dict[str, LiveSource] = {}


def register_source(scheme: str) -> Callable[[LiveReader], LiveReader]:
    """Register ``read(location, **options) -> list[FileResult]`` for ``scheme://`` locations.

    ``scheme+transport://`` (e.g. ``prometheus+https://``) is routed to the same reader.
    """

    def decorator(fn: LiveReader) -> LiveReader:
        if scheme in _SOURCES:
            raise ValueError(f"a live source for {scheme}:// is already registered")
        doc = (fn.__doc__ or "").strip().splitlines()
        _SOURCES[scheme] = LiveSource(scheme, fn, doc[0] if doc else "")
        return fn

    return decorator


def scheme_of(location: object) -> str | None:
    """``'slurm'`` for ``'slurm://…'``, ``'prometheus'`` for ``'prometheus+https://…'``; else None.

    Only ``str`` locations can be URLs: :class:`pathlib.Path` folds ``//`` into ``/``.
    """
    if not isinstance(location, str):
        return None
    m = _URL.match(location)
    return m["scheme"].lower() if m else None


def live_sources() -> pd.DataFrame:
    """Registered live sources: ``scheme`` (as in ``scheme://``) and a one-line ``summary``."""
    rows = [(f"{s.scheme}://", s.summary.replace("``", "")) for s in _SOURCES.values()]
    return pd.DataFrame(rows, columns=["scheme", "summary"]).astype("string")


def split_locations(paths: Any) -> tuple[list[str], list[Any]]:
    """Split what :func:`reliab.ingest` was given into live locations and file paths.

    Raises
    ------
    UnknownFormatError
        A ``scheme://`` location whose scheme no live source answers.
    """
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    live: list[str] = []
    files: list[Any] = []
    for item in items:
        scheme = scheme_of(item)
        if scheme is None:
            files.append(item)
        elif scheme not in _SOURCES:
            known = ", ".join(f"{s}://" for s in sorted(_SOURCES))
            raise UnknownFormatError(f"{item}: no live source for {scheme}:// (known: {known})")
        else:
            live.append(str(item))
    return live, files


def accepted_options() -> set[str]:
    """Keyword options that some live source accepts (``strict`` excluded)."""
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    out: set[str] = set()
    for src in _SOURCES.values():
        params = list(inspect.signature(src.read).parameters.values())[1:]
        out |= {p.name for p in params if p.kind in named}
    return out - {"strict"}


def read_live(locations: Iterable[str], options: dict[str, Any],
              strict: bool = False) -> tuple[list[FileResult], dict[str, SourceChoice]]:
    """Run every live location with the options its reader accepts.

    Returns the per-query results in order and, per query URL, the :class:`SourceChoice`
    (confidence 1.0, the reason naming the live source and the reader's notes).
    """
    results: list[FileResult] = []
    choices: dict[str, SourceChoice] = {}
    for location in locations:
        scheme = scheme_of(location)
        src = _SOURCES[str(scheme)]
        got = src.read(location, **options_for(src.read, {**options, "strict": strict}))
        for r in got:
            choices[r.path] = SourceChoice(r.source, 1.0, f"live source {scheme}://, read by {r.source}")
        results.extend(got)
    return results, choices


def relabel(result: FileResult, url: str) -> FileResult:
    """``result`` of a capture file, re-pointed at ``url``: path, origins and quarantine paths."""
    old = len(result.path)

    def moved(frame: pd.DataFrame, col: str) -> pd.DataFrame:
        if not len(frame):
            return frame
        out = frame.copy()
        out[col] = (url + out[col].astype(str).str.slice(old)).astype(frame[col].dtype)
        return out

    tables = {name: moved(t, "origin") if "origin" in t.columns else t for name, t in result.tables.items()}
    quarantine = None if result.quarantine is None else moved(result.quarantine, "path")
    return dataclasses.replace(result, path=url, tables=tables, quarantine=quarantine)


# importing the readers registers them
from reliab.io.sources import journald, prometheus, slurm  # noqa: E402, F401
