"""Failure-risk prediction: features built from the past only, metrics against hand values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliab.predict._features import build_features, collect_events, label
from reliab.predict._metrics import Ranked, at_k, unit_weights

CUT = pd.Timestamp("2024-06-20T00:00:00Z")


def _signals(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"time": pd.to_datetime([r[0] for r in rows], utc=True),
                         "host": [r[1] for r in rows], "signal": [r[2] for r in rows]})


def _inter(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"time": pd.to_datetime([r[0] for r in rows], utc=True),
                         "hosts": [r[1] for r in rows], "component": [r[2] for r in rows],
                         "planned": False, "lost_gpu_hours": 100.0})


@pytest.fixture()
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    sig = _signals([
        ("2024-06-19T23:30:00Z", "n1", "xid:63"),   # 30 min before the cut
        ("2024-06-19T22:00:00Z", "n1", "xid:92"),   # 2 h before
        ("2024-06-17T00:00:00Z", "n1", "xid:63"),   # 3 d before
        ("2024-06-01T00:00:00Z", "n1", "xid:94"),   # 19 d before
        ("2024-06-20T00:00:00Z", "n1", "xid:63"),   # at the cut: not before it
        ("2024-06-20T00:20:00Z", "n1", "xid:63"),   # after
        ("2024-06-19T12:00:00Z", "n2", "edac:correctable"),
        ("2024-06-21T00:00:00Z", "n2", "sxid:20034"),
        ("2024-06-19T18:00:00Z", "n3", "pcie:aer_corrected"),
    ])
    inter = _inter([("2024-06-10T00:00:00Z", "n2", "GPU"),
                    ("2024-06-22T00:00:00Z", "n1", "GPU"),
                    ("2024-06-20T00:30:00Z", "n3", "Host")])
    return sig, inter


def _at_cut(sig: pd.DataFrame, inter: pd.DataFrame, lookahead_h: float = 0.0) -> pd.DataFrame:
    ev = collect_events(sig, inter)
    return build_features(ev, pd.DatetimeIndex([CUT]), lookahead_h=lookahead_h).set_index("unit")


def test_window_counts_match_hand_counts(tables):
    f = _at_cut(*tables)
    # n1 ECC family: 23:30 (1 h), 22:00 (1 d), 3 d ago (7 d), 19 d ago (30 d); the event at
    # the cut itself and the one after are not counted
    assert f.loc["n1", ["ecc_1h", "ecc_1d", "ecc_7d", "ecc_30d"]].tolist() == [1, 2, 3, 4]
    assert f.loc["n1", "ecc_since_h"] == pytest.approx(0.5)
    assert f.loc["n2", "edac_1d"] == 1 and f.loc["n2", "nvlink_30d"] == 0
    assert f.loc["n3", "aer_1d"] == 1
    # n2 failed 10 days before the cut: one earlier failure, 240 h ago
    assert f.loc["n2", "failure_total"] == 1 and f.loc["n2", "failure_since_h"] == pytest.approx(240)
    assert f.loc["n1", "failure_total"] == 0


def test_labels_look_only_forward(tables):
    ev = collect_events(*tables)
    f = build_features(ev, pd.DatetimeIndex([CUT]))
    y1, y3 = label(ev, f, 24.0), label(ev, f, 72.0)
    got = dict(zip(f["unit"], zip(y1, y3, strict=True), strict=True))
    assert got == {"n1": (0, 1), "n2": (0, 0), "n3": (1, 1)}


def _shift_after_cut(frame: pd.DataFrame, days: float) -> pd.DataFrame:
    after = frame["time"] >= CUT
    return frame.assign(time=frame["time"].where(~after, frame["time"] + pd.Timedelta(days=days)))


def _leaks(sig: pd.DataFrame, inter: pd.DataFrame, lookahead_h: float) -> bool:
    base = _at_cut(sig, inter, lookahead_h)
    moved = _at_cut(_shift_after_cut(sig, 9.5), _shift_after_cut(inter, 9.5), lookahead_h)
    cols = [c for c in base.columns if c not in ("time",)]
    return not base[cols].equals(moved[cols])


def test_moving_every_later_event_changes_no_feature(tables):
    assert not _leaks(*tables, lookahead_h=0.0)


def test_leakage_test_catches_a_window_that_reaches_past_the_cut(tables):
    # a window allowed 1 h past the prediction time sees the 00:00 and 00:20 events and the
    # 00:30 interruption; moving them changes the features, and the check says so
    assert _leaks(*tables, lookahead_h=1.0)


def test_auroc_auprc_brier_against_hand_values():
    # the classic 4-row example: one of the four positive-negative pairs is misordered
    score, y = np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])
    r = Ranked(score, y)
    w = np.ones(4)
    assert r.auroc(w) == pytest.approx(0.75)
    # ranks: 0.8 (pos, P=1/1), 0.4 (neg), 0.35 (pos, P=2/3): AP = (1 + 2/3) / 2
    assert r.auprc(w) == pytest.approx(5 / 6)
    assert r.brier(w) == pytest.approx((0.01 + 0.16 + 0.4225 + 0.04) / 4)
    # a tie between a positive and a negative counts one half
    assert Ranked(np.array([0.5, 0.5]), np.array([1, 0])).auroc(np.ones(2)) == pytest.approx(0.5)
    # weights are row multiplicities: doubling the negative at 0.4 gives 2 x 3 pairs, of which
    # 0.8 > 0.1 (1), 0.8 > 0.4 (2), 0.35 > 0.1 (1) are ordered: 4 / 6
    assert r.auroc(np.array([1, 2, 1, 1.0])) == pytest.approx(4 / 6)


def test_precision_at_k_by_hand():
    # two weekly decisions over 4 units; top-2 catches 1 failure of 2 in week 0, 1 of 1 in week 1
    score = np.array([0.9, 0.8, 0.1, 0.2, 0.7, 0.1, 0.6, 0.5])
    y = np.array([1, 0, 1, 0, 0, 0, 1, 0])
    units = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    week = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    row = at_k("m", score, y, units, week, (2,), unit_weights(units, 20, 0), 0.95)[0]
    assert row["precision"] == pytest.approx(2 / 4)
    assert row["recall"] == pytest.approx(2 / 3)
    assert row["lift"] == pytest.approx((2 / 4) / (3 / 8))
    assert row["precision_low"] <= row["precision"] <= row["precision_high"]


def test_hazard_probability_is_one_minus_exp_of_hourly_rate_times_horizon():
    from reliab.predict._models import GLM_TERMS, fit_hazard

    # no precursor ever seen: the fit is the intercept only, the MLE rate = failures / hours
    frame = pd.DataFrame(0.0, index=range(1000), columns=list(GLM_TERMS))
    y = np.zeros(1000)
    y[:20] = 1  # 20 failures in 1000 node-days of 24 h
    hz = fit_hazard(frame, y)
    assert hz.terms == ()
    rate_per_h = 20 / (1000 * 24)
    assert hz.probability(frame.head(1), 168.0)[0] == pytest.approx(1 - np.exp(-rate_per_h * 168),
                                                                     rel=1e-6)


def test_in_service_counts_allocations_running_at_the_cut(tables):
    sig, inter = tables
    jobs = pd.DataFrame({
        "nodelist": ["n[1-2]", "n[2-3]", "n4", "n5"],
        "start": pd.to_datetime(["2024-06-01T00:00:00", "2024-06-19T00:00:00", "2024-06-20T00:00:01",
                                 "2024-06-18T00:00:00"], utc=True),
        "end": pd.to_datetime(["2024-06-10T00:00:00", None, "2024-06-25T00:00:00",
                               "2024-06-20T00:00:00"], utc=True),
    })
    ev = collect_events(sig, inter, jobs)
    f = build_features(ev, pd.DatetimeIndex([CUT])).set_index("unit")
    # n1: its allocation ended on the 10th; n2, n3: in the running one; n4: starts after the
    # cut; n5: its allocation ended exactly at the cut
    assert f["in_service"].to_dict() == {"n1": 0, "n2": 1, "n3": 1, "n4": 0, "n5": 0}
    assert f.loc["n1", "age_h"] == pytest.approx(19 * 24)
    assert f.loc["n4", "age_h"] == 0
