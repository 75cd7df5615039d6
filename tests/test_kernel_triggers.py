"""The bulk parser's trigger mask in two regex passes (``_triggers.with_mask``) against one search per trigger."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.kernel import _triggers
from reliab.io.formats.kernel._triggers import TRIGGERS, bit, full_mask, overlap_free, with_mask


def _reference(line: str) -> int:
    return sum(1 << n for n, t in enumerate(TRIGGERS) if t in line)


def test_the_triggers_never_overlap_each_other() -> None:
    # the two-pass mask is exact only then; a new trigger that breaks it falls back, see below
    assert overlap_free(TRIGGERS)


@pytest.mark.parametrize(("texts", "free"), [
    (("ab", "bc"), False),          # "abc" holds both, overlapping at "b"
    (("abc", "b"), False),          # one inside the other
    ((" QID ", "EDAC"), True),      # " QID " overlaps only itself (" QID QID ")
    (("AER:", ":x"), False),
])
def test_overlap_rule(texts: tuple[str, ...], free: bool) -> None:
    assert overlap_free(texts) is free


# real kernel lines (Linux edac_mc.c, aer.c, mlx5 en_main.c/health.c, nvme pci.c, NVIDIA driver)
# and lines holding several triggers or one trigger twice
LINES = [
    "2024-06-03T14:02:16Z n9 kernel: EDAC MC0: 2 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0",
    "kernel: mlx5_core 0000:1a:00.0 ens1f0np0: Link down",
    "kernel: mlx5_core 0000:1a:00.0: mlx5_health_check_fatal_sensors:80:(pid 0): device's health compromised",
    "kernel: pcieport 0000:17:01.0: AER: Corrected error received: 0000:18:00.0",
    "kernel: nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "kernel: nvme nvme3: I/O 12 QID 4 timeout, aborting QID QID ",
    "kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "kernel: NVRM: The NVIDIA GPU 0000:b3:00.0 installed in this system has fallen off the bus",
    "setting system clock to 2024-06-03 14:02:11 UTC (1717423331)",
    "",
]


def test_mask_of_real_lines_matches_one_search_per_trigger() -> None:
    hits = pl.DataFrame({"i": range(len(LINES)), "line": LINES})
    got = with_mask(hits).get_column("_mask").to_list()
    assert got == [_reference(line) for line in LINES]
    assert got[1] == bit("mlx5") | bit("Link down")  # two triggers: decided by the full search
    assert got[-2] == 0 and got[0] == bit("EDAC")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([*TRIGGERS, " ", "x", "Q", "ID ", "AER", ":", "EDA", "C", "é"]),
                         max_size=8).map("".join), min_size=1, max_size=30))
def test_mask_equals_the_reference_on_any_mix(lines: list[str]) -> None:
    hits = pl.DataFrame({"i": range(len(lines)), "line": lines})
    assert with_mask(hits).get_column("_mask").to_list() == [_reference(line) for line in lines]


def test_overlapping_triggers_fall_back_to_one_search_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_triggers, "TRIGGERS", ("ab", "bc"))
    _triggers._two_pass.cache_clear()
    _triggers.full_mask.cache_clear()
    try:
        hits = pl.DataFrame({"i": [0, 1], "line": ["abc", "bc ab"]})
        assert with_mask(hits).get_column("_mask").to_list() == [3, 3]
    finally:
        _triggers._two_pass.cache_clear()
        _triggers.full_mask.cache_clear()


def test_full_mask_is_the_reference() -> None:
    hits = pl.DataFrame({"line": LINES})
    assert hits.select(full_mask()).to_series().to_list() == [_reference(line) for line in LINES]


def test_every_matcher_literal_is_a_trigger() -> None:
    # a matcher the mask does not know could read a line a bulk shape takes (a new wording
    # added to _kmsg must be added to TRIGGERS, or the bulk route silently disagrees)
    from reliab.io.formats.kernel._kmsg import _MATCHERS

    assert {literal for literal, _ in _MATCHERS} <= set(TRIGGERS)
