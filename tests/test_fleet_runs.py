"""The fleet reduction cut by time equals the uncut one and the one-machine reduction.

:func:`reliab.fleet.reduce_telemetry` reduces each host group's files in runs of
``task_span`` that continue each other (:mod:`reliab.fleet._chunk`).  Here the files of
each host are cut in the middle of an hour (a window straddles every cut), power steps by
more than the swing level exactly across the cuts, and sampling is irregular (the median
sampling interval of a run is not the series' over all runs, so runs are reduced again with
the group's interval); one host has no GPU column and one file repeats timestamps out of
order (it is cleaned by the pandas path).  Cut every file, cut never, or reduced in this
process from the concatenated rows, the windows are the same.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.fleet import _chunk as chunk
from reliab.fleet import _local as fleet_local
from reliab.fleet import reduce_telemetry
from reliab.fleet import telemetry as fleet_telemetry
from reliab.fleet._chunk import check_intervals, footer_ranges, reduce_run, time_runs

pytest.importorskip("dask.distributed")
THRESHOLDS = {"gpu_temp_c": 64.0}
SWINGS = {"power_w": 300.0}
CUTS = pd.to_datetime(["2024-03-01T00:37:13.000Z", "2024-03-01T01:59:59.500Z"])


def _series(rng: np.random.Generator, host: str, gpu: str | None, regular: bool) -> pd.DataFrame:
    step = np.full(3 * 3600, 1.0) if regular else rng.uniform(0.5, 1.6, 3 * 3600)
    t = pd.Timestamp("2024-03-01T00:00:00.25Z") + pd.to_timedelta(np.cumsum(step), unit="s")
    t = t[t < pd.Timestamp("2024-03-01T03:00:00Z")]
    power = np.where(np.arange(len(t)) % 900 < 20, 150.0, 650.0) + rng.normal(0, 10, len(t))
    # a step of > 300 W right across each cut: low before, high after
    for cut in CUTS:
        power[(t < cut) & (t >= cut - pd.Timedelta(seconds=5))] = 100.0
    temp = 62 + 3 * np.sin(np.arange(len(t)) / 500) + rng.normal(0, 0.5, len(t))
    frame = pd.DataFrame({"time": t, "host": host, "gpu": gpu, "gpu_temp_c": temp.round(), "power_w": power})
    frame.loc[rng.random(len(t)) < 0.01, "gpu_temp_c"] = np.nan  # a few missing readings
    return frame if gpu is not None else frame.drop(columns="gpu")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """5 hosts x 3 files each (cut mid-hour); node3 has no GPU column, node4 is regular."""
    folder = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(7)
    frames = []
    for h in range(5):
        host = f"node{h}"
        gpus = [None] if h == 3 else ["0", "1", "10"]
        frame = pd.concat([_series(rng, host, g, regular=h == 4) for g in gpus], ignore_index=True)
        edges = [frame["time"].min(), *CUTS, frame["time"].max() + pd.Timedelta(seconds=1)]
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            part = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
            if h == 1 and i == 1:  # repeated timestamps, rows out of order: the pandas path cleans them
                part = pd.concat([part, part.iloc[5:9]]).iloc[::-1]
            part.to_parquet(folder / f"{host}-{i}.parquet", index=False)
        frames.append(frame)
    return folder, pd.concat(frames, ignore_index=True)


def test_runs_follow_each_other_in_time(files: tuple[Path, pd.DataFrame]) -> None:
    folder, _ = files
    group = sorted(str(p) for p in folder.glob("node0-*.parquet"))
    spans = [footer_ranges(f)[1] for f in group]
    assert [len(r) for r in time_runs(group, spans, pd.Timedelta("1min").value)] == [1, 1, 1]
    assert [len(r) for r in time_runs(group, spans, pd.Timedelta("1h").value)] == [2, 1]
    assert time_runs(group, spans, None) == [group]
    assert time_runs(group, [None, *spans[1:]], 1) == [group]  # a footer without times: one run


def test_runs_end_at_a_bound_on_samples(files: tuple[Path, pd.DataFrame], monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of a long task span still ends once it holds RUN_ROWS samples (never inside a file)."""
    folder, _ = files
    group = sorted(str(p) for p in folder.glob("node0-*.parquet"))
    spans = [footer_ranges(f)[1] for f in group]
    rows = [footer_ranges(f)[2] for f in group]
    assert rows == [len(pd.read_parquet(f)) for f in group]
    week = pd.Timedelta("7D").value
    assert time_runs(group, spans, week, rows) == [group]  # 3 h of 3 GPUs: far below the bound
    monkeypatch.setattr(chunk, "RUN_ROWS", rows[0] + 1)  # the first file alone stays below it
    assert [len(r) for r in time_runs(group, spans, week, rows)] == [2, 1]
    monkeypatch.setattr(chunk, "RUN_ROWS", 1)  # every file is over it: a run per file, none split
    assert time_runs(group, spans, week, rows) == [[f] for f in group]


