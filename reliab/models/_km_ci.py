"""Pointwise intervals of a Kaplan–Meier curve and quantiles of a step curve with their limits.

The three interval types are those of Kalbfleisch & Prentice (2002, §1.4) and Klein &
Moeschberger (2003, §4.3): with ``se`` the Greenwood standard deviation of ``log S``,

* ``"log"``: ``S exp(+-z se)``, the upper bound capped at 1;
* ``"log-log"``: ``exp(-exp(log(-log S) +- z se / log S))``;
* ``"plain"``: ``S +- z se S`` clipped to [0, 1] (eq. 4.3.1 of Klein & Moeschberger).

No interval exists where ``S = 0`` (any type) or where ``S = 1`` on the log(-log) scale: the
bounds are NaN there, the convention of R's ``survival`` package (Therneau, *A Package for
Survival Analysis in R*).

Quantile limits follow Brookmeyer, R. and Crowley, J. (1982), A confidence interval for the
median survival time, Biometrics 38, 29–41: the limits of the ``p``-quantile are the
``p``-quantiles of the upper and lower pointwise bands.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

CONF_TYPES = ("log", "log-log", "plain")
_TOL = math.sqrt(np.finfo(float).eps)


def check_conf_type(conf_type: str) -> str:
    """Return ``conf_type`` if it is one of ``CONF_TYPES``, else raise ``ValueError``."""
    if conf_type not in CONF_TYPES:
        raise ValueError(f"conf_type must be one of {', '.join(CONF_TYPES)}; got {conf_type!r}")
    return conf_type


def km_bounds(surv: NDArray[np.float64], se_log: NDArray[np.float64], z: float,
              conf_type: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper pointwise bounds of ``surv`` given the standard deviation of ``log S``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if conf_type == "plain":
            half = z * se_log * surv
            low, high = np.maximum(surv - half, 0.0), np.minimum(surv + half, 1.0)
        elif conf_type == "log":
            s = np.where(surv > 0, surv, np.nan)
            low, high = s * np.exp(-z * se_log), np.minimum(s * np.exp(z * se_log), 1.0)
        else:
            s = np.where((surv > 0) & (surv < 1), surv, np.nan)
            lc, half = np.log(-np.log(s)), z * se_log / np.log(s)
            low, high = np.exp(-np.exp(lc - half)), np.exp(-np.exp(lc + half))
    none = surv <= 0
    return np.where(none, np.nan, low), np.where(none, np.nan, high)


def step_quantile(times: NDArray[np.float64], failed: NDArray[np.float64], p: float,
                  last_time: float) -> float:
    """``p``-quantile of a non-decreasing step curve ``failed`` (``1 - S``) over ``times``.

    The first time with ``failed >= p``; where the curve sits at ``p`` exactly (within
    ``sqrt(machine epsilon)``, since a product of ratios is not stored exactly) the midpoint of
    that flat and the next rise, or of the flat and ``last_time`` when the curve stays flat to
    the end.  NaN points (a band with no interval) are skipped, and a NaN last point forbids the
    flat-to-the-end rule.  inf when the curve never reaches ``p``.
    """
    ok = ~np.isnan(failed)
    t, y = times[ok], failed[ok]
    reached = np.flatnonzero(y >= p - _TOL)
    if not reached.size:
        return math.inf
    first = int(reached[0])
    if y[first] > p + _TOL:
        return float(t[first])
    beyond = np.flatnonzero(y > p + _TOL)
    if beyond.size:
        return (float(t[first]) + float(t[beyond[0]])) / 2.0
    if np.isnan(failed[-1]):
        return math.inf
    return (float(t[first]) + last_time) / 2.0


__all__ = ["CONF_TYPES", "check_conf_type", "km_bounds", "step_quantile"]
