"""Vectorised Cox partial likelihood: Efron or Breslow ties, strata, case weights, offsets.

Rows are ``(start, stop]`` intervals with an event flag at ``stop`` (Andersen & Gill 1982,
*Ann. Statist.* 10, 1100–1120).  An *event key* is a distinct (stratum, event time) pair; the
risk set of key ``k`` is every row of the same stratum with ``start < t_k <= stop``.  Keys are
numbered in (stratum, time) order, so a row is at risk exactly at the keys ``enter <= k <
leave``: one sparse product adds each row's weighted covariate moments where it leaves and
subtracts them where it enters, and a reverse cumulative sum gives every risk-set sum at once.
Rows of other strata cancel because both their ``enter`` and ``leave`` lie outside the block.

Ties: Efron (1977), *JASA* 72, 557–565, with the weighted form of Therneau & Grambsch (2000),
*Modeling Survival Data*, §3.3: the ``d`` deaths of a key contribute ``d`` *steps* ``r = 0 ..
d - 1`` with denominator ``S0 - (r / d) E0`` (``E0`` the deaths' own weighted risk) and weight
the mean case weight of the deaths.  Breslow (1974) is one step per key with ``r = 0`` and
weight the deaths' summed case weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

Ties = str


@dataclass(frozen=True)
class CoxData:
    """Rows sorted by (stratum, stop), the risk-set map and the tie steps."""

    order: NDArray[np.intp]           # sorted position -> input row
    x: NDArray[np.float64]            # (n, p) covariates minus their weighted means
    means: NDArray[np.float64]        # (p,) the means subtracted
    design: NDArray[np.float64]       # (n, 1 + p + p(p+1)/2): 1, x, upper triangle of x x'
    start: NDArray[np.float64]
    stop: NDArray[np.float64]
    event: NDArray[np.bool_]
    weight: NDArray[np.float64]       # case weights
    offset: NDArray[np.float64]
    stratum: NDArray[np.intp]
    enter: NDArray[np.intp]           # first key at which the row is at risk
    leave: NDArray[np.intp]           # one past the last key at which it is at risk
    key_time: NDArray[np.float64]     # (K,) time of each event key
    key_stratum: NDArray[np.intp]     # (K,)
    event_key: NDArray[np.intp]       # key of each event row (event rows in sorted order)
    moments: sparse.csr_matrix        # (2K + 1, n): K+1 leave-minus-enter rows, K death rows
    step_key: NDArray[np.intp]        # (S,) key of each tie step
    step_frac: NDArray[np.float64]    # (S,) r / d (0 for Breslow)
    step_weight: NDArray[np.float64]  # (S,) case weight carried by the step
    event_x: NDArray[np.float64]      # (p,) weighted covariate sum over the event rows


def prepare(start: NDArray[np.float64], stop: NDArray[np.float64], event: NDArray[np.bool_],
            x: NDArray[np.float64], weight: NDArray[np.float64], offset: NDArray[np.float64],
            stratum: NDArray[np.intp], ties: Ties) -> CoxData:
    """Sort rows, number the event keys and build the sparse risk-set map."""
    order = np.lexsort((stop, stratum))
    start, stop, event = start[order], stop[order], event[order]
    x, weight, offset, stratum = x[order], weight[order], offset[order], stratum[order]
    means = weight @ x / weight.sum()
    x = x - means
    grid = np.unique(np.r_[stop, start[np.isfinite(start)]])
    span = grid.size + 2
    key_stop = stratum * span + 1 + np.searchsorted(grid, stop)
    key_start = stratum * span + np.where(np.isfinite(start), 1 + np.searchsorted(grid, start), 0)
    keys, deaths = np.unique(key_stop[event], return_counts=True)
    n, k = stop.size, keys.size
    enter = np.searchsorted(keys, key_start, side="right")
    leave = np.searchsorted(keys, key_stop, side="right")
    ev_rows = np.flatnonzero(event)
    event_key = leave[ev_rows] - 1
    rows = np.r_[leave, enter, k + 1 + event_key]
    vals = np.r_[np.ones(n), -np.ones(n), np.ones(ev_rows.size)]
    cols = np.r_[np.arange(n), np.arange(n), ev_rows]
    moments = sparse.csr_matrix((vals, (rows, cols)), shape=(2 * k + 1, n))
    iu, ju = np.triu_indices(x.shape[1])
    design = np.column_stack([np.ones(n), x, x[:, iu] * x[:, ju]])
    wdeaths = np.bincount(event_key, weights=weight[ev_rows], minlength=k)
    if ties == "efron":
        step_key = np.repeat(np.arange(k), deaths)
        first = np.r_[0, np.cumsum(deaths)[:-1]]
        step_frac = (np.arange(step_key.size) - first[step_key]) / deaths[step_key]
        step_weight = (wdeaths / deaths)[step_key]
    else:
        step_key, step_frac, step_weight = np.arange(k), np.zeros(k), wdeaths
    key_time = grid[(keys % span) - 1]
    return CoxData(order=order, x=x, means=means, design=design, start=start, stop=stop,
                   event=event, weight=weight, offset=offset, stratum=stratum, enter=enter,
                   leave=leave, key_time=key_time, key_stratum=keys // span,
                   event_key=event_key, moments=moments, step_key=step_key,
                   step_frac=step_frac, step_weight=step_weight,
                   event_x=weight[ev_rows] @ x[ev_rows])


@dataclass(frozen=True)
class Steps:
    """Risk-set and death sums per key, step denominators, per-row risk scores.

    Per-step mean covariates and second moments (``S x p`` arrays) are built only when asked
    for (residuals, the PH test); the likelihood and its derivatives are per-key sums.
    """

    shift: float                      # risk scores are exp(eta - shift)
    eta: NDArray[np.float64]          # x beta + offset (centred x), sorted rows
    risk: NDArray[np.float64]         # exp(eta - shift)
    denom: NDArray[np.float64]        # (S,)
    at_risk: NDArray[np.float64]      # (K, c) weighted risk-set sums of the design columns
    dead: NDArray[np.float64]         # (K, c) the same over the key's deaths
    step_key: NDArray[np.intp]
    step_frac: NDArray[np.float64]
    p: int

    def _per_step(self, cols: slice) -> NDArray[np.float64]:
        sk, f = self.step_key, self.step_frac[:, None]
        return (self.at_risk[sk, cols] - f * self.dead[sk, cols]) / self.denom[:, None]

    @cached_property
    def mean(self) -> NDArray[np.float64]:
        """(S, p) mean covariate of each step."""
        return self._per_step(slice(1, 1 + self.p))

    @cached_property
    def second(self) -> NDArray[np.float64]:
        """(S, p(p+1)/2) second moments (upper triangle) of each step."""
        return self._per_step(slice(1 + self.p, None))


def steps(cd: CoxData, beta: NDArray[np.float64]) -> Steps:
    """Risk-set sums at every key and the Efron/Breslow step denominators."""
    eta = cd.x @ beta + cd.offset
    shift = float(eta.max())
    risk = np.exp(eta - shift)
    net = cd.moments @ ((cd.weight * risk)[:, None] * cd.design)
    k = cd.key_time.size
    at_risk = np.cumsum(net[k::-1], axis=0)[::-1][1:]   # sum over m > k of leave-minus-enter
    dead = net[k + 1:]
    sk = cd.step_key
    denom = at_risk[sk, 0] - cd.step_frac * dead[sk, 0]
    return Steps(shift, eta, risk, denom, at_risk, dead, sk, cd.step_frac, beta.size)


def loglik_grad_hess(cd: CoxData, beta: NDArray[np.float64]
                     ) -> tuple[float, NDArray[np.float64], NDArray[np.float64], Steps]:
    """Log partial likelihood, score and Hessian (Efron or Breslow, weighted).

    A step's mean is ``(S1 - f E1) / D``, so every sum over steps is a sum over keys of the
    key's ``S`` and ``E`` moments times per-key sums of ``w / D``, ``w f / D``, ``w / D^2``,
    ``w f / D^2`` and ``w f^2 / D^2`` — no per-step covariate arrays.
    """
    st = steps(cd, beta)
    sw, ew, f, k = cd.step_weight, cd.weight[cd.event], cd.step_frac, cd.key_time.size
    ll = float(ew @ st.eta[cd.event] - sw @ (np.log(st.denom) + st.shift))

    def per_key(v: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(cd.step_key, weights=v, minlength=k)

    a, b = per_key(sw / st.denom), per_key(sw * f / st.denom)
    inv2 = sw / st.denom**2
    c, d, e = per_key(inv2), per_key(inv2 * f), per_key(inv2 * f * f)
    p = beta.size
    s1, e1 = st.at_risk[:, 1:1 + p], st.dead[:, 1:1 + p]
    grad = cd.event_x - (a @ s1 - b @ e1)
    iu, ju = np.triu_indices(p)
    info = np.empty((p, p))
    info[iu, ju] = a @ st.at_risk[:, 1 + p:] - b @ st.dead[:, 1 + p:]
    info[ju, iu] = info[iu, ju]
    cross = (s1 * d[:, None]).T @ e1
    info -= (s1 * c[:, None]).T @ s1 - cross - cross.T + (e1 * e[:, None]).T @ e1
    return ll, grad, -info, st


@dataclass(frozen=True)
class Solution:
    beta: NDArray[np.float64]
    ll: float
    ll_null: float
    hess: NDArray[np.float64]
    steps: Steps
    iterations: int
    converged: bool


def newton(cd: CoxData, p: int, max_iter: int = 50) -> Solution:
    """Newton–Raphson from beta = 0 with step halving when the likelihood falls."""
    beta = np.zeros(p)
    ll, grad, hess, st = loglik_grad_hess(cd, beta)
    ll0 = ll
    for it in range(1, max_iter + 1):
        try:
            step = np.linalg.solve(-hess, grad)
        except np.linalg.LinAlgError:
            if it == 1:
                raise
            return Solution(beta, ll, ll0, hess, st, it, False)  # information lost on the run
        for _ in range(30):
            new = beta + step
            ll_new, g_new, h_new, st_new = loglik_grad_hess(cd, new)
            if np.isfinite(ll_new) and ll_new >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        beta, ll, grad, hess, st = new, ll_new, g_new, h_new, st_new
        if np.max(np.abs(step)) < 1e-10:
            return Solution(beta, ll, ll0, hess, st, it, True)
    return Solution(beta, ll, ll0, hess, st, max_iter, False)
