"""The canonical ``failures`` table: filled by failure-record readers, carried by ingest."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab import schema
from reliab.io.formats.lanl import read_lanl_signals
from reliab.taxonomy import classify_failures

HERE = Path(__file__).parent
LANL_DIR = HERE / "reference" / "lanl_failures_1996_2005"
LANL = LANL_DIR / "LA-UR-05-7318-failure-data-1996-2005.csv"
HEADER = LANL.read_text().splitlines()[0] if LANL.exists() else ""


def _sample(tmp_path: Path, n: int = 40) -> Path:
    """The release's first ``n`` records, verbatim."""
    lines = LANL.read_text().splitlines()[: n + 1]
    p = tmp_path / "LA-UR-05-7318-sample.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_conform_adds_missing_nullable_float_and_int_columns() -> None:
    """Regression: conform adds a missing nullable float64 column as NaN (it raised TypeError)."""
    df = pd.DataFrame({"unit": ["n1"], "start": [pd.Timestamp("2020-01-01", tz="UTC")], "origin": ["f:1"]})
    out = schema.conform(df, "failures")
    assert str(out["repair_h"].dtype) == "float64" and out["repair_h"].isna().all()
    assert str(out["system_units"].dtype) == "Int64" and out["system_units"].isna().all()
    schema.validate(out, "failures")
    inter = schema.conform(pd.DataFrame({"time": [pd.Timestamp("2020-01-01", tz="UTC")], "job_id": ["1"],
                                         "planned": [False], "category": ["GPU"], "component": ["GPU"],
                                         "attribution": ["rule:x"]}), "interruptions")
    assert inter["downtime_h"].isna().all()


@pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")
def test_lanl_reader_fills_failures_with_repair_time(tmp_path: Path) -> None:
    """Hand-read from the release's first record: system 2, node 0, 6/21/2005 10:54 to 11:00,
    Down Time 6 minutes, Hardware / Graphics Accel Hdwr, 49 nodes in the system."""
    res = read_lanl_signals(str(_sample(tmp_path)))
    fail = classify_failures(res.tables["failures"], res.tables["signals"])
    schema.validate(fail, "failures")
    assert len(fail) == 40
    first = fail.iloc[0]
    assert (first["unit"], first["system"]) == ("lanl-sys2-n0", "2")
    assert first["start"] == pd.Timestamp("2005-06-21 10:54", tz="UTC")
    assert first["end"] == pd.Timestamp("2005-06-21 11:00", tz="UTC")
    assert first["repair_h"] == pytest.approx(6 / 60)
    assert (first["cause"], first["detail"], first["component"]) == ("Hardware", "Graphics Accel Hdwr", "GPU")
    assert first["system_units"] == 49
    assert first["origin"].endswith(":2")


@pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")
def test_reader_files_records_uncategorised_and_the_taxonomy_classes_them(tmp_path: Path) -> None:
    """The reader (io, below the taxonomy) leaves category and component empty; the taxonomy
    gives each record the classes of the signal read from its line, and ingest applies it.
    Hand-read: record 1 is Hardware / Graphics Accel Hdwr (component GPU, as the signal
    ``lanl:hardware`` with message "Hardware: Graphics Accel Hdwr" is classed)."""
    res = read_lanl_signals(str(_sample(tmp_path)))
    raw = res.tables["failures"]
    assert raw["category"].isna().all() and raw["component"].isna().all()
    got = classify_failures(raw, res.tables["signals"])
    assert got["category"].notna().all() and got.loc[0, "component"] == "GPU"
    signals = reliab.classify(res.tables["signals"]).set_index("origin")
    for name in ("category", "component"):
        assert got[name].tolist() == signals.loc[got["origin"], name].tolist()
    pd.testing.assert_frame_equal(reliab.ingest(_sample(tmp_path)).failures, got)
    assert classify_failures(got, res.tables["signals"].iloc[0:0]) is got  # (classes kept as they are)


@pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")
def test_ingest_carries_failures_in_memory_and_to_parquet(tmp_path: Path) -> None:
    res = reliab.ingest(_sample(tmp_path))
    assert len(res.failures) == 40 and res.to_dict()["failures"] == 40
    written = res.write_parquet(tmp_path / "out")
    back = schema.read_parquet(str(written["failures"]), "failures")
    assert len(back) == 40 and back["repair_h"].sum() == pytest.approx(res.failures["repair_h"].sum())


@pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")
def test_store_and_output_modes_say_failures_are_not_kept(tmp_path: Path) -> None:
    """Never silent: with store= or output= the failure records' table is not kept yet."""
    path = _sample(tmp_path)
    for kw in ({"store": tmp_path / "store"}, {"output": tmp_path / "output"}):
        res = reliab.ingest(path, **kw)
        if len(res.failures) != 40:
            assert any("failure records" in n and "does not keep the failures table" in n for n in res.notes), kw


@pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")
def test_dask_engine_carries_failures(dask_client: object, tmp_path: Path) -> None:
    """The distributed engine (in memory) keeps the failure records as the local one does."""
    path = _sample(tmp_path)
    got = reliab.ingest(path, engine="dask", client=dask_client)
    local = reliab.ingest(path)
    pd.testing.assert_frame_equal(got.failures.reset_index(drop=True), local.failures.reset_index(drop=True))
