"""Cox proportional-hazards regression, with delayed entry and time-varying covariates.

Own vectorized Newton–Raphson on the Breslow partial likelihood (Breslow 1974; Kalbfleisch &
Prentice 2002, *The Statistical Analysis of Failure Time Data*, 2nd ed., §4.2–4.3 and §6.4 for
the counting-process form).  Rows are ``(start, stop]`` intervals with an event flag at
``stop``; plain ``(duration, event)`` data is the special case ``start = entry or 0``.  At each
distinct event time ``tau`` the risk set is ``{i : start_i < tau <= stop_i}``: its sums of
``w = exp(x beta)``, ``w x`` and ``w x x'`` come from one sparse product that adds each row
where it leaves the risk set and subtracts it where it enters, and a reverse cumulative sum
over the distinct event times.

The proportional-hazards check uses scaled Schoenfeld residuals against transformed time with
the approximate score tests of Grambsch & Therneau (1994), *Biometrika* 81, 515–526 (the form
``cox.zph`` used before R survival 3.0, and that lifelines' ``proportional_hazard_test`` uses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import NDArray
from scipy import sparse, stats

from reliab._checks import Check, contains, finite, in_range, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._survival_input import check_conf_level
from reliab.models.nonparametric import km_curve, risk_table

TimeTransform = Literal["km", "rank", "identity", "log"]


@dataclass(frozen=True)
class _CoxData:
    """Rows sorted by stop time, with the sparse map from rows to risk sets."""

    x: NDArray[np.float64]            # (n, p) centred covariates, stop order
    design: NDArray[np.float64]       # (n, 1 + p + p(p+1)/2): 1, x, upper-triangle x_i x_j
    stop: NDArray[np.float64]
    start: NDArray[np.float64]
    event: NDArray[np.bool_]
    times: NDArray[np.float64]        # distinct event times, decreasing
    deaths: NDArray[np.float64]       # events per distinct time, same order
    leave_minus_enter: sparse.csr_matrix  # (K + 1, n): +1 where a row leaves, -1 where it enters
    event_time_index: NDArray[np.intp]  # for each event row, its row in the risk-set sums
    x_event_sum: NDArray[np.float64]


def _prepare(stop: NDArray[np.float64], start: NDArray[np.float64], event: NDArray[np.bool_],
             x: NDArray[np.float64]) -> _CoxData:
    """Sort by stop and build the row -> risk-set map.

    Row ``i`` is at risk at event times ``k`` with ``enter_i <= k < leave_i`` where
    ``enter_i = #(times <= start_i)`` and ``leave_i = #(times <= stop_i)``.  The risk-set sum
    at ``k`` of any row quantity ``a`` is ``sum_{m > k} (M a)_m`` with ``M`` holding +1 at
    ``(leave_i, i)`` and -1 at ``(enter_i, i)``: a reverse cumulative sum, exact for the small
    late risk sets.  ``M`` is stored with its rows in reverse order (row ``K - m``).
    """
    order = np.argsort(stop, kind="stable")
    stop, start, event, x = stop[order], start[order], event[order], x[order]
    x = x - x.mean(axis=0)
    times, deaths = np.unique(stop[event], return_counts=True)
    n, k = stop.size, times.size
    enter = np.searchsorted(times, start, side="right")
    leave = np.searchsorted(times, stop, side="right")
    rows = k - np.r_[leave, enter]  # reversed, so a forward cumsum sums late times first
    vals = np.r_[np.ones(n), -np.ones(n)]
    cols = np.r_[np.arange(n), np.arange(n)]
    mat = sparse.csr_matrix((vals, (rows, cols)), shape=(k + 1, n))
    iu, ju = np.triu_indices(x.shape[1])
    design = np.column_stack([np.ones(n), x, x[:, iu] * x[:, ju]])
    return _CoxData(x=x, design=design, stop=stop, start=start, event=event, times=times[::-1],
                    deaths=deaths[::-1].astype(float), leave_minus_enter=mat,
                    event_time_index=k - 1 - np.searchsorted(times, stop[event]),
                    x_event_sum=x[event].sum(axis=0))


def _risk_sums(cd: _CoxData, beta: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """Risk-set sums of w, w x and w x_i x_j (upper triangle) at each distinct event time.

    Weights are ``w = exp(x beta - m)``; ``m`` is returned so the likelihood can add it back.
    """
    eta = cd.x @ beta
    m = float(eta.max())
    w = np.exp(eta - m)
    net = cd.leave_minus_enter @ (w[:, None] * cd.design)
    # Rows of M are in reverse time order, so a running sum from the top gives, at row j, the
    # risk-set sums of event time K - 1 - j; ``deaths`` and ``event_time_index`` use that order.
    tail = np.add.accumulate(net, axis=0)[:-1]
    p = cd.x.shape[1]
    return np.array(m), eta, tail[:, 0], tail[:, 1:1 + p], tail[:, 1 + p:]


def _loglik_grad_hess(cd: _CoxData, beta: NDArray[np.float64]
                      ) -> tuple[float, NDArray[np.float64], NDArray[np.float64],
                                 NDArray[np.float64]]:
    """Log partial likelihood, score, Hessian and risk-set mean covariates S1/S0."""
    m, eta, s0, s1, s2_upper = _risk_sums(cd, beta)
    d = cd.deaths
    ll = float(eta[cd.event].sum() - d @ (np.log(s0) + float(m)))
    mean = s1 / s0[:, None]
    grad = cd.x_event_sum - d @ mean
    p = beta.size
    iu, ju = np.triu_indices(p)
    second = np.empty((p, p))
    second[iu, ju] = (d / s0) @ s2_upper
    second[ju, iu] = second[iu, ju]
    hess = -(second - (mean * d[:, None]).T @ mean)
    return ll, grad, hess, mean


@dataclass(frozen=True)
class _Solution:
    beta: NDArray[np.float64]
    ll: float
    ll_null: float
    hess: NDArray[np.float64]
    mean: NDArray[np.float64]
    iterations: int
    converged: bool


def _newton(cd: _CoxData, p: int, max_iter: int = 50) -> _Solution:
    """Newton–Raphson from beta = 0 with step halving when the likelihood falls."""
    beta = np.zeros(p)
    ll, grad, hess, mean = _loglik_grad_hess(cd, beta)
    ll0 = ll
    for it in range(1, max_iter + 1):
        step = np.linalg.solve(-hess, grad)
        for _ in range(30):
            new = beta + step
            ll_new, g_new, h_new, m_new = _loglik_grad_hess(cd, new)
            if np.isfinite(ll_new) and ll_new >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        beta, ll, grad, hess, mean = new, ll_new, g_new, h_new, m_new
        if np.max(np.abs(step)) < 1e-10:
            return _Solution(beta, ll, ll0, hess, mean, it, True)
    return _Solution(beta, ll, ll0, hess, mean, max_iter, False)


def _columns(df: pd.DataFrame, names: Sequence[str]) -> None:
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the data frame (has {list(df.columns)})")


def _check_rows(start: NDArray[np.float64], stop: NDArray[np.float64], event: NDArray[np.float64],
                x: NDArray[np.float64], covariates: Sequence[str]) -> None:
    checks = [
        (~np.isfinite(stop) | np.isnan(start) | np.isposinf(start),
         "row(s) with missing or infinite times"),
        (~np.isin(event, (0.0, 1.0)), "event value(s) not 0/1"),
        (stop < 0, "negative duration(s)"),
        (start >= stop, "row(s) with start (entry) not before stop (duration)"),
    ]
    for j, name in enumerate(covariates):
        checks.append((~np.isfinite(x[:, j]), f"missing/non-finite value(s) of {name!r}"))
    for mask, what in checks:
        if mask.any():
            raise ValueError(f"{int(mask.sum())} {what} (first at row position "
                             f"{int(np.flatnonzero(mask)[0])})")


def _check_ids(ids: NDArray, start: NDArray[np.float64], stop: NDArray[np.float64]) -> int:
    """Number of subjects; raises if one subject's intervals overlap."""
    codes, uniq = pd.factorize(ids)
    order = np.lexsort((start, codes))
    same = codes[order][1:] == codes[order][:-1]
    overlap = same & (start[order][1:] < stop[order][:-1])
    if overlap.any():
        pos = int(order[1:][overlap][0])
        raise ValueError(f"{int(overlap.sum())} interval(s) overlap an earlier interval of the "
                         f"same id (first at row position {pos}, id {ids[pos]!r})")
    return len(uniq)


