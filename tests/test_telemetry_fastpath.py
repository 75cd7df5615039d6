"""The telemetry CSV fast path (whole-file split, Arrow cells and conversions) gives exactly
what the line-by-line path gives: table, accounting, quarantine and notes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io.formats.telemetry import _fastcsv, delimited
from reliab.io.formats.telemetry.delimited import read_telemetry_csv


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delimited, "plain_lines", lambda path: None)
    monkeypatch.setattr(delimited, "uniform", lambda *a: None)
    monkeypatch.setattr(delimited, "decimals", lambda *a: None)
    monkeypatch.setattr(delimited, "iso_utc", lambda *a: None)


def _both(path: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    fast = read_telemetry_csv(path)
    with monkeypatch.context() as m:
        _slow(m)
        slow = read_telemetry_csv(path)
    return fast, slow


def _same(fast, slow) -> None:
    assert (fast.lines, fast.parsed, fast.irrelevant, fast.malformed) == \
        (slow.lines, slow.parsed, slow.irrelevant, slow.malformed)
    pd.testing.assert_frame_equal(fast.tables["telemetry"], slow.tables["telemetry"], check_exact=True)
    pd.testing.assert_frame_equal(fast.quarantine, slow.quarantine, check_exact=True)
    assert fast.notes == slow.notes


_CELL = st.one_of(
    st.from_regex(r"\A[-+]?[0-9]{1,9}(\.[0-9]{0,8})?\Z"),
    st.from_regex(r"\A[-+]?[0-9]{10,20}\.[0-9]{1,10}\Z"),  # too long for the fast conversion
    st.sampled_from(["", "nan", "N/A", "[N/A]", "inf", "-", "1e5", ".5", "5.", "0x1F", " 7 ", "abc", "1,5"]),
)
_TIME = st.one_of(
    st.from_regex(r"\A20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z\Z"),
    st.sampled_from(["2024-02-30T00:00:00Z", "2024-02-28T24:00:00Z", "2024-02-28T23:59:60Z", "2024-06-01 00:00:00", "1600-01-01T00:00:00Z", "yesterday",
                     "2024-06-01T00:00:00.5Z", "2024-06-01T00:00:00+02:00"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(_TIME, st.sampled_from(["node1", "node2", "", "time"]), _CELL, _CELL),
                     min_size=1, max_size=30),
       extra=st.sampled_from(["", "\n", "\n\n", "\nshort,row\n", "\ntime,host,temp_c,power_w\n", "\r\n"]))
def test_fast_path_equals_line_path(tmp_path_factory, monkeypatch, rows, extra) -> None:
    text = "time,host,temp_c,power_w\n" + "\n".join(",".join(r) for r in rows) + extra
    path = tmp_path_factory.mktemp("fast") / "t.csv"
    path.write_text(text)
    _same(*_both(str(path), monkeypatch))


def test_clean_sample_takes_the_fast_path(tmp_path, monkeypatch) -> None:
    """A clean file is read whole and converted by Arrow (the path is exercised, not skipped)."""
    path = tmp_path / "gpus.csv"
    times = pd.date_range("2024-06-01", periods=500, freq="min", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    rng = np.random.default_rng(3)
    body = "\n".join(f"{t},node{i % 7},{i % 8},{rng.normal(60, 5):.2f},{rng.integers(100, 700)}"
                     for i, t in enumerate(times))
    path.write_text("time,host,gpu,temp_c,power_w\n" + body + "\n")
    assert _fastcsv.plain_lines(str(path)) is not None
    calls: list[int] = []
    real = _fastcsv.arrow_strings
    monkeypatch.setattr(delimited, "arrow_strings", lambda *a: calls.append(1) or real(*a))
    fast, slow = _both(str(path), monkeypatch)
    assert calls and fast.parsed == 500
    _same(fast, slow)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"\A[-+]?([0-9]{1,15}(\.[0-9]{0,14})?|\.[0-9]{1,14})\Z"), min_size=1, max_size=50))
def test_decimals_match_pandas(cells: list[str]) -> None:
    fast = _fastcsv.decimals(pd.Series(cells, dtype=object), frozenset({"", "nan"}))
    slow = pd.to_numeric(pd.Series(cells, dtype=object), errors="coerce").astype("float64")
    if fast is None:  # (a cell longer than 15 characters)
        assert any(len(c) > 15 for c in cells)
        return
    np.testing.assert_array_equal(fast.to_numpy(), slow.to_numpy())
