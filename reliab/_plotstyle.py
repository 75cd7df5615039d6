"""The house style of reliab's figures: one colour per component class, fonts and sizes set
inside a context only (matplotlib's global settings are never changed), and the axes,
legends and orderings :mod:`reliab.plots` shares between its figures."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import matplotlib as mpl
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

__all__ = ["COMPONENT_COLOURS", "OTHER_COLOUR", "TOTAL_COLOUR", "COMPONENT_ORDER", "colour_of", "style", "new_axes",
           "naive_utc", "category_order", "legend", "component_handles"]

#: One colour per component class (Okabe-Ito, colour-blind safe); planned work is grey.
COMPONENT_COLOURS: Mapping[str, str] = {
    "GPU": "#0072B2",
    "Host": "#E69F00",
    "Network": "#009E73",
    "Dependency": "#CC79A7",
    "Unplanned Maintenance": "#D55E00",
    "Unknown": "#6F4E9C",
    "Planned": "#A6A6A6",
}
#: Colour for anything without a known component, and for totals.
OTHER_COLOUR = "#7F7F7F"
TOTAL_COLOUR = "#222222"
#: Component order used for stacking and legends.
COMPONENT_ORDER: tuple[str, ...] = tuple(COMPONENT_COLOURS)

_WIDTH_IN = 6.8  # fits the A4 text block of the PDF report at 1:1
_STYLE: dict[str, object] = {
    "font.family": "DejaVu Sans",
    "font.size": 8.0,
    "axes.titlesize": 9.0,
    "axes.labelsize": 8.0,
    "axes.edgecolor": "#888888",
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.color": "#E3E3E3",
    "grid.linewidth": 0.6,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "reliab",
}


def colour_of(component: object) -> str:
    """Return the colour of a component class (grey-ish fallback for unknown ones)."""
    return COMPONENT_COLOURS.get(str(component), OTHER_COLOUR)


@contextmanager
def style() -> Iterator[None]:
    # rc_context restores every setting on exit, so callers' rcParams are left alone
    with mpl.rc_context(_STYLE):
        yield


def new_axes(ax: Axes | None, height_in: float) -> tuple[Figure, Axes, bool]:
    """The figure and axes to draw on, and whether the figure is ours (made here)."""
    if ax is not None:
        fig = ax.get_figure(root=True)
        assert isinstance(fig, Figure)
        return fig, ax, False
    fig = Figure(figsize=(_WIDTH_IN, height_in), layout="constrained")
    return fig, fig.add_subplot(), True


def naive_utc(times: pd.Series) -> pd.Series:
    t = pd.to_datetime(times, utc=True)
    return t.dt.tz_localize(None)


def category_order(interruptions: pd.DataFrame) -> pd.DataFrame:
    """Categories with component and count: components by total count, categories by count.

    Planned categories go last.
    """
    df = interruptions.assign(
        category=interruptions["category"].astype("string").fillna("Unclassified"),
        component=interruptions["component"].astype("string").fillna("Unknown"),
    )
    counts = (
        df.groupby(["category", "component"], observed=True)
        .size()
        .rename("count")
        .reset_index()
        .sort_values("count", ascending=False)
        .drop_duplicates("category")
    )
    planned = df.loc[df["planned"].astype(bool), "category"].unique()
    counts["is_planned"] = counts["category"].isin(planned) | (counts["component"] == "Planned")
    comp_total = counts.groupby("component")["count"].transform("sum")
    counts = counts.assign(_ct=comp_total).sort_values(
        ["is_planned", "_ct", "component", "count", "category"],
        ascending=[True, False, True, False, True],
    )
    return counts.drop(columns="_ct").reset_index(drop=True)


def legend(ax: Axes, handles: list[Patch | Line2D], *, owned: bool) -> None:
    """Legend above the plot; on a figure we own it sits outside the axes in full width."""
    if not handles:
        return
    ncol = len(handles) if len(handles) <= 5 else -(-len(handles) // 2)
    kwargs = {
        "handles": handles,
        "ncol": ncol,
        "handlelength": 1.0,
        "columnspacing": 1.4,
        "borderaxespad": 0.2,
    }
    if owned:
        ax.get_figure(root=True).legend(loc="outside upper left", **kwargs)  # type: ignore[union-attr]
    else:
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), **kwargs)


def component_handles(components: list[str], *, kind: str = "patch") -> list[Patch | Line2D]:
    handles: list[Patch | Line2D] = []
    for c in components:
        if kind == "patch":
            handles.append(Patch(facecolor=colour_of(c), edgecolor="none", label=c))
        else:
            handles.append(
                Line2D(
                    [],
                    [],
                    color=colour_of(c),
                    marker="|",
                    linestyle="none",
                    markersize=8,
                    markeredgewidth=2,
                    label=c,
                )
            )
    return handles