@dataclass(frozen=True)
class CoxFit(ResultMixin):
    """Cox PH fit: hazard-ratio table, likelihoods and a proportional-hazards check."""

    table: pd.DataFrame = field(repr=False)
    covariates: tuple[str, ...]
    log_likelihood: float
    log_likelihood_null: float
    lr_statistic: float
    lr_p: float
    n: int
    n_subjects: int
    n_events: int
    conf_level: float
    ties: str
    iterations: int
    converged: bool
    cov: NDArray[np.float64] = field(repr=False)
    method: str = "Cox partial likelihood, Newton-Raphson; Wald intervals for hazard ratios"
    notes: tuple[str, ...] = ()
    _schoenfeld: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    _event_times: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)
    _km_at_events: NDArray[np.float64] | None = field(default=None, repr=False, compare=False)

    def summary(self) -> pd.DataFrame:
        """covariate, coef, se, hazard_ratio, hr_low, hr_high, z, p."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Coefficients and se finite; hazard ratios > 0 inside their intervals; p in [0, 1]."""
        tb = self.table
        return (finite("coef_se_hr_finite", tb[["coef", "se", "hr_low", "hr_high"]].to_numpy()),
                positive("hazard_ratio_positive", tb["hazard_ratio"]),
                contains("hr_in_interval", tb["hr_low"], tb["hazard_ratio"], tb["hr_high"]),
                in_range("p_in_unit_interval", tb["p"], 0, 1))

    def scaled_schoenfeld(self) -> pd.DataFrame:
        """Scaled Schoenfeld residuals ``d V s_k + beta`` per event (Grambsch & Therneau 1994)."""
        scaled = self.n_events * self._schoenfeld @ self.cov + self.table["coef"].to_numpy()
        out = pd.DataFrame(scaled, columns=list(self.covariates))
        out.insert(0, "time", self._event_times)
        return out

    def _transform(self, time_transform: TimeTransform) -> NDArray[np.float64]:
        t = self._event_times
        if time_transform == "km":
            return 1.0 - self._km_at_events
        if time_transform == "rank":
            return np.arange(1, t.size + 1, dtype=float)
        if time_transform == "identity":
            return t
        if time_transform == "log":
            return np.log(t)
        raise ValueError(f"time_transform must be 'km', 'rank', 'identity' or 'log', "
                         f"got {time_transform!r}")

    def check_proportional_hazards(self, time_transform: TimeTransform = "km") -> pd.DataFrame:
        """Grambsch–Therneau score tests of proportional hazards, per covariate and global.

        Returns a frame indexed by covariate plus ``"global"`` with columns test_statistic,
        df, p.  A small p suggests the covariate's effect changes with (transformed) time.
        """
        g = self._transform(time_transform)
        gc = g - g.mean()
        u = gc @ self._schoenfeld
        vu = self.cov @ u
        d, ss = self.n_events, float(gc @ gc)
        per = d * vu**2 / (np.diag(self.cov) * ss)
        glob = d * float(u @ vu) / ss
        stat = np.r_[per, glob]
        dof = np.r_[np.ones(per.size), per.size]
        return pd.DataFrame({"test_statistic": stat, "df": dof, "p": stats.chi2.sf(stat, dof)},
                            index=pd.Index([*self.covariates, "global"], name="covariate"))

    def plot(self, ax: Any = None) -> Figure:
        """Forest plot of hazard ratios with their intervals (log axis)."""
        tb = self.table
        fig, ax = new_figure(ax, (6, 0.5 * len(tb) + 1.5))
        y = np.arange(len(tb))[::-1]
        hr = tb["hazard_ratio"].to_numpy(float)  # (arrays: matplotlib calls float() on a 1-row Series)
        ax.errorbar(hr, y, xerr=[hr - tb["hr_low"].to_numpy(float), tb["hr_high"].to_numpy(float) - hr],
                    fmt="o", color="C0", capsize=3)
        ax.axvline(1.0, color="grey", lw=1, ls="--")
        ax.set_xscale("log")
        ax.set_yticks(y, tb["covariate"])
        ax.set_xlabel(f"hazard ratio ({self.conf_level:.0%} interval)")
        ax.set_title("Cox proportional hazards")
        return fig


