"""The frozen result of :func:`reliab.ingest` and how it is summarised and stored."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from reliab import schema

#: table name -> Parquet file written by :meth:`IngestResult.write_parquet`
PARQUET_TABLES = ("signals", "interruptions", "accounting", "quarantine", "jobs", "telemetry",
                  "user_failures", "failures")
#: readers whose records are failures with a repair time (rows of the ``failures`` table)
FAILURE_SOURCES = ("lanl",)

#: accounting sources of inputs left out by design (not counted among the files not read)
SKIPPED_SOURCES = ("skipped", "manifest", "duplicate")


def set_aside(accounting: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(not read, skipped)``: accounting rows with a reason, split by :data:`SKIPPED_SOURCES`."""
    if "reason" not in accounting.columns:
        empty = accounting.iloc[0:0]
        return empty, empty
    rows = accounting.loc[accounting["reason"].notna().to_numpy(dtype=bool)]
    skipped = rows["source"].isin(SKIPPED_SOURCES).to_numpy(dtype=bool)
    return rows.loc[~skipped], rows.loc[skipped]


def _counts(rows: pd.DataFrame) -> str:
    counts = rows["source"].value_counts(sort=False).sort_index()
    return ", ".join(f"{n:,} {s}" for s, n in counts.items())


def not_read_notes(accounting: pd.DataFrame) -> tuple[str, ...]:
    """Run notes that count the files not read and the files skipped, by source."""
    unread, skipped = set_aside(accounting)
    notes = []
    if len(unread):
        notes.append(f"{len(unread):,} file(s) not read ({_counts(unread)}); IngestResult.not_read() lists"
                     " them with the reason")
    if len(skipped):
        how = "by name, or as another path of a file read" if (skipped["source"] == "duplicate").any() else "by name"
        notes.append(f"{len(skipped):,} input(s) skipped {how} ({_counts(skipped)})")
    return tuple(notes)


#: the word a parser's note uses for a time it did not read but derived (a year or a time taken
#: from the file's modification time)
INFERRED = "inferred"


def inferred_times(sources: Mapping[str, SourceChoice]) -> tuple[tuple[str, str], ...]:
    """``(path, note)`` for every parser note saying a time or a year of that file was inferred."""
    return tuple((path, note) for path, choice in sources.items() for note in choice.notes if INFERRED in note)


@dataclass(frozen=True)
class SourceChoice:
    """Which parser read a file, and why.

    ``confidence`` is the winning sniffer's score (1.0 when forced with ``source=``);
    ``reason`` says how the choice was made and lists runner-up scores and parser notes;
    ``forced`` is whether the source was named (``source=``, the manifest), not sniffed.
    """

    source: str
    confidence: float
    reason: str
    #: the parser's own notes about the file (also at the end of ``reason``)
    notes: tuple[str, ...] = ()
    forced: bool = False


