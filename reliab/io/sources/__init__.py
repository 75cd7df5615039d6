"""Live sources: locations of the form ``scheme://…`` read from a running system.

Where a file reader turns one file into a :class:`~reliab.io._registry.FileResult`, a live
source turns a location such as ``slurm://`` (the accounting database, through ``sacct``) or
``prometheus://host:9090`` (``/api/v1/query_range``) into one FileResult *per query it ran*:
its ``path`` is the URL of that query (for example ``slurm://?start=…&end=…``), so the
accounting has one row per chunk, the quarantine names the query and the position in its
answer, and :func:`reliab.ingest` assembles the same canonical tables as from files.

A source is registered with :func:`reliab.io.register_source` (the engine's seam); its reader takes the location first and
options as keywords, and raises :class:`~reliab.errors.SourceError` (one line: location and
cause) when the system cannot be read or the window holds nothing, so nothing partial is
returned.
"""

from __future__ import annotations

import pandas as pd

from reliab.io._registry import register_source, sources
from reliab.io.sources._relabel import relabel

__all__ = ["register_source", "live_sources", "relabel"]


def live_sources() -> pd.DataFrame:
    """Registered live sources: ``scheme`` (as in ``scheme://``) and a one-line ``summary``."""
    rows = [(f"{s.scheme}://", s.summary.replace("``", "")) for s in sources()]
    return pd.DataFrame(rows, columns=["scheme", "summary"]).astype("string")


# importing the readers registers them
from reliab.io.sources import journald, prometheus, slurm  # noqa: E402, F401
