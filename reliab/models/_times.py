"""Failure times of one repairable system: validated, sorted, near-equal times made ties.

Two times closer than floating-point resolution cannot be told apart by any data that
produced them, yet the power-law likelihood treats their difference as information (two
times 1e-15 apart gave a Crow–AMSAA shape of 1.8e15).  Such times are snapped to the
earlier one, so they count as a tie.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: relative gap below which two times are one tie: 64 units in the last place
TIE_RTOL = 64 * float(np.finfo(float).eps)


def failure_times(times: ArrayLike, *, name: str = "times") -> NDArray[np.float64]:
    """Sorted finite positive times with near-equal neighbours snapped together.

    Raises
    ------
    ValueError
        When a value is missing, infinite or not positive (the message names ``name``).
    """
    try:
        t = np.sort(np.asarray(times, dtype=float).ravel())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers: {exc}") from None
    if t.size and not np.all(np.isfinite(t)):
        raise ValueError(f"{name} must be finite; {int((~np.isfinite(t)).sum())} value(s) are "
                         "missing or infinite")
    if t.size and t[0] <= 0:
        raise ValueError(f"{name} must be > 0; the smallest is {t[0]!r}")
    if t.size > 1:
        close = np.diff(t) <= TIE_RTOL * t[1:]
        if close.any():
            start = np.r_[True, ~close]
            t = t[np.maximum.accumulate(np.where(start, np.arange(t.size), 0))]
    return t


def end_time(t: NDArray[np.float64], end: float | None, *, name: str = "end") -> float | None:
    """``end`` checked against the last time (``None`` stays ``None``); a value within
    resolution of the last time is that time."""
    if end is None:
        return None
    try:
        e = float(end)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {end!r}") from None
    if not np.isfinite(e):
        raise ValueError(f"{name} must be finite, got {end!r}")
    if t.size and abs(e - t[-1]) <= TIE_RTOL * abs(t[-1]):
        return float(t[-1])
    if t.size and e < t[-1]:
        raise ValueError(f"{name} ({e}) is before the last failure time ({t[-1]})")
    return e


__all__ = ["TIE_RTOL", "end_time", "failure_times"]
