"""Raw files -> canonical tables: the ingest driver.

:func:`ingest` plans the run (:func:`reliab.io._plan.prepare`: inputs found, hand-over
manifests applied, every input that will not be read given its accounting row), picks a
parser per file — named by ``source=`` or the manifest, else by sniffing (every registered
parser scores the file's name and first lines; the highest score wins, ties go to the
parser registered first) — reads each file with the shared line accounting (any failure
inside a reader becomes that file's row), hands ``scheme://`` inputs to their live source,
concatenates and validates the tables, and attributes job interruptions with
:func:`reliab.taxonomy.attribute`.  :func:`available_sources` lists the parsers.

Parsers register themselves on import (:func:`reliab.io._registry.register_parser`);
the imports below fix the registration order used to break sniffing ties.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

# importing the formats package registers every parser, in a fixed order
import reliab.io.formats  # noqa: F401
import reliab.io.sources  # noqa: F401  (registers slurm://, prometheus://, journald://)
from reliab import schema
from reliab._hostnames import canonical_tables
from reliab.errors import InputFileError, ParseError, ReliabError, UnknownFormatError
from reliab.io._discover import Entry
from reliab.io._files import read_head, read_start
from reliab.io._forced import forced_note, forced_notes
from reliab.io._lines import quarantine_frame
from reliab.io._options import accepted_by, reader_options
from reliab.io._plan import RunPlan, prepare
from reliab.io._quarantine import check_limit, quarantine_limit
from reliab.io._redact import hide_password
from reliab.io._registry import (
    FileResult,
    Parser,
    get_parser,
    get_source,
    options_for,
    parsers,
    url_scheme,
)
from reliab.io._registry import sources as live_sources
from reliab.io._repeats import drop_repeated_jobs
from reliab.io._result import IngestResult, SourceChoice, failures_not_kept, not_read_notes
from reliab.io._rowtable import (
    PendingRows,
    arrow_frame,
    batching,
    join_pending,
    part_of,
    pending_part,
)
from reliab.io._rowtable import conformed as _conformed
from reliab.io._unread import (
    BINARY,
    EMPTY,
    OPENED_NOT_READ,
    TAR_REASON,
    UNRECOGNIZED,
    binary_kind,
    encoding_note,
    magic_kind,
    not_read,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ingest", "IngestResult", "SourceChoice", "available_sources", "discover", "read_file",
           "choose_source", "read_entry", "read_url", "run_keys"]

#: source name of a file of which not one byte can be read (one quarantined pseudo-line)
UNREADABLE = "unreadable"
_SNIFF_LINES = 20


def available_sources() -> pd.DataFrame:
    """Registered parsers: ``name``, the ``table`` each mainly produces, a one-line ``summary``.

    Live sources (``scheme://`` paths) follow as ``name`` ``<scheme>://``, table ``live``.
    """
    rows = [(p.name, p.table, p.summary) for p in parsers()]
    rows += [(f"{s.scheme}://", "live", s.summary) for s in live_sources()]
    return pd.DataFrame(rows, columns=["name", "table", "summary"]).astype("string")


def discover(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
             recursive: bool = True, manifest: bool | str | os.PathLike[str] = True) -> list[Path]:
    """The files ``ingest`` opens for ``paths``, in a deterministic order.

    Folders are walked in sorted order; hidden files and folders, documentation files of
    exact names (``README``, ``LICENSE.txt``, ``SOURCE.md``…), Python cache folders and the
    ``skip`` globs of a hand-over manifest are left out (``ingest`` lists each of them with
    source ``skipped``), as are FIFOs, sockets and devices (source ``special``).  Files
    named explicitly are always read.  See :mod:`reliab.io._discover`.

    Raises
    ------
    InputFileError
        If a path does not exist.
    """
    plan = prepare(paths, recursive=recursive, manifest=manifest)
    return [Path(e.path) for e in plan.entries if e.result is None and not e.url]


def _sniff(path: Path, strict: bool = False) -> SourceChoice:
    """Best parser for ``path``; ``empty``, ``binary`` or ``unrecognized`` when there is none."""
    first = read_start(path, _SNIFF_LINES)
    if not first:
        return SourceChoice(EMPTY, 0.0, "empty file: nothing to read")
    container = magic_kind(first.data)
    if container is not None:
        return _binary(path, container, strict)
    scores: list[tuple[float, int, Parser]] = []
    name = str(path)
    for i, parser in enumerate(parsers()):
        try:
            score = float(parser.sniff(name, first))
        except Exception:  # noqa: BLE001 - a sniffer that fails on odd text just does not claim it
            score = 0.0
        scores.append((score, -i, parser))
    scores.sort(key=lambda s: (s[0], s[1]), reverse=True)
    best = scores[0]
    if best[0] <= 0:
        return _no_reader(path, strict)
    others = ", ".join(f"{p.name}={s:.2f}" for s, _, p in scores[1:] if s > 0)
    reason = f"sniffed: {best[2].name}={best[0]:.2f}" + (f" (also {others})" if others else "")
    return SourceChoice(best[2].name, best[0], reason)


def _no_reader(path: Path, strict: bool) -> SourceChoice:
    """The ``binary`` or ``unrecognized`` choice of a file no sniffer claims (strict: raise)."""
    kind = binary_kind(read_head(path, 8192))
    if kind is not None:
        return _binary(path, kind, strict)
    reason = (f"no reader recognises this file (tried {', '.join(p.name for p in parsers())});"
              " pass source= or name its source in reliab.toml")
    if strict:
        raise UnknownFormatError(f"{path}: {reason}")
    return SourceChoice(UNRECOGNIZED, 0.0, reason)


def _binary(path: Path, kind: str, strict: bool) -> SourceChoice:
    """The ``binary`` choice of a file of binary content ``kind`` (strict: raise)."""
    reason = TAR_REASON if kind == "tar archive" else f"{kind}: no reader takes binary content"
    if strict:
        raise UnknownFormatError(f"{path}: {reason}")
    return SourceChoice(BINARY, 0.0, reason)


def _check_options(options: dict[str, Any]) -> None:
    check_limit(options.get("quarantine_limit"))
    if any(any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
           for fn in [*(p.read for p in parsers()), *(s.read for s in live_sources())]):
        return
    accepted = set(reader_options())
    unknown = sorted(set(options) - accepted - {"quarantine_limit"})  # read by read_file
    if unknown:
        raise TypeError(f"ingest() got option(s) {unknown} that no reader accepts;"
                        f" accepted: {', '.join(sorted(accepted))}")


def check_arguments(source: str | None, options: dict[str, Any]) -> None:
    """Fail early on a ``source`` that names no parser or an option no parser accepts.

    Raises
    ------
    UnknownFormatError
        ``source`` names no registered parser.
    TypeError
        An option that no parser accepts.
    """
    if source is not None:
        try:
            get_parser(source)
        except KeyError as exc:
            raise UnknownFormatError(str(exc.args[0])) from None
    _check_options(options)
    if source is not None:
        _check_forced_options(source, options)


def _check_forced_options(source: str, options: dict[str, Any]) -> None:
    """``TypeError`` naming the options of ``source`` when one given is not among them: a
    forced reader would otherwise drop it silently (``--columns`` to ``sacct``)."""
    read = get_parser(source).read
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(read).parameters.values()):
        return
    taken = accepted_by(source)
    extra = sorted(set(options) - taken - {"quarantine_limit"})
    if extra:
        raise TypeError(f"source {source!r} takes no option(s) {', '.join(extra)};"
                        f" it takes: {', '.join(sorted(taken)) or 'none'}")


def choose_source(path: Path, source: str | None = None, strict: bool = False,
                  why: str = "forced by source=") -> SourceChoice:
    """The parser that reads ``path``: forced by ``source``, else sniffed.

    Never raises unless ``strict``: an empty file is ``empty``, a file no parser
    recognises ``unrecognized`` or ``binary``, and a file whose start cannot be read (or
    whose sniffing fails) is :data:`UNREADABLE` with the error as its reason.

    Raises
    ------
    UnknownFormatError
        With ``strict=True``, no parser recognises the file.
    InputFileError
        With ``strict=True``, the start of the file cannot be read.
    """
    if source is not None:
        return SourceChoice(source, 1.0, why, forced=True)
    try:
        return _sniff(path, strict)
    except UnknownFormatError:  # raised only when strict
        raise
    except InputFileError as exc:
        if strict:
            raise
        return SourceChoice(UNREADABLE, 0.0, str(exc))
    except Exception as exc:  # noqa: BLE001 - any failure to open the file is this file's row
        if strict:
            raise InputFileError(f"{path}: cannot read the start of the file ({type(exc).__name__}: {exc})") from exc
        return SourceChoice(UNREADABLE, 0.0, f"cannot read the start of the file ({type(exc).__name__}: {exc})")


def _failed_file(path: str, source: str, reason: str) -> FileResult:
    """A file that could not be read at all: one malformed pseudo-line at lineno 0."""
    quarantine = quarantine_frame([(path, 0, source, reason, None)])
    return FileResult(path=path, source=source, lines=1, parsed=0, irrelevant=0, malformed=1,
                      quarantine=quarantine, reason=reason)


def read_file(path: str | os.PathLike[str], choice: SourceChoice | None,
              options: dict[str, Any] | None = None, strict: bool = False) -> FileResult:
    """Read one file with the parser of ``choice``: the per-file step of every driver.

    :func:`ingest` calls it in a loop and its Dask engine (:mod:`reliab.io._tasks`) in
    its tasks, so both produce the same :class:`FileResult` for the same file.
    Whatever goes wrong inside the reader becomes this file's accounting row (one
    quarantined pseudo-line at ``lineno`` 0 naming the error), unless ``strict``.

    Parameters
    ----------
    path : path
        The file.
    choice : SourceChoice or None
        From :func:`choose_source`; ``empty``, ``binary`` and ``unrecognized`` choices give
        a row with the file's lines counted as irrelevant, an :data:`UNREADABLE` choice one
        quarantined pseudo-line.  ``None`` means empty.
    options : dict, optional
        Parser options; each reader gets those it accepts.
    strict : bool
        Raise on the first malformed line or broken file instead of quarantining.
    """
    name = path if isinstance(path, str) else os.fsdecode(os.fspath(path))
    if choice is None:
        choice = SourceChoice(EMPTY, 0.0, "empty file: nothing to read")
    if choice.source in OPENED_NOT_READ:
        return not_read(name, choice.source, choice.reason)
    if choice.source == UNREADABLE:
        return _failed_file(name, UNREADABLE, choice.reason)
    parser = get_parser(choice.source)
    kwargs = options_for(parser.read, {**(options or {}), "strict": strict})
    try:
        with quarantine_limit((options or {}).get("quarantine_limit")):
            return canonical_result(forced_note(encoding_note(parser.read(name, **kwargs)), choice))
    except ParseError as exc:
        if strict:
            if exc.origin is None:
                raise ParseError(f"{name}: {exc.message}") from exc
            raise
        return _failed_file(name, choice.source, str(exc))
    except InputFileError as exc:
        if strict:
            raise
        return _failed_file(name, choice.source, str(exc))
    except Exception as exc:  # noqa: BLE001 - per-file isolation: the run goes on
        if strict:
            raise InputFileError(f"{name}: unreadable ({type(exc).__name__}: {exc})") from exc
        kind = "unreadable" if isinstance(exc, _BROKEN_STREAM) else "reader failed"
        return _failed_file(name, choice.source, f"{kind} ({type(exc).__name__}: {exc})")


def canonical_result(result: FileResult) -> FileResult:
    """``result`` with its host names made canonical (:mod:`reliab._hostnames`)."""
    tables = canonical_tables(result.tables)
    return result if tables is None else dataclasses.replace(result, tables=tables)


def _broken_stream_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "this file's bytes cannot be decoded", whatever the parser."""
    import lzma
    import zlib

    errors: tuple[type[BaseException], ...] = (EOFError, zlib.error, lzma.LZMAError, OSError,
                                               UnicodeDecodeError, pd.errors.ParserError,
                                               pd.errors.EmptyDataError)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:  # pragma: no cover - declared dependency
        pass
    return errors


