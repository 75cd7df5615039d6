"""What one Dask task of a distributed ingest does: the worker side of :mod:`reliab.io.distributed`.

Every function here runs on a worker and reads through the same per-file step as the local
run (:func:`reliab.io._readfile.choose_source`, :func:`reliab.io._readfile.read_file`), so a
file gives the same :class:`~reliab.io._registry.FileResult` wherever it is read: a batch of
files (:func:`read_batch`), or a large file's byte ranges (:func:`collect_span` per range,
then :func:`read_spans`, :mod:`reliab.io._ranges`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reliab.io import _ranges
from reliab.io._merge import file_tables
from reliab.io._partitioned import write_parts
from reliab.io._readfile import choose_source, read_file
from reliab.io._registry import FileResult
from reliab.io._result import SourceChoice

__all__ = ["Item", "TaskOutput", "Mode", "read_batch", "collect_span", "read_spans", "COMBINE"]

#: ``output`` value of a task that returns its files' tables concatenated
COMBINE = "\0combine"


@dataclass(frozen=True)
class Item:
    """One file to read: its path, the source forced for it (and why) and its reader options."""

    path: str
    forced: str | None
    why: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskOutput:
    """What a task sends back: per file its result and source choice, and its tables.

    ``output`` mode: the tables are in the Parquet ``parts`` written, the results carry the
    accounting only.  ``combine`` mode: the task's last result carries its files' tables
    concatenated in file order (one frame per table crosses the network, not one per
    file), the others the accounting only.  Otherwise each result keeps its own tables.
    """

    results: list[FileResult]
    choices: list[SourceChoice]
    parts: list[dict[str, Any]] = field(default_factory=list)


#: what a task does with its tables: write them ("output" folder given), concatenate them, or keep them per file
Mode = str | None


def _finish(results: list[FileResult], choices: list[SourceChoice], output: Mode, run: str,
            task: int) -> TaskOutput:
    if output is None:
        return TaskOutput(results, choices)
    light = [replace(r, tables={}, quarantine=None) for r in results]
    if output == COMBINE:  # the files are consecutive inputs: their joined tables stand at the last one
        tables = file_tables(results)
        quarantine = tables.pop("quarantine")
        light[-1] = replace(light[-1], tables=tables, quarantine=quarantine if len(quarantine) else None)
        return TaskOutput(light, choices)
    return TaskOutput(light, choices, write_parts(results, output, run, task))


def read_batch(items: list[Item], strict: bool, output: Mode, run: str, task: int) -> TaskOutput:
    """Sniff (unless forced) and read each file of ``items``, in order."""
    results, choices = [], []
    for item in items:
        choice = choose_source(Path(item.path), item.forced, strict, item.why)
        results.append(read_file(item.path, choice, item.options, strict))
        choices.append(choice)
    return _finish(results, choices, output, run, task)


def collect_span(span: _ranges.Span, choice: SourceChoice, options: dict[str, Any]) -> _ranges.SpanHits:
    """The candidate lines of one byte range, found by the file's own reader in collect mode."""
    with _ranges.collecting(span) as mode:
        result = read_file(span.path, choice, options, False)
    if mode.hits is None:  # the reader never reached the line scan: read the file whole
        return _ranges.SpanHits(span, split=False, error=result.reason)
    return mode.hits


def read_spans(item: Item, choice: SourceChoice, strict: bool, output: Mode, run: str, task: int,
               *hits: _ranges.SpanHits) -> TaskOutput:
    """The whole-file result of a file read as byte ranges (or read whole if a range says so)."""
    parts = list(hits)
    whole = any(not h.split or h.error is not None for h in parts)
    if whole:
        result = read_file(item.path, choice, item.options, strict)
    else:
        with _ranges.feeding(item.path, parts) as mode:
            result = read_file(item.path, choice, item.options, strict)
        if not mode.used:  # the reader took another route this time: trust a plain read
            result = read_file(item.path, choice, item.options, strict)
    return _finish([result], [choice], output, run, task)
