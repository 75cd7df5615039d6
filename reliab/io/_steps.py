"""The steps of the ingest pipeline that :func:`reliab.ingest` hands to the mode it runs.

A mode (:mod:`reliab.io._modes`) never imports the pipeline (:mod:`reliab.io._driver`): it
receives the pipeline's per-input read and its accounting step as a :class:`Steps`, so the
modes sit below the pipeline and every mode reads and counts the files the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from reliab.io._discover import Entry
    from reliab.io._plan import RunPlan
    from reliab.io._registry import FileResult
    from reliab.io._result import SourceChoice

__all__ = ["Steps", "ReadEntry"]

#: ``read(plan, entry, strict)``: one planned input read, ``(result, choice)`` per accounting row
ReadEntry = Callable[["RunPlan", "Entry", bool], "list[tuple[FileResult, SourceChoice]]"]


@dataclass(frozen=True)
class Steps:
    """The pipeline's steps a mode calls.

    Attributes
    ----------
    read : callable
        ``read(plan, entry, strict)``: one planned input read, ``(result, choice)`` per
        accounting row it yields (:func:`reliab.io._driver.read_entry`; the unit of work of
        every engine).
    accounting : callable
        ``accounting(results)``: one accounting row per file result
        (:func:`reliab.io._merge.accounting_of`).
    """

    read: ReadEntry
    accounting: Callable[[list[FileResult]], pd.DataFrame]
