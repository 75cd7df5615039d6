"""Per-GPU telemetry reduced to host-hour windows on Dask, equal to the one-machine reduction.

:func:`reduce_telemetry` runs the three mergeable steps of :mod:`reliab.windows` where the
data lies: each partition (a file of samples) is cleaned and cut into per-series,
per-window partial sums (:func:`reliab.windows.window_partials`); the partials are shuffled
so that every series of a host meets in one partition, merged
(:func:`reliab.windows.combine_partials`) and finalised
(:func:`reliab.windows.finalize_windows`): mean, min, max, observed hours, hours above a
threshold.  The raw samples never leave their worker; only partial sums move.  When the
input is Parquet files whose footers give each file's host range (telemetry written per
host, rack or pod, any number of days per file), the files are first cut into groups that
share no host (:func:`host_groups`): no shuffle at all.  Each group's files are reduced in
runs of ``task_span`` (a week by default; the time range of each file is in its footer),
one task per run (whatever the number of groups; with fewer than two groups per worker
thread a run is read by one task and finished by another, so a single group's runs are read
on every worker: :mod:`reliab.fleet._chains`), each continuing the run before it (:mod:`reliab.fleet._chunk`: the partials of the run's last
window, the last sample of every series for the swing across the cut), so a task's memory does not grow with the
number of days.  These tasks work on integer series codes and numpy arrays (:mod:`reliab.fleet._rows`; a window's few samples and
a host's GPUs are folded as the rows of a grid, :mod:`reliab.fleet._segments`, not sorted or
``reduceat``), read only the columns they reduce, and clean (:func:`reliab.align.clean_times`) only a file that needs it
(missing times or keys, repeated timestamps); their windows equal those of
:func:`finish_partials` on the whole group.

It adds **power-swing counts**: with ``swings={"power_w": 300}`` each window gets
``power_w_swings``, the number of samples whose power moved at least 300 W from the
series' previous sample, averaged over the host's GPUs (a checkpoint that stalls a whole
job shows as one swing down and one up per GPU; Llama 3, arXiv 2407.21783 §3.3.4, reports
such synchronised swings of tens of megawatts).  A step is counted in the window of its
later sample; steps between two partitions of a series are counted when the partials
meet, from the first and last values each partition keeps, so the count is that of the
whole series.  This needs the partitions of one series not to overlap in time (telemetry
partitioned by time, as exporters write it); overlapping ones raise ``ValueError``.

Without a client, Parquet files whose footers give the host ranges are reduced by the same
host-group tasks in this process, on threads (:mod:`reliab.fleet._local`): the windows
equal the Dask route's bit for bit, whatever the number of threads.  A table in memory,
files without host ranges in their footers, and files in which one series' pieces overlap
in time (with swings) are reduced at once as one partition: that is the local reduction
the distributed one equals (to floating-point summation order).  Duplicate timestamps of a
series are merged within a partition (as :func:`reliab.align.clean_times` does);
duplicates split across partitions (files) are not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from reliab.align import key_codes
from reliab.fleet._chains import run_groups_on_dask
from reliab.fleet._chunk import Spec, footer_ranges
from reliab.fleet._frames import Source, as_dask
from reliab.fleet._local import Plan, default_workers, plan, run_groups
from reliab.fleet._local import group_by_hosts as _group_by_hosts
from reliab.fleet._partials import FIRST, LAST, STEPS, telemetry_partials
from reliab.fleet._rows import OverlapError
from reliab.windows import (
    SUM_SUFFIXES,
    combine_partials,
    count_events,
    finalize_windows,
)
from reliab.windows import measurement_columns as _measurements

__all__ = ["reduce_telemetry", "telemetry_partials", "finish_partials", "host_groups"]

def _boundary_steps(parts: pd.DataFrame, swings: Mapping[str, float]) -> pd.DataFrame:
    """Add to each partial row the step from the series' previous row (another partition or window)."""
    key = key_codes(parts, ["host", "gpu"])
    first = parts["first"].to_numpy(dtype="datetime64[ns]")
    last = parts["last"].to_numpy(dtype="datetime64[ns]")
    order = np.lexsort((first, key))
    same = key[order][1:] == key[order][:-1]
    if (same & (first[order][1:] < last[order][:-1])).any():
        bad = parts.iloc[order[1:][same & (first[order][1:] < last[order][:-1])][0]]
        raise ValueError(f"telemetry of series host={bad['host']} gpu={bad['gpu']} comes in partitions that "
                         "overlap in time; power swings need the partitions of a series to follow each other")
    out = parts.copy()
    for c, level in swings.items():
        prev = out[f"{c}{LAST}"].to_numpy()[order][:-1]
        nxt = out[f"{c}{FIRST}"].to_numpy()[order][1:]
        jump = np.zeros(len(out), dtype=np.int64)
        jump[order[1:]] = (same & (np.abs(nxt - prev) >= float(level))).astype(np.int64)
        out[f"{c}{STEPS}"] = out[f"{c}{STEPS}"].to_numpy() + jump
    return out.drop(columns=[f"{c}{s}" for c in swings for s in (FIRST, LAST)])


