"""Crow–AMSAA (power-law NHPP) reliability-growth model for one repairable system.

Intensity ``u(t) = λ β t^(β−1)``, expected failures ``N(t) = λ t^β`` (β < 1: improving,
β > 1: worsening). With failure times ``T_1 ≤ … ≤ T_n`` and end of observation ``T*``
(``T* = T_n`` failure-terminated, ``T* = T`` time-terminated) the MLEs are
``β̂ = n / Σ ln(T*/T_i)`` (the i = n term is zero when failure-terminated) and
``λ̂ = n / T*^β̂`` (Crow 1974, "Reliability analysis for complex, repairable systems", in
*Reliability and Biometry*, SIAM, 379–410; MIL-HDBK-189C §5; ReliaSoft reliawiki
"Crow-AMSAA (NHPP)", maximum-likelihood section).

Interval methods (all two-sided at ``conf_level``; α = 1 − conf_level):

* **β** — exact pivot. Under the model ``Y_i = λT_i^β`` is a unit-rate HPP, so
  ``2nβ/β̂ = 2 Σ ln(Y*/Y_i)`` is χ²(2n) time-terminated (given n, the Y_i/Y* are uniform order
  statistics) and χ²(2(n−1)) failure-terminated (Crow 1974; Lee & Lee 1978, Technometrics
  20, 41–45). Bounds ``β̂ χ²_{α/2,ν}/(2n)``, ``β̂ χ²_{1−α/2,ν}/(2n)``.
* **unbiased β** — from ``E[1/χ²_ν] = 1/(ν−2)``: ``β̄ = (n−1)/n·β̂`` time-terminated and
  ``(n−2)/n·β̂`` failure-terminated (MIL-HDBK-189C; NIST e-Handbook 8.4.2.3 uses the
  time-terminated form).
* **λ** — Crow bounds conditional on β̂ (ReliaSoft RGA reference, "Crow-AMSAA confidence
  bounds", *Crow bounds on λ*): ``χ²_{α/2,2n}/(2T*^β̂)`` to ``χ²_{1−α/2,2n+2}/(2T*^β̂)``
  time-terminated, ``χ²_{1−α/2,2n}`` in the upper bound failure-terminated. They ignore the
  uncertainty of β̂ and are approximate.
* **instantaneous MTBF at T*** ``M̂ = T*/(nβ̂)`` — failure-terminated: exact, since
  ``M/M̂ = 4n²/(W V)`` with independent ``W ~ χ²(2n−2)``, ``V ~ χ²(2n)`` (Crow 1982,
  Technometrics 24, 67–72); quantiles of ``W V`` by numerical integration.
  Time-terminated: Crow's (1982) normal approximation as printed in the NIST e-Handbook
  §8.4.2.3, ``M̂ n² / (n + z²/4 + √(n z²/2 + z⁴/16))²`` to ``M̂ n² / (n − z√(n/2))²`` with
  ``z = z_{1−α/2}`` (the NIST formula multiplies the modified-MLE MTBF by n(n−1), which is the
  same thing). Crow's tabulated exact coefficients are not reproduced.
* **cumulative MTBF at T*** ``T*/n`` — exact: ``N(T)`` is Poisson (time-terminated) and
  ``λT_n^β ~ Gamma(n)`` (failure-terminated), giving ``2T*/χ²_{1−α/2,2n+2}`` (``2n``) to
  ``2T*/χ²_{α/2,2n}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import integrate, optimize, stats

from reliab._checks import Check, contains, in_range, positive
from reliab._deprecation import renamed, warn_renamed
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError
from reliab.models._growth_gof import CramerVonMises, cramer_von_mises, critical_value
from reliab.models._times import end_time, failure_times


@dataclass(frozen=True)
class CrowAMSAAResult(ResultMixin):
    """Crow–AMSAA fit; times in the unit of the input."""

    params: pd.DataFrame = field(repr=False)
    beta_unbiased: float
    mtbf_instantaneous: tuple[float, float, float]
    mtbf_cumulative: tuple[float, float, float]
    n: int
    end: float
    termination: str
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    times: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    gof: CramerVonMises | None = None

    @property
    def beta(self) -> float:
        """MLE of the shape β."""
        return float(self.params.loc["beta", "estimate"])

    @property
    def lam(self) -> float:
        """MLE of the scale λ (``lambda`` is a keyword)."""
        return float(self.params.loc["lambda", "estimate"])

    def _log_n(self, t: np.ndarray) -> np.ndarray:
        """``ln N(t) = ln λ + β ln t``, in logs so that extreme time scales stay finite."""
        log_lam = math.log(self.n) - self.beta * math.log(self.end)
        with np.errstate(divide="ignore"):
            return log_lam + self.beta * np.log(t)

    def summary(self) -> pd.DataFrame:
        """Rows ``beta``, ``lambda``, ``beta_unbiased``, ``mtbf_instantaneous``,
        ``mtbf_cumulative``; columns ``estimate``, ``low``, ``high``."""
        extra = pd.DataFrame(
            [[self.beta_unbiased, np.nan, np.nan], list(self.mtbf_instantaneous),
             list(self.mtbf_cumulative)],
            index=["beta_unbiased", "mtbf_instantaneous", "mtbf_cumulative"],
            columns=["estimate", "low", "high"])
        return pd.concat([self.params, extra])

    def _meta(self) -> dict[str, Any]:
        meta = super()._meta()
        meta["gof"] = None if self.gof is None else self.gof.as_row()
        return meta

    def invariants(self) -> tuple[Check, ...]:
        """beta, lambda and both MTBFs finite and > 0, each inside its interval."""
        tb = self.summary()
        return (positive("estimates_positive", tb["estimate"]),
                contains("interval_contains_estimate", tb["low"], tb["estimate"], tb["high"]),
                in_range("bounds_nonnegative", tb[["low", "high"]].to_numpy(), 0, allow_nan=True))

    def at(self, t: Any) -> pd.DataFrame:
        """The fitted process at time(s) ``t``: columns time, expected_failures ``λ t^β``,
        intensity ``λ β t^(β−1)`` and mtbf_instantaneous (its reciprocal)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        log_n = self._log_n(tt)
        with np.errstate(over="ignore", divide="ignore"):
            expected = np.exp(log_n)
            intensity = np.exp(log_n + math.log(self.beta) - np.log(tt))
            mtbf = np.exp(np.log(tt) - log_n - math.log(self.beta))
        return pd.DataFrame({"time": tt, "expected_failures": expected, "intensity": intensity,
                             "mtbf_instantaneous": mtbf})

    def expected_failures(self, t: np.ndarray | float) -> np.ndarray:
        """Deprecated: use ``at(t)["expected_failures"]``."""
        warn_renamed("CrowAMSAAResult.expected_failures(t)",
                     'CrowAMSAAResult.at(t)["expected_failures"]')
        with np.errstate(over="ignore"):
            return np.exp(self._log_n(np.asarray(t, dtype=float)))

    def plot(self, ax: Any = None) -> Any:
        """Cumulative failures against time on log–log axes with the fitted ``λ t^β``."""
        fig, ax = new_figure(ax)
        ax.step(self.times, np.arange(1, self.n + 1), where="post", label="observed")
        grid = np.geomspace(self.times[0], self.end, 200)
        ax.plot(grid, self.at(grid)["expected_failures"], label=f"λ t^β, β = {self.beta:.3g}")
        ax.set(xscale="log", yscale="log", xlabel="time (h)", ylabel="cumulative failures (count)",
               title="Crow–AMSAA")
        ax.legend()
        return fig



