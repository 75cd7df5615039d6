"""Figures of the environment results (seaborn on explicit axes; never pyplot, no global state).

Each function draws one result and returns the :class:`matplotlib.figure.Figure`; given an
``ax`` it draws there, otherwise it makes its own figure.  Nothing here estimates: lines and
bands come from the result objects.
"""

from __future__ import annotations

from typing import Any

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

_WIDTH = 6.8
_LABEL_COLOURS = {"job start": "#009E73", "job stop": "#0072B2", "failure-induced": "#D55E00",
                  "pause (checkpoint/collective)": "#E69F00", "unexplained": "#7F7F7F"}


def _axes(ax: Any, height: float) -> tuple[Figure, Any]:
    if ax is not None:
        return ax.get_figure(root=True), ax
    fig = Figure(figsize=(_WIDTH, height), layout="constrained")
    return fig, fig.add_subplot()


def _naive(times: pd.Series | pd.DatetimeIndex) -> pd.DatetimeIndex:
    t = pd.DatetimeIndex(times)
    return t.tz_convert("UTC").tz_localize(None) if t.tz is not None else t


def _envelope(power: pd.Series, bins: int
              ) -> tuple[pd.DatetimeIndex, np.ndarray, np.ndarray, np.ndarray] | None:
    """Time, min, max and mean of each of ``bins`` time bins (``None`` when the series is short
    enough to draw as it is): a swinging series drawn as one line over weeks is a solid
    block; its range per bin shows the level and the swings' reach, the mean the trend."""
    if len(power) <= 2 * bins:
        return None
    k = np.arange(len(power)) * bins // len(power)
    g = pd.Series(power.to_numpy(dtype=float)).groupby(k)
    first = np.r_[0, np.flatnonzero(np.diff(k)) + 1]
    return (_naive(power.index[first]), g.min().to_numpy(), g.max().to_numpy(),
            g.mean().to_numpy())