def test_runs_cut_by_samples_equal_uncut(files: tuple[Path, pd.DataFrame], monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded runs on a long span reduce to the windows of one run per group, in process."""
    folder, _ = files
    kw = {"thresholds": THRESHOLDS, "swings": SWINGS, "workers": 2}
    uncut = reduce_telemetry(folder, task_span=None, **kw)
    runs = []
    real = chunk.reduce_run

    def counted(run: list[str], *args: object, **kwargs: object) -> object:
        runs.append(len(run))
        return real(run, *args, **kwargs)

    monkeypatch.setattr(chunk, "RUN_ROWS", 1)
    monkeypatch.setattr(fleet_local, "reduce_run", counted)
    bounded = reduce_telemetry(folder, task_span="30D", **kw)
    assert runs and max(runs) == 1  # every run was one file, though 30 days would hold them all
    pd.testing.assert_frame_equal(bounded, uncut, check_exact=False, rtol=1e-12, atol=1e-12)


def test_cut_by_time_equals_uncut_and_local(dask_client: object, files: tuple[Path, pd.DataFrame]) -> None:
    folder, frame = files
    events = pd.DataFrame({"time": pd.to_datetime(["2024-03-01T00:37:12Z", "2024-03-01T02:10:00Z"]),
                           "hosts": ["node0,node3", "node4"]})
    kw = {"thresholds": THRESHOLDS, "swings": SWINGS, "events": events}
    local = reduce_telemetry(frame.drop_duplicates(["time", "host", "gpu"]), **kw)
    uncut = reduce_telemetry(folder, client=dask_client, task_span=None, **kw)
    cut = reduce_telemetry(folder, client=dask_client, task_span="1min", **kw)
    pd.testing.assert_frame_equal(uncut, local, check_exact=False, rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(cut, uncut, check_exact=False, rtol=1e-12, atol=1e-12)
    assert cut.attrs == local.attrs
    assert cut["failures"].sum() == 3
    # the steps across the cuts are counted in the windows after them (00:00 and 01:00 hold a cut)
    per_host = cut[cut["host"] == "node4"].set_index("window")["power_w_swings"]
    assert per_host.iloc[0] >= 2 and per_host.iloc[1] >= 2
    for swings in (SWINGS, None):
        gpu = reduce_telemetry(folder, client=dask_client, task_span="1min", level="gpu", thresholds=THRESHOLDS,
                               swings=swings)
        want = reduce_telemetry(frame.drop_duplicates(["time", "host", "gpu"]), level="gpu", thresholds=THRESHOLDS,
                                swings=swings)
        pd.testing.assert_frame_equal(gpu, want, check_exact=False, rtol=1e-12, atol=1e-12)
        assert gpu.dtypes.to_dict() == want.dtypes.to_dict()


def test_irregular_runs_are_reduced_again_with_the_group_interval(files: tuple[Path, pd.DataFrame]) -> None:
    folder, frame = files
    kw = {"freq": "1h", "columns": None, "thresholds": THRESHOLDS, "swings": SWINGS, "duplicates": "mean",
          "events": None, "event_name": "failures"}
    group = sorted(str(p) for p in folder.glob("node0-*.parquet"))
    spec = fleet_telemetry._spec(group[0], kw, "host")

    def chain(given: dict | None) -> list[dict]:
        out, carry = [], None
        for i, path in enumerate(group):
            out.append(reduce_run([path], carry, spec, last=i == len(group) - 1, given=given))
            carry = out[-1]["carry"]
        return out

    first = chain(None)
    intervals, redo = check_intervals(first)
    assert redo  # irregular sampling: a run's median interval is not the series' own
    again = chain(intervals)
    assert check_intervals(again)[1] == []
    got = pd.concat([r["windows"] for r in again], ignore_index=True)
    want = reduce_telemetry(frame[frame["host"] == "node0"], thresholds=THRESHOLDS, swings=SWINGS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=1e-12, check_like=True)
    wrong = pd.concat([r["windows"] for r in first], ignore_index=True)
    assert not np.allclose(wrong["hours"], want["hours"], rtol=1e-12)  # the check is needed


def test_bad_task_span(files: tuple[Path, pd.DataFrame], dask_client: object) -> None:
    with pytest.raises(ValueError, match="task_span"):
        reduce_telemetry(files[0], client=dask_client, task_span="-1h")


def test_median_from_sketches_is_the_median() -> None:
    """Sketches of pieces, concatenated, give pandas' median per series (the runs' intervals)."""
    from reliab.fleet._rows import _group_median, sketch

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 40, 5000)
    values = rng.choice([1.0, 1.5, 2.0, 10.0, np.nan], 5000) + (codes == 7) * rng.random(5000)
    pieces = [sketch(codes[i:i + 700], values[i:i + 700]) for i in range(0, 5000, 700)]
    joined = tuple(np.concatenate([p[k] for p in pieces]) for k in range(3))
    want = pd.Series(values).groupby(codes).median().reindex(range(42))
    np.testing.assert_allclose(_group_median(joined, 42), want.to_numpy(), rtol=0, atol=0)
    assert len(joined[0]) < len(codes) // 3  # repeated values are counted, not kept


def _task_frame(hosts: list[str], hours: list[int]) -> pd.DataFrame:
    """A task's windows: every host of ``hosts`` at every hour of ``hours`` (host-major), a value per row."""
    host = [h for h in hosts for _ in hours]
    window = pd.to_datetime([f"2024-03-01T{x:02d}:00Z" for _ in hosts for x in hours])
    return pd.DataFrame({"host": pd.Series(host, dtype=object), "window": window,
                         "value": [f"{h}@{x}" for h in hosts for x in hours]})


