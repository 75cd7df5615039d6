"""Rate tables by group from partitioned Parquet: counts and exposure summed on Dask.

:func:`rates_by_group` counts events (interruptions, or signals of some key) per group and
planned flag, and sums exposure (node-hours of host windows, or hours of an exposure
table) per group, both with Dask group-bys on the partitions: only one row per group comes
back.  The table is then :func:`reliab.estimate_rates` with per-group exposure, fed with
the counts, so its intervals (exact Poisson, Garwood 1936), notes and columns are those of
the one-machine call on the same rows.

Groups are a column of both tables (``pod``, ``rack``, ``month``…), or, with ``groups=``, a
mapping from host to group applied to both (a host column is then needed: ``host`` of the
windows, ``hosts`` of the interruptions — an interruption naming several hosts counts for
the group of the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from reliab.fleet._frames import Source, as_dask
from reliab.models.rates import RatesResult, estimate_rates

__all__ = ["rates_by_group", "count_by_group", "exposure_by_group"]


def _with_group(frame: pd.DataFrame, by: str, groups: Mapping[str, Any] | None) -> pd.DataFrame:
    """``frame`` with its ``by`` column (from ``groups`` applied to its host when given)."""
    if groups is None:
        if by not in frame.columns:
            raise ValueError(f"no column {by!r} (has {list(frame.columns)}); pass groups= (host -> group)")
        return frame
    col = "host" if "host" in frame.columns else "hosts" if "hosts" in frame.columns else None
    if col is None:
        raise ValueError("groups= maps hosts to groups: the table needs a 'host' or 'hosts' column")
    host = frame[col]
    if col == "hosts":  # an interruption naming several hosts counts for the group of the first
        host = host.astype("string").str.split(",").str[0].str.strip()
    # mapped on the categories: one look-up per distinct host, not per row
    group = pd.Series(pd.Categorical(host.astype("string")), index=frame.index).map(dict(groups))
    return frame.assign(**{by: group.astype("string")})


def _counts(frame: pd.DataFrame, by: str, groups: Mapping[str, Any] | None) -> pd.DataFrame:
    data = _with_group(frame, by, groups)
    planned = (data["planned"].astype("boolean").fillna(False) if "planned" in data.columns
               else pd.Series(False, index=data.index))
    keyed = pd.DataFrame({by: data[by].astype("string"), "planned": planned.astype(bool).to_numpy()})
    return keyed.groupby([by, "planned"], dropna=False, observed=True).size().rename("count").reset_index()


def count_by_group(events: Source, by: str, *, groups: Mapping[str, Any] | None = None,
                   client: Any = None) -> pd.DataFrame:
    """Events per group and planned flag: columns ``by``, ``planned``, ``count``.

    ``events`` is any table :func:`reliab.fleet._frames.as_dask` takes (an ingest output
    folder's ``interruptions`` are read from its single file); without ``client`` the count
    runs in this process.
    """
    frame = _frame(events, "interruptions")
    if client is None and isinstance(frame, pd.DataFrame):
        return _counts(frame, by, groups)
    ddf = as_dask(frame)
    meta = _counts(ddf._meta, by, groups)
    parts = ddf.map_partitions(_counts, by, groups, meta=meta)
    out = parts.groupby([by, "planned"], dropna=False).sum(split_out=1)  # a row per group: no shuffle
    done = (client.compute(out).result() if client is not None else out.compute()).reset_index()
    return done.astype({"count": "int64"})


def _hours(frame: pd.DataFrame, by: str, groups: Mapping[str, Any] | None, hours: str) -> pd.DataFrame:
    if groups is not None and "host" in frame.columns:  # host windows: summed per host, then per group
        codes, hosts = pd.factorize(frame["host"], use_na_sentinel=False)
        values = frame[hours].to_numpy(dtype=float)
        per_host = np.bincount(codes, weights=np.where(np.isnan(values), 0.0, values), minlength=len(hosts))
        frame = pd.DataFrame({"host": pd.Series(hosts, dtype="string"), hours: per_host})
    data = _with_group(frame, by, groups)
    keyed = pd.DataFrame({by: data[by].astype("string"), hours: data[hours].to_numpy(dtype=float)})
    return keyed.groupby(by, dropna=False, observed=True)[hours].sum().reset_index()


def exposure_by_group(exposure: Source, by: str, *, hours: str = "hours", groups: Mapping[str, Any] | None = None,
                      client: Any = None) -> pd.Series:
    """Hours at risk per group (index: group), summed over the partitions on Dask.

    ``exposure`` holds one row per unit and period with an ``hours`` column: host windows
    of :func:`reliab.fleet.reduce_telemetry` (node-hours observed), or an ``exposure``
    table (unit-hours).
    """
    if isinstance(exposure, pd.DataFrame) and client is None:
        out = _hours(exposure, by, groups, hours)
    else:
        ddf = as_dask(exposure, columns=None if isinstance(exposure, pd.DataFrame) or not _is_files(exposure)
                      else ["host" if groups is not None else by, hours])
        parts = ddf.map_partitions(_hours, by, groups, hours, meta=_hours(ddf._meta, by, groups, hours))
        total = parts.groupby(by, dropna=False)[hours].sum(split_out=1)  # a row per group: no shuffle
        out = (client.compute(total).result() if client is not None else total.compute()).reset_index()
    return out.set_index(by)[hours].sort_index().rename(hours)


def _is_files(source: Source) -> bool:
    """A path or list of paths (read column by column), not a frame."""
    from pathlib import Path

    return isinstance(source, str | Path | list | tuple)


def _frame(source: Source, table: str) -> Source:
    """An ingest output folder's derived table (one file) as pandas; anything else as given."""
    from pathlib import Path

    from reliab.io import DERIVED, MANIFEST, read_table

    if isinstance(source, str | Path) and (Path(source) / MANIFEST).is_file() and table in DERIVED:
        return read_table(source, table)
    return source


def rates_by_group(
    events: Source,
    exposure: Source,
    by: str,
    *,
    groups: Mapping[str, Any] | None = None,
    hours: str = "hours",
    unit_gpus: int = 8,
    gpus_per_node: int = 8,
    client: Any = None,
    conf_level: float = 0.95,
    include_total: bool = True,
    unexpected_only: bool = True,
) -> RatesResult:
    """Interruption rates by group, counts and exposure computed where the rows lie.

    Parameters
    ----------
    events : DataFrame, path or Dask DataFrame
        One row per interruption (``planned`` column optional) or per signal; an ingest
        output folder means its ``interruptions``.
    exposure : DataFrame, path or Dask DataFrame
        Rows with ``hours`` at risk: host windows (each unit has ``unit_gpus`` GPUs, 8 for a
        node) or an exposure table of GPUs (``unit_gpus=1``).
    by : str
        The group column (or the name given to the groups of ``groups``).
    groups : mapping, optional
        Host -> group, applied to both tables.
    hours, unit_gpus, gpus_per_node
        Exposure column, GPUs per exposure unit, GPUs per node (node-day rates).
    client : dask.distributed.Client, optional
        Run the group-bys on this cluster (else in this process, on Dask's local scheduler
        for files).
    conf_level, include_total, unexpected_only
        As for :func:`reliab.estimate_rates`.

    Returns
    -------
    RatesResult
        :func:`reliab.estimate_rates` with per-group GPU-days, on these counts.
    """
    counts = count_by_group(events, by, groups=groups, client=client)
    exp = exposure_by_group(exposure, by, hours=hours, groups=groups, client=client)
    gpu_days = exp * unit_gpus / 24.0
    rows = pd.DataFrame({by: np.repeat(counts[by].to_numpy(dtype=object), counts["count"].to_numpy()),
                         "planned": np.repeat(counts["planned"].to_numpy(dtype=bool), counts["count"].to_numpy())})
    return estimate_rates(rows, by=by, gpu_days=gpu_days.rename_axis(by), gpus_per_node=gpus_per_node,
                          conf_level=conf_level, include_total=include_total, unexpected_only=unexpected_only)
