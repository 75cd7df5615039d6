"""The Dask runner of :func:`reliab.ingest`: ``engine="dask"``, one task per batch of files or byte range.

The run is planned on the client as in a local run (:func:`reliab.io._plan.prepare`), then
tasks are submitted (:mod:`reliab.io._tasks`):

* small files are grouped, in discovery order, into tasks of about ``BATCH_BYTES``
  on-disk bytes (per-task overhead is what limits a folder of 20,000 small logs), or
  fewer when that would leave fewer than 4 tasks per worker thread;
* a plain file larger than ``RANGE_BYTES`` whose reader is one prefiltered line scan
  (kernel logs) is read as byte ranges (:mod:`reliab.io._ranges`): one task per range
  finds its candidate lines, one task parses them in file order, so the result equals a
  whole-file read.  Compressed files are never split.

Live ``scheme://`` inputs and files set aside by discovery are handled on the client.  Each
task's tables travel back through the scheduler, joined (``store=``: file by file), or with
``output`` are written by the task as Parquet parts (:mod:`reliab.io._partitioned`) and only
the line accounting travels back; with ``store=`` only the files the ledger says are new are
read on the cluster.  :func:`read_ahead` hands the pipeline's loop each input's rows in input
order, so the result is the local result.

Failures: a task lost with its worker is re-run by the scheduler on another worker (Dask's
``distributed.scheduler.allowed-failures`` times); when a task fails for good, the run
raises :class:`~reliab.errors.DistributedError` naming the task's files, cancels the
other tasks and deletes the parts this run wrote: nothing partial is returned or committed.

Dask is an optional dependency: ``pip install 'reliab[distributed]'``.  Workers must be
able to import ``reliab`` and read the input paths (and write ``output``); parsers
registered only in the client session are unknown to them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from reliab.errors import DistributedError, ReliabError
from reliab.io import _partitioned, _ranges
from reliab.io._discover import Entry
from reliab.io._plan import ReadEntry, RunPlan, Session
from reliab.io._readfile import choose_source
from reliab.io._registry import FileResult
from reliab.io._result import SourceChoice
from reliab.io._tasks import COMBINE, Item, TaskOutput, collect_span, read_batch, read_spans

__all__ = ["read_ahead", "dask_client", "batches", "BATCH_BYTES", "RANGE_BYTES",
           "QUIET_CLUSTER"]

#: Dask settings of the cluster :func:`dask_client` starts: it has no dashboard, so no
#: statistical profiler (a stack sample every 10 ms) and slower event-loop, system and memory
#: checks (20 ms, 500 ms, 100 ms by default); idle, 2 workers cost ~50 ms of CPU a second with
#: the defaults and ~9 ms with these
QUIET_CLUSTER = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "500ms",
                 "distributed.admin.system-monitor.interval": "5s",
                 "distributed.worker.memory.monitor-interval": "1s"}

#: on-disk bytes of small files grouped into one task
BATCH_BYTES = 8 << 20
#: plain files larger than this are read as byte ranges of this size (kernel logs)
RANGE_BYTES = _ranges.RANGE_BYTES


@contextmanager
def dask_client(client: Any = None, *, scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """The client to use: ``client``, else one for ``scheduler``, else the current one, else a new local cluster.

    A client made here (and its ``LocalCluster`` of ``workers`` single-threaded worker
    processes, default one per core, with the settings :data:`QUIET_CLUSTER`) is closed when
    the block ends.
    """
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if client is not None:
        yield client
        return
    try:
        import dask.distributed as distributed
    except ImportError as exc:
        raise ImportError("engine='dask' needs dask.distributed: pip install 'reliab[distributed]'") from exc
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
    import dask

    with dask.config.set(QUIET_CLUSTER):  # the nannies hand it to their workers
        # without a dashboard the scheduler still serves its health routes, on 8787 unless told
        cluster = distributed.LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    with cluster, distributed.Client(cluster) as own:
        yield own


def batches(sizes: list[int], batch_bytes: int) -> list[list[int]]:
    """Positions grouped, in order, into batches of at most ``batch_bytes`` bytes.

    A file larger than ``batch_bytes`` is a batch of its own.
    """
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

    def gather(self, futures: list[Any]) -> list[Any]:
        """Results of ``futures`` in order; a task failed for good raises DistributedError."""
        with self.failing():
            return self.client.gather(futures)

    def in_order(self, futures: list[Any]) -> Iterator[Any]:
        """Each future's result, in order, as soon as it and those before it are done."""
        with self.failing():
            for future in futures:
                yield future.result()

    @contextmanager
    def failing(self) -> Iterator[None]:
        """A task failed for good: the other tasks cancelled, DistributedError raised."""
        try:
            yield
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

    def cancel(self) -> None:
        self.client.cancel(self.futures)