def test_task_windows_are_joined_in_host_then_window_order() -> None:
    """Two host groups, each in two runs of hours (the runs of a group follow each other in
    time), come back by host then window, each block of a host's rows moved whole."""
    frames = [_task_frame(["node1", "node2"], [0, 1]), _task_frame(["node1", "node2"], [2]),
              _task_frame(["node3"], [0]), _task_frame(["node3"], [1, 2])]
    got = fleet_telemetry._in_order(frames)
    assert got["value"].tolist() == ["node1@0", "node1@1", "node1@2", "node2@0", "node2@1", "node2@2",
                                     "node3@0", "node3@1", "node3@2"]
    assert got.index.equals(pd.RangeIndex(9))
    assert got["window"].dtype == frames[0]["window"].dtype and got["host"].dtype == object


def test_task_windows_out_of_block_order_are_sorted_row_by_row() -> None:
    """Runs that do not follow each other (a later run first; a host's window in two tasks)
    still come back as a stable sort by host and window."""
    frames = [_task_frame(["node1", "node3"], [2]), _task_frame(["node1", "node3"], [0, 1]),
              _task_frame(["node2"], [1]), _task_frame(["node2", "node3"], [0])]
    got = fleet_telemetry._in_order(frames)
    want = pd.concat(frames, ignore_index=True).sort_values(["host", "window"], kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(got, want)
    assert got["value"].tolist() == ["node1@0", "node1@1", "node1@2", "node2@0", "node2@1", "node3@0", "node3@0",
                                     "node3@1", "node3@2"]
