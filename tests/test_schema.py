"""Canonical table specs: validation reports every problem at once; Parquet keeps dtypes."""

from __future__ import annotations

import pandas as pd
import pytest

from reliab import schema
from reliab.errors import SchemaError


def _signals(n: int = 3) -> pd.DataFrame:
    df = pd.DataFrame({
        "time": pd.date_range("2024-06-01", periods=n, freq="h", tz="UTC"),
        "host": ["node0001"] * n,
        "gpu": [None] * n,
        "job_id": ["42"] * n,
        "source": ["kernel"] * n,
        "signal": ["xid:79"] * n,
        "severity": ["critical"] * n,
        "message": ["GPU has fallen off the bus."] * n,
        "origin": [f"f.log:{i + 1}" for i in range(n)],
    })
    return schema.conform(df, "signals")


@pytest.mark.parametrize("table", list(schema.TABLES))
def test_empty_tables_validate(table: str) -> None:
    """Regression: the empty frame of every spec passes its own validation."""
    assert schema.validate(schema.empty(table), table).empty


def test_validation_reports_every_problem_at_once() -> None:
    """Regression: three independent defects give one SchemaError listing all three."""
    df = _signals()
    df = df.drop(columns=["origin"])
    df.loc[0, "severity"] = "apocalyptic"
    df["source"] = df["source"].astype(object)
    with pytest.raises(SchemaError) as info:
        schema.validate(df, "signals")
    problems = info.value.problems
    assert set(problems["column"]) == {"origin", "severity", "source"}
    assert problems.set_index("column").loc["severity", "example"] == "apocalyptic"
    assert "origin" in str(info.value) and "severity" in str(info.value)


def test_missing_values_in_required_column_counted() -> None:
    """Regression: the count of missing values is reported."""
    df = _signals(5)
    df.loc[[1, 3], "signal"] = pd.NA
    with pytest.raises(SchemaError) as info:
        schema.validate(df, "signals")
    row = info.value.problems.set_index("column").loc["signal"]
    assert row["n_failing"] == 2


def test_conform_converts_to_utc() -> None:
    """Regression: aware timestamps in another zone become UTC; naive ones are taken as UTC."""
    df = _signals(2)
    df["time"] = [pd.Timestamp("2024-06-01 12:00", tz="Europe/Berlin"), pd.Timestamp("2024-06-01 12:00")]
    out = schema.conform(df, "signals")
    assert str(out["time"].dtype) == "datetime64[ns, UTC]"
    assert out["time"].iloc[0] == pd.Timestamp("2024-06-01 10:00", tz="UTC")
    assert out["time"].iloc[1] == pd.Timestamp("2024-06-01 12:00", tz="UTC")


@pytest.mark.parametrize("table", ["signals", "jobs", "interruptions", "accounting", "quarantine"])
def test_parquet_round_trip_keeps_dtypes(tmp_path, table: str) -> None:
    """Regression: write_parquet/read_parquet keep every declared dtype and the UTC zone."""
    if table == "signals":
        df = _signals()
    else:
        df = schema.empty(table)
    path = tmp_path / f"{table}.parquet"
    schema.write_parquet(df, str(path), table)
    back = schema.read_parquet(str(path), table)
    assert back.dtypes.astype(str).to_dict() == df.dtypes.astype(str).to_dict()
    pd.testing.assert_frame_equal(back, df)


def test_telemetry_measurements_need_units() -> None:
    """Regression: a telemetry column without a unit suffix is rejected."""
    df = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=2, tz="UTC"),
                       "host": pd.array(["a", "b"], dtype="string"), "gpu": pd.array([None, None], dtype="string"),
                       "temp_c": [30.0, 31.0], "power": [100.0, 200.0]})
    with pytest.raises(SchemaError) as info:
        schema.validate(df, "telemetry")
    assert list(info.value.problems["column"]) == ["power"]