def finish_partials(parts: pd.DataFrame, *, freq: str, level: Literal["gpu", "host"] = "host",
                    thresholds: Mapping[str, float] | None = None,
                    swings: Mapping[str, float] | None = None,
                    events: pd.DataFrame | None = None, event_name: str = "failures") -> pd.DataFrame:
    """Windows of the series in ``parts`` (all partials of each of them): merge, finalise, and
    count ``events`` per host window (:func:`reliab.windows.count_events`)."""
    if swings:
        parts = _boundary_steps(parts, swings)
    parts.attrs = {"freq": freq, "thresholds": dict(thresholds or {})}
    merged = combine_partials([parts])
    out = finalize_windows(merged, level=level, freq=freq)
    if swings:
        keys = ["host", "gpu"] if level == "gpu" else ["host"]
        counts = merged.groupby([*keys, "window"], dropna=False, sort=True)[
            [f"{c}{STEPS}" for c in swings]].mean()
        counts.columns = [f"{c}_swings" for c in swings]
        out = out.merge(counts.reset_index(), on=[*keys, "window"], how="left")
    if events is not None:
        out = count_events(out, events, name=event_name, freq=freq)
        out.attrs = {}
    return out


def _dask_reduce(ddf: Any, kw: dict[str, Any], level: str, partitions: int | None) -> Any:
    """The distributed plan: partials per partition, shuffle by host, merge and finalise per partition."""
    sample = ddf.get_partition(0).head(2000)  # reads the start of one file: the output columns
    if not len(sample):
        raise ValueError("the first partition of the telemetry is empty")
    pkw = {k: kw[k] for k in ("freq", "columns", "thresholds", "swings", "duplicates")}
    probe = telemetry_partials(sample, **pkw)
    parts = ddf.map_partitions(telemetry_partials, **pkw, meta=probe.iloc[:0])
    n = partitions or max(1, min(ddf.npartitions, 256))
    shuffled = parts.shuffle("host", npartitions=n)
    fkw = {k: kw[k] for k in ("freq", "thresholds", "swings", "events", "event_name")}
    meta = finish_partials(probe, level=level, **fkw).iloc[:0]
    return shuffled.map_partitions(_finish_or_empty, meta, level=level, **fkw, meta=meta)


def _finish_or_empty(parts: pd.DataFrame, empty: pd.DataFrame, **kw: Any) -> pd.DataFrame:
    """:func:`finish_partials`, or ``empty`` for a partition the shuffle left without a host."""
    return finish_partials(parts, **kw) if len(parts) else empty.copy()


def host_groups(files: Sequence[str]) -> list[list[str]] | None:
    """Files cut into groups that share no host, from the host range in each file's footer.

    Files whose ranges overlap go together; ``None`` when a footer lacks the range.  Telemetry
    written per rack, pod or host (each file one group of hosts, any number of days) gives
    one group per rack, pod or host.
    """
    ranges = [footer_ranges(f)[0] for f in files]
    return None if any(r is None for r in ranges) else _group_by_hosts(files, ranges)  # type: ignore[arg-type]


def _spec(first_file: str, kw: dict[str, Any], level: str) -> Spec:
    """What every task is asked for: measurement columns from the first file, events one row per host."""
    import pyarrow.parquet as pq

    empty = pq.read_schema(first_file).empty_table().to_pandas()
    columns = _measurements(empty, kw["columns"])
    thresholds = dict(kw["thresholds"] or {})
    bad = [c for c in [*thresholds, *kw["swings"]] if c not in empty.columns]
    if bad:
        raise ValueError(f"thresholds/swings name column(s) {bad} not in the telemetry ({list(empty.columns)})")
    events = kw["events"]
    if events is not None:
        col = "host" if "host" in events.columns else "hosts" if "hosts" in events.columns else None
        if col is None or "time" not in events.columns:
            raise ValueError("events need a 'time' column and a 'host' (or 'hosts') column")
        ev = events[["time", col]].dropna(subset=[col])
        ev = ev.assign(host=ev[col].astype(str).str.split(",")).explode("host")[["time", "host"]]
        events = ev.assign(host=ev["host"].str.strip())
    return Spec(step=pd.Timedelta(pd.tseries.frequencies.to_offset(kw["freq"])).value, freq=kw["freq"], level=level,
                columns=tuple(columns), thresholds=thresholds, swings=dict(kw["swings"]),
                summed=tuple(c for c in columns if c.endswith(SUM_SUFFIXES)), duplicates=kw["duplicates"],
                event_name=kw["event_name"], events=events)


