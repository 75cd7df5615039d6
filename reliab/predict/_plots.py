"""Figures of :class:`~reliab.predict.FailureRiskResult`: calibration and precision at k."""

from __future__ import annotations

from typing import Any

_COLORS = {"boosted": "#1f77b4", "hazard": "#2ca02c", "lemon": "#d62728",
           "correctable_7d": "#9467bd", "past_rate": "#7f7f7f"}


def plot_result(result: Any, ax: Any = None) -> Any:
    """Three panels: calibration and precision at k with intervals, the drain-k curve.

    With ``ax`` given, only the calibration curve is drawn on it.
    """
    from matplotlib.figure import Figure

    if ax is None:
        fig = Figure(figsize=(14, 4.6))
        left, right, drain = (fig.add_subplot(1, 3, i) for i in (1, 2, 3))
    else:
        fig, left, right, drain = ax.figure, ax, None, None
    cal = result.calibration
    for name, g in cal.groupby("model", sort=False):
        c = _COLORS.get(name)
        left.errorbar(g["predicted"], g["observed"],
                      yerr=[g["observed"] - g["low"], g["high"] - g["observed"]],
                      fmt="o-", color=c, label=name, capsize=2)
    top = float(max(cal[["predicted", "high"]].max().max(), 0.01))
    left.plot([0, top], [0, top], ls=":", color="k", lw=1)
    left.set_xlabel(f"predicted P(hardware interruption within {result.horizon_h:g} h)")
    left.set_ylabel("observed frequency (share of node-days, 0-1)")
    left.set_title("Calibration (out of sample)")
    left.legend(fontsize=8)
    if right is not None:
        for name, g in result.at_k.groupby("model", sort=False):
            right.errorbar(g["k"], g["precision"],
                           yerr=[g["precision"] - g["precision_low"],
                                 g["precision_high"] - g["precision"]],
                           fmt="o-", color=_COLORS.get(name), label=name, capsize=2)
        right.set_xscale("log")
        right.set_xlabel("nodes drained per week (k)")
        right.set_ylabel(f"precision at k (failed within {result.horizon_h:g} h, 0-1)")
        right.set_title("Precision at k")
        right.legend(fontsize=8)
    if drain is not None:
        plot_drain(result, drain)
    fig.tight_layout()
    return fig


def plot_drain(result: Any, ax: Any = None) -> Any:
    """Interruptions avoided against capacity drained, one curve per model."""
    from reliab._result import new_figure

    fig, ax = new_figure(ax, (6, 4))
    for name, g in result.drain.groupby("model", sort=False):
        cap = g["capacity_gpu_hours"] / 1000.0
        ax.plot(cap, g["interruptions_avoided"], "o-", color=_COLORS.get(name), label=name)
        for k, x, y in zip(g["k"], cap, g["interruptions_avoided"], strict=True):
            if name == "boosted" and k >= 5:
                ax.annotate(f"k={k}", (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("capacity drained (1,000 GPU-hours)")
    ax.set_ylabel("hardware interruptions avoided (count)")
    ax.set_title("Drain the top k nodes each week (replay)")
    ax.legend(fontsize=8)
    return fig
