"""Mergeable window partials of one partition of telemetry, as pandas frames.

:func:`telemetry_partials` cleans a partition (:func:`reliab.align.clean_times`), cuts it into
per-series, per-window partial sums (:func:`reliab.windows.window_partials`) and adds the
power-swing columns: per series and window the number of steps of at least the swing level
between consecutive samples inside the window, and the window's first and last value (the
steps across windows and partitions are added when the partials meet).  Both the local
reduction of :mod:`reliab.fleet.telemetry` and the per-file fallback of
:mod:`reliab.fleet._chunk` (a file that needs cleaning) use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from reliab.align import clean_times, key_codes
from reliab.windows import SERIES, window_partials

__all__ = ["telemetry_partials", "FIRST", "LAST", "STEPS"]

FIRST, LAST, STEPS = "__vfirst", "__vlast", "__steps"


def _swing_partials(clean: pd.DataFrame, freq: str, swings: Mapping[str, float]) -> pd.DataFrame:
    """Per series and window: steps of at least ``swings[c]`` inside, first and last value."""
    step = pd.Timedelta(pd.tseries.frequencies.to_offset(freq)).value
    tns = pd.DatetimeIndex(clean["time"]).as_unit("ns").asi8
    series = key_codes(clean, list(SERIES))
    key = tns // step
    order = np.lexsort((tns, key, series))
    series, key = series[order], key[order]
    new = np.r_[True, (series[1:] != series[:-1]) | (key[1:] != key[:-1])] if len(order) else np.zeros(0, bool)
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(order)] - 1 if len(starts) else starts
    rows = order[starts]
    out = pd.DataFrame({"host": clean["host"].iloc[rows].astype("string").to_numpy(),
                        "gpu": clean["gpu"].iloc[rows].astype("string").to_numpy(),
                        "window": pd.to_datetime(key[starts] * step, unit="ns", utc=True)})
    for c, level in swings.items():
        x = clean[c].to_numpy(dtype=float)[order]
        jump = np.abs(np.diff(x)) >= float(level)  # NaN compares False: no step across a gap
        inside = np.r_[False, jump & ~new[1:]]
        out[f"{c}{STEPS}"] = np.add.reduceat(inside.astype(np.int64), starts) if len(starts) else inside[:0]
        out[f"{c}{FIRST}"] = x[starts]
        out[f"{c}{LAST}"] = x[ends]
    return out


def telemetry_partials(frame: pd.DataFrame, *, freq: str = "1h", columns: Sequence[str] | None = None,
                       thresholds: Mapping[str, float] | None = None, swings: Mapping[str, float] | None = None,
                       duplicates: Literal["mean", "first", "last", "error"] = "mean") -> pd.DataFrame:
    """Mergeable partials of one partition of telemetry (:func:`reliab.windows.window_partials`
    plus the swing columns), with string ``host``/``gpu`` keys."""
    tel = frame if "gpu" in frame.columns else frame.assign(gpu=pd.Series(pd.NA, index=frame.index, dtype="string"))
    tel = tel.assign(host=tel["host"].astype("category"), gpu=tel["gpu"].astype("category"))
    clean, _ = clean_times(tel, by=list(SERIES), duplicates=duplicates, name="telemetry")
    parts = window_partials(clean, freq=freq, columns=columns, thresholds=thresholds)
    parts = parts.assign(host=parts["host"].astype("string"), gpu=parts["gpu"].astype("string"))
    if swings:
        parts = parts.merge(_swing_partials(clean, freq, swings), on=["host", "gpu", "window"], how="left")
    return parts
