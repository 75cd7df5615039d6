"""Fine–Gray proportional subdistribution hazards regression for one cause among competing risks.

Fine, J. P. and Gray, R. J. (1999), A proportional hazards model for the subdistribution of a
competing risk, JASA 94, 496–509.  At a failure time ``t`` of the cause of interest the risk set
holds every unit still under observation (weight 1) and every unit that failed from another
cause earlier, weighted by ``G(t-) / G(T_j-)`` with ``G`` the Kaplan–Meier curve of the
censoring times (inverse probability of censoring weights).  Breslow's convention for ties.
The partial likelihood is maximised by Newton–Raphson; the variance is the sandwich
``H^-1 (sum_i (eta_i + psi_i)^2) H^-1`` of §4 of the paper, ``psi_i`` accounting for the
estimated censoring weights.  The quantities of R's ``cmprsk::crr``.

The risk-set sums, and the sums over failure times of the variance, are cumulative sums over
the time-sorted units, so a fit is O(n p^2) per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from reliab._checks import Check, contains, finite
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._survival_input import check_conf_level


@dataclass(frozen=True)
class FineGrayFit(ResultMixin):
    """Subdistribution hazard ratios of one cause: coef, se, z, p, hazard ratio and interval."""

    table: pd.DataFrame = field(repr=False)
    cause: Any
    loglik: float
    n: int
    n_events: int
    conf_level: float
    covariance: NDArray[np.float64] = field(repr=False)
    method: str = "Fine-Gray subdistribution hazards; Breslow ties; sandwich variance"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per covariate: coef, se, z, p_value, hazard_ratio, low, high (of the ratio)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Finite coefficients and SEs; each ratio inside its interval."""
        tb = self.table
        return (finite("coef_finite", tb["coef"]), finite("se_finite", tb["se"]),
                contains("ratio_in_interval", tb["low"], tb["hazard_ratio"], tb["high"]))

    def plot(self, ax: Any = None) -> Figure:
        """Subdistribution hazard ratios with their intervals (log scale)."""
        fig, ax = new_figure(ax)
        tb = self.table
        y = np.arange(len(tb))
        hr, lo, hi = (tb[c].to_numpy(dtype=float) for c in ("hazard_ratio", "low", "high"))
        ax.errorbar(hr, y, xerr=[hr - lo, hi - hr], fmt="o")
        ax.axvline(1.0, color="grey", lw=1)
        ax.set_xscale("log")
        ax.set_yticks(y, list(tb.index))
        ax.set_xlabel(f"subdistribution hazard ratio for cause {self.cause}")
        ax.set_title("Fine-Gray regression")
        return fig


