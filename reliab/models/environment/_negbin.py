"""NB2 negative-binomial regression with exposure by profile likelihood over the dispersion.

For fixed ``α`` the NB2 model (Var y = μ + α μ²) is a GLM, fitted by Fisher scoring with
weights ``μ / (1 + α μ)``; the dispersion is found by maximising the profile
log-likelihood over ``log α`` (bounded Brent search), which is how R's ``MASS::glm.nb``
alternates between β and θ = 1/α (Venables & Ripley 2002, *Modern Applied Statistics with
S*, §7.4).  The expected information of NB2 is block-diagonal in (β, α) (Lawless 1987,
*Canadian J. Statistics* 15, 209–225), so the standard errors of β come from the β block.
Written here because statsmodels' ``NegativeBinomial`` optimisers fail on the rare-event
node-windows of a fleet (most counts 0, α near its boundary); results agree with it where
it converges (tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar
from scipy.special import gammaln, xlogy

LOG_ALPHA_BOUNDS = (-12.0, 5.0)


@dataclass(frozen=True)
class NegBinFit:
    """β, their standard errors, α, the log-likelihood and whether α sits at its lower bound."""

    params: NDArray[np.float64]
    bse: NDArray[np.float64]
    alpha: float
    llf: float
    at_boundary: bool
    iterations: int


def nb2_loglik(y: NDArray[np.float64], mu: NDArray[np.float64], alpha: float) -> float:
    """NB2 log-likelihood (Cameron & Trivedi 2013, eq. 3.26)."""
    pos = y > 0
    return _loglik(y, pos, float(gammaln(y[pos] + 1.0).sum()), mu, alpha)


def _loglik(y: NDArray[np.float64], pos: NDArray[np.bool_], log_y_fact: float,
            mu: NDArray[np.float64], alpha: float) -> float:
    """NB2 log-likelihood; the gamma terms vanish for y = 0, the common case of node-windows."""
    inv = 1.0 / alpha
    am = alpha * mu
    yp = y[pos]
    gam = float(np.sum(gammaln(yp + inv)) - yp.size * gammaln(inv)) - log_y_fact
    # y log(am / (1 + am)) - log(1 + am) / alpha, written so that y = 0 with am -> 0 stays finite
    return gam + float(np.sum(xlogy(yp, am[pos])) - np.sum((y + inv) * np.log1p(am)))


def _irls(y: NDArray[np.float64], x: NDArray[np.float64], offset: NDArray[np.float64],
          alpha: float, beta: NDArray[np.float64], tol: float = 1e-10, max_iter: int = 100
          ) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """Fisher scoring for β at fixed α; returns β, the information matrix and iterations."""
    info = np.eye(x.shape[1])
    for it in range(1, max_iter + 1):
        mu = np.exp(np.clip(offset + x @ beta, -700, 700))
        w = mu / (1.0 + alpha * mu)
        grad = x.T @ ((y - mu) / (1.0 + alpha * mu))
        info = (x * w[:, None]).T @ x
        step = np.linalg.solve(info, grad)
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            return beta, info, it
    return beta, info, max_iter


def fit_nb2(y: NDArray[np.float64], x: NDArray[np.float64], exposure: NDArray[np.float64],
            start: NDArray[np.float64], *, poisson_start: bool = False) -> NegBinFit:
    """Maximum-likelihood NB2 regression of ``y`` on ``x`` with ``log(exposure)`` offset.

    With ``poisson_start`` (``start`` is the Poisson MLE) and a non-positive score for α at 0,
    the maximum is on the boundary α → 0 and the search is skipped.
    """
    offset = np.log(exposure)
    state = {"beta": np.asarray(start, dtype=float).copy(), "it": 0}
    pos = y > 0
    log_y_fact = float(gammaln(y[pos] + 1.0).sum())
    if poisson_start:
        mu0 = np.exp(offset + x @ state["beta"])
        if float(np.sum((y - mu0) ** 2 - y)) <= 0:
            # the score for alpha at 0 (Dean & Lawless 1989) points below the boundary:
            # the profile likelihood is maximal at alpha -> 0, the Poisson fit
            alpha = float(np.exp(LOG_ALPHA_BOUNDS[0]))
            beta, info, it = _irls(y, x, offset, alpha, state["beta"])
            return NegBinFit(params=beta, bse=np.sqrt(np.diag(np.linalg.inv(info))),
                             alpha=alpha, llf=_loglik(y, pos, log_y_fact, np.exp(offset + x @ beta),
                                                      alpha), at_boundary=True, iterations=it)

    def negll(log_alpha: float) -> float:
        a = float(np.exp(log_alpha))
        beta, _, it = _irls(y, x, offset, a, state["beta"], tol=1e-8)
        state["beta"], state["it"] = beta, state["it"] + it
        return -_loglik(y, pos, log_y_fact, np.exp(offset + x @ beta), a)

    res = minimize_scalar(negll, bounds=LOG_ALPHA_BOUNDS, method="bounded",
                          options={"xatol": 1e-5})
    alpha = float(np.exp(res.x))
    beta, info, it = _irls(y, x, offset, alpha, state["beta"])
    bse = np.sqrt(np.diag(np.linalg.inv(info)))
    llf = _loglik(y, pos, log_y_fact, np.exp(offset + x @ beta), alpha)
    return NegBinFit(params=beta, bse=bse, alpha=alpha, llf=llf,
                     at_boundary=bool(res.x <= LOG_ALPHA_BOUNDS[0] + 1e-3),
                     iterations=state["it"] + it)


__all__ = ["fit_nb2", "nb2_loglik", "NegBinFit"]
