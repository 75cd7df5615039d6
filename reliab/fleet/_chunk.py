"""One reduction task of a host group: a run of its files in time, carried into the next run.

A host group's files (see :func:`reliab.fleet.telemetry.host_groups`) are cut into runs that
follow each other in time (:func:`time_runs`, from the time range in each file's footer),
and the runs of a group are reduced one after the other, each task taking the
:class:`Carry` of the one before: the partials of the run's last window (which the next
run may continue), and per series the last sample's time and values (the power-swing step
across the cut) and the first time of its last finished window (the spacing across the
cut).  A task's memory therefore holds one run, however many days the fleet has.

A task finishes its windows with each series' sampling interval computed from its own
windows (:func:`reliab.fleet._rows.intervals`) and returns the values whose median that is;
:func:`check_intervals` merges them over the group and names the runs whose intervals
differ from the group's (irregular sampling): those runs are reduced again with the
group's intervals, so the result equals the reduction of the whole group at once.

A run whose files share no window (files cut on window edges, e.g. per day) is finished
file by file without joining its partials (:mod:`reliab.fleet._pieces`); a run whose files
share a window is joined (:func:`reliab.fleet._rows.stack`) and merged first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab.fleet import _pieces, _rows
from reliab.fleet._heap import heap_for_arrays
from reliab.fleet._partials import telemetry_partials
from reliab.fleet._rows import Rows

__all__ = ["Carry", "Spec", "reduce_run", "file_piece", "check_intervals", "time_runs", "footer_ranges"]

#: samples a task's run holds at most, unless one file holds more (a file is never split):
#: ~100 bytes a sample while it is reduced, so about 0.8 GB; a pod of 256 hosts sends ~1.4M
#: samples a week, a fleet-wide daily file of 100,000 GPUs 9.6M
RUN_ROWS = 8_000_000

Key = tuple[str, "str | None"]


@dataclass(frozen=True)
class Spec:
    """What every task of one reduction is asked for."""

    step: int  # window length in ns
    freq: str
    level: str
    columns: tuple[str, ...]
    thresholds: dict[str, float]
    swings: dict[str, float]
    summed: tuple[str, ...]
    duplicates: str
    event_name: str
    events: pd.DataFrame | None = None  # (time, host) rows, one per host an event names


@dataclass
class Carry:
    """What a run hands to the next run of its host group (keys are ``(host, gpu)``)."""

    names: list[Key] = field(default_factory=list)
    held: Rows = field(default_factory=dict)  # partials of the last window, series coded into ``names``
    tail_last: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # ns; -1 none
    tail_value: dict[str, np.ndarray] = field(default_factory=dict)
    prev_first: np.ndarray = field(default_factory=lambda: np.zeros(0))  # s; NaN none


def footer_ranges(path: str) -> tuple[tuple[str, str] | None, tuple[int, int] | None, int]:
    """(smallest, largest host), (first, last time in ns) and the rows of a Parquet file, from its footer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    meta = pf.metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]

    def stats(name: str) -> list[Any] | None:
        if name not in names or meta.num_row_groups == 0:
            return None
        col = names.index(name)
        out = []
        for g in range(meta.num_row_groups):
            st = meta.row_group(g).column(col).statistics
            if st is None or not st.has_min_max or st.null_count:
                return None
            out.append((st.min_raw, st.max_raw) if name == "time" else (str(st.min), str(st.max)))
        return out

    hosts, times = stats("host"), stats("time")
    host = (min(a for a, _ in hosts), max(b for _, b in hosts)) if hosts else None
    span = None
    kind = pf.schema_arrow.field("time").type if "time" in pf.schema_arrow.names else None
    if times and kind is not None and pa.types.is_timestamp(kind):
        scale = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[kind.unit]
        span = (min(int(a) for a, _ in times) * scale, max(int(b) for _, b in times) * scale)
    return host, span, meta.num_rows


