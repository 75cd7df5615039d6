"""Fine–Gray regression against R's cmprsk::crr on mgus2 (tests/reference/r/competing.R).

Progression (cause 1) and death before progression (cause 2) on R's mgus2 data; coefficients,
sandwich standard errors and the log partial likelihood to rtol 1e-8.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.models import fit_fine_gray

REF = Path(__file__).parent / "reference" / "r"


def _r(case: str, quantity: str) -> np.ndarray:
    with (REF / "competing_values.csv").open(newline="") as fh:
        rows = {(r["case"], r["quantity"]): float(r["value"]) for r in csv.DictReader(fh)}
    if (case, quantity) in rows:
        return np.array([rows[case, quantity]])
    return np.array([rows[case, f"{quantity}[{i}]"] for i in (1, 2)])


@pytest.mark.parametrize("cause", [1, 2])
def test_fine_gray_equals_r_crr(cause):
    """crr(etime, event, cbind(age, male), failcode=cause): coef, sqrt(diag(var)), loglik."""
    m = pd.read_csv(REF / "data" / "mgus2.csv")
    etime = np.where(m["pstat"] == 0, m["futime"], m["ptime"])
    event = np.where(m["pstat"] == 0, 2 * m["death"], 1)
    x = pd.DataFrame({"age": m["age"], "male": (m["sex"] == "M").astype(int)})
    fit = fit_fine_gray(etime, event, x, cause=cause)
    case = f"mgus2.crr.cause{cause}"
    np.testing.assert_allclose(fit.table["coef"], _r(case, "coef"), rtol=1e-8)
    np.testing.assert_allclose(fit.table["se"], _r(case, "se"), rtol=1e-8)
    np.testing.assert_allclose(fit.loglik, _r(case, "loglik")[0], rtol=1e-8)
    assert list(fit.table.index) == ["age", "male"]


def test_fine_gray_names_a_missing_covariate():
    """Bad input: a NaN covariate is an error naming the row, not a NaN fit."""
    with pytest.raises(ValueError, match="first at row 1"):
        fit_fine_gray([1.0, 2.0, 3.0], [1, 2, 0], {"x": [0.0, np.nan, 1.0]}, cause=1)


def _mgus2_competing() -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    m = pd.read_csv(REF / "data" / "mgus2.csv")
    etime = np.where(m["pstat"] == 0, m["futime"], m["ptime"])
    event = np.where(m["pstat"] == 0, 2 * m["death"], 1)
    age = pd.cut(m["age"], [0, 60, 70, 80, np.inf], labels=False)  # R: cut(age, c(0,60,70,80,Inf))
    return m, etime, event, age.to_numpy()


@pytest.mark.parametrize("case, by, rho, strata", [
    ("mgus2.gray.sex.rho0", "sex", 0, False), ("mgus2.gray.sex.rho1", "sex", 1, False),
    ("mgus2.gray.age.rho0", "age", 0, False), ("mgus2.gray.age.rho1", "age", 1, False),
    ("mgus2.gray.age.strata.sex", "age", 0, True)])
def test_gray_test_equals_r_cuminc(case, by, rho, strata):
    """cuminc(etime, event, group, strata, rho)$Tests: statistic and p per cause (R's p is
    1 - pchisq, 0 below 1e-16; reliab's the survival function, so p is compared where R's > 0)."""
    from reliab.models import gray_test

    m, etime, event, age = _mgus2_competing()
    res = gray_test(etime, event, m["sex"] if by == "sex" else age, rho=rho,
                    strata=m["sex"] if strata else None)
    assert res.table["cause"].tolist() == [1, 2]
    np.testing.assert_allclose(res.table["statistic"], _r(case, "stat"), rtol=1e-8)
    ref_p = _r(case, "pv")
    pos = ref_p > 0
    np.testing.assert_allclose(res.table["p_value"][pos], ref_p[pos], rtol=1e-8)
    assert (res.table["p_value"][~pos] < 1e-16).all()
    assert (res.table["df"] == (1 if by == "sex" else 3)).all()


@pytest.mark.parametrize("cause", [1, 2])
def test_aalen_johansen_equals_r_cuminc(cause):
    """timepoints(cuminc(etime, event), c(12, 60, 120, 240, 360))$est to rtol 1e-8.  The
    variance is another estimator (reliab: Collett's delta-method form; cuminc: Gray 1988's
    asymptotic form), so only the estimate is compared; they agree to < 1 % up to 120 months."""
    from reliab.models import estimate_cumulative_incidence

    _, etime, event, _ = _mgus2_competing()
    res = estimate_cumulative_incidence(etime, event)
    tb = res.table[res.table["cause"] == cause]
    idx = np.searchsorted(tb["time"].to_numpy(), [12, 60, 120, 240, 360], side="right") - 1
    case = f"mgus2.cuminc.cause{cause}"
    with (REF / "competing_values.csv").open(newline="") as fh:
        rows = {r["quantity"]: float(r["value"]) for r in csv.DictReader(fh) if r["case"] == case}
    ref = np.array([rows[f"est[{i}]"] for i in range(1, 6)])
    var = np.array([rows[f"var[{i}]"] for i in range(1, 6)])
    np.testing.assert_allclose(tb["cif"].to_numpy()[idx], ref, rtol=1e-8)
    np.testing.assert_allclose(tb["variance"].to_numpy()[idx][:3], var[:3], rtol=1e-2)
