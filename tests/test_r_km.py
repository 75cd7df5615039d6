"""Kaplan–Meier, Nelson–Aalen, quantile limits, log-rank / G-rho and RMST against R's survival.

Reference values: tests/reference/r/km_values.csv, written by tests/reference/r/km.R (R's
``survfit``, ``quantile.survfit``, ``survdiff`` and ``print.survfit(rmean=)`` on R's own
datasets); agreement to rtol 1e-8 (NaN where R gives NA; inf where R's quantile limit is NA
because the band never reaches the level).
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.models import estimate_kaplan_meier, estimate_nelson_aalen

REF = Path(__file__).parent / "reference" / "r"
RTOL = 1e-8


@cache
def _values() -> dict[tuple[str, str], float]:
    with (REF / "km_values.csv").open(newline="") as fh:
        return {(r["case"], r["quantity"]): float(r["value"]) for r in csv.DictReader(fh)}


def r_value(case: str, quantity: str) -> np.ndarray:
    """R's value (scalar) or vector (``quantity[1]``, ``quantity[2]``, ...) for a case."""
    v = _values()
    if (case, quantity) in v:
        return np.array([v[case, quantity]])
    out, i = [], 1
    while (case, f"{quantity}[{i}]") in v:
        out.append(v[case, f"{quantity}[{i}]"])
        i += 1
    assert out, f"no R value {case}/{quantity}"
    return np.array(out)


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


def _lung() -> pd.DataFrame:
    df = _data("lung")
    df["death"] = (df["status"] == 2).astype(int)
    return df


def _colon() -> pd.DataFrame:
    df = _data("colon")
    return df[df["etype"] == 2]


def _pbc() -> pd.DataFrame:
    df = _data("pbc")
    df["death"] = (df["status"] == 2).astype(int)
    return df


#: case -> (frame, time column, event column)
CURVES = {
    "lung": lambda: (_lung(), "time", "death"),
    "ovarian": lambda: (_data("ovarian"), "futime", "fustat"),
    "veteran": lambda: (_data("veteran"), "time", "status"),
    "pbc": lambda: (_pbc(), "time", "death"),
    "lung.sex1": lambda: (_lung().query("sex == 1"), "time", "death"),
    "lung.sex2": lambda: (_lung().query("sex == 2"), "time", "death"),
    "colon.Obs": lambda: (_colon().query("rx == 'Obs'"), "time", "status"),
    "colon.Lev": lambda: (_colon().query("rx == 'Lev'"), "time", "status"),
    "colon.Lev+5FU": lambda: (_colon().query("rx == 'Lev+5FU'"), "time", "status"),
    **{f"lung.ecog{g}": (lambda g=g: (_lung().query(f"`ph.ecog` == {g}"), "time", "death"))
       for g in range(4)},
}


def close(ours, theirs, rtol: float = RTOL) -> None:
    np.testing.assert_allclose(np.asarray(ours, dtype=float), theirs, rtol=rtol, atol=0.0)


@pytest.mark.parametrize("case", [*CURVES, "lung.entry"])
@pytest.mark.parametrize("conf_type", ["log", "log-log", "plain"])
def test_kaplan_meier_equals_r(case, conf_type):
    """Every row of R's survfit: time, n.risk, n.event, surv, std.err, bounds of each type
    (lung.entry: delayed entry at min(time - 1, 60), R's Surv(entry, time, death))."""
    if case == "lung.entry":
        df, t, e = _lung(), "time", "death"
        entry = np.minimum(df["time"] - 1, 60)
    else:
        (df, t, e), entry = CURVES[case](), None
    km = estimate_kaplan_meier(df[t], df[e], conf_type=conf_type, entry=entry)
    tb = km.table
    close(tb["time"], r_value(case, "time"))
    close(tb["at_risk"], r_value(case, "n.risk"))
    close(tb["events"], r_value(case, "n.event"))
    close(tb["survival"], r_value(case, "surv"))
    close(tb["std_err_log"], r_value(case, "std.err"))
    close(tb.loc[tb["events"] > 0, "std_err"], r_value(case, "summary.std.err"))
    close(tb["low"], r_value(case, f"lower.{conf_type}"))
    close(tb["high"], r_value(case, f"upper.{conf_type}"))


@pytest.mark.parametrize("case", list(CURVES))
@pytest.mark.parametrize("conf_type", ["log", "log-log", "plain"])
def test_quantiles_and_brookmeyer_crowley_limits_equal_r(case, conf_type):
    """R's quantile(survfit) at 0.25, 0.5, 0.75 with its lower and upper limits."""
    df, t, e = CURVES[case]()
    q = estimate_kaplan_meier(df[t], df[e], conf_type=conf_type).quantiles([0.25, 0.5, 0.75])
    for ours, name in ((q["time"], "quantile"), (q["low"], "quantile.lower"),
                       (q["high"], "quantile.upper")):
        ref = r_value(case, f"{name}.{conf_type}")
        close(ours, np.where(np.isnan(ref), np.inf, ref))