def power_swing_figure(result: Any, ax: Any = None) -> Figure:
    """Top: power (MW after scaling) with swing onsets; bottom: swing size vs time and limit."""
    import seaborn as sns

    sw = result.swings
    if ax is None:
        fig = Figure(figsize=(_WIDTH, 4.6), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
        power = result.power
        if power is not None and len(power):
            mw = result.scale / 1e6
            env = _envelope(power, 400)
            if env is None:
                top.plot(_naive(power.index), power.to_numpy(dtype=float) * mw, lw=0.6,
                         color="#444444")
            else:
                t, lo, hi, mean = env
                top.fill_between(t, lo * mw, hi * mw, step="post", color="#BBBBBB", lw=0,
                                 label="range per bin")
                top.step(t, mean * mw, where="post", lw=0.8, color="#444444", label="mean per bin")
                top.legend(fontsize=7, frameon=False, loc="lower right")
        top.set_ylabel("power (MW)")
        step = (f"{result.min_step_w / 1e6:.3g} MW" if result.min_step_w >= 1e5
                else f"{result.min_step_w:g} W")
        scaled = f", scaled x{result.scale:,.0f}" if result.scale != 1 else ""
        top.set_title(f"Power swings (steps of at least {step} measured{scaled})")
    else:
        fig, bottom = ax.get_figure(root=True), ax
    if len(sw):
        data = pd.DataFrame({"start": _naive(sw["start"]), "delta_mw": sw["delta_mw"],
                             "label": sw["label"].astype(str)})
        sns.scatterplot(data=data, x="start", y="delta_mw", hue="label", ax=bottom, s=18,
                        palette=_LABEL_COLOURS, linewidth=0, rasterized=len(data) > 500)
        bottom.legend(fontsize=7, frameon=False, loc="best")
    if result.grid_limit_mw is not None:
        for sign in (1, -1):
            bottom.axhline(sign * result.grid_limit_mw, color="#D55E00", ls="--", lw=1)
        bottom.text(0.99, 0.98, f"grid limit ±{result.grid_limit_mw:g} MW",
                    transform=bottom.transAxes, ha="right", va="top", fontsize=7,
                    color="#D55E00")
    bottom.axhline(0, color="#BBBBBB", lw=0.6)
    locator = mdates.AutoDateLocator()
    bottom.xaxis.set_major_locator(locator)
    bottom.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    bottom.set_ylabel("swing (MW)")
    bottom.set_xlabel("time (UTC)")
    return fig


def clock_event_figure(result: Any, ax: Any = None) -> Figure:
    """Share of samples with each clock-event reason active; clock change in the labels."""
    fig, ax = _axes(ax, 0.45 * max(len(result.table), 1) + 1.2)
    tb = result.table
    y = np.arange(len(tb))[::-1]
    ax.barh(y, 100 * tb["share_active"], color="#0072B2")
    ax.set_yticks(y, [f"{r.reason} ({r.clock_change_mhz:+.0f} MHz)" for r in tb.itertuples()])
    ax.set_xlabel("samples active (%)")
    ax.set_title("Clock-event reasons (NVML)")
    return fig


def throughput_figure(result: Any, ax: Any = None) -> Figure:
    """Throughput against temperature, total-effect line with HAC and naive slope bands."""
    import seaborn as sns

    fig, ax = _axes(ax, 3.6)
    pts = result._points
    if pts is None or pts.empty:
        return fig
    sns.scatterplot(data=pts, x="temperature", y="throughput", ax=ax, s=6, alpha=0.3,
                    color="#444444", linewidth=0, rasterized=len(pts) > 500)
    tot = result.effect("total")
    tc = float(pts["temperature"].mean())
    yc = float(np.exp(np.log(pts["throughput"]).mean()))
    grid = np.linspace(pts["temperature"].min(), pts["temperature"].max(), 50)
    for lo, hi, colour, name in (("low_naive", "high_naive", "#56B4E9", "naive"),
                                 ("low_hac", "high_hac", "#E69F00", "HAC")):
        lines = [yc * np.exp(tot[c] / 100 * (grid - tc)) for c in (lo, hi)]
        ax.fill_between(grid, np.minimum(*lines), np.maximum(*lines), color=colour, alpha=0.35,
                        label=f"{name} {result.conf_level:.0%} band", lw=0)
    ax.plot(grid, yc * np.exp(tot["pct_per_c"] / 100 * (grid - tc)), color="#D55E00",
            label=f"total {tot['pct_per_c']:+.3g} %/°C")
    ax.set_xlabel("temperature (°C)")
    ax.set_ylabel("throughput (unit of the input)")
    ax.yaxis.set_major_formatter(EngFormatter())  # 2.72 M, not an offset "1e6" in the corner
    ax.legend(fontsize=7, frameon=False)
    ax.set_title("Throughput against temperature")
    return fig


def diurnal_figure(result: Any, ax: Any = None) -> Figure:
    """Mean daily profile (% of level) with the bootstrap band; temperature on a twin axis."""
    import seaborn as sns

    fig, ax = _axes(ax, 3.2)
    pr = result.profile
    ax.fill_between(pr["hour"], pr["low_pct"], pr["high_pct"], color="#56B4E9", alpha=0.4, lw=0,
                    label=f"{result.conf_level:.0%} bootstrap band")
    sns.lineplot(data=pr, x="hour", y="deviation_pct", ax=ax, color="#0072B2",
                 label=f"amplitude {result.amplitude_pct:.2f} %")
    ax.axhline(0, color="#BBBBBB", lw=0.6)
    ax.set_xlabel(f"hour of day ({result.tz})")
    ax.set_ylabel("deviation from level (%)")
    if "temperature_dev_c" in pr:
        tx = ax.twinx()
        tx.plot(pr["hour"], pr["temperature_dev_c"], color="#D55E00", lw=1, ls="--")
        tx.set_ylabel("temperature deviation (°C)", color="#D55E00")
    ax.legend(fontsize=7, frameon=False, loc="lower left")
    ax.set_title("Diurnal profile")
    return fig


def irr_forest_figure(result: Any, ax: Any = None) -> Figure:
    """Incidence-rate ratios (log axis) with intervals, one row per term and model."""
    import seaborn as sns

    tb = result.table[result.table["term"] != "intercept"].reset_index(drop=True)
    fig, ax = _axes(ax, 0.4 * max(len(tb), 1) + 1.3)
    data = tb.assign(y=np.arange(len(tb))[::-1], model=tb["model"].astype(str))
    palette = {"poisson": "#0072B2", "negbin": "#D55E00"}
    ax.hlines(data["y"], data["irr_low"], data["irr_high"], lw=1.5,
              colors=[palette.get(m, "#444444") for m in data["model"]])
    sns.scatterplot(data=data, x="irr", y="y", hue="model", palette=palette, ax=ax, s=36,
                    zorder=3, linewidth=0)
    ax.axvline(1.0, color="grey", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(data["y"], [f"{r.term} ({r.model})" for r in data.itertuples()])
    ax.set_ylabel("")
    ax.set_xlabel(f"incidence-rate ratio per unit ({result.conf_level:.0%} interval)")
    ax.legend(fontsize=7, frameon=False, loc="best")
    ax.set_title("Failures against environment")
    return fig


__all__ = ["power_swing_figure", "clock_event_figure", "throughput_figure", "diurnal_figure",
           "irr_forest_figure"]
