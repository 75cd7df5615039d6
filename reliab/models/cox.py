"""Cox proportional-hazards regression: Efron or Breslow ties, strata, robust (cluster) variance,
case weights, offsets, delayed entry and time-varying covariates.

Own vectorised Newton–Raphson on the partial likelihood (Cox 1972; Efron 1977; Breslow 1974;
Kalbfleisch & Prentice 2002, *The Statistical Analysis of Failure Time Data*, 2nd ed., §4.2–4.3,
§6.4; Therneau & Grambsch 2000, *Modeling Survival Data*, ch. 3–7); the likelihood machinery is
in :mod:`._cox_core`, residuals and the proportional-hazards test in :mod:`._cox_resid`.

The proportional-hazards check is by default the score test of R survival >= 3.0
``cox.zph`` (time-varying coefficient ``beta + gamma g(t)``, test of ``gamma = 0``); the 1994
approximation of Grambsch & Therneau (*Biometrika* 81, 515–526; R survival < 3.0 and lifelines'
``proportional_hazard_test``) stays available as ``version="1994"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import NDArray
from scipy import stats

from reliab._checks import Check, contains, finite, in_range, positive
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models import _cox_core as core
from reliab.models import _cox_frailty as _frailty
from reliab.models import _cox_input as inp
from reliab.models import _cox_resid as res
from reliab.models._cox_concord import concordance as _concordance
from reliab.models._survival_input import check_conf_level

TimeTransform = Literal["km", "rank", "identity", "log"]
Residual = Literal["martingale", "deviance", "score", "dfbeta", "schoenfeld", "scaled_schoenfeld"]


@dataclass(frozen=True)
class CoxFit(ResultMixin):
    """Cox PH fit: hazard-ratio table, likelihoods, residuals, baseline hazard, PH check."""

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
    naive_cov: NDArray[np.float64] = field(repr=False)
    strata: tuple[str, ...] = ()
    robust: bool = False
    method: str = "Cox partial likelihood, Newton-Raphson; Wald intervals for hazard ratios"
    notes: tuple[str, ...] = ()
    _cd: Any = field(default=None, repr=False, compare=False)
    _steps: Any = field(default=None, repr=False, compare=False)
    _strata_levels: Any = field(default=None, repr=False, compare=False)
    frailty_theta: float | None = None
    marginal_log_likelihood: float | None = None
    frailty_effects: pd.DataFrame | None = field(default=None, repr=False)

    def summary(self) -> pd.DataFrame:
        """covariate, coef, se, [robust_se,] hazard_ratio, hr_low, hr_high, z, p."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Coefficients and se finite; hazard ratios > 0 inside their intervals; p in [0, 1]."""
        tb = self.table
        return (finite("coef_se_hr_finite", tb[["coef", "se", "hr_low", "hr_high"]].to_numpy()),
                positive("hazard_ratio_positive", tb["hazard_ratio"]),
                contains("hr_in_interval", tb["hr_low"], tb["hazard_ratio"], tb["hr_high"]),
                in_range("p_in_unit_interval", tb["p"], 0, 1))

    @property
    def coef(self) -> NDArray[np.float64]:
        return self.table["coef"].to_numpy()

    def _keysums(self) -> res.KeySums:
        if self.frailty_theta is not None:
            raise NotImplementedError("residuals, baseline hazard, prediction and the PH test "
                                      "are not implemented for a frailty fit")
        return res.key_sums(self._cd, self._steps)

    def _unsort(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.empty_like(v)
        out[self._cd.order] = v
        return out

    def residuals(self, kind: Residual = "martingale") -> pd.DataFrame | NDArray[np.float64]:
        """Residuals as R ``residuals.coxph``: ``"martingale"``, ``"deviance"`` (one per input
        row, input order), ``"score"``, ``"dfbeta"`` (rows x covariates), ``"schoenfeld"`` and
        ``"scaled_schoenfeld"`` (one per event, sorted by stratum and time, with ``time``)."""
        cd, ks = self._cd, self._keysums()
        if kind in ("martingale", "deviance"):
            m = res.martingale(cd, self._steps, ks)
            return self._unsort(m if kind == "martingale" else res.deviance(m, cd.event))
        if kind in ("score", "dfbeta"):
            sc = res.score(cd, self._steps, ks)
            out = sc if kind == "score" else sc @ self.naive_cov
            return pd.DataFrame(self._unsort(out), columns=list(self.covariates))
        if kind in ("schoenfeld", "scaled_schoenfeld"):
            sch = res.schoenfeld(cd, ks)
            if kind == "scaled_schoenfeld":
                sch = self.n_events * sch @ self.naive_cov + self.coef
            out = pd.DataFrame(sch, columns=list(self.covariates))
            out.insert(0, "time", cd.stop[cd.event])
            return out
        raise ValueError(f"kind must be one of {Residual.__args__}, got {kind!r}")

    def scaled_schoenfeld(self) -> pd.DataFrame:
        """Scaled Schoenfeld residuals ``d V s_k + beta`` per event (Grambsch & Therneau 1994)."""
        return self.residuals("scaled_schoenfeld")  # type: ignore[return-value]

    def baseline_hazard(self, centered: bool = False) -> pd.DataFrame:
        """Cumulative baseline hazard at each event time per stratum, covariates 0 (R
        ``basehaz(fit, centered = FALSE)``) or at their means (``centered = True``); Efron fits
        use the Efron-adjusted increments of R ``survfit.coxph`` (Therneau & Grambsch §10.2)."""
        cd, ks = self._cd, self._keysums()
        scale = 0.0 if centered else -float(cd.means @ self.coef)
        inc = ks.hazard * np.exp(scale - self._steps.shift)
        cum = np.empty_like(inc)
        for s in np.unique(cd.key_stratum):
            block = cd.key_stratum == s
            cum[block] = np.cumsum(inc[block])
        out = pd.DataFrame({"time": cd.key_time, "cumulative_hazard": cum})
        if self.strata:
            out.insert(0, "stratum", self._strata_levels[cd.key_stratum])
        return out

    def predict_survival(self, new: pd.DataFrame) -> pd.DataFrame:
        """Survival ``exp(-H0(t) exp(x beta))`` of each row of ``new`` at the event times of its
        stratum (R ``survfit(fit, newdata)``): columns row, [stratum,] time, cumulative_hazard,
        survival."""
        inp.columns(new, list(self.covariates) + list(self.strata))
        base = self.baseline_hazard()
        lp = new[list(self.covariates)].to_numpy(float) @ self.coef
        parts = []
        for i, row_lp in enumerate(lp):
            b = base
            if self.strata:
                level = tuple(new.iloc[i][list(self.strata)])
                b = base[base["stratum"] == (level if len(level) > 1 else level[0])]
            h = b["cumulative_hazard"].to_numpy() * np.exp(row_lp)
            parts.append(b.assign(row=i, cumulative_hazard=h, survival=np.exp(-h)))
        out = pd.concat(parts, ignore_index=True)
        return out[["row", *out.columns.drop("row")]]

    def concordance(self) -> float:
        """Harrell's concordance of the linear predictor (R ``concordance(fit)``)."""
        return _concordance(self._cd, self._steps.eta)

    def check_proportional_hazards(self, time_transform: TimeTransform = "km",
                                   version: Literal["survival3", "1994"] = "survival3"
                                   ) -> pd.DataFrame:
        """Tests of proportional hazards, per covariate and global (index ``"global"``;
        columns test_statistic, df, p).  ``version="survival3"``: the score test of R survival
        >= 3.0 ``cox.zph``; ``"1994"``: the approximation of Grambsch & Therneau (1994) used
        by R survival < 3.0 and lifelines.  ``time_transform`` as in ``cox.zph`` ("km" the
        left-continuous Kaplan–Meier of survival >= 3.0; the 1994 form uses the right limit)."""
        cd, ks = self._cd, self._keysums()
        if version == "survival3":
            g = self._transform(time_transform, left=True)
            stat, dof = res.zph(cd, self._steps, ks, g, self.covariates)
        elif version == "1994":
            gc = self._transform(time_transform, left=False)
            gc = gc - gc.mean()
            sch = res.schoenfeld(cd, ks)
            u = gc @ sch
            vu = self.naive_cov @ u
            d, ss = self.n_events, float(gc @ gc)
            per = d * vu**2 / (np.diag(self.naive_cov) * ss)
            stat = np.r_[per, d * float(u @ vu) / ss]
            dof = np.r_[np.ones(per.size), per.size]
        else:
            raise ValueError(f"version must be 'survival3' or '1994', got {version!r}")
        return pd.DataFrame({"test_statistic": stat, "df": dof, "p": stats.chi2.sf(stat, dof)},
                            index=pd.Index([*self.covariates, "global"], name="covariate"))

    def _transform(self, time_transform: TimeTransform, left: bool) -> NDArray[np.float64]:
        cd = self._cd
        t = cd.stop[cd.event]
        if time_transform == "km":
            return 1.0 - res.km_at_events(cd, left)
        if time_transform == "rank":
            if left:  # R >= 3.0: rank(times) over all rows
                return stats.rankdata(cd.stop)[cd.event]
            return np.arange(1, t.size + 1, dtype=float)
        if time_transform == "identity":
            return t
        if time_transform == "log":
            return np.log(t)
        raise ValueError(f"time_transform must be 'km', 'rank', 'identity' or 'log', "
                         f"got {time_transform!r}")

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


def _covariance(sol: core.Solution, covariates: Sequence[str]) -> NDArray[np.float64]:
    """Inverse information at the maximum, or InsufficientDataError when there is none: a
    singular information matrix, or a variance that is not finite and positive (monotone
    likelihood, the coefficient running off to infinity; Therneau & Grambsch 2000, §3.5)."""
    try:
        cov = np.linalg.inv(-sol.hess)
    except np.linalg.LinAlgError:
        if not sol.converged:  # the information vanished while a coefficient ran off
            raise _unbounded(list(covariates)) from None
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
    ties: Literal["efron", "breslow"] = "efron",
    strata: str | Sequence[str] | None = None,
    cluster: str | None = None,
    robust: bool | None = None,
    weights: str | None = None,
    offset: str | None = None,
    frailty: str | None = None,
    frailty_theta: float | None = None,
) -> CoxFit:
    """Fit a Cox proportional-hazards model (R ``coxph``).

    Parameters
    ----------
    df
        One row per unit (``duration``, ``event``, optional ``entry``) or counting-process rows
        (``start``, ``stop``, ``event``) for time-varying covariates and recurrent events.
    duration, event
        Column names of time to failure/censoring and of the 0/1 failure flag (at ``stop``).
    covariates
        Numeric covariate columns (dummy-code categories).
    entry
        Delayed-entry column (left truncation) for ``duration`` data.
    start, stop
        Interval columns for counting-process rows (``start < stop``); use instead of
        ``duration``.
    id
        Subject column for counting-process rows; counts subjects, rejects overlapping
        intervals.
    conf_level
        Level of the hazard-ratio intervals.
    ties
        ``"efron"`` (Efron 1977; the default, as R and lifelines) or ``"breslow"`` (1974).
    strata
        Column(s) whose levels get separate baseline hazards (R ``strata()``).
    cluster
        Column of correlated groups (unit, site): the robust sandwich variance summed within
        clusters (Lin & Wei 1989, *JASA* 84, 1074–1078; R ``cluster()``).
    robust
        Robust variance; default True when ``cluster`` is given (then each row is its own
        cluster when ``cluster`` is None).  The table's se stays the model-based one and
        ``robust_se`` is added; z, p and intervals use the robust se, as R does.
    weights
        Case-weight column (> 0).
    offset
        Offset column added to the linear predictor with coefficient 1.
    frailty
        Column of clusters sharing a gamma frailty (R ``frailty(unit, distribution =
        "gamma")``): penalised partial likelihood, the frailty variance by maximum marginal
        likelihood (R's default ``method = "em"``), or fixed at ``frailty_theta``.  Sets
        ``frailty_theta``, ``marginal_log_likelihood`` (R's I-likelihood) and
        ``frailty_effects`` (log-frailty per cluster); ``log_likelihood`` is the partial
        log-likelihood at the fit, as R's ``loglik``; no robust variance, residuals or
        baseline (Therneau, Grambsch & Pankratz 2003, *JCGS* 12, 156–175).
    frailty_theta
        Fixed frailty variance (> 0) instead of its estimate.

    Returns
    -------
    CoxFit

    References
    ----------
    Cox (1972), JRSS B 34, 187–220; Breslow (1974), Biometrics 30, 89–99; Efron (1977), JASA
    72, 557–565; Lin & Wei (1989); Kalbfleisch & Prentice (2002), §4.2, §6.4; Therneau &
    Grambsch (2000), *Modeling Survival Data*, ch. 3, 6, 8.
    """
    level = check_conf_level(conf_level)
    if ties not in ("efron", "breslow"):
        raise ValueError(f"ties must be 'efron' or 'breslow', got {ties!r}")
    if (duration is None) == (stop is None):
        raise ValueError("give either duration= or stop= (with start=), not both or neither")
    covariates = tuple(covariates)
    if not covariates:
        raise ValueError("covariates is empty; give at least one covariate column")
    t_col = duration if duration is not None else stop
    s_col = entry if duration is not None else start
    inp.columns(df, [t_col, event, *covariates] + [c for c in (s_col, id) if c is not None])
    t = df[t_col].to_numpy(dtype=float)
    s = df[s_col].to_numpy(dtype=float) if s_col is not None else np.full(t.size, -np.inf)
    ev = df[event].to_numpy(dtype=float)
    x = df[list(covariates)].to_numpy(dtype=float)
    inp.check_rows(s, t, ev, x, covariates)
    n_subjects = inp.check_ids(df[id].to_numpy(), s, t) if id is not None else len(df)
    n_events = int(ev.sum())
    if n_events < 1:
        raise InsufficientDataError(f"0 events among {len(df)} rows; a Cox fit needs events")
    strata_names = () if strata is None else ((strata,) if isinstance(strata, str) else tuple(strata))
    stratum = inp.codes(df, strata)
    cd = core.prepare(s, t, ev.astype(bool), x, inp.numeric(df, weights, 1.0, "weight", True),
                      inp.numeric(df, offset, 0.0, "offset"), stratum, ties)
    if frailty is not None:
        if cluster is not None or robust:
            raise ValueError("frailty= cannot be combined with cluster= or robust= (R's robust "
                             "variance for frailty fits is not implemented)")
        fields = _frailty.cox_fit(df, cd, frailty, frailty_theta, covariates, level, ties,
                                  n_subjects, n_events, strata_names)
        return CoxFit(table=_hr_table(fields.pop("beta"), fields["cov"], covariates, level), **fields)
    try:
        sol = core.newton(cd, len(covariates))
    except np.linalg.LinAlgError:
        raise _singular(covariates) from None
    naive = _covariance(sol, covariates)
    robust = cluster is not None if robust is None else robust
    cov = naive
    if robust:
        clus = inp.codes(df, cluster) if cluster is not None else np.arange(len(df))
        sc = res.score(cd, sol.steps, res.key_sums(cd, sol.steps))
        cov = res.robust_cov(cd, sc, naive, clus)
    lr = 2.0 * (sol.ll - sol.ll_null)
    table = _hr_table(sol.beta, cov, covariates, level)
    if robust:
        table.insert(3, "robust_se", table["se"])
        table["se"] = np.sqrt(np.diag(naive))
    hr = table[["hazard_ratio", "hr_low", "hr_high"]].to_numpy()
    off = [c for c, row in zip(covariates, hr, strict=True) if not np.all(np.isfinite(row) & (row > 0))]
    if off:  # the maximum lies so far out that the hazard ratio or its interval is 0 or infinite
        raise _unbounded(off)
    levels = None
    if strata_names:
        levels = df[list(strata_names)].drop_duplicates().sort_values(list(strata_names))
        levels = levels.iloc[:, 0].to_numpy() if len(strata_names) == 1 else \
            np.array(list(levels.itertuples(index=False, name=None)), dtype=object)
    return CoxFit(table=table, covariates=covariates,
                  log_likelihood=sol.ll, log_likelihood_null=sol.ll_null, lr_statistic=lr,
                  lr_p=float(stats.chi2.sf(lr, len(covariates))), n=len(df),
                  n_subjects=n_subjects, n_events=n_events, conf_level=level, ties=ties,
                  iterations=sol.iterations, converged=sol.converged, cov=cov,
                  naive_cov=naive, strata=strata_names, robust=robust,
                  _cd=cd, _steps=sol.steps, _strata_levels=levels)
