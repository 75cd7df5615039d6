"""The ``slurm:<state>`` signals of a sacct file, gathered in columns while it is read.

A sacct reader makes one end-state signal per ended allocation (``slurm:failed``,
``slurm:node_fail``...).  Held as dicts until the file ends they cost ~600 bytes each (a 10M-job
file: 6 GB); :class:`SignalChunks` converts them to the ``signals`` table every
:data:`reliab.io._rowchunks.CHUNK_ROWS` signals, exactly as one conversion of all of them
would (:func:`reliab.schema.conform_rows`: a signal the table cannot hold is refused, and
its job's line then becomes malformed, :func:`with_signal_chunks`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pandas as pd

from reliab import schema
from reliab.io import _rowchunks
from reliab.io._quarantine import quarantine_frame
from reliab.io._rowchunks import join_chunks
from reliab.io._rowtable import FileTables

if TYPE_CHECKING:
    import pyarrow as pa

    from reliab.io._registry import FileResult

__all__ = ["SignalChunks", "refuse_signals", "with_signal_chunks", "with_signals"]


class SignalChunks(list):  # type: ignore[type-arg]
    """End-state signals of one file (a list to the reader), converted every ``chunk_rows``."""

    def __init__(self, chunk_rows: int | None = None) -> None:
        super().__init__()
        self.chunk_rows = _rowchunks.CHUNK_ROWS if chunk_rows is None else chunk_rows
        self.chunks: list[pd.DataFrame | pa.Table] = []
        #: origin -> reason, of every signal the table refused
        self.refused: dict[str, str] = {}

    def append(self, signal: dict[str, Any]) -> None:
        super().append(signal)
        if len(self) >= self.chunk_rows:
            self.convert()

    def convert(self) -> None:
        """Convert the signals held (the Arrow route when every value is plain, else row by row)."""
        from reliab.io._rowtable import arrow_rows

        rows = list(self)
        self.clear()
        if not rows:
            return
        fast = arrow_rows(rows, "signals")
        if fast is None:
            fast, bad = schema.conform_rows(rows, "signals")
            self.refused.update({rows[i]["origin"]: why for i, why in bad.items()})
        if len(fast):
            self.chunks.append(fast)


def _tables(result: FileResult, **new: Any) -> FileTables:
    """``result``'s tables with ``new`` ones, those not converted yet left unconverted."""
    tables = result.tables
    old = {name: (tables.arrow(name) if isinstance(tables, FileTables) else None) for name in tables}
    return FileTables({**{n: (t if t is not None else tables[n]) for n, t in old.items()}, **new})


def with_signal_chunks(result: FileResult, signals: SignalChunks) -> FileResult:
    """:func:`reliab.io.formats.slurm.with_signals` for signals gathered in chunks."""
    import pyarrow as pa
    import pyarrow.compute as pc

    signals.convert()
    bad = result.quarantine if result.quarantine is not None else schema.empty("quarantine")
    gone = {f"{p}:{n}" for p, n in zip(bad["path"], bad["lineno"], strict=True)}
    frame: pd.DataFrame | pa.Table = join_chunks(signals.chunks, "signals") if signals.chunks else schema.empty("signals")
    if gone and len(frame):
        if isinstance(frame, pa.Table):
            frame = frame.filter(pc.invert(pc.is_in(frame["origin"], pa.array(sorted(gone)))))
        else:
            frame = frame[~frame["origin"].isin(gone)].reset_index(drop=True)
    refused = {o: why for o, why in signals.refused.items() if o not in gone}
    if not refused:
        return dataclasses.replace(result, tables=_tables(result, signals=frame))
    if isinstance(frame, pa.Table):
        from reliab.io._rowtable import arrow_frame

        frame = arrow_frame(frame, "signals")
    return refuse_signals(result, bad, frame, refused)


def refuse_signals(result: FileResult, bad: pd.DataFrame, frame: pd.DataFrame,
                   origins: dict[str, str]) -> FileResult:
    """``result`` with ``frame`` as its signals, and the jobs whose signal was refused (by
    origin, with the reason) dropped and their lines quarantined as malformed."""
    jobs = result.tables["jobs"]
    jobs = jobs[~jobs["origin"].isin(list(origins))].reset_index(drop=True)
    rows = [(result.path, int(o.rsplit(":", 1)[1]), result.source, why, None) for o, why in origins.items()]
    quarantine = pd.concat([bad, quarantine_frame(rows)], ignore_index=True).sort_values("lineno", kind="stable")
    n = len(origins)
    return dataclasses.replace(result, parsed=result.parsed - n, malformed=result.malformed + n,
                               tables={**result.tables, "jobs": jobs, "signals": frame},
                               quarantine=schema.conform(quarantine.reset_index(drop=True), "quarantine"))


def with_signals(result: FileResult, signals: list[dict[str, Any]]) -> FileResult:
    """``result`` with a ``signals`` table added next to its ``jobs`` table.

    Signals of lines the reader quarantined (a job row refused at the schema boundary) are
    dropped; a signal the table cannot hold makes its line malformed and drops its job.
    """
    if isinstance(signals, SignalChunks):
        return with_signal_chunks(result, signals)
    bad = result.quarantine if result.quarantine is not None else schema.empty("quarantine")
    gone = {f"{p}:{n}" for p, n in zip(bad["path"], bad["lineno"], strict=True)}
    kept = [s for s in signals if s["origin"] not in gone]
    frame, refused = schema.conform_rows(kept, "signals")
    if not refused:
        return dataclasses.replace(result, tables={**result.tables, "signals": frame})
    return refuse_signals(result, bad, frame, {kept[i]["origin"]: why for i, why in refused.items()})
