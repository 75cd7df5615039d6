"""What each attributed interruption cost: the models step after attribution.

Attribution (:mod:`reliab.taxonomy`) names the cause and the evidence of every job end it
counts; its tables leave ``downtime_h`` and ``lost_gpu_hours`` empty.  This step fills them,
with ``restart_h``, ``lost_work_h`` and ``cost_basis`` beside them, from the allocations'
timeline (:func:`reliab.models.jobs._timeline.interruption_costs`; Kokolis et al., HPCA 2025,
arXiv 2410.21680: "re-training from the last checkpoint to the interruption, and restart
overhead").  :func:`attribute` and :func:`job_outcomes` are the public API: attribution, then
this step.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from reliab.models.jobs._timeline import allocation_progress, interruption_costs, needed_allocations
from reliab.taxonomy import JobOutcomes
from reliab.taxonomy import job_outcomes as _attributed


def add_costs(table: pd.DataFrame, jobs: pd.DataFrame, signals: pd.DataFrame | None,
              *, progress: pd.DataFrame | None = None) -> pd.DataFrame:
    """``table`` (schema ``interruptions``) with its costs filled in and their basis.

    ``downtime_h`` and ``lost_gpu_hours`` are replaced; ``restart_h``, ``lost_work_h`` and
    ``cost_basis`` follow ``lost_gpu_hours``.  ``progress`` is
    :func:`~reliab.models.jobs._timeline.allocation_progress` of ``jobs`` and ``signals``
    when already computed.
    """
    costs = interruption_costs(table, jobs, signals, progress=progress)
    costs["cost_basis"] = costs["cost_basis"].astype(object)  # text, also when no row has any
    out = table.assign(downtime_h=costs.pop("downtime_h"), lost_gpu_hours=costs.pop("lost_gpu_hours"))
    at = out.columns.get_loc("lost_gpu_hours") + 1
    return pd.concat([out.iloc[:, :at], costs, out.iloc[:, at:]], axis=1)


def with_costs(outcomes: JobOutcomes, jobs: pd.DataFrame, signals: pd.DataFrame | None) -> JobOutcomes:
    """``outcomes`` whose ``interruptions`` and ``user_failures`` carry their costs.

    Parameters
    ----------
    outcomes : JobOutcomes
        What :func:`reliab.taxonomy.job_outcomes` decided and attributed.
    jobs, signals : pandas.DataFrame
        The tables attributed (schemas ``jobs`` and ``signals``); the signals' ``train:*``
        checkpoint lines give the checkpoint and resume times.

    Returns
    -------
    JobOutcomes
        The same result with the cost columns of :func:`add_costs` filled.
    """
    tables = [outcomes.interruptions, outcomes.user_failures]
    used = [c for c in ("job_id", "name", "start", "end", "ngpus") if c in jobs]
    # the allocations these costs read, not a timeline of every job
    progress = allocation_progress(jobs.loc[needed_allocations(jobs, signals, tables), used], signals)
    return dataclasses.replace(
        outcomes,
        interruptions=add_costs(outcomes.interruptions, jobs, signals, progress=progress),
        user_failures=add_costs(outcomes.user_failures, jobs, signals, progress=progress))


def job_outcomes(signals: pd.DataFrame, jobs: pd.DataFrame, **options: Any) -> JobOutcomes:
    """Decide and attribute every ended job (:func:`reliab.taxonomy.job_outcomes`), then cost it.

    Parameters
    ----------
    signals, jobs : pandas.DataFrame
        Schemas ``signals`` and ``jobs``.
    **options
        ``policy``, ``job_name``, ``rules``, ``before``, ``after``, ``job_filter``,
        ``storm_gap``, ``sources``: as for :func:`reliab.taxonomy.job_outcomes`.

    Returns
    -------
    JobOutcomes
        Interruptions and user failures with ``downtime_h``, ``restart_h``, ``lost_work_h``,
        ``lost_gpu_hours`` and ``cost_basis`` (:func:`add_costs`).

    References
    ----------
    Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
    Clusters", HPCA 2025 (arXiv 2410.21680), §III.
    """
    return with_costs(_attributed(signals, jobs, **options), jobs, signals)


def attribute(signals: pd.DataFrame, jobs: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """One row per job interruption with its root cause, evidence and costs.

    Parameters
    ----------
    signals, jobs : pandas.DataFrame
        Schemas ``signals`` and ``jobs``.
    **options
        ``policy``, ``job_name``, ``rules``, ``before``, ``after``, ``job_filter``,
        ``storm_gap``: as for :func:`reliab.taxonomy.attribute`.

    Returns
    -------
    pandas.DataFrame
        :func:`reliab.taxonomy.attribute`'s table (schema ``interruptions``) with
        ``downtime_h`` (the job's end to the start of the next job with the same name),
        ``restart_h``, ``lost_work_h`` (since the last checkpoint in the training log, else
        half an assumed hourly interval), ``lost_gpu_hours`` and ``cost_basis``; NaN where
        the logs cannot tell, with the reason in ``cost_basis``.
    """
    unknown = {"sources"} & set(options)
    if unknown:
        raise TypeError(f"attribute() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return job_outcomes(signals, jobs, **options).interruptions


__all__ = ["add_costs", "with_costs", "job_outcomes", "attribute"]
