"""What a run will read and how: inputs found, manifests applied, per-file source and options;
and the contracts between the pipeline and its modes (:data:`ReadEntry`, :class:`Session`).

:func:`prepare` is the first step of every driver (local, incremental, Dask): it walks the
paths (:mod:`reliab.io._discover`), finds or loads the hand-over manifest
(:mod:`reliab.io._manifest`) and answers, per file, which source is forced and which
options its reader gets.  Precedence, lowest first: reader defaults, the manifest's
top-level options, its matching ``[[files]]`` entries in order, then what the caller
passed to :func:`reliab.ingest` (or on the command line).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.errors import InputFileError, UnknownFormatError
from reliab.io._discover import SPECIAL, UNREADABLE, Entry, walk
from reliab.io._manifest import Manifest, find_manifest, load_manifest
from reliab.io._registry import FileResult, get_source, url_scheme
from reliab.io._result import IngestResult, SourceChoice
from reliab.io._tasks import COMBINE, Mode


@dataclass(frozen=True)
class RunPlan:
    """The inputs of one run and the manifests that govern them."""

    entries: list[Entry]
    manifests: Mapping[Path, Manifest] = field(default_factory=dict)
    explicit: Manifest | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    _cache: dict[str, Manifest | None] = field(default_factory=dict, repr=False, compare=False)

    def manifest_for(self, folder: str | os.PathLike[str]) -> Manifest | None:
        """The manifest that governs files in ``folder``: the explicit one, else the nearest."""
        if self.explicit is not None:
            return self.explicit
        if not self.manifests:
            return None
        key = os.fspath(folder)
        if key not in self._cache:
            p = Path(key)
            self._cache[key] = next((self.manifests[f] for f in (p, *p.parents) if f in self.manifests), None)
        return self._cache[key]

    def file_options(self, path: str) -> tuple[str | None, str, dict[str, Any]]:
        """``(forced source, why, reader options)`` for one file."""
        manifest = self.manifest_for(os.path.dirname(path))
        options = {} if manifest is None else manifest.options_for(path)
        options.pop("source", None)
        options.update(self.options)
        named = manifest.source_for(path) if manifest is not None and self.source is None else None
        if named:
            return named[0], f"set by {named[1]}", options
        return self.source, "forced by source=", options  # (why is read only when a source is forced)

    def run_values(self, given: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` run keywords with manifest values filled in where the caller kept the default.

        Raises
        ------
        ValueError
            Two manifests of one run disagree on a run-level key.
        """
        out = dict(given)
        chosen: dict[str, tuple[Any, Path]] = {}
        for manifest in self.all_manifests():
            for key, value in manifest.run.items():
                if key in chosen and chosen[key][0] != value:
                    raise ValueError(f"manifests {chosen[key][1]} and {manifest.path} disagree on {key!r}"
                                     f" ({chosen[key][0]!r} vs {value!r}); pass {key}= to decide")
                chosen[key] = (value, manifest.path)
        for key, (value, _) in chosen.items():
            if key in out and out[key] == defaults.get(key):
                out[key] = value
        return out

    def all_manifests(self) -> list[Manifest]:
        """Every manifest applied in this run."""
        return [self.explicit] if self.explicit is not None else list(self.manifests.values())


