"""Do heat and power swings cause failures?  Poisson and negative-binomial GLMs of node-windows.

Failure counts ``y_i`` of node-windows with exposure ``t_i`` (node-hours at risk) follow
``log E[y_i] = log t_i + x_i'β``; ``exp(β_j)`` is the incidence-rate ratio (IRR) of covariate
``j`` per unit (e.g. per °C of mean GPU temperature, per power swing, per hour above a
temperature threshold).  The Poisson model is fitted with statsmodels' ``GLM`` (IRLS;
McCullagh & Nelder 1989, ch. 6), the NB2 negative binomial by maximum likelihood of β and α
(profile likelihood, :mod:`._negbin`; Cameron & Trivedi 2013, *Regression Analysis of
Count Data*, 2nd ed., §3.3).  Overdispersion is tested with the
regression test of Cameron & Trivedi (1990, *J. Econometrics* 46, 347–364): OLS without intercept of
``((y − μ)² − y) / μ`` on ``μ``; under Poisson its slope is 0, under NB2 it is α.  The
likelihood-ratio test of α = 0 is reported too, with the boundary-corrected p-value
(half a χ²₁ tail; Self & Liang 1987).

At fleet scale the rows are first collapsed to covariate cells
(:func:`~reliab.models.environment.cells.aggregate_cells`); the Poisson cell fit equals the
row fit exactly.  For a Cox model with time-varying temperature use
:func:`reliab.windows.counting_process_rows` and :func:`reliab.fit_cox`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from reliab._checks import Check, contains, finite, in_range, positive
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models.environment._negbin import NegBinFit, fit_nb2
from reliab.models.environment.cells import aggregate_cells

Family = Literal["poisson", "negbin", "auto"]


@dataclass(frozen=True)
class FailureGLMFit(ResultMixin):
    """Incidence-rate ratios of failures per covariate unit, with the overdispersion checks."""

    report_section = "environment"  # placement in the report (reliab.report.catalog)

    table: pd.DataFrame = field(repr=False)
    family: str
    covariates: tuple[str, ...]
    n: int
    n_cells: int | None
    events: float
    exposure: float
    alpha: float
    overdispersion_stat: float
    overdispersion_p: float
    lr_alpha_p: float
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    backend: Any = field(default=None, repr=False, compare=False)

    def summary(self) -> pd.DataFrame:
        """One row per model and term: estimate, std_error, irr with interval, z, p_value;
        ``chosen`` marks the model the family choice kept."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Estimates finite; rate ratios > 0 inside their intervals; p in [0, 1]."""
        t = self.table
        return (finite("estimates_finite", t[["estimate", "std_error"]].to_numpy()),
                positive("irr_positive", t["irr"]),
                contains("irr_in_interval", t["irr_low"], t["irr"], t["irr_high"]),
                in_range("p_in_unit_interval", t["p_value"], 0, 1))

    def irr(self, term: str, model: str | None = None) -> pd.Series:
        """The row of ``term`` in the chosen model (or in ``model``)."""
        m = model or self.family
        rows = self.table[(self.table["term"] == term) & (self.table["model"] == m)]
        if rows.empty:
            raise KeyError(f"no term {term!r} in model {m!r}")
        return rows.iloc[0]

    def plot(self, ax: Any = None) -> Any:
        """Forest plot of incidence-rate ratios with their intervals (log axis)."""
        from reliab.models.environment._figures import irr_forest_figure

        return irr_forest_figure(self, ax=ax)


def overdispersion_test(y: np.ndarray, mu: np.ndarray) -> tuple[float, float, float]:
    """Cameron–Trivedi (1990) regression test of Poisson against NB2.

    Returns ``(alpha_hat, t_statistic, one_sided_p)`` of the OLS slope without intercept of
    ``((y − μ)² − y) / μ`` on ``μ``.
    """
    y, mu = np.asarray(y, dtype=float), np.asarray(mu, dtype=float)
    z = ((y - mu) ** 2 - y) / mu
    sxx = float(mu @ mu)
    a = float(mu @ z) / sxx
    resid = z - a * mu
    s2 = float(resid @ resid) / max(len(y) - 1, 1)
    t = a / np.sqrt(s2 / sxx) if s2 > 0 else np.nan
    return a, float(t), float(stats.norm.sf(t)) if np.isfinite(t) else np.nan


