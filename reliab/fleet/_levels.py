"""Comparisons of float32 samples with float64 levels, exact, without a float64 copy.

Telemetry comes as float32 (temperatures, power) and the levels asked for as float64
(70 °C, 300 W).  NumPy compares a float32 array with a float64 scalar by casting every
element; the answers are those of the real numbers, since every float32 is a float64.
Both functions here give the same answers from float32 arithmetic:

* ``x > t`` equals ``x > t32`` where ``t32`` is the largest float32 not above ``t``
  (rounding toward −∞): no float32 lies strictly between ``t32`` and ``t``.
* ``|x[i+1] − x[i]| ≥ t``: a float32 difference is the exact one rounded to nearest, and
  rounding is monotone, so an exact difference of at least ``t`` rounds to at least
  ``t32``.  The elements whose float32 difference reaches ``t32`` (a superset, few when
  steps are rare) are decided again in float64.

IEEE 754-2019, §4.3 (rounding-direction attributes) and §5.11 (comparisons); Goldberg,
"What every computer scientist should know about floating-point arithmetic", ACM Computing
Surveys 23(1), 1991, §1.2 (rounding is monotone).
"""

from __future__ import annotations

import numpy as np

__all__ = ["float32_floor", "above", "steps_at_least"]


def float32_floor(level: float) -> np.float32:
    """The largest float32 not above ``level`` (NaN for NaN; ±inf beyond the float32 range)."""
    t = np.float64(level)
    with np.errstate(over="ignore"):
        f = np.float32(t)
    if f > t:  # rounded up: the float32 below it
        f = np.nextafter(f, np.float32(-np.inf))
    return f


def above(x: np.ndarray, level: float) -> np.ndarray:
    """``x > level`` as NumPy gives it for a float64 ``level``, in the dtype of ``x``."""
    if x.dtype == np.float32:
        return x > float32_floor(level)
    return x > np.float64(level)


def steps_at_least(x: np.ndarray, level: float) -> np.ndarray:
    """``|x[i+1] − x[i]| ≥ level`` for each ``i`` as the float64 arithmetic gives it (NaN:
    False), ``len(x) − 1`` booleans."""
    if x.dtype != np.float32:
        d = np.subtract(x[1:], x[:-1], dtype=np.float64)
        np.abs(d, out=d)
        return d >= np.float64(level)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.subtract(x[1:], x[:-1])
        np.abs(d, out=d)
    out = d >= float32_floor(level)  # every exact step, and some float32 roundings up to it
    maybe = np.flatnonzero(out)
    if len(maybe):
        exact = np.abs(x[maybe + 1].astype(np.float64) - x[maybe].astype(np.float64))
        out[maybe] = exact >= np.float64(level)
    return out