def prepare(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
            source: str | None = None, recursive: bool = True, strict: bool = False,
            manifest: bool | str | os.PathLike[str] = True, options: Mapping[str, Any] | None = None,
            run_keys: Iterable[str] = (), exclude: Iterable[str | os.PathLike[str]] = ()) -> RunPlan:
    """Find the inputs of a run and the manifests that govern them.

    Parameters
    ----------
    paths : path, folder, ``scheme://`` URL, or an iterable of them
        What to read.
    source, recursive, strict
        As for :func:`reliab.ingest`.  With ``strict`` a special or unreadable input fails
        the run here, before anything is read.
    manifest : bool or path
        ``True``: a ``reliab.toml`` in any folder walked governs that folder's subtree (the
        nearest one wins); ``False``: none; a path: that manifest, for every input.
    options : mapping
        Reader options the caller passed (they override the manifest).
    run_keys : iterable of str
        Run-level keywords a manifest may set.
    exclude : iterable of path
        The run's own store and output folders: where a walk meets one, it is a ``skipped``
        row, never read as input.

    Raises
    ------
    InputFileError
        A path does not exist; with ``strict``, an input is special or unreadable.
    UnknownFormatError
        A ``scheme://`` path whose scheme no live source handles.
    ManifestError
        A manifest that cannot be used (file, line and key named).
    """
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise ValueError("ingest needs at least one path")
    keys = tuple(run_keys)
    explicit = None if isinstance(manifest, bool) else load_manifest(manifest, run_keys=keys)
    manifests: dict[Path, Manifest] = {}

    def enter(folder: Path) -> None:  # a reliab.toml governs its folder's subtree
        found = find_manifest(folder) if manifest is True else None
        if found is not None and folder not in manifests:
            manifests[folder] = load_manifest(found, run_keys=keys)

    plan = RunPlan([], manifests, explicit, dict(options or {}), source)
    entries = walk(items, recursive=recursive, manifest_for=plan.manifest_for, on_folder=enter,
                   exclude=[x for x in exclude if x is not None])
    for e in entries:
        if e.url:
            try:
                get_source(url_scheme(e.path) or "")
            except KeyError as exc:
                raise UnknownFormatError(f"{e.path}: {exc.args[0]}") from None
        elif strict and e.result is not None and e.result.source in (SPECIAL, UNREADABLE):
            raise InputFileError(f"{e.path}: {e.result.reason} (strict: every input must be read)")
    return RunPlan(entries, manifests, explicit, dict(options or {}), source)


#: ``read(plan, entry, strict)``: one planned input read, ``(result, choice)`` per accounting row
#: it yields (:func:`reliab.io._driver.read_entry`, the unit of work of every mode)
ReadEntry = Callable[["RunPlan", Entry, bool], list[tuple[FileResult, SourceChoice]]]
#: one input's accounting rows: ``(result, choice)`` each, the result without its tables
Rows = list[tuple[FileResult, SourceChoice]]


@dataclass
class Merged:
    """What a sink's session merged, for :func:`reliab.io._driver.finish`.

    ``tables`` holds signals, jobs, telemetry and quarantine, conformed, and ``failures`` and
    ``lifetimes`` where the sink keeps them (``kept_by`` names the sink in the note that says
    it does not).  ``signals`` may be only the rows :func:`reliab.job_outcomes` can use, in
    table order (:mod:`reliab.io._streamed`).  ``notes`` are run-level remarks.
    """

    tables: dict[str, pd.DataFrame]
    accounting: pd.DataFrame
    notes: tuple[str, ...] = ()
    kept_by: str = ""


class Session:
    """One run of a sink: it takes each planned input, hands back what it merged, commits the result.

    With a Dask runner the tasks read the inputs of :meth:`ahead` and do with their tables
    as :attr:`tasks` (:data:`reliab.io._tasks.Mode`) says: join them per task (this default),
    keep each file's own (``None``), or write them to a folder as parts of run :attr:`run`,
    calling :meth:`written` with their records.
    """

    tasks: Mode = COMBINE
    run: str = ""

    def ahead(self, plan: RunPlan) -> RunPlan:
        """The inputs a runner may read before the loop asks for them (default: every one)."""
        return plan

    def written(self, parts: list[dict[str, Any]]) -> None:
        """Take the manifest records of the parts the tasks wrote (``tasks`` a folder)."""

    def add(self, plan: RunPlan, entry: Entry, strict: bool, read: ReadEntry) -> Rows:
        """Have ``entry`` read with ``read`` (or not, when the sink knows it), keep its tables."""
        raise NotImplementedError

    def close(self, accounting: pd.DataFrame, attribution: dict[str, Any]) -> Merged:
        """The merged tables, with the pipeline's ``accounting`` of the rows :meth:`add` returned."""
        raise NotImplementedError

    def commit(self, result: IngestResult) -> IngestResult:
        """The run's result, once :func:`reliab.io._driver.finish` made it (default: as it is)."""
        return result


def plan_notes(plan: RunPlan) -> tuple[str, ...]:
    """Run-level notes of ``plan``: the manifests applied."""
    return tuple(f"hand-over manifest applied: {m.path}" for m in plan.all_manifests())


__all__ = ["RunPlan", "prepare", "ReadEntry", "Rows", "Merged", "Session", "plan_notes"]