def time_runs(files: Sequence[str], spans: Sequence[tuple[int, int] | None], span_ns: int | None,
              rows: Sequence[int] | None = None) -> list[list[str]]:
    """``files`` of one host group cut into runs of about ``span_ns`` that do not overlap in time.

    A run ends once it covers ``span_ns`` or holds :data:`RUN_ROWS` samples (``rows``: each
    file's, from its footer) and the next file starts after every file of the run has ended,
    so a task holds a bounded number of samples even where one file covers the whole fleet;
    without the time range of every file (or ``span_ns`` None): one run.
    """
    if span_ns is None or any(s is None for s in spans) or len(files) < 2:
        return [sorted(files)]
    order = sorted(range(len(files)), key=lambda i: (spans[i], files[i]))  # type: ignore[arg-type, return-value]
    runs: list[list[str]] = [[]]
    start = end = None
    held = 0
    for i in order:
        lo, hi = spans[i]  # type: ignore[misc]
        if runs[-1] and lo > end and (end - start >= span_ns or held >= RUN_ROWS):  # type: ignore[operator]
            runs.append([])
            start = end = None
            held = 0
        runs[-1].append(files[i])
        start = lo if start is None else start
        end = hi if end is None else max(end, hi)
        held += 0 if rows is None else rows[i]
    return runs


