"""Features per node and prediction time from precursor signals, built only from the past.

For every unit (node) ``u`` and prediction time ``T`` (daily), each precursor family is
counted over trailing windows ``[T - w, T)`` (1 h, 1 d, 7 d, 30 d) and the hours since its
last event before ``T`` are measured; the unit's own failure history (count and hours since
the last hardware interruption), its earlier interruptions of any kind and its hours in
observation complete the row.  Counting is vectorized: events of one family are sorted by
``(unit, time)`` into one integer key and every window edge is one
:func:`numpy.searchsorted` — an event at exactly ``T`` is *not* counted (``side="left"``).

Families follow NVIDIA's Xid catalogue ("Xid Errors", docs.nvidia.com/deploy/xid-errors:
Xid 63/64 row remapping, 92 high single-bit ECC rate, 94 contained ECC, 119/120 GSP),
the NVSwitch SXid catalogue (non-fatal SXids), the Linux EDAC and PCIe AER drivers
(``drivers/edac/edac_mc.c``, ``drivers/pci/pcie/aer.c``) and IPMI SEL sensor events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reliab.predict._telemetry import telemetry_features

US_PER_H = 3_600_000_000
WINDOWS_H: dict[str, float] = {"1h": 1.0, "1d": 24.0, "7d": 168.0, "30d": 720.0}
SINCE_CAP_H = 24.0 * 60  # "never seen" is written as 60 days

#: precursor family -> regular expression on the signal key
FAMILIES: dict[str, str] = {
    "ecc": r"xid:(?:63|64|92|94)$",
    "edac": r"edac:correctable$|sel:memory_correctable_ecc$",
    "aer": r"pcie:aer_corrected$|pcie:aer_nonfatal$",
    "nvlink": r"sxid:|xid:74$|nic:link_down$",
    "thermal": r"sel:temperature_upper_noncritical$|sel:voltage_upper_noncritical$|xid:(?:150|154)$",
    "gsp": r"xid:(?:119|120)$",
}
#: families whose presence defines the "any correctable error in the last 7 days" baseline
CORRECTABLE = ("ecc", "edac", "aer")
#: components whose unplanned interruptions are hardware failures of the named node
TARGET_COMPONENTS = ("GPU", "Host", "Network")


@dataclass(frozen=True)
class Events:
    """Per-family event times of every unit: ``unit`` index and ``time`` (UTC µs) arrays."""

    units: tuple[str, ...]
    families: dict[str, tuple[np.ndarray, np.ndarray]]
    failures: tuple[np.ndarray, np.ndarray, np.ndarray]  # unit, time, lost GPU-hours
    first_seen: np.ndarray  # µs; int64 max when never seen
    service: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # unit, job start, end
    telemetry: pd.DataFrame | None = None  # the telemetry table, where the input has one


def _us(times: pd.Series) -> np.ndarray:
    return pd.to_datetime(times, utc=True).astype("datetime64[ns, UTC]").to_numpy(
        dtype="datetime64[ns]").astype(np.int64) // 1000


def _explode_hosts(frame: pd.DataFrame) -> pd.DataFrame:
    hosts = frame["hosts"].astype("object").fillna("").astype(str).str.split(",")
    out = frame.assign(host=hosts).explode("host")
    out["host"] = out["host"].str.strip()
    return out[out["host"] != ""]


def target_interruptions(interruptions: pd.DataFrame,
                         components: tuple[str, ...] = TARGET_COMPONENTS) -> pd.DataFrame:
    """Unplanned interruptions of the given components, one row per named host."""
    it = interruptions
    keep = ~it["planned"].astype(bool) & it["component"].isin(components) & it["hosts"].notna()
    return _explode_hosts(it[keep])


def collect_events(signals: pd.DataFrame, interruptions: pd.DataFrame,
                   jobs: pd.DataFrame | None = None, *,
                   components: tuple[str, ...] = TARGET_COMPONENTS,
                   telemetry: pd.DataFrame | None = None) -> Events:
    """Index the canonical tables by unit: precursor families, failures, first appearance.

    Units are every host named by a signal, an interruption or a job's node list.
    """
    from reliab.io.formats.slurm.hostlist import expand_hostlist

    sig = signals[signals["host"].notna()]
    hosts = set(sig["host"].astype(str))
    inter = _explode_hosts(interruptions[interruptions["hosts"].notna()])
    hosts |= set(inter["host"])
    exprs, j_start, j_end = _allocations(jobs)
    expanded = {e: expand_hostlist(e) for e in set(exprs)}  # allocations share node lists
    for names in expanded.values():
        hosts.update(names)
    units = tuple(sorted(hosts))
    index = {h: i for i, h in enumerate(units)}
    key = sig["signal"].astype(str)
    s_unit = sig["host"].astype(str).map(index).to_numpy(np.int64)
    s_time = _us(sig["time"])
    fams = {}
    for fam, pattern in FAMILIES.items():
        m = key.str.contains(pattern, regex=True, flags=re.I).to_numpy(bool)
        fams[fam] = (s_unit[m], s_time[m])
    fams["interrupt"] = (inter["host"].map(index).to_numpy(np.int64), _us(inter["time"]))
    tgt = target_interruptions(interruptions, components)
    lost = (tgt["lost_gpu_hours"].astype(float).to_numpy() if "lost_gpu_hours" in tgt
            else np.full(len(tgt), np.nan))
    first = np.full(len(units), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, s_unit, s_time)
    service = None
    if exprs:
        ids = {e: np.fromiter((index[h] for h in names), np.int64, len(names))
               for e, names in expanded.items()}
        su = np.concatenate([ids[e] for e in exprs])
        n = np.array([len(ids[e]) for e in exprs])
        service = (su, np.repeat(j_start, n), np.repeat(j_end, n))
        np.minimum.at(first, su, service[1])
    return Events(units, fams, (tgt["host"].map(index).to_numpy(np.int64), _us(tgt["time"]), lost),
                  first, service, telemetry)


def _allocations(jobs: pd.DataFrame | None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Node list, start and end (µs; far future while running) of every started allocation."""
    if jobs is None or not len(jobs) or "nodelist" not in jobs:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
    j = jobs[jobs["nodelist"].notna() & jobs["start"].notna()]
    never = np.iinfo(np.int64).max // 4
    end = np.where(j["end"].isna(), never, _us(j["end"].fillna(j["start"])))
    return list(j["nodelist"].astype(str)), _us(j["start"]), end.astype(np.int64)


