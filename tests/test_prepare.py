"""Tests of reliab.prepare: exposure tables with truncation, censoring and replacements."""

from __future__ import annotations

import pandas as pd
import pytest

from reliab.prepare import build_exposure, exposure_totals, fleet_exposure
from reliab.schema import validate

START, END = "2024-02-01", "2024-04-01"


def _inventory() -> pd.DataFrame:
    return pd.DataFrame({
        "unit": ["g1", "g2", "g3", "g1", "g4", "g5", "g6"],
        "kind": ["gpu"] * 6 + ["node"],
        "slot": ["s1", "s2", "s3", "s1", "s4", "s5", "n1"],
        "installed": ["2024-01-01", "2024-03-01", "2024-02-10", "2024-03-10", "2025-01-01",
                      "2023-01-01", "2024-01-01"],
        "removed": ["2024-03-10", None, "2024-02-20", None, None, "2024-01-15", "2024-05-01"],
        "removal_reason": ["failed", None, "drained", None, None, "failed", "failed"],
        "rack": list("ABCDEFG"),
    })


def test_truncation_censoring_replacement():
    """Regression: hand-worked exposure of a 7-row inventory (truncation, censoring, swap)."""
    e = build_exposure(_inventory(), start=START, end=END, kind="gpu")
    validate(e, "exposure")
    got = e.set_index("unit")
    assert list(got.index) == ["g1", "g2", "g3", "g1#2"]
    assert got.loc["g1", "truncated"] and got.loc["g1", "failed"]
    assert got.loc["g1", "hours"] == pytest.approx((pd.Timestamp("2024-03-10") - pd.Timestamp(START)).days * 24)
    assert not got.loc["g3", "failed"]  # drained: censored
    assert got.loc["g3", "hours"] == pytest.approx(10 * 24)
    assert not got.loc["g2", "failed"] and not got.loc["g2", "truncated"]  # alive at end
    assert str(got.loc["g2", "exit"]) == "2024-04-01 00:00:00+00:00"
    assert got.loc["g1#2", "slot"] == "s1"  # the replacement sits in the same slot
    assert got.loc["g1#2", "rack"] == "D"  # covariates carried through
    assert e.attrs["outside_window"] == 2  # g4 (after end) and g5 (removed before start)


def test_failure_after_end_is_censored():
    """Regression: a unit removed for failure after the window end is censored at end."""
    e = build_exposure(_inventory(), start=START, end=END, kind="node")
    assert len(e) == 1 and not e["failed"].iloc[0] and e["truncated"].iloc[0]
    assert e["hours"].iloc[0] == pytest.approx(60 * 24)


def test_bad_inventory_raises():
    """Regression: removal before installation and missing columns are rejected."""
    inv = _inventory()
    inv.loc[0, "removed"] = "2023-06-01"
    with pytest.raises(ValueError, match="removed before installed"):
        build_exposure(inv, start=START, end=END)
    with pytest.raises(ValueError, match="missing column"):
        build_exposure(inv.drop(columns=["kind"]), start=START, end=END)
    with pytest.raises(ValueError, match="after start"):
        build_exposure(_inventory(), start=END, end=START)


def test_fleet_exposure_llama3_totals():
    """Reference: 16,384 GPUs x 54 days = 884,736 GPU-days, 110,592 node-days (Llama 3 §3.3.4)."""
    f = fleet_exposure(16_384, start="2024-01-01", end="2024-02-24", per_node=8)
    validate(f, "exposure")
    assert f["unit"].iloc[9] == "node00001/gpu1" and f["node"].nunique() == 2048
    tot = exposure_totals(f)
    assert tot["gpu_days"] == pytest.approx(884_736)
    assert tot["node_days"] == pytest.approx(110_592)
    assert tot["gpu_hours"] == pytest.approx(21_233_664)
    assert tot["failures"] == 0


def test_exposure_totals_uses_node_rows():
    """Regression: node-days come from node rows when present."""
    e = build_exposure(_inventory(), start=START, end=END)
    tot = exposure_totals(e)
    assert tot["node_days"] == pytest.approx(60.0)
    assert tot["failures"] == 1
