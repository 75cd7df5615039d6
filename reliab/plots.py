"""Figures of interruptions and rates, drawn without touching matplotlib's global state.

Every function takes canonical tables or result summaries, draws, and returns a
:class:`matplotlib.figure.Figure`.  Figures are built with ``Figure()`` directly (never
``pyplot``), so nothing is registered with a GUI backend, nothing shows, and importing this
module changes no global setting.  Colours are fixed per component class
(:data:`COMPONENT_COLOURS`) so that one component looks the same in every figure and table.
Nothing here estimates anything.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.dates as mdates
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from reliab._plotstyle import (
    COMPONENT_COLOURS,
    COMPONENT_ORDER,
    OTHER_COLOUR,
    TOTAL_COLOUR,
    colour_of,
)
from reliab._plotstyle import category_order as _category_order
from reliab._plotstyle import component_handles as _component_handles
from reliab._plotstyle import legend as _legend
from reliab._plotstyle import naive_utc as _naive_utc
from reliab._plotstyle import new_axes as _new_axes
from reliab._plotstyle import style as _style


def plot_timeline(interruptions: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """Event plot of interruptions over time, one row per category, coloured by component.

    Parameters
    ----------
    interruptions : pandas.DataFrame
        Canonical interruptions table (``time``, ``category``, ``component``, ``planned``).
    ax : matplotlib.axes.Axes, optional
        Draw here instead of on a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        Rows are ordered by component (largest first) then by count; planned work is the
        grey bottom row(s).  Row labels carry the count.
    """
    with _style():
        order = _category_order(interruptions)
        n = max(len(order), 1)
        fig, ax, owned = _new_axes(ax, height_in=0.9 + 0.19 * n)
        times = _naive_utc(interruptions["time"])
        cats = interruptions["category"].astype("string").fillna("Unclassified")
        ypos = {c: n - 1 - i for i, c in enumerate(order["category"])}
        for i, row in order.iterrows():
            y = ypos[row["category"]]
            if int(i) % 2 == 0:  # faint banding helps the eye follow a row
                ax.axhspan(y - 0.5, y + 0.5, color="#F4F4F4", zorder=0, linewidth=0)
            t = times[(cats == row["category"]).to_numpy()]
            colour = (
                COMPONENT_COLOURS["Planned"] if row["is_planned"] else colour_of(row["component"])
            )
            ax.plot(
                t,
                np.full(len(t), y),
                linestyle="none",
                marker="|",
                markersize=7,
                markeredgewidth=1.3,
                color=colour,
                alpha=0.85,
                zorder=2,
            )
        ax.set_yticks(
            [ypos[c] for c in order["category"]],
            [f"{c}  ({k})" for c, k in zip(order["category"], order["count"], strict=True)],
        )
        ax.set_ylim(-0.6, n - 0.4)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        loc = mdates.AutoDateLocator(minticks=5, maxticks=10)
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc, show_offset=True))
        ax.grid(axis="x", zorder=1)
        ax.set_axisbelow(True)
        if len(times):
            pad = (times.max() - times.min()) * 0.01 + pd.Timedelta(hours=1)
            ax.set_xlim(times.min() - pad, times.max() + pad)
        present = [
            c
            for c in COMPONENT_ORDER
            if c in set(order["component"]) | ({"Planned"} if order["is_planned"].any() else set())
        ]
        _legend(ax, _component_handles(present, kind="marker"), owned=owned)
        ax.set_xlabel("Time (UTC)")
    return fig


def plot_daily_counts(
    interruptions: pd.DataFrame, ax: Axes | None = None, *, window_days: int = 7
) -> Figure:
    """Stacked bars of interruptions per UTC day by component, with a rolling mean.

    Parameters
    ----------
    interruptions : pandas.DataFrame
        Canonical interruptions table (``time``, ``component``, ``planned``).
    ax : matplotlib.axes.Axes, optional
        Draw here instead of on a new figure.
    window_days : int
        Width of the centred rolling mean of the daily total (black line); 0 to omit.

    Returns
    -------
    matplotlib.figure.Figure
        Days without interruptions show as gaps (zero), not as missing.
    """
    with _style():
        fig, ax, owned = _new_axes(ax, height_in=2.7)
        df = pd.DataFrame(
            {
                "day": _naive_utc(interruptions["time"]).dt.floor("D"),
                "component": np.where(
                    interruptions["planned"].astype(bool),
                    "Planned",
                    interruptions["component"].astype("string").fillna("Unknown"),
                ),
            }
        )
        if df.empty:
            ax.text(0.5, 0.5, "no interruptions", transform=ax.transAxes, ha="center")
            return fig
        days = pd.date_range(df["day"].min(), df["day"].max(), freq="D")
        table = pd.crosstab(df["day"], df["component"]).reindex(days, fill_value=0)
        cols = [c for c in COMPONENT_ORDER if c in table.columns]
        cols += [c for c in table.columns if c not in cols]
        bottom = np.zeros(len(table))
        x = table.index + pd.Timedelta(hours=12)  # bar centred on its day
        for c in cols:
            ax.bar(
                x,
                table[c].to_numpy(),
                width=0.85,
                bottom=bottom,
                color=colour_of(c),
                label=c,
                linewidth=0,
            )
            bottom += table[c].to_numpy()
        total = table.sum(axis=1)
        if window_days and len(total) >= window_days:
            roll = total.rolling(window_days, center=True, min_periods=1).mean()
            ax.plot(
                x,
                roll.to_numpy(),
                color=TOTAL_COLOUR,
                linewidth=1.3,
                label=f"{window_days}-day mean",
            )
        loc = mdates.AutoDateLocator(minticks=5, maxticks=10)
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc, show_offset=True))
        ax.set_xlim(days[0] - pd.Timedelta(hours=12), days[-1] + pd.Timedelta(days=1, hours=12))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.grid(axis="y")
        ax.set_axisbelow(True)
        ax.set_ylabel("Interruptions (per day)")
        handles, _ = ax.get_legend_handles_labels()
        _legend(ax, handles, owned=owned)
    return fig


def plot_rates(
    rates_summary: pd.DataFrame,
    ax: Axes | None = None,
    *,
    components: Mapping[str, str] | None = None,
    measure: str = "rate_per_1k_gpu_days",
    conf_level: float | None = None,
) -> Figure:
    """Forest plot of a rate with its interval per category, on a log axis.

    Parameters
    ----------
    rates_summary : pandas.DataFrame
        ``summary()`` of a rates result: ``category``, ``count``, ``<measure>``,
        ``<measure>_low``, ``<measure>_high``; a ``Total`` row is drawn last, in black.
    ax : matplotlib.axes.Axes, optional
        Draw here instead of on a new figure.
    components : mapping of str to str, optional
        Category -> component, for colours.  A ``component`` column is used when absent.
    measure : str
        Column to plot.
    conf_level : float, optional
        Shown in the axis label when given.

    Returns
    -------
    matplotlib.figure.Figure
        Rows in the order of ``rates_summary`` (Total last).  A category with zero events
        has no point estimate on a log axis: only its upper limit is drawn, as an open
        triangle.
    """
    with _style():
        df = rates_summary.reset_index(drop=True)
        is_total = df["category"].astype(str).eq("Total").to_numpy()
        df = pd.concat([df[~is_total], df[is_total]], ignore_index=True)
        n = max(len(df), 1)
        fig, ax, owned = _new_axes(ax, height_in=0.8 + 0.2 * n)
        if components is None and "component" in df.columns:
            components = dict(zip(df["category"], df["component"], strict=True))
        components = components or {}
        est = df[measure].to_numpy(dtype=float)
        low = df[f"{measure}_low"].to_numpy(dtype=float)
        high = df[f"{measure}_high"].to_numpy(dtype=float)
        y = np.arange(n)[::-1]
        positive = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in (est, low, high)])
        floor = positive.min() / 3 if positive.size else 1e-3
        for i, row in df.iterrows():
            total = str(row["category"]) == "Total"
            colour = TOTAL_COLOUR if total else colour_of(components.get(str(row["category"])))
            lo = low[i] if np.isfinite(low[i]) and low[i] > 0 else floor
            if np.isfinite(high[i]):
                ax.plot(
                    [lo, high[i]],
                    [y[i], y[i]],
                    color=colour,
                    linewidth=1.4,
                    solid_capstyle="butt",
                    alpha=0.9,
                )
            if np.isfinite(est[i]) and est[i] > 0:
                ax.plot(
                    est[i],
                    y[i],
                    marker="D" if total else "o",
                    markersize=5 if total else 4.5,
                    color=colour,
                    markeredgecolor="white",
                    markeredgewidth=0.5,
                    zorder=3,
                )
            elif np.isfinite(high[i]):
                ax.plot(
                    high[i],
                    y[i],
                    marker="<",
                    markersize=5,
                    markerfacecolor="white",
                    markeredgecolor=colour,
                    zorder=3,
                )
        labels = [
            f"{c}  ({int(k)})" if pd.notna(k) else str(c)
            for c, k in zip(df["category"], df["count"], strict=True)
        ]
        ax.set_yticks(y, labels)
        for tick, total in zip(ax.get_yticklabels(), df["category"].eq("Total"), strict=True):
            if total:
                tick.set_fontweight("bold")
        if is_total.any() and n > 1:
            ax.axhline(0.5, color="#BBBBBB", linewidth=0.6)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xscale("log")
        # plain decimals (0.001, 0.01, 0.1) read faster than powers of ten
        ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:,g}"))
        ax.grid(axis="x", which="major")
        ax.grid(axis="x", which="minor", color="#F0F0F0", linewidth=0.4)
        ax.set_axisbelow(True)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        label = measure.replace("rate_per_1k_gpu_days", "Interruptions (per 1,000 GPU-days)").replace(
            "rate_per_1k_node_days", "Interruptions (per 1,000 node-days)"
        )
        if conf_level is not None:
            label += f"  (point and {conf_level:.0%} interval, log scale)"
        ax.set_xlabel(label)
        present = [
            c for c in COMPONENT_ORDER if c in set(components.get(str(k)) for k in df["category"])
        ]
        _legend(ax, _component_handles(present), owned=owned)
    return fig


def plot_category_bars(
    interruptions: pd.DataFrame, ax: Axes | None = None, *, reference: pd.DataFrame | None = None
) -> Figure:
    """Horizontal bars of unexpected interruptions per category, coloured by component.

    Parameters
    ----------
    interruptions : pandas.DataFrame
        Canonical interruptions table; planned rows are left out.
    ax : matplotlib.axes.Axes, optional
        Draw here instead of on a new figure.
    reference : pandas.DataFrame, optional
        Published counts (``category``, ``count``), drawn as black ticks beside the bars.

    Returns
    -------
    matplotlib.figure.Figure
        The legend gives each component's share of the unexpected interruptions.
    """
    with _style():
        unexpected = interruptions[~interruptions["planned"].astype(bool)]
        order = (
            _category_order(unexpected)
            if len(unexpected)
            else pd.DataFrame(columns=["category", "component", "count"])
        )
        n = max(len(order), 1)
        fig, ax, _ = _new_axes(ax, height_in=0.6 + 0.15 * n)
        y = np.arange(len(order))[::-1]
        ax.barh(
            y,
            order["count"].to_numpy(dtype=float),
            height=0.72,
            color=[colour_of(c) for c in order["component"]],
            linewidth=0,
        )
        top = float(order["count"].max()) if len(order) else 1.0
        for yi, k in zip(y, order["count"], strict=True):
            ax.text(
                k + top * 0.01, yi, f"{int(k)}", va="center", ha="left", fontsize=7, color="#333333"
            )
        if reference is not None:
            ref = dict(zip(reference["category"], reference["count"], strict=True))
            ry = [(yi, ref[c]) for yi, c in zip(y, order["category"], strict=True) if c in ref]
            if ry:
                ax.plot(
                    [v for _, v in ry],
                    [yi for yi, _ in ry],
                    linestyle="none",
                    marker="|",
                    markersize=9,
                    markeredgewidth=1.6,
                    color=TOTAL_COLOUR,
                    label="published",
                )
                top = max(top, max(v for _, v in ry))
        ax.set_yticks(y, list(order["category"]))
        ax.set_xlim(0, top * 1.1)
        ax.set_ylim(-0.6, len(order) - 0.4)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.grid(axis="x")
        ax.set_axisbelow(True)
        ax.set_xlabel("Unexpected interruptions (count)")
        total = float(order["count"].sum()) or 1.0
        shares = order.groupby("component")["count"].sum() / total
        handles: list[Patch | Line2D] = [
            Patch(facecolor=colour_of(c), edgecolor="none", label=f"{c} {shares[c]:.0%}")
            for c in COMPONENT_ORDER
            if c in shares.index
        ]
        if reference is not None:
            handles.append(
                Line2D(
                    [],
                    [],
                    color=TOTAL_COLOUR,
                    marker="|",
                    linestyle="none",
                    markersize=8,
                    markeredgewidth=1.6,
                    label="published count",
                )
            )
        ax.legend(handles=handles, loc="lower right", handlelength=1.0, borderaxespad=0.3)
    return fig


__all__ = [
    "COMPONENT_COLOURS",
    "COMPONENT_ORDER",
    "OTHER_COLOUR",
    "TOTAL_COLOUR",
    "colour_of",
    "plot_category_bars",
    "plot_daily_counts",
    "plot_rates",
    "plot_timeline",
    "plot_power_swings",
    "plot_diurnal",
    "plot_throughput",
    "plot_irr_forest",
    "plot_clock_events",
]


# ---------------------------------------------------------------------------- environment
def _env_figure(result: object, ax: Axes | None) -> Figure:
    with _style():  # an environment result draws its own figure
        return result.plot(ax=ax)  # type: ignore[attr-defined]


def plot_power_swings(result: object, ax: Axes | None = None) -> Figure:
    """Power with swing onsets and swing sizes against the grid limit (a ``PowerSwingResult``)."""
    return _env_figure(result, ax)


def plot_diurnal(result: object, ax: Axes | None = None) -> Figure:
    """Mean daily profile with its bootstrap band and the temperature (a ``DiurnalResult``)."""
    return _env_figure(result, ax)


def plot_throughput(result: object, ax: Axes | None = None) -> Figure:
    """Throughput against temperature with naive and HAC bands (a ``ThroughputFit``)."""
    return _env_figure(result, ax)


def plot_irr_forest(result: object, ax: Axes | None = None) -> Figure:
    """Incidence-rate ratios with intervals on a log axis (a ``FailureGLMFit``)."""
    return _env_figure(result, ax)


def plot_clock_events(result: object, ax: Axes | None = None) -> Figure:
    """Share of samples per NVML clock-event reason (a ``ClockEventSummary``)."""
    return _env_figure(result, ax)

