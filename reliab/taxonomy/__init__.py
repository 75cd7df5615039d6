"""Taxonomy: map signals to root-cause categories and attribute job interruptions to them.

The rules are data (``rules.csv``, overridable with :func:`load_rules`); the default
vocabulary is Llama 3 Table 5 (arXiv 2407.21783) plus ``NVLink``, ``Planned`` and
``Unclassified``. :func:`attribute` links signals to job interruptions inside the window of
Kokolis et al. (HPCA 2025): 10 minutes before to 5 minutes after the job's end; which job
ends count is an explicit policy (``fleet`` or ``training-run``, :func:`job_outcomes`).
"""

from __future__ import annotations

from reliab.taxonomy._attribute import attribute, job_outcomes
from reliab.taxonomy._classify import Explanation, classify, classify_failures, explain
from reliab.taxonomy._outcomes import JobOutcomes
from reliab.taxonomy._policy import POLICIES
from reliab.taxonomy._rules import Rules, load_rules

__all__ = ["load_rules", "classify", "classify_failures", "explain", "attribute", "job_outcomes", "JobOutcomes",
           "POLICIES", "Rules", "Explanation"]