def _read(path: str, spec: Spec
          ) -> tuple[list[Key], np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray] | None:
    """Samples of one file sorted by series and time: series keys present, times (ns), series
    codes, values, and the position in the keys of each code (-1: absent); ``None`` when it
    needs cleaning (missing times or keys, repeated timestamps, naive times): the pandas
    path does that."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)  # a chunk per row group (read_table cuts batches of 128 Ki rows)
    measured = list(dict.fromkeys([*spec.columns, *spec.swings]))
    wanted = [c for c in ("time", "host", "gpu", *measured) if c in pf.schema_arrow.names]
    table = pf.read(columns=wanted)
    kind = table.schema.field("time").type
    if not pa.types.is_timestamp(kind) or kind.tz is None or table.column("time").null_count:
        return None
    tns = _numpy(table.column("time").cast(pa.timestamp("ns", kind.tz)).cast(pa.int64()))
    codes, labels = [], []
    for name in ("host", "gpu"):
        if name not in table.column_names:
            codes.append(np.zeros(len(tns), np.int64))
            labels.append([None])
            continue
        col = table.column(name)
        if col.null_count:
            return None
        code, text = _dictionary(col, name)
        codes.append(code)
        labels.append(text)
    width = len(labels[1])
    series = codes[0].astype(np.int64)  # codes come in the dictionary's index type
    if width > 1:
        series *= width
        series += codes[1]
    changes = series[1:] != series[:-1]
    if not _ordered(series, tns, changes):  # not strictly by series, time
        order = np.lexsort((tns, series))
        series, tns = series[order], tns[order]
        if ((series[1:] == series[:-1]) & (tns[1:] == tns[:-1])).any():
            return None
        changes = series[1:] != series[:-1]
    else:
        order = None
    missing = [c for c in measured if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: telemetry column(s) {missing} missing (the first file has them)")
    values = {}
    for c in measured:
        x = _numpy(table.column(c))
        x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
        values[c] = x if order is None else x[order]
    present = series[np.r_[0, np.flatnonzero(changes) + 1]] if len(series) else series
    local = np.full(len(labels[0]) * width, -1, np.int64)
    local[present] = np.arange(len(present))
    names = list(zip(np.array(labels[0], dtype=object)[present // width].tolist(),
                     np.array(labels[1], dtype=object)[present % width].tolist(), strict=True))
    return names, tns, series, values, local


def _ordered(series: np.ndarray, tns: np.ndarray, changes: np.ndarray) -> bool:
    """Whether samples come strictly by series code then time (``changes``: where the code
    differs from the sample before's), by comparisons only (no integer arrays made)."""
    return bool((series[1:] >= series[:-1]).all() and ((tns[1:] > tns[:-1]) | changes).all())


def _numpy(col: Any) -> np.ndarray:
    """A column's values as numpy, without a copy when it is one chunk without nulls (read-only then)."""
    if col.num_chunks == 1:
        return col.chunk(0).to_numpy(zero_copy_only=False)
    return col.to_numpy()


def _dictionary(col: Any, name: str = "") -> tuple[np.ndarray, list[str]]:
    """Per row of a key column (no nulls) the rank of its text among the distinct texts, and
    those texts sorted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    code = arr.indices.to_numpy(zero_copy_only=False)
    distinct, rank = _ranks(arr.dictionary, name)
    return (code, distinct) if rank is None else (rank[code], distinct)


#: the dictionary last ranked per key column (a host group's files repeat theirs)
_RANKED: dict[str, tuple[Any, list[str], np.ndarray | None]] = {}


def _ranks(dictionary: Any, kind: str) -> tuple[list[str], np.ndarray | None]:
    """A dictionary's distinct texts sorted, and the rank of each entry (``None``: sorted
    already, the indices are the ranks); the last answer per column name ``kind`` is kept."""
    seen = _RANKED.get(kind)
    if seen is not None and seen[0].equals(dictionary):
        return seen[1], seen[2]
    text = np.array([str(x) for x in dictionary.to_pylist()], dtype=object)
    distinct, rank = np.unique(text, return_inverse=True)
    got = None if (rank == np.arange(len(rank))).all() else rank.astype(np.int64)
    _RANKED[kind] = (dictionary, distinct.tolist(), got)
    return distinct.tolist(), got


def _pandas_rows(path: str, spec: Spec) -> tuple[list[Key], Rows]:
    """Partials of a file that needs cleaning, by :func:`reliab.fleet._partials.telemetry_partials`."""
    frame = pd.read_parquet(path)
    parts = telemetry_partials(frame, freq=spec.freq, columns=list(spec.columns), thresholds=spec.thresholds,
                               swings=spec.swings, duplicates=spec.duplicates)  # type: ignore[arg-type]
    keys = list(zip(parts["host"].astype(object), parts["gpu"].astype(object).where(parts["gpu"].notna(), None),
                    strict=True))
    names = sorted(set(keys), key=_sort_key)
    code = {k: i for i, k in enumerate(names)}
    first = pd.DatetimeIndex(parts["first"]).as_unit("ns").asi8
    rows: Rows = {"series": np.array([code[k] for k in keys], np.int64), "window": first // spec.step,
                  "n": parts["n"].to_numpy(np.int64), "first": first,
                  "last": pd.DatetimeIndex(parts["last"]).as_unit("ns").asi8}
    for c in parts.columns:  # c__n … and the swing columns c__steps, c__vfirst, c__vlast: the names of _rows
        if "__" in c:
            rows[c] = parts[c].to_numpy()
    return names, rows


def _sort_key(key: Key) -> tuple:
    host, gpu = key
    return (host is None, host or "", gpu is None, gpu or "")


def _union(lists: list[list[Key]]) -> list[Key]:
    """The keys of ``lists`` (each sorted by :func:`_sort_key`), sorted: the one list when all
    that are not empty are equal (a host group's files hold the same series), else a set
    union per list, not per key."""
    full = [k for k in lists if k]
    if full and all(k == full[0] for k in full[1:]):
        return list(full[0])
    return sorted(set().union(*lists), key=_sort_key)


def _coder(code: dict[Key, int]) -> Any:
    """Codes of a list of keys in ``code``; the files of a host group mostly repeat their keys,
    so the previous answer is kept (one list comparison instead of a lookup per key)."""
    last: list[Any] = [None, None]

    def codes(keys: list[Key]) -> np.ndarray:
        if last[0] != keys:
            last[0], last[1] = keys, np.array([code[k] for k in keys], np.int64)
        return last[1]
    return codes


def _recode(rows: Rows, codes: np.ndarray) -> Rows:
    return {**rows, "series": codes[rows["series"]]} if rows else rows


def file_piece(path: str, spec: Spec) -> tuple[list[Key], Rows]:
    """The series keys of one file and its per-series, per-window partials (coded into those
    keys): what a run reads of each file, whatever came before it."""
    heap_for_arrays()
    got = _read(path, spec)
    if got is None:
        return _pandas_rows(path, spec)
    names, tns, series, values, local = got
    rows = _rows.file_rows(tns, series, values, step=spec.step, columns=spec.columns,
                           thresholds=spec.thresholds, swings=spec.swings)
    return names, _recode(rows, local)


def reduce_run(files: Sequence[str], carry: Carry | None, spec: Spec, *, last: bool,
               given: Mapping[Key, float] | None = None, output: str | None = None,
               pieces: Sequence[tuple[list[Key], Rows]] | None = None) -> dict[str, Any]:
    """Reduce one run of a host group's files, continuing ``carry`` (``pieces``: the files'
    :func:`file_piece` when read already).

    Returns ``{"windows": frame or output path, "carry": Carry, "names": series keys,
    "per"/"gaps": sketches of the interval values (:func:`reliab.fleet._rows.sketch`),
    "used": intervals used per key}``.
    """
    heap_for_arrays()
    carry = carry or Carry()
    pieces = [file_piece(path, spec) for path in files] if pieces is None else list(pieces)
    names = _union([carry.names, *(n for n, _ in pieces)])
    code = {k: i for i, k in enumerate(names)}
    n_codes = len(names)
    old = np.array([code[k] for k in carry.names], np.int64)
    pieces = [(n, r) for n, r in pieces if _rows.size(r)]
    codes = _coder(code)
    parts = [_recode(carry.held, old)] + [_recode(r, codes(n)) for n, r in pieces]
    tail_last = np.full(n_codes, -1, np.int64)
    tail_last[old] = carry.tail_last
    tail_value = {c: np.full(n_codes, np.nan) for c in spec.swings}
    for c in spec.swings:
        if len(old):
            tail_value[c][old] = carry.tail_value[c]
    prev_first = np.full(n_codes, np.nan)
    prev_first[old] = carry.prev_first
    if _pieces.disjoint(parts[0], parts[1:]):  # no window shared by two files: finished file by file
        return _by_pieces(parts, names, spec, last, given, output, tail_last, tail_value, prev_first)
    if _rows.size(parts[0]):
        rows, fresh = _rows.stack(parts, n_codes)
    else:
        rows, fresh = _rows.stack(parts[1:], n_codes) if len(parts) > 1 else ({}, np.zeros(0, bool))
        fresh[:] = True
    if not _rows.size(rows):
        return _empty(names, carry, spec, output)
    if spec.swings:
        rows = _rows.add_boundary_steps(rows, fresh, spec.swings, tail_last, tail_value, names)
    rows = _rows.merge(rows)
    held = rows["window"] >= rows["window"].max() if not last else np.zeros(_rows.size(rows), bool)
    # the finished rows' keys and times (the windows are finished on every row, the held
    # window's dropped after: a copy of four columns instead of all)
    done = {k: rows[k] for k in ("series", "first", "last", "n")}
    done = _rows.take(done, np.flatnonzero(~held)) if held.any() else done
    # the next run's view of every series: its last sample and the first time of its last finished window
    ends = np.flatnonzero(np.r_[rows["series"][1:] != rows["series"][:-1], True])
    tail_last[rows["series"][ends]] = rows["last"][ends]
    for c in spec.swings:
        tail_value[c][rows["series"][ends]] = rows[f"{c}__vlast"][ends]
    none = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    per, gaps = _rows.interval_values(done, prev_first) if _rows.size(done) else (none, none)
    if _rows.size(done):
        dends = np.flatnonzero(np.r_[done["series"][1:] != done["series"][:-1], True])
        next_first = prev_first.copy()
        next_first[done["series"][dends]] = done["first"][dends] / 1e9
    else:
        next_first = prev_first
    local = _rows.intervals(per, gaps, n_codes)
    used = local if given is None else np.array([given.get(k, np.nan) for k in names])
    drop = int(rows["window"].max()) if held.any() else None
    windows = _finish(rows, names, used, spec, drop) if _rows.size(done) else None
    new_carry = Carry(names, _rows.take(rows, np.flatnonzero(held)), tail_last, tail_value, next_first)
    present = done["series"][np.r_[True, np.diff(done["series"]) != 0]] if _rows.size(done) else np.zeros(0, np.int64)
    return {"windows": _store(windows, output), "carry": new_carry, "names": names,
            "per": per, "gaps": gaps,
            "used": {names[i]: float(used[i]) for i in present}}


def _by_pieces(parts: list[Rows], names: list[Key], spec: Spec, last: bool, given: Mapping[Key, float] | None,
               output: str | None, tail_last: np.ndarray, tail_value: dict[str, np.ndarray],
               prev_first: np.ndarray) -> dict[str, Any]:
    """:func:`reduce_run` of a run whose files share no window (:mod:`reliab.fleet._pieces`)."""
    used = None if given is None else np.array([given.get(k, np.nan) for k in names])
    got = _pieces.reduce_pieces(parts[0], parts[1:], names, spec, last=last, given=used, tail_last=tail_last,
                                tail_value=tail_value, prev_first=prev_first)
    windows = got["windows"]
    if windows is not None and spec.events is not None:
        windows[spec.event_name] = _event_counts(windows, spec.events, spec.step)
    return {"windows": _store(windows, output), "carry": Carry(names, got["held"], tail_last, tail_value, prev_first),
            "names": names, "per": got["per"], "gaps": got["gaps"],
            "used": {names[i]: float(got["used"][i]) for i in got["present"]}}


def _finish(rows: Rows, names: list[Key], interval: np.ndarray, spec: Spec, drop: int | None) -> pd.DataFrame:
    """Windows of ``rows`` but window ``drop`` (held for the next run: only its rows fall in it)."""
    out = _rows.finalize(rows, names, interval, step=spec.step, level=spec.level, columns=spec.columns,
                         thresholds=spec.thresholds, swings=spec.swings, summed=spec.summed)
    if drop is not None:
        out = out[out["window"] != pd.Timestamp(drop * spec.step, unit="ns", tz="UTC")].reset_index(drop=True)
    if spec.events is not None:
        out[spec.event_name] = _event_counts(out, spec.events, spec.step)
    return out


def _event_counts(windows: pd.DataFrame, events: pd.DataFrame, step: int) -> np.ndarray:
    """Events (``time``, ``host``: one row per host) per row of host ``windows`` sorted by host
    then window, as :func:`reliab.windows.count_events` counts them (an event outside every
    window is not counted)."""
    host = np.asarray(windows["host"], dtype=object)
    window = pd.DatetimeIndex(windows["window"]).as_unit("ns").asi8 // step
    counts = np.zeros(len(windows), np.int64)
    if not len(windows) or not len(events):
        return counts
    ev_host = np.asarray(events["host"].astype(str), dtype=object)
    ev_window = pd.DatetimeIndex(pd.to_datetime(events["time"], utc=True)).as_unit("ns").asi8 // step
    lo = np.searchsorted(host, ev_host, side="left")
    hi = np.searchsorted(host, ev_host, side="right")
    mine = np.flatnonzero(hi > lo)  # events on a host of these windows
    for i in mine:  # a handful per task: the failures of its hosts
        j = lo[i] + int(np.searchsorted(window[lo[i]:hi[i]], ev_window[i]))
        if j < hi[i] and window[j] == ev_window[i]:
            counts[j] += 1
    return counts


def _store(windows: pd.DataFrame | None, output: str | None) -> pd.DataFrame | str | None:
    if output is None or windows is None:
        return windows
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    windows.to_parquet(output, index=False)
    return output


def _empty(names: list[Key], carry: Carry, spec: Spec, output: str | None) -> dict[str, Any]:
    none = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    return {"windows": None, "carry": carry, "names": names, "per": none, "gaps": none, "used": {}}


def check_intervals(results: Sequence[dict[str, Any]]) -> tuple[dict[Key, float], list[int]]:
    """The group's sampling interval per series (from every run's values) and the runs that
    used another one (to be reduced again with the group's)."""
    names = sorted({k for r in results for k in r["names"]}, key=_sort_key)
    code = {k: i for i, k in enumerate(names)}
    per: list[_rows.Sketch] = []
    gaps: list[_rows.Sketch] = []
    for r in results:
        remap = np.array([code[k] for k in r["names"]], np.int64)
        per.append((remap[r["per"][0]], r["per"][1], r["per"][2]))
        gaps.append((remap[r["gaps"][0]], r["gaps"][1], r["gaps"][2]))

    def joined(parts: list[_rows.Sketch]) -> _rows.Sketch:
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]

    whole = _rows.intervals(joined(per), joined(gaps), len(names))
    group = {k: float(whole[i]) for i, k in enumerate(names)}
    redo = []
    for i, r in enumerate(results):
        for k, v in r["used"].items():
            g = group[k]
            if not (v == g or (np.isnan(v) and np.isnan(g))):
                redo.append(i)
                break
    return group, redo
