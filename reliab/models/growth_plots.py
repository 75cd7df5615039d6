"""Figures of the reliability-growth models (Duane plot).  Drawing only: every number comes
from the result object; nothing here computes a fit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from reliab._result import new_figure

if TYPE_CHECKING:
    from reliab.models.duane import DuaneResult


def plot_duane(result: DuaneResult, ax: Any = None) -> Any:
    """Duane plot: cumulative MTBF at each failure and the fitted ``b t^α`` on log–log axes.

    Parameters
    ----------
    result : DuaneResult
        A fit from :func:`reliab.models.fit_duane`.
    ax : matplotlib Axes, optional
        Draw here; a new pyplot-free Figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = new_figure(ax)
    pts = result.points
    ax.plot(pts["time"], pts["cumulative_mtbf"], "o", label="cumulative MTBF")
    grid = np.geomspace(float(pts["time"].iloc[0]), float(pts["time"].iloc[-1]), 200)
    fitted = result.at(grid)
    ax.plot(grid, fitted["mtbf_cumulative"],
            label=f"b t^α, α = {result.alpha:.3g} (R² = {result.r_squared:.3f})")
    if result.alpha < 1:
        ax.plot(grid, fitted["mtbf_instantaneous"], ls="--", label="instantaneous MTBF")
    ax.set(xscale="log", yscale="log", xlabel="cumulative test time (h)", ylabel="MTBF (h)",
           title="Duane")
    ax.legend()
    return fig


__all__ = ["plot_duane"]
