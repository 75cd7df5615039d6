"""The failure GLM at fleet scale: covariate cells aggregated on Dask, then one small fit.

The Poisson log-likelihood with a log-exposure offset depends on the node-windows only
through the failure counts and exposures summed over rows of equal covariates (McCullagh &
Nelder 1989, §6.2; Frome 1983, *Biometrics* 39, 665–674), so the fit on cells equals the
fit on rows.  :func:`aggregate_cells_dask` runs
:func:`reliab.models.environment.cells.aggregate_cells` on every partition and sums the
partial cells; :func:`fit_failure_glm_cells` fits
:func:`reliab.models.environment.failure_glm.fit_failure_glm` on them.  The result equals
``fit_failure_glm(windows, covariates, cells=True, bins=bins)`` on the collected rows (to
floating-point summation order), with the same ``n`` and ``n_cells``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from reliab.fleet._frames import Source, as_dask
from reliab.models.environment.cells import aggregate_cells
from reliab.models.environment.failure_glm import FailureGLMFit, fit_failure_glm

__all__ = ["aggregate_cells_dask", "fit_failure_glm_cells"]


def _cells(frame: pd.DataFrame, covariates: list[str], count: str, exposure: str,
           bins: dict[str, float]) -> pd.DataFrame:
    """One partition's cells, with its row and dropped counts as columns (attrs do not travel)."""
    if not len(frame):
        cols = {c: pd.Series(dtype=float) for c in covariates}
        return pd.DataFrame({**cols, count: pd.Series(dtype=float), exposure: pd.Series(dtype=float),
                             "rows": pd.Series(dtype="int64"), "_read": pd.Series(dtype="int64"),
                             "_dropped": pd.Series(dtype="int64")})
    cells = aggregate_cells(frame, covariates, count=count, exposure=exposure, bins=bins)
    tally = pd.DataFrame({**{c: [float("nan")] for c in covariates}, count: [0.0], exposure: [0.0], "rows": [0],
                          "_read": [cells.attrs["rows"]], "_dropped": [cells.attrs["dropped"]]})
    return pd.concat([cells.assign(_read=0, _dropped=0), tally], ignore_index=True)  # the last row: tallies


def aggregate_cells_dask(
    windows: Source,
    covariates: Sequence[str],
    *,
    count: str = "failures",
    exposure: str = "hours",
    bins: Mapping[str, float] | None = None,
    client: Any = None,
) -> pd.DataFrame:
    """:func:`reliab.models.environment.cells.aggregate_cells` over partitions, on Dask.

    Returns
    -------
    pandas.DataFrame
        The cells, sorted by the covariates, with ``attrs`` ``rows``, ``dropped``, ``bins``
        as the one-machine function gives them.
    """
    covs = list(covariates)
    widths = dict(bins or {})
    ddf = as_dask(windows, columns=[*covs, count, exposure])
    meta = _cells(ddf._meta, covs, count, exposure, widths)
    parts = ddf.map_partitions(_cells, covs, count, exposure, widths, meta=meta)
    tallies = parts[parts[covs[0]].isna()][["_read", "_dropped"]].sum()
    # a few hundred cells: summed up a tree of partitions (split_out=1); Dask's default for
    # many partitions (one output per 15) is a shuffle, which cost ~6x the stage's own work
    # on a 100,000-GPU fleet's windows
    cells = parts[~parts[covs[0]].isna()].groupby(covs)[[count, exposure, "rows"]].sum(split_out=1)
    got = client.compute([cells, tallies]) if client is not None else None
    cells_pd, tally = (got[0].result(), got[1].result()) if got is not None else (cells.compute(), tallies.compute())
    out = cells_pd.reset_index().sort_values(covs, ignore_index=True)
    out["rows"] = out["rows"].astype("int64")
    out.attrs = {"dropped": int(tally["_dropped"]), "rows": int(tally["_read"]), "bins": widths}
    return out


def fit_failure_glm_cells(
    windows: Source,
    covariates: Sequence[str],
    *,
    count: str = "failures",
    exposure: str = "hours",
    bins: Mapping[str, float] | None = None,
    client: Any = None,
    conf_level: float = 0.95,
) -> FailureGLMFit:
    """Poisson failure GLM of node-windows that do not fit in memory, fitted on Dask-made cells.

    Parameters
    ----------
    windows : DataFrame, Dask DataFrame or Parquet path(s)
        Node-windows with the covariates, a failure count and an exposure (e.g. host-hour
        windows of :func:`reliab.fleet.reduce_telemetry` with failures counted in).
    covariates, count, exposure, bins, conf_level
        As for :func:`reliab.models.environment.failure_glm.fit_failure_glm` with
        ``cells=True`` (only the Poisson model aggregates to cells).
    client : dask.distributed.Client, optional
        The cluster; without it Dask's local scheduler.

    Returns
    -------
    FailureGLMFit
        Estimates, intervals, ``n``, ``n_cells``, events and exposure of
        ``fit_failure_glm(rows, covariates, cells=True, bins=bins)``.
    """
    cells = aggregate_cells_dask(windows, covariates, count=count, exposure=exposure, bins=bins, client=client)
    # the cells are their own cells: the one-machine cell fit, Poisson only, family chosen as it chooses
    fit = fit_failure_glm(cells, list(covariates), count=count, exposure=exposure, cells=True, conf_level=conf_level)
    n_rows = cells.attrs["rows"]
    note = (f"{n_rows:,} rows collapsed to {len(cells):,} covariate cells"
            + (f" (bins {dict(bins)})" if bins else "") + " on Dask")
    return dataclasses.replace(fit, n=n_rows, n_cells=len(cells), notes=(note, *fit.notes[1:]))
