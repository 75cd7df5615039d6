"""Telemetry aggregates per node and prediction time, built only from the past.

Where the input holds GPU telemetry (the ``telemetry`` table: ``time``, ``host`` and the
metric columns ``temp_c`` and ``power_w``), each (unit, prediction time ``T``) row gains the
maximum GPU temperature and the mean and standard deviation of GPU power over the trailing
1 day and 7 days.  Heat and power swings are the environmental stresses the Llama 3 report
names (Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.4); how much risk
they carry on a fleet is for the models to measure.

Samples are binned by hour; a row at ``T`` uses only the bins that end at or before the hour
``T`` falls in, so every sample it sees is strictly earlier than ``T``.  Units without
telemetry (or with none in the window) get NaN, which the boosted classifier handles
natively; the Poisson hazard model does not use these columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

US_PER_H = 3_600_000_000
TELEMETRY_WINDOWS_H: dict[str, int] = {"1d": 24, "7d": 168}


def _hour_bins(telemetry: pd.DataFrame, units: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Unit index, hour bin and the two metrics of every sample of a known unit."""
    index = {h: i for i, h in enumerate(units)}
    t = telemetry[telemetry["host"].notna()]
    unit = t["host"].astype(str).map(index)
    keep = unit.notna().to_numpy()
    t, unit = t[keep], unit[keep].to_numpy(np.int64)
    us = (pd.to_datetime(t["time"], utc=True).astype("datetime64[ns, UTC]").to_numpy(dtype="datetime64[ns]")
          .astype(np.int64) // 1000)
    metrics = pd.DataFrame({c: (t[c].astype(float).to_numpy() if c in t else np.nan)
                            for c in ("temp_c", "power_w")})
    return unit, np.floor_divide(us, US_PER_H), metrics


def telemetry_features(telemetry: pd.DataFrame | None, units: tuple[str, ...], unit: np.ndarray,
                       t_us: np.ndarray) -> dict[str, np.ndarray]:
    """``temp_max_{w}``, ``power_mean_{w}`` and ``power_sd_{w}`` for each (unit, time) row.

    Parameters
    ----------
    telemetry : DataFrame or None
        The ``telemetry`` table; ``None`` or a table without ``temp_c``/``power_w`` gives no
        columns at all.
    units : tuple of str
        Unit names (hosts), indexed by ``unit``.
    unit, t_us : ndarray
        Row unit index and prediction time (UTC µs).
    """
    if telemetry is None or not len(telemetry) or not ({"temp_c", "power_w"} & set(telemetry.columns)):
        return {}
    s_unit, s_bin, m = _hour_bins(telemetry, units)
    if not len(s_unit):
        return {}
    b0 = int(s_bin.min())
    n_bins = int(s_bin.max()) - b0 + 1
    cell = s_unit * n_bins + (s_bin - b0)
    size = len(units) * n_bins
    tmax = np.full(size, -np.inf)
    temp = m["temp_c"].to_numpy()
    ok = np.isfinite(temp)
    np.maximum.at(tmax, cell[ok], temp[ok])
    power = m["power_w"].to_numpy()
    ok = np.isfinite(power)
    sums = [np.bincount(cell[ok], weights=w, minlength=size) for w in (np.ones(ok.sum()), power[ok], power[ok] ** 2)]
    # prefix sums per unit: P[u, k] = total over the unit's bins < k
    prefix = [np.concatenate([np.zeros((len(units), 1)), np.cumsum(s.reshape(len(units), n_bins), axis=1)], axis=1)
              for s in sums]
    hot = pd.DataFrame(tmax.reshape(len(units), n_bins).T).replace(-np.inf, np.nan)
    q = np.clip(np.floor_divide(t_us, US_PER_H) - b0, 0, n_bins)  # bins < q end by T's hour
    out: dict[str, np.ndarray] = {}
    for name, w in TELEMETRY_WINDOWS_H.items():
        lo = np.clip(q - w, 0, n_bins)
        roll = hot.rolling(w, min_periods=1).max().to_numpy().T  # [u, k]: max over bins (k-w, k]
        last = roll[unit, np.maximum(q - 1, 0)]
        out[f"temp_max_{name}"] = np.where(q > 0, last, np.nan)
        n, s1, s2 = (p[unit, q] - p[unit, lo] for p in prefix)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = s1 / n
            var = np.maximum(s2 / n - mean ** 2, 0.0) * n / (n - 1)
        out[f"power_mean_{name}"] = np.where(n > 0, mean, np.nan)
        out[f"power_sd_{name}"] = np.where(n > 1, np.sqrt(var), np.nan)
    return out


__all__ = ["TELEMETRY_WINDOWS_H", "telemetry_features"]
