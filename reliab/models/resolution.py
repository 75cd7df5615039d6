"""Time resolution of recorded timestamps, and the intervals it puts around times between events.

A log that records failures to the minute does not say that two failures 0 minutes apart
happened together: it says the gap between them was less than a minute.  Treating such gaps as
zero (or dropping them, or setting them to a guessed half minute) changes a fitted Weibull
shape a great deal; treating them as interval-censored observations is the likelihood's own
answer (Meeker & Escobar 1998, *Statistical Methods for Reliability Data*, §2.2 and §7.2, on
readout and rounded data; Heitjan & Rubin 1991, "Ignorability and coarse data", *Annals of
Statistics* 19:2244–2253).

The interval of a gap
---------------------
Let the true event times be ``T1 <= T2`` and the recorded stamps ``s1, s2`` with resolution
``r``.  If stamps are truncated, ``T = s + U`` with ``U`` in ``[0, r)``; if rounded, ``U`` in
``[-r/2, r/2)``: in both cases ``T2 - T1 = (s2 - s1) + (U2 - U1)`` with ``U2 - U1`` in
``(-r, r)``.  Since events are ordered, the true gap ``G`` lies in::

    (max(g - r, 0), g + r),    g = s2 - s1,

so a zero gap becomes ``(0, r)`` (the difference of two stamps in the same minute is below a
minute) and a nonzero gap is known to within one resolution either side.  Used as the interval
``(lower, upper]`` of an interval-censored likelihood this is exact when the gaps are
independent of where in its minute each event fell (coarsening at random, Heitjan & Rubin).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

#: candidate resolutions, coarsest first: (name, seconds)
RESOLUTIONS: tuple[tuple[str, float], ...] = (
    ("day", 86400.0), ("hour", 3600.0), ("minute", 60.0), ("second", 1.0),
    ("millisecond", 1e-3), ("microsecond", 1e-6))
#: resolution finer than this share of the smallest nonzero gap is negligible (exact times)
NEGLIGIBLE = 0.01


@dataclass(frozen=True)
class Resolution:
    """The coarsest unit every timestamp is a whole multiple of.

    Attributes
    ----------
    name : str
        ``"day"``, ``"hour"``, ``"minute"``, ``"second"``, ``"millisecond"``,
        ``"microsecond"``, ``"nanosecond"``, or ``"unknown"`` (fewer than two timestamps).
    seconds : float
        The resolution in seconds (0 when unknown).
    n : int
        Number of timestamps it was inferred from.
    """

    name: str
    seconds: float
    n: int

    @property
    def hours(self) -> float:
        """The resolution in hours."""
        return self.seconds / 3600.0


def infer_resolution(times: ArrayLike | pd.Series) -> Resolution:
    """Infer the time resolution of a series of timestamps.

    The resolution is the coarsest of day, hour, minute, second, millisecond and microsecond
    of which every timestamp (its wall-clock value, in its own time zone) is a whole multiple:
    timestamps all with zero seconds are recorded to the minute.  Missing values are ignored.

    Parameters
    ----------
    times
        Timestamps (datetime-like; time-zone aware or naive).

    Returns
    -------
    Resolution
        ``"unknown"`` with 0 seconds when fewer than two timestamps are given: one stamp on a
        whole hour says nothing about the clock that wrote it.
    """
    ts = pd.Series(pd.to_datetime(pd.Series(times)))
    if getattr(ts.dt, "tz", None) is not None:
        ts = ts.dt.tz_localize(None)
    ns = ts.dropna().astype("datetime64[ns]").astype("int64").to_numpy()
    if ns.size < 2:
        return Resolution("unknown", 0.0, int(ns.size))
    for name, seconds in RESOLUTIONS:
        if not np.any(ns % round(seconds * 1e9)):
            return Resolution(name, seconds, int(ns.size))
    return Resolution("nanosecond", 1e-9, int(ns.size))


def gap_bounds(gaps: ArrayLike, resolution: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Interval ``(max(g - r, 0), g + r)`` of each gap ``g`` between stamps of resolution ``r``.

    Parameters
    ----------
    gaps
        Differences of recorded stamps (>= 0), in any unit.
    resolution
        The stamps' resolution ``r`` in the same unit (0: exact, ``lower == upper == g``).

    Returns
    -------
    (lower, upper)
        A zero gap becomes ``(0, r)``; see the module notes for the derivation.
    """
    g = np.asarray(gaps, dtype=float)
    if np.any(g < 0):
        raise ValueError(f"{int((g < 0).sum())} negative gap(s); sort the timestamps first")
    if resolution < 0:
        raise ValueError(f"resolution must be >= 0, got {resolution!r}")
    if resolution == 0:
        return g.copy(), g.copy()
    return np.maximum(g - resolution, 0.0), g + resolution


def negligible(gaps: ArrayLike, resolution: float) -> bool:
    """Whether ``resolution`` is below :data:`NEGLIGIBLE` of the smallest nonzero gap and no
    gap is zero, so the gaps may be fitted as exact times."""
    g = np.asarray(gaps, dtype=float)
    if resolution == 0:
        return True
    if np.any(g == 0) or not np.any(g > 0):
        return False
    return resolution < NEGLIGIBLE * float(g[g > 0].min())
