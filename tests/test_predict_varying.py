"""The boosted trees learn from the varying columns only: the same probabilities as trees
fitted on every column, early stopping included."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from reliab.predict._models import fit_boosted, varying_columns


def test_varying_columns_by_hand() -> None:
    x = np.array([[1.0, 0.0, np.nan, 5.0, 2.0],
                  [1.0, 0.0, np.nan, 5.0, 2.0],
                  [1.0, 3.0, np.nan, 5.0, np.nan]])
    # constant; varies; all missing (NaN != NaN: kept, the trees see it as they always did);
    # constant; a missing value among equal ones (a split apart: kept)
    assert varying_columns(x).tolist() == [False, True, True, False, True]
    assert varying_columns(np.zeros((0, 3))).tolist() == [True, True, True]


def _frame(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    count = rng.poisson(0.3, n).astype(float)
    since = np.minimum(rng.exponential(200.0, n), 1440.0)
    age = rng.uniform(0, 2000, n)
    temp = np.where(rng.random(n) < 0.05, np.nan, rng.normal(60, 8, n))
    logit = -3.0 + 0.9 * count - 0.004 * since + 0.03 * np.nan_to_num(temp - 60)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    frame = pd.DataFrame({"gsp_7d": 0.0, "ecc_7d": count, "ecc_since_h": since,
                          "in_service": 1.0, "age_h": age, "thermal_1h": 0.0, "temp_max_1d": temp})
    return frame, y


def test_trees_without_the_constant_columns_are_the_same_trees() -> None:
    train, y = _frame(10_500, 1)  # above 10,000 rows: scikit-learn's early stopping is on
    cal, y_cal = _frame(1_000, 2)
    test, _ = _frame(1_000, 3)
    test["gsp_7d"] = np.arange(len(test)) % 3  # values the training rows never had
    test["thermal_1h"] = 1.0
    cols = list(train.columns)
    fitted = fit_boosted(train, y, cal, y_cal, cols, seed=0)
    assert fitted.model.n_features_in_ == 4  # gsp_7d, in_service and thermal_1h left out
    with threadpool_limits(limits=1, user_api="openmp"):  # as fit_boosted (spinning threads)
        full = HistGradientBoostingClassifier(**fitted.model.get_params()).fit(
            train[cols].to_numpy(np.float64), y)
    assert full.n_iter_ == fitted.model.n_iter_ < 150  # stopped early, at the same iteration
    np.testing.assert_array_equal(fitted.raw(test),
                                  full.predict_proba(test[cols].to_numpy(np.float64))[:, 1])
    np.testing.assert_array_equal(fitted.raw(cal), full.predict_proba(cal[cols].to_numpy(np.float64))[:, 1])
