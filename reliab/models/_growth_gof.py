"""Cramér–von Mises goodness-of-fit test of the Crow–AMSAA power-law NHPP.

For individual failure times ``X_1 < … < X_M`` with end of observation ``T`` (time-terminated:
``M = N``, ``T`` the end; failure-terminated: ``M = N − 1``, ``T = X_N``),

``C²_M = 1/(12M) + Σ_{i=1}^{M} (Z_i − (2i − 1)/(2M))²``,  ``Z_i = (X_i / T)^β̄``,

with the unbiased shape estimate ``β̄ = (M − 1) / Σ_{i=1}^{M} ln(T / X_i)`` (equal to
``(N − 1)/N · β̂`` time-terminated and ``(N − 2)/N · β̂`` failure-terminated).  Under the
model, given β, the ``(X_i/T)^β`` are ordered uniforms; the null hypothesis that the
power law fits is rejected when ``C²_M`` exceeds the critical value for ``M`` at the chosen
significance level (Crow 1974, "Reliability analysis for complex, repairable systems", in
*Reliability and Biometry*, SIAM, 379–410; MIL-HDBK-189C (2011), "Reliability growth
management", §5 goodness-of-fit and its table of critical values of the Cramér–von Mises
statistic).

The critical values below are the handbook's table (rows M = 2 … 20, 30, 60, 100; columns
α = 0.20, 0.15, 0.10, 0.05, 0.01).  Between tabulated rows the value is interpolated
linearly in M; beyond M = 100 the M = 100 row is used (the table's rows change by at most
0.001 from M = 60 to 100: the limiting distribution has been reached).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: significance levels of the handbook's table (columns)
LEVELS: tuple[float, ...] = (0.20, 0.15, 0.10, 0.05, 0.01)

#: MIL-HDBK-189C / Crow (1974): critical values of C²_M by M (rows) and level (columns)
CRITICAL_VALUES: dict[int, tuple[float, ...]] = {
    2: (0.138, 0.149, 0.162, 0.175, 0.186),
    3: (0.121, 0.135, 0.154, 0.184, 0.230),
    4: (0.121, 0.134, 0.155, 0.191, 0.280),
    5: (0.121, 0.137, 0.160, 0.199, 0.300),
    6: (0.123, 0.139, 0.162, 0.204, 0.310),
    7: (0.124, 0.140, 0.165, 0.208, 0.320),
    8: (0.124, 0.141, 0.165, 0.210, 0.320),
    9: (0.125, 0.142, 0.167, 0.212, 0.320),
    10: (0.125, 0.142, 0.167, 0.212, 0.320),
    11: (0.126, 0.143, 0.169, 0.214, 0.320),
    12: (0.126, 0.144, 0.169, 0.214, 0.320),
    13: (0.126, 0.144, 0.169, 0.214, 0.330),
    14: (0.126, 0.144, 0.169, 0.214, 0.330),
    15: (0.126, 0.144, 0.169, 0.215, 0.330),
    16: (0.127, 0.145, 0.171, 0.216, 0.330),
    17: (0.127, 0.145, 0.171, 0.217, 0.330),
    18: (0.127, 0.146, 0.171, 0.217, 0.330),
    19: (0.127, 0.146, 0.171, 0.217, 0.330),
    20: (0.128, 0.146, 0.172, 0.217, 0.330),
    30: (0.128, 0.146, 0.172, 0.218, 0.330),
    60: (0.128, 0.147, 0.173, 0.220, 0.330),
    100: (0.129, 0.147, 0.173, 0.220, 0.340),
}


@dataclass(frozen=True)
class CramerVonMises:
    """Cramér–von Mises test of the power law: statistic, critical value, level, decision."""

    statistic: float
    critical_value: float
    level: float
    m: int
    reject: bool
    beta_used: float

    def as_row(self) -> dict[str, float | int | bool]:
        """The fields as one flat mapping (for summaries)."""
        return {"statistic": self.statistic, "critical_value": self.critical_value,
                "level": self.level, "m": self.m, "reject": self.reject,
                "beta_used": self.beta_used}


def critical_value(m: int, level: float) -> float:
    """Critical value of ``C²_M`` at significance ``level`` (one of :data:`LEVELS`).

    Linear interpolation in ``m`` between tabulated rows; the M = 100 row beyond 100.
    """
    matches = [j for j, lv in enumerate(LEVELS) if math.isclose(lv, level)]
    if not matches:
        raise ValueError(f"gof_level must be one of {LEVELS} (the handbook's table), got {level}")
    if m < 2:
        raise ValueError(f"the Cramér–von Mises test needs M >= 2 failures, got M = {m}")
    col = matches[0]
    rows = np.array(sorted(CRITICAL_VALUES))
    values = np.array([CRITICAL_VALUES[r][col] for r in rows])
    return float(np.interp(min(m, int(rows[-1])), rows, values))


def cramer_von_mises(times: np.ndarray, end: float, termination: str,
                     level: float = 0.10) -> CramerVonMises:
    """``C²_M`` of sorted failure ``times`` observed to ``end`` (see the module docstring)."""
    x = times if termination == "time" else times[:-1]
    m = x.size
    crit = critical_value(m, level)
    log_ratio = math.log(end) - np.log(x)  # logs: no overflow of end / x at extreme scales
    beta_bar = (m - 1) / float(np.sum(log_ratio))
    z = np.exp(-beta_bar * log_ratio)
    i = np.arange(1, m + 1)
    stat = 1.0 / (12 * m) + float(np.sum((z - (2 * i - 1) / (2 * m)) ** 2))
    return CramerVonMises(statistic=stat, critical_value=crit, level=level, m=m,
                          reject=bool(stat > crit), beta_used=beta_bar)


__all__ = ["CRITICAL_VALUES", "LEVELS", "CramerVonMises", "cramer_von_mises", "critical_value"]
