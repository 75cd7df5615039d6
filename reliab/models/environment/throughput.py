"""Throughput against temperature: total effect, and the part that runs through power cap and clock.

Llama 3 (arXiv 2407.21783, §3.3.4) attributes its diurnal 1–2 % throughput swing to mid-day
heat acting on GPU dynamic voltage and frequency scaling.  :func:`fit_throughput` measures
that chain on a user's own data with three kinds of ordinary least squares (statsmodels):

* total effect:  ``log(throughput) ~ temperature [+ controls] [+ node fixed effects]``;
* mediator models: ``m_j ~ temperature [+ …]`` for each mediator (power-cap flag, SM clock);
* outcome model: ``log(throughput) ~ temperature + m_1 + … [+ …]``.

The direct effect is the temperature coefficient of the outcome model; the indirect effect
through ``m_j`` is the product of coefficients ``a_j b_j`` (Baron & Kenny 1986; MacKinnon,
Lockwood, Hoffman, West & Sheets 2002, *Psychological Methods* 7, 83–104) and, with OLS on
the same rows, total = direct + Σ indirect exactly.  Effects are in percent per °C
(100 × the log-point slope).  Every effect gets two intervals: the naive one (independent
errors; Sobel 1982 for products) and one from the joint Newey–West covariance of all the
equations' coefficients (:mod:`._hac`) with the delta method, so the user sees how much
autocorrelation widens them.  Node fixed effects are absorbed by demeaning within node
(Frisch–Waugh–Lovell); the HAC sums then run within node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from reliab._checks import Check, contains, finite, in_range
from reliab._result import ResultMixin
from reliab.errors import InsufficientDataError
from reliab.models.environment._hac import andrews_lags, bread, nw94_lags, stacked_hac

_PLOT_POINTS = 20_000


@dataclass(frozen=True)
class ThroughputFit(ResultMixin):
    """Effects of temperature on throughput (% per °C), naive and HAC intervals side by side."""

    report_section = "environment"  # placement in the report (reliab.report.catalog)

    table: pd.DataFrame = field(repr=False)
    coefficients: pd.DataFrame = field(repr=False)
    levels: pd.DataFrame = field(repr=False)
    n: int
    n_nodes: int
    fixed_effects: bool
    lags: int
    lag_rule: str
    mediators: tuple[str, ...]
    conf_level: float
    method: str
    notes: tuple[str, ...] = ()
    _points: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def summary(self) -> pd.DataFrame:
        """One row per effect (``total``, ``direct``, ``indirect via m``, ``indirect``):
        ``pct_per_c``, naive and HAC standard errors and intervals, ``hac_over_naive``."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Effects finite inside their naive and HAC intervals; se >= 0; p in [0, 1]."""
        t = self.table
        return (finite("effects_finite", t["pct_per_c"]),
                contains("naive_interval_contains_effect", t["low_naive"], t["pct_per_c"],
                         t["high_naive"]),
                contains("hac_interval_contains_effect", t["low_hac"], t["pct_per_c"],
                         t["high_hac"]),
                in_range("se_nonnegative", t[["se_naive", "se_hac"]].to_numpy(), 0),
                in_range("p_in_unit_interval", t["p_hac"], 0, 1, allow_nan=True))

    def effect(self, name: str = "total") -> pd.Series:
        """The summary row of one effect."""
        rows = self.table[self.table["effect"] == name]
        if rows.empty:
            raise KeyError(f"no effect {name!r}; have {list(self.table['effect'])}")
        return rows.iloc[0]

    def plot(self, ax: Any = None) -> Any:
        """Throughput against temperature with the fitted line, HAC and naive bands."""
        from reliab.models.environment._figures import throughput_figure

        return throughput_figure(self, ax=ax)


def _demean(a: NDArray[np.float64], codes: NDArray[np.int64] | None) -> NDArray[np.float64]:
    if codes is None:
        return a
    sums = np.zeros((codes.max() + 1, a.shape[1]))
    np.add.at(sums, codes, a)
    counts = np.bincount(codes)[:, None]
    return a - (sums / counts)[codes]


