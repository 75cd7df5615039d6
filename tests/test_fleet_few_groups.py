"""On Dask, Parquet telemetry of one or two host groups is reduced by the host groups' tasks.

:func:`reliab.fleet.reduce_telemetry` with a client took the per-host-group tasks only
with at least two host groups per worker thread; a fleet of one pod on two workers went
through the shuffle of pandas partials by host (tens of times the read).  Here a fleet of
one host group (two hosts) and one of two groups are written, each host's files cut in
the middle of an hour with a power step of more than the swing level across each cut, the
second group sampled irregularly (its runs are reduced again with the group's intervals)
and one file with repeated timestamps out of order.  On the session's 2-worker cluster the
host groups' tasks must run (the scheduler's task stream shows them, the runs' files read
on both workers, and no shuffle), and the windows must equal the in-process route's bit for bit and the pandas
route's on the same rows (to summation order).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _fleet_series import gpu_series

from reliab.fleet import reduce_telemetry

pytest.importorskip("dask.distributed")
THRESHOLDS = {"gpu_temp_c": 64.0}
SWINGS = {"power_w": 300.0}
CUTS = pd.to_datetime(["2024-03-01T00:37:13.000Z", "2024-03-01T01:12:00.000Z", "2024-03-01T01:59:59.500Z"])
EVENTS = pd.DataFrame({"time": pd.to_datetime(["2024-03-01T00:37:12Z", "2024-03-01T02:10:00Z"]),
                       "hosts": ["node0,node2", "node1"]})


def _write(folder: Path, groups: list[list[str]]) -> list[Path]:
    """Each group's hosts (two GPUs each) in four files cut at :data:`CUTS`; the second group
    sampled irregularly, its second file with repeated timestamps out of order."""
    rng = np.random.default_rng(23)
    files = []
    for g, hosts in enumerate(groups):
        frame = pd.concat([gpu_series(rng, h, x, regular=g == 0, cuts=CUTS) for h in hosts for x in ("0", "1")],
                          ignore_index=True)
        edges = [frame["time"].min(), *CUTS, frame["time"].max() + pd.Timedelta(seconds=1)]
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            part = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
            if g == 1 and i == 1:
                part = pd.concat([part, part.iloc[5:9]]).iloc[::-1]
            files.append(folder / f"group{g}" / f"part-{i}.parquet")
            files[-1].parent.mkdir(parents=True, exist_ok=True)
            part.to_parquet(files[-1], index=False)
    return files


@pytest.mark.parametrize("groups", [[["node0", "node1"]], [["node0", "node1"], ["node2"]]],
                         ids=["one group", "two groups"])
@pytest.mark.parametrize("level", ["host", "gpu"])
def test_few_host_groups_take_the_task_route_on_dask(dask_client: object, tmp_path: Path,
                                                      groups: list[list[str]], level: str) -> None:
    from dask.distributed import get_task_stream

    files = _write(tmp_path, groups)
    kw = {"thresholds": THRESHOLDS, "swings": SWINGS, "level": level,
          **({"events": EVENTS} if level == "host" else {})}
    with get_task_stream(dask_client) as stream:  # type: ignore[arg-type]
        got = reduce_telemetry(tmp_path, client=dask_client, task_span="1min", **kw)
    ours = [t for t in stream.data if str(t["key"]).startswith("reliab-")]
    assert ours and not [t for t in stream.data if "shuffle" in str(t["key"])]
    reads = {t["worker"] for t in ours if str(t["key"]).startswith("reliab-pieces-")}
    assert len(reads) == 2  # the runs' files are read on both workers, while one finishes a run
    local = reduce_telemetry(tmp_path, task_span="1min", workers=2, **kw)
    pd.testing.assert_frame_equal(got, local, check_exact=True)
    rows = pd.concat([pd.read_parquet(f) for f in sorted(files)], ignore_index=True)
    old = reduce_telemetry(rows, **kw)  # the pandas route on the same rows
    pd.testing.assert_frame_equal(got, old, check_exact=False, rtol=1e-12, atol=1e-12)
    assert got.dtypes.to_dict() == old.dtypes.to_dict() and got.attrs == old.attrs
    for span in ("1h", None):  # other cuts in time: the same windows (to summation order)
        pd.testing.assert_frame_equal(reduce_telemetry(tmp_path, client=dask_client, task_span=span, **kw), got,
                                      check_exact=False, rtol=1e-12, atol=1e-12)
    if level == "host":  # node0 and node1 in both fleets, node2 in the second only
        assert got["failures"].sum() == (2 if len(groups) == 1 else 3)
        swings = got[got["host"] == "node0"].set_index("window")["power_w_swings"]
        assert (swings.iloc[:2] >= 2).all()  # the steps across the cuts, in the windows after them
