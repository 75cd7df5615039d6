"""Agreement with R survival 3.5 ``coxph`` and friends on R's own datasets.

The expected values are R's, computed by ``tests/reference/r/cox.R`` and committed in
``tests/reference/r/cox_values.csv`` (the R fits iterate to a 1e-13 relative log-likelihood
change; R's default 1e-9 leaves its coefficients 1e-8 from the maximum).  Tolerance 1e-8
relative (>= 8 significant digits) throughout.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _rvalues import r_values

from reliab.models import fit_cox

REF = Path(__file__).parent / "reference" / "r"
RTOL = 1e-8


def _values() -> dict[tuple[str, str], list[float]]:
    return r_values("cox")


def _close(case: str, quantity: str, ours) -> None:
    np.testing.assert_allclose(np.asarray(ours, float), _values()[case, quantity], rtol=RTOL,
                               atol=0, err_msg=f"{case} {quantity}")


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


@cache
def _lung() -> pd.DataFrame:
    lung = _data("lung")
    lung["dead"] = (lung["status"] == 2).astype(int)
    lung = lung[lung["ph.ecog"].notna()].reset_index(drop=True)  # coxph drops the NA row
    i = np.arange(1, len(lung) + 1)
    return lung.assign(w=1 + (i % 3) / 2, off=(i % 5) / 10)


def _cgd() -> pd.DataFrame:
    cgd = _data("cgd")
    return cgd.assign(rifn=(cgd["treat"] == "rIFN-g").astype(float),
                      male=(cgd["sex"] == "male").astype(float))


def _fitted(case: str, fit) -> None:
    _close(case, "coef", fit.table["coef"])
    _close(case, "se", fit.table["se"])
    _close(case, "loglik", [fit.log_likelihood_null, fit.log_likelihood])
    _close(case, "concordance", [fit.concordance()])
    if fit.robust:
        _close(case, "robust_se", fit.table["robust_se"])


LUNG = ["age", "sex", "ph.ecog"]


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_lung(ties):
    """lung, age + sex + ph.ecog: coefficients, se, log-likelihoods, concordance, residuals,
    baseline hazard, survival of a new row and cox.zph (km, rank, identity)."""
    case = f"lung_{ties}"
    fit = fit_cox(_lung(), duration="time", event="dead", covariates=LUNG, ties=ties)
    _fitted(case, fit)
    _close(case, "martingale", fit.residuals("martingale"))
    _close(case, "deviance", fit.residuals("deviance"))
    _close(case, "score", fit.residuals("score")["age"])
    _close(case, "schoenfeld_age", fit.residuals("schoenfeld")["age"])
    _close(case, "scaled_schoenfeld_ecog", fit.residuals("scaled_schoenfeld")["ph.ecog"])
    base = fit.baseline_hazard()
    _close(case, "basehaz_time", base["time"])
    _close(case, "basehaz", base["cumulative_hazard"])
    new = pd.DataFrame({"age": [60], "sex": [2], "ph.ecog": [1]})
    _close(case, "surv_new", fit.predict_survival(new)["survival"])
    for transform, name in [("km", "zph_chisq"), ("rank", "zph_rank_chisq"),
                            ("identity", "zph_identity_chisq")]:
        _close(case, name, fit.check_proportional_hazards(transform)["test_statistic"])


def test_lung_weights_offset_robust():
    """Case weights, an offset and the robust (per-row) sandwich variance."""
    fit = fit_cox(_lung(), duration="time", event="dead", covariates=LUNG, weights="w",
                  offset="off", robust=True)
    _fitted("lung_weights_offset", fit)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_ovarian(ties):
    fit = fit_cox(_data("ovarian"), duration="futime", event="fustat",
                  covariates=["age", "ecog.ps", "rx"], ties=ties)
    _fitted(f"ovarian_{ties}", fit)


def test_veteran_zph():
    """The survival >= 3.0 score test: global chi-square 34.55 on 8 df (the 1994 approximation
    gives a different value)."""
    vet = _data("veteran")
    cells = ["large", "smallcell", "squamous"]
    for level in cells:
        vet[level] = (vet["celltype"] == level).astype(float)
    fit = fit_cox(vet, duration="time", event="status",
                  covariates=["trt", "karno", "diagtime", "age", "prior", *cells])
    _fitted("veteran", fit)
    zph = fit.check_proportional_hazards()
    _close("veteran", "zph_chisq", zph["test_statistic"])
    assert zph.loc["global", "df"] == 8
    old = fit.check_proportional_hazards(version="1994").loc["global", "test_statistic"]
    assert abs(old - zph.loc["global", "test_statistic"]) > 1


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_cgd_recurrent_strata_cluster(ties):
    """coxph(Surv(tstart, tstop, status) ~ treat + sex + age + steroids + strata(hos.cat) +
    cluster(id)): naive and robust se, log-likelihoods, martingale residuals, cox.zph."""
    case = f"cgd_hoscat_{ties}"
    fit = fit_cox(_cgd(), start="tstart", stop="tstop", event="status",
                  covariates=["rifn", "male", "age", "steroids"], ties=ties,
                  strata="hos.cat", cluster="id")
    _fitted(case, fit)
    _close(case, "martingale", fit.residuals("martingale"))
    _close(case, "zph_chisq", fit.check_proportional_hazards()["test_statistic"])
    assert list(fit.table.columns[:4]) == ["covariate", "coef", "se", "robust_se"]


def test_cgd_by_center():
    fit = fit_cox(_cgd(), start="tstart", stop="tstop", event="status",
                  covariates=["rifn", "male", "age", "steroids"], strata="center",
                  cluster="id")
    _fitted("cgd_center_efron", fit)


def test_bladder_wlw():
    """Wei–Lin–Weissfeld marginal model: strata(enum) + cluster(id)."""
    fit = fit_cox(_data("bladder"), duration="stop", event="event",
                  covariates=["rx", "number", "size"], strata="enum", cluster="id")
    _fitted("bladder_wlw", fit)
