"""Every environment analysis the telemetry allows, in one call (what the report shows).

:func:`analyze_environment` looks at a canonical ``telemetry`` table (plus the ``jobs`` and
``interruptions`` tables when given), runs each analysis whose inputs exist and records,
for each one it cannot run, why — too few days for a diurnal cycle, too few failures on
monitored nodes for a GLM, no power column.  Nothing is hidden: a skipped analysis is a row
of the summary with its reason.

Conventions used to find the inputs: rows with ``host == "cluster"`` are cluster-level
series; a throughput column has ``throughput`` in its name (or is ``tflops``); zero
throughput means the job was not training and is treated as missing; the temperature is
``gpu_temp_c``, else ``temp_c``, else ``ambient_c``.  The failure GLM uses the node's mean
temperature in the window *before* each window (:func:`reliab.windows.lag_windows`): the
window of a failure is cooled by the failure itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError

CLUSTER = "cluster"
#: fewest failures for which the study fits a GLM (about 10 events per parameter)
MIN_GLM_EVENTS = 10
TEMPERATURES = ("gpu_temp_c", "temp_c", "ambient_c")


@dataclass(frozen=True)
class EnvironmentStudy(ResultMixin):
    """Results of the environment analyses that could run, and why the others did not."""

    results: tuple[tuple[str, Any], ...] = field(repr=False)
    skipped: tuple[tuple[str, str], ...]
    n: int
    conf_level: float
    method: str = "analyze_environment: diurnal cycle, throughput regression, power swings, " \
                  "clock events and failure GLM, each where its inputs exist"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row per analysis: ``analysis``, ``status`` (done/skipped), ``detail``."""
        rows = [(name, "done", type(res).__name__) for name, res in self.results]
        rows += [(name, "skipped", why) for name, why in self.skipped]
        return pd.DataFrame(rows, columns=["analysis", "status", "detail"])

    def get(self, name: str) -> Any:
        """The result of one analysis (``"diurnal"``, ``"throughput"``, ``"power_swings"``,
        ``"clock_events"``, ``"failure_glm"``)."""
        for key, res in self.results:
            if key == name:
                return res
        raise KeyError(f"{name!r} did not run; done: {[k for k, _ in self.results]}, "
                       f"skipped: {dict(self.skipped)}")


def _first(columns: Sequence[str], names: Sequence[str]) -> str | None:
    return next((c for c in names if c in columns), None)


def _throughput_column(frame: pd.DataFrame) -> str | None:
    cols = [c for c in frame.columns if ("throughput" in c or c.startswith("tflops"))
            and frame[c].notna().any()]
    return cols[0] if cols else None


def _series(frame: pd.DataFrame, column: str) -> pd.Series:
    s = frame[["time", column]].dropna()
    return pd.Series(s[column].to_numpy(dtype=float), index=pd.DatetimeIndex(s["time"]),
                     name=column)


def _hourly(frame: pd.DataFrame, tput: str, temp: str, freq: str) -> pd.DataFrame:
    use = frame[frame[tput] > 0]
    g = use.groupby(use["time"].dt.floor(freq))
    out = pd.DataFrame({"throughput": g[tput].mean(), "temperature": g[temp].mean()}).dropna()
    return out.rename_axis("time").reset_index()


class _Runner:
    """Runs analyses, keeping results and the reason of every skip."""

    def __init__(self) -> None:
        self.results: list[tuple[str, Any]] = []
        self.skipped: list[tuple[str, str]] = []

    def run(self, name: str, fn: Callable[[], Any], why_not: str | None = None) -> None:
        if why_not is not None:
            self.skipped.append((name, why_not))
            return
        try:
            self.results.append((name, fn()))
        except InsufficientDataError as exc:
            self.skipped.append((name, f"too little data: {exc}"))


