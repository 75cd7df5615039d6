"""Cox model with a shared gamma frailty against R coxph(... + frailty(unit, "gamma")).

R oracle: tests/reference/r/frailty.R -> frailty_values.csv (R 4.2.2, survival 3.5-3).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.models import fit_cox

HERE = Path(__file__).parent / "reference" / "r"


def _r(case: str) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {}
    with (HERE / "frailty_values.csv").open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["case"] == case:
                out.setdefault(row["quantity"].split("[")[0], []).append(float(row["value"]))
    return {k: np.array(v) for k, v in out.items()}


def _rats() -> pd.DataFrame:
    return pd.read_csv(HERE / "data" / "rats.csv")


def _cgd() -> pd.DataFrame:
    cgd = pd.read_csv(HERE / "data" / "cgd.csv")
    cgd["treat01"] = (cgd["treat"] == "rIFN-g").astype(int)
    return cgd


def test_rats_fixed_theta_equals_r():
    """Reference: R coxph, frailty(litter, theta = 0.5): coef, se, PL, I-likelihood, frailties."""
    ref = _r("rats.theta0.5")
    f = fit_cox(_rats(), duration="time", event="status", covariates=["rx"], frailty="litter",
                frailty_theta=0.5)
    assert f.coef[0] == pytest.approx(ref["coef"][0], rel=1e-8)
    assert f.table["se"].iloc[0] == pytest.approx(ref["se"][0], rel=1e-8)
    assert f.log_likelihood_null == pytest.approx(ref["loglik"][0], rel=1e-12)
    assert f.log_likelihood == pytest.approx(ref["loglik"][1], rel=1e-9)
    assert f.marginal_log_likelihood == pytest.approx(ref["iloglik"][0], rel=1e-10)
    np.testing.assert_allclose(f.frailty_effects["log_frailty"], ref["frail"], rtol=0, atol=1e-8)


@pytest.mark.parametrize("case", ["rats", "cgd"])
def test_em_fit_equals_r(case):
    """Reference: R coxph gamma frailty, method "em" (eps 1e-14): θ to 1e-6 (R stops its θ
    search on a relative change of the I-likelihood, so its θ carries ~1e-7 of search error;
    reliab solves the score equation of θ), coefficients and se to 1e-7; the partial likelihood
    at the fit to 1e-8 (it moves with θ), the I-likelihood (flat at its maximum) to 1e-11."""
    ref = _r(case)
    if case == "rats":
        f = fit_cox(_rats(), duration="time", event="status", covariates=["rx"], frailty="litter")
    else:
        f = fit_cox(_cgd(), start="tstart", stop="tstop", event="status",
                    covariates=["treat01", "age"], frailty="id")
    assert f.frailty_theta == pytest.approx(ref["theta"][0], rel=1e-6)
    np.testing.assert_allclose(f.coef, ref["coef"], rtol=1e-7)
    np.testing.assert_allclose(f.table["se"], ref["se"], rtol=1e-7)
    assert f.log_likelihood_null == pytest.approx(ref["loglik"][0], rel=1e-12)
    assert f.log_likelihood == pytest.approx(ref["loglik"][1], rel=1e-8)
    assert f.marginal_log_likelihood == pytest.approx(ref["iloglik"][0], rel=1e-11)
    np.testing.assert_allclose(f.frailty_effects["log_frailty"], ref["frail"], rtol=0, atol=1e-6)


def test_frailty_options_that_do_not_combine():
    """Regression: a frailty fit has no robust variance and no residuals (not implemented)."""
    with pytest.raises(ValueError, match="frailty"):
        fit_cox(_rats(), duration="time", event="status", covariates=["rx"], frailty="litter",
                cluster="litter")
    f = fit_cox(_rats(), duration="time", event="status", covariates=["rx"], frailty="litter",
                frailty_theta=0.5)
    with pytest.raises(NotImplementedError, match="frailty"):
        f.residuals()
