"""The reliability report: assemble a document from results, render it as HTML or PDF.

``build_report`` decides what is said (:mod:`reliab.report.assemble`); ``render_html`` /
``write_html`` and ``write_pdf`` decide how it looks.  The document nodes
(:class:`Report`, :class:`Section`, ...) are frozen data, so a report can be inspected or
extended in a notebook before it is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reliab.report.assemble import IngestLike, RatesLike, assemble
from reliab.report.document import Callout, Figure, Report, Section, Table, Text
from reliab.report.html import render_html, write_html
from reliab.report.pdf import render_pdf, write_pdf


def build_report(
    ingest: IngestLike,
    *,
    rates: RatesLike,
    reference: pd.DataFrame | None = None,
    title: str = "Cluster reliability report",
    subtitle: str | None = None,
    meta: Mapping[str, Any] | None = None,
    job_costs: Any | None = None,
    replay: Any | None = None,
    job_mttf: Any | None = None,
    plan: Any | None = None,
    environment: Any | None = None,
) -> Report:
    """Assemble the cluster reliability report.

    Parameters
    ----------
    ingest : object
        Has DataFrame attributes ``interruptions``, ``accounting``, ``quarantine`` (and
        ``signals``), with the schemas of :mod:`reliab.schema`.
    rates : object
        A rates result: ``summary()`` returns one row per category plus a ``Total`` row,
        with ``count``, ``share_pct`` and each measure (``rate_per_1k_gpu_days``,
        ``rate_per_1k_node_days``, ``mtbf_gpu_hours``, ``mtti_job_hours``, ``afr_pct``)
        with ``_low`` / ``_high`` limits; ``conf_level`` and ``notes`` describe them.
    reference : pandas.DataFrame, optional
        A published table in the shape of :func:`reliab.taxonomy.vocabulary.table5`.  When
        given, the categories section compares recomputed counts and shares with it and
        flags every mismatch (including the paper's misprinted share for Faulty GPU).
    title, subtitle : str
        Shown at the top of the report.
    meta : mapping, optional
        Facts about the run for the header box (GPUs, nodes, days, window, input files,
        generated-at ...).  An ``attribution window`` entry, if present, is quoted in the
        methods.  The ``reliab version`` is added when missing.
    job_costs, replay, job_mttf, plan : optional
        :func:`reliab.failure_cost`, :func:`reliab.replay_mitigations`,
        :func:`reliab.estimate_job_mttf` and :func:`reliab.plan_checkpoints` results; with
        ``job_costs`` a ``jobs`` section (ETTR, cost of interruptions per category, the
        replay, MTTF against job size, checkpoint plan) follows ``daily``.
    environment : EnvironmentStudy, optional
        Result of :func:`reliab.analyze_environment`; adds an ``environment`` section
        (before ``methods``) when given.

    Returns
    -------
    Report
        Sections, in order: ``summary``, ``categories``, ``timeline``, ``rates``, ``daily``,
        (``jobs``), ``data-quality``, (``environment``,) ``methods``.

    See Also
    --------
    render_html, write_html, write_pdf
    """
    return assemble(
        ingest, rates=rates, reference=reference, title=title, subtitle=subtitle, meta=meta,
        job_costs=job_costs, replay=replay, job_mttf=job_mttf, plan=plan,
        environment=environment,
    )


__all__ = [
    "Callout",
    "Figure",
    "Report",
    "Section",
    "Table",
    "Text",
    "build_report",
    "render_html",
    "render_pdf",
    "write_html",
    "write_pdf",
]
