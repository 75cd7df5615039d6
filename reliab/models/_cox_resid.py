"""Residuals, baseline hazard and the proportional-hazards score test of a fitted Cox model.

Every quantity is a sum over event keys of per-step terms (see :mod:`._cox_core`): the hazard
increment of step ``s`` is ``h_s = weight_s / denom_s`` and its mean covariate ``xbar_s``.  A row
at risk over keys ``[enter, leave)`` collects prefix-sum differences of those per-key totals.
With Efron ties a row dying at key ``k`` stays in step ``r`` with weight ``1 - r / d``
(Therneau & Grambsch 2000, *Modeling Survival Data*, §3.3, §4.2–4.6, §6.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from reliab.models._cox_core import CoxData, Steps


@dataclass(frozen=True)
class KeySums:
    hazard: NDArray[np.float64]       # (K,) sum of h over the key's steps (centred covariates)
    hx: NDArray[np.float64]           # (K, p) sum of h xbar
    hazard_f: NDArray[np.float64]     # (K,) sum of (r/d) h
    hx_f: NDArray[np.float64]         # (K, p) sum of (r/d) h xbar
    xbar: NDArray[np.float64]         # (K, p) mean of xbar over the key's steps


def key_sums(cd: CoxData, st: Steps) -> KeySums:
    k, sk, f = cd.key_time.size, cd.step_key, cd.step_frac
    h = cd.step_weight / st.denom
    nsteps = np.bincount(sk, minlength=k)

    def per_key(v: NDArray[np.float64]) -> NDArray[np.float64]:
        if v.ndim == 1:
            return np.bincount(sk, weights=v, minlength=k)
        return np.column_stack([np.bincount(sk, weights=c, minlength=k) for c in v.T])

    return KeySums(per_key(h), per_key(h[:, None] * st.mean), per_key(f * h),
                   per_key((f * h)[:, None] * st.mean), per_key(st.mean) / nsteps[:, None])


def _over_risk(cd: CoxData, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per row, the sum of a per-key quantity over the keys at which the row is at risk."""
    c = np.concatenate([np.zeros((1,) + v.shape[1:]), np.cumsum(v, axis=0)])
    return c[cd.leave] - c[cd.enter]


def martingale(cd: CoxData, st: Steps, ks: KeySums) -> NDArray[np.float64]:
    """Martingale residuals ``event - risk * cumulative hazard`` (sorted rows)."""
    own = np.zeros(cd.stop.size)
    own[cd.event] = ks.hazard_f[cd.event_key]
    return cd.event - st.risk * (_over_risk(cd, ks.hazard) - own)


def deviance(mart: NDArray[np.float64], event: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Deviance residuals ``sign(M) sqrt(-2 (M + d log(d - M)))`` (Therneau et al. 1990)."""
    log_term = np.zeros_like(mart)
    log_term[event] = np.log(1.0 - mart[event])
    return np.sign(mart) * np.sqrt(-2.0 * (mart + log_term))


def score(cd: CoxData, st: Steps, ks: KeySums) -> NDArray[np.float64]:
    """Score residuals ``int (x_i - xbar) dM_i`` (unweighted; sorted rows, n x p)."""
    x = cd.x
    out = -st.risk[:, None] * (x * _over_risk(cd, ks.hazard)[:, None] - _over_risk(cd, ks.hx))
    ev, k = cd.event, cd.event_key
    out[ev] += x[ev] - ks.xbar[k]
    out[ev] += st.risk[ev][:, None] * (x[ev] * ks.hazard_f[k][:, None] - ks.hx_f[k])
    return out


def robust_cov(cd: CoxData, resid: NDArray[np.float64], cov: NDArray[np.float64],
               cluster: NDArray[np.intp] | None) -> NDArray[np.float64]:
    """Sandwich ``D' D`` with ``D`` the weighted dfbeta residuals summed within clusters
    (Lin & Wei 1989, *JASA* 84, 1074–1078); each row is its own cluster without ``cluster``."""
    dfb = (cd.weight[:, None] * resid) @ cov
    if cluster is not None:
        codes = cluster[cd.order]
        dfb = np.column_stack([np.bincount(codes, weights=c) for c in dfb.T])
    return dfb.T @ dfb


def schoenfeld(cd: CoxData, ks: KeySums) -> NDArray[np.float64]:
    """Schoenfeld residuals ``x_i - xbar(t_i)`` of the event rows (Efron: mean over steps)."""
    return cd.x[cd.event] - ks.xbar[cd.event_key]


def km_at_events(cd: CoxData, left: bool) -> NDArray[np.float64]:
    """Kaplan–Meier of all rows (strata pooled, delayed entry) at each event row's time:
    left-continuous for R survival >= 3.0 ``cox.zph(transform = "km")``, else right."""
    times, deaths = np.unique(cd.stop[cd.event], return_counts=True)
    stop_s, start_s = np.sort(cd.stop), np.sort(cd.start)
    n_risk = ((stop_s.size - np.searchsorted(stop_s, times, side="left"))
              - (start_s.size - np.searchsorted(start_s, times, side="left")))
    surv = np.r_[1.0, np.cumprod(1.0 - deaths / n_risk)]
    return surv[np.searchsorted(times, cd.stop[cd.event]) + (0 if left else 1)]


def zph(cd: CoxData, st: Steps, ks: KeySums, g_event: NDArray[np.float64],
        names: tuple[str, ...]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Score test of ``gamma = 0`` in ``beta' x + gamma' x g(t)`` at ``(beta_hat, 0)``:
    chi-square per covariate (all betas as nuisance) and global (Grambsch & Therneau 1994;
    the exact score test of R survival >= 3.0 ``cox.zph``).  Returns statistics and df."""
    g = g_event - g_event.mean()
    p = len(names)
    ev_w = cd.weight[cd.event]
    u = np.r_[np.zeros(p), (ev_w * g) @ schoenfeld(cd, ks)]
    g_key = np.zeros(cd.key_time.size)
    g_key[cd.event_key] = g
    gs = g_key[cd.step_key]
    iu, ju = np.triu_indices(p)
    sec = np.zeros((gs.size, p, p))
    sec[:, iu, ju] = st.second
    sec[:, ju, iu] = st.second
    v = sec - st.mean[:, :, None] * st.mean[:, None, :]
    sw = cd.step_weight
    blocks = [np.einsum("s,sij->ij", sw * gs**e, v) for e in (0, 1, 2)]
    imat = np.block([[blocks[0], blocks[1]], [blocks[1], blocks[2]]])
    out = np.empty(p + 1)
    for j in range(p):
        kk = np.r_[np.arange(p), p + j]
        out[j] = u[kk] @ np.linalg.solve(imat[np.ix_(kk, kk)], u[kk])
    out[p] = u @ np.linalg.solve(imat, u)
    return out, np.r_[np.ones(p), p]


def zph_p(stat: NDArray[np.float64], dof: NDArray[np.float64]) -> NDArray[np.float64]:
    return stats.chi2.sf(stat, dof)
