"""Environment models: power swings, clock events, throughput and failures against temperature.

Functions return frozen result objects (``summary()``, ``to_dict()``, ``_repr_html_``,
``plot(ax=None)``) except :func:`detect_power_swings`, which returns the swing table.
Names resolve lazily from the private modules below.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "detect_power_swings": "reliab.models.environment.swings",
    "label_power_swings": "reliab.models.environment.swing_labels",
    "analyze_power_swings": "reliab.models.environment.swings",
    "PowerSwingResult": "reliab.models.environment.swings",
    "summarize_clock_events": "reliab.models.environment.clocks",
    "ClockEventSummary": "reliab.models.environment.clocks",
    "decode_clock_events": "reliab.models.environment.clocks",
    "fit_throughput": "reliab.models.environment.throughput",
    "ThroughputFit": "reliab.models.environment.throughput",
    "diurnal_amplitude": "reliab.models.environment.diurnal",
    "DiurnalResult": "reliab.models.environment.diurnal",
    "fit_failure_glm": "reliab.models.environment.failure_glm",
    "FailureGLMFit": "reliab.models.environment.failure_glm",
    "aggregate_cells": "reliab.models.environment.cells",
    "overdispersion_test": "reliab.models.environment.failure_glm",
    "analyze_environment": "reliab.models.environment.study",
    "EnvironmentStudy": "reliab.models.environment.study",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reliab.models.environment' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
