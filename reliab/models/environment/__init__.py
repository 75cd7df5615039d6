"""Environment models: power swings, clock events, throughput and failures against temperature.

Functions return frozen result objects (``summary()``, ``to_dict()``, ``_repr_html_``,
``plot(ax=None)``) except :func:`detect_power_swings`, which returns the swing table.
Names resolve lazily from the private modules below.
"""

from __future__ import annotations

from reliab._lazy import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