def _prepare(times: Any, end: float | None) -> tuple[np.ndarray, float, str]:
    t = failure_times(times)
    if t.size < 2:
        raise InsufficientDataError(
            f"Crow-AMSAA needs at least 2 failure times, got {t.size}")
    tend = end_time(t, end)
    if tend is None:
        return t, float(t[-1]), "failure"
    return t, tend, "time"


@lru_cache(maxsize=256)
def _product_chi2_ppf(q: float, df1: float, df2: float) -> float:
    """q-quantile of ``W V`` with independent ``W ~ χ²(df1)``, ``V ~ χ²(df2)``."""

    def cdf(x: float) -> float:
        f = lambda v: stats.chi2.cdf(x / v, df1) * stats.chi2.pdf(v, df2)  # noqa: E731
        lo, hi = stats.chi2.ppf([1e-12, 1 - 1e-12], df2)
        return integrate.quad(f, lo, hi, limit=200, points=[df2])[0]

    mean = df1 * df2
    log_x = optimize.brentq(lambda lx: cdf(math.exp(lx)) - q, math.log(mean) - 30,
                            math.log(mean) + 30, xtol=1e-12)
    return math.exp(log_x)


def _beta_bounds(beta: float, n: int, df: int, alpha: float) -> tuple[float, float]:
    return (beta * stats.chi2.ppf(alpha / 2, df) / (2 * n),
            beta * stats.chi2.ppf(1 - alpha / 2, df) / (2 * n))


def _instantaneous_mtbf(m: float, n: int, termination: str,
                        alpha: float) -> tuple[float, float, list[str]]:
    if termination == "failure":
        lo_q = _product_chi2_ppf(1 - alpha / 2, 2 * n - 2, 2 * n)
        hi_q = _product_chi2_ppf(alpha / 2, 2 * n - 2, 2 * n)
        return m * 4 * n**2 / lo_q, m * 4 * n**2 / hi_q, []
    z = stats.norm.ppf(1 - alpha / 2)
    low = m * n**2 / (n + z**2 / 4 + math.sqrt(n * z**2 / 2 + z**4 / 16)) ** 2
    denom = n - z * math.sqrt(n / 2)
    if denom <= 0:
        return low, math.inf, [f"n = {n} too small for Crow's approximate upper MTBF bound: inf"]
    return low, m * n**2 / denom**2, []


