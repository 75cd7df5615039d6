"""Fleet scale on Dask: the distributed counterparts of the telemetry reduction, the rate
tables and the failure GLM, each equal to its one-machine version.

* :func:`reduce_telemetry`: per-GPU samples -> host-hour windows (mean, max, hours above a
  threshold, power-swing counts) where the samples lie;
* :func:`rates_by_group`: interruption (or signal) counts and exposure by group from
  partitioned Parquet, without collecting the rows, into the rate table of
  :func:`reliab.estimate_rates`;
* :func:`fit_failure_glm_cells`: the failure GLM on covariate cells aggregated on Dask.

Names resolve lazily; Dask is needed only when a function is called with a client.
"""

from __future__ import annotations

from reliab._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "reduce_telemetry": "reliab.fleet.telemetry",
    "rates_by_group": "reliab.fleet.rates",
    "count_by_group": "reliab.fleet.rates",
    "exposure_by_group": "reliab.fleet.rates",
    "aggregate_cells_dask": "reliab.fleet.glm",
    "fit_failure_glm_cells": "reliab.fleet.glm",
    "as_dask": "reliab.fleet._frames",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