def analyze_environment(
    telemetry: pd.DataFrame,
    *,
    jobs: pd.DataFrame | None = None,
    interruptions: pd.DataFrame | None = None,
    min_step_w: float | None = None,
    power_scale: float = 1.0,
    grid_limit_mw: float | None = None,
    grid_ramp_mw_per_s: float | None = None,
    freq: str = "1h",
    tz: str = "UTC",
    failure_categories: Sequence[str] | None = None,
    conf_level: float = 0.95,
    seed: int | None = 0,
) -> EnvironmentStudy:
    """Run the environment analyses that the telemetry supports.

    Parameters
    ----------
    telemetry : pandas.DataFrame
        Canonical ``telemetry`` table (e.g. ``reliab.ingest(...).telemetry``).
    jobs, interruptions : pandas.DataFrame, optional
        Canonical tables: job timeline for labelling power swings, interruptions for the
        failure GLM (unplanned only, restricted to ``failure_categories`` if given).
    min_step_w : float, optional
        Smallest power step (W, in the measured series); without it swings are not detected.
    power_scale, grid_limit_mw, grid_ramp_mw_per_s
        See :func:`~reliab.models.environment.swings.analyze_power_swings`.
    freq : str
        Window of the throughput regression and of the node windows of the GLM.
    tz : str
        Zone for the hour of the diurnal minimum.
    conf_level, seed
        Interval level and bootstrap seed.

    Returns
    -------
    EnvironmentStudy
    """
    from reliab.models.environment.clocks import summarize_clock_events
    from reliab.models.environment.diurnal import diurnal_amplitude
    from reliab.models.environment.swings import analyze_power_swings
    from reliab.models.environment.throughput import fit_throughput

    if "host" not in telemetry.columns or "time" not in telemetry.columns:
        raise ValueError("telemetry needs 'time' and 'host' columns (reliab.schema.TELEMETRY)")
    r = _Runner()
    host = telemetry["host"].astype("string")
    cluster = telemetry[(host == CLUSTER).to_numpy()].sort_values("time")
    nodes = telemetry[(host != CLUSTER).to_numpy()]
    tput = _throughput_column(cluster)
    temp = _first([c for c in TEMPERATURES if c in cluster and cluster[c].notna().any()],
                  TEMPERATURES)
    no_tput = None if tput else "no cluster-level throughput column"
    training = cluster[cluster[tput] > 0] if tput else cluster
    idle = len(cluster) - len(training)
    r.run("diurnal", lambda: diurnal_amplitude(
        _series(training, tput), temperature=_series(training, temp) if temp else None, tz=tz,
        conf_level=conf_level, seed=seed), no_tput)
    r.run("throughput", lambda: fit_throughput(
        _hourly(cluster, tput, temp, freq), throughput="throughput", temperature="temperature",
        conf_level=conf_level), no_tput or (None if temp else "no cluster temperature column"))
    power, power_note = _power_series(cluster, nodes)
    why = ((power_note or "no power column") if power is None else
           "min_step_w not given" if min_step_w is None else None)
    r.run("power_swings", lambda: analyze_power_swings(
        power, min_step_w=float(min_step_w), jobs=jobs, interruptions=interruptions,
        scale=power_scale, grid_limit_mw=grid_limit_mw, grid_ramp_mw_per_s=grid_ramp_mw_per_s,
        conf_level=conf_level), why)
    flag = "clock_event_reasons_flag"
    has_flags = flag in telemetry and telemetry[flag].notna().any() and \
        {"power_w", "sm_clock_mhz"} <= set(telemetry.columns)
    r.run("clock_events", lambda: summarize_clock_events(telemetry[telemetry[flag].notna()]),
          None if has_flags else "no clock-event reasons column")
    r.run("failure_glm", lambda: _failure_glm(nodes, interruptions, freq, failure_categories,
                                              conf_level),
          "no interruptions table" if interruptions is None else
          None if len(nodes) and _first(list(nodes.columns), ("temp_c", "gpu_temp_c"))
          else "no node-level temperature")
    notes = [power_note] if power_note and power is not None else []
    if tput and idle:
        notes.append(f"{idle:,} cluster sample(s) with zero throughput (not training) are left "
                     "out of the diurnal cycle and the throughput regression")
    return EnvironmentStudy(results=tuple(r.results), skipped=tuple(r.skipped),
                            n=len(telemetry), conf_level=conf_level, notes=tuple(notes))


