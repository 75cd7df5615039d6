"""Job-level reliability: MTTF against job size, ETTR, checkpoint planning, failure cost, replay.

* :func:`job_mttf`, :func:`estimate_job_mttf` — a job as a series system of its nodes;
* :func:`expected_ettr` — Kokolis et al.'s closed form and the exact renewal expectation;
* :func:`optimal_checkpoint_interval`, :func:`plan_checkpoints` — Young, Daly, simulated
  optimum, what-if grids over GPU count × interval × restart time;
* :func:`simulate_job` — vectorised Monte Carlo of a checkpointing job;
* :func:`failure_cost` — observed ETTR and lost GPU-hours of an ingested run;
* :func:`with_costs` — downtime, restart, lost work and lost GPU-hours of each attributed
  interruption (the step after :mod:`reliab.taxonomy`'s attribution);
* :func:`replay_mitigations` — the same run under changed parameters;
* :func:`estimate_end_states` — end-state shares, failures against job size, time to failure.

Names resolve lazily so that importing the package stays cheap.
"""

from __future__ import annotations

from reliab._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "job_mttf": "reliab.models.jobs.mttf",
    "estimate_job_mttf": "reliab.models.jobs.mttf",
    "JobMTTFResult": "reliab.models.jobs.mttf",
    "observed_node_rate": "reliab.models.jobs.mttf",
    "expected_ettr": "reliab.models.jobs.ettr",
    "optimal_checkpoint_interval": "reliab.models.jobs.checkpoint",
    "plan_checkpoints": "reliab.models.jobs.checkpoint",
    "PlanResult": "reliab.models.jobs.checkpoint",
    "PUBLISHED_RATES": "reliab.models.jobs.checkpoint",
    "simulate_job": "reliab.models.jobs.simulate",
    "SimulationResult": "reliab.models.jobs.simulate",
    "FailureModel": "reliab.models.jobs._failures",
    "FailureProcess": "reliab.models.jobs._failures",
    "node_model": "reliab.models.jobs._failures",
    "category_model": "reliab.models.jobs._failures",
    "fitted_model": "reliab.models.jobs._failures",
    "failure_cost": "reliab.models.jobs.cost",
    "FailureCostResult": "reliab.models.jobs.cost",
    "interruption_costs": "reliab.models.jobs._timeline",
    "with_costs": "reliab.models.jobs._costed",
    "replay_mitigations": "reliab.models.jobs.replay",
    "ReplayResult": "reliab.models.jobs.replay",
    "Scenario": "reliab.models.jobs.replay",
    "estimate_end_states": "reliab.models.jobs.states",
    "JobEndStates": "reliab.models.jobs.states",
    "to_hours": "reliab.models.jobs._durations",
    "DEFAULT_RESTARTS_MIN": "reliab.models.jobs.checkpoint",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
