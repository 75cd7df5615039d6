"""Agreement of :func:`reliab.models.fit_aft` with R survival 3.5 ``survreg`` on R's datasets.

The expected values are R's, computed by ``tests/reference/r/aft.R`` and committed in
``tests/reference/r/aft_values.csv`` (survreg iterated to a 1e-13 relative change of the
log-likelihood).  Tolerance 1e-8 relative (>= 8 significant digits) throughout: coefficients,
log(scale), standard errors from the inverse information (log-scale included), log-likelihoods
(intercept-only and fitted), quantiles and survival for a new row.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _rvalues import r_values

from reliab.models import fit_aft

REF = Path(__file__).parent / "reference" / "r"
RTOL = 1e-8
DISTS = ["weibull", "exponential", "lognormal", "loglogistic"]


def _values() -> dict[tuple[str, str], list[float]]:
    return r_values("aft")


def _close(case: str, quantity: str, ours) -> None:
    np.testing.assert_allclose(np.asarray(ours, float), _values()[case, quantity], rtol=RTOL,
                               atol=0, err_msg=f"{case} {quantity}")


@cache
def _data(name: str) -> pd.DataFrame:
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    if name == "lung":  # survreg drops the row with ph.ecog missing; status 2 = dead
        df = df[df["ph.ecog"].notna()].reset_index(drop=True)
        df["dead"] = (df["status"] == 2).astype(int)
        df["w"] = 1 + (np.arange(1, len(df) + 1) % 3) / 2
    return df


LUNG_NEW = {"age": 60, "sex": 2, "ph.ecog": 1}
CASES = {
    "lung": ("lung", "age + sex + ph.ecog", {"duration": "time", "event": "dead"}, LUNG_NEW, 300),
    "lung_weights": ("lung", "age + sex + ph.ecog",
                     {"duration": "time", "event": "dead", "weights": "w"}, LUNG_NEW, 300),
    "ovarian": ("ovarian", "age + ecog.ps + rx", {"duration": "futime", "event": "fustat"},
                {"age": 55, "ecog.ps": 1, "rx": 2}, 500),
    "veteran": ("veteran", "trt + C(celltype) + karno + diagtime + age + prior",
                {"duration": "time", "event": "status"},
                {"trt": 1, "celltype": "smallcell", "karno": 60, "diagtime": 5, "age": 60,
                 "prior": 0}, 100),
}


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("name", list(CASES))
def test_survreg(name, dist):
    """Coefficients, log(scale), se, log-likelihoods, quantiles and survival of a new row."""
    data, formula, cols, new, t = CASES[name]
    fit = fit_aft(_data(data), formula, distribution=dist, **cols)
    case = f"{name}_{dist}"
    _close(case, "coef", fit.table["coef"])
    _close(case, "se", np.sqrt(np.diag(fit.cov)))
    _close(case, "loglik", [fit.log_likelihood_null, fit.log_likelihood])
    if dist != "exponential":
        _close(case, "log_scale", [fit.log_scale])
        assert fit.log_scale_se == pytest.approx(_values()[case, "se"][-1], rel=RTOL)
    row = pd.DataFrame([new])
    _close(case, "quantile_new", fit.quantiles(row, (0.1, 0.5, 0.9)).iloc[0])
    _close(case, "survival_new", fit.survival(row, t).iloc[0])


def test_veteran_names_follow_the_formula():
    """celltype is dummy-coded against its first sorted level, adeno, as R does."""
    fit = fit_aft(_data("veteran"), "trt + C(celltype) + karno", duration="time",
                  event="status")
    assert list(fit.table.index) == ["(Intercept)", "trt", "celltype[T.large]",
                                     "celltype[T.smallcell]", "celltype[T.squamous]", "karno"]
    assert any("reference level 'adeno'" in n for n in fit.notes)