def _censoring_left(t: NDArray[np.float64], cens: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Kaplan–Meier curve of the censoring times just before each (sorted) time ``t``."""
    first = np.r_[True, t[1:] != t[:-1]]
    start = np.flatnonzero(first)
    at_risk = t.size - start
    c = np.add.reduceat(cens.astype(float), start)
    g = np.cumprod(1.0 - c / at_risk)
    g_left = np.r_[1.0, g[:-1]]
    return g_left[np.cumsum(first) - 1]


class _Sums:
    """Weighted risk-set sums S0, S1, S2 at each unit's time (units sorted by time)."""

    def __init__(self, t: NDArray[np.float64], other: NDArray[np.bool_],
                 g: NDArray[np.float64]) -> None:
        self.first = np.r_[True, t[1:] != t[:-1]]
        self.start = np.flatnonzero(self.first)
        self.row = np.cumsum(self.first) - 1
        self.other, self.g = other, g
        self.inv_g = np.where(other, 1.0 / g, 0.0)

    def at(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``sum_{T_j >= t} v_j + G(t-) sum_{T_j < t, other cause} v_j / G(T_j-)`` per unit."""
        tail = np.cumsum(v[::-1], axis=0)[::-1][self.start][self.row]
        before = np.cumsum(v * self.inv_g.reshape(-1, *([1] * (v.ndim - 1))), axis=0)
        before = np.concatenate([np.zeros((1, *v.shape[1:])), before])[self.start][self.row]
        return tail + self.g.reshape(-1, *([1] * (v.ndim - 1))) * before


def _score(beta: NDArray[np.float64], x: NDArray[np.float64], ev: NDArray[np.bool_],
           sums: _Sums) -> tuple[float, NDArray[np.float64], NDArray[np.float64], tuple]:
    eta = x @ beta
    e = np.exp(eta)
    s0 = sums.at(e)
    s1 = sums.at(e[:, None] * x)
    s2 = sums.at(e[:, None, None] * x[:, :, None] * x[:, None, :])
    zbar = s1[ev] / s0[ev, None]
    loglik = float(np.sum(eta[ev] - np.log(s0[ev])))
    u = np.sum(x[ev] - zbar, axis=0)
    h = np.sum(s2[ev] / s0[ev, None, None] - zbar[:, :, None] * zbar[:, None, :], axis=0)
    return loglik, u, h, (e, s0, zbar)


def _cum(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cumulative sums along axis 0 with a leading zero row: ``out[j] = sum(v[:j])``."""
    return np.concatenate([np.zeros((1, *v.shape[1:])), np.cumsum(v, axis=0)])


def _meat(x: NDArray[np.float64], t: NDArray[np.float64], ev: NDArray[np.bool_],
          other: NDArray[np.bool_], cens: NDArray[np.bool_], g: NDArray[np.float64],
          e: NDArray[np.float64], s0: NDArray[np.float64], zbar: NDArray[np.float64]
          ) -> NDArray[np.float64]:
    """``sum_i (eta_i + psi_i)(eta_i + psi_i)'`` of Fine & Gray (1999, §4).

    ``eta_i`` is unit i's score residual; ``psi_i`` the term from estimating the censoring
    weights, ``int q(u) / pi(u) dM_i^c(u)``.  Every sum over failure times is a cumulative
    sum over the sorted failure times (``tf``), looked up with ``searchsorted``.
    """
    tf, dlam, gk = t[ev], 1.0 / s0[ev], g[ev]
    a_cum, b_cum = _cum(dlam), _cum(dlam[:, None] * zbar)
    c_cum, d_cum = _cum(gk * dlam), _cum((gk * dlam)[:, None] * zbar)
    upto = np.searchsorted(tf, t, side="right")  # failures with t_k <= T_i
    eta = np.where(ev[:, None], x, 0.0)
    eta[ev] -= zbar
    eta -= e[:, None] * (x * a_cum[upto][:, None] - b_cum[upto])
    after_c = c_cum[-1] - c_cum[upto]
    after_d = d_cum[-1] - d_cum[upto]
    ratio = np.where(other, e / g, 0.0)
    eta -= ratio[:, None] * (x * after_c[:, None] - after_d)
    # q(u) at each distinct censoring time u: other-cause units with T_j < u, failures t_k >= u
    u, d_c = np.unique(t[cens], return_counts=True)
    k_from = np.searchsorted(tf, u, side="left")
    cu, du = c_cum[-1] - c_cum[k_from], d_cum[-1] - d_cum[k_from]
    p0, p1 = _cum(ratio), _cum(ratio[:, None] * x)
    j_below = np.searchsorted(t, u, side="left")
    q = cu[:, None] * p1[j_below] - du * p0[j_below][:, None]
    y = (t.size - j_below).astype(float)
    psi = np.zeros_like(x)
    own = np.searchsorted(u, t[cens])
    psi[cens] = (q / y[:, None])[own]
    comp = _cum(q * (d_c / y**2)[:, None])
    psi -= comp[np.searchsorted(u, t, side="right")]
    total = eta + psi
    return total.T @ total


def fit_fine_gray(
    durations: ArrayLike,
    event_type: ArrayLike,
    covariates: ArrayLike | pd.DataFrame,
    *,
    cause: Any,
    censored: Any = 0,
    conf_level: float = 0.95,
    max_iter: int = 50,
    tol: float = 1e-10,
) -> FineGrayFit:
    """Fine–Gray regression of the subdistribution hazard of ``cause`` on covariates.

    Parameters
    ----------
    durations
        Time of the first event or of censoring per unit.
    event_type
        Cause per unit; ``censored`` marks censoring, any other value a competing cause.
    covariates
        Numeric matrix or frame, one row per unit (column names label the result).
    cause
        The cause of interest.
    conf_level
        Level of the Wald intervals of the hazard ratios.

    Returns
    -------
    FineGrayFit
        ``table`` (coef, se, z, p_value, hazard_ratio, low, high) indexed by covariate,
        ``loglik`` (the log partial likelihood at the estimate) and ``covariance``.
    """
    level = check_conf_level(conf_level)
    frame = pd.DataFrame(covariates)
    names = [str(c) for c in frame.columns] if isinstance(covariates, pd.DataFrame) else \
        [f"x{i + 1}" for i in range(frame.shape[1])]
    x0 = frame.to_numpy(dtype=float)
    t0 = np.asarray(durations, dtype=float)
    kind = pd.Series(np.asarray(event_type, dtype=object))
    if not (t0.size == len(kind) == x0.shape[0]):
        raise ValueError(f"durations ({t0.size}), event_type ({len(kind)}) and covariates "
                         f"({x0.shape[0]}) differ in length")
    for what, bad in (("durations", ~np.isfinite(t0) | (t0 < 0)),
                      ("covariates", ~np.isfinite(x0).all(axis=1))):
        if bad.any():
            raise ValueError(f"{int(bad.sum())} unit(s) with missing, infinite or negative "
                             f"{what}; first at row {int(np.flatnonzero(bad)[0])}")
    order = np.argsort(t0, kind="stable")
    t, x = t0[order], x0[order]
    kind = kind.iloc[order].reset_index(drop=True)
    ev = (kind == cause).to_numpy()
    cens = (kind == censored).to_numpy()
    other = ~ev & ~cens
    if not ev.any():
        raise InsufficientDataError(f"no event of cause {cause!r} among {t.size} units")
    g = _censoring_left(t, cens)
    sums = _Sums(t, other, g)
    beta = np.zeros(x.shape[1])
    loglik, u, h, _ = _score(beta, x, ev, sums)
    for _ in range(max_iter):
        step = np.linalg.solve(h, u)
        beta = beta + step
        loglik, u, h, _ = _score(beta, x, ev, sums)
        if np.max(np.abs(step)) < tol:
            break
    else:
        raise InsufficientDataError(
            f"Newton-Raphson did not converge in {max_iter} iterations (coefficients "
            f"{np.round(beta, 3).tolist()}): a covariate may separate the events, so that the "
            "partial likelihood has no finite maximum (monotone likelihood)")
    _, _, h, (e, s0, zbar) = _score(beta, x, ev, sums)
    hinv = np.linalg.inv(h)
    cov = hinv @ _meat(x, t, ev, other, cens, g, e, s0, zbar) @ hinv
    se = np.sqrt(np.diag(cov))
    z = float(stats.norm.ppf(0.5 + level / 2))
    table = pd.DataFrame({"coef": beta, "se": se, "z": beta / se,
                          "p_value": 2 * stats.norm.sf(np.abs(beta / se)),
                          "hazard_ratio": np.exp(beta), "low": np.exp(beta - z * se),
                          "high": np.exp(beta + z * se)}, index=pd.Index(names, name="covariate"))
    return FineGrayFit(table=table, cause=cause, loglik=loglik, n=int(t.size),
                       n_events=int(ev.sum()), conf_level=level, covariance=cov)


__all__ = ["FineGrayFit", "fit_fine_gray"]
