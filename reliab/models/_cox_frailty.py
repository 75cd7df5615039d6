"""Shared gamma frailty for the Cox model by penalised partial likelihood (R ``coxph`` with
``frailty(unit, distribution = "gamma")``, its default method ``"em"``).

Each cluster ``i`` (unit) has a log-frailty ``ω_i`` added to the linear predictor.  For a
fixed frailty variance ``θ`` (``ν = 1/θ``) the coefficients and log-frailties maximise the
penalised partial log-likelihood ``PPL = PL(β, ω) − ν Σ_i (exp ω_i − ω_i)`` (the gamma
penalty; at its maximum ``mean(exp ω) = 1``).  ``θ`` maximises the marginal (integrated)
log-likelihood, which for gamma frailties is ``PPL`` corrected in closed form:

``L_m(θ) = PL + ν Σ ω_i + Σ_i [d_i + ν ln(ν/(ν + d_i)) + ln Γ(ν + d_i) − ln Γ(ν) − d_i ln(ν + d_i)]``

with ``d_i`` the events of cluster ``i`` (Therneau, Grambsch & Pankratz 2003, "Penalized
survival models and frailty", *J. Comput. Graph. Stat.* 12, 156–175, §3 and the EM
equivalence of §4; Therneau & Grambsch 2000, *Modeling Survival Data*, §9.6).  ``θ = 0`` is
the Cox model without frailty.  Here ``L_m`` is maximised over ``ln θ`` by Brent's method to
a 1e-10 tolerance (R stops its own search when ``L_m`` changes by less than ``eps``
relative; its ``θ`` is as close as that rule allows).

The variance of β is R's: the inverse of the penalised information with the frailty-frailty
block reduced to its diagonal (R's ``sparse`` computation, the default for more than 5
clusters; Therneau et al. 2003 §5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import optimize, special
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from reliab.errors import InsufficientDataError
from reliab.models import _cox_core as core
from reliab.models import _cox_input as inp


@dataclass(frozen=True)
class FrailtyFit:
    beta: NDArray[np.float64]
    omega: NDArray[np.float64]
    theta: float
    loglik: float            # partial log-likelihood at (β, ω), no penalty (R fit$loglik[2])
    marginal_loglik: float   # L_m, R's "I-likelihood" (fit$history[[1]]$c.loglik)
    cov: NDArray[np.float64]  # (p, p) of β
    iterations: int


def correction(d: NDArray[np.float64], nu: float) -> float:
    """Closed-form gamma term of the marginal log-likelihood (module docstring)."""
    return float(np.sum(d + nu * np.log(nu / (nu + d)) + special.gammaln(nu + d)
                        - special.gammaln(nu) - d * np.log(nu + d)))


@dataclass(frozen=True)
class FrailtyData:
    """A prepared Cox data set (covariates only) plus the cluster of every sorted row."""

    cd: core.CoxData
    cluster: NDArray[np.intp]        # cluster code of each sorted row
    k: int
    design: NDArray[np.float64]      # sorted rows: 1, x, x x' (upper), cluster indicators, x by cluster
    event_c: NDArray[np.float64]     # (k,) weighted events per cluster


def prepare(cd: core.CoxData, cluster_in_input_order: NDArray[np.intp]) -> FrailtyData:
    """Add the cluster indicators and their products with x to the sorted design."""
    cl = cluster_in_input_order[cd.order]
    k = int(cluster_in_input_order.max()) + 1
    onehot = np.zeros((cl.size, k))
    onehot[np.arange(cl.size), cl] = 1.0
    xc = (cd.x[:, :, None] * onehot[:, None, :]).reshape(cl.size, -1)
    ev = cd.event
    event_c = np.bincount(cl[ev], weights=cd.weight[ev], minlength=k)
    return FrailtyData(cd, cl, k, np.column_stack([cd.design, onehot, xc]), event_c)


def loglik_grad_hess(fd: FrailtyData, b: NDArray[np.float64]
                     ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Partial log-likelihood (Efron or Breslow) in (β, ω), its score and Hessian, using that
    cluster indicators are disjoint: their second-moment block is diagonal."""
    cd, k = fd.cd, fd.k
    p = cd.x.shape[1]
    eta = cd.x @ b[:p] + b[p:][fd.cluster] + cd.offset
    shift = float(eta.max())
    net = cd.moments @ ((cd.weight * np.exp(eta - shift))[:, None] * fd.design)
    nk = cd.key_time.size
    at_risk = np.cumsum(net[nk::-1], axis=0)[::-1][1:]
    dead = net[nk + 1:]
    sk, f = cd.step_key, cd.step_frac[:, None]
    per = (at_risk[sk] - f * dead[sk])
    denom = per[:, 0]
    per = per / denom[:, None]
    sw = cd.step_weight
    ev = cd.event
    ll = float(cd.weight[ev] @ eta[ev] - sw @ (np.log(denom) + shift))
    q = 1 + p + p * (p + 1) // 2
    mean = np.column_stack([per[:, 1:1 + p], per[:, q:q + k]])
    grad = np.r_[cd.event_x, fd.event_c] - sw @ mean
    info = np.zeros((p + k, p + k))
    iu, ju = np.triu_indices(p)
    info[iu, ju] = sw @ per[:, 1 + p:q]
    info[ju, iu] = info[iu, ju]
    cross = (sw @ per[:, q + k:]).reshape(p, k)
    info[:p, p:] = cross
    info[p:, :p] = cross.T
    info[np.arange(p, p + k), np.arange(p, p + k)] = sw @ per[:, q:q + k]
    info -= (mean * sw[:, None]).T @ mean
    return ll, grad, -info