@dataclass(frozen=True)
class IngestResult:
    """Canonical tables read from raw files, with the accounting of every input line.

    Attributes
    ----------
    signals, jobs, interruptions, telemetry : pandas.DataFrame
        Canonical tables (``reliab.schema``), validated.
    quarantine : pandas.DataFrame
        Malformed lines: path, lineno, source, reason, text.
    accounting : pandas.DataFrame
        One row per input file: path, source, lines, parsed, irrelevant, malformed, with
        ``lines == parsed + irrelevant + malformed``, and ``reason`` for a file set aside
        (see :meth:`not_read`).  After an incremental ingest
        (``ingest(..., store=...)``) the counts are this run's *new* lines and a ``status``
        column says new, appended, unchanged or rotated; the tables are the whole store.
    sources : mapping of str to SourceChoice
        Chosen format per input path.
    notes : tuple of str
        Run-level remarks: the interruption policy and its counts, evidence coverage
        (warnings start with ``"Warning: "``).
    policy : str
        The interruption policy used: ``fleet`` (default) or ``training-run``
        (:func:`reliab.job_outcomes`).
    user_failures : pandas.DataFrame
        Schema ``interruptions``: FAILED jobs without infrastructure evidence, which the
        fleet policy counts apart as user or application failures.
    failures : pandas.DataFrame
        Schema ``failures``: failure records (unit, start, end, repair time, cause) of the
        sources that keep them (:data:`FAILURE_SOURCES`), with or without job records.
    """

    signals: pd.DataFrame
    jobs: pd.DataFrame
    interruptions: pd.DataFrame
    telemetry: pd.DataFrame
    quarantine: pd.DataFrame
    accounting: pd.DataFrame
    sources: Mapping[str, SourceChoice] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    policy: str = "fleet"
    user_failures: pd.DataFrame = field(default_factory=lambda: schema.empty("user_failures"))
    #: unit lives from inventories and replacement logs (schema ``lifetimes``)
    lifetimes: pd.DataFrame = field(default_factory=lambda: schema.empty("lifetimes"))
    failures: pd.DataFrame = field(default_factory=lambda: schema.empty("failures"))

    def summary(self) -> pd.DataFrame:
        """Per source: files, line accounting and the number of signal rows produced."""
        acc = self.accounting
        cols = ["lines", "parsed", "irrelevant", "malformed"]
        out = acc.groupby("source", sort=True)[cols].sum()
        out.insert(0, "files", acc.groupby("source", sort=True).size())
        counts = self._signal_sources()
        out["signals"] = counts.reindex(out.index).fillna(0).astype("int64")
        out = out.reset_index()
        return out.astype({c: "int64" for c in ["files", *cols, "signals"]})

    def _signal_sources(self) -> pd.Series:
        """Signal rows per value of their ``source`` column."""
        return self.signals["source"].value_counts() if len(self.signals) else pd.Series(dtype="int64")

    def _rows(self, table: str) -> int:
        """Rows of ``table`` (``signals`` or ``telemetry``)."""
        return len(getattr(self, table))

    def not_read(self, *, skipped: bool = False) -> pd.DataFrame:
        """Inputs that were not read, with the reason: path, source, lines, reason.

        Empty, unrecognised, binary, special (FIFO, socket, device) and unreadable files,
        and files whose reader failed.  ``skipped=True`` lists instead the inputs left out
        by name (hidden files, documentation, manifest ``skip`` globs, the manifest).
        """
        unread, by_name = set_aside(self.accounting)
        cols = [c for c in ("path", "source", "lines", "reason") if c in self.accounting.columns]
        return (by_name if skipped else unread)[cols].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe digest: counts, per-source summary, per-file choices and notes."""
        summary = [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                   for row in self.summary().to_dict(orient="records")]
        unread, by_name = set_aside(self.accounting)
        return {
            "files": len(self.accounting),
            "not_read": len(unread),
            "skipped": len(by_name),
            "lines": int(self.accounting["lines"].sum()),
            "signals": self._rows("signals"),
            "jobs": len(self.jobs),
            "interruptions": len(self.interruptions),
            "policy": self.policy,
            "user_failures": len(self.user_failures),
            "failures": len(self.failures),
            "telemetry_rows": self._rows("telemetry"),
            "lifetimes": len(self.lifetimes),
            "quarantined": len(self.quarantine),
            "summary": summary,
            "sources": {p: {"source": c.source, "confidence": float(c.confidence), "reason": c.reason}
                        for p, c in self.sources.items()},
            "notes": list(self.notes),
        }

    def _repr_html_(self) -> str:
        d = self.to_dict()
        head = (f"<h4>IngestResult</h4><p>{d['files']} file(s), {d['lines']} line(s): "
                f"{d['signals']} signal(s), {d['jobs']} job(s), {d['interruptions']} "
                f"interruption(s) (policy {d['policy']}), {d['telemetry_rows']} telemetry row(s), "
                f"{d['quarantined']} quarantined line(s)</p>")
        body = self.summary().to_html(index=False, border=0)
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return head + body + (f"<ul>{notes}</ul>" if notes else "")

    def __repr__(self) -> str:
        d = self.to_dict()
        return (f"IngestResult(files={d['files']}, lines={d['lines']}, signals={d['signals']}, "
                f"jobs={d['jobs']}, interruptions={d['interruptions']}, "
                f"quarantined={d['quarantined']})")

    def write_parquet(self, directory: str | Path) -> dict[str, Path]:
        """Write every table as ``<table>.parquet`` into ``directory`` (created if needed);
        ``lifetimes`` only when the input had unit lives, ``failures.parquet`` only when the
        input had failure records.

        Dtypes, nullability and UTC time zones survive the round trip
        (:func:`reliab.schema.read_parquet` reads a table back and validates it).

        Returns
        -------
        dict of str to Path
            Table name -> file written.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        for name in (*PARQUET_TABLES, "lifetimes"):
            if name in ("failures", "lifetimes") and not len(getattr(self, name)):
                continue  # written when the input had failure records, unit lives
            target = out / f"{name}.parquet"
            schema.write_parquet(getattr(self, name), str(target), name)
            written[name] = target
        return written


@dataclass(frozen=True, repr=False)  # IngestResult's repr: counts, nothing read
class OutputIngestResult(IngestResult):
    """The result of ``reliab.ingest(..., output=folder)``: the big tables stay in ``folder``.

    ``signals`` and ``telemetry`` are read from the output folder
    (:func:`reliab.io._partitioned.read_table`, the rows and order of an in-memory ingest)
    the first time they are used, and kept from then on; every other table is held.
    :meth:`summary`, :meth:`to_dict`, ``_repr_html_`` and :meth:`not_read` use the row
    counts written with the tables and read nothing.  :meth:`loaded` says which tables
    have been read.

    Attributes
    ----------
    output : pathlib.Path
        The output folder (its manifest commits the run).
    counts : mapping
        ``rows`` per partitioned table and ``signal_sources`` (signal rows per ``source``
        value), as written.
    """

    output: Path = Path()
    counts: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("signals", "telemetry"):  # not given: read when first used (__getattr__)
            if self.__dict__.get(name) is None:
                self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        """``signals`` or ``telemetry`` not held yet: read from the folder, then kept."""
        if name not in ("signals", "telemetry"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        from reliab.io._partitioned import read_table

        frame = self.__dict__[name] = read_table(self.output, name)
        return frame

    def loaded(self) -> tuple[str, ...]:
        """The lazy tables read so far (``signals``, ``telemetry``)."""
        return tuple(n for n in ("signals", "telemetry") if n in self.__dict__)

    def _signal_sources(self) -> pd.Series:
        if "signals" in self.__dict__:
            return super()._signal_sources()
        counts = dict(self.counts.get("signal_sources", {}))
        return pd.Series(list(counts.values()), index=list(counts), dtype="int64")

    def _rows(self, table: str) -> int:
        if table in self.__dict__:
            return super()._rows(table)
        return int(self.counts.get("rows", {}).get(table, 0))
