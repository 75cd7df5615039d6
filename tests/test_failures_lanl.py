"""The LANL 1996-2005 failure record alone gives the failure analyses, and the published figures.

Reference: Schroeder & Gibson, "A large-scale study of failures in high-performance computing
systems", DSN 2006.  Expected values were computed from the CSV by hand (Python's csv module and
scipy, independently of reliab) and are written here as numbers.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.io.formats.lanl import read_lanl_signals
from reliab.models.failure_gaps import fit_failure_gaps
from reliab.models.repairs import (
    estimate_availability,
    estimate_failure_rates,
    estimate_repair_times,
)
from reliab.taxonomy import classify_failures

LANL = Path(__file__).parent / "reference" / "lanl_failures_1996_2005" / "LA-UR-05-7318-failure-data-1996-2005.csv"
pytestmark = pytest.mark.skipif(not LANL.exists(), reason="LANL data not found")


@pytest.fixture(scope="module")
def failures() -> pd.DataFrame:
    res = read_lanl_signals(str(LANL))
    return classify_failures(res.tables["failures"], res.tables["signals"])


def _interval_weibull_by_hand(starts: pd.Series, r_h: float) -> tuple[float, float]:
    """Shape and scale (h) maximising the Weibull interval likelihood of the gaps between sorted
    stamps of resolution ``r_h``: each gap g in (max(g - r, 0), g + r), written out with scipy
    (independent of reliab's solver)."""
    from scipy.optimize import minimize

    t = np.sort(starts.to_numpy(dtype="datetime64[s]").astype(float)) / 3600.0
    g = np.diff(t)
    lo, hi = np.maximum(g - r_h, 0.0), g + r_h

    def nll(p: np.ndarray) -> float:
        k, lam = np.exp(p)
        cdf = lambda x: -np.expm1(-((x / lam) ** k))  # noqa: E731
        return -float(np.sum(np.log(cdf(hi) - cdf(lo))))

    opt = minimize(nll, np.log([0.8, 15.0]), method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
    k, lam = np.exp(opt.x)
    return float(k), float(lam)


def test_weibull_shape_of_gaps_system_20_since_2003(failures: pd.DataFrame) -> None:
    """Paper §5.2: the gaps of system 20 fit a Weibull of shape 0.7-0.8.  The record is written
    to the minute, so the 1,157 gaps of the 1,158 failures from 2003 on are interval-censored
    (19 of them zero, none dropped).  The shape against a fit written out by hand with scipy; with
    the zeros dropped (the old way) scipy gives 0.76118 on the 1,138 positive gaps, and keeping
    the zeros as (0, 1 min) gaps pulls the shape below that, still inside the paper's range."""
    res = fit_failure_gaps(failures, since="2003-01-01", systems=["20"])
    row = res.summary().iloc[0]
    assert (row["failures"], row["gaps"], row["zero_gaps"], row["resolution"]) == (1158, 1157, 19, "minute")
    sel = failures[(failures["system"] == "20") & (failures["start"] >= pd.Timestamp("2003-01-01", tz="UTC"))]
    shape, scale = _interval_weibull_by_hand(sel["start"], 1 / 60)
    assert row["shape"] == pytest.approx(shape, rel=1e-5)
    assert row["scale_h"] == pytest.approx(scale, rel=1e-5)
    assert 0.7 <= row["shape"] <= 0.8 and row["shape_low"] < row["shape"] < row["shape_high"] < 1.0
    assert row["shape"] < 0.76118
    assert any("minute" in n and "19 gap(s) of zero" in n for n in res.notes)


def test_root_cause_shares(failures: pd.DataFrame) -> None:
    """By hand: Hardware 14,341 of 23,739 (60.41 %), Software 5,361 (22.58 %).  Paper §4
    (Figure 1): hardware is the largest cause, 30 % to over 60 % by system type; software the
    second, 5 % to 24 %."""
    rates = estimate_failure_rates(failures, by="cause").summary().set_index("cause")
    assert rates.loc["Hardware", "count"] == 14_341 and rates.loc["Software", "count"] == 5_361
    assert rates.loc["Hardware", "share_pct"] == pytest.approx(60.41, abs=0.01)
    assert rates.loc["Software", "share_pct"] == pytest.approx(22.58, abs=0.01)
    assert rates.loc["Total", "count"] == 23_739


#: Schroeder & Gibson (DSN 2006) Table 3, time to repair by root cause (minutes): mean, median
#: (the paper calls "Facilities" "Environment").  UNVERIFIED: written from recall of the paper;
#: its text could not be retrieved to check them (2026-12-06).  They agree with the release
#: (BY_HAND) exactly for several causes; the checks that bind are those against BY_HAND.
PAPER_TABLE_3 = {"Unknown": (398, 32), "Human Error": (163, 44), "Facilities": (572, 269),
                 "Network": (247, 70), "Software": (369, 33), "Hardware": (342, 64), "All": (355, 54)}
#: the same statistics computed by hand from the release (Down Time column, minutes); Unknown is
#: Undetermined plus the 453 records with no cause, which the paper counts as unknown
BY_HAND = {"Unknown": (396.8, 32), "Human Error": (163.1, 44), "Facilities": (572.3, 276),
           "Network": (250.0, 70), "Software": (348.2, 43), "Hardware": (343.8, 68), "All": (352.4, 59)}


def test_repair_time_per_cause_beside_the_paper(failures: pd.DataFrame) -> None:
    """Reproduced means and medians equal the hand computation; beside the paper's Table 3 they
    agree within 6 % (means) and 10 minutes (medians).  The paper analysed a pre-release
    version of the record (its totals differ by a few records), so exact equality is not
    expected; Human Error, Facilities' mean and Network's median match to the minute."""
    renamed = failures.assign(cause=failures["cause"].replace({"Undetermined": "Unknown", "Unrecorded": "Unknown"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = estimate_repair_times(renamed, by="cause")
    t = res.summary().set_index("cause")
    for cause, (mean, median) in BY_HAND.items():
        assert t.loc[cause, "mean_min"] == pytest.approx(mean, abs=0.05), cause
        assert t.loc[cause, "median_min"] == pytest.approx(median, abs=1e-9), cause
        paper_mean, paper_median = PAPER_TABLE_3[cause]
        assert abs(t.loc[cause, "mean_min"] / paper_mean - 1) < 0.06, cause
        assert abs(t.loc[cause, "median_min"] - paper_median) <= 10, cause
    # paper §6: lognormal fits the repair times best of exponential, Weibull, gamma, lognormal;
    # reliab also fits the log-logistic, which is not among the paper's candidates
    for cause in ("Hardware", "Software", "Unknown"):
        ranks = res.comparisons[cause].summary().set_index("distribution")["aic"]
        assert ranks["lognormal"] < min(ranks["weibull"], ranks["gamma"]), cause
        assert max(ranks["weibull"], ranks["gamma"]) < ranks["exponential"], cause
    assert not any("gamma is not" in n for n in res.notes)  # gamma is fitted: no note says otherwise


def test_availability_is_mtbf_over_mtbf_plus_mttr(failures: pd.DataFrame) -> None:
    """System 20, by hand: 512 nodes (the record's nodes column) x its window; A = MTBF/(MTBF+MTTR)."""
    res = estimate_availability(failures)
    row = res.summary().set_index("system").loc["20"]
    sys20 = failures[failures["system"] == "20"]
    window_h = (sys20["end"].max() - sys20["start"].min()) / pd.Timedelta(hours=1)
    mtbf = 512 * window_h / len(sys20)
    mttr = sys20["repair_h"].mean()
    assert row["mtbf_unit_hours"] == pytest.approx(mtbf)
    assert row["inherent"] == pytest.approx(mtbf / (mtbf + mttr))
    assert row["inherent_low"] < row["inherent"] < row["inherent_high"] <= 1.0
    assert row["observed"] == pytest.approx(1 - sys20["repair_h"].sum() / (512 * window_h))


def test_hardware_vocabulary_maps_to_components(failures: pd.DataFrame) -> None:
    """Hardware records left Unclassified: 14 % before the LANL vocabulary rules; now only the
    release's own 'Other' (710) and two unexplained acronyms (MIA 39, Vhisp 9)."""
    hw = failures[failures["cause"] == "Hardware"]
    left = hw.loc[hw["category"] == "Unclassified", "detail"].value_counts().to_dict()
    assert left == {"Other": 710, "MIA": 39, "Vhisp": 9}
    cat = hw.set_index("detail")["category"].groupby(level=0).first()
    assert cat["Memory Module"] == "System Memory" and cat["SCSI Drive"] == "SSD"
    assert cat["Interconnect Switch"] == "Network Switch/Cable" and cat["Router Board"] == "Network Switch/Cable"
    assert cat["Fibre Raid Controller"] == "SSD" and cat["Mid-plane"] == "Server Chassis"


@pytest.mark.slow
def test_report_on_the_lanl_file_alone(tmp_path: Path) -> None:
    """`reliab report <lanl file>`: every failure-record section is computed, without job records."""
    from reliab.study import run_report

    run = run_report(LANL, out=tmp_path / "rep", pdf=False, tables=False)
    for key in ("failure_rates_by_system", "failure_rates_by_component", "failure_repair_times",
                "failure_availability", "failure_gaps", "failure_trends", "failure_lemons"):
        assert type(run.results[key]).__name__ != "NotAvailable", (key, run.results[key])
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "MTTR and repair-time distributions per cause" in html and "Lemon nodes (failure records)" in html
    assert "23,739 failure records" in run.headline()


def test_every_failure_result_passes_its_invariants(failures: pd.DataFrame) -> None:
    """Each new result declares invariants (reliab._checks) and they hold on the whole record."""
    from reliab._checks import checks_of
    from reliab.study._analyses import _run
    from reliab.study._failures import analyze_failures

    sys20 = failures[failures["system"].isin(["20", "16", "23"])]
    results = analyze_failures(type("Ingest", (), {"failures": sys20, "signals": sys20.iloc[0:0].assign(
        host=pd.Series(dtype="string"), signal=pd.Series(dtype="string"))})(), _run)
    for key, res in results.items():
        assert type(res).__name__ != "NotAvailable", (key, res)
        checks = checks_of(res)
        if key != "failure_lemons":
            assert checks, key
        assert all(c.ok for c in checks), (key, [c for c in checks if not c.ok])


@pytest.mark.slow
def test_jobs_and_failures_show_both_views(sample_ingest, failures: pd.DataFrame) -> None:
    """Where job records and failure records both exist, the job-interruption analyses and the
    failure-record analyses are both computed."""
    import dataclasses

    from reliab.study import analyze, fleet_facts

    ing = dataclasses.replace(sample_ingest, failures=failures[failures["system"] == "20"])
    fleet = fleet_facts(jobs=ing.jobs, signals=ing.signals, gpus_per_node=8)
    out = analyze(ing, fleet, policy=ing.policy)
    assert type(out["rates"]).__name__ == "RatesResult"
    assert type(out["failure_rates_by_system"]).__name__ == "FailureRates"
    assert type(out["failure_repair_times"]).__name__ == "RepairTimes"
