"""reliab: failure-log statistics and reliability analytics for large GPU training clusters.

Public names are listed here, once; implementation modules are private and may move.
Imports are lazy so that ``import reliab`` stays fast and the CLI starts quickly.
"""

from __future__ import annotations

import importlib
from typing import Any

from reliab import _allocator
from reliab._version import __version__

# polars' allocator returns freed memory after 100 ms (unless set by the user, or polars is
# already loaded): the peak of a large log's ingest stays bounded (reliab._allocator)
_allocator.configure()

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "ReliabError": "reliab.errors",
    "ParseError": "reliab.errors",
    "SchemaError": "reliab.errors",
    "InsufficientDataError": "reliab.errors",
    "UnknownFormatError": "reliab.errors",
    "InputFileError": "reliab.errors",
    "SourceError": "reliab.errors",
    "DistributedError": "reliab.errors",
    "ReliabWarning": "reliab.errors",
    # schema
    "validate": "reliab.schema",
    # ingest
    "ingest": "reliab.io",
    "IngestResult": "reliab.io",
    "available_sources": "reliab.io",
    "live_sources": "reliab.io.sources",
    # taxonomy
    "classify": "reliab.taxonomy",
    "classify_failures": "reliab.taxonomy",
    "explain": "reliab.taxonomy",
    "load_rules": "reliab.taxonomy",
    "attribute": "reliab.models.jobs._costed",
    "job_outcomes": "reliab.models.jobs._costed",
    "JobOutcomes": "reliab.taxonomy",
    "table5": "reliab.taxonomy.vocabulary",
    "xid_catalog": "reliab.taxonomy.xid",
    # datasets
    "simulate_cluster": "reliab.datasets",
    "load_llama3_sample": "reliab.datasets",
    "sample_path": "reliab.datasets",
    "write_fleet": "reliab.datasets",
    # models: rates and MTBF
    "estimate_mtbf": "reliab.models",
    "estimate_rates": "reliab.models",
    "compare_rates": "reliab.models",
    "build_exposure": "reliab.prepare",
    "fleet_exposure": "reliab.prepare",
    "node_hours": "reliab.prepare",
    "suggest_ticket_categories": "reliab.taxonomy.suggest",
    "diagnose_flight_recorder": "reliab.io.formats.flight_recorder",
    # models: survival
    "fit_weibull": "reliab.models",
    "fit_parametric": "reliab.models",
    "compare_distributions": "reliab.models",
    "fit_aft": "reliab.models",
    "fit_gengamma": "reliab.models",
    "fit_weibull3": "reliab.models",
    "estimate_turnbull": "reliab.models",
    "infer_resolution": "reliab.models",
    "gap_bounds": "reliab.models",
    "estimate_kaplan_meier": "reliab.models",
    "logrank_test": "reliab.models",
    "estimate_rmst": "reliab.models",
    "fit_fine_gray": "reliab.models",
    "gray_test": "reliab.models",
    "estimate_nelson_aalen": "reliab.models",
    "fit_cox": "reliab.models",
    "fit_cox_formula": "reliab.models",
    "design_matrix": "reliab.models",
    "analyze_lifetimes": "reliab.models",
    "lifetime_table": "reliab.models",
    "estimate_cumulative_incidence": "reliab.models",
    "cumulative_incidence": "reliab.models",  # deprecated alias of estimate_cumulative_incidence
    # models: recurrent events and trends
    "estimate_mcf": "reliab.models",
    "compare_mcf": "reliab.models",
    "fit_crow_amsaa": "reliab.models",
    "crow_amsaa": "reliab.models",  # deprecated alias of fit_crow_amsaa
    "fit_duane": "reliab.models",
    "fit_power_law_nhpp": "reliab.models",
    "trend_test": "reliab.models",
    "trend_verdict": "reliab.models",
    "find_lemons": "reliab.models",
    "predict_failures": "reliab.predict",
    "FailureRiskResult": "reliab.predict",
    # environment: alignment, windows, power, throughput, diurnal cycle, failures
    "align_asof": "reliab.align",
    "clean_times": "reliab.align",
    "telemetry_windows": "reliab.windows",
    "window_partials": "reliab.windows",
    "combine_partials": "reliab.windows",
    "finalize_windows": "reliab.windows",
    "count_events": "reliab.windows",
    "lag_windows": "reliab.windows",
    "counting_process_rows": "reliab.windows",
    "detect_power_swings": "reliab.models.environment",
    "label_power_swings": "reliab.models.environment",
    "analyze_power_swings": "reliab.models.environment",
    "summarize_clock_events": "reliab.models.environment",
    "fit_throughput": "reliab.models.environment",
    "diurnal_amplitude": "reliab.models.environment",
    "fit_failure_glm": "reliab.models.environment",
    "aggregate_cells": "reliab.models.environment",
    "analyze_environment": "reliab.models.environment",
    "simulate_environment": "reliab.datasets",
    "PowerSwingResult": "reliab.models.environment",
    "ClockEventSummary": "reliab.models.environment",
    "ThroughputFit": "reliab.models.environment",
    "DiurnalResult": "reliab.models.environment",
    "FailureGLMFit": "reliab.models.environment",
    # result classes (every public function's return type; one contract, tests/test_result_contract.py)
    "NotAvailable": "reliab._result",
    "MTBFResult": "reliab.models",
    "RatesResult": "reliab.models",
    "RateComparison": "reliab.models",
    "WeibullFit": "reliab.models",
    "ParametricFit": "reliab.models",
    "DistributionComparison": "reliab.models",
    "AFTFit": "reliab.models",
    "GenGammaFit": "reliab.models",
    "Weibull3Fit": "reliab.models",
    "KaplanMeierResult": "reliab.models",
    "KaplanMeierGroups": "reliab.models",
    "LogRankResult": "reliab.models",
    "RMSTResult": "reliab.models",
    "FineGrayFit": "reliab.models",
    "GrayTestResult": "reliab.models",
    "NelsonAalenResult": "reliab.models",
    "CoxFit": "reliab.models",
    "CumulativeIncidenceResult": "reliab.models",
    "MCFResult": "reliab.models",
    "MCFComparison": "reliab.models",
    "CrowAMSAAResult": "reliab.models",
    "DuaneResult": "reliab.models",
    "PowerLawNHPPResult": "reliab.models",
    "TrendTestResult": "reliab.models",
    "TrendVerdict": "reliab.models",
    "LemonsResult": "reliab.models",
    "TurnbullResult": "reliab.models",
    "TicketSuggestions": "reliab.taxonomy.suggest",
    # models: quarter over quarter
    "compare_periods": "reliab.models",
    "estimate_period_rates": "reliab.models",
    "PeriodComparison": "reliab.models",
    "PeriodRatesResult": "reliab.models",
    # reports for the user's own cluster (reliab report)
    "Fleet": "reliab.study",
    "fleet_facts": "reliab.study",
    "analyze": "reliab.study",
    "run_report": "reliab.study",
    "ReportRun": "reliab.study",
    "load_config": "reliab.study",
    "load_archive": "reliab.study",
    # models: job-level reliability
    "job_mttf": "reliab.models",
    "estimate_job_mttf": "reliab.models",
    "expected_ettr": "reliab.models",
    "optimal_checkpoint_interval": "reliab.models",
    "plan_checkpoints": "reliab.models",
    "simulate_job": "reliab.models",
    "failure_cost": "reliab.models",
    "replay_mitigations": "reliab.models",
    # fleet scale on Dask
    "reduce_telemetry": "reliab.fleet",
    "rates_by_group": "reliab.fleet",
    "fit_failure_glm_cells": "reliab.fleet",
    # report
    "demo": "reliab._demo",
    "build_report": "reliab.report",
    "write_html": "reliab.report",
    "write_pdf": "reliab.report",
}

__all__ = ["__version__", *_EXPORTS]


_SUBPACKAGES = ("datasets", "ingest", "models", "report", "taxonomy", "schema", "errors", "plots", "prepare",
                "study", "fleet")


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None and name in _SUBPACKAGES:
        return importlib.import_module(f"reliab.{name}")
    if module is None:
        raise AttributeError(f"module 'reliab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
