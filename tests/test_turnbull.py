"""Turnbull's NPMLE against hand-solved examples and R's survfit (survival >= 3).

Expectations come from the self-consistency / likelihood equations solved by hand, and from
tests/reference/interval_censored/survreg_reference.out (R 4.2.2, survival 3.5.3).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import reliab
from reliab._checks import failures
from reliab.models._interval import as_bounds
from reliab.models.turnbull import innermost_intervals

REF = Path(__file__).parent / "reference" / "interval_censored"


def test_two_innermost_intervals_solved_by_hand():
    """(0,2], (0,2], (1,3], (2,4]: innermost intervals (1,2] and (2,3].  The likelihood is
    s1^2 (s1 + s2) s2 with s1 + s2 = 1, i.e. 2 ln s1 + ln(1 - s1): maximum at s1 = 2/3."""
    res = reliab.estimate_turnbull([0, 0, 1, 2], [2, 2, 3, 4])
    tb = res.summary()
    assert tb[["left", "right"]].to_numpy().tolist() == [[1.0, 2.0], [2.0, 3.0]]
    np.testing.assert_allclose(tb["mass"], [2 / 3, 1 / 3], atol=1e-9)
    np.testing.assert_allclose(res.at([0.5, 2.0, 3.0, 5.0])["survival"], [1.0, 1 / 3, 0.0, 0.0],
                               atol=1e-9)
    assert np.isnan(res.at(1.5)["survival"].iloc[0])  # inside (1, 2]: not determined
    assert res.converged and not failures(res)


def test_exact_and_right_censored_ends_make_the_right_innermost_intervals():
    """Adding an exact failure at 3 and a unit alive at 3: the ends in order are
    0+ 0+ 1+ 2] 2] 2+ [3 3] 3] 3+ 4] inf], so the innermost intervals are (1,2], [3,3] and
    (3,4] — (2,3] is no longer one.  At the NPMLE every supported s_j satisfies the
    Kuhn-Tucker condition sum_i alpha_ij / P_i = n (Gentleman & Geyer 1994, Biometrika 81)."""
    lo, hi = [0, 0, 1, 2, 3, 3], [2, 2, 3, 4, 3, np.inf]
    left, right, closed = innermost_intervals(as_bounds(lo, hi))
    assert left.tolist() == [1.0, 3.0, 3.0] and right.tolist() == [2.0, 3.0, 4.0]
    assert closed.tolist() == [False, True, False]
    s = reliab.estimate_turnbull(lo, hi).summary()["mass"].to_numpy()
    p = [s[0], s[0], s[0] + s[1], s[1] + s[2], s[1], s[2]]  # P_i = sum_j alpha_ij s_j by hand
    kkt = [1 / p[0] + 1 / p[1] + 1 / p[2], 1 / p[2] + 1 / p[3] + 1 / p[4], 1 / p[3] + 1 / p[5]]
    np.testing.assert_allclose(kkt, 6.0, rtol=1e-6)


def test_turnbull_equals_r_survfit_where_the_curve_is_determined():
    """R's survfit(Surv(l, r, type="interval2") ~ 1) on the committed dataset: the survival
    plateaus 0.6875, 0.5, 0.3125, 0.208333, 0.15625, 0.  Between 0.5 and 2, R reports
    0.84703 / 0.84047, an unconverged split: the masses s of (0.5,1] and (1,1.5] enter the
    likelihood as s_a (s_a + s_b) (s_b + s_c) s_c (s_c the mass at 2) with s_a + s_b + s_c
    fixed, maximal at s_b = 0, s_a = s_c: S = 1 - 0.3125/2 = 0.84375 on both sides of 1."""
    d = pd.read_csv(REF / "data.csv")
    res = reliab.estimate_turnbull(d["left"].fillna(0.0), d["right"].fillna(np.inf))
    got = res.at([2.0, 4.0, 8.0, 11.0, 12.0, 14.0, 20.0])["survival"].to_numpy()
    np.testing.assert_allclose(got, [0.6875, 0.5, 0.3125, 0.208333333333333, 0.208333333333333,
                                     0.15625, 0.0], atol=1e-6)
    np.testing.assert_allclose(res.at([1.0, 1.5])["survival"], [0.84375, 0.84375], atol=1e-4)
    r_out = (REF / "survreg_reference.out").read_text()
    assert "turnbull surv 0.847030552913313" in r_out


def test_result_contract_and_errors():
    res = reliab.estimate_turnbull([0, 0, 1, 2], [2, 2, 3, 4])
    assert isinstance(res.plot(), Figure)
    json.dumps(res.to_dict())
    with pytest.raises(reliab.errors.InsufficientDataError):
        reliab.estimate_turnbull([], [])
    with pytest.raises(ValueError, match="below the lower bound"):
        reliab.estimate_turnbull([2.0], [1.0])
    stopped = reliab.estimate_turnbull([0, 0, 1, 2], [2, 2, 3, 4], max_iter=2)
    assert not stopped.converged and "stopped after 2 iterations" in stopped.notes[0]
