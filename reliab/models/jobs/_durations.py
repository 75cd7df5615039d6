"""Checked durations and counts for the job-level models: every bad value names its parameter.

Durations are float hours (the package's convention, see :mod:`reliab.schema`).  Where a user is
more likely to think in minutes (checkpoint intervals, restart times) a string such as
``"5min"`` or ``"2h"`` or a ``pandas.Timedelta`` is accepted too and converted to hours.
"""

from __future__ import annotations

import math
from datetime import timedelta
from numbers import Integral, Real

import pandas as pd

#: A duration: float hours, or anything ``pandas.Timedelta`` reads ("5min", "2h", "90s").
HoursLike = float | int | str | pd.Timedelta | timedelta


def to_hours(value: HoursLike, name: str, *, positive: bool = False) -> float:
    """``value`` as float hours; ``ValueError`` naming ``name`` if it is negative or not finite.

    Parameters
    ----------
    value : float, str or timedelta
        Hours as a number, or a duration string / timedelta.
    name : str
        Parameter name used in the error message.
    positive : bool
        Require a value strictly greater than zero.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a duration, got {value!r}")
    if isinstance(value, Real):
        hours = float(value)
    elif isinstance(value, (pd.Timedelta, timedelta)):
        hours = pd.Timedelta(value) / pd.Timedelta(hours=1)
    elif isinstance(value, str):
        hours = _parse_text(value.strip(), name)
    else:
        raise ValueError(f"{name} must be hours or a duration such as '5min', got {value!r}")
    if not math.isfinite(hours):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if hours < 0 or (positive and hours == 0):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must be a {need} duration, got {value!r}")
    return hours


def _parse_text(text: str, name: str) -> float:
    try:
        return float(text)  # a bare number is hours
    except ValueError:
        pass
    try:
        td = pd.Timedelta(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name}={text!r} is not a duration such as '5min' or '2h'") from exc
    if pd.isna(td):
        raise ValueError(f"{name}={text!r} is not a duration such as '5min' or '2h'")
    return td / pd.Timedelta(hours=1)


def to_count(value: int, name: str, *, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum``; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (Integral, float)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def to_rate(value: float, name: str) -> float:
    """A non-negative finite rate; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    rate = float(value)
    if not math.isfinite(rate) or rate < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return rate


def check_write(write_h: float, interval_h: float, *, name: str = "checkpoint_write_h") -> None:
    """A checkpoint write may not take longer than the interval between checkpoints."""
    if write_h > interval_h:
        raise ValueError(f"{name}={write_h:g} h is longer than the checkpoint interval "
                         f"{interval_h:g} h: a checkpoint would start before the last one ends")


def check_conf_level(conf_level: float) -> float:
    """``conf_level`` in (0, 1)."""
    if isinstance(conf_level, bool) or not isinstance(conf_level, Real) or not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level!r}")
    return float(conf_level)
