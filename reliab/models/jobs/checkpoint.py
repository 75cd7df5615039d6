"""Checkpoint interval: Young's and Daly's optima, the simulated optimum, and what-if tables.

* Young (1974), "A first order approximation to the optimum checkpoint interval",
  *CACM* 17(9): ``τ = sqrt(2 δ M)`` for dump time ``δ`` and mean time to interrupt ``M``;
* Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart
  dumps", *FGCS* 22(3), Eq. 37: ``τ = sqrt(2δM)·[1 + ⅓ sqrt(δ/2M) + (1/9)(δ/2M)] − δ`` for
  ``δ < 2M``, else ``τ = M``;
* the simulated optimum: the interval maximising the Monte-Carlo ETTR of
  :mod:`.simulate`, all intervals evaluated on the same failure draws.

:func:`plan_checkpoints` tabulates ETTR over GPU count × checkpoint interval × restart time
at one or more per-node failure rates (e.g. Llama 3 and Meta RSC-1/RSC-2) — the table and
heat-map a training-infrastructure lead reads before launching a run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from reliab._checks import Check, in_range
from reliab.models._result import ResultMixin
from reliab.models.jobs._durations import HoursLike, check_write, to_count, to_hours, to_rate
from reliab.models.jobs._failures import node_model
from reliab.models.jobs.ettr import first_order_ettr, renewal_ettr
from reliab.models.jobs.simulate import simulate_policies

#: Published per-node failure rates (failures per node-day): Meta RSC-1 and RSC-2 (Kokolis
#: et al., HPCA 2025) and Llama 3 405B's 419 unexpected interruptions on 2,048 nodes in 54 days.
PUBLISHED_RATES: dict[str, float] = {
    "Llama 3 (Table 5)": 419 / (2048 * 54),
    "RSC-1": 6.50e-3,
    "RSC-2": 2.34e-3,
}
DEFAULT_GPUS: tuple[int, ...] = (4096, 8192, 16384, 32768, 65536, 131072)
DEFAULT_INTERVALS_MIN: tuple[float, ...] = (2, 5, 10, 15, 20, 30, 45, 60, 90, 120)
DEFAULT_RESTARTS_MIN: tuple[float, ...] = (2, 5, 10, 20)


def optimal_checkpoint_interval(*, mtti_h: HoursLike, checkpoint_write_h: HoursLike,
                                method: Literal["daly", "young"] = "daly") -> float:
    """Checkpoint interval (hours of computation between dumps) that minimises wall time.

    Parameters
    ----------
    mtti_h : float or str
        Mean time to interrupt of the job, ``M``.
    checkpoint_write_h : float or str
        Time to write one checkpoint, ``δ`` (must be positive).
    method : {"daly", "young"}
        Daly's higher-order estimate (2006, Eq. 37) or Young's first-order one (1974).

    Returns
    -------
    float
        The optimum interval in hours.

    Raises
    ------
    ValueError
        Non-positive ``mtti_h`` or ``checkpoint_write_h`` (with free checkpoints the optimum
        is zero), or an unknown method.

    References
    ----------
    Young, J. W. (1974). A first order approximation to the optimum checkpoint interval.
    *Communications of the ACM* 17(9), 530–531.
    Daly, J. T. (2006). A higher order estimate of the optimum checkpoint interval for
    restart dumps. *Future Generation Computer Systems* 22(3), 303–312.

    Examples
    --------
    Daly's Fig. 3 case, M = 24 h and δ = 5 min, "the new model predicts τopt = 117 min":

    >>> round(60 * optimal_checkpoint_interval(mtti_h=24, checkpoint_write_h="5min"))
    117
    """
    m = to_hours(mtti_h, "mtti_h", positive=True)
    delta = to_hours(checkpoint_write_h, "checkpoint_write_h", positive=True)
    if method == "young":
        return math.sqrt(2.0 * delta * m)
    if method == "daly":
        if delta >= 2.0 * m:
            return m
        x = delta / (2.0 * m)
        return math.sqrt(2.0 * delta * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta
    raise ValueError(f"method must be 'daly' or 'young', got {method!r}")


@dataclass(frozen=True)
class PlanResult(ResultMixin):
    """ETTR what-if grid and optimum checkpoint intervals for several job sizes and rates.

    ``grid`` (long form): ``scenario``, ``node_failure_rate_per_day``, ``n_gpus``,
    ``checkpoint_interval_h``, ``restart_h``, ``ettr`` (renewal expectation) and
    ``ettr_first_order``.  ``optima``: per scenario, size and restart time the job MTTI and
    the Young, Daly and simulated optimum intervals with the ETTR each gives.
    """

    grid: pd.DataFrame = field(repr=False)
    optima: pd.DataFrame = field(repr=False)
    checkpoint_write_h: float
    blocking_writes: bool
    gpus_per_node: int
    n: int
    conf_level: float = 0.95
    method: str = ("ETTR: renewal-reward expectation (exponential failures) and Kokolis et al. "
                   "first-order form; optima: Young 1974, Daly 2006 Eq. 37, Monte Carlo")
    notes: tuple[str, ...] = ()

    def invariants(self) -> tuple[Check, ...]:
        """Every expected ETTR of the grid and of the optima in [0, 1] (no NaN, no infinity)."""
        optima = [c for c in self.optima.columns if c.startswith("ettr_")]
        values = [*self.grid["ettr"], *self.optima[optima].to_numpy(dtype=float).ravel()]
        return (in_range("ettr_in_unit_interval", values, 0.0, 1.0),)

    def summary(self) -> pd.DataFrame:
        """The optima table."""
        return self.optima.copy()

    def what_if(self, *, scenario: str | None = None, n_gpus: int | None = None) -> pd.DataFrame:
        """ETTR pivot (rows: checkpoint interval in minutes, columns: restart in minutes)."""
        g = self._select(scenario)
        size = n_gpus if n_gpus is not None else int(g["n_gpus"].iloc[0])
        g = g[g["n_gpus"] == size]
        if g.empty:
            raise ValueError(f"n_gpus={n_gpus} is not in the plan ({sorted(self.grid['n_gpus'].unique())})")
        table = g.assign(interval_min=g["checkpoint_interval_h"] * 60, restart_min=g["restart_h"] * 60)
        return table.pivot(index="interval_min", columns="restart_min", values="ettr")

    def _select(self, scenario: str | None) -> pd.DataFrame:
        names = list(dict.fromkeys(self.grid["scenario"]))
        name = scenario if scenario is not None else names[0]
        if name not in names:
            raise ValueError(f"scenario {scenario!r} not in the plan ({names})")
        return self.grid[self.grid["scenario"] == name]

    def plot(self, ax: Any = None, *, scenario: str | None = None) -> Any:
        """Heat-maps of ETTR over GPU count × checkpoint interval, one panel per restart time.

        With ``ax`` only the shortest restart time is drawn, on that axes.  Daly's optimum
        is marked in each row.
        """
        from matplotlib.figure import Figure

        g = self._select(scenario)
        restarts = sorted(g["restart_h"].unique())
        if ax is not None:
            fig, axes = ax.figure, [ax]
            restarts = restarts[:1]
        else:
            # two panels a row: four in one row print at half size on a page
            ncols = min(len(restarts), 2)
            nrows = -(-len(restarts) // ncols)
            fig = Figure(figsize=(3.6 * ncols + 0.8, 3.3 * nrows), layout="constrained")
            axes = list(fig.subplots(nrows, ncols, sharey=True, squeeze=False).ravel())
            for extra in axes[len(restarts):]:
                extra.set_visible(False)
        mesh = None
        for axis, restart in zip(axes, restarts, strict=False):
            sub = g[g["restart_h"] == restart]
            piv = sub.pivot(index="n_gpus", columns="checkpoint_interval_h", values="ettr")
            mesh = axis.imshow(piv.to_numpy(), aspect="auto", origin="lower", vmin=0, vmax=1,
                               cmap="viridis")
            axis.set_xticks(range(piv.shape[1]), [f"{60 * c:g}" for c in piv.columns], rotation=90)
            axis.set_yticks(range(piv.shape[0]), [f"{n // 1024}k" for n in piv.index])
            opt = self.optima[(self.optima["scenario"] == sub["scenario"].iloc[0])
                              & (self.optima["restart_h"] == restart)].set_index("n_gpus")
            cols = np.log(piv.columns.to_numpy(dtype=float))
            daly = np.log(opt["daly_h"].reindex(piv.index).to_numpy(dtype=float))
            axis.plot(np.interp(daly, cols, np.arange(len(cols))), range(len(piv.index)), "w^",
                      label="Daly optimum")
            axis.set(title=f"restart {60 * restart:g} min", xlabel="checkpoint interval (min)")
        for axis in axes[:: (2 if len(axes) > 1 and ax is None else 1)]:
            axis.set_ylabel("job size (GPUs)")
        if mesh is not None:
            fig.colorbar(mesh, ax=list(axes), label="expected ETTR (fraction of wall time)")
        return fig


def plan_checkpoints(
    *,
    checkpoint_write_h: HoursLike,
    n_gpus: Sequence[int] = DEFAULT_GPUS,
    node_failure_rate_per_day: float | Mapping[str, float] | None = None,
    checkpoint_intervals_h: Sequence[HoursLike] | None = None,
    restarts_h: Sequence[HoursLike] | None = None,
    blocking_writes: bool = True,
    gpus_per_node: int = 8,
    simulate: bool | Sequence[int] = True,
    n_runs: int = 400,
    duration_h: HoursLike = 54 * 24.0,
    seed: int | None = 0,
) -> PlanResult:
    """ETTR over GPU count × checkpoint interval × restart time, and the optimum intervals.

    Parameters
    ----------
    checkpoint_write_h : float or str
        Time to write one checkpoint (pauses training when ``blocking_writes``).
    n_gpus : sequence of int
        Job sizes (default 4k to 128k GPUs).
    node_failure_rate_per_day : float or mapping, optional
        One rate, or ``{scenario name: rate}``; default :data:`PUBLISHED_RATES` (Llama 3,
        RSC-1, RSC-2).
    checkpoint_intervals_h, restarts_h : sequences of float or str, optional
        The what-if axes (defaults 2–120 min, from the write time up, and 2–20 min).
    blocking_writes : bool
        Writes pause training (else they run in the background).
    gpus_per_node : int
        GPUs per node.
    simulate : bool or sequence of int
        Also find the simulated optimum (Monte Carlo, common random numbers) for every
        scenario, size and restart time; a sequence limits it to those job sizes.
    n_runs, duration_h, seed
        Monte-Carlo runs per point, their wall-clock length and the seed.

    Returns
    -------
    PlanResult
    """
    write = to_hours(checkpoint_write_h, "checkpoint_write_h", positive=True)
    per_node = to_count(gpus_per_node, "gpus_per_node")
    sizes = [to_count(n, "n_gpus") for n in n_gpus]
    scenarios = _scenarios(node_failure_rate_per_day)
    if checkpoint_intervals_h is None:  # the default grid starts at the write time
        intervals = [m / 60 for m in DEFAULT_INTERVALS_MIN if m / 60 >= write]
    else:
        intervals = [to_hours(v, "checkpoint_intervals_h", positive=True) for v in checkpoint_intervals_h]
    restarts = [to_hours(v, "restarts_h") for v in (restarts_h or [m / 60 for m in DEFAULT_RESTARTS_MIN])]
    for interval in intervals:
        check_write(write, interval)
    duration = to_hours(duration_h, "duration_h", positive=True)
    sim_sizes = set(sizes) if simulate is True else set() if simulate is False else {
        to_count(n, "simulate") for n in simulate}
    rows, optima = [], []
    for name, rate in scenarios.items():
        for size in sizes:
            model = node_model(size, rate, gpus_per_node=per_node)
            for restart in restarts:
                for interval in intervals:
                    rows.append((name, rate, size, interval, restart,
                                 renewal_ettr(model, interval, write, restart, blocking=blocking_writes),
                                 first_order_ettr(model.rate_per_h, interval,
                                                  write if blocking_writes else 0.0, restart)))
                optima.append(_optimum(name, rate, size, restart, model, write, blocking_writes,
                                       size in sim_sizes, n_runs, duration, seed))
    grid = pd.DataFrame(rows, columns=["scenario", "node_failure_rate_per_day", "n_gpus",
                                       "checkpoint_interval_h", "restart_h", "ettr", "ettr_first_order"])
    notes = ["failures: exponential per node (series system); write time "
             f"{60 * write:g} min, {'blocking' if blocking_writes else 'non-blocking'}"]
    if sim_sizes:
        notes.append(f"simulated optimum: {n_runs} runs of {duration / 24:g} days per point, "
                     "intervals compared on common random numbers")
    return PlanResult(grid=grid, optima=pd.DataFrame(optima), checkpoint_write_h=write,
                      blocking_writes=bool(blocking_writes), gpus_per_node=per_node,
                      n=len(grid), notes=tuple(notes))


def _scenarios(rate: float | Mapping[str, float] | None) -> dict[str, float]:
    if rate is None:
        return dict(PUBLISHED_RATES)
    if isinstance(rate, Mapping):
        if not rate:
            raise ValueError("node_failure_rate_per_day mapping is empty")
        return {str(k): to_rate(v, f"node_failure_rate_per_day[{k!r}]") for k, v in rate.items()}
    r = to_rate(rate, "node_failure_rate_per_day")
    return {f"{r * 1000:.3g} per 1000 node-days": r}


def _optimum(name: str, rate: float, size: int, restart: float, model: Any, write: float,
             blocking: bool, simulate: bool, n_runs: int, duration: float,
             seed: int | None) -> dict[str, Any]:
    """MTTI and the Young / Daly / numeric / simulated optimum intervals with their ETTR."""
    mtti = model.mtti_h
    row: dict[str, Any] = {"scenario": name, "node_failure_rate_per_day": rate, "n_gpus": size,
                           "restart_h": restart, "mtti_h": mtti}
    if not math.isfinite(mtti):  # no failures: checkpoint as rarely as you like
        return row | {"young_h": math.inf, "daly_h": math.inf, "ettr_young": 1.0, "ettr_daly": 1.0}

    def ettr(interval: float) -> float:
        return renewal_ettr(model, interval, write, restart, blocking=blocking)

    for method in ("young", "daly"):
        tau = optimal_checkpoint_interval(mtti_h=mtti, checkpoint_write_h=write, method=method)
        row[f"{method}_h"], row[f"ettr_{method}"] = tau, ettr(max(tau, write))
    lo = max(row["daly_h"] / 4, write)
    hi = max(row["daly_h"], lo) * 4
    best = minimize_scalar(lambda x: -ettr(math.exp(x)), bounds=(math.log(lo), math.log(hi)),
                           method="bounded", options={"xatol": 1e-4})
    row["renewal_optimum_h"], row["ettr_renewal_optimum"] = math.exp(best.x), -best.fun
    if simulate:
        start = max(row["young_h"] / 3, write)
        row["simulated_h"], row["ettr_simulated"] = _simulated_optimum(
            model, start, max(row["young_h"], start) * 3, write=write,
            restart=restart, blocking=blocking, duration=duration, n_runs=n_runs, seed=seed)
    return row


def _simulated_optimum(model: Any, lo: float, hi: float, *, write: float, restart: float,
                       blocking: bool, duration: float, n_runs: int,
                       seed: int | None) -> tuple[float, float]:
    """Interval maximising the simulated mean ETTR: 33 log-spaced intervals on common random
    numbers, refined by a parabola through the best point and its neighbours (in log time)."""
    grid = np.geomspace(lo, hi, 33)
    runs = simulate_policies(model, list(grid), write_h=write, restart_h=restart,
                             blocking=blocking, duration_h=duration, n_runs=n_runs, seed=seed)
    means = np.array([runs[float(i)]["ettr"].mean() for i in grid])
    k = int(np.argmax(means))
    if 0 < k < len(grid) - 1:
        x, y = np.log(grid[k - 1:k + 2]), means[k - 1:k + 2]
        a, b, _ = np.polyfit(x, y, 2)
        if a < 0:
            top = float(np.clip(-b / (2 * a), x[0], x[-1]))
            return math.exp(top), float(np.polyval(np.polyfit(x, y, 2), top))
    return float(grid[k]), float(means[k])
