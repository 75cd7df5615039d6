"""reliab.align: time axes cleaned and reported, as-of joins that never reach past the tolerance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab import align_asof, clean_times
from reliab.align import clean_series, find_gaps

T0 = pd.Timestamp("2024-06-03T14:00:00Z")


def _tel(seconds, host="n1", values=None) -> pd.DataFrame:
    values = np.arange(len(seconds), dtype=float) if values is None else values
    return pd.DataFrame({"time": T0 + pd.to_timedelta(seconds, unit="s"), "host": host,
                         "temp_c": values})


def _checks(issues: pd.DataFrame) -> dict[str, int]:
    return dict(zip(issues["check"], issues["rows"], strict=True))


def test_zone_conversion_sort_and_duplicates_are_reported() -> None:
    """Regression: a Berlin-time table with one row out of order and one repeated stamp."""
    t = pd.to_datetime(["2024-06-03 16:00:00", "2024-06-03 16:00:02", "2024-06-03 16:00:01",
                        "2024-06-03 16:00:01"]).tz_localize("Europe/Berlin")
    frame = pd.DataFrame({"time": t, "host": "n1", "temp_c": [1.0, 2.0, 3.0, 5.0]})
    clean, issues = clean_times(frame, by="host")
    assert _checks(issues) == {"time zone": 4, "unsorted": 1, "duplicate timestamps": 2}
    assert str(clean["time"].dt.tz) == "UTC"
    assert clean["time"].iloc[0] == pd.Timestamp("2024-06-03T14:00:00Z")
    assert clean["temp_c"].tolist() == [1.0, 4.0, 2.0]  # duplicates averaged


@pytest.mark.parametrize(("how", "value"), [("first", 3.0), ("last", 5.0)])
def test_duplicate_policies(how: str, value: float) -> None:
    clean, _ = clean_times(_tel([0, 1, 1], values=np.array([1.0, 3.0, 5.0])), duplicates=how)
    assert clean["temp_c"].tolist() == [1.0, value]


def test_duplicates_can_be_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="share a timestamp.*duplicates="):
        clean_times(_tel([0, 1, 1]), duplicates="error")


def test_naive_times_are_refused_unless_a_zone_is_given() -> None:
    naive = _tel([0, 1]).assign(time=lambda d: d["time"].dt.tz_localize(None))
    with pytest.raises(ValueError, match="no time zone; pass assume_tz"):
        clean_times(naive)
    clean, issues = clean_times(naive, assume_tz="America/Los_Angeles")
    assert clean["time"].iloc[0] == T0 + pd.Timedelta(hours=7)
    assert "localized as America/Los_Angeles" in issues["action"].iloc[0]


def test_missing_times_dropped_and_counted_and_epoch_numbers_refused() -> None:
    frame = pd.DataFrame({"time": ["2024-06-03T14:00:00Z", None, "2024-06-03T14:00:02Z"],
                          "temp_c": [1.0, 2.0, 3.0]})
    clean, issues = clean_times(frame)
    assert len(clean) == 2 and _checks(issues)["missing time"] == 1
    with pytest.raises(ValueError, match="numbers"):
        clean_times(pd.DataFrame({"time": [1.7e9, 1.7e9 + 1]}))


def test_mixed_offsets_are_converted() -> None:
    frame = pd.DataFrame({"time": ["2024-06-03T14:00:00Z", "2024-06-03T16:00:01+02:00"]})
    clean, issues = clean_times(frame)
    assert (clean["time"] - T0).dt.total_seconds().tolist() == [0.0, 1.0]
    assert "several zones" in issues["detail"].iloc[0]


def test_gaps_found_per_key() -> None:
    a = _tel([0, 1, 2, 60, 61], host="a")
    b = _tel([0, 1, 2, 3], host="b")
    gaps = find_gaps(pd.concat([a, b], ignore_index=True), by="host")
    assert gaps["host"].tolist() == ["a"] and gaps["gap_s"].tolist() == [58.0]
    assert find_gaps(a, max_gap="2min").empty


def test_asof_tolerance_keys_and_lag() -> None:
    tel = pd.concat([_tel([0, 10, 20], "a", np.array([1.0, 2.0, 3.0])),
                     _tel([0, 10, 20], "b", np.array([7.0, 8.0, 9.0]))], ignore_index=True)
    steps = pd.DataFrame({"time": T0 + pd.to_timedelta([9.5, 14.0, 31.0, 9.5], unit="s"),
                          "host": ["a", "a", "a", "b"], "rate": [1, 2, 3, 4]})
    res = align_asof(steps, tel, tolerance="2s", by="host", direction="nearest")
    d = res.data
    assert d["temp_c"].tolist()[:1] == [2.0] and np.isnan(d["temp_c"].iloc[1])
    assert np.isnan(d["temp_c"].iloc[2])  # 11 s after the last sample: beyond the tolerance
    assert d.loc[d["host"] == "b", "temp_c"].tolist() == [8.0]  # never another host's sample
    assert d["asof_lag_s"].iloc[0] == pytest.approx(0.5)
    assert res.n_matched == 2 and _checks(res.issues)["unmatched"] == 2


def test_asof_backward_never_uses_a_later_sample() -> None:
    res = align_asof(_tel([5.0]).drop(columns="temp_c"), _tel([0, 6]), tolerance="10s")
    assert res.data["temp_c"].tolist() == [0.0]
    assert res.data["asof_lag_s"].tolist() == [-5.0]


def test_series_cleaning() -> None:
    s = pd.Series([3.0, np.nan, 1.0], index=T0 + pd.to_timedelta([2, 1, 0], unit="s"))
    out, issues = clean_series(s)
    assert out.tolist() == [1.0, 3.0] and _checks(issues) == {"unsorted": 2, "missing value": 1}
    with pytest.raises(ValueError, match="DatetimeIndex"):
        clean_series(pd.Series([1.0, 2.0]))


@settings(max_examples=60, deadline=None)
@given(left=st.lists(st.integers(0, 400), min_size=1, max_size=30),
       right=st.lists(st.integers(0, 400), min_size=1, max_size=30),
       tol=st.integers(0, 50), direction=st.sampled_from(["backward", "forward", "nearest"]))
def test_asof_matches_brute_force(left, right, tol, direction) -> None:
    """Property: every left row kept once; each match is the brute-force choice within tolerance."""
    lt = _tel(left).drop(columns="temp_c").assign(k=range(len(left)))
    rt = _tel(right, values=np.array(right, dtype=float))
    res = align_asof(lt, rt, tolerance=pd.Timedelta(seconds=tol), direction=direction,
                     duplicates="first")
    assert sorted(res.data["k"]) == list(range(len(left)))
    r = np.array(sorted(set(right)), dtype=float)
    for row in res.data.itertuples():
        x = float(left[row.k])
        d = r - x
        ok = {"backward": d <= 0, "forward": d >= 0, "nearest": np.ones_like(d, bool)}[direction]
        ok &= np.abs(d) <= tol
        if not ok.any():
            assert np.isnan(row.temp_c)
        else:
            best = np.abs(d[ok]).min()
            assert abs(row.temp_c - x) == best
            assert abs(row.asof_lag_s) <= tol