def _singular(covariates: Sequence[str]) -> InsufficientDataError:
    return InsufficientDataError(
        f"the information matrix of {list(covariates)} is singular: a covariate is constant "
        "or collinear among those at risk at the event times")


def _covariance(sol: _Solution, covariates: Sequence[str]) -> NDArray[np.float64]:
    """Inverse information at the maximum, or InsufficientDataError when there is none: a
    singular information matrix, or a variance that is not finite and positive (monotone
    likelihood, the coefficient running off to infinity; Therneau & Grambsch 2000, §3.5)."""
    try:
        cov = np.linalg.inv(-sol.hess)
    except np.linalg.LinAlgError:
        raise _singular(covariates) from None
    var = np.diag(cov)
    bad = [c for c, v in zip(covariates, var, strict=True) if not (np.isfinite(v) and v > 0)]
    if bad:
        raise _unbounded(bad)
    return cov


def _unbounded(covariates: Sequence[str]) -> InsufficientDataError:
    return InsufficientDataError(
        f"the partial likelihood has no finite maximum in {list(covariates)} (monotone "
        "likelihood: the events and the rows at risk are separated by the covariate, so its "
        "hazard ratio is 0 or infinite); drop or merge the covariate")


def _hr_table(beta: NDArray[np.float64], cov: NDArray[np.float64], covariates: Sequence[str],
              level: float) -> pd.DataFrame:
    se = np.sqrt(np.diag(cov))
    z = beta / se
    q = float(stats.norm.ppf(0.5 + level / 2))
    return pd.DataFrame({"covariate": list(covariates), "coef": beta, "se": se,
                         "hazard_ratio": np.exp(beta), "hr_low": np.exp(beta - q * se),
                         "hr_high": np.exp(beta + q * se), "z": z, "p": 2 * stats.norm.sf(abs(z))})


