"""Statistical models of reliab: rates, survival, competing risks, recurrent events, lemons,
environment (temperature, power, throughput).

Every function returns a frozen result object with ``summary()``, ``to_dict()`` and
``_repr_html_()``.  Names are resolved lazily from the private modules below.
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "estimate_kaplan_meier": "reliab.models.nonparametric",
    "estimate_nelson_aalen": "reliab.models.nonparametric",
    "fit_cox": "reliab.models.cox",
    "cumulative_incidence": "reliab.models.competing",
    "estimate_mcf": "reliab.models.mcf",
    "compare_mcf": "reliab.models.mcf",
    "crow_amsaa": "reliab.models.growth",
    "trend_test": "reliab.models.trend",
    "find_lemons": "reliab.models.lemons",
    # environment (reliab.models.environment)
    "detect_power_swings": "reliab.models.environment",
    "analyze_power_swings": "reliab.models.environment",
    "fit_throughput": "reliab.models.environment",
    "diurnal_amplitude": "reliab.models.environment",
    "fit_failure_glm": "reliab.models.environment",
    "analyze_environment": "reliab.models.environment",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reliab.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
