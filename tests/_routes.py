"""Comparing a reader's bulk route with its per-line route (test helper)."""

from __future__ import annotations

from typing import Any

import pandas as pd


def assert_same_reads(fast: tuple[Any, pd.DataFrame, pd.DataFrame | None],
                      slow: tuple[Any, pd.DataFrame, pd.DataFrame | None], label: object) -> None:
    """Two reads of one file, each ``(counts, signals, quarantine)``: equal counts, the same
    signals exactly, and the same quarantine (or none in both)."""
    assert fast[0] == slow[0], label
    pd.testing.assert_frame_equal(fast[1], slow[1], check_exact=True)
    if fast[2] is None or slow[2] is None:
        assert fast[2] is slow[2]
    else:
        pd.testing.assert_frame_equal(fast[2], slow[2])
