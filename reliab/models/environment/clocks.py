"""Why the clocks were held down: NVML clock-event reasons against power, limit and SM clock.

NVML reports, per sample, a bitmask of the reasons the clocks are below their maximum
(``nvmlDeviceGetCurrentClocksEventReasons``; ``clocks_event_reasons.active`` in
``nvidia-smi --query-gpu``; DCGM field 112 ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS``).  The bit
values are those of ``nvml.h`` (NVIDIA Management Library API reference, "Clocks Event
Reasons"; formerly "Clocks Throttle Reasons").  :func:`summarize_clock_events` decodes the
mask and, for each reason seen, compares the samples with the reason active against those
without: power, power relative to the enforced limit, and SM clock.  A software power cap
shows as power pinned at the limit with a lower clock; nothing here uses a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._checks import Check, in_range
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError

#: NVML clocks event reason bits (nvml.h, ``nvmlClocksEventReason*``)
CLOCK_EVENT_REASONS: dict[int, str] = {
    0x1: "gpu idle",
    0x2: "applications clocks setting",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake slowdown",
    0x100: "display clock setting",
}


def decode_clock_events(mask: pd.Series) -> pd.DataFrame:
    """One boolean column per NVML clock-event reason (named as in :data:`CLOCK_EVENT_REASONS`).

    Missing masks give missing (``pd.NA``) flags; bits NVML does not define are collected
    in an ``other bits`` column.
    """
    m = pd.to_numeric(mask, errors="coerce")
    known = np.int64(sum(CLOCK_EVENT_REASONS))
    vals = m.fillna(0).to_numpy(dtype=np.int64)
    out = {name: pd.array(np.where(m.isna(), None, (vals & bit) != 0), dtype="boolean")
           for bit, name in CLOCK_EVENT_REASONS.items()}
    out["other bits"] = pd.array(np.where(m.isna(), None, (vals & ~known) != 0), dtype="boolean")
    return pd.DataFrame(out, index=mask.index)


@dataclass(frozen=True)
class ClockEventSummary(ResultMixin):
    """Per clock-event reason: how often it was active and what power and clock did then."""

    report_section = "environment"  # placement in the report (reliab.report.catalog)

    table: pd.DataFrame = field(repr=False)
    n: int
    power_limit_w: float | None
    conf_level: float | None = None  # no interval
    method: str = ("NVML clocks-event-reason bitmask decoded per sample; medians of power, "
                   "power / enforced limit and SM clock with the reason active vs inactive")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """reason, n_active, share_active, median power/clock active and inactive, power as
        a share of the limit while active, clock change (MHz and %)."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Active counts >= 0 and shares of samples in [0, 1]."""
        return (in_range("n_active_nonnegative", self.table["n_active"], 0),
                in_range("share_active_in_unit_interval", self.table["share_active"], 0, 1))

    def reason(self, name: str) -> pd.Series:
        """The summary row of one reason, e.g. ``"software power cap"``."""
        rows = self.table[self.table["reason"] == name]
        if rows.empty:
            raise KeyError(f"reason {name!r} never active; seen: {list(self.table['reason'])}")
        return rows.iloc[0]

    def plot(self, ax: Any = None) -> Any:
        """Bars of the share of samples each reason was active, annotated with the clock drop."""
        from reliab.models.environment._figures import clock_event_figure

        return clock_event_figure(self, ax=ax)


def _median(s: pd.Series) -> float:
    s = s.dropna()
    return float(s.median()) if len(s) else float("nan")


def summarize_clock_events(
    telemetry: pd.DataFrame,
    *,
    reasons: str = "clock_event_reasons_flag",
    power: str = "power_w",
    limit: str | None = "power_limit_w",
    clock: str = "sm_clock_mhz",
) -> ClockEventSummary:
    """Decode NVML clock-event reasons and compare power and SM clock with each active/inactive.

    Parameters
    ----------
    telemetry : pandas.DataFrame
        Samples with the reasons bitmask and power / clock columns (the ``telemetry`` table
        read from NVML dumps, ``nvidia-smi --query-gpu`` CSV or dcgm-exporter).
    reasons, power, limit, clock : str
        Column names; ``limit`` (the enforced power limit) is optional.

    Returns
    -------
    ClockEventSummary
        ``summary()`` has one row per reason active in at least one sample.

    Raises
    ------
    InsufficientDataError
        No sample carries a reasons mask.
    """
    missing = [c for c in (reasons, power, clock) if c not in telemetry.columns]
    if missing:
        raise ValueError(f"telemetry is missing column(s) {missing}")
    flags = decode_clock_events(telemetry[reasons])
    known = telemetry[reasons].notna()
    if not known.any():
        raise InsufficientDataError(f"no sample has a value in {reasons!r}")
    pw, ck = telemetry[power].astype(float), telemetry[clock].astype(float)
    lim = telemetry[limit].astype(float) if limit and limit in telemetry else None
    rows = []
    for name in flags.columns:
        on = flags[name].fillna(False).to_numpy(dtype=bool)
        off = known.to_numpy() & ~on
        if not on.any():
            continue
        c_on, c_off = _median(ck[on]), _median(ck[off])
        rows.append({
            "reason": name, "n_active": int(on.sum()), "share_active": float(on.sum() / known.sum()),
            "power_w_active": _median(pw[on]), "power_w_inactive": _median(pw[off]),
            "power_share_of_limit_active": _median(pw[on] / lim[on]) if lim is not None else np.nan,
            "sm_clock_mhz_active": c_on, "sm_clock_mhz_inactive": c_off,
            "clock_change_mhz": c_on - c_off,
            "clock_change_pct": 100 * (c_on - c_off) / c_off if c_off else np.nan})
    table = pd.DataFrame(rows, columns=[
        "reason", "n_active", "share_active", "power_w_active", "power_w_inactive",
        "power_share_of_limit_active", "sm_clock_mhz_active", "sm_clock_mhz_inactive",
        "clock_change_mhz", "clock_change_pct"])
    plim = _median(lim) if lim is not None else None
    notes = [f"{int(known.sum()):,} samples with a reasons mask"]
    if lim is None:
        notes.append("no power-limit column: power is not compared with the limit")
    return ClockEventSummary(table=table.sort_values("n_active", ascending=False,
                                                     ignore_index=True),
                             n=int(known.sum()), power_limit_w=plim, notes=tuple(notes))


__all__ = ["CLOCK_EVENT_REASONS", "decode_clock_events", "summarize_clock_events",
           "ClockEventSummary"]
