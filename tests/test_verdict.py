"""One verdict on the interruption rate (reliab.models.verdict) and its place in the report.

Expectations are closed forms on constructed point processes: evenly spread times have
Laplace U = 0 (no trend) and Crow-AMSAA beta near 1; times ``T ((i - 1/2)/n)^(1/2)`` follow
the power law with beta = 2 (rising rate), Laplace U ~ (2/3 - 1/2) sqrt(12 n).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab._checks import failures
from reliab.models.verdict import decide
from reliab.report.catalog import reading

METHODS = ("laplace", "mil-hdbk-189", "reverse-arrangement")


def _regular(n: int = 200) -> tuple[np.ndarray, float]:
    """Gaps spread evenly over [0.8, 1.2] h in the order of the golden-ratio (Weyl) sequence:
    far more regular than Poisson, no ties, no order in time (a constant rate)."""
    gaps = 0.8 + 0.4 * np.modf(np.arange(1, n + 1) * (np.sqrt(5) - 1) / 2)[0]
    times = np.cumsum(gaps)
    return times, float(times[-1] + 1.0)


def _evidence(times: np.ndarray, end: float) -> dict:
    gaps = np.diff(np.r_[0.0, times])
    return {"tests": [reliab.trend_test(times, end=end, method=m) for m in METHODS],
            "crow": reliab.fit_crow_amsaa(times, end=end),
            "weibull": reliab.fit_weibull(gaps, None),
            "distributions": reliab.compare_distributions(gaps, None)}


def test_decide_rule() -> None:
    """Reference (the documented rule)."""
    assert decide([]) == "unknown"
    assert decide(["flat", "flat", "flat", "flat"]) == "flat"
    assert decide(["flat", "rising", "flat"]) == "rising"
    assert decide(["falling", "falling"]) == "falling"
    assert decide(["falling", "rising", "flat"]) == "mixed"


def test_regular_gaps_without_trend_are_flat_not_wear_out() -> None:
    times, end = _regular()
    ev = _evidence(times, end)
    assert ev["weibull"].params.loc["shape", "low"] > 1  # the renewal fit alone says "wear-out"
    v = reliab.trend_verdict(**ev)
    assert v.verdict == "flat"
    assert v.statement.startswith("Interruption rate flat")
    assert "0 of 3 trend tests" in v.statement
    text = v.text()
    assert "not wear-out" in text and "more regular than a Poisson process" in text
    assert "Ascher & Feingold 1984" in text
    assert not failures(v)


def test_power_law_beta_two_is_rising() -> None:
    n, end = 100, 1000.0
    times = end * np.sqrt((np.arange(1, n + 1) - 0.5) / n)
    v = reliab.trend_verdict(**_evidence(times, end))
    assert v.verdict == "rising"
    crow = v.evidence.set_index("evidence").loc["Crow-AMSAA beta"]
    assert crow["estimate"] == pytest.approx(2.0, rel=0.1) and crow["low"] > 1
    assert v.evidence.set_index("evidence").loc["Laplace test", "estimate"] == pytest.approx(
        (2 / 3 - 0.5) * np.sqrt(12 * n), rel=0.01)
    assert not failures(v)


def test_renewal_fit_alone_is_no_verdict() -> None:
    times, end = _regular()
    ev = _evidence(times, end)
    with pytest.raises(reliab.InsufficientDataError, match="renewal fit alone"):
        reliab.trend_verdict(weibull=ev["weibull"], distributions=ev["distributions"])


def test_invariants_catch_a_verdict_against_its_evidence() -> None:
    times, end = _regular()
    v = reliab.trend_verdict(**_evidence(times, end))
    wrong = dataclasses.replace(v, verdict="rising")
    assert [c.name for c in failures(wrong)] == ["verdict_follows_evidence"]
    ev = v.evidence.copy()
    ev.loc[ev["evidence"] == "Crow-AMSAA beta", "estimate"] = 99.0
    assert "evidence_interval_contains_estimate" in [
        c.name for c in failures(dataclasses.replace(v, evidence=ev))]


def test_weibull_reading_no_longer_says_wear_out_alone() -> None:
    """Regression (issue 20 item 4): the Weibull section said "wear-out (increasing hazard)"
    for gaps whose rate had no trend."""
    times, end = _regular()
    fit = _evidence(times, end)["weibull"]
    text = reading(fit)
    assert "wear-out" not in text.replace("not wear-out", "")
    assert "renewal" in text and "trend" in text


def test_report_summary_and_trend_lead_state_the_one_verdict() -> None:
    """Regression: the executive summary and the trend section lead carry the verdict."""
    from reliab.report import build_report, render_html

    times, end = _regular()
    ev = _evidence(times, end)
    t0 = pd.Timestamp("2024-01-01", tz="UTC")
    inter = reliab.schema.conform(pd.DataFrame({
        "time": t0 + pd.to_timedelta(times, unit="h"), "job_id": [str(i) for i in range(times.size)],
        "hosts": "node001", "planned": False, "category": "Faulty GPU", "component": "GPU",
        "attribution": "rule:test", "downtime_h": np.nan, "lost_gpu_hours": np.nan}), "interruptions")
    rates = reliab.estimate_rates(inter, by=["component", "category"], gpu_days=8.0 * end / 24,
                                  job_hours=end)
    verdict = reliab.trend_verdict(**ev)
    results = {"rates": rates, "tbi_weibull": ev["weibull"], "tbi_distributions": ev["distributions"],
               "crow_amsaa": ev["crow"], "trend_laplace": ev["tests"][0], "trend_verdict": verdict}
    html = render_html(build_report(results))
    summary = html.split('id="summary"')[1].split('id="taxonomy"')[0]
    assert "Interruption rate flat" in summary
    trends = html.split('id="trends"')[1]
    assert trends.count("Interruption rate flat") >= 1 and "not wear-out" in trends
    tbi = html.split('id="tbi"')[1].split('id="trends"')[0]
    assert "wear-out (increasing hazard)" not in tbi
