"""Newey–West (Bartlett-kernel HAC) covariance for several OLS equations at once.

For equations ``k = 1..K`` fitted on the same rows, the coefficient estimates are jointly
asymptotically normal with covariance ``B S B`` where ``B`` is block-diagonal with
``(X_k' X_k)^{-1}`` and ``S`` is the long-run covariance of the stacked scores
``u_t = [x_{1t} e_{1t}; …; x_{Kt} e_{Kt}]``, estimated with Bartlett weights
``1 - l / (L + 1)`` (Newey & West 1987, *Econometrica* 55, 703–708).  With a ``groups``
array the lagged products are summed within groups only (the panel form, as statsmodels'
``hac-panel``).  Each diagonal block equals the single-equation HAC covariance of
statsmodels (``cov_type="HAC"`` / ``"hac-panel"``, no small-sample correction).

Lag rules: ``"nw94"`` is ``floor(4 (T / 100) ** (2 / 9))``, the rule of thumb of Newey & West
(1994), *Review of Economic Studies* 61, 631–653; ``"andrews"`` is the AR(1) plug-in
bandwidth for the Bartlett kernel, ``1.1447 (alpha(1) T) ** (1 / 3)`` (Andrews 1991,
*Econometrica* 59, 817–858, eq. 6.2 and 6.4), which grows with the autocorrelation of the
scores and suits series sampled much faster than they change.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

LagRule = Literal["nw94", "andrews"]


def nw94_lags(t_len: float) -> int:
    """Newey & West (1994) rule of thumb ``floor(4 (T/100)^(2/9))`` for a series of length T."""
    return int(np.floor(4.0 * (max(t_len, 1.0) / 100.0) ** (2.0 / 9.0)))


def andrews_lags(scores: NDArray[np.float64], groups: NDArray[np.int64] | None = None) -> int:
    """Andrews (1991) AR(1) plug-in lag for the Bartlett kernel from the score series."""
    u = np.asarray(scores, dtype=float)
    u = u.reshape(len(u), -1)
    same = np.ones(len(u) - 1, dtype=bool) if groups is None else groups[1:] == groups[:-1]
    num = den = 0.0
    for a in range(u.shape[1]):
        x, y = u[:-1, a][same], u[1:, a][same]
        if x @ x <= 0:
            continue
        rho = float(np.clip((x @ y) / (x @ x), -0.97, 0.97))
        sig2 = float(np.var(y - rho * x))
        num += 4 * rho**2 * sig2**2 / ((1 - rho) ** 6 * (1 + rho) ** 2)
        den += sig2**2 / (1 - rho) ** 4
    if den <= 0:
        return 0
    t_len = len(u) if groups is None else len(u) / max(len(np.unique(groups)), 1)
    bandwidth = 1.1447 * (num / den * t_len) ** (1.0 / 3.0)
    return int(max(0, np.floor(bandwidth - 1.0)))  # weights 1 - l/(L+1): L = bandwidth - 1


def bread(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(X'X)^-1`` from the QR decomposition of ``X`` (stable for badly scaled columns)."""
    r = np.linalg.qr(x, mode="r")
    r_inv = np.linalg.pinv(r)
    return r_inv @ r_inv.T


def long_run_cov(u: NDArray[np.float64], lags: int,
                 groups: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """Bartlett-weighted long-run covariance ``Σ_t u_t u_t' + Σ_l w_l (Γ_l + Γ_l')``."""
    s = u.T @ u
    for lag in range(1, lags + 1):
        a, b = u[lag:], u[:-lag]
        if groups is not None:
            keep = groups[lag:] == groups[:-lag]
            a, b = a[keep], b[keep]
        gamma = a.T @ b
        s += (1.0 - lag / (lags + 1.0)) * (gamma + gamma.T)
    return s


def stacked_hac(designs: list[NDArray[np.float64]], residuals: list[NDArray[np.float64]],
                lags: int, groups: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """Joint HAC covariance of the coefficients of several OLS equations on the same rows."""
    scores = np.hstack([x * e[:, None] for x, e in zip(designs, residuals, strict=True)])
    breads = [bread(x) for x in designs]
    p = sum(b.shape[0] for b in breads)
    joint = np.zeros((p, p))
    k = 0
    for b in breads:
        joint[k:k + b.shape[0], k:k + b.shape[0]] = b
        k += b.shape[0]
    return joint @ long_run_cov(scores, lags, groups) @ joint


__all__ = ["nw94_lags", "andrews_lags", "bread", "long_run_cov", "stacked_hac", "LagRule"]
