"""Errors and warnings raised by reliab.

Every message names the thing involved and the numbers behind it.  Bad arguments raise
``ValueError``/``TypeError``; bad *data* raises a :class:`ReliabError` subclass.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


class ReliabError(Exception):
    """Base class: catch this to handle any reliab failure."""


@dataclass(frozen=True)
class Origin:
    """Where a value came from: file, 1-based line number and the raw text."""

    path: str
    lineno: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.text.rstrip()[:200]}"

    @property
    def ref(self) -> str:
        """``file:line`` form used in the ``origin`` column of canonical tables."""
        return f"{self.path}:{self.lineno}"


class ParseError(ReliabError):
    """A line or record that a parser recognised but could not read."""

    def __init__(self, message: str, origin: Origin | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.origin = origin

    def __str__(self) -> str:
        return self.message if self.origin is None else f"{self.message} at {self.origin}"


class UnknownFormatError(ReliabError):
    """No registered parser recognises a file (or a named source does not exist)."""


class InputFileError(ReliabError):
    """A file is missing, unreadable, or its compression is broken."""


class SchemaError(ReliabError):
    """A table failed validation; ``problems`` lists every failed check at once."""

    def __init__(self, table: str, problems: pd.DataFrame) -> None:
        self.table = table
        self.problems = problems
        lines = [f"table {table!r} failed {len(problems)} check(s):"]
        for row in problems.itertuples(index=False):
            lines.append(
                f"  - column {row.column!r}: {row.check} failed for {row.n_failing} row(s)"
                + ("" if row.example is None else f" (e.g. {row.example!r})")
            )
        super().__init__("\n".join(lines))


class SourceError(ReliabError):
    """A live source (``slurm://``, ``prometheus://``) cannot be read: client missing, server
    down or refusing, wrong URL, or nothing in the requested window.  The message is one line
    naming the location and the cause; nothing is returned."""


class DistributedError(ReliabError):
    """A task of the Dask engine failed for good (its workers died, the cluster went away).

    The message names the task's files; nothing partial was returned or committed."""


class InsufficientDataError(ReliabError):
    """Too little data for an estimate (e.g. no failures, all units censored)."""


class ReliabWarning(UserWarning):
    """Base class of reliab warnings, so they can be filtered together."""


class UnclassifiedSignalsWarning(ReliabWarning):
    """Some signals matched no taxonomy rule."""


class QuarantineWarning(ReliabWarning):
    """Some input lines were malformed and went to the quarantine table."""