_BROKEN_STREAM = _broken_stream_errors()


def _concat(frames: list[pd.DataFrame | pa.Table], table: str) -> pd.DataFrame:
    """The rows of ``frames`` (pandas, or Arrow left by :class:`FileTables`) as one conformed table.

    When some files left Arrow tables, all are joined as Arrow and converted once (a
    pandas frame per small file costs more than reading it); a frame Arrow cannot hold
    (text with lone surrogates) sends the lot through pandas.
    """
    frames = [f for f in frames if len(f)]
    if not frames:
        return schema.empty(table)
    if any(not isinstance(f, pd.DataFrame) for f in frames):
        joined = _concat_arrow(frames, table)
        if joined is not None:
            return joined
        frames = [f if isinstance(f, pd.DataFrame) else arrow_frame(f, table) for f in frames]
    if len(frames) == 1 and _conformed(frames[0], table):
        return frames[0]  # one file's table, conformed by its reader: no copy
    out = frames[0] if len(frames) == 1 else _concat_frames(frames)
    if len(frames) > 1 and _conformed(out, table):  # conformed files' tables, joined: a new frame already
        return out
    return schema.conform(out.reset_index(drop=True), table)


def _concat_arrow(frames: list[pd.DataFrame | pa.Table], table: str) -> pd.DataFrame | None:
    """``frames`` joined as Arrow and converted once; ``None`` if a pandas frame will not go to Arrow."""
    import pyarrow as pa

    try:
        parts = [pa.Table.from_pandas(f, preserve_index=False) if isinstance(f, pd.DataFrame) else f
                 for f in frames]
        joined = pa.concat_tables(parts, promote_options="permissive")
    except (pa.ArrowException, UnicodeError, TypeError, ValueError):
        return None
    return arrow_frame(joined, table)


