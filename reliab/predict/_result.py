"""The result of :func:`reliab.predict_failures`: risk table, honest metrics, drain curve."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from reliab._checks import Check, contains, in_range
from reliab._result import ResultMixin


@dataclass(frozen=True)
class FailureRiskResult(ResultMixin):
    """Which node fails next: calibrated risk per node and how well the ranking held up.

    Attributes
    ----------
    risk : DataFrame
        One row per node, highest risk first, at the end of the logs: ``rank``, ``unit``,
        ``probability`` of a hardware interruption within the horizon with ``low``/``high``
        (delta-method interval of the Platt calibration: the calibration's uncertainty only),
        ``hazard_probability`` and ``top_signals`` (the precursor families seen in the last
        30 days, largest rate ratio first, as ``family <count in 7 d>/<count in 30 d>``).
    metrics : DataFrame
        ``model``, ``metric`` (auroc, auprc, brier), ``estimate``, ``low``, ``high``: pooled
        out-of-sample rows of the rolling-origin folds, models and baselines side by side.
    at_k : DataFrame
        Precision, recall and lift of draining the top ``k`` nodes at each weekly decision,
        with intervals.
    calibration : DataFrame
        Observed against predicted frequency per probability bin, with intervals.
    rate_ratios : DataFrame
        Rate ratio of each precursor family (seen in the last 7 days vs not) from the
        piecewise-exponential Poisson model fitted on every closed day.
    drain : DataFrame
        Drain-top-k-per-week replay: interruptions avoided, GPU-hours saved and capacity lost.
    drain_replay : DataFrame
        The same drains through :func:`reliab.replay_mitigations` (the run's ETTR, its change
        in percentage points and the saved GPU-hours per model and k); empty without jobs.
    """

    risk: pd.DataFrame = field(repr=False)
    metrics: pd.DataFrame = field(repr=False)
    at_k: pd.DataFrame = field(repr=False)
    calibration: pd.DataFrame = field(repr=False)
    rate_ratios: pd.DataFrame = field(repr=False)
    drain: pd.DataFrame = field(repr=False)
    drain_replay: pd.DataFrame = field(repr=False)
    horizon_h: float
    n_units: int
    n_rows: int
    n_test_rows: int
    n_events: int
    folds: int
    n_boot: int
    predicted_at: pd.Timestamp
    bootstrap: str = "units (nodes), percentile intervals"
    conf_level: float = 0.95
    method: str = ("rolling-origin evaluation of a Platt-calibrated HistGradientBoostingClassifier "
                   "and a piecewise-exponential Poisson hazard, beside three baselines")
    notes: tuple[str, ...] = ()
    report_section: ClassVar[str] = "prediction"  # placement in the report (reliab.report.catalog)

    @property
    def n(self) -> int:
        """Nodes ranked."""
        return self.n_units

    def summary(self) -> pd.DataFrame:
        """The metrics of every model and baseline (one row per model and metric)."""
        return self.metrics.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Probabilities and AUROC in [0, 1]; every interval contains its estimate."""
        r, m = self.risk, self.metrics
        auc = m[m["metric"] == "auroc"]
        k = self.at_k.dropna(subset=["precision_low"])
        return (
            in_range("probabilities_in_unit_interval",
                     r[["probability", "low", "high", "hazard_probability"]].to_numpy(), 0, 1),
            in_range("auroc_in_unit_interval", auc[["estimate", "low", "high"]].to_numpy(),
                     0, 1, allow_nan=True),
            contains("risk_in_interval", r["low"], r["probability"], r["high"]),
            contains("metric_in_interval", m["low"], m["estimate"], m["high"]),
            contains("precision_in_interval", k["precision_low"], k["precision"],
                     k["precision_high"]),
            contains("rate_ratio_in_interval", self.rate_ratios["low"],
                     self.rate_ratios["rate_ratio"], self.rate_ratios["high"]),
        )

    def metric(self, model: str, name: str = "auroc") -> tuple[float, float, float]:
        """``(estimate, low, high)`` of one metric of one model."""
        row = self.metrics[(self.metrics["model"] == model) & (self.metrics["metric"] == name)]
        if not len(row):
            raise KeyError(f"no metric {name!r} for model {model!r}")
        r = row.iloc[0]
        return float(r["estimate"]), float(r["low"]), float(r["high"])

    def top(self, n: int = 20) -> pd.DataFrame:
        """The ``n`` riskiest nodes."""
        return self.risk.head(n).copy()

    def plot(self, ax: Any = None) -> Any:
        """Calibration curve, precision at k and the drain-k curve; returns the Figure."""
        from reliab.predict._plots import plot_result

        return plot_result(self, ax)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary with every table."""
        from reliab._result import json_safe

        d = super().to_dict()
        for name in ("at_k", "calibration", "rate_ratios", "drain", "drain_replay"):
            d[name] = json_safe(getattr(self, name))
        d["risk_top"] = json_safe(self.risk.head(50))
        return d

