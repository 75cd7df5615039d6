"""Turnbull's nonparametric maximum-likelihood estimate of survival for interval-censored data.

Each unit failed in ``(lower, upper]`` (``lower == upper``: exactly then; ``upper = inf``:
right-censored at ``lower``; ``lower = 0``: left-censored).  The NPMLE puts all its mass on the
*innermost intervals* — the sets ``(q, p]`` bounded by a lower end ``q`` directly followed,
in the ordered list of all ends, by an upper end ``p`` — and the masses ``s_j`` solve the
self-consistency equations (Turnbull 1976, "The empirical distribution function with
arbitrarily grouped, censored and truncated data", *JRSS B* 38:290–295, eq. 3.1)::

    s_j = (1 / n) sum_i  alpha_ij s_j / sum_k alpha_ik s_k,

``alpha_ij = 1`` when innermost interval ``j`` lies inside unit ``i``'s interval; iterated
(an EM algorithm) until no mass moves by more than ``tol``.  Inside an innermost interval the
estimate is not determined: the survival curve is known only between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from reliab._checks import Check, equal, finite, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._interval import Bounds, as_bounds

# order of ends at one value: a closed lower end (exact time), an upper end, an open lower end
_CLOSED_LOW, _UPPER, _OPEN_LOW = 0, 1, 2


def innermost_intervals(data: Bounds) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                               NDArray[np.bool_]]:
    """Innermost intervals ``(left, right, left_closed)`` in increasing order (Turnbull §3)."""
    low_kind = np.where(data.exact, _CLOSED_LOW, _OPEN_LOW)
    values = np.r_[data.lower, data.upper]
    kinds = np.r_[low_kind, np.full(data.n, _UPPER)]
    order = np.lexsort((kinds, values))
    v, k = values[order], kinds[order]
    is_low = k != _UPPER
    starts = np.flatnonzero(is_low[:-1] & ~is_low[1:])
    return v[starts], v[starts + 1], k[starts] == _CLOSED_LOW


def _incidence(data: Bounds, left: NDArray[np.float64], right: NDArray[np.float64],
               closed: NDArray[np.bool_]) -> sparse.csr_matrix:
    """``alpha_ij``: innermost interval ``j`` lies in unit ``i``'s interval."""
    low_kind = np.where(data.exact, _CLOSED_LOW, _OPEN_LOW)
    j_kind = np.where(closed, _CLOSED_LOW, _OPEN_LOW)
    rows, cols = [], []
    for i in range(data.n):
        after = (left > data.lower[i]) | ((left == data.lower[i]) & (j_kind >= low_kind[i]))
        inside = np.flatnonzero(after & (right <= data.upper[i]))
        rows.append(np.full(inside.size, i))
        cols.append(inside)
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(data.n, left.size))


@dataclass(frozen=True)
class TurnbullResult(ResultMixin):
    """Turnbull NPMLE: innermost intervals, their masses and the survival between them."""

    intervals: pd.DataFrame = field(repr=False)
    n: int
    iterations: int
    converged: bool
    tol: float
    log_likelihood: float
    conf_level: None = None
    method: str = ("Turnbull (1976) nonparametric maximum likelihood, self-consistency (EM) "
                   "iterations over the innermost intervals")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Columns left, right, left_closed, mass, survival (``P(T > right)``)."""
        return self.intervals.copy()

    def at(self, t: ArrayLike) -> pd.DataFrame:
        """Survival ``P(T > t)``; NaN inside an innermost interval, where it is not determined."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        tb = self.intervals
        left, right, mass = (tb["left"].to_numpy(), tb["right"].to_numpy(), tb["mass"].to_numpy())
        closed = tb["left_closed"].to_numpy()
        beyond = (left[None, :] > tt[:, None]) | (~closed[None, :] & (left[None, :] == tt[:, None]))
        surv = np.where(beyond, mass[None, :], 0.0).sum(axis=1)
        inside = ((left[None, :] < tt[:, None]) & (tt[:, None] < right[None, :])).any(axis=1)
        return pd.DataFrame({"time": tt, "survival": np.where(inside, np.nan, surv)})

    def plot(self, ax: Any = None) -> Figure:
        """Survival between the innermost intervals; shaded where it is not determined."""
        fig, ax = new_figure(ax)
        tb = self.intervals
        before = np.r_[1.0, tb["survival"].to_numpy()[:-1]]
        prev = 0.0
        for (_, row), s0 in zip(tb.iterrows(), before, strict=True):
            right = row["right"] if math.isfinite(row["right"]) else row["left"] * 1.1 + 1.0
            ax.hlines(s0, prev, row["left"], color="#4c78a8")
            ax.fill_between([row["left"], right], [row["survival"]] * 2, [s0] * 2,
                            color="#4c78a8", alpha=0.25, lw=0)
            prev = right
        ax.set_xlabel("time")
        ax.set_ylabel("survival P(T > t)")
        ax.set_title(f"Turnbull NPMLE, n = {self.n} (shaded: not determined)")
        return fig

    def invariants(self) -> tuple[Check, ...]:
        """Masses in [0, 1] summing to one; survival in [0, 1] and non-increasing."""
        mass = self.intervals["mass"].to_numpy()
        surv = self.intervals["survival"].to_numpy()
        return (finite("turnbull_mass_finite", mass),
                in_range("turnbull_mass_in_unit_interval", mass, 0.0, 1.0),
                equal("turnbull_mass_sums_to_one", float(mass.sum()), 1.0, rtol=1e-8, atol=1e-8),
                in_range("turnbull_survival_in_unit_interval", surv, 0.0, 1.0),
                in_range("turnbull_survival_non_increasing", np.diff(surv), hi=0.0, tol=1e-12))


def estimate_turnbull(
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> TurnbullResult:
    """Turnbull's NPMLE of the survival function from interval-censored failure times.

    Parameters
    ----------
    lower, upper
        Each unit failed in ``(lower, upper]``; ``lower == upper`` an exact time, ``upper =
        inf`` right-censoring at ``lower``, ``lower = 0`` left-censoring.
    tol
        Stop when no mass changes by more than ``tol`` in one iteration.
    max_iter
        Most self-consistency iterations; a result that stops here has ``converged=False``
        and says so in its notes.

    Returns
    -------
    TurnbullResult
        ``summary()`` lists the innermost intervals with their masses and the survival after
        each.

    References
    ----------
    Turnbull (1976), *JRSS B* 38:290–295; Klein & Moeschberger (2003), *Survival Analysis*,
    2nd ed., §5.2.
    """
    data = as_bounds(lower, upper)
    if data.n == 0:
        raise InsufficientDataError("no units; the Turnbull estimate needs at least one")
    left, right, closed = innermost_intervals(data)
    alpha = _incidence(data, left, right, closed)
    s = np.full(left.size, 1.0 / left.size)
    converged, it = False, 0
    while not converged and it < max_iter:
        new = s * (alpha.T @ (1.0 / (alpha @ s))) / data.n
        converged = float(np.max(np.abs(new - s))) <= tol
        s, it = new, it + 1
    notes = () if converged else (f"stopped after {max_iter} iterations without reaching "
                                  f"tol {tol:g}",)
    table = pd.DataFrame({"left": left, "right": right, "left_closed": closed, "mass": s,
                          "survival": np.clip(1.0 - np.cumsum(s), 0.0, 1.0)})
    return TurnbullResult(intervals=table, n=data.n, iterations=it, converged=converged, tol=tol,
                          log_likelihood=float(np.log(alpha @ s).sum()), notes=notes)