def _ols(x: NDArray[np.float64], y: NDArray[np.float64], dof_extra: int
         ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Coefficients, residuals and the naive covariance ``s² (X'X)^-1``."""
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    dof = len(y) - x.shape[1] - dof_extra
    s2 = float(resid @ resid) / max(dof, 1)
    return beta, resid, s2 * bread(x)


def _prepare(data: pd.DataFrame, cols: list[str], node: str | None, time: str | None
             ) -> tuple[pd.DataFrame, list[str]]:
    missing = [c for c in cols + [c for c in (node, time) if c] if c not in data.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the data (has {list(data.columns)})")
    notes: list[str] = []
    use = data[[c for c in dict.fromkeys(cols + [c for c in (node, time) if c])]].copy()
    bad = use[cols].apply(pd.to_numeric, errors="coerce").isna().any(axis=1)
    if bad.any():
        notes.append(f"{int(bad.sum())} row(s) with a missing value dropped")
        use = use[~bad.to_numpy()]
    if time:
        use, time_notes = _time_order(use, node, time)
        notes += time_notes
    elif node:
        use = use.sort_values(node, kind="stable")
    return use.reset_index(drop=True), notes


def _time_order(use: pd.DataFrame, node: str | None, time: str) -> tuple[pd.DataFrame, list[str]]:
    """Rows sorted by node and time; missing times, unsorted rows, repeats and gaps reported.

    HAC lags count rows, so the row order must be time order: rows without a time are
    dropped, unsorted rows sorted, and repeated times and gaps (spacing above five times
    the median within a node) are named in the notes, never bridged silently.
    """
    notes: list[str] = []
    nat = use[time].isna().to_numpy()
    if nat.any():
        notes.append(f"{int(nat.sum())} row(s) without a {time!r} value dropped")
        use = use[~nat]
    tv = use[time]
    prev = tv.groupby(use[node], sort=False, observed=True).shift() if node else tv.shift()
    back = int((tv < prev).sum())
    if back:
        notes.append(f"{back} row(s) earlier than the row before them (same node): sorted by "
                     f"{', '.join(c for c in (node, time) if c)}")
    order = [c for c in (node, time) if c]
    use = use.sort_values(order, kind="stable")
    dup = int(use.duplicated(order).sum())
    if dup:
        notes.append(f"{dup} repeated timestamp(s): HAC lags follow row order")
    step = (use[time].groupby(use[node], sort=False, observed=True).diff() if node
            else use[time].diff())
    if pd.api.types.is_timedelta64_dtype(step):
        step = step.dt.total_seconds()
    step = pd.to_numeric(step, errors="coerce")
    typical = float(step[step > 0].median()) if (step > 0).any() else np.nan
    gaps = step > 5 * typical
    if np.isfinite(typical) and gaps.any():
        notes.append(f"{int(gaps.sum())} gap(s) in {time!r} longer than 5x the median spacing "
                     f"(longest {float(step.max()) / typical:.3g}x): HAC lags count rows, so rows "
                     "either side of a gap count as neighbours")
    return use, notes


def _levels(use: pd.DataFrame, y: str, temp: str, mediators: Sequence[str]) -> pd.DataFrame:
    rows = []
    for m in mediators:
        vals = set(pd.unique(use[m].astype(float)))
        if not vals <= {0.0, 1.0}:
            continue
        for v, g in use.groupby(use[m].astype(float)):
            rows.append({"mediator": m, "state": int(v), "n": len(g),
                         "throughput_mean": float(g[y].mean()),
                         "throughput_median": float(g[y].median()),
                         "temperature_mean": float(g[temp].mean())})
    return pd.DataFrame(rows, columns=["mediator", "state", "n", "throughput_mean",
                                       "throughput_median", "temperature_mean"])


def fit_throughput(
    data: pd.DataFrame,
    *,
    throughput: str,
    temperature: str = "temp_c",
    mediators: Sequence[str] = (),
    controls: Sequence[str] = (),
    node: str | None = None,
    time: str | None = "time",
    lags: int | Literal["nw94", "andrews"] = "nw94",
    conf_level: float = 0.95,
) -> ThroughputFit:
    """Regress log throughput on temperature with HAC errors and a mediation decomposition.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per throughput measurement (training step, window) with its aligned
        telemetry, e.g. from :func:`reliab.align.align_asof`.
    throughput : str
        Positive throughput column (TFLOP/s, tokens/s, samples/s).
    temperature : str
        Temperature column (°C).
    mediators : sequence of str
        Variables on the path from temperature to throughput: a power-cap flag (0/1),
        SM clock (MHz), power (W).  Empty: only the total effect.
    controls : sequence of str
        Other regressors in every equation (e.g. utilisation).
    node : str, optional
        Node (or GPU) column; with more than one node, node fixed effects are absorbed and
        the HAC sums run within node.
    time : str, optional
        Time column that orders rows within a node (HAC needs time order).  Rows without a
        time are dropped, unsorted rows sorted; those, repeated times and gaps longer than
        five times the median spacing are reported in ``notes``.
    lags : int or {"nw94", "andrews"}
        HAC truncation lag, or the rule choosing it: Newey & West (1994)
        ``floor(4 (T/100)^(2/9))`` with T the rows per node, or the Andrews (1991) AR(1)
        plug-in, which grows with autocorrelation.
    conf_level : float
        Level of the two-sided normal intervals.

    Returns
    -------
    ThroughputFit

    Raises
    ------
    InsufficientDataError
        Fewer rows than regressors + 3, or no variation in temperature.
    """
    if not 0 < conf_level < 1:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    if isinstance(lags, str) and lags not in ("nw94", "andrews"):
        raise ValueError(f"lags must be an integer, 'nw94' or 'andrews', got {lags!r}")
    if not isinstance(lags, str) and int(lags) < 0:
        raise ValueError(f"lags must be >= 0, got {lags}")
    meds, ctrl = list(mediators), list(controls)
    if temperature in meds or throughput in meds:
        raise ValueError("mediators must differ from the throughput and temperature columns")
    use, notes = _prepare(data, [throughput, temperature, *meds, *ctrl], node, time)
    yv = use[throughput].to_numpy(dtype=float)
    if (yv <= 0).any():
        raise ValueError(f"{throughput!r} must be positive (log scale); "
                         f"{int((yv <= 0).sum())} row(s) are not — filter idle periods first")
    codes = None
    n_nodes = 1
    if node is not None:
        codes_all, uniq = pd.factorize(use[node])
        n_nodes = len(uniq)
        codes = codes_all if n_nodes > 1 else None
    k = 1 + len(meds) + len(ctrl) + (n_nodes if codes is not None else 1)
    if len(use) < k + 3:
        raise InsufficientDataError(f"{len(use)} usable row(s) for {k} parameters; need {k + 3}")
    raw = np.column_stack([np.log(yv), use[[temperature, *meds, *ctrl]].to_numpy(dtype=float)])
    z = _demean(raw, codes)
    if codes is None:
        z = np.column_stack([z, np.ones(len(z))])
    if np.std(z[:, 1]) == 0:
        raise InsufficientDataError(f"{temperature!r} does not vary (within nodes)")
    return _fit(use, z, codes, n_nodes, throughput, temperature, meds, ctrl, lags,
                conf_level, notes)


def _fit(use: pd.DataFrame, z: NDArray[np.float64], codes: NDArray[np.int64] | None,
         n_nodes: int, throughput: str, temperature: str, meds: list[str], ctrl: list[str],
         lags: int | str, level: float, notes: list[str]) -> ThroughputFit:
    n, m = len(z), len(meds)
    y, t = z[:, 0], z[:, 1]
    mz = z[:, 2:2 + m]
    rest = z[:, 2 + m:]  # controls (+ intercept)
    fe = n_nodes if codes is not None else 0
    eqs = [("total", throughput, np.column_stack([t, rest]), y)]
    eqs += [(f"mediator {name}", name, np.column_stack([t, rest]), mz[:, j])
            for j, name in enumerate(meds)]
    if m:
        eqs.append(("outcome", throughput, np.column_stack([t, mz, rest]), y))
    fits = [_ols(x, yy, fe) for _, _, x, yy in eqs]
    lag_rule = lags if isinstance(lags, str) else "fixed"
    per_node = n / n_nodes
    if lags == "nw94":
        lags = nw94_lags(per_node)
    elif lags == "andrews":
        lags = andrews_lags(eqs[0][2][:, :1] * fits[0][1][:, None], codes)
    hac = stacked_hac([e[2] for e in eqs], [f[1] for f in fits], int(lags), codes)
    if fe:
        hac *= n / max(n - fe - eqs[-1][2].shape[1], 1)  # dof for absorbed fixed effects
    sizes = [e[2].shape[1] for e in eqs]
    offs = np.r_[0, np.cumsum(sizes)]
    naive = np.zeros_like(hac)
    for i, f in enumerate(fits):
        naive[offs[i]:offs[i + 1], offs[i]:offs[i + 1]] = f[2]
    beta = np.concatenate([f[0] for f in fits])
    table = _effects(beta, naive, hac, offs, meds, level)
    coefs = _coef_table(eqs, fits, hac, offs, temperature, meds, ctrl, codes is None)
    if m:
        gap = abs(table.loc[0, "pct_per_c"] - table.loc[1, "pct_per_c"]
                  - table.loc[len(table) - 1, "pct_per_c"])
        notes.append(f"total = direct + indirect holds to {gap:.2g} %/°C")
    notes.append(f"HAC: Bartlett kernel, {lags} lag(s) ({lag_rule}; {per_node:,.0f} rows per node)")
    pts = use[[c for c in (throughput, temperature) if c]].copy()
    if len(pts) > _PLOT_POINTS:
        pts = pts.sample(_PLOT_POINTS, random_state=0)
    return ThroughputFit(
        table=table, coefficients=coefs, levels=_levels(use, throughput, temperature, meds),
        n=n, n_nodes=n_nodes, fixed_effects=codes is not None, lags=int(lags),
        lag_rule=str(lag_rule), mediators=tuple(meds), conf_level=level,
        method="OLS of log throughput (statsmodels-equivalent lstsq); product-of-coefficients "
               "mediation; naive (Sobel 1982) and joint Newey-West HAC delta-method intervals",
        notes=tuple(notes), _points=pts.rename(columns={throughput: "throughput",
                                                        temperature: "temperature"}))


def _effects(beta: NDArray[np.float64], naive: NDArray[np.float64], hac: NDArray[np.float64],
             offs: NDArray[np.int64], meds: list[str], level: float) -> pd.DataFrame:
    """Total, direct and indirect effects with delta-method standard errors (in log points)."""
    p = len(beta)
    m = len(meds)
    rows: list[tuple[str, NDArray[np.float64]]] = []

    def grad_of(index: int) -> NDArray[np.float64]:
        g = np.zeros(p)
        g[index] = 1.0
        return g

    rows.append(("total", grad_of(offs[0])))
    if m:
        out = offs[-2]  # outcome equation: temperature, then mediators
        rows.append(("direct", grad_of(out)))
        all_g = np.zeros(p)
        for j, name in enumerate(meds):
            a_idx, b_idx = offs[1 + j], out + 1 + j
            g = np.zeros(p)
            g[a_idx], g[b_idx] = beta[b_idx], beta[a_idx]
            all_g += g
            rows.append((f"indirect via {name}", g))
        rows.append(("indirect", all_g))
    q = float(stats.norm.ppf(0.5 + level / 2))
    out_rows = []
    for name, g in rows:
        if name == "total" or name == "direct":
            est = float(beta[np.flatnonzero(g)[0]])
        elif name == "indirect":
            est = sum(float(beta[offs[1 + j]] * beta[offs[-2] + 1 + j]) for j in range(m))
        else:
            j = meds.index(name.removeprefix("indirect via "))
            est = float(beta[offs[1 + j]] * beta[offs[-2] + 1 + j])
        se_n = float(np.sqrt(max(g @ naive @ g, 0.0)))
        se_h = float(np.sqrt(max(g @ hac @ g, 0.0)))
        out_rows.append({"effect": name, "pct_per_c": 100 * est, "se_naive": 100 * se_n,
                         "low_naive": 100 * (est - q * se_n), "high_naive": 100 * (est + q * se_n),
                         "se_hac": 100 * se_h, "low_hac": 100 * (est - q * se_h),
                         "high_hac": 100 * (est + q * se_h),
                         "p_hac": float(2 * stats.norm.sf(abs(est / se_h))) if se_h > 0 else np.nan,
                         "hac_over_naive": se_h / se_n if se_n > 0 else np.nan})
    return pd.DataFrame(out_rows)


def _coef_table(eqs: list[tuple], fits: list[tuple], hac: NDArray[np.float64],
                offs: NDArray[np.int64], temperature: str, meds: list[str], ctrl: list[str],
                intercept: bool) -> pd.DataFrame:
    rows = []
    for i, ((eq, response, _, _), f) in enumerate(zip(eqs, fits, strict=True)):
        names = [temperature] + (meds if eq == "outcome" else []) + ctrl + (
            ["intercept"] if intercept else [])
        for j, name in enumerate(names):
            rows.append({"equation": eq, "response": response, "term": name,
                         "estimate": float(f[0][j]), "se_naive": float(np.sqrt(f[2][j, j])),
                         "se_hac": float(np.sqrt(hac[offs[i] + j, offs[i] + j]))})
    return pd.DataFrame(rows)


__all__ = ["fit_throughput", "ThroughputFit"]