def _concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """``pd.concat``; a text column that some file keeps in Python storage (a non-UTF-8
    file name, see :func:`reliab.schema.conform`) is concatenated in Python storage."""
    try:
        return pd.concat(frames, ignore_index=True)
    except UnicodeEncodeError:
        cols = {c for f in frames for c in f.columns if f[c].dtype == schema.PY_STRING}
        return pd.concat([f.astype({c: schema.PY_STRING for c in cols if c in f.columns}) for f in frames],
                         ignore_index=True)


def _progress(total: int, enabled: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    """(advance, close) callbacks of an optional rich progress bar."""
    if not enabled:
        return (lambda: None), (lambda: None)
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("ingest", total=total)
    bar.start()
    return (lambda: bar.advance(task)), bar.stop


def ingest(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str | None = None,
    recursive: bool = True,
    strict: bool = False,
    manifest: bool | str | os.PathLike[str] = True,
    store: str | os.PathLike[str] | None = None,
    rebuild: bool = False,
    policy: str | None = None,
    job_name: str | list[str] | None = None,
    rules: Any = None,
    before: str | pd.Timedelta = "10min",
    after: str | pd.Timedelta = "5min",
    job_filter: Any = None,
    progress: bool = False,
    engine: Literal["local", "dask"] = "local",
    client: Any = None,
    output: str | os.PathLike[str] | None = None,
    **options: Any,
) -> IngestResult:
    """Read raw log files into validated canonical tables and attribute interruptions.

    A run never stops at a file: every path given or found gets an accounting row.  Files
    no reader recognises (source ``unrecognized``), binary files (``binary``), empty files
    (``empty``), FIFOs, sockets and devices (``special``, never opened), files or folders
    that cannot be read (``unreadable``) and files skipped by name (``skipped``: hidden
    files, exact documentation names, manifest ``skip`` globs) are listed with the reason,
    their lines counted; any error inside a reader becomes that file's row (one
    quarantined pseudo-line naming the error).  :meth:`IngestResult.not_read` lists them.

    Parameters
    ----------
    paths : path, folder, ``scheme://`` URL, or an iterable of them
        Files to read; folders are walked in sorted order (see :func:`discover`); a path
        starting with ``scheme://`` is read by the live source registered for that scheme
        (:func:`reliab.io.register_source`).
    source : str, optional
        Force one parser (see :func:`available_sources`) instead of sniffing each file.
    recursive : bool
        Walk sub-folders.
    strict : bool
        Fail instead of setting aside: :class:`~reliab.errors.ParseError` (naming file and
        line) at the first malformed line, :class:`~reliab.errors.UnknownFormatError` for a
        file no reader recognises (or binary), :class:`~reliab.errors.InputFileError` for
        a broken, special or unreadable file.  Empty and skipped files are not failures.
    manifest : bool or path
        The hand-over manifest (:mod:`reliab.io._manifest`): ``True`` (default) uses a
        ``reliab.toml`` found in any folder walked (for that folder's subtree, the nearest
        one winning), ``False`` none, a path that file for every input.  It sets per-glob source and reader options, skip globs and run-level
        keywords of this function; what is passed here overrides it.
    store : path, optional
        Incremental mode: a folder that keeps the canonical tables and a ledger of every
        file content read so far (:mod:`reliab.io._store`).  Files already read are
        skipped, grown files and rotated copies (``messages.1``, ``messages.2.gz``,
        ``messages-20240603``) contribute only their new lines, and the result holds the
        *whole* store, attributed afresh.  ``accounting`` then covers this run only (new
        lines per file) with a ``status`` column: new, appended, unchanged, rotated,
        rewritten or set aside.
    rebuild : bool
        With ``store``: discard the store's tables and ledger and read every file afresh
        (the fix for a store reported missing or corrupt).
    policy : {"fleet", "training-run"} or None
        What counts as an interruption (:func:`reliab.job_outcomes`).  ``None`` or
        ``"fleet"`` (the default of a shared cluster, Kokolis et al. HPCA 2025): NODE_FAIL
        or BOOT_FAIL, or FAILED with infrastructure evidence near the job's end; FAILED
        without it is a user failure (``user_failures``); CANCELLED, TIMEOUT, OOM and
        COMPLETED are not interruptions.  ``"training-run"`` (Llama 3): every end of one
        training run other than COMPLETED.  The result's ``policy`` and first note say which.
    job_name : str, optional
        The training run for ``policy="training-run"`` (default: the job name with the
        most GPU-hours).
    rules, before, after, job_filter
        Passed to :func:`reliab.job_outcomes` (rules file, attribution window around the
        job end, which interrupted jobs to keep).
    progress : bool
        Show a rich progress bar over the files (nothing is printed otherwise).
    engine : {"local", "dask"}
        ``"local"`` reads the files one after the other in this process; ``"dask"`` reads
        them on a Dask cluster, one task per batch of small files or per byte range of a
        large plain kernel log (:mod:`reliab.io.distributed`), with the same result.
        Works with ``store``.
    client : dask.distributed.Client, optional
        The cluster of ``engine="dask"``; default the current client, else a
        ``LocalCluster`` of one single-threaded worker process per core, closed afterwards.
    output : path, optional
        A folder where the tables read from files are written as Parquet partitioned by
        table, source and date, with the derived tables and a manifest written last (the
        commit point; a failed run commits nothing; :mod:`reliab.io._partitioned`).
        Locally each file's tables are written as soon as it is read, and a large kernel
        log's rows in batches while it is read (:mod:`reliab.io._streamed`), so memory
        stays bounded whatever the input size: the result is then an
        :class:`~reliab.io._result.OutputIngestResult` whose ``signals`` and ``telemetry``
        are read from the folder when first used (the same tables, rows and order as an
        in-memory run); ``summary()``, ``to_dict()`` and ``not_read()`` read nothing.
        With ``engine="dask"`` the workers write the tables and only the line accounting
        travels back through the scheduler; that result still holds every table.
    **options
        Reader options (``year``, ``tz``, ``boot_time``, ``host``, ``job_id``, ``fields``,
        column mappings…; :func:`reliab.io._options.reader_options` lists them), each
        passed to the readers that accept it; ``quarantine_limit=N``
        keeps at most N malformed lines per file in full and counts the rest in one
        summary row (default :data:`reliab.io._quarantine.QUARANTINE_LIMIT`).

    Returns
    -------
    IngestResult
        Tables, quarantine, per-file accounting and per-file source choices.

    Raises
    ------
    InputFileError
        A path does not exist, or with ``strict=True`` a file cannot be read.
    UnknownFormatError
        ``source`` names no parser, a URL's scheme no live source, or (``strict=True``)
        no reader recognises a file.
    ManifestError
        The manifest cannot be used; the message names file, line and key.
    TypeError
        An option that no reader accepts.
    """
    check_arguments(source, options)
    plan = prepare(paths, source=source, recursive=recursive, strict=strict, manifest=manifest,
                   options=options, run_keys=run_keys(), exclude=(store, output))
    attribution = plan.run_values({"policy": policy, "job_name": job_name, "rules": rules, "before": before,
                                   "after": after, "job_filter": job_filter}, _defaults())
    if engine not in ("local", "dask"):
        raise ValueError(f"engine must be 'local' or 'dask', got {engine!r}")
    if engine == "local" and client is not None:
        raise ValueError("client= goes with engine='dask'")
    if store is not None:
        from reliab.io._store import ingest_into

        if output is not None:
            raise ValueError("store= keeps the tables in the store; output= is for a run without one")
        return ingest_into(store, plan, strict=strict, progress=progress, attribution=attribution,
                           rebuild=rebuild, engine=engine, client=client)
    if rebuild:
        raise ValueError("rebuild=True needs store=")
    if engine == "dask":
        from reliab.io.distributed import ingest_dask

        return ingest_dask(plan, attribution, strict=strict, client=client, output=output, progress=progress)
    if output is not None:
        from reliab.io._streamed import ingest_output

        return ingest_output(plan, attribution, output=output, strict=strict, progress=progress)
    results: list[FileResult] = []
    choices: dict[str, SourceChoice | None] = {}
    parts = TableParts()
    advance, close = _progress(len(plan.entries), progress)
    try:
        with batching():  # plain rows of many files converted to Arrow at once (TableParts)
            for entry in plan.entries:
                for result, choice in read_entry(plan, entry, strict):
                    results.append(parts.take(result))
                    choices[result.path] = choice
                advance()
    finally:
        close()
    return finish(parts.tables(), accounting_of(results), sources_of(results, choices), notes=plan_notes(plan),
                  **attribution)


class TableParts:
    """The files' tables gathered in file order while the files are read, kept small.

    :meth:`take` moves a result's tables here and returns the result without them (its
    accounting is all the driver keeps per file); runs of consecutive Arrow tables are
    joined every :attr:`JOIN` files, so that 50,000 small files cost kilobytes each, not
    a table apiece.  Rows a file left unconverted (:class:`~reliab.io._rowtable.PendingRows`,
    read inside :func:`~reliab.io._rowtable.batching`) wait for those of the next files and
    are converted together, every :attr:`JOIN` files or :attr:`ROWS` rows and before any
    other part.  :meth:`tables` is :func:`file_tables` of the results taken.
    """

    #: consecutive Arrow tables joined into one at a time
    JOIN = 512
    #: pending rows converted at a time at most
    ROWS = 16_384
    NAMES = ("signals", "jobs", "telemetry", "lifetimes", "failures")

    def __init__(self) -> None:
        self._parts: dict[str, list[pd.DataFrame | pa.Table]] = {name: [] for name in (*self.NAMES, "quarantine")}
        self._run: dict[str, int] = dict.fromkeys(self.NAMES, 0)
        self._pending: dict[str, list[PendingRows]] = {name: [] for name in self.NAMES}
        self._pending_rows: dict[str, int] = dict.fromkeys(self.NAMES, 0)

    def take(self, result: FileResult) -> FileResult:
        """Keep ``result``'s tables; the result without them."""
        import dataclasses

        for name in self.NAMES:
            if name in result.tables:
                self._add(name, pending_part(result.tables, name))
        if result.quarantine is not None and len(result.quarantine):
            self._parts["quarantine"].append(result.quarantine)
        return dataclasses.replace(result, tables={}, quarantine=None)

    def _add(self, name: str, part: pd.DataFrame | pa.Table | PendingRows) -> None:
        if not len(part):
            return
        if isinstance(part, PendingRows):
            self._pending[name].append(part)
            self._pending_rows[name] += len(part)
            if len(self._pending[name]) >= self.JOIN or self._pending_rows[name] >= self.ROWS:
                self._convert(name)
            return
        self._convert(name)  # the rows of the files before this one come first
        self._append(name, part)

    def _convert(self, name: str) -> None:
        """The pending rows of ``name`` as one Arrow part (one conversion)."""
        if self._pending[name]:
            pending, self._pending[name], self._pending_rows[name] = self._pending[name], [], 0
            self._append(name, join_pending(pending))

    def _append(self, name: str, part: pd.DataFrame | pa.Table) -> None:
        parts = self._parts[name]
        parts.append(part)
        self._run[name] = self._run[name] + 1 if not isinstance(part, pd.DataFrame) else 0
        if self._run[name] >= self.JOIN:  # the trailing run of Arrow tables, in order
            import pyarrow as pa

            run = self._run[name]
            self._run[name] = 0  # (the joined table starts no run: each row is copied once)
            try:
                joined = pa.concat_tables(parts[-run:], promote_options="permissive").combine_chunks()
            except (pa.ArrowException, TypeError, ValueError):
                return
            del parts[-run:]
            parts.append(joined)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Signals, jobs, telemetry and quarantine, each concatenated in file order.

        The parts are let go as they are joined (a second call finds none): the finishing
        step then holds each table once, not beside the files' pieces of it.
        """
        for name in self.NAMES:
            self._convert(name)
        parts, self._parts = self._parts, {name: [] for name in self._parts}
        return {name: _concat(parts.pop(name), name) for name in list(parts)}


def read_entry(plan: RunPlan, entry: Entry, strict: bool) -> list[tuple[FileResult, SourceChoice]]:
    """Read one input of ``plan``: ``(result, choice)`` per accounting row it yields."""
    if entry.result is not None:
        r = entry.result
        return [(r, SourceChoice(r.source, 0.0, r.reason or ""))]
    if entry.url:
        return read_url(entry.path, dict(plan.options), strict)
    forced, why, options = plan.file_options(entry.path)
    choice = choose_source(Path(entry.path), forced, strict, why)
    return [(read_file(entry.path, choice, options, strict), choice)]


def read_url(url: str, options: dict[str, Any], strict: bool) -> list[tuple[FileResult, SourceChoice]]:
    """Read a ``scheme://`` input with its live source: one row per chunk it yields.

    A :class:`~reliab.errors.ReliabError` from the source (server down, bad URL) or a
    ``ValueError``/``TypeError`` (a bad window or option) fails the run with its one-line
    message, before anything is written; any other error becomes the URL's accounting row.
    """
    scheme = url_scheme(url) or ""
    handler = get_source(scheme)
    why = f"live source {scheme}://"
    try:
        results = list(handler.read(url, **options_for(handler.read, {**options, "strict": strict})))
    except (ReliabError, ValueError, TypeError):  # the source is down or the arguments are wrong
        raise
    except Exception as exc:  # noqa: BLE001 - a failing chunk is its row, not the run's end
        if strict:
            raise
        shown = hide_password(url)  # the location's password is for its server only
        results = [_failed_file(shown, f"{scheme}://",
                                hide_password(f"source failed ({type(exc).__name__}: {exc})"))]
    return [(canonical_result(r), SourceChoice(r.source, 1.0, why)) for r in results]


_EXCLUDED_RUN_KEYS = frozenset({"paths", "source", "recursive", "strict", "manifest", "store", "rebuild",
                                "progress", "job_filter", "engine", "client", "output"})


def run_keys() -> tuple[str, ...]:
    """Keywords of :func:`ingest` a manifest may set at its top level (``rules``, ``before``…)."""
    return tuple(p.name for p in inspect.signature(ingest).parameters.values()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in _EXCLUDED_RUN_KEYS)


def _defaults() -> dict[str, Any]:
    return {p.name: p.default for p in inspect.signature(ingest).parameters.values()
            if p.default is not inspect.Parameter.empty}


def plan_notes(plan: RunPlan) -> tuple[str, ...]:
    """Run-level notes of ``plan``: the manifests applied."""
    return tuple(f"hand-over manifest applied: {m.path}" for m in plan.all_manifests())


def file_tables(results: list[FileResult]) -> dict[str, pd.DataFrame]:
    """Per-file tables concatenated in file order: signals, jobs, telemetry, failures, quarantine."""
    tables = {name: _concat([part_of(r.tables, name) for r in results if name in r.tables], name)
              for name in ("signals", "jobs")}
    for name in ("telemetry", "lifetimes", "failures"):
        tables[name] = _concat([r.tables[name] for r in results if name in r.tables], name)
    tables["quarantine"] = _concat([r.quarantine for r in results if r.quarantine is not None],
                                   "quarantine")
    return tables


def accounting_of(results: list[FileResult]) -> pd.DataFrame:
    """One accounting row per file result (``lines = parsed + irrelevant + malformed``).

    ``reason`` says why a file was set aside (not read, or read no further), else NA.
    """
    if not results:
        return schema.empty("accounting")
    return schema.conform(pd.DataFrame(
        [(r.path, r.source, r.lines, r.parsed, r.irrelevant, r.malformed, r.reason) for r in results],
        columns=["path", "source", "lines", "parsed", "irrelevant", "malformed", "reason"],
    ), "accounting")


def sources_of(results: list[FileResult],
               choices: dict[str, SourceChoice | None]) -> dict[str, SourceChoice]:
    """Per path, the source choice with the parser's notes appended to its reason."""
    sources: dict[str, SourceChoice] = {}
    for r in results:
        choice = choices.get(r.path) or SourceChoice(r.source, 0.0, r.reason or "")
        if r.notes:
            choice = dataclasses.replace(choice, reason=f"{choice.reason}; {'; '.join(r.notes)}",
                                         notes=tuple(r.notes))
        sources[r.path] = choice
    return sources


def assemble(results: list[FileResult], choices: dict[str, SourceChoice | None],
             notes: tuple[str, ...] = (), **attribution: Any) -> IngestResult:
    """Concatenate per-file results (in order), validate, attribute: the IngestResult."""
    return finish(file_tables(results), accounting_of(results), sources_of(results, choices),
                  notes=notes, **attribution)


def finish(tables: dict[str, pd.DataFrame], accounting: pd.DataFrame,
           sources: dict[str, SourceChoice], notes: tuple[str, ...] = (), **attribution: Any) -> IngestResult:
    """Sort signals by time, validate every table and attribute interruptions.

    ``tables`` holds signals, jobs, telemetry and quarantine, already conformed; ``notes``
    are run-level remarks, to which a count of the files not read is added.
    """
    # the signals leave the (caller's) dict: sorted below, they are held once, not twice
    jobs, signals, repeated = drop_repeated_jobs(tables["jobs"], tables.pop("signals"))
    tables = {**tables, "jobs": jobs}
    notes = (*notes, repeated) if repeated else notes
    notes = (*notes, *forced_notes(sources))
    if not signals["time"].is_monotonic_increasing:  # a stable sort keeps sorted rows as they are
        signals = signals.sort_values("time", kind="stable")
    if not (isinstance(signals.index, pd.RangeIndex) and signals.index.start == 0
            and signals.index.step == 1):
        signals = signals.reset_index(drop=True)
    failures = tables.get("failures")
    if failures is None:  # a mode that does not carry failure records says so (never silent)
        failures, dropped = schema.empty("failures"), failures_not_kept(accounting, "store= (or output= with a distributed engine)")
        notes = (*notes, dropped) if dropped else notes
    tables = {**tables, "failures": failures}
    for name in ("jobs", "telemetry", "quarantine", "failures"):
        schema.validate(tables[name], name)
    schema.validate(signals, "signals")
    lifetimes, notes = lifetimes_of(tables, accounting, notes)
    return IngestResult(signals=signals, jobs=tables["jobs"], telemetry=tables["telemetry"], lifetimes=lifetimes,
                        failures=tables["failures"],
                        quarantine=tables["quarantine"], accounting=schema.validate(accounting, "accounting"),
                        sources=sources, **attribute_run(signals, tables["jobs"], accounting, notes, **attribution))


def lifetimes_of(tables: dict[str, pd.DataFrame], accounting: pd.DataFrame,
                 notes: tuple[str, ...]) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The validated ``lifetimes`` table, and ``notes`` with a warning when lifetimes files were
    read but the ingest mode (``store=``, ``output=``) does not carry their table."""
    if "lifetimes" in tables:
        return schema.validate(tables["lifetimes"], "lifetimes"), notes
    read = int(accounting.loc[accounting["source"].eq("lifetimes"), "parsed"].sum()) if len(accounting) else 0
    if read:
        notes = (*notes, f"Warning: {read} unit lives read from inventory files are not kept by this "
                 "ingest mode (store= or output=); ingest those files without it to analyse them")
    return schema.empty("lifetimes"), notes


def attribute_run(signals: pd.DataFrame, jobs: pd.DataFrame, accounting: pd.DataFrame,
                  notes: tuple[str, ...] = (), **attribution: Any) -> dict[str, Any]:
    """The :class:`IngestResult` fields the attribution decides: interruptions, user_failures,
    policy and notes (the policy's, the run's ``notes``, the count of files not read).

    ``signals`` may be only the rows :func:`reliab.job_outcomes` can use, in table order
    (the local engine with ``output=`` reads back no more, :mod:`reliab.io._streamed`).
    """
    from reliab.models.jobs._costed import job_outcomes  # attribution, then costs

    outcomes = job_outcomes(signals, jobs, sources=accounting["source"].unique(), **attribution)

    def conformed(frame: pd.DataFrame) -> pd.DataFrame:
        # the same (Arrow) string backing as every other table, e.g. after a Parquet trip
        return schema.validate(schema.conform(frame, "interruptions"), "interruptions")

    return {"interruptions": conformed(outcomes.interruptions), "user_failures": conformed(outcomes.user_failures),
            "policy": outcomes.policy,
            "notes": (outcomes.method, *outcomes.notes, *notes, *not_read_notes(accounting))}
