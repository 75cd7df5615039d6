"""The shipped XID catalog: complete for NVIDIA's catalog codes of interest, consistent with the rules."""

from __future__ import annotations

import pytest

from reliab.taxonomy import explain
from reliab.taxonomy.xid import catalog_entry, xid_catalog

#: every code of interest in NVIDIA's Xid catalog
#: (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)
SECTION_4_2 = (13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120,
               121, 122, 123, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154, 171, 172)
NEWER = (155, 156, 157, 158, 162, 163, 164, 165, 167, 168, 169)


def test_catalog_covers_every_documented_code() -> None:
    """Reference: all codes of interest and the newer named codes are in the catalog, each with a confidence."""
    cat = xid_catalog()
    assert set(SECTION_4_2) | set(NEWER) <= set(cat["xid"])
    assert cat["confidence"].isin(["H", "M", "L"]).all()
    assert (cat.set_index("xid").loc[list(SECTION_4_2), "mnemonic"] != "").all()


@pytest.mark.parametrize("code", sorted(set(SECTION_4_2) | set(NEWER)))
def test_rules_agree_with_catalog(code: int) -> None:
    """Regression: the winning rule gives the catalog's category and root-cause flag."""
    entry = catalog_entry(f"xid:{code}")
    exp = explain(f"xid:{code}")
    assert exp.rule_id is not None, f"xid:{code} has no rule"
    assert exp.category == entry["category"]
    assert exp.root_cause == entry["root_cause"]
    assert exp.catalog["mnemonic"] == entry["mnemonic"]


def test_secondary_and_nvlink_classes() -> None:
    """Reference: 45 and 154 are never root causes; 74 and 144-150 stay in their own NVLink category."""
    for code in (45, 154):
        assert not explain(f"xid:{code}").root_cause
    assert {explain(f"xid:{c}").category for c in (74, *range(144, 151))} == {"NVLink"}
    assert "RESTART_BM" in str(explain("xid:79"))