def _km_at(cd: _CoxData) -> NDArray[np.float64]:
    """Kaplan–Meier (with delayed entry) at each event row's time, for the PH check."""
    entry = cd.start if np.any(cd.start > 0) else None
    rt = risk_table(cd.stop, cd.event.astype(np.intp), entry, 2)
    surv = km_curve(rt, 1.0)[0]
    return surv[np.searchsorted(rt.times, cd.stop[cd.event])]


def fit_cox(
    df: pd.DataFrame,
    *,
    duration: str | None = None,
    event: str,
    covariates: Sequence[str],
    entry: str | None = None,
    start: str | None = None,
    stop: str | None = None,
    id: str | None = None,  # noqa: A002 - the survival-data name of the column
    conf_level: float = 0.95,
    ties: Literal["breslow"] = "breslow",
) -> CoxFit:
    """Fit a Cox proportional-hazards model.

    Parameters
    ----------
    df
        One row per unit (``duration``, ``event``, optional ``entry``) or counting-process rows
        (``start``, ``stop``, ``event``) for time-varying covariates such as temperature.
    duration, event
        Column names of time to failure/censoring and of the 0/1 failure flag (at ``stop``).
    covariates
        Numeric covariate columns.
    entry
        Delayed-entry column (left truncation) for ``duration`` data.
    start, stop
        Interval columns for counting-process rows (``start < stop``); use instead of
        ``duration``.
    id
        Subject column for counting-process rows; used to count subjects and to reject
        overlapping intervals.
    conf_level
        Level of the hazard-ratio intervals.
    ties
        ``"breslow"`` (Breslow 1974), the only method implemented.

    Returns
    -------
    CoxFit

    References
    ----------
    Cox (1972), JRSS B 34, 187–220; Breslow (1974), Biometrics 30, 89–99; Kalbfleisch &
    Prentice (2002), §4.2, §6.4; Therneau & Grambsch (2000), *Modeling Survival Data*, ch. 3, 6.
    """
    level = check_conf_level(conf_level)
    if ties != "breslow":
        raise ValueError(f"ties must be 'breslow', got {ties!r}")
    if (duration is None) == (stop is None):
        raise ValueError("give either duration= or stop= (with start=), not both or neither")
    covariates = tuple(covariates)
    if not covariates:
        raise ValueError("covariates is empty; give at least one covariate column")
    t_col = duration if duration is not None else stop
    s_col = entry if duration is not None else start
    _columns(df, [t_col, event, *covariates] + [c for c in (s_col, id) if c is not None])
    t = df[t_col].to_numpy(dtype=float)
    s = df[s_col].to_numpy(dtype=float) if s_col is not None else np.full(t.size, -np.inf)
    ev = df[event].to_numpy(dtype=float)
    x = df[list(covariates)].to_numpy(dtype=float)
    _check_rows(s, t, ev, x, covariates)
    n_subjects = _check_ids(df[id].to_numpy(), s, t) if id is not None else len(df)
    n_events = int(ev.sum())
    if n_events < 1:
        raise InsufficientDataError(f"0 events among {len(df)} rows; a Cox fit needs events")
    cd = _prepare(t, s, ev.astype(bool), x)
    try:
        sol = _newton(cd, len(covariates))
    except np.linalg.LinAlgError:
        raise _singular(covariates) from None
    cov = _covariance(sol, covariates)
    resid = cd.x[cd.event] - sol.mean[cd.event_time_index]
    lr = 2.0 * (sol.ll - sol.ll_null)
    table = _hr_table(sol.beta, cov, covariates, level)
    hr = table[["hazard_ratio", "hr_low", "hr_high"]].to_numpy()
    off = [c for c, row in zip(covariates, hr, strict=True) if not np.all(np.isfinite(row) & (row > 0))]
    if off:  # the maximum lies so far out that the hazard ratio or its interval is 0 or infinite
        raise _unbounded(off)
    return CoxFit(table=table, covariates=covariates,
                  log_likelihood=sol.ll, log_likelihood_null=sol.ll_null, lr_statistic=lr,
                  lr_p=float(stats.chi2.sf(lr, len(covariates))), n=len(df),
                  n_subjects=n_subjects, n_events=n_events, conf_level=level, ties=ties,
                  iterations=sol.iterations, converged=sol.converged, cov=cov,
                  _schoenfeld=resid,
                  _event_times=cd.stop[cd.event], _km_at_events=_km_at(cd))
