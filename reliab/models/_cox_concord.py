"""Harrell's concordance of a Cox fit over its risk sets (Harrell et al. 1982, *JAMA* 247,
2543–2546; the counting-process form of Therneau & Atkinson, R survival vignette
"The concordance statistic", 2020).

A pair (i, j) is comparable when row i has an event at ``t`` and row j, of the same stratum,
is at risk at ``t`` (``start_j < t <= stop_j``) without an event at ``t``; it is concordant
when i has the larger linear predictor.  Concordance = (concordant + tied/2) / (concordant +
discordant + tied), pairs weighted by the product of case weights.  The counts are 2-D
dominance counts ("how much weight has key >= a and value < b"), done for all queries at once
with a merge-sort tree: O(n log^2 n), vectorised per tree level.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from reliab.models._cox_core import CoxData


def _dominance(pkey: NDArray[np.float64], pval: NDArray[np.float64], pw: NDArray[np.float64],
               qkey: NDArray[np.float64], qval: NDArray[np.float64]
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per query: weight of points with key >= qkey and value < qval, and value <= qval."""
    order = np.argsort(-pkey, kind="stable")
    pval, pw = pval[order], pw[order]
    prefix = pkey.size - np.searchsorted(np.sort(pkey), qkey, side="left")
    uniq = np.unique(pval)
    span = uniq.size + 2
    rank = np.searchsorted(uniq, pval)
    lo, hi = np.searchsorted(uniq, qval, "left"), np.searchsorted(uniq, qval, "right")
    less, le = np.zeros(qkey.size), np.zeros(qkey.size)
    idx = np.arange(pkey.size)
    level = 0
    while (1 << level) <= pkey.size:
        comp = (idx >> level) * span + rank
        srt = np.argsort(comp, kind="stable")
        cs = comp[srt]
        cw = np.r_[0.0, np.cumsum(pw[srt])]
        use = ((prefix >> level) & 1).astype(bool)
        base = ((prefix[use] >> level) - 1) * span
        first = cw[np.searchsorted(cs, base)]
        less[use] += cw[np.searchsorted(cs, base + lo[use])] - first
        le[use] += cw[np.searchsorted(cs, base + hi[use])] - first
        level += 1
    return less, le


def concordance(cd: CoxData, eta: NDArray[np.float64]) -> float:
    """Harrell's C of ``eta`` (larger = earlier event), R ``concordance(coxph fit)``."""
    conc = disc = tied = 0.0
    for s in np.unique(cd.stratum[cd.event]):
        rows = cd.stratum == s
        stop, start, w, e = cd.stop[rows], cd.start[rows], cd.weight[rows], eta[rows]
        ev = cd.event[rows]
        qt, qe, qw = stop[ev], e[ev], w[ev]
        inf = np.full(qt.size, np.inf)
        terms = [(stop, e, w, qt, 1.0), (start, e, w, qt, -1.0),
                 (stop[ev], e[ev], w[ev], qt, -1.0),
                 (stop[ev], e[ev], w[ev], np.nextafter(qt, np.inf), 1.0)]
        less = le = total = np.zeros(qt.size)
        for pk, pv, pw, qk, sign in terms:
            a, b = _dominance(pk, pv, pw, qk, qe)
            tot = _dominance(pk, pv, pw, qk, inf)[0]
            less, le, total = less + sign * a, le + sign * b, total + sign * tot
        conc += float(qw @ less)
        tied += float(qw @ (le - less))
        disc += float(qw @ (total - le))
    return (conc + tied / 2) / (conc + disc + tied)
