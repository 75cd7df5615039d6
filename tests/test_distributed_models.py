"""Fleet-scale models on Dask equal their one-machine versions.

* telemetry -> host-hour windows (means, maxima, hours above a threshold, power-swing
  counts, failures per window): :func:`reliab.fleet.reduce_telemetry` on the partitioned
  Parquet of a generated fleet equals the in-process reduction, which equals
  :func:`reliab.windows.telemetry_windows` + :func:`reliab.windows.count_events`;
* rate tables by group from partitioned Parquet equal :func:`reliab.estimate_rates`;
* the failure GLM on Dask-aggregated cells equals the one-machine cell fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.datasets import write_fleet
from reliab.fleet import fit_failure_glm_cells, rates_by_group, reduce_telemetry
from reliab.models.environment.failure_glm import fit_failure_glm
from reliab.windows import count_events, telemetry_windows

pytest.importorskip("dask.distributed")
THRESHOLDS = {"gpu_temp_c": 64.0}
SWINGS = {"power_w": 300.0}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 hosts in 4 pods, 2 days, a sample every 10 s per GPU (8 telemetry files), ~25 failures."""
    folder = tmp_path_factory.mktemp("fleet")
    write_fleet(folder, n_gpus=64, days=2, hosts_per_pod=2, telemetry_interval_s=10,
                failures_per_1k_gpu_days=200.0, temp_effect_per_c=0.05, seed=2)
    return folder


@pytest.fixture(scope="module")
def telemetry(fleet: Path) -> pd.DataFrame:
    files = sorted((fleet / "telemetry").rglob("*.parquet"))
    assert len(files) == 8
    return pd.concat([pd.read_parquet(p) for p in files], ignore_index=True)


@pytest.fixture(scope="module")
def failures(fleet: Path) -> pd.DataFrame:
    truth = pd.read_csv(fleet / "truth" / "failures.csv", parse_dates=["time"])
    assert len(truth) > 10
    return truth[["time", "host"]]


@pytest.fixture(scope="module")
def local_windows(telemetry: pd.DataFrame, failures: pd.DataFrame) -> pd.DataFrame:
    return reduce_telemetry(telemetry, thresholds=THRESHOLDS, swings=SWINGS, events=failures)


def test_local_reduction_is_the_windows_module(telemetry: pd.DataFrame, failures: pd.DataFrame,
                                               local_windows: pd.DataFrame) -> None:
    keys = telemetry.assign(host=telemetry["host"].astype("string"), gpu=telemetry["gpu"].astype("string"))
    want = count_events(telemetry_windows(keys, thresholds=THRESHOLDS), failures)
    got = local_windows.drop(columns="power_w_swings")
    pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)
    assert local_windows["failures"].sum() == len(failures)
    assert (local_windows["power_w_swings"] > 0).mean() > 0.1  # checkpoint stalls show up


@pytest.mark.parametrize("plan", ["host groups", "host groups by day", "shuffle"])
def test_distributed_reduction_equals_local(dask_client: object, fleet: Path, failures: pd.DataFrame,
                                            local_windows: pd.DataFrame, plan: str) -> None:
    """Files of disjoint host ranges: tasks per host group (a week, or a day, of its files);
    a Dask frame: shuffle by host."""
    from reliab.fleet import as_dask
    from reliab.fleet.telemetry import host_groups

    files = sorted(str(p) for p in (fleet / "telemetry").rglob("*.parquet"))
    groups = host_groups(files)
    assert groups is not None and len(groups) == 4 and all(len(g) == 2 for g in groups)  # 4 pods x 2 days
    source = fleet / "telemetry" if plan.startswith("host groups") else as_dask(fleet / "telemetry")
    got = reduce_telemetry(source, client=dask_client, thresholds=THRESHOLDS, swings=SWINGS,
                           events=failures, partitions=3, task_span="1D" if plan.endswith("by day") else "7D")
    pd.testing.assert_frame_equal(got, local_windows, check_exact=False, rtol=1e-12, atol=1e-9)
    assert got.attrs == local_windows.attrs


def test_swings_across_partitions_and_windows(dask_client: object, tmp_path: Path) -> None:
    """Steps of >= 300 W: one inside a file, one across midnight (two files), one across an hour."""
    t = pd.to_datetime(["2024-01-01T22:59:59Z", "2024-01-01T23:00:00Z", "2024-01-01T23:59:58Z",
                        "2024-01-01T23:59:59Z", "2024-01-02T00:00:00Z", "2024-01-02T00:00:01Z"])
    power = [650.0, 100.0, 120.0, 110.0, 690.0, 680.0]
    frame = pd.DataFrame({"time": t, "host": "node00001", "gpu": "0", "power_w": power})
    frame.iloc[:4].to_parquet(tmp_path / "a.parquet")
    frame.iloc[4:].to_parquet(tmp_path / "b.parquet")
    local = reduce_telemetry(frame, swings=SWINGS)
    assert local["power_w_swings"].tolist() == [0.0, 1.0, 1.0]  # 22:00 none, 23:00 the drop, 00:00 the rise
    got = reduce_telemetry(tmp_path, client=dask_client, swings=SWINGS)
    pd.testing.assert_frame_equal(got, local, check_exact=False, rtol=1e-12)
    frame.iloc[[3, 4, 1]].to_parquet(tmp_path / "c.parquet")  # overlaps the other two in time
    with pytest.raises(ValueError, match="overlap in time"):
        reduce_telemetry(tmp_path, client=dask_client, swings=SWINGS)


