"""The two models: a piecewise-exponential Poisson hazard and a calibrated boosted classifier.

* **Hazard.**  Daily pieces: the count of hardware interruptions of a node in ``[T, T+1 d)``
  is Poisson with log rate ``β₀ + Σ βⱼ xⱼ + log(24 h)`` — the piecewise-exponential model
  fitted as a Poisson GLM (Holford, Biometrics 1980; Laird & Olivier, JASA 1981).  Each
  ``xⱼ`` says whether precursor family ``j`` was seen in the last 7 days (and whether the
  node failed before), so ``exp(βⱼ)`` is that family's rate ratio, with its Wald interval.
  Its probability of a failure within ``h`` hours is ``1 − exp(−λ h)``, ``λ`` per hour.
* **Classifier.**  scikit-learn's ``HistGradientBoostingClassifier`` (gradient boosting,
  Friedman, Annals of Statistics 2001) on every feature, for "a hardware interruption within
  the horizon"; its scores are calibrated by Platt scaling (Platt 1999: a logistic regression
  of the outcome on the score's logit) fitted on a *later* split than the trees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from reliab.predict._features import CORRECTABLE, FAMILIES

#: GLM terms: precursor family seen in the last 7 days, earlier failure of the node
GLM_TERMS = tuple(f"{f}_7d" for f in (*FAMILIES, "interrupt")) + ("failure_total",)


def glm_design(frame: pd.DataFrame, terms: tuple[str, ...]) -> np.ndarray:
    """Indicators ``term > 0`` with an intercept column."""
    x = (frame[list(terms)].to_numpy(np.float64) > 0).astype(np.float64)
    return np.column_stack([np.ones(len(frame)), x])


@dataclass(frozen=True)
class Hazard:
    """Fitted Poisson hazard: terms kept, coefficients, covariance."""

    terms: tuple[str, ...]
    params: np.ndarray
    cov: np.ndarray

    def hourly_rate(self, frame: pd.DataFrame) -> np.ndarray:
        """Failures per node-hour (the offset is the piece's 24 hours)."""
        return np.exp(glm_design(frame, self.terms) @ self.params)

    def probability(self, frame: pd.DataFrame, horizon_h: float) -> np.ndarray:
        """``1 − exp(−λ h)``: covariates held at their values at ``T`` over the horizon."""
        return -np.expm1(-self.hourly_rate(frame) * horizon_h)

    def rate_ratios(self, conf_level: float) -> pd.DataFrame:
        from scipy import stats

        z = stats.norm.ppf(0.5 + conf_level / 2)
        se = np.sqrt(np.diag(self.cov))[1:]
        b = self.params[1:]
        return pd.DataFrame({"term": [t.replace("_7d", " in last 7 d").replace(
            "failure_total", "earlier hardware failure") for t in self.terms],
            "rate_ratio": np.exp(b), "low": np.exp(b - z * se), "high": np.exp(b + z * se),
            "pvalue": 2 * stats.norm.sf(np.abs(b / se))})


def indicator_cells(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a 0/1 design and the cell of every row.

    The same as ``np.unique(x, axis=0, return_inverse=True)`` (rows in lexicographic order),
    computed on one integer per row (its indicators read as a binary number, first column
    most significant, so numeric and lexicographic order agree): sorting integers is far
    faster than sorting rows compared field by field.

    Parameters
    ----------
    x : ndarray of shape (n, k)
        Indicators (0 or 1), ``k`` at most 62.

    Returns
    -------
    cells : ndarray of shape (m, k)
        The distinct rows, as float64.
    inverse : ndarray of shape (n,)
        Index into ``cells`` of every row.
    """
    k = x.shape[1]
    if k > 62:
        cells, inverse = np.unique(x, axis=0, return_inverse=True)
        return cells, inverse.ravel()
    shifts = np.arange(k - 1, -1, -1, dtype=np.int64)
    code = (x > 0).astype(np.int64) @ (np.int64(1) << shifts)
    codes, inverse = np.unique(code, return_inverse=True)
    return ((codes[:, None] >> shifts) & 1).astype(np.float64), inverse.ravel()


def fit_hazard(frame: pd.DataFrame, events_1d: np.ndarray) -> Hazard:
    """Poisson GLM of the next-day count on the precursor indicators (offset log 24 h).

    Terms without variation in both outcomes (never seen, or never seen before a failure
    and never without) are dropped: their rate ratio is not estimable.
    """
    import statsmodels.api as sm

    terms = []
    for t in GLM_TERMS:
        on = frame[t].to_numpy() > 0
        if on.any() and (~on).any() and events_1d[on].sum() > 0:
            terms.append(t)
    x = glm_design(frame, tuple(terms))
    # the indicators take few distinct values: the Poisson likelihood of the rows equals that
    # of the covariate cells with summed counts and exposures (sufficient statistics)
    cells, inverse = indicator_cells(x)
    count = np.bincount(inverse, weights=events_1d.astype(float), minlength=len(cells))
    hours = 24.0 * np.bincount(inverse, minlength=len(cells))
    with np.errstate(invalid="ignore", divide="ignore"):  # one cell: IRLS's WLS has 0 df
        fit = sm.GLM(count, cells, family=sm.families.Poisson(), offset=np.log(hours)).fit()
    return Hazard(tuple(terms), np.asarray(fit.params), np.asarray(fit.cov_params()))


@dataclass(frozen=True)
class Platt:
    """``p = expit(a + b · logit(s))`` with the covariance of ``(a, b)``."""

    params: np.ndarray
    cov: np.ndarray

    @staticmethod
    def _logit(s: np.ndarray) -> np.ndarray:
        s = np.clip(s, 1e-6, 1 - 1e-6)
        return np.log(s / (1 - s))

    def probability(self, s: np.ndarray) -> np.ndarray:
        from scipy.special import expit

        return expit(self.params[0] + self.params[1] * self._logit(s))

    def interval(self, s: np.ndarray, conf_level: float) -> tuple[np.ndarray, np.ndarray]:
        """Delta-method interval on the logit scale (uncertainty of the calibration only)."""
        from scipy import stats
        from scipy.special import expit

        x = np.column_stack([np.ones(len(s)), self._logit(s)])
        eta = x @ self.params
        se = np.sqrt(np.einsum("ij,jk,ik->i", x, self.cov, x))
        z = stats.norm.ppf(0.5 + conf_level / 2)
        return expit(eta - z * se), expit(eta + z * se)


def fit_platt(score: np.ndarray, y: np.ndarray) -> Platt:
    """Logistic regression of ``y`` on ``logit(score)``; identity map when it cannot fit."""
    import statsmodels.api as sm

    x = np.column_stack([np.ones(len(score)), Platt._logit(score)])
    if y.sum() == 0 or y.sum() == len(y):
        return Platt(np.array([0.0, 1.0]), np.zeros((2, 2)))
    try:
        fit = sm.GLM(y.astype(float), x, family=sm.families.Binomial()).fit()
    except (ValueError, np.linalg.LinAlgError):  # perfect separation
        return Platt(np.array([0.0, 1.0]), np.zeros((2, 2)))
    return Platt(np.asarray(fit.params), np.asarray(fit.cov_params()))


@dataclass(frozen=True)
class Boosted:
    """Trees fitted on the earlier split, Platt map fitted on the later one."""

    model: object
    platt: Platt
    columns: tuple[str, ...]

    def raw(self, frame: pd.DataFrame) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        if self.model is None:
            return np.full(len(frame), 0.5)
        with threadpool_limits(limits=1, user_api="openmp"):  # see fit_boosted
            return self.model.predict_proba(frame[list(self.columns)].to_numpy(np.float64))[:, 1]

    def probability(self, frame: pd.DataFrame) -> np.ndarray:
        return self.platt.probability(self.raw(frame))


def varying_columns(x: np.ndarray) -> np.ndarray:
    """Columns of ``x`` holding more than one value (a missing value counts as another).

    A column with one value has one bin in the histogram trees (Ke et al., "LightGBM",
    NeurIPS 2017, the histogram algorithm scikit-learn's ``HistGradientBoostingClassifier``
    follows): no threshold splits it, so no tree uses it, and no split of another column
    depends on it (the columns' binning is per column, the early-stopping split is drawn
    from the rows and labels only).  The trees fitted without it are the same trees.
    """
    if not len(x):
        return np.ones(x.shape[1], dtype=bool)
    return ~np.all(x == x[:1], axis=0)  # NaN == NaN is False: a missing value keeps a column


def fit_boosted(train: pd.DataFrame, y_train: np.ndarray, cal: pd.DataFrame,
                y_cal: np.ndarray, columns: list[str], seed: int) -> Boosted:
    """Boosted trees on ``train``, Platt scaling on the later ``cal`` rows.

    The trees run on one OpenMP thread: on a shared machine the spinning threads of
    scikit-learn's histogram builder made a fit of a few thousand rows take 40 s instead of 1.
    They learn only from the columns that vary in ``train`` (:func:`varying_columns`): the
    same trees, each histogram pass a column shorter per constant one.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    if y_train.sum() == 0 or y_train.sum() == len(y_train):
        model = None
    else:
        x = train[columns].to_numpy(np.float64)
        keep = varying_columns(x)
        columns = [c for c, k in zip(columns, keep, strict=True) if k]
        with threadpool_limits(limits=1, user_api="openmp"):
            model = HistGradientBoostingClassifier(
                max_iter=150, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40,
                l2_regularization=1.0, random_state=seed).fit(x[:, keep], y_train)
    b = Boosted(model, Platt(np.array([0.0, 1.0]), np.zeros((2, 2))), tuple(columns))
    return Boosted(model, fit_platt(b.raw(cal), y_cal), tuple(columns))


def correctable_7d(frame: pd.DataFrame) -> np.ndarray:
    """Baseline: 1 when any correctable error family was seen in the last 7 days."""
    return (frame[[f"{f}_7d" for f in CORRECTABLE]].to_numpy().sum(axis=1) > 0).astype(float)


def past_rate(frame: pd.DataFrame) -> np.ndarray:
    """Baseline: the node's own hardware failures per hour observed before ``T``."""
    return frame["failure_total"].to_numpy(float) / np.maximum(frame["age_h"].to_numpy(float), 24.0)