def _inner(fd: FrailtyData, p: int, nu: float, start: NDArray[np.float64]
           ) -> tuple[NDArray[np.float64], float, NDArray[np.float64], int]:
    """Maximise the penalised partial likelihood at fixed ν by Newton with step halving."""
    b = start.copy()
    diag = np.arange(p, b.size)

    def ppl(v: NDArray[np.float64]) -> tuple[float, NDArray[np.float64], NDArray[np.float64], float]:
        ll, g, h = loglik_grad_hess(fd, v)
        w = np.exp(v[p:])
        g[p:] -= nu * (w - 1)
        h[diag, diag] -= nu * w
        return ll - nu * float(np.sum(w - v[p:])), g, h, ll

    f, g, h, ll = ppl(b)
    for it in range(1, 201):
        step = np.linalg.solve(-h, g)
        for _ in range(40):
            f_new, g_new, h_new, ll_new = ppl(b + step)
            if np.isfinite(f_new) and f_new >= f - 1e-13 * abs(f):
                break
            step = step / 2
        b, f, g, h, ll = b + step, f_new, g_new, h_new, ll_new
        if np.max(np.abs(step)) < 1e-12:
            return b, ll, h, it
    raise RuntimeError("gamma frailty: the penalised Newton iteration did not converge")


def fit_gamma_frailty(cd: core.CoxData, cluster: NDArray[np.intp],
                      theta: float | None = None) -> FrailtyFit:
    """Fit β, the log-frailties and θ (or at a given ``theta`` > 0, R's ``theta =``);
    ``cd`` holds the covariates, ``cluster`` the cluster code (0 … k−1) of every input row."""
    fd = prepare(cd, cluster)
    p, k = cd.x.shape[1], fd.k
    d = np.bincount(fd.cluster[cd.event], minlength=k).astype(float)
    state = {"b": np.zeros(p + k), "iters": 0}

    def score(log_theta: float) -> float:
        """d L_m / d ν: by the envelope theorem Σ ω̂ + Σ [ln(ν/(ν+d)) + ψ(ν+d) − ψ(ν)]."""
        nu = math.exp(-log_theta)
        b, _, _, it = _inner(fd, p, nu, state["b"])
        state["b"], state["iters"] = b, state["iters"] + it
        return float(np.sum(b[p:]) + np.sum(np.log(nu / (nu + d)) + special.digamma(nu + d)
                                            - special.digamma(nu)))

    if theta is not None:
        return _at(fd, p, k, d, theta, np.zeros(p + k), 0)
    lo, hi = -1.0, 1.0
    s_lo, s_hi = score(lo), score(hi)
    while s_lo * s_hi > 0:
        if s_lo < 0:  # L_m still rising as θ falls (ν grows)
            lo, s_lo = lo - 2.0, score(lo - 2.0)
            if lo < math.log(1e-8):
                raise InsufficientDataError(
                    "the gamma frailty variance is estimated at 0 (the marginal likelihood is "
                    "largest without frailty): fit the Cox model without frailty")
        else:
            hi, s_hi = hi + 2.0, score(hi + 2.0)
            if hi > math.log(1e8):
                raise InsufficientDataError("the gamma frailty variance diverges: one cluster "
                                            "holds the events; no finite estimate")
    state["b"] = np.zeros(p + k)
    log_theta = optimize.brentq(score, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    return _at(fd, p, k, d, math.exp(log_theta), np.zeros(p + k), state["iters"])


def _at(fd: FrailtyData, p: int, k: int, d: NDArray[np.float64], theta: float,
        start: NDArray[np.float64], iters: int) -> FrailtyFit:
    nu = 1.0 / theta
    b, ll, h, it = _inner(fd, p, nu, start)
    sparse = h.copy()
    sparse[p:, p:][~np.eye(k, dtype=bool)] = 0.0
    cov = np.linalg.inv(-sparse)[:p, :p]
    return FrailtyFit(beta=b[:p], omega=b[p:], theta=theta, loglik=ll,
                      marginal_loglik=ll + nu * float(np.sum(b[p:])) + correction(d, nu),
                      cov=cov, iterations=iters + it)


def cox_fit(df: pd.DataFrame, cd: core.CoxData, frailty: str, theta: float | None,
            covariates: tuple[str, ...], level: float, ties: str, n_subjects: int,
            n_events: int, strata_names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of the CoxFit of a gamma-frailty fit (``fit_cox(..., frailty=)`` builds it;
    ``beta`` is the coefficient vector the hazard-ratio table is made from)."""
    if theta is not None and not (np.isfinite(theta) and theta > 0):
        raise ValueError(f"frailty_theta must be a finite number > 0, got {theta!r}")
    codes = inp.codes(df, frailty)
    # (p + k)-square solves are small: one BLAS thread (threads on a busy machine cost 30x)
    with threadpool_limits(limits=1, user_api="blas"):
        ff = fit_gamma_frailty(cd, codes, theta)
    null = core.loglik_grad_hess(cd, np.zeros(len(covariates)))[0]
    names = df[frailty].drop_duplicates().sort_values().to_numpy()
    how = "fixed" if theta is not None else "maximum marginal likelihood (score of θ = 0)"
    return dict(beta=ff.beta, covariates=covariates,
                  log_likelihood=ff.loglik, log_likelihood_null=null, lr_statistic=math.nan,
                  lr_p=math.nan, n=len(df), n_subjects=n_subjects, n_events=n_events,
                  conf_level=level, ties=ties, iterations=ff.iterations, converged=True,
                  cov=ff.cov, naive_cov=ff.cov, strata=strata_names,
                  method=(f"Cox with shared gamma frailty by {frailty!r}: penalised partial "
                          f"likelihood, θ {how}; se from the penalised information (frailty "
                          "block diagonal, as R's sparse computation)"),
                  notes=("no likelihood-ratio test: R's uses the effective df of the "
                         "penalised fit",),
                  frailty_theta=ff.theta, marginal_log_likelihood=ff.marginal_loglik,
                  frailty_effects=pd.DataFrame({frailty: names, "log_frailty": ff.omega}))  # noqa: C408
