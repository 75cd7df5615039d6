"""The reliability report: any mapping of results into a document, rendered as HTML or PDF.

``build_report`` takes the results by name (what :func:`reliab.analyze` returns, or any
mapping of result objects) and places each one in its section through one generic path
(:mod:`reliab.report.generic`, placement in :mod:`reliab.report.catalog`); ``render_html`` /
``write_html`` and ``write_pdf`` decide how it looks.  The document nodes (:class:`Report`,
:class:`Section`, ...) are frozen data, so a report can be inspected or extended in a
notebook before it is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from reliab._checks import Check
from reliab.report.assemble import assemble
from reliab.report.catalog import SECTIONS, Entry
from reliab.report.document import Callout, Figure, Report, Section, Table, Text
from reliab.report.html import render_html, write_html
from reliab.report.pdf import render_pdf, write_pdf


def build_report(
    results: Mapping[str, Any],
    *,
    ingest: Any = None,
    title: str = "Cluster reliability report",
    subtitle: str | None = None,
    meta: Mapping[str, Any] | None = None,
    reference: pd.DataFrame | None = None,
    fleet: Any = None,
    inputs: pd.DataFrame | None = None,
    config: str | None = None,
    failed_checks: Sequence[tuple[str, Check]] = (),
    raise_on_failure: bool | None = None,
) -> Report:
    """Assemble the reliability report from a mapping of results.

    Parameters
    ----------
    results : mapping of str to result
        Results by name: any object with the result contract (``summary()``, ``method``,
        ``notes``, ``plot()``), a :class:`~reliab.NotAvailable` (shown as "not available"
        with its reason) or an :class:`Entry` (a result with explicit placement).  The names
        of :func:`reliab.analyze` (``rates``, ``tbi_weibull``, ``crow_amsaa`` ...) place
        results in their sections; other results are placed by type, else under "Further
        results".  Counts and shares come from the results, never recounted.
    ingest : IngestResult, optional
        Output of :func:`reliab.ingest`: the data-quality section (line accounting,
        quarantine, files not read, evidence coverage) and the interruption policy.
    title, subtitle : str
        Shown at the top of the report.
    meta : mapping, optional
        Facts about the run for the header box (fleet, window, inputs, generated-at ...).
    reference : pandas.DataFrame, optional
        A published table in the shape of :func:`reliab.table5`; the root-cause table then
        compares the counts with it (``reliab report --compare llama3``).
    fleet : Fleet or NotAvailable, optional
        How the exposure was derived (:func:`reliab.fleet_facts`), stated in the methods.
    inputs : pandas.DataFrame, optional
        ``path``, ``bytes``, ``sha256`` of every input file (:func:`reliab.study.input_digests`).
    config : str, optional
        The configuration file's text, quoted in the methods.
    failed_checks : sequence of (str, Check)
        Checks that already failed earlier in the run (:func:`reliab._checks.verify`), listed
        in the data-quality section with those found here.
    raise_on_failure : bool, optional
        Raise on a result that breaks one of its invariants instead of showing "not shown:
        failed check <name>" in its place; default: ``RELIAB_STRICT_CHECKS`` is set.

    Returns
    -------
    Report
        Sections in the order of :data:`reliab.report.catalog.SECTIONS`, each present only
        when it has something to show.

    Examples
    --------
    >>> import reliab
    >>> fit = reliab.fit_weibull([54, 187, 216, 240, 500, 500], [1, 1, 1, 1, 0, 0])
    >>> report = build_report({"my_fit": fit})
    >>> [s.key for s in report.sections]
    ['tbi', 'methods']
    """
    return assemble(results, ingest=ingest, title=title, subtitle=subtitle, meta=meta,
                    reference=reference, fleet=fleet, inputs=inputs, config=config,
                    failed_checks=failed_checks, raise_on_failure=raise_on_failure)


__all__ = [
    "SECTIONS",
    "Callout",
    "Entry",
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