def test_rates_by_group_from_partitioned_parquet(dask_client: object, fleet: Path, failures: pd.DataFrame,
                                                 tmp_path: Path) -> None:
    out = tmp_path / "tables"
    result = reliab.ingest(fleet / "logs", engine="dask", client=dask_client, output=out)
    windows_dir = reduce_telemetry(fleet / "telemetry", client=dask_client, events=failures,
                                   output=tmp_path / "windows")
    pods = pd.read_parquet(fleet / "inventory.parquet").set_index("host")["pod"].astype(str).to_dict()
    got = rates_by_group(out, windows_dir, "pod", groups=pods, client=dask_client)
    windows = pd.concat([pd.read_parquet(p) for p in sorted(Path(windows_dir).glob("*.parquet"))])
    exposure = windows.assign(pod=windows["host"].map(pods)).groupby("pod")["hours"].sum() * 8 / 24
    inter = result.interruptions.assign(pod=result.interruptions["hosts"].str.split(",").str[0].map(pods))
    want = reliab.estimate_rates(inter, by="pod", gpu_days=exposure)
    pd.testing.assert_frame_equal(got.summary(), want.summary(), check_exact=False, rtol=1e-12)
    assert got.notes == want.notes and got.n == want.n == len(failures)


def test_failure_glm_on_dask_cells_equals_local_cells(dask_client: object, local_windows: pd.DataFrame) -> None:
    covs, bins = ["gpu_temp_c_mean", "gpu_temp_c_max"], {"gpu_temp_c_mean": 0.5}
    import dask.dataframe as dd

    parts = dd.from_pandas(local_windows[[*covs, "failures", "hours"]], npartitions=5)
    got = fit_failure_glm_cells(parts, covs, bins=bins, client=dask_client)
    want = fit_failure_glm(local_windows, covs, cells=True, bins=bins)
    pd.testing.assert_frame_equal(got.summary(), want.summary(), check_exact=False, rtol=1e-9)
    assert (got.n, got.n_cells, got.events, got.family) == (want.n, want.n_cells, want.events, want.family)
    assert got.exposure == pytest.approx(want.exposure, rel=1e-12)
    assert got.notes[1:] == want.notes[1:] and got.notes[0] == want.notes[0] + " on Dask"
    assert np.isfinite(got.irr("gpu_temp_c_mean")["estimate"])


def test_few_groups_of_many_partitions_are_summed_without_a_shuffle(dask_client: object,
                                                                    local_windows: pd.DataFrame) -> None:
    """Cells and rates of 40 partitions: a tree of sums (Dask's default for more than 15
    partitions is a shuffle of the partials, many times the work of a few hundred cells)."""
    import dask.dataframe as dd
    from dask.distributed import get_task_stream

    from reliab.fleet.rates import exposure_by_group

    covs, bins = ["gpu_temp_c_mean"], {"gpu_temp_c_mean": 0.5}
    parts = dd.from_pandas(local_windows[["host", *covs, "failures", "hours"]], npartitions=40)
    pods = {h: f"pod{i % 3}" for i, h in enumerate(sorted(local_windows["host"].unique()))}
    with get_task_stream(dask_client) as stream:  # type: ignore[arg-type]
        got = fit_failure_glm_cells(parts[[*covs, "failures", "hours"]], covs, bins=bins, client=dask_client)
        hours = exposure_by_group(parts[["host", "hours"]], "pod", groups=pods, client=dask_client)
    assert not [t["key"] for t in stream.data if "shuffle" in str(t["key"])]
    want = fit_failure_glm(local_windows, covs, cells=True, bins=bins)
    pd.testing.assert_frame_equal(got.summary(), want.summary(), check_exact=False, rtol=1e-9)
    expected = local_windows.groupby(local_windows["host"].map(pods))["hours"].sum()
    np.testing.assert_allclose(hours.to_numpy(), expected.sort_index().to_numpy(), rtol=1e-12)


def test_hours_per_group_of_host_windows() -> None:
    """Hours per pod, summed per host first: a missing value counts 0 (as pandas' sum), a
    host outside the mapping and a missing host go to the missing group."""
    from reliab.fleet.rates import _hours

    frame = pd.DataFrame({"host": pd.Series(["a", "b", "a", "c", None, "x"], dtype="string"),
                          "hours": [1.0, 0.5, np.nan, 0.25, 2.0, 4.0]})
    got = _hours(frame, "pod", {"a": "p1", "b": "p2", "c": "p2"}, "hours").set_index("pod")["hours"]
    assert got[got.index.notna()].to_dict() == {"p1": 1.0, "p2": 0.75} and got[got.index.isna()].tolist() == [6.0]
