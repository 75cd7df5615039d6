"""The fleet behind a report: how many GPUs, over which window, and how the exposure was derived.

Rates divide counts by GPU-days at risk, so the report states where its GPU-days came from:
an inventory (units in service, with installs and removals inside the window,
:func:`reliab.build_exposure`), the user's number of GPUs over the window, or the job records
(GPU-hours allocated to the jobs in the window).  Nothing is assumed silently: with none of
these the rates are "not available" and the report says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reliab._result import NotAvailable
from reliab.errors import InputFileError

Source = str  # "inventory", "gpus", "jobs"


@dataclass(frozen=True)
class Fleet:
    """Fleet size, observation window and GPU-days at risk, with where each came from.

    Attributes
    ----------
    gpu_days : float
        GPU-days at risk in the window (the rates' denominator).
    start, end : pandas.Timestamp
        Observation window (UTC).
    gpus_per_node : int
        GPUs per node (node-days = GPU-days / this).
    n_gpus : int or None
        GPUs in service, when known (``None`` when the exposure comes from job records).
    exposure_source : str
        ``"inventory"``, ``"gpus"`` (the user's number) or ``"jobs"``.
    window_source : str
        ``"given"``, ``"jobs"`` (first start to last end) or ``"logs"`` (first to last
        timestamp in the logs).
    """

    gpu_days: float
    start: pd.Timestamp
    end: pd.Timestamp
    gpus_per_node: int
    n_gpus: int | None
    exposure_source: str
    window_source: str

    @property
    def hours(self) -> float:
        """Length of the window in hours."""
        return (self.end - self.start) / pd.Timedelta(hours=1)

    @property
    def days(self) -> float:
        """Length of the window in days."""
        return self.hours / 24.0

    @property
    def node_days(self) -> float:
        """Node-days at risk."""
        return self.gpu_days / self.gpus_per_node

    def describe(self) -> str:
        """How the exposure was derived, in one sentence for the report's methods."""
        window = {"given": "as given", "jobs": "from the first job start to the last job end",
                  "logs": "from the first to the last timestamp in the logs"}[self.window_source]
        head = (f"Window {self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M} UTC "
                f"({self.days:,.1f} days, {window}). ")
        if self.exposure_source == "inventory":
            how = ("GPU-days at risk from the inventory: each unit counts from its install (or the "
                   "window start) to its removal (or the window end)")
        elif self.exposure_source == "gpus":
            how = f"GPU-days at risk = {self.n_gpus or 0:,} GPUs (the number given) x the window"
        else:
            how = ("GPU-days at risk from the job records: GPUs allocated x hours allocated, summed "
                   "over the jobs inside the window (no fleet size was given)")
        return f"{head}{how}: {self.gpu_days:,.0f} GPU-days, {self.node_days:,.0f} node-days."

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe facts (for the archive)."""
        return {"gpu_days": self.gpu_days, "node_days": self.node_days, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "gpus_per_node": self.gpus_per_node,
                "n_gpus": self.n_gpus, "exposure_source": self.exposure_source,
                "window_source": self.window_source}


def _utc(value: Any, name: str) -> pd.Timestamp:
    try:
        t = pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not a date or time: {value!r} ({exc})") from None
    if pd.isna(t):
        raise ValueError(f"{name} is not a date or time: {value!r}")
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def _window(window: tuple[Any, Any] | None, jobs: pd.DataFrame, signals: pd.DataFrame
            ) -> tuple[pd.Timestamp, pd.Timestamp, str] | NotAvailable:
    if window is not None:
        start, end = _utc(window[0], "window start"), _utc(window[1], "window end")
        if not end > start:
            raise ValueError(f"window end ({end}) must be after its start ({start})")
        return start, end, "given"
    starts, ends = jobs["start"].dropna() if len(jobs) else [], jobs["end"].dropna() if len(jobs) else []
    if len(starts) and len(ends) and ends.max() > starts.min():
        return starts.min(), ends.max(), "jobs"
    if len(signals) and signals["time"].max() > signals["time"].min():
        return signals["time"].min(), signals["time"].max(), "logs"
    return NotAvailable("observation window", "no window was given (--window START END) and the "
                        "input has no job records or timestamped log lines to take it from")


def read_inventory(path: str | Path) -> pd.DataFrame:
    """An inventory CSV: ``unit``, ``kind`` (``gpu``/``node``), ``installed``, optional
    ``removed`` and ``removal_reason`` (:func:`reliab.build_exposure`); the header names of
    the unit-lifetime schema (``serial_number``, ``install_date``, ``removal_date``...,
    :mod:`reliab.io.formats.lifetimes`) are taken as these.

    Raises
    ------
    InputFileError
        When the file is missing or lacks the required columns (named).
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"{p}: inventory file not found")
    try:
        inv = pd.read_csv(p, dtype={"unit": str, "kind": str})
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputFileError(f"{p}: not a readable CSV inventory ({exc})") from None
    inv = _inventory_names(inv)
    missing = [c for c in ("unit", "kind", "installed") if c not in inv.columns]
    if missing:
        raise InputFileError(f"{p}: inventory lacks column(s) {missing}; expected unit, kind, "
                             "installed, and optionally removed, removal_reason")
    return inv


def _inventory_names(inv: pd.DataFrame) -> pd.DataFrame:
    """``inv`` with the header names of the unit-lifetime schema (serial, install_date,
    removal_reason... :mod:`reliab.io.formats.lifetimes`) renamed to the inventory's."""
    from reliab.errors import ParseError
    from reliab.io.formats.lifetimes import resolve_columns

    try:
        ours = resolve_columns([str(c) for c in inv.columns])
    except ParseError:
        return inv
    to_inventory = {"serial": "unit", "reason": "removal_reason"}
    return inv.set_axis([to_inventory.get(n, n) for n in ours], axis=1)


def _jobs_gpu_days(jobs: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
                   gpus_per_node: int) -> float:
    j = jobs.dropna(subset=["start", "end"])
    if not len(j):
        return 0.0
    lo = j["start"].clip(lower=start)
    hi = j["end"].clip(upper=end)
    hours = ((hi - lo) / pd.Timedelta(hours=1)).clip(lower=0)
    gpus = j["ngpus"].astype("Float64")
    gpus = gpus.fillna(j["nnodes"].astype("Float64") * gpus_per_node).fillna(0)
    return float((gpus.to_numpy(dtype=float) * hours.to_numpy(dtype=float)).sum() / 24.0)


def fleet_facts(
    *,
    jobs: pd.DataFrame,
    signals: pd.DataFrame,
    gpus: int | None = None,
    inventory: pd.DataFrame | None = None,
    window: tuple[Any, Any] | None = None,
    gpus_per_node: int = 8,
) -> Fleet | NotAvailable:
    """The fleet and its exposure from what the user gave, else from the job records.

    Parameters
    ----------
    jobs, signals : pandas.DataFrame
        Canonical tables of the ingest (for a window and job-based exposure).
    gpus : int, optional
        GPUs in service over the whole window (the user's number).
    inventory : pandas.DataFrame, optional
        Units with install and removal times (:func:`read_inventory`); wins over ``gpus``.
    window : (start, end), optional
        Observation window; default the span of the job records, else of the logs.
    gpus_per_node : int
        GPUs per node.

    Returns
    -------
    Fleet or NotAvailable
        ``NotAvailable`` (with the reason) when no exposure can be derived.
    """
    if gpus is not None and (isinstance(gpus, bool) or int(gpus) != gpus or gpus < 1):
        raise ValueError(f"gpus must be a positive integer, got {gpus!r}")
    if isinstance(gpus_per_node, bool) or int(gpus_per_node) != gpus_per_node or gpus_per_node < 1:
        raise ValueError(f"gpus_per_node must be a positive integer, got {gpus_per_node!r}")
    span = _window(window, jobs, signals)
    if isinstance(span, NotAvailable):
        return span
    start, end, wsource = span
    if inventory is not None:
        from reliab.prepare import build_exposure, exposure_totals

        exposure = build_exposure(inventory, start=start, end=end)
        gpu_days = float(exposure_totals(exposure, gpus_per_node=gpus_per_node)["gpu_days"])
        n = int((inventory["kind"].astype(str).str.lower() == "gpu").sum()) or None
        source = "inventory"
    elif gpus is not None:
        gpu_days, n, source = int(gpus) * ((end - start) / pd.Timedelta(days=1)), int(gpus), "gpus"
    else:
        gpu_days, n, source = _jobs_gpu_days(jobs, start, end, gpus_per_node), None, "jobs"
        if not gpu_days > 0:
            return NotAvailable("exposure (GPU-days at risk)", "no fleet size was given (--gpus N "
                                "or --inventory FILE) and there are no job records with start, "
                                "end and allocated GPUs to derive it from")
    if not (math.isfinite(gpu_days) and gpu_days > 0):
        return NotAvailable("exposure (GPU-days at risk)",
                            f"the {source} give {gpu_days:g} GPU-days in the window")
    return Fleet(gpu_days=gpu_days, start=start, end=end, gpus_per_node=int(gpus_per_node),
                 n_gpus=n, exposure_source=source, window_source=wsource)


__all__ = ["Fleet", "fleet_facts", "read_inventory"]
