"""The Dask engine of :func:`reliab.ingest`: ``engine="dask"``, one task per batch of files or byte range.

``reliab.ingest(paths, engine="dask", client=None)`` plans the run on the client exactly
as the local engine does (:func:`reliab.io._plan.prepare`: discovery, manifests, every
input accounted for), then submits tasks (:mod:`reliab.io._tasks`):

* small files are grouped, in discovery order, into tasks of about ``BATCH_BYTES``
  on-disk bytes (per-task overhead is what limits a folder of 20,000 small logs), or
  fewer when that would leave fewer than 4 tasks per worker thread;
  each file is sniffed and read on the worker with the local engine's per-file step;
* a plain file larger than ``range_bytes`` whose reader is one prefiltered line scan
  (kernel logs) is read as byte ranges (:mod:`reliab.io._ranges`): one task per range
  finds its candidate lines, one task parses them in file order, so the result, line
  numbers in origins and quarantine included, equals a whole-file read.  Compressed
  files are never split (a compressed stream cannot be entered in the middle).

Live ``scheme://`` inputs and files set aside by discovery are handled on the client.
Without ``output`` the per-file tables travel back through the scheduler; with it, each
task writes its tables as Parquet parts partitioned by source and date
(:mod:`reliab.io._partitioned`) and only the line accounting travels back.  The client
then concatenates in input order, validates and attributes interruptions with the same
:func:`reliab.io._finish.finish` as the local engine: the result is the local result.

Failures: a task lost with its worker is re-run by the scheduler on another worker (Dask's
``distributed.scheduler.allowed-failures`` times); when a task fails for good, the run
raises :class:`~reliab.errors.DistributedError` naming the task's files, cancels the
other tasks and deletes the parts this run wrote: nothing partial is returned or
committed.  With ``store=`` the store's own rules apply (:mod:`reliab.io._store`): the
reads run on the cluster, the ledger and tables stay with the client.

Dask is an optional dependency: ``pip install 'reliab[distributed]'``.  Workers must be
able to import ``reliab`` and read the input paths (and write ``output``); parsers
registered only in the client session are unknown to them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.errors import DistributedError, ReliabError
from reliab.io import _partitioned, _ranges
from reliab.io._finish import finish, plan_notes, sources_of
from reliab.io._merge import accounting_of, concat, file_tables
from reliab.io._merge import progress as progress_bar
from reliab.io._plan import ReadEntry, RunPlan
from reliab.io._readfile import choose_source
from reliab.io._registry import FileResult
from reliab.io._result import IngestResult, SourceChoice
from reliab.io._tasks import COMBINE, Item, TaskOutput, collect_span, read_batch, read_spans

__all__ = ["ingest_dask", "read_many", "dask_client", "batches", "BATCH_BYTES", "RANGE_BYTES"]

#: on-disk bytes of small files grouped into one task
BATCH_BYTES = 8 << 20
#: plain files larger than this are read as byte ranges of this size (kernel logs)
RANGE_BYTES = _ranges.RANGE_BYTES


def _distributed() -> Any:
    """``dask.distributed``, or an ImportError saying how to install it."""
    try:
        import dask.distributed
    except ImportError as exc:
        raise ImportError("engine='dask' needs dask.distributed: pip install 'reliab[distributed]'") from exc
    return dask.distributed


@contextmanager
def dask_client(client: Any = None, *, scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """The client to use: ``client``, else one for ``scheduler``, else the current one, else a new local cluster.

    A client made here (and its ``LocalCluster`` of ``workers`` single-threaded worker
    processes, default one per core) is closed when the block ends.
    """
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if client is not None:
        yield client
        return
    distributed = _distributed()
    if scheduler is not None:
        with distributed.Client(scheduler) as own:
            yield own
        return
    if workers is None:
        try:
            yield distributed.get_client()
            return
        except ValueError:  # no client in this session
            pass
    cluster = distributed.LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as own:
        yield own


def batches(sizes: list[int], batch_bytes: int | None) -> list[list[int]]:
    """Positions grouped, in order, into batches of at most ``batch_bytes`` bytes.

    A file larger than ``batch_bytes`` is a batch of its own; ``None`` gives one per file.
    """
    if batch_bytes is None:
        return [[i] for i in range(len(sizes))]
    groups: list[list[int]] = []
    size = 0
    for i, n in enumerate(sizes):
        if not groups or size + n > batch_bytes:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += n
    return groups


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class _Submitted:
    """The futures of one run, with the files each one reads (for error messages)."""

    def __init__(self, client: Any, token: str) -> None:
        self.client = client
        self.token = token
        self.futures: list[Any] = []
        self.files: dict[str, list[str]] = {}

    def submit(self, fn: Callable[..., Any], *args: Any, key: str, files: list[str]) -> Any:
        future = self.client.submit(fn, *args, key=f"reliab-{key}-{self.token}", pure=False)
        self.files[future.key] = files
        return future

    def gather(self, futures: list[Any], progress: bool) -> list[Any]:
        """Results of ``futures`` in order; a task failed for good raises DistributedError."""
        advance, close = progress_bar(len(futures), progress)
        try:
            if progress:
                for _ in _distributed().as_completed(futures):
                    advance()
            return self.client.gather(futures)
        except ReliabError:  # strict=True: the file's own error (file and line named)
            self.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - a lost worker, a broken connection, a crash
            self.cancel()
            text = str(exc)  # the failed task's key is in the message (KilledWorker), else its status says
            failed = [k for k in self.files if k in text] or [f.key for f in self.futures if f.status == "error"]
            files = list(dict.fromkeys(p for k in failed for p in self.files.get(k, [])))
            named = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            raise DistributedError(
                f"engine='dask': {len(failed) or 'a'} task(s) failed for good"
                + (f" reading {named}" if named else "")
                + f" ({type(exc).__name__}: {exc}); no table was returned or committed."
                " Rerun; if workers keep dying, give them more memory or raise"
                " distributed.scheduler.allowed-failures") from exc
        finally:
            close()

    def cancel(self) -> None:
        self.client.cancel(self.futures)


def _submit_file_tasks(sub: _Submitted, segments: list[list[Item]], strict: bool, output: str | None, run: str,
                       batch_bytes: int | None, range_bytes: int) -> tuple[list[Any], list[int]]:
    """One future per task, in input order: batches of small files, range reads of large ones.

    ``segments`` are runs of files between live sources; no task spans two segments, and
    each gap between segments reserves a task number (returned) for the live source's rows,
    so that every row keeps its input position.
    """
    futures: list[Any] = []
    gaps: list[int] = []
    small: list[Item] = []
    number = [0]

    def task() -> int:
        number[0] += 1
        return number[0] - 1

    def flush() -> None:
        sizes = [_size(i.path) for i in small]
        for group in batches(sizes, _batch_size(sub.client, sum(sizes), batch_bytes)):
            chunk = [small[i] for i in group]
            n = task()
            futures.append(sub.submit(read_batch, chunk, strict, output, run, n, key=f"read-{n}",
                                      files=[i.path for i in chunk]))
        small.clear()

    for k, items in enumerate(segments):
        if k:
            gaps.append(task())
        for item in items:
            choice = _split_choice(item, strict, range_bytes)
            if choice is None:
                small.append(item)
                continue
            flush()
            n = task()
            hits = [sub.submit(collect_span, span, choice, item.options, key=f"span-{n}-{span.index}",
                               files=[item.path]) for span in _ranges.spans(item.path, range_bytes)]
            sub.futures.extend(hits)
            futures.append(sub.submit(read_spans, item, choice, strict, output, run, n, *hits,
                                      key=f"parse-{n}", files=[item.path]))
        flush()
    sub.futures.extend(futures)
    return futures, gaps


def _batch_size(client: Any, total: int, batch_bytes: int | None) -> int | None:
    """``batch_bytes``, made smaller when needed so that every worker thread gets about 4 tasks."""
    if batch_bytes is None:
        return None
    try:
        threads = max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - a client that cannot say: keep the setting
        return batch_bytes
    return max(1, min(batch_bytes, total // (4 * threads)))


def _split_choice(item: Item, strict: bool, range_bytes: int) -> SourceChoice | None:
    """The source of a file to read as byte ranges; ``None`` for a file read whole."""
    if _size(item.path) <= range_bytes:
        return None
    choice = choose_source(Path(item.path), item.forced, strict, item.why)
    return choice if _ranges.splittable(item.path, choice.source, range_bytes) else None


def _merge(plan: RunPlan, outputs: list[TaskOutput], strict: bool, read_entry: ReadEntry
           ) -> tuple[list[FileResult], dict[str, SourceChoice | None], list[list[FileResult]]]:
    """Per-entry results in input order (remote ones from the tasks, the rest read here), and
    the results of each live source."""
    remote = iter((r, c) for out in outputs for r, c in zip(out.results, out.choices, strict=True))
    results: list[FileResult] = []
    choices: dict[str, SourceChoice | None] = {}
    live: list[list[FileResult]] = []
    for entry in plan.entries:
        if entry.result is None and not entry.url:
            result, choice = next(remote)
            results.append(result)
            choices[result.path] = choice
            continue
        read = read_entry(plan, entry, strict)
        for result, choice in read:
            results.append(result)
            choices[result.path] = choice
        if entry.url:
            live.append([r for r, _ in read])
    return results, choices, live


def _segments(plan: RunPlan) -> list[list[Item]]:
    """The files of ``plan`` to read on the cluster, cut at every live source."""
    segments: list[list[Item]] = [[]]
    for e in plan.entries:
        if e.url:
            segments.append([])
        elif e.result is None:
            segments[-1].append(Item(e.path, *plan.file_options(e.path)))
    return segments


def read_many(client: Any, items: list[Item], strict: bool, *, progress: bool = False
              ) -> dict[str, Callable[[], tuple[FileResult, SourceChoice]]]:
    """Read ``items`` on the cluster (tables travel back); per path, its result and choice.

    Used by the incremental store with ``engine="dask"``.

    Raises
    ------
    DistributedError
        A task failed for good.
    """
    sub = _Submitted(client, uuid.uuid4().hex[:12])
    futures, _ = _submit_file_tasks(sub, [items], strict, None, "", BATCH_BYTES, RANGE_BYTES)
    outputs: list[TaskOutput] = sub.gather(futures, progress)
    pairs = [(r, c) for out in outputs for r, c in zip(out.results, out.choices, strict=True)]
    return {item.path: (lambda pair=pair: pair) for item, pair in zip(items, pairs, strict=True)}


def ingest_dask(plan: RunPlan, attribution: dict[str, Any], read: ReadEntry, *, strict: bool, client: Any = None,
                output: str | os.PathLike[str] | None = None, progress: bool = False) -> IngestResult:
    """The Dask engine behind ``reliab.ingest(..., engine="dask")`` (see the module doc).

    Task sizes are the module settings :data:`BATCH_BYTES` and :data:`RANGE_BYTES`, read
    at each call.

    Raises
    ------
    DistributedError
        A task failed for good (its worker died too often, the connection broke).
    """
    segments = _segments(plan)
    out = None if output is None else str(Path(output).resolve())
    run = _partitioned.new_run()
    with dask_client(client) as c:
        sub = _Submitted(c, uuid.uuid4().hex[:12])
        try:
            futures, gaps = _submit_file_tasks(sub, segments, strict, out or COMBINE, run, BATCH_BYTES, RANGE_BYTES)
            outputs: list[TaskOutput] = sub.gather(futures, progress)
        except BaseException:
            if out is not None:
                _partitioned.discard_run(out, run)
            raise
    results, choices, live = _merge(plan, outputs, strict, read)
    parts = [p for o in outputs for p in o.parts]
    if out is None:  # each task's tables, and each live source's, in input order
        numbered = [(n, o.tables) for n, o in zip(_numbers(gaps, len(outputs)), outputs, strict=True)]
        numbered += [(n, file_tables(rs)) for n, rs in zip(gaps, live, strict=True)]
        numbered.sort(key=lambda x: x[0])
        tables = {t: concat([frames[t] for _, frames in numbered if frames and t in frames], t)
                  for t in (*_partitioned.PARTITIONED, "failures")}
    else:
        for n, rs in zip(gaps, live, strict=True):  # live sources' rows: the parts of their reserved tasks
            parts += _partitioned.write_parts(rs, out, run, n)
        tables = {t: _partitioned_table(out, parts, t) for t in _partitioned.PARTITIONED}
    result = finish(tables, accounting_of(results), sources_of(results, choices), notes=plan_notes(plan),
                    **attribution)
    if out is not None:
        _partitioned.commit(out, run, parts, {"interruptions": result.interruptions,
                                              "user_failures": result.user_failures,
                                              "accounting": result.accounting},
                            {"policy": result.policy, "notes": list(result.notes)})
    return result


def _numbers(gaps: list[int], n_tasks: int) -> list[int]:
    """Task numbers of the ``n_tasks`` submitted tasks: every number not reserved for a live source."""
    reserved = set(gaps)
    return [n for n in range(n_tasks + len(gaps)) if n not in reserved]


def _partitioned_table(out: str, parts: list[dict[str, Any]], table: str) -> pd.DataFrame:
    """One table from this run's parts (not yet committed), rows in input order."""
    return _partitioned.read_parts(out, [p for p in parts if p["table"] == table], table)
