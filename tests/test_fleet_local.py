"""Without a client, Parquet telemetry is reduced by the Dask route's tasks, on threads.

:func:`reliab.fleet.reduce_telemetry` given files and no client cuts them into host groups
and runs of ``task_span`` and reduces each run with :func:`reliab.fleet._chunk.reduce_run`,
as the Dask route does (:mod:`reliab.fleet._local`).  A small fleet is written here: four
host groups (two hosts each, one host without a GPU column), each host's files cut in the
middle of an hour with a power step of more than the swing level across each cut, one
group sampled irregularly (its runs are reduced again with the group's intervals), one
file with repeated timestamps out of order (cleaned per file).  The windows must equal the
pandas route on the same rows (to summation order), the Dask route's bit for bit, and not
depend on the number of threads; the task route must be the one taken (the per-file reader
is counted, the pandas partials of the whole input are not called).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _fleet_series import gpu_series

from reliab.fleet import _chunk, reduce_telemetry
from reliab.fleet import telemetry as fleet_telemetry

THRESHOLDS = {"gpu_temp_c": 64.0}
SWINGS = {"power_w": 300.0}
CUTS = pd.to_datetime(["2024-03-01T00:37:13.000Z", "2024-03-01T01:59:59.500Z"])
EVENTS = pd.DataFrame({"time": pd.to_datetime(["2024-03-01T00:37:12Z", "2024-03-01T02:10:00Z"]),
                       "hosts": ["node0,node3", "node6"]})


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Four host groups (node0-1 … node6-7) x three files each, cut mid-hour."""
    folder = tmp_path_factory.mktemp("local")
    rng = np.random.default_rng(11)
    files = []
    for g in range(4):
        hosts = [f"node{2 * g}", f"node{2 * g + 1}"]
        gpus = [None] if g == 1 else ["0", "1"]  # group 1 has no GPU column
        frame = pd.concat([gpu_series(rng, h, x, regular=g != 2, cuts=CUTS) for h in hosts for x in gpus], ignore_index=True)
        edges = [frame["time"].min(), *CUTS, frame["time"].max() + pd.Timedelta(seconds=1)]
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            part = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
            if g == 3 and i == 1:  # repeated timestamps, rows out of order
                part = pd.concat([part, part.iloc[5:9]]).iloc[::-1]
            files.append(folder / f"pod{g}" / f"part-{i}.parquet")
            files[-1].parent.mkdir(exist_ok=True)
            part.to_parquet(files[-1], index=False)
    return folder, files


@pytest.fixture()
def routes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of the task route's per-file reader and of the pandas route's partials."""
    seen = {"files read": 0, "pandas partials": 0}
    read, partials = _chunk._read, fleet_telemetry.telemetry_partials

    def counted_read(*args: object, **kw: object) -> object:
        seen["files read"] += 1
        return read(*args, **kw)

    def counted_partials(*args: object, **kw: object) -> object:
        seen["pandas partials"] += 1
        return partials(*args, **kw)

    monkeypatch.setattr(_chunk, "_read", counted_read)
    monkeypatch.setattr(fleet_telemetry, "telemetry_partials", counted_partials)
    return seen


def _rows(files: list[Path]) -> pd.DataFrame:
    """The input as the pandas route saw it: every file's rows, one frame."""
    return pd.concat([pd.read_parquet(f) for f in sorted(files)], ignore_index=True)


@pytest.mark.parametrize("level", ["host", "gpu"])
def test_local_files_take_the_task_route(fleet: tuple[Path, list[Path]], routes: dict[str, int],
                                         dask_client: object, level: str) -> None:
    folder, files = fleet
    kw = {"thresholds": THRESHOLDS, "swings": SWINGS, "level": level,
          **({"events": EVENTS} if level == "host" else {})}
    got = reduce_telemetry(folder, task_span="1min", workers=2, **kw)
    # 12 files, each read once; the irregular group's runs once more with the group's intervals
    assert routes["files read"] >= len(files)
    assert routes["pandas partials"] == 0
    old = reduce_telemetry(_rows(files), **kw)  # the pandas route on the same rows
    pd.testing.assert_frame_equal(got, old, check_exact=False, rtol=1e-12, atol=1e-12)
    assert got.dtypes.to_dict() == old.dtypes.to_dict()
    assert got.attrs == old.attrs
    on_dask = reduce_telemetry(folder, client=dask_client, task_span="1min", **kw)
    pd.testing.assert_frame_equal(got, on_dask, check_exact=True)
    for workers, span in ((1, "1min"), (3, "1min"), (2, None)):
        again = reduce_telemetry(folder, task_span=span, workers=workers, **kw)
        pd.testing.assert_frame_equal(again, got, check_exact=True)
    if level == "host":
        assert got["failures"].sum() == 3
        # the steps across the cuts count in the windows after them (00:00 and 01:00 hold a cut)
        swings = got[got["host"] == "node6"].set_index("window")["power_w_swings"]
        assert swings.iloc[0] >= 2 and swings.iloc[1] >= 2


def test_overlapping_series_fall_back_to_the_pandas_route(tmp_path: Path, routes: dict[str, int]) -> None:
    """A series split over files that overlap in time cannot take power swings per task; the
    in-process reduction then reads all rows at once, as before."""
    rng = np.random.default_rng(5)
    frame = gpu_series(rng, "node0", "0", regular=True, cuts=CUTS)
    frame.iloc[::2].to_parquet(tmp_path / "a.parquet", index=False)
    frame.iloc[1::2].to_parquet(tmp_path / "b.parquet", index=False)
    got = reduce_telemetry(tmp_path, swings=SWINGS)
    assert routes["pandas partials"] == 1
    pd.testing.assert_frame_equal(got, reduce_telemetry(frame, swings=SWINGS), check_exact=False, rtol=1e-12)


def test_bad_workers(fleet: tuple[Path, list[Path]]) -> None:
    with pytest.raises(ValueError, match="workers"):
        reduce_telemetry(fleet[0], workers=0)


def test_a_bad_file_stops_the_threads_with_its_name(tmp_path: Path) -> None:
    """A file that lacks a measured column fails its read on a thread: the call raises the
    reader's error naming the file (no hang, no half result)."""
    rng = np.random.default_rng(9)
    for g in range(3):
        frame = gpu_series(rng, f"node{g}", "0", regular=True, cuts=CUTS)
        for i, day in enumerate((frame.iloc[:800], frame.iloc[800:])):
            (day.drop(columns="power_w") if (g, i) == (1, 1) else day).to_parquet(tmp_path / f"n{g}-{i}.parquet",
                                                                                  index=False)
    with pytest.raises(ValueError, match=r"n1-1\.parquet: telemetry column\(s\) \['power_w'\] missing"):
        reduce_telemetry(tmp_path, swings=SWINGS, task_span="1min", workers=2)
