"""The analyses of failure records (schema ``failures``), run with or without scheduler records.

A failure log such as the LANL 1996-2005 release (Schroeder & Gibson, DSN 2006) has units,
failure and repair times and causes, but no jobs: rates and MTBF per system and per component,
MTTR and repair-time distributions per cause, availability, the time between failures per
system with its trend, and lemon nodes all follow from it.  Where job records exist too the
report shows these beside the job-interruption view; they never replace it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from reliab import schema
from reliab._result import NotAvailable

#: key -> what the analysis is, in report order
FAILURE_ANALYSES = {
    "failure_rates_by_system": "failure rates and MTBF per system",
    "failure_rates_by_component": "failure rates and MTBF per component",
    "failure_repair_times": "repair times per cause",
    "failure_availability": "availability per system",
    "failure_gaps": "time between failures per system",
    "failure_trends": "trends of the failure rate per system",
    "failure_lemons": "lemon nodes from failure records",
}


def _lemons(failures: pd.DataFrame, signals: pd.DataFrame, conf_level: float) -> Any:
    """Lemon nodes: each node at risk over its system's window, compared with its own system."""
    from reliab.models.lemons import find_lemons
    from reliab.models.repairs import unit_exposure

    exp = unit_exposure(failures)
    system = failures.drop_duplicates("unit").set_index("unit")["system"].astype("object").fillna("(none)")
    hours = 24.0 * system.map(exp["days"]).astype(float)
    hours = hours[hours > 0]  # units of a system with no time at risk cannot be compared
    return find_lemons(signals, schema.empty("interruptions"), node_hours=hours,
                       failures=failures[failures["unit"].isin(hours.index)], groups=system, conf_level=conf_level)


def analyze_failures(ingest: Any, run: Callable[[str, Callable[[], Any]], Any], *,
                     conf_level: float = 0.95) -> dict[str, Any]:
    """Every failure-record analysis, each a result or a :class:`~reliab.NotAvailable`; none
    (an empty mapping) when the input has no failure records.

    Parameters
    ----------
    ingest : IngestResult
        With a ``failures`` table (empty when the input has no failure records).
    run : callable
        ``run(what, fn)``: ``fn()`` or NotAvailable when the data are too few (as
        :func:`reliab.study.analyze` runs every analysis).
    conf_level : float
        Level of every interval.
    """
    from reliab.models.failure_gaps import fit_failure_gaps
    from reliab.models.repairs import (
        estimate_availability,
        estimate_failure_rates,
        estimate_repair_times,
    )

    failures = getattr(ingest, "failures", None)
    if failures is None or not len(failures):
        return {}  # no failure records: the job-interruption view alone (nothing to say "not available" about)
    hardware = failures[failures["component"].isin(("GPU", "Host", "Network"))]
    fns: dict[str, Callable[[], Any]] = {
        "failure_rates_by_system": lambda: estimate_failure_rates(failures, by="system", conf_level=conf_level),
        "failure_rates_by_component": lambda: estimate_failure_rates(failures, by="component",
                                                                     conf_level=conf_level),
        "failure_repair_times": lambda: estimate_repair_times(failures, by="cause", conf_level=conf_level),
        "failure_availability": lambda: estimate_availability(failures, conf_level=conf_level),
        "failure_gaps": lambda: fit_failure_gaps(failures, conf_level=conf_level),
        "failure_lemons": lambda: _lemons(hardware, ingest.signals, conf_level),
    }
    out = {key: run(FAILURE_ANALYSES[key], fn) for key, fn in fns.items()}
    gaps = out["failure_gaps"]
    out["failure_trends"] = gaps if isinstance(gaps, NotAvailable) else gaps.trends()
    return {key: out[key] for key in FAILURE_ANALYSES}


__all__ = ["FAILURE_ANALYSES", "analyze_failures"]
