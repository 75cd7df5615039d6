"""Where each result goes in the report, what it is called and how it reads: data, not code.

The report's sections are :data:`SECTIONS`, in order; each shows only when it has something
to show.  A result reaches a section by, first, an :class:`Entry` wrapper (explicit
placement), then its key in :data:`BY_KEY`, then a ``report_section`` attribute of its
class, then its class name in :data:`BY_TYPE`; anything else lands in "Further results".
So a new model renders without any change here, and one row places it properly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reliab.report.formatting import fmt_hours, fmt_interval, fmt_num, fmt_p


@dataclass(frozen=True)
class SectionSpec:
    """A report section: anchor key, heading and an optional lead paragraph."""

    key: str
    title: str
    intro: str = ""


@dataclass(frozen=True)
class Entry:
    """A result with explicit placement in the report.

    Parameters
    ----------
    result : object
        Any result (the contract of :mod:`reliab._result`) or :class:`~reliab.NotAvailable`.
    section : str
        Key of a section in :data:`SECTIONS` (unknown keys go to ``"other"``).
    title, caption : str
        Heading of the result's blocks and the figure's caption.
    columns : tuple of str
        Summary columns to show (all when empty).
    """

    result: Any
    section: str = "other"
    title: str = ""
    caption: str = ""
    columns: tuple[str, ...] = ()


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("summary", "Executive summary"),
    SectionSpec("taxonomy", "Root causes"),
    SectionSpec("rates", "Rates and MTBF",
                "Interruptions per unit of exposure with exact Poisson intervals, per component "
                "class and per category. MTBF is GPU-hours at risk per interruption; MTTI the "
                "wall-clock hours between interruptions of a job spanning the whole fleet."),
    SectionSpec("tbi", "Time between interruptions",
                "Gaps between consecutive unexpected interruptions of the fleet (the last gap, "
                "to the end of the window, is censored), fitted as a renewal process: the "
                "Weibull shape says how spread the gaps are (below 1: bursts; 1: Poisson; above "
                "1: more regular than Poisson). Whether the rate falls or rises over the window "
                "is a question for the point process (Trends), not for this fit."),
    SectionSpec("survival", "Survival of job allocations",
                "How long a job allocation runs before an unexpected interruption ends it; "
                "allocations that ended otherwise are censored."),
    SectionSpec("competing", "Cumulative incidence by component",
                "The probability that an allocation has been interrupted by each component class "
                "by a given run time, with the other classes as competing risks."),
    SectionSpec("trends", "Trends: burning in or wearing out?"),
    SectionSpec("lemons", "Lemon nodes",
                "Nodes with more hardware interruptions than the fleet's rate predicts, with the "
                "evidence behind each."),
    SectionSpec("prediction", "Which node fails next",
                "Risk of a hardware interruption per node from precursor signals, scored out of "
                "sample on rolling-origin folds beside three baselines; the drain curve replays "
                "draining the top k nodes each week on these logs."),
    SectionSpec("downtime", "Downtime, lost GPU-hours and ETTR"),
    SectionSpec("jobs", "Job-level reliability"),
    SectionSpec("environment", "Environment"),
    SectionSpec("change", "Change since the previous period"),
    SectionSpec("other", "Further results"),
    SectionSpec("data-quality", "Data quality"),
    SectionSpec("methods", "Methods, versions and inputs"),
)
SECTION_KEYS = tuple(s.key for s in SECTIONS)

RATE_COLUMNS = ("component", "category", "count", "share_pct", "rate_per_1k_gpu_days",
                "rate_per_1k_gpu_days_low", "rate_per_1k_gpu_days_high", "mtbf_gpu_hours",
                "mtbf_gpu_hours_low", "mtbf_gpu_hours_high", "mtti_job_hours", "mtti_job_hours_low",
                "mtti_job_hours_high")

#: result key (as :func:`reliab.study.analyze` names it) -> (section, title, caption, columns)
BY_KEY: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "rates_by_component": ("rates", "Rates and MTBF per component class",
                           "Dots: estimates; bars: exact intervals (log scale). A wide bar means "
                           "few events, not a high rate.", RATE_COLUMNS),
    "rates": ("rates", "Rates per category", "Rate per 1,000 GPU-days per category (log scale).",
              RATE_COLUMNS),
    "exposure_coverage": ("rates", "Exposure against the fleet", "", ()),
    "tbi_weibull": ("tbi", "Weibull fit", "Weibull probability plot: points near the line mean "
                    "the Weibull model fits.", ()),
    "tbi_distributions": ("tbi", "Which distribution fits best", "AIC difference to the best "
                          "fit; below 2 the data cannot tell the models apart.", ()),
    "job_km": ("survival", "Kaplan-Meier survival", "Probability that an allocation is still "
               "running after t hours; band: pointwise interval.", ()),
    "job_logrank": ("survival", "Survival by job size: log-rank test", "Observed against expected "
                    "interruptions per job-size class (nodes per allocation) if size made no "
                    "difference.", ()),
    "job_rmst": ("survival", "Restricted mean run time by job size", "Mean hours an allocation "
                 "runs before an interruption, up to the horizon every class reaches; bars: "
                 "intervals.", ()),
    "job_gray": ("competing", "Cumulative incidence across job sizes: Gray's test", "Per "
                 "component class: is the probability of being interrupted by it the same for "
                 "every job-size class?", ()),
    "job_finegray": ("competing", "Fine-Gray regression on job size", "Subdistribution hazard "
                     "ratio of the commonest interrupting component per doubling of the nodes "
                     "per allocation (log scale).", ()),
    "job_cif": ("competing", "Cumulative incidence", "Stacked cumulative incidence per class.", ()),
    "crow_amsaa": ("trends", "Crow-AMSAA growth model", "Cumulative interruptions against time "
                   "(log-log); a straight line is the power law, its slope is beta.", ()),
    "node_mcf": ("trends", "Mean cumulative function per node", "Mean number of hardware "
                 "interruptions per node by time in the window, with pointwise bounds.", ()),
    "trend_verdict": ("trends", "Verdict: is the interruption rate falling, flat or rising?", "", ()),
    "trend_laplace": ("trends", "Laplace test", "", ()),
    "trend_mil_hdbk_189": ("trends", "MIL-HDBK-189 test", "", ()),
    "trend_reverse_arrangement": ("trends", "Reverse arrangement test", "", ()),
    "lemons": ("lemons", "Lemon candidates", "Top nodes by the multi-signal score; red: flagged "
               "by the excess-failure test.", ("rank", "host", "lemon", "failures", "expected",
                                               "ratio", "ratio_low", "ratio_high", "qvalue",
                                               "evidence")),
    "downtime": ("downtime", "Cost of interruptions", "", ()),
    # failure records (reliab.study._failures): with or without job records
    "failure_rates_by_system": ("rates", "Failure rates and MTBF per system (failure records)",
                                "Failures per 1,000 unit-days over each system's own units; MTBF in "
                                "unit-hours per failure, exact intervals.", ()),
    "failure_rates_by_component": ("rates", "Failure rates and MTBF per component (failure records)", "", ()),
    "failure_repair_times": ("downtime", "MTTR and repair-time distributions per cause (failure records)",
                             "Time to repair per recorded cause, with the distributions ranked by AIC.", ()),
    "failure_availability": ("downtime", "Availability per system (failure records)", "", ()),
    "failure_gaps": ("tbi", "Time between failures per system (failure records)",
                     "Weibull shape of the gaps per system (below 1: bursts) and the trend of the "
                     "failure times (Laplace test, Crow-AMSAA beta).", ()),
    "failure_trends": ("trends", "Trends per system (failure records)", "", ()),
    "failure_lemons": ("lemons", "Lemon nodes (failure records)", "Nodes with more hardware failures than "
                       "their own system's rate predicts.", ("rank", "host", "lemon", "failures", "expected",
                                                             "ratio", "ratio_low", "ratio_high", "qvalue")),
    "period_comparison": ("change", "Rate ratio per category",
                          "Current / previous rate with exact intervals; red: changed after the "
                          "Benjamini-Hochberg adjustment.", ("category", "count_previous",
                                                            "count_current", "ratio", "low",
                                                            "high", "pvalue", "qvalue",
                                                            "changed")),
    "period_rates": ("change", "Rates per period and lifetime",
                     "Backblaze-style table: each period and all periods pooled.", ()),
    # job-level and environment results (reliab.models.jobs, reliab.models.environment)
    "job_costs": ("downtime", "Cost of interruptions by category", "", ()),
    "replay": ("jobs", "What each mitigation would have given", "", ()),
    "job_mttf": ("jobs", "Job MTTF against job size", "", ()),
    "plan": ("jobs", "Checkpoint interval", "", ()),
    "environment": ("environment", "Environment analyses", "", ()),
    # unit lives from inventories and replacement logs (reliab.models.lifetimes)
    "unit_survival": ("survival", "Survival of unit lives per kind and location",
                      "Kaplan-Meier per group with delayed entry; survival at one year.", ()),
    "unit_removals": ("competing", "Unit removals by reason",
                      "Cumulative incidence of each removal reason (Aalen-Johansen).", ()),
    "unit_cox": ("survival", "Hazard ratios of unit lives by kind, batch and location",
                 "Cox regression; each level against its reference level (see the notes).", ()),
    "unit_weibull": ("survival", "Weibull fit of unit lives per batch", "", ()),
}

#: result class name -> section, for results given under keys of their own
BY_TYPE: dict[str, str] = {
    "RatesResult": "rates", "MTBFResult": "rates", "RateComparison": "change",
    "WeibullFit": "tbi", "ParametricFit": "tbi", "DistributionComparison": "tbi",
    "KaplanMeierResult": "survival", "NelsonAalenResult": "survival",
    "KaplanMeierGroups": "survival", "LogRankResult": "survival", "RMSTResult": "survival",
    "FineGrayFit": "competing", "GrayTestResult": "competing", "CoxFit": "survival",
    "CumulativeIncidenceResult": "competing", "MCFResult": "trends", "MCFComparison": "trends",
    "CrowAMSAAResult": "trends", "TrendTestResult": "trends", "TrendVerdict": "trends", "LemonsResult": "lemons",
    "PeriodComparison": "change", "PeriodRatesResult": "change",
    "FailureCost": "downtime", "MitigationReplay": "jobs", "JobMTTF": "jobs",
    "CheckpointPlan": "jobs", "EnvironmentStudy": "environment",
    "GroupedSurvival": "survival", "GroupedWeibull": "survival",
    "FailureRates": "rates", "RepairTimes": "downtime", "Availability": "downtime", "FailureGaps": "tbi",
    "FailureTrends": "trends",
}


def _interval(result: Any, name: str) -> str:
    row = result.summary().loc[name]
    return fmt_interval(row["estimate"], row["low"], row["high"])


def _as_gaps(r: Any) -> Any:
    """The fit read as a renewal fit of gaps (never as ageing: Ascher & Feingold 1984)."""
    return r if r.durations == "gaps" else dataclasses.replace(r, durations="gaps")


def _weibull(r: Any) -> str:
    b10 = r.quantities.loc["b10_life"]
    return (f"Shape {_interval(r, 'shape')}: {_as_gaps(r).shape_meaning}; whether the rate rises or falls "
            f"is the trend verdict's question. Scale {fmt_hours(r.scale)}; "
            f"B10 life (10% of gaps are shorter) {fmt_hours(b10['estimate'])} "
            f"[{fmt_hours(b10['low'])}, {fmt_hours(b10['high'])}].")


def _crow(r: Any) -> str:
    lo, hi = r.params.loc["beta", ["low", "high"]]
    verdict = ("improving (interruptions thin out)" if hi < 1 else "worsening (interruptions "
               "bunch up)" if lo > 1 else "no clear growth or decay (the interval contains 1)")
    return f"beta = {_interval(r, 'beta')}: {verdict}."


def _trend(r: Any) -> str:
    return f"{r.method}: statistic {fmt_num(r.statistic)}, p = {fmt_p(r.pvalue)}; trend: {r.trend}."


def _lemons(r: Any) -> str:
    flagged = r.lemons
    return (f"{len(flagged)} of {r.n_nodes:,} nodes flagged at a false discovery rate of "
            f"{r.fdr:.0%}" + (f": {', '.join(flagged[:10])}." if flagged else "."))


def _km(r: Any) -> str:
    return f"Median allocation lifetime before an interruption: {fmt_hours(r.median())}."


def _logrank(r: Any) -> str:
    verdict = "differs" if r.p_value < 0.05 else "does not differ detectably"
    return (f"Survival {verdict} between the groups ({r.method}: chi-square {r.chisq:.3g} on "
            f"{r.df} df, p = {r.p_value:.2g}).")


def _rmst(r: Any) -> str:
    parts = [f"{g}: {fmt_hours(v)}" for g, v in zip(r.table["group"], r.table["rmst"], strict=True)]
    return f"Mean run time up to {fmt_hours(r.tau)}: {'; '.join(parts)}."


def _gray(r: Any) -> str:
    hit = r.table.loc[r.table["p_value"] < 0.05, "cause"].astype(str).tolist()
    return (f"Cumulative incidence differs between groups for {', '.join(hit)} (Gray's test, "
            "p < 0.05)." if hit else "No component's cumulative incidence differs detectably "
            "between groups (Gray's test, p >= 0.05).")


def _comparison(r: Any) -> str:
    changed = r.changed
    return (f"{', '.join(changed)} changed significantly." if changed else
            "No category changed significantly after adjusting for the number of categories.")


def _coverage(r: Any) -> str:
    if not r.adequate:
        return f"GPU-level MTBF and job MTTF are not shown: {r.reason}."
    if r.coverage != r.coverage:  # NaN: no host names
        return "No host names in the input: whether the exposure covers the fleet is not known."
    return (f"The exposure is {100 * r.coverage:,.0f}% of the GPU-time of the {r.n:,} hosts seen "
            "in the logs: GPU-level results are shown.")


def _distributions(r: Any) -> str:
    return f"Best by AIC: {r.best.distribution}."


def _repairs(r: Any) -> str:
    t = r.summary().set_index(r.by)
    best = t["best"].dropna()
    common = best.value_counts().index[0] if len(best) else "none"
    return (f"MTTR {fmt_hours(t.loc['All', 'mttr_h'])} (median {fmt_hours(t.loc['All', 'median_h'])}) over "
            f"{r.n:,} repairs; best repair-time distribution by AIC for most causes: {common}.")


def _availability(r: Any) -> str:
    row = r.summary().set_index("system").loc["All"]
    return (f"Inherent availability of all systems {row['inherent']:.4%} [{row['inherent_low']:.4%}, "
            f"{row['inherent_high']:.4%}]; observed uptime {row['observed']:.4%}.")


def _failure_gaps(r: Any) -> str:
    t = r.summary()
    below = int((t["shape_high"] < 1).sum())
    return (f"Weibull shape of the gaps between failures below 1 (bursts, decreasing hazard) in {below} of "
            f"{len(t)} systems; {r.zero_gaps:,} zero gaps left out (same-minute failures).")


#: result class name -> one sentence read from the result's own fields
READINGS: dict[str, Callable[[Any], str]] = {
    "WeibullFit": _weibull, "CrowAMSAAResult": _crow, "TrendTestResult": _trend,
    "LemonsResult": _lemons, "KaplanMeierResult": _km, "PeriodComparison": _comparison,
    "LogRankResult": _logrank, "RMSTResult": _rmst, "GrayTestResult": _gray,
    "DistributionComparison": _distributions, "ExposureCoverage": _coverage,
    "RepairTimes": _repairs, "Availability": _availability, "FailureGaps": _failure_gaps,
}


def place(key: str, value: Any) -> tuple[str, str, str, tuple[str, ...], Any]:
    """``(section, title, caption, columns, result)`` of one entry of the results mapping."""
    if isinstance(value, Entry):
        section = value.section if value.section in SECTION_KEYS else "other"
        return section, value.title or key, value.caption, tuple(value.columns), value.result
    if key in BY_KEY:
        section, title, caption, columns = BY_KEY[key]
        return section, title, caption, columns, value
    own = getattr(type(value), "report_section", None)
    section = own if own in SECTION_KEYS else BY_TYPE.get(type(value).__name__, "other")
    title = getattr(value, "what", None) or key.replace("_", " ").capitalize()
    return section, title, "", (), value


def reading(result: Any) -> str:
    """The sentence :data:`READINGS` gives for ``result`` (empty when none or on bad data)."""
    fn = READINGS.get(type(result).__name__)
    if fn is None:
        return ""
    try:
        return fn(result)
    except (KeyError, ValueError, TypeError, AttributeError, IndexError):
        return ""


__all__ = ["BY_KEY", "BY_TYPE", "Entry", "READINGS", "SECTIONS", "SECTION_KEYS", "SectionSpec",
           "place", "reading"]
