"""Unit lifetimes end to end: a generated GPU replacement log with known hazards per cage and
batch -> reader -> lifetimes table -> Cox by formula, survival per group, Weibull per batch.

The log is simulated from a proportional-hazards Weibull model, ``S(t | x) = exp(-(t/scale)^k
exp(x'beta))``, so ``T = scale * (E exp(-x'beta))^(1/k)`` with ``E ~ Exp(1)`` (Bender, Augustin
& Blettner 2005, Statistics in Medicine 24, 1713–1723).  Installs are spread over three years
before the window opens and inside it, so lives installed before the window start are
left-truncated; planned removals ("upgrade") and the window end censor.  Times carry seconds,
so no two ages tie and Breslow's and Efron's partial likelihoods coincide.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab.models.cox_formula import fit_cox_formula
from reliab.models.lifetimes import analyze_lifetimes, fit_weibull_by, lifetime_table

CAGE_LOG_HR = {"c0": 0.0, "c1": 0.5, "c2": -0.4, "c3": 0.9}
BATCH_LOG_HR = {"b0": 0.0, "b1": 0.35}
SHAPE, SCALE_DAYS = 1.3, 900.0
START, END = pd.Timestamp("2023-01-01", tz="UTC"), pd.Timestamp("2025-06-01", tz="UTC")


def simulate_log(seed: int, n: int = 3000) -> pd.DataFrame:
    """A replacement log (one row per life seen in the window) with its true model above."""
    rng = np.random.default_rng(seed)
    cage = rng.choice(list(CAGE_LOG_HR), n)
    batch = rng.choice(list(BATCH_LOG_HR), n)
    eta = np.array([CAGE_LOG_HR[c] for c in cage]) + np.array([BATCH_LOG_HR[b] for b in batch])
    life = SCALE_DAYS * (rng.exponential(size=n) * np.exp(-eta)) ** (1 / SHAPE)
    planned = rng.exponential(2500.0, n)  # upgrades: independent censoring
    installed = pd.Timestamp("2021-01-01", tz="UTC") + pd.to_timedelta(rng.uniform(0, 4 * 365, n), unit="D")
    removed = installed + pd.to_timedelta(np.minimum(life, planned), unit="D")
    reason = np.where(life <= planned, rng.choice(["XID 79 fell off the bus", "ECC DBE", "thermal"], n),
                      "upgrade")
    seen = removed > START  # a log that starts on START never saw lives that ended before it
    alive = removed > END
    df = pd.DataFrame({
        "Serial": [f"SN{i:06d}" for i in range(n)], "kind": "gpu", "cage": cage,
        "node": [f"n{i % 40:02d}" for i in range(n)], "batch": batch,
        "installed": installed.strftime("%Y-%m-%dT%H:%M:%S"),
        "removed": np.where(alive, "", removed.strftime("%Y-%m-%dT%H:%M:%S")),
        "removal_reason": np.where(alive, "", reason)})
    return df.loc[seen].reset_index(drop=True)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    path = tmp_path_factory.mktemp("inv") / "gpu_replacements.csv"
    simulate_log(20261206).to_csv(path, index=False)
    return reliab.ingest(str(path))


def test_the_log_is_read_as_lifetimes(ingested):
    acc = ingested.accounting.iloc[0]
    assert acc["source"] == "lifetimes"
    assert acc["malformed"] == 0
    lt = ingested.lifetimes
    assert acc["parsed"] == len(lt) > 2000
    assert {"cage", "node", "batch"} <= set(lt.columns)  # extra columns kept as covariates
    assert lt["installed"].min() < START  # some lives are left-truncated
    # "upgrade" censors, every other recorded reason is a failure
    up = lt["reason"].eq("upgrade").fillna(False)
    assert not lt.loc[up, "failed"].any()
    assert lt.loc[lt["reason"].notna() & ~up, "failed"].all()


def test_cox_hazard_ratios_cover_the_truth(ingested):
    fit = analyze_lifetimes(ingested.lifetimes, start=START, end=END)["unit_cox"]
    tb = fit.summary().set_index("covariate")
    truth = {f"cage[T.{c}]": np.exp(b) for c, b in CAGE_LOG_HR.items() if c != "c0"}
    truth["batch[T.b1]"] = np.exp(BATCH_LOG_HR["b1"])
    assert set(tb.index) == set(truth)
    for name, hr in truth.items():
        assert tb.loc[name, "hr_low"] <= hr <= tb.loc[name, "hr_high"], (name, tb.loc[name].to_dict())


def test_cox_formula_equals_lifelines_on_the_dummy_coded_data(ingested):
    lifelines = pytest.importorskip("lifelines")
    lt = lifetime_table(ingested.lifetimes, start=START, end=END)
    assert (lt["entry"] > 0).sum() > 500  # left truncation is exercised
    assert not lt.loc[lt["event"], "age"].duplicated().any()  # no ties: Efron == Breslow
    fit = fit_cox_formula(lt, "C(cage) + C(batch)", duration="age", event="event", entry="entry",
                          reference={"cage": "c2"})
    x = pd.DataFrame({f"cage[T.{c}]": (lt["cage"] == c).astype(float) for c in ("c0", "c1", "c3")})
    x["batch[T.b1]"] = (lt["batch"] == "b1").astype(float)
    data = pd.concat([x, lt[["age", "event", "entry"]].astype(float)], axis=1)
    # lifelines stops Newton at a step norm of 1e-7 by default (3e-5 relative off here): tighter
    ref = lifelines.CoxPHFitter().fit(data, duration_col="age", event_col="event", entry_col="entry",
                                      fit_options={"precision": 1e-12})
    ours = fit.summary().set_index("covariate")
    np.testing.assert_allclose(ours.loc[ref.params_.index, "coef"], ref.params_, rtol=1e-6)
    np.testing.assert_allclose(ours.loc[ref.params_.index, "se"], ref.standard_errors_, rtol=1e-6)
    assert any("reference level 'c2'" in n for n in fit.notes)


def test_survival_per_location_and_weibull_per_batch(ingested):
    out = analyze_lifetimes(ingested.lifetimes, start=START, end=END)
    surv = out["unit_survival"].summary()
    cages = surv[surv["by"] == "cage"].set_index("group")
    assert list(cages.index) == ["c0", "c1", "c2", "c3"]
    # the true survival of a cage at one year, averaged over its batch mix (half b1)
    for cage, b in CAGE_LOG_HR.items():
        s = np.mean([np.exp(-(365 / SCALE_DAYS) ** SHAPE * np.exp(b + bb)) for bb in BATCH_LOG_HR.values()])
        assert cages.loc[cage, "low"] <= s <= cages.loc[cage, "high"], (cage, s, cages.loc[cage].to_dict())
    assert list(out["unit_weibull"].summary()["group"]) == ["b0", "b1"]
    # within one cage each batch is exactly Weibull(SHAPE, SCALE exp(-b / SHAPE)); pooled over
    # cages it is a mixture, whose fitted shape is lower (heterogeneity; Meeker & Escobar §22)
    lt = lifetime_table(ingested.lifetimes, start=START, end=END)
    wb = fit_weibull_by(lt[lt["cage"] == "c1"], "batch").summary().set_index("group")
    for batch, b in BATCH_LOG_HR.items():
        scale = SCALE_DAYS * np.exp(-(CAGE_LOG_HR["c1"] + b) / SHAPE)
        assert wb.loc[batch, "shape_low"] <= SHAPE <= wb.loc[batch, "shape_high"], wb.loc[batch].to_dict()
        assert wb.loc[batch, "scale_low"] <= scale <= wb.loc[batch, "scale_high"], wb.loc[batch].to_dict()
    from reliab._checks import verify

    assert verify(out, raise_on_failure=True)[1] == ()  # every declared invariant holds
    cif = out["unit_removals"].summary()
    assert set(cif["cause"]) == {"XID 79 fell off the bus", "ECC DBE", "thermal", "upgrade"}


@pytest.mark.slow
def test_cox_interval_coverage_over_repeated_logs():
    """Over 50 simulated logs (3 hazard ratios each) the 95 % intervals cover the truth in at
    least 88 % of the 150 cases (the binomial 99.9 % lower bound around 95 % is about 89 %)."""
    covers = []
    for seed in range(50):
        lt = lifetime_table(_as_lifetimes(simulate_log(seed, n=1500)), start=START, end=END)
        tb = fit_cox_formula(lt, "C(cage) + C(batch)", duration="age", event="event",
                             entry="entry").summary().set_index("covariate")
        for name, b in (("cage[T.c3]", CAGE_LOG_HR["c3"]), ("cage[T.c2]", CAGE_LOG_HR["c2"]),
                        ("batch[T.b1]", BATCH_LOG_HR["b1"])):
            covers.append(tb.loc[name, "hr_low"] <= np.exp(b) <= tb.loc[name, "hr_high"])
    assert sum(covers) >= 0.88 * len(covers), (sum(covers), len(covers))


def _as_lifetimes(log: pd.DataFrame) -> pd.DataFrame:
    from reliab.io.formats.lifetimes import failed_of

    df = log.rename(columns={"Serial": "serial", "removal_reason": "reason"}).replace("", pd.NA)
    df["installed"] = pd.to_datetime(df["installed"], utc=True)
    df["removed"] = pd.to_datetime(df["removed"], utc=True)
    df["failed"] = failed_of(df)
    return df