def _submit_file_tasks(sub: _Submitted, segments: list[list[Item]], strict: bool, output: str | None,
                       run: str) -> tuple[list[Any], list[int]]:
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
        for group in batches(sizes, _batch_size(sub.client, sum(sizes))):
            chunk = [small[i] for i in group]
            n = task()
            futures.append(sub.submit(read_batch, chunk, strict, output, run, n, key=f"read-{n}",
                                      files=[i.path for i in chunk]))
        small.clear()

    for k, items in enumerate(segments):
        if k:
            gaps.append(task())
        for item in items:
            choice = _split_choice(item, strict)
            if choice is None:
                small.append(item)
                continue
            flush()
            n = task()
            hits = [sub.submit(collect_span, span, choice, item.options, key=f"span-{n}-{span.index}",
                               files=[item.path]) for span in _ranges.spans(item.path, RANGE_BYTES)]
            sub.futures.extend(hits)
            futures.append(sub.submit(read_spans, item, choice, strict, output, run, n, *hits,
                                      key=f"parse-{n}", files=[item.path]))
        flush()
    sub.futures.extend(futures)
    return futures, gaps


def _batch_size(client: Any, total: int) -> int:
    """:data:`BATCH_BYTES`, made smaller when needed so that every worker thread gets about 4 tasks."""
    try:
        threads = max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - a client that cannot say: keep the setting
        return BATCH_BYTES
    return max(1, min(BATCH_BYTES, total // (4 * threads)))


def _split_choice(item: Item, strict: bool) -> SourceChoice | None:
    """The source of a file to read as byte ranges; ``None`` for a file read whole."""
    if _size(item.path) <= RANGE_BYTES:
        return None
    choice = choose_source(Path(item.path), item.forced, strict, item.why)
    return choice if _ranges.splittable(item.path, choice.source, RANGE_BYTES) else None


def _segments(plan: RunPlan) -> list[list[Item]]:
    """The files of ``plan`` to read on the cluster, cut at every live source."""
    segments: list[list[Item]] = [[]]
    for e in plan.entries:
        if e.url:
            segments.append([])
        elif e.result is None:
            segments[-1].append(Item(e.path, *plan.file_options(e.path)))
    return segments


@contextmanager
def read_ahead(plan: RunPlan, read: ReadEntry, session: Session, *, strict: bool,
               client: Any = None) -> Iterator[ReadEntry]:
    """The files of ``plan`` read by tasks on the cluster for ``session``, handed out input by input.

    The tasks are submitted at once; the reader returned gives a file of ``plan``, asked for
    in input order, its result as soon as its task is done, the tables as ``session.tasks``
    says (:class:`~reliab.io._plan.Session`); a file asked for again, or not in ``plan``,
    and every other input is read here with ``read``.  When the tasks write Parquet parts, a
    live source's rows are written here at the task number kept for them, and
    :meth:`~reliab.io._plan.Session.written` is given the manifest records of every part.

    Raises
    ------
    DistributedError
        A task failed for good (its worker died too often, the connection broke).
    """
    tasks, run, keep = session.tasks, session.run, session.written
    writes = tasks is not None and tasks != COMBINE
    with dask_client(client) as c:
        sub = _Submitted(c, uuid.uuid4().hex[:12])
        segments = _segments(plan)
        futures, gaps = _submit_file_tasks(sub, segments, strict, tasks, run)
        # tables written: every task's accounting at once (nothing is left running when one fails)
        outputs: Iterator[TaskOutput] = iter(sub.gather(futures)) if writes else sub.in_order(futures)
        files = [id(e) for e in plan.entries if e.result is None and not e.url]  # (the items, in order)
        remote = zip(files, (pair for out in outputs if keep(out.parts) is None
                             for pair in zip(out.results, out.choices, strict=True)), strict=True)
        ahead = set(files)
        live = iter(gaps)

        def read_one(plan: RunPlan, entry: Entry, strict: bool) -> list[tuple[FileResult, SourceChoice]]:
            if id(entry) in ahead:
                ahead.discard(id(entry))
                for key, pair in remote:  # in input order; files the session did not ask for are passed
                    if key == id(entry):
                        return [pair]
            rows = read(plan, entry, strict)
            if entry.url and writes:
                keep(_partitioned.write_parts([r for r, _ in rows], str(tasks), run, next(live)))
                rows = [(replace(r, tables={}, quarantine=None), choice) for r, choice in rows]
            return rows

        try:
            yield read_one
        finally:
            sub.cancel()  # (nothing left to cancel after a complete run)