def _table(model: str, names: list[str], params: np.ndarray, bse: np.ndarray, level: float
           ) -> pd.DataFrame:
    q = float(stats.norm.ppf(0.5 + level / 2))
    z = params / bse
    return pd.DataFrame({"model": model, "term": names, "estimate": params, "std_error": bse,
                         "irr": np.exp(params), "irr_low": np.exp(params - q * bse),
                         "irr_high": np.exp(params + q * bse), "z": z,
                         "p_value": 2 * stats.norm.sf(np.abs(z))})


def _design(frame: pd.DataFrame, covs: list[str], count: str, exposure: str
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Design matrix, counts and exposures of the usable rows, and the mask of those rows."""
    missing = [c for c in [*covs, count, exposure] if c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the windows (has {list(frame.columns)})")
    x = frame[covs].to_numpy(dtype=float)
    y = frame[count].to_numpy(dtype=float)
    e = frame[exposure].to_numpy(dtype=float)
    ok = np.isfinite(x).all(axis=1) & np.isfinite(y) & np.isfinite(e) & (e > 0)
    if (y < 0).any():
        raise ValueError(f"{count!r} has negative values")
    return np.column_stack([np.ones(int(ok.sum())), x[ok]]), y[ok], e[ok], ok


def fit_failure_glm(
    windows: pd.DataFrame,
    covariates: Sequence[str],
    *,
    count: str = "failures",
    exposure: str = "hours",
    family: Family = "auto",
    cells: bool = False,
    bins: Mapping[str, float] | None = None,
    cluster: str | None = None,
    conf_level: float = 0.95,
) -> FailureGLMFit:
    """Poisson / negative-binomial regression of failure counts with a log-exposure offset.

    Parameters
    ----------
    windows : pandas.DataFrame
        One row per node-window (e.g. :func:`reliab.windows.telemetry_windows` with
        :func:`reliab.windows.count_events`), or covariate cells.
    covariates : sequence of str
        Numeric columns: mean/max temperature, hours above a threshold, power-swing count,
        load.  IRRs are per unit of each.
    count, exposure : str
        Failure count and time at risk (e.g. node-hours) columns.
    family : {"poisson", "negbin", "auto"}
        Model reported as chosen; ``"auto"`` fits both and keeps the negative binomial when
        the Cameron–Trivedi test rejects equidispersion at ``1 - conf_level``.
    cells : bool
        Collapse rows to covariate cells first (:func:`aggregate_cells`, with ``bins``); the
        Poisson fit is unchanged (exactly, on binned covariates), and only Poisson is fitted.
    bins : mapping, optional
        Bin widths of continuous covariates for ``cells=True``.
    cluster : str, optional
        Column of the node id: cluster-robust (sandwich) standard errors by node for the
        Poisson model, for repeated windows of one node (not with ``cells``).
    conf_level : float
        Level of the Wald intervals of the IRRs.

    Returns
    -------
    FailureGLMFit

    Raises
    ------
    InsufficientDataError
        Fewer events than parameters + 2.
    """
    import statsmodels.api as sm

    if not 0 < conf_level < 1:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if family not in ("poisson", "negbin", "auto"):
        raise ValueError(f"family must be 'poisson', 'negbin' or 'auto', got {family!r}")
    covs = list(covariates)
    if not covs:
        raise ValueError("covariates is empty; give at least one column")
    if cells and cluster is not None:
        raise ValueError("cluster= needs the rows; it cannot be combined with cells=True")
    if cells and family == "negbin":
        raise ValueError("family='negbin' needs the rows (NB2 does not aggregate to cells)")
    notes: list[str] = []
    n_rows, n_cells, data = len(windows), None, windows
    if cells:
        data = aggregate_cells(windows, covs, count=count, exposure=exposure, bins=bins)
        n_cells = len(data)
        notes.append(f"{n_rows:,} rows collapsed to {n_cells:,} covariate cells"
                     + (f" (bins {dict(bins)})" if bins else ""))
    x, y, e, usable = _design(data, covs, count, exposure)
    dropped = int((~usable).sum())
    if dropped:
        notes.append(f"{dropped} row(s) with a missing value or exposure <= 0 left out")
    names = ["intercept", *covs]
    if y.sum() < len(names) + 2:
        raise InsufficientDataError(f"{y.sum():g} event(s) for {len(names)} parameters; "
                                    f"need at least {len(names) + 2}")
    if y.sum() < 10 * len(covs):
        notes.append(f"{y.sum():g} events for {len(covs)} covariate(s): fewer than 10 per "
                     "covariate, Wald intervals may be poor")
    glm = sm.GLM(y, x, family=sm.families.Poisson(), exposure=e)
    if cluster is not None:
        if cluster not in windows.columns:
            raise ValueError(f"cluster column {cluster!r} not in the windows")
        groups = pd.factorize(windows[cluster].to_numpy()[usable])[0]
        pois = glm.fit(cov_type="cluster", cov_kwds={"groups": groups})
        notes.append(f"Poisson errors cluster-robust by {cluster!r} ({groups.max() + 1} groups)")
    else:
        pois = glm.fit()
    a_ct, t_ct, p_ct = overdispersion_test(y, np.asarray(pois.mu))
    tables = [_table("poisson", names, np.asarray(pois.params), np.asarray(pois.bse), conf_level)]
    alpha, lr_p, backend = np.nan, np.nan, {"poisson": pois}
    if not cells:
        nb = _fit_negbin(y, x, e, np.asarray(pois.params), notes)
        if nb is not None:
            alpha = nb.alpha
            lr = max(2 * (nb.llf - float(pois.llf)), 0.0)
            lr_p = 0.5 * float(stats.chi2.sf(lr, 1))  # boundary: Self & Liang (1987)
            tables.append(_table("negbin", names, nb.params, nb.bse, conf_level))
            backend["negbin"] = nb
    chosen = family
    if family == "auto":
        chosen = "negbin" if (p_ct < 1 - conf_level and "negbin" in backend) else "poisson"
        notes.append(f"family chosen: {chosen} (Cameron-Trivedi p = {p_ct:.3g})")
    elif family == "negbin" and "negbin" not in backend:
        raise InsufficientDataError("the negative-binomial fit did not converge")
    table = pd.concat(tables, ignore_index=True)
    table["chosen"] = table["model"] == chosen
    return FailureGLMFit(
        table=table, family=chosen, covariates=tuple(covs), n=n_rows, n_cells=n_cells,
        events=float(y.sum()), exposure=float(e.sum()), alpha=alpha, overdispersion_stat=t_ct,
        overdispersion_p=p_ct, lr_alpha_p=lr_p, conf_level=conf_level,
        method="GLM with log-exposure offset (statsmodels): Poisson IRLS"
               + ("" if cells else " and NB2 maximum likelihood")
               + "; Wald intervals; Cameron-Trivedi (1990) overdispersion test",
        notes=tuple(notes), backend=backend)


def _fit_negbin(y: np.ndarray, x: np.ndarray, e: np.ndarray, start: np.ndarray,
                notes: list[str]) -> NegBinFit | None:
    """NB2 by profile likelihood; None (with a note) when the information matrix is singular."""
    try:
        nb = fit_nb2(y, x, e, start, poisson_start=True)
    except np.linalg.LinAlgError as exc:
        notes.append(f"negative binomial not fitted ({exc})")
        return None
    if nb.at_boundary:
        notes.append("negative binomial: alpha at its lower bound (no overdispersion); "
                     "its estimates equal the Poisson ones")
    return nb


__all__ = ["fit_failure_glm", "FailureGLMFit", "overdispersion_test"]
