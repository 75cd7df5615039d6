"""Exposure tables: unit-hours at risk, with left truncation and right censoring explicit.

An *exposure* table (schema ``EXPOSURE`` in :mod:`reliab.schema`) has one row per unit and
period at risk inside an observation window ``[start, end]``:

* **left truncation** — a unit installed before ``start`` enters the risk set at ``start``
  and is flagged ``truncated=True`` (its earlier history is not observed);
* **right censoring** — a unit alive at ``end``, or removed for any reason other than a
  failure (retired, drained, ...), leaves the risk set with ``failed=False``;
* **replacements** — a swapped GPU is a *new* unit in the same slot: every inventory row is
  one physical unit, and a slot that held several units yields several exposure rows.

This is the standard counting-process layout of survival analysis with delayed entry
(Andersen, Borgan, Gill & Keiding, *Statistical Models Based on Counting Processes*, 1993,
§III.3) and of the unit-days denominators of Backblaze's AFR (Backblaze, "Hard Drive
Stats for Q2 2016": ``((Failures)/(Drive Days/365)) * 100``): retired units stop accruing
days and are not failures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.schema import conform, validate

#: ``removal_reason`` values that end a period with a failure.
FAILURE_REASONS: tuple[str, ...] = ("failed", "failure", "fault")

_REQUIRED = ("unit", "installed")
_HOUR = pd.Timedelta(hours=1)


def _utc(value: object, name: str) -> pd.Timestamp:
    """A tz-aware UTC timestamp from ``value`` (naive values are taken to be UTC)."""
    ts = pd.Timestamp(value)
    if ts is pd.NaT:
        raise ValueError(f"{name} must be a timestamp, got {value!r}")
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _utc_series(s: pd.Series) -> pd.Series:
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return s.dt.tz_convert("UTC")
    return pd.to_datetime(s, utc=True, format="mixed")


def _check_inventory(inventory: pd.DataFrame, kind: str | None) -> None:
    missing = [c for c in _REQUIRED if c not in inventory.columns]
    if "kind" not in inventory.columns and kind is None:
        missing.append("kind (column, or the kind= argument)")
    if missing:
        raise ValueError(f"inventory is missing column(s): {', '.join(missing)}")


def _unique_units(units: pd.Series, installed: pd.Series) -> pd.Series:
    """Disambiguate unit ids that occur more than once (a reused slot id): ``id#2``, ``id#3``.

    The first installation keeps its id; later ones get ``#k`` in installation order.
    """
    order = installed.rank(method="first")
    k = order.groupby(units).rank(method="first").astype(int)
    return units.where(k == 1, units + "#" + k.astype(str))


def build_exposure(
    inventory: pd.DataFrame,
    *,
    start: object,
    end: object,
    kind: str | None = None,
) -> pd.DataFrame:
    """Exposure table (schema ``EXPOSURE``) of an inventory inside the window ``[start, end]``.

    Parameters
    ----------
    inventory : pandas.DataFrame
        One row per physical unit: ``unit``, ``kind`` (or pass ``kind=``), optional ``slot``,
        ``installed``, ``removed`` (nullable) and ``removal_reason`` (nullable; ``'failed'``
        ends the period with a failure, anything else — ``'retired'``, ``'drained'`` … —
        censors it). Other columns are carried through as covariates.
    start, end : timestamp-like
        The observation window (naive values are taken to be UTC).
    kind : str, optional
        Keep only units of this kind; required when ``inventory`` has no ``kind`` column.

    Returns
    -------
    pandas.DataFrame
        Columns ``unit, kind, entry, exit, hours, failed, truncated`` followed by the
        covariates. Units whose service does not overlap the window are left out; their
        count is in ``df.attrs["outside_window"]`` (nothing is dropped silently).

    Notes
    -----
    ``entry = max(installed, start)``, ``truncated = installed < start``;
    ``exit = min(removed, end)``; ``failed`` only if the unit was removed for a failure
    at or before ``end``. A unit id that appears on several rows (a slot id reused after a
    swap) becomes ``id``, ``id#2``, ... in installation order. Delayed entry follows
    Andersen et al. (1993, §III.3).
    """
    _check_inventory(inventory, kind)
    t0, t1 = _utc(start, "start"), _utc(end, "end")
    if t1 <= t0:
        raise ValueError(f"end ({t1}) must be after start ({t0})")
    inv = inventory.copy()
    if "kind" not in inv.columns:
        inv["kind"] = kind
    elif kind is not None:
        inv = inv[inv["kind"] == kind]
    installed = _utc_series(inv["installed"])
    if installed.isna().any():
        raise ValueError(f"{int(installed.isna().sum())} inventory row(s) have no installed time")
    removed = _utc_series(inv["removed"]) if "removed" in inv.columns else pd.Series(
        pd.NaT, index=inv.index, dtype="datetime64[ns, UTC]")
    bad = removed.notna() & (removed < installed)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} unit(s) removed before installed, e.g. "
                         f"{inv.loc[bad, 'unit'].iloc[0]!r}")
    reason = (inv["removal_reason"].astype("string").str.lower()
              if "removal_reason" in inv.columns else pd.Series(pd.NA, index=inv.index, dtype="string"))
    overlaps = (installed < t1) & (removed.isna() | (removed > t0))
    entry = installed.where(installed > t0, t0)
    exit_ = removed.where(removed.notna() & (removed < t1), t1)
    failed = reason.isin(FAILURE_REASONS).fillna(False) & removed.notna() & (removed <= t1)
    covariates = [c for c in inv.columns if c not in ("unit", "kind", "installed", "removed",
                                                      "removal_reason")]
    out = pd.DataFrame({
        "unit": _unique_units(inv["unit"].astype("string"), installed),
        "kind": inv["kind"].astype("string"),
        "entry": entry,
        "exit": exit_,
        "hours": (exit_ - entry) / _HOUR,
        "failed": failed.astype(bool),
        "truncated": (installed < t0).astype(bool),
    }, index=inv.index)
    out = pd.concat([out, inv[covariates]], axis=1)[overlaps.to_numpy()].reset_index(drop=True)
    out = validate(conform(out, "exposure"), "exposure")
    out.attrs["outside_window"] = int((~overlaps).sum())
    out.attrs["window"] = (t0.isoformat(), t1.isoformat())
    return out


def fleet_exposure(
    n_units: int,
    *,
    start: object,
    end: object,
    kind: str = "gpu",
    per_node: int = 8,
    truncated: bool = False,
) -> pd.DataFrame:
    """Exposure of a homogeneous fleet in service for the whole window, with no failures.

    Parameters
    ----------
    n_units : int
        Number of units (e.g. 16,384 GPUs for the Llama 3 run, arXiv 2407.21783 §3.3.1).
    start, end : timestamp-like
        Observation window.
    kind : str
        ``"gpu"`` (ids ``node00000/gpu0`` …, ``per_node`` to a node) or any other kind
        (ids ``{kind}00000`` …).
    per_node : int
        GPUs per node, used for GPU ids and the ``node`` covariate.
    truncated : bool
        Whether the units were already in service before ``start`` (left truncation).

    Returns
    -------
    pandas.DataFrame
        Schema ``EXPOSURE`` plus a ``node`` covariate for GPUs.
    """
    if n_units < 1 or per_node < 1:
        raise ValueError(f"n_units and per_node must be >= 1, got {n_units}, {per_node}")
    t0, t1 = _utc(start, "start"), _utc(end, "end")
    if t1 <= t0:
        raise ValueError(f"end ({t1}) must be after start ({t0})")
    idx = np.arange(n_units)
    if kind == "gpu":
        node = pd.Series([f"node{i:05d}" for i in idx // per_node], dtype="string")
        unit = node + pd.Series([f"/gpu{g}" for g in idx % per_node], dtype="string")
    else:
        node = None
        unit = pd.Series([f"{kind}{i:05d}" for i in idx], dtype="string")
    out = pd.DataFrame({
        "unit": unit, "kind": kind, "entry": t0, "exit": t1,
        "hours": (t1 - t0) / _HOUR, "failed": False, "truncated": truncated,
    })
    if node is not None:
        out["node"] = node
    return validate(conform(out, "exposure"), "exposure")


def exposure_totals(exposure: pd.DataFrame, *, gpus_per_node: int = 8) -> pd.Series:
    """Total time at risk of an exposure table, in the units the rate tables use.

    Parameters
    ----------
    exposure : pandas.DataFrame
        Schema ``EXPOSURE``.
    gpus_per_node : int
        Used to convert GPU time into node time when the table has no ``node`` rows.

    Returns
    -------
    pandas.Series
        ``gpu_hours``, ``gpu_days``, ``node_days``, ``units`` and ``failures``. Node-days
        come from rows of kind ``node`` when there are any, else from GPU-days divided by
        ``gpus_per_node``.
    """
    validate(exposure, "exposure")
    kind = exposure["kind"].str.lower()
    gpu_hours = float(exposure.loc[kind == "gpu", "hours"].sum())
    node_hours = float(exposure.loc[kind == "node", "hours"].sum())
    node_days = node_hours / 24.0 if node_hours > 0 else gpu_hours / 24.0 / gpus_per_node
    return pd.Series({
        "gpu_hours": gpu_hours,
        "gpu_days": gpu_hours / 24.0,
        "node_days": node_days,
        "units": float(len(exposure)),
        "failures": float(exposure["failed"].sum()),
    })


__all__ = ["build_exposure", "fleet_exposure", "exposure_totals", "FAILURE_REASONS"]


def node_hours(jobs: pd.DataFrame, *, end: object | None = None) -> pd.Series:
    """Hours each host spent allocated to the given jobs (the nodes' time at risk in them).

    Parameters
    ----------
    jobs : DataFrame
        Canonical ``jobs`` table (``start``, ``end``, ``nodelist``).
    end : timestamp, optional
        End of observation for jobs still running (``end`` missing); default: the latest
        known end.  Jobs that never started are ignored.

    Returns
    -------
    Series
        Hours per host (index = host), summed over jobs; Slurm hostlists are expanded.
    """
    from reliab.io.formats.slurm.hostlist import expand_hostlist

    ok = jobs["start"].notna() & jobs["nodelist"].notna()
    stop = jobs["end"].fillna(_utc(end, "end") if end is not None else jobs["end"].max())
    hours = ((stop - jobs["start"]).dt.total_seconds() / 3600.0).where(ok, 0.0).clip(lower=0.0)
    total: dict[str, float] = {}
    for nodelist, h in zip(jobs["nodelist"][ok], hours[ok], strict=True):
        for host in expand_hostlist(str(nodelist)):
            total[host] = total.get(host, 0.0) + float(h)
    return pd.Series(total, name="hours", dtype=float).rename_axis("host").sort_index()