def _by_host_groups(client: Any, found: Plan, kw: dict[str, Any], level: str, output: str | os.PathLike[str] | None,
                    task_span: str | None) -> list[pd.DataFrame] | Path:
    """Tasks of a host group and a run of its files in time, each continuing the one before
    (:mod:`reliab.fleet._chains`)."""
    # the spec (a few hundred bytes) travels with each task rather than scattered: scattered data
    # is lost with a worker that dies, and no task could then run ("lost dependencies")
    spec = _spec(found[0][0][0], kw, level)
    span_ns = None if task_span is None else pd.Timedelta(task_span).value
    folder = None if output is None else Path(output)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    done = run_groups_on_dask(client, found, spec, span_ns, folder, _direct(client))
    if folder is not None:
        return folder
    return [d for d in done if d is not None]


def _joined(frames: list[pd.DataFrame], level: str, attrs: dict[str, Any]) -> pd.DataFrame:
    """The tasks' windows in one frame, by host (and GPU) then window."""
    if level == "host":
        out = _in_order(frames)
    else:
        out = pd.concat(frames, ignore_index=True).sort_values(["host", "gpu", "window"], kind="stable",
                                                                 ignore_index=True)
    out.attrs = attrs
    return out


def _direct(client: Any) -> bool | None:
    """Gather straight from the workers when they run on the scheduler's machine (a local
    cluster: the windows then cross one socket instead of two, both in this process); else
    the client's own choice."""
    if client.direct_to_workers is not None:
        return None
    from distributed.comm import get_address_host

    try:
        here = get_address_host(client.scheduler.address)
        hosts = {get_address_host(w) for w in client.scheduler_info().get("workers", {})}
    except (ValueError, TypeError, AttributeError):
        return None
    return True if hosts == {here} else None


