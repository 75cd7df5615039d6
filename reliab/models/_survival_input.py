"""Validation of lifetime data (durations, event indicators, delayed entry) for survival models.

Private to ``reliab.models``: every survival estimator calls :func:`as_lifetimes` once, so the
rules (and the wording of the errors) are the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class Lifetimes:
    """Validated lifetime data: float durations, boolean events, float entries (0 if none)."""

    durations: NDArray[np.float64]
    observed: NDArray[np.bool_]
    entry: NDArray[np.float64]
    has_entry: bool

    @property
    def n(self) -> int:
        """Number of units."""
        return int(self.durations.size)

    @property
    def n_failures(self) -> int:
        """Number of observed failures."""
        return int(np.count_nonzero(self.observed))


def _first_bad(mask: NDArray[np.bool_], what: str) -> None:
    """Raise ``ValueError`` naming how many entries of ``mask`` are set and the first index."""
    if mask.any():
        idx = int(np.flatnonzero(mask)[0])
        raise ValueError(f"{int(mask.sum())} {what} (first at index {idx})")


def _as_float(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    _first_bad(~np.isfinite(arr), f"{name} value(s) are missing or not finite")
    return arr


def check_conf_level(conf_level: float) -> float:
    """Return ``conf_level`` as float if it lies strictly between 0 and 1, else raise."""
    level = float(conf_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"conf_level must lie strictly between 0 and 1, got {conf_level!r}")
    return level


def as_lifetimes(
    durations: ArrayLike,
    observed: ArrayLike | None,
    entry: ArrayLike | None = None,
    *,
    positive: bool = False,
) -> Lifetimes:
    """Validate durations, event indicators and optional entry times.

    Parameters
    ----------
    durations
        Time at failure or censoring (hours, or any unit), one per unit.
    observed
        1/True where the unit failed at its duration, 0/False where it was censored;
        ``None`` means every unit failed.
    entry
        Delayed-entry (left-truncation) time per unit, ``0 <= entry <= duration``.
    positive
        Require durations strictly above zero (models on the log scale).

    Raises
    ------
    ValueError
        With the number of offending values and the index of the first one.
    """
    t = _as_float(durations, "durations")
    if observed is None:
        d = np.ones(t.size, dtype=bool)
    else:
        raw = np.asarray(observed)
        if raw.shape != t.shape:
            raise ValueError(f"observed has {raw.size} values but durations has {t.size}")
        rawf = raw.astype(float)
        _first_bad(~np.isin(rawf, (0.0, 1.0)), "observed value(s) are not 0/1 or boolean")
        d = rawf.astype(bool)
    _first_bad(t < 0, "negative duration(s)")
    if positive:
        _first_bad(t <= 0, "duration(s) are zero; this model needs durations > 0")
    if entry is None:
        return Lifetimes(t, d, np.zeros_like(t), False)
    e = _as_float(entry, "entry")
    if e.shape != t.shape:
        raise ValueError(f"entry has {e.size} values but durations has {t.size}")
    _first_bad(e < 0, "negative entry time(s)")
    _first_bad(e > t, "entry time(s) later than the duration")
    return Lifetimes(t, d, e, True)
