"""LANL failure records 1996-2005: loaded in full, every line accounted for."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliab.errors import ParseError
from reliab.io.formats.lanl import read_lanl, read_lanl_signals

NAME = "LA-UR-05-7318-failure-data-1996-2005.csv"
HERE = Path(__file__).parent


def _lanl() -> Path:
    for p in (HERE / "reference" / "lanl_failures_1996_2005" / NAME,
              HERE.parent.parent / "shared" / "data" / "lanl_failures_1996_2005" / NAME):
        if p.exists():
            return p
    pytest.skip("LANL data not found")


def test_lanl_loads_in_full() -> None:
    """Reference: the release has 23,739 records (SOURCE.md); all parse, the header is irrelevant."""
    res = read_lanl_signals(str(_lanl()))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (23_740, 23_739, 1, 0)
    sig = res.tables["signals"]
    assert len(sig) == 23_739
    counts = sig["signal"].value_counts()
    # blame-column totals of the release (non-empty cells per column)
    assert counts["lanl:hardware"] == 14_341 and counts["lanl:software"] == 5_361
    assert counts["lanl:unrecorded"] == 453
    assert sig["time"].min().year == 1996 or sig["time"].min().year < 2000


def test_read_lanl_outages_table() -> None:
    """Regression: the outage table has hours of downtime and system 20's records."""
    out = read_lanl(_lanl())
    assert len(out) == 23_739
    assert (out["downtime_h"] >= 0).all()
    assert (out["system"] == "20").sum() == 2_478


def test_bad_start_time_is_quarantined(tmp_path: Path) -> None:
    """Regression: a record with an unreadable start goes to quarantine with its line number."""
    src = _lanl().read_text().splitlines()
    lines = src[:6]
    fields = lines[3].split(",")
    fields[16] = "not a date"
    lines[3] = ",".join(fields)
    p = tmp_path / "lanl.csv"
    p.write_text("\n".join(lines) + "\n")
    res = read_lanl_signals(str(p))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (6, 4, 1, 1)
    assert res.quarantine["lineno"].tolist() == [4]
    with pytest.raises(ParseError, match=r"lanl.csv:4"):
        read_lanl_signals(str(p), strict=True)


def test_lanl_root_causes_map_onto_reliab_categories() -> None:
    """Reference: blame sub-causes of the release map onto reliab's categories by the shipped rules."""
    from reliab.taxonomy import classify

    sig = read_lanl_signals(str(_lanl())).tables["signals"]
    got = classify(sig).groupby("category").size()
    # Hardware / Memory Dimm 2,880 + Memory Module 55 + SSD Memory Module 6 + IOS Buffer Memory 2
    assert got["System Memory"] == 2_943
    assert got["Power Supply"] >= 593 and got["CPU"] >= 5_931
    assert got["Unclassified"] >= 1_486 + 1_151 + 453  # undetermined, unresolvable, unrecorded
    assert got.sum() == 23_739