def _power_series(cluster: pd.DataFrame, nodes: pd.DataFrame) -> tuple[pd.Series | None, str]:
    """Cluster power: the cluster rows' own series, else the sum of every GPU/host series.

    Series sampled at different instants are put on a common grid (the median sampling
    interval, whole seconds): each series' mean in a bin, summed over series
    (:func:`reliab.windows.telemetry_windows` at cluster level); bins where not every
    series reported are left out and counted.  Every series with one sample only (a
    one-off ``nvidia-smi -q`` per node) has no sampling interval: ``(None, why)``.
    """
    from reliab.windows import telemetry_windows

    if "power_w" in cluster and cluster["power_w"].notna().any():
        return _series(cluster, "power_w"), ""
    if "power_w" not in nodes or not nodes["power_w"].notna().any():
        return None, ""
    use = nodes.dropna(subset=["power_w"])
    t = use.sort_values("time").groupby(["host", "gpu"], dropna=False, observed=True)["time"]
    gaps = t.diff().dt.total_seconds().dropna()
    if gaps.empty:
        return None, (f"one power sample per series ({len(use):,} series, e.g. an nvidia-smi -q "
                      "snapshot): no sampling interval, so no cluster power series")
    step = float(np.median(gaps))
    freq = f"{max(1, int(round(step)))}s"
    win = telemetry_windows(use, freq=freq, level="cluster", columns=["power_w"],
                            sum_columns=["power_w"])
    full = win["n_series"] == win["n_series"].max()
    s = pd.Series(win.loc[full, "power_w_total"].to_numpy(),
                  index=pd.DatetimeIndex(win.loc[full, "window"]))
    return s, (f"cluster power = sum of {int(win['n_series'].max())} series' means on a {freq} "
               f"grid; {int((~full).sum())} bin(s) where a series was missing left out")


def _failure_glm(nodes: pd.DataFrame, interruptions: pd.DataFrame, freq: str,
                 categories: Sequence[str] | None, level: float) -> Any:
    from reliab.models.environment.failure_glm import fit_failure_glm
    from reliab.windows import count_events, lag_windows, telemetry_windows

    temp = _first(list(nodes.columns), ("temp_c", "gpu_temp_c"))
    node_rows = nodes[nodes["gpu"].isna()] if nodes["gpu"].isna().any() else nodes
    win = telemetry_windows(node_rows, freq=freq, columns=[temp])
    ev = interruptions
    if "planned" in ev:
        ev = ev[~ev["planned"].astype("boolean").fillna(False).to_numpy(dtype=bool)]
    if categories is not None:
        ev = ev[ev["category"].isin(list(categories))]
    win = lag_windows(count_events(win, ev, name="failures"), [f"{temp}_mean"])
    win = win[np.isfinite(win["hours"]) & (win["hours"] > 0)]
    covariate = f"{temp}_mean_lag1"
    events = int(win.loc[win[covariate].notna(), "failures"].sum())
    if events < MIN_GLM_EVENTS:
        raise InsufficientDataError(f"{events} failure(s) on monitored nodes (with telemetry "
                                    f"in the window before); the study needs {MIN_GLM_EVENTS}")
    fit = fit_failure_glm(win, [covariate], cluster="host", family="poisson", conf_level=level)
    unplaced = int(win.attrs.get("unplaced", 0))
    extra = (f"{unplaced} interruption(s) on hosts or times without telemetry were not "
             "counted",) if unplaced else ()
    return dataclasses.replace(fit, notes=fit.notes + extra)


__all__ = ["analyze_environment", "EnvironmentStudy"]
