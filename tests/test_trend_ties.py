"""Reverse arrangement test with tied inter-arrival times (Kendall 1970, ch. 4; MacMahon 1916).

R oracle: tests/reference/r/growth.R (cor.test, method = "kendall", exact = FALSE).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from reliab.models import trend_test

R_VALUES = Path(__file__).parent / "reference" / "r" / "growth_values.csv"


def _r(case: str) -> tuple[np.ndarray, dict[str, float]]:
    with R_VALUES.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["case"] == case]
    gaps = np.array([float(r["value"]) for r in rows if r["quantity"].startswith("gap[")])
    return gaps, {r["quantity"]: float(r["value"]) for r in rows}


def _brute_pmf(gaps: list[float]) -> dict[int, float]:
    """Reversal counts over all r! orderings of the gaps (each ordering equally likely)."""
    counts: Counter[int] = Counter()
    for perm in itertools.permutations(gaps):
        counts[sum(perm[j] < perm[k] for j in range(len(perm)) for k in range(j + 1, len(perm)))] += 1
    total = sum(counts.values())
    return {k: v / total for k, v in counts.items()}


def test_tie_corrected_moments_by_hand():
    """Reference: gaps 1,1,2,2,2,3 (ties of 2 and 3): E R = (15 − 1 − 3)/2 = 5.5 and
    Var R = [6·5·17 − (2·1·9 + 3·2·11)]/72 = 426/72 (Kendall 1970, eq. 4.3, divided by 4)."""
    from reliab.models.trend import _reversal_moments

    mean, var = _reversal_moments(np.array([1.0, 1, 2, 2, 2, 3]))
    assert mean == 5.5
    assert var == pytest.approx(426 / 72, rel=1e-14)
    mean0, var0 = _reversal_moments(np.arange(1.0, 7.0))  # no ties: r(r−1)/4, (2r+5)(r−1)r/72
    assert (mean0, var0) == pytest.approx((7.5, 17 * 5 * 6 / 72))


def test_exact_pmf_with_ties_equals_enumeration():
    """Reference: the q-multinomial pmf equals brute-force enumeration of all 7! orderings."""
    from reliab.models.trend import _tied_reversal_pmf

    gaps = [1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 5.0]
    brute = _brute_pmf(gaps)
    pmf = _tied_reversal_pmf((2, 3, 1, 1))
    assert pmf.size == max(brute) + 1
    for k, p in brute.items():
        assert pmf[k] == pytest.approx(p, rel=1e-12)


def test_small_sample_with_ties_uses_the_tied_exact_distribution():
    """Reference: the two-sided exact p-value from enumeration for gaps 3,3,1,2,2,1,1 (ties)."""
    gaps = [3.0, 3.0, 1.0, 2.0, 2.0, 1.0, 1.0]
    observed = sum(gaps[j] < gaps[k] for j in range(7) for k in range(j + 1, 7))
    brute = _brute_pmf(gaps)
    low = sum(p for k, p in brute.items() if k <= observed)
    high = sum(p for k, p in brute.items() if k >= observed)
    r = trend_test(np.cumsum(gaps), method="reverse-arrangement")
    assert r.statistic == observed
    assert r.pvalue == pytest.approx(min(1.0, 2 * min(low, high)), rel=1e-12)
    assert "tied gaps" in r.distribution


def test_normal_branch_with_ties_matches_r():
    """Reference (R 4.2.2 cor.test kendall, exact = FALSE, continuity = TRUE): p = 4.675e-4."""
    gaps, ref = _r("ties80")
    r = trend_test(np.cumsum(gaps), method="reverse-arrangement")
    assert r.pvalue == pytest.approx(ref["p.continuity"], rel=1e-10)
    assert r.trend == "worsening"  # gaps shrink: failures come faster
    untied = math.sqrt(165 * 79 * 80 / 72)  # the variance that ignores ties gives another p
    z_untied = (abs(r.statistic - 80 * 79 / 4) - 0.5) / untied
    assert 2 * stats.norm.sf(z_untied) != pytest.approx(ref["p.continuity"], rel=1e-3)


def test_normal_branch_without_ties_matches_r():
    """Reference (R cor.test kendall, exact = FALSE, continuity = TRUE) on a 70-gap permutation."""
    gaps, ref = _r("perm70")
    r = trend_test(np.cumsum(gaps), method="reverse-arrangement")
    assert r.pvalue == pytest.approx(ref["p.continuity"], rel=1e-10)
