"""Statistical models of reliab: rates, survival, competing risks, recurrent events, lemons,
environment (temperature, power, throughput).

Every function returns a frozen result object with ``summary()``, ``to_dict()`` and
``_repr_html_()``.  Names are resolved lazily from the private modules below.
"""

from __future__ import annotations

from reliab._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "estimate_mtbf": "reliab.models.mtbf",
    "MTBFResult": "reliab.models.mtbf",
    "estimate_rates": "reliab.models.rates",
    "RatesResult": "reliab.models.rates",
    "compare_rates": "reliab.models.rates",
    "RateComparison": "reliab.models.rates",
    "fit_weibull": "reliab.models.weibull",
    "WeibullFit": "reliab.models.weibull",
    "fit_parametric": "reliab.models.parametric",
    "compare_distributions": "reliab.models.parametric",
    "fit_aft": "reliab.models.aft",
    "AFTFit": "reliab.models.aft",
    "fit_gengamma": "reliab.models.gengamma",
    "GenGammaFit": "reliab.models.gengamma",
    "fit_weibull3": "reliab.models.weibull3",
    "Weibull3Fit": "reliab.models.weibull3",
    "estimate_turnbull": "reliab.models.turnbull",
    "infer_resolution": "reliab.models.resolution",
    "gap_bounds": "reliab.models.resolution",
    "estimate_kaplan_meier": "reliab.models.nonparametric",
    "estimate_nelson_aalen": "reliab.models.nonparametric",
    "logrank_test": "reliab.models.logrank",
    "estimate_rmst": "reliab.models.rmst",
    "fit_fine_gray": "reliab.models.finegray",
    "gray_test": "reliab.models.graytest",
    "fit_cox": "reliab.models.cox",
    "fit_cox_formula": "reliab.models.cox_formula",
    "design_matrix": "reliab.models.formula",
    "analyze_lifetimes": "reliab.models.lifetimes",
    "lifetime_table": "reliab.models.lifetimes",
    "estimate_cumulative_incidence": "reliab.models.competing",
    "cumulative_incidence": "reliab.models.competing",  # deprecated alias
    "estimate_mcf": "reliab.models.mcf",
    "compare_mcf": "reliab.models.mcf",
    "fit_crow_amsaa": "reliab.models.growth",
    "crow_amsaa": "reliab.models.growth",  # deprecated alias
    "fit_duane": "reliab.models.duane",
    "fit_power_law_nhpp": "reliab.models.powerlaw",
    "trend_test": "reliab.models.trend",
    "trend_verdict": "reliab.models.verdict",
    "TrendVerdict": "reliab.models.verdict",
    "find_lemons": "reliab.models.lemons",
    # environment (reliab.models.environment)
    "detect_power_swings": "reliab.models.environment",
    "analyze_power_swings": "reliab.models.environment",
    "fit_throughput": "reliab.models.environment",
    "diurnal_amplitude": "reliab.models.environment",
    "fit_failure_glm": "reliab.models.environment",
    "analyze_environment": "reliab.models.environment",
    "compare_periods": "reliab.models.periods",
    "estimate_period_rates": "reliab.models.periods",
    "PeriodComparison": "reliab.models.periods",
    "PeriodRatesResult": "reliab.models.periods",
    # result classes
    "ParametricFit": "reliab.models.parametric",
    "DistributionComparison": "reliab.models.parametric",
    "KaplanMeierResult": "reliab.models.nonparametric",
    "NelsonAalenResult": "reliab.models.nonparametric",
    "KaplanMeierGroups": "reliab.models.km_groups",
    "LogRankResult": "reliab.models.logrank",
    "RMSTResult": "reliab.models.rmst",
    "FineGrayFit": "reliab.models.finegray",
    "GrayTestResult": "reliab.models.graytest",
    "CoxFit": "reliab.models.cox",
    "CumulativeIncidenceResult": "reliab.models.competing",
    "MCFResult": "reliab.models.mcf",
    "MCFComparison": "reliab.models.mcf",
    "CrowAMSAAResult": "reliab.models.growth",
    "DuaneResult": "reliab.models.duane",
    "PowerLawNHPPResult": "reliab.models.powerlaw",
    "TrendTestResult": "reliab.models.trend",
    "LemonsResult": "reliab.models.lemons",
    "TurnbullResult": "reliab.models.turnbull",
    "Resolution": "reliab.models.resolution",
    # job-level reliability (reliab.models.jobs)
    "job_mttf": "reliab.models.jobs.mttf",
    "estimate_job_mttf": "reliab.models.jobs.mttf",
    "expected_ettr": "reliab.models.jobs.ettr",
    "optimal_checkpoint_interval": "reliab.models.jobs.checkpoint",
    "plan_checkpoints": "reliab.models.jobs.checkpoint",
    "simulate_job": "reliab.models.jobs.simulate",
    "failure_cost": "reliab.models.jobs.cost",
    "replay_mitigations": "reliab.models.jobs.replay",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