class _Keyed:
    """Events of one family as sorted keys ``unit * span + (t - origin)``."""

    def __init__(self, unit: np.ndarray, time: np.ndarray, origin: int, span: int) -> None:
        self.origin, self.span = origin, span
        self.keys = np.sort(unit.astype(np.int64) * span + (time - origin))
        self.times = self.keys % span  # sorted within each unit

    def query(self, unit: np.ndarray, t: np.ndarray) -> np.ndarray:
        return unit.astype(np.int64) * self.span + (t - self.origin)

    def count_before(self, q: np.ndarray) -> np.ndarray:
        """Events of the unit strictly before the queried time (cumulative count)."""
        return np.searchsorted(self.keys, q, side="left")


def _own(k: _Keyed, unit: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Events of each row's own unit strictly before ``t``."""
    return k.count_before(k.query(unit, t)) - k.count_before(unit.astype(np.int64) * k.span)


def build_features(events: Events, times: pd.DatetimeIndex, *,
                   lookahead_h: float = 0.0) -> pd.DataFrame:
    """One row per (prediction time, unit) with the trailing-window features.

    Parameters
    ----------
    events : Events
        From :func:`collect_events`.
    times : DatetimeIndex
        Prediction times (UTC).
    lookahead_h : float
        Hours by which every window may reach *past* the prediction time.  Always 0 in use;
        the leakage test sets it to show that the test catches a window that leaks.
    """
    n_u = len(events.units)
    t_us = _us(pd.Series(times)).astype(np.int64)
    unit = np.tile(np.arange(n_u, dtype=np.int64), len(t_us))
    t = np.repeat(t_us, n_u)
    ahead = int(round(lookahead_h * US_PER_H))
    all_t = [x[1] for x in events.families.values() if len(x[1])] + [t_us]
    if events.service is not None:
        all_t.append(events.service[1])
    lo = min(int(a.min()) for a in all_t) - int(800 * US_PER_H)
    hi = max(int(a.max()) for a in all_t) + int(800 * US_PER_H)
    span = hi - lo + 1
    out: dict[str, np.ndarray] = {}
    fams = dict(events.families)
    fams["failure"] = events.failures[:2]
    for fam, (u, tt) in fams.items():
        k = _Keyed(u, tt, lo, span)
        q = k.query(unit, t + ahead)
        upto = k.count_before(q)
        for name, w in WINDOWS_H.items():
            out[f"{fam}_{name}"] = (upto - k.count_before(q - int(w * US_PER_H))).astype(np.float64)
        start = k.count_before(unit * span)
        has = upto > start
        last = (k.times[np.maximum(upto - 1, 0)] if len(k.times) else np.zeros(len(q), np.int64)) + lo
        out[f"{fam}_since_h"] = np.where(has, np.minimum((t - last) / US_PER_H, SINCE_CAP_H),
                                         SINCE_CAP_H)
        if fam == "failure":
            out["failure_total"] = (upto - start).astype(np.float64)
    if events.service is not None:  # allocations running at T: started, not ended, by T
        su, s0, s1 = events.service
        keep = s1 < np.iinfo(np.int64).max // 4
        started, ended = _Keyed(su, s0, lo, span), _Keyed(su[keep], s1[keep], lo, span)
        out["in_service"] = (_own(started, unit, t + 1) - _own(ended, unit, t + 1)).astype(float)
    first = events.first_seen[unit]
    out["age_h"] = np.where(first < t, (t - np.minimum(first, t)) / US_PER_H, 0.0)
    out.update(telemetry_features(events.telemetry, events.units, unit, t + ahead))
    frame = pd.DataFrame(out)
    frame.insert(0, "unit", np.asarray(events.units, dtype=object)[unit])
    frame.insert(1, "time", pd.to_datetime(t * 1000, utc=True))
    frame.insert(2, "unit_index", unit)
    return frame


def label(events: Events, features: pd.DataFrame, horizon_h: float) -> np.ndarray:
    """1 where the unit has a target interruption in ``[T, T + horizon)``."""
    u, tt = events.failures[:2]
    if not len(tt):
        return np.zeros(len(features), dtype=np.int8)
    t = _us(features["time"])
    h = int(round(horizon_h * US_PER_H))
    base = min(int(tt.min()), int(t.min())) - h - 1
    span = max(int(tt.max()), int(t.max())) + 2 * h + 2 - base
    keys = np.sort(u.astype(np.int64) * span + (tt - base))
    q = features["unit_index"].to_numpy(np.int64) * span + (t - base)
    n = np.searchsorted(keys, q + h, side="left") - np.searchsorted(keys, q, side="left")
    return (n > 0).astype(np.int8)


def feature_columns(frame: pd.DataFrame) -> list[str]:
    """The numeric feature columns of a :func:`build_features` frame."""
    return [c for c in frame.columns if c not in ("unit", "time", "unit_index")]