def fit_crow_amsaa(times: Any, *, end: float | None = None, conf_level: float = 0.95,
                   gof_level: float = 0.10) -> CrowAMSAAResult:
    """Fit the Crow–AMSAA power-law NHPP to the failure times of one system.

    Parameters
    ----------
    times : array-like of float
        Failure times (system age or cumulative test time, > 0), in any order.
    end : float, optional
        End of observation (time-terminated). ``None`` means failure-terminated at the last
        failure time. An ``end`` equal to the last failure is taken as time-terminated.
    conf_level : float
        Two-sided confidence level.
    gof_level : float
        Significance level of the Cramér–von Mises goodness-of-fit test, one of the
        handbook table's 0.20, 0.15, 0.10, 0.05, 0.01.

    Returns
    -------
    CrowAMSAAResult
        ``params`` (index ``beta``, ``lambda``; columns ``estimate``, ``low``, ``high``),
        ``beta_unbiased``, ``mtbf_instantaneous`` and ``mtbf_cumulative`` as
        ``(estimate, low, high)`` at ``end``; ``summary()`` stacks them.  ``gof``: the
        Cramér–von Mises test (statistic ``C²_M``, critical value, level, ``reject``;
        MIL-HDBK-189C), ``None`` with a note when M < 2.

    Raises
    ------
    InsufficientDataError
        Fewer than 2 failures, or all failure times equal (times closer than floating-point
        resolution count as equal).
    ValueError
        A time that is missing, infinite or not positive, an ``end`` before the last time,
        or ``conf_level`` outside (0, 1).

    Notes
    -----
    MLE and interval methods, with sources, in the module docstring (Crow 1974, 1982;
    MIL-HDBK-189C; NIST e-Handbook 8.4.2.3). Checked against the NIST 8.4.2.3 example
    (``tests/reference/crow_amsaa.md``).
    """
    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    critical_value(2, gof_level)  # an unknown level fails before any work
    t, tend, termination = _prepare(times, end)
    n, alpha = t.size, 1.0 - conf_level
    log_end = math.log(tend)
    s = float(np.sum(log_end - np.log(t)))  # logs: no overflow of tend / t at extreme scales
    if s <= 0:
        raise InsufficientDataError("all failure times equal the end time: β is not identifiable")
    beta = n / s
    df = 2 * n if termination == "time" else 2 * (n - 1)
    b_lo, b_hi = _beta_bounds(beta, n, df, alpha)
    df_up = 2 * n + 2 if termination == "time" else 2 * n
    notes: list[str] = []
    with np.errstate(over="ignore", under="ignore"):  # λ = n / T^β, computed as a log
        lam, l_lo, l_hi = (float(np.exp(math.log(c) - beta * log_end)) for c in (
            n, stats.chi2.ppf(alpha / 2, 2 * n) / 2, stats.chi2.ppf(1 - alpha / 2, df_up) / 2))
    if not (0.0 < lam < math.inf):
        notes.append(f"λ is outside the float range (ln λ = {math.log(n) - beta * log_end:.6g}); "
                     "use at(t) for the fitted process")
    k = n - 1 if termination == "time" else n - 2
    beta_unb = k / n * beta if k > 0 else math.nan
    if k <= 0:
        notes.append("failure-terminated with n = 2: the unbiased β is undefined (NaN)")
    m_inst = tend / (n * beta)
    i_lo, i_hi, inote = _instantaneous_mtbf(m_inst, n, termination, alpha)
    notes += inote
    m_gof = n if termination == "time" else n - 1
    gof = cramer_von_mises(t, tend, termination, gof_level) if m_gof >= 2 else None
    if gof is None:
        notes.append("M = 1 failure before the end: no Cramér–von Mises goodness of fit")
    m_cum = tend / n
    c_lo = 2 * tend / stats.chi2.ppf(1 - alpha / 2, df_up)
    c_hi = 2 * tend / stats.chi2.ppf(alpha / 2, 2 * n)
    params = pd.DataFrame({"estimate": [beta, lam], "low": [b_lo, l_lo], "high": [b_hi, l_hi]},
                          index=pd.Index(["beta", "lambda"], name="parameter"))
    inst = ("exact W·V pivot (Crow 1982)" if termination == "failure"
            else "Crow (1982) normal approximation, NIST 8.4.2.3")
    return CrowAMSAAResult(
        params=params, beta_unbiased=beta_unb, mtbf_instantaneous=(m_inst, i_lo, i_hi),
        mtbf_cumulative=(m_cum, c_lo, c_hi), n=n, end=tend, termination=termination,
        conf_level=conf_level,
        method=(f"Crow-AMSAA MLE ({termination}-terminated); β: chi-square pivot df {df}; "
                f"λ: Crow bounds given β̂; instantaneous MTBF: {inst}; cumulative MTBF: exact "
                "chi-square"),
        notes=tuple(notes), times=t, gof=gof)


crow_amsaa = renamed(fit_crow_amsaa, "crow_amsaa")

__all__ = ["CrowAMSAAResult", "crow_amsaa", "fit_crow_amsaa"]