@pytest.mark.parametrize("case", ["lung", "ovarian", "veteran", "pbc", "lung.sex2"])
def test_nelson_aalen_cumhaz_equals_r(case):
    """R's survfit cumhaz (Nelson-Aalen); the variance differs by convention (see docstring of
    estimate_nelson_aalen: R's std.chaz uses sum d/n^2, reliab sum (n-d)d/n^3)."""
    df, t, e = CURVES[case]()
    na = estimate_nelson_aalen(df[t], df[e])
    close(na.table["cumhaz"], r_value(case, "cumhaz"))


#: case -> (frame, time, event, group, stratum)
TESTS = {
    "lung.sex": lambda: (_lung(), "time", "death", "sex", None),
    "veteran.celltype": lambda: (_data("veteran"), "time", "status", "celltype", None),
    "colon.rx": lambda: (_colon(), "time", "status", "rx", None),
    "lung.ecog": lambda: (_lung().dropna(subset=["ph.ecog"]), "time", "death", "ph.ecog", None),
    "veteran.trt.strata": lambda: (_data("veteran"), "time", "status", "trt", "celltype"),
    "lung.sex.strata": lambda: (_lung().dropna(subset=["ph.ecog"]), "time", "death", "sex",
                                "ph.ecog"),
}


@pytest.mark.parametrize("case", list(TESTS))
@pytest.mark.parametrize("rho", [0, 1, 0.5])
def test_logrank_and_g_rho_equal_r_survdiff(case, rho):
    """R's survdiff(..., rho=): chi-square, df, p, observed and expected per group."""
    from reliab.models.logrank import logrank_test

    df, t, e, g, s = TESTS[case]()
    res = logrank_test(df[t], df[e], df[g], strata=None if s is None else df[s], rho=rho)
    key = f"{case}.rho{rho}"
    close(res.chisq, r_value(key, "chisq"))
    assert res.df == r_value(key, "df")[0]
    close(res.p_value, r_value(key, "p"))
    close(res.table["observed"], r_value(key, "obs"))
    close(res.table["expected"], r_value(key, "exp"))


#: case -> (frame, time, event, group, tau)
RMST = {
    "lung.sex.365": lambda: (_lung(), "time", "death", "sex", 365.0),
    "lung.sex.800": lambda: (_lung(), "time", "death", "sex", 800.0),
    "veteran.trt.200": lambda: (_data("veteran"), "time", "status", "trt", 200.0),
    "ovarian.rx.1000": lambda: (_data("ovarian"), "futime", "fustat", "rx", 1000.0),
    "lung.sex.1100": lambda: (_lung(), "time", "death", "sex", 1100.0),
    "ovarian.rx.1300": lambda: (_data("ovarian"), "futime", "fustat", "rx", 1300.0),
}


@pytest.mark.parametrize("case", list(RMST))
def test_rmst_equals_r(case):
    """R's print(survfit, rmean=tau): rmean and se(rmean) per group and pooled; the difference
    of the two groups with the root sum of squared SEs."""
    from reliab.models.rmst import estimate_rmst

    df, t, e, g, tau = RMST[case]()
    res = estimate_rmst(df[t], df[e], tau=tau, groups=df[g])
    close(res.table["rmst"], r_value(case, "rmean"))
    close(res.table["se"], r_value(case, "se"))
    close(res.differences["difference"], r_value(case, "diff"))
    close(res.differences["se"], r_value(case, "diff.se"))
    pooled = estimate_rmst(df[t], df[e], tau=tau)
    close(pooled.table["rmst"], r_value(case, "all.rmean"))
    close(pooled.table["se"], r_value(case, "all.se"))


def test_groups_give_r_per_group_curves_and_medians():
    """estimate_kaplan_meier(..., groups=) equals R's survfit(... ~ ph.ecog) per stratum: every
    curve, and the print table's median with 0.95LCL / 0.95UCL (inf where R gives NA)."""
    df = _lung().dropna(subset=["ph.ecog"])
    res = estimate_kaplan_meier(df["time"], df["death"], groups=df["ph.ecog"])
    assert list(res.curves) == [0.0, 1.0, 2.0, 3.0] and res.n == len(df)
    for g, curve in res.curves.items():
        case = f"lung.ecog{int(g)}"
        close(curve.table["survival"], r_value(case, "surv"))
        close(curve.table["high"], r_value(case, "upper.log"))
    med = res.summary()
    for col, name in (("median", "quantile.log"), ("median_low", "quantile.lower.log"),
                      ("median_high", "quantile.upper.log")):
        ref = np.array([r_value(f"lung.ecog{g}", name)[1] for g in range(4)])
        close(med[col], np.where(np.isnan(ref), np.inf, ref))
    assert set(res.table["group"]) == {0.0, 1.0, 2.0, 3.0}


@pytest.mark.parametrize("case", ["lung", "ovarian", "veteran", "pbc", "lung.sex2"])
def test_nelson_aalen_poisson_variance_equals_r_std_chaz(case):
    """variance="poisson" (sum d/n^2) is R's survfit std.chaz squared."""
    df, t, e = CURVES[case]()
    na = estimate_nelson_aalen(df[t], df[e], variance="poisson")
    close(np.sqrt(na.table["variance"]), r_value(case, "std.chaz"))
