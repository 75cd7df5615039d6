"""One answer to "is the interruption rate falling, flat or rising?", with the evidence beside it.

The times between interruptions of a repairable fleet are first a point process: the fleet
is repaired (a node drained, a job restarted) and keeps running, so the question of burn-in
or wear-out is whether the *rate of occurrence of interruptions* changes over calendar time.
That is answered by the trend tests (Laplace, MIL-HDBK-189, reverse arrangement) and by the
Crow–AMSAA power-law process, whose shape beta < 1 means a falling and beta > 1 a rising
rate (Crow 1974; MIL-HDBK-189C, 2011, §5).  These are the primary evidence here.

A renewal fit to the gaps (Weibull shape, the ranking of distributions by AIC) comes second.
It assumes every interruption returns the fleet to the same state and the gaps are
independent and identically distributed; its shape then describes how *spread* the gaps are,
not whether the rate changes over time.  Ascher & Feingold (1984, *Repairable Systems
Reliability*, Marcel Dekker, ch. 1-2) show that a hazard fitted to the gaps of a repairable
system is not evidence of wear-out or burn-in: gaps with a Weibull shape above 1 can come
from a process whose rate never changes, and a rising rate can hide behind exponential gaps
once the gaps are pooled without their order.  A fleet's interruptions are moreover the
superposition of many nodes' processes, which tends to a Poisson process (Drenick 1960,
"The failure law of complex equipment", J. SIAM 8, 680-690; Khinchine 1960), so a flat rate
with near-exponential gaps is the baseline to expect.

Decision rule (each reading at the two-sided level ``1 - conf_level``):

* a trend test reads "falling" when significant and improving, "rising" when significant and
  worsening, else "flat";
* Crow–AMSAA reads "falling" when the interval of beta lies below 1, "rising" above 1, else
  "flat";
* the verdict is "flat" when every point-process reading is flat, "falling" or "rising" when
  the readings that are not flat all agree, "mixed" when they point both ways, and
  "unknown" without point-process evidence.  The renewal fit never changes the verdict;
  where it seems to say something else, :attr:`TrendVerdict.disagreements` says what it
  means instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from reliab._checks import Check, contains, in_range
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError

Verdict = Literal["falling", "flat", "rising", "mixed", "unknown"]
_DIRECTION = {"improving": "falling", "worsening": "rising", "none": "flat"}
_TEST_NAMES = {"laplace": "Laplace test", "mil-hdbk-189": "MIL-HDBK-189 test",
               "reverse-arrangement": "reverse arrangement test"}
_WORDS = {"falling": "falling (burn-in: interruptions thin out over the window)",
          "rising": "rising (wear-out: interruptions come more often over the window)",
          "flat": "flat (no burn-in, no wear-out: a constant rate describes the window)",
          "mixed": "unclear (the point-process tests point both ways)",
          "unknown": "unknown (no trend test or Crow-AMSAA fit could be run)"}
REFERENCES = ("Ascher & Feingold (1984), Repairable Systems Reliability, ch. 1-2",
              "Crow (1974), Reliability analysis for complex, repairable systems",
              "MIL-HDBK-189C (2011), §5", "Drenick (1960), The failure law of complex equipment")


@dataclass(frozen=True)
class TrendVerdict(ResultMixin):
    """The verdict on the interruption rate and the evidence it was read from.

    Attributes
    ----------
    verdict : {"falling", "flat", "rising", "mixed", "unknown"}
        Read from the point-process evidence only (module docstring).
    statement : str
        The verdict in one sentence with its primary evidence.
    disagreements : tuple of str
        Where the renewal fit seems to say something else, what that means.
    evidence : pandas.DataFrame
        One row per piece of evidence: ``evidence``, ``role`` ("point process" or "renewal
        fit"), ``estimate``, ``low``, ``high``, ``pvalue``, ``reads``.
    """

    verdict: str
    statement: str
    disagreements: tuple[str, ...]
    evidence: pd.DataFrame = field(repr=False)
    n: int
    conf_level: float
    method: str = ("point process first (Laplace, MIL-HDBK-189 and reverse arrangement trend "
                   "tests, Crow-AMSAA beta), renewal fit of the gaps second (Weibull shape, "
                   "AIC ranking); " + "; ".join(REFERENCES))
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The evidence table (one row per test or fit)."""
        return self.evidence.copy()

    def plot(self, ax: Any = None) -> Any:
        """Crow-AMSAA beta (rate over time) and the Weibull shape of the gaps (renewal fit)
        with their intervals against 1, the value of a constant rate and of Poisson gaps."""
        fig, ax = new_figure(ax, (6.0, 2.4))
        ev = self.evidence[self.evidence["low"].notna() & self.evidence["high"].notna()]
        y = list(range(len(ev)))[::-1]
        est = ev["estimate"].to_numpy(dtype=float)
        err = [est - ev["low"].to_numpy(dtype=float), ev["high"].to_numpy(dtype=float) - est]
        ax.errorbar(est, y, xerr=err, fmt="o", color="C0", capsize=3)
        ax.axvline(1.0, color="grey", ls="--", lw=0.8)
        ax.set_yticks(y, [f"{e} ({r})" for e, r in zip(ev["evidence"], ev["role"], strict=True)])
        ax.set_ylim(-0.6, len(ev) - 0.4)
        ax.set_xlabel("shape parameter (dimensionless; dashed: 1 = constant rate)")
        ax.set_title(f"Interruption rate: {self.verdict}")
        return fig

    def text(self) -> str:
        """The statement followed by what any disagreement means."""
        return " ".join((self.statement, *self.disagreements))

    def invariants(self) -> tuple[Check, ...]:
        """The verdict follows its point-process evidence; intervals contain estimates;
        p-values are probabilities."""
        ev = self.evidence
        primary = ev[ev["role"] == "point process"]
        derived = decide(primary["reads"].tolist())
        has_ci = ev["low"].notna() & ev["high"].notna()
        return (
            Check("verdict_follows_evidence", derived == self.verdict,
                  f"verdict {self.verdict!r}; the point-process readings "
                  f"{primary['reads'].tolist()} give {derived!r}"),
            contains("evidence_interval_contains_estimate", ev.loc[has_ci, "low"],
                     ev.loc[has_ci, "estimate"], ev.loc[has_ci, "high"]),
            in_range("evidence_pvalue_probability", ev["pvalue"], 0.0, 1.0, allow_nan=True),
        )


def decide(readings: Sequence[str]) -> str:
    """The verdict from point-process readings ("falling", "flat", "rising" each)."""
    if not readings:
        return "unknown"
    moving = set(readings) - {"flat"}
    if not moving:
        return "flat"
    return moving.pop() if len(moving) == 1 else "mixed"


def _interval_reading(low: float, high: float) -> str:
    return "falling" if high < 1.0 else "rising" if low > 1.0 else "flat"


def _fmt(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else "n/a"


def _rows(tests: Sequence[Any], crow: Any) -> list[dict[str, Any]]:
    rows = []
    for t in tests:
        rows.append({"evidence": _TEST_NAMES.get(t.method, t.method), "role": "point process",
                     "estimate": float(t.statistic), "low": math.nan, "high": math.nan,
                     "pvalue": float(t.pvalue), "reads": _DIRECTION[t.trend]})
    if crow is not None:
        est, lo, hi = (float(crow.params.loc["beta", c]) for c in ("estimate", "low", "high"))
        rows.append({"evidence": "Crow-AMSAA beta", "role": "point process", "estimate": est,
                     "low": lo, "high": hi, "pvalue": math.nan, "reads": _interval_reading(lo, hi)})
    return rows


def _shape_reading(low: float, high: float) -> str:
    if low > 1.0:
        return "gaps more regular than Poisson"
    if high < 1.0:
        return "gaps more clustered than Poisson"
    return "gaps consistent with exponential"


def _renewal_rows(weibull: Any, distributions: Any) -> list[dict[str, Any]]:
    rows = []
    if weibull is not None:
        lo, hi = (float(v) for v in weibull.params.loc["shape", ["low", "high"]])
        rows.append({"evidence": "Weibull shape of the gaps", "role": "renewal fit",
                     "estimate": float(weibull.shape), "low": lo, "high": hi, "pvalue": math.nan,
                     "reads": _shape_reading(lo, hi)})
    if distributions is not None:
        tb = distributions.summary()
        best = str(tb["distribution"].iloc[0])
        # how far behind the Weibull (whose shape is read above) falls; else the runner-up
        ref = "weibull" if "weibull" in set(tb["distribution"]) and best != "weibull" else None
        row = tb[tb["distribution"] == ref] if ref else tb.iloc[1:2]
        delta = float(row["delta_aic"].iloc[0]) if len(row) else math.nan
        other = str(row["distribution"].iloc[0]) if len(row) else "none"
        rows.append({"evidence": f"best distribution by AIC: {best}", "role": "renewal fit",
                     "estimate": delta, "low": math.nan, "high": math.nan, "pvalue": math.nan,
                     "reads": f"ΔAIC of {other}: {_fmt(delta)}"})
    return rows


def _statement(verdict: str, rows: list[dict[str, Any]]) -> str:
    primary = [r for r in rows if r["role"] == "point process"]
    parts = []
    tests = [r for r in primary if r["evidence"] != "Crow-AMSAA beta"]
    if tests:
        moving = sum(r["reads"] != "flat" for r in tests)
        parts.append(f"{moving} of {len(tests)} trend tests find a trend "
                     f"(p = {', '.join(_fmt(r['pvalue']) for r in tests)})")
    crow = next((r for r in primary if r["evidence"] == "Crow-AMSAA beta"), None)
    if crow is not None:
        parts.append(f"Crow-AMSAA beta {_fmt(crow['estimate'])} [{_fmt(crow['low'])}, "
                     f"{_fmt(crow['high'])}]")
    evidence = f" Evidence: {'; '.join(parts)}." if parts else ""
    return f"Interruption rate {_WORDS[verdict]}.{evidence}"


def _disagreements(verdict: str, weibull: Any, distributions: Any) -> list[str]:
    out: list[str] = []
    if weibull is not None:
        lo, hi = (float(v) for v in weibull.params.loc["shape", ["low", "high"]])
        shape = f"Weibull shape {_fmt(weibull.shape)} [{_fmt(lo)}, {_fmt(hi)}]"
        if lo > 1.0 and verdict != "rising":
            out.append(f"The renewal fit of the gaps has {shape} above 1: the gaps are more "
                       "regular than a Poisson process gives, but the rate does not rise over "
                       "the window, so this is not wear-out (a shape fitted to the gaps of a "
                       "repairable system describes their spread, not a trend; Ascher & "
                       "Feingold 1984).")
        elif hi < 1.0 and verdict != "falling":
            out.append(f"The renewal fit of the gaps has {shape} below 1: interruptions come "
                       "in bursts (short gaps after an interruption), but the rate does not "
                       "fall over the window, so this is not burn-in (Ascher & Feingold 1984).")
        elif lo <= 1.0 <= hi and verdict in ("falling", "rising"):
            out.append(f"The renewal fit of the gaps has {shape}, which contains 1: pooled "
                       "without their order, the gaps look exponential although the rate "
                       "changes; a renewal fit cannot see a trend.")
    if distributions is not None:
        best = str(distributions.summary()["distribution"].iloc[0])
        if best not in ("weibull", "exponential"):
            out.append(f"The best renewal fit is {best}, whose hazard is not monotone: no "
                       "single Weibull shape reading (burn-in or wear-out) describes the "
                       "gaps either.")
    if verdict == "flat" and out:
        out.append("A fleet's interruptions are the superposition of many nodes' processes, "
                   "which tends to a Poisson process (Drenick 1960): the rate over time, not "
                   "the shape of the gaps, answers the question.")
    return out


def _usable(result: Any) -> Any:
    from reliab._result import NotAvailable

    return None if result is None or isinstance(result, NotAvailable) else result


def trend_verdict(*, tests: Sequence[Any] = (), crow: Any = None, weibull: Any = None,
                  distributions: Any = None, conf_level: float = 0.95) -> TrendVerdict:
    """Combine the trend tests, Crow–AMSAA and the renewal fit into one verdict.

    Parameters
    ----------
    tests : sequence of TrendTestResult
        :func:`reliab.trend_test` results on the interruption times (NotAvailable skipped).
    crow : CrowAMSAAResult, optional
        :func:`reliab.fit_crow_amsaa` on the same times.
    weibull : WeibullFit, optional
        :func:`reliab.fit_weibull` of the gaps (renewal fit; never decides the verdict).
    distributions : DistributionComparison, optional
        :func:`reliab.compare_distributions` of the gaps.
    conf_level : float
        Level the tests were decided at (stated; the inputs carry their own).

    Returns
    -------
    TrendVerdict

    References
    ----------
    Ascher, H. & Feingold, H. (1984). *Repairable Systems Reliability*. Marcel Dekker.
    Crow, L. H. (1974). Reliability analysis for complex, repairable systems. In *Reliability
    and Biometry*, SIAM, 379-410.  MIL-HDBK-189C (2011), *Reliability Growth Management*, §5.
    Drenick, R. F. (1960). The failure law of complex equipment. *J. SIAM* 8, 680-690.
    """
    tests = [t for t in tests if _usable(t) is not None]
    crow, weibull, distributions = _usable(crow), _usable(weibull), _usable(distributions)
    rows = _rows(tests, crow)
    if not rows:
        raise InsufficientDataError("no trend test and no Crow-AMSAA fit: the interruption rate "
                                    "over time cannot be judged (a renewal fit alone is no "
                                    "evidence of a trend)")
    verdict = decide([r["reads"] for r in rows])
    rows += _renewal_rows(weibull, distributions)
    evidence = pd.DataFrame(rows, columns=["evidence", "role", "estimate", "low", "high",
                                           "pvalue", "reads"])
    n = max([int(t.n) for t in tests] + ([int(crow.n)] if crow is not None else []), default=0)
    return TrendVerdict(verdict=verdict, statement=_statement(verdict, rows),
                        disagreements=tuple(_disagreements(verdict, weibull, distributions)),
                        evidence=evidence, n=n, conf_level=conf_level)


__all__ = ["REFERENCES", "TrendVerdict", "decide", "trend_verdict"]