def _in_order(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The tasks' host windows joined by host then window (a stable sort of the joined rows).

    Each task's windows come by host then window, the host groups in host order and a
    group's runs in time order: so a host's rows in one task (a block) are moved whole,
    blocks by host then task, and rows are sorted one by one only if that order is not
    strictly by host then window.
    """
    out = pd.concat(frames, ignore_index=True)
    host = out["host"].to_numpy()
    window = pd.DatetimeIndex(out["window"]).asi8
    task = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    new = np.ones(len(out), dtype=bool)
    new[1:] = (host[1:] != host[:-1]) | (task[1:] != task[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.r_[starts, len(out)])
    if not all(isinstance(h, str) for h in host[starts]):
        return out.sort_values(["host", "window"], kind="stable", ignore_index=True)
    rank = np.unique(host[starts], return_inverse=True)[1]
    blocks = np.lexsort((starts, rank))
    order = np.arange(len(out)) + np.repeat(starts[blocks] - np.cumsum(counts[blocks]) + counts[blocks],
                                            counts[blocks])
    same = np.repeat(rank[blocks], counts[blocks])
    w = window[order]
    if not ((w[1:] > w[:-1]) | (same[1:] != same[:-1])).all():
        return out.sort_values(["host", "window"], kind="stable", ignore_index=True)
    out = out.take(order)
    out.index = pd.RangeIndex(len(out))
    return out


def reduce_telemetry(
    telemetry: Source,
    *,
    client: Any = None,
    freq: str = "1h",
    level: Literal["gpu", "host"] = "host",
    columns: Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    swings: Mapping[str, float] | None = None,
    events: pd.DataFrame | None = None,
    event_name: str = "failures",
    duplicates: Literal["mean", "first", "last", "error"] = "mean",
    output: str | os.PathLike[str] | None = None,
    partitions: int | None = None,
    task_span: str | None = "7D",
    workers: int | None = None,
) -> pd.DataFrame | Path:
    """Reduce per-GPU telemetry to host (or GPU) windows, on Dask when ``client`` is given.

    Parameters
    ----------
    telemetry : DataFrame, Dask DataFrame, path or list of paths
        Canonical telemetry (``time`` UTC, ``host``, ``gpu``, measurements): in memory, or
        Parquet files, a folder of them, or the output folder of a Dask ingest
        (:func:`reliab.fleet._frames.as_dask`).
    client : dask.distributed.Client, optional
        Run on this cluster; without it the reduction runs in this process (Parquet
        files: the Dask route's tasks on ``workers`` threads; else one partition).
    freq : str
        Window length (``"1h"``: host-hour windows).
    level : {"host", "gpu"}
        One row per host and window, or per GPU and window.
    columns, thresholds, duplicates
        As for :func:`reliab.windows.telemetry_windows` (``thresholds`` gives
        ``{c}_hours_above``).
    swings : mapping, optional
        Column -> step in its unit (``{"power_w": 300}``): adds ``{c}_swings``, the power-swing
        count per window (see the module doc).
    events : pandas.DataFrame, optional
        Failures (``time`` and ``host``, or ``hosts`` as in the interruptions table) to count
        per host window into column ``event_name`` (:func:`reliab.windows.count_events`),
        while each host's windows are together; needs ``level="host"``.
    event_name : str
        Name of that column.
    output : path, optional
        With ``client``: write the windows as Parquet files into this folder (one per
        partition) and return its path instead of collecting them.
    partitions : int, optional
        Partitions after the shuffle by host (default: as many as the input, at most 256).
    task_span : str or None
        With Parquet files of disjoint host groups: each task reduces this much time of one
        group (files that follow each other in time, from their footers), continuing the
        task before it, so a task's memory does not grow with the days (``None``: one task
        per group); a task also ends at :data:`reliab.fleet._chunk.RUN_ROWS` samples, so files
        that each cover the whole fleet are not held a week at a time.  The result does
        not depend on it.
    workers : int, optional
        Without ``client``: threads that reduce the host groups of Parquet files (default:
        the cores this process may use).  The result does not depend on it.

    Returns
    -------
    pandas.DataFrame or Path
        The columns of :func:`reliab.windows.finalize_windows` (plus ``{c}_swings``), sorted
        by host and window; ``attrs`` has ``level``, ``freq`` and ``thresholds``.
    """
    if level not in ("gpu", "host"):
        raise ValueError(f"level must be 'host' or 'gpu', got {level!r} (roll racks up from host windows)")
    bad = [c for c, v in (swings or {}).items() if not v > 0]
    if bad:
        raise ValueError(f"swings must map columns to positive steps; bad: {bad}")
    if events is not None and level != "host":
        raise ValueError("events= are counted per host window: level='host'")
    kw = {"freq": freq, "columns": columns, "thresholds": thresholds, "swings": dict(swings or {}),
          "duplicates": duplicates, "events": events, "event_name": event_name}
    attrs = {"level": level, "freq": freq, "thresholds": dict(thresholds or {})}
    if task_span is not None and not pd.Timedelta(task_span) > pd.Timedelta(0):
        raise ValueError(f"task_span must be a positive duration or None, got {task_span!r}")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be a positive number of threads, got {workers!r}")
    span_ns = None if task_span is None else pd.Timedelta(task_span).value
    if client is None:
        if output is not None:
            raise ValueError("output= goes with client= (the local reduction returns the windows)")
        found = None if isinstance(telemetry, pd.DataFrame) else plan(telemetry)
        try:
            got = [] if found is None else run_groups(found, _spec(found[0][0][0], kw, level), span_ns,
                                                       workers or default_workers())
        except OverlapError:  # a series' files overlap in time: its rows are joined before the swings
            got = []
        if got:
            return _joined(got, level, attrs)
        frame = as_dask(telemetry).compute() if not isinstance(telemetry, pd.DataFrame) else telemetry
        out = finish_partials(telemetry_partials(frame, freq=freq, columns=columns, thresholds=thresholds,
                                                 swings=kw["swings"], duplicates=duplicates),
                              level=level, freq=freq, thresholds=thresholds, swings=kw["swings"], events=events,
                              event_name=event_name)
        out.attrs = attrs
        return out
    found = plan(telemetry)  # Parquet files with host ranges: the host groups' tasks, whatever their number
    if found is not None:
        got = _by_host_groups(client, found, kw, level, output, task_span)
        return got if isinstance(got, Path) else _joined(got, level, attrs)
    keys = ["host", "gpu"] if level == "gpu" else ["host"]
    windows = _dask_reduce(as_dask(telemetry, columns=None), kw, level, partitions)
    if output is not None:
        folder = Path(output)
        windows.to_parquet(str(folder), write_index=False, compute=True)
        return folder
    out = client.compute(windows).result().sort_values([*keys, "window"], kind="stable").reset_index(drop=True)
    out.attrs = attrs
    return out

