"""Kaplan–Meier curves per group (R's ``survfit(Surv(t, d) ~ group)``), with the table R prints:
n, events, median and its Brookmeyer–Crowley limits per group (Brookmeyer, R. and Crowley, J.
(1982), A confidence interval for the median survival time, Biometrics 38, 29–41)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from reliab._checks import Check, equal
from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError


@dataclass(frozen=True)
class KaplanMeierGroups(ResultMixin):
    """One Kaplan–Meier curve per group; ``curves[label]`` is a ``KaplanMeierResult``."""

    curves: dict[Any, Any] = field(repr=False)
    n: int
    conf_level: float
    conf_type: str
    method: str = "Kaplan-Meier per group"
    notes: tuple[str, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """All curves' tables stacked, with a leading ``group`` column."""
        return pd.concat([c.table.assign(group=g) for g, c in self.curves.items()],
                         ignore_index=True)[["group", *next(iter(self.curves.values())).table]]

    def summary(self) -> pd.DataFrame:
        """Per group: group, n, events, median, median_low, median_high (inf: not reached)."""
        rows = []
        for g, c in self.curves.items():
            low, high = c.quantile_interval(0.5)
            rows.append((g, c.n, c.n_failures, c.median(), low, high))
        return pd.DataFrame(rows, columns=["group", "n", "events", "median", "median_low",
                                           "median_high"])

    def quantiles(self, probs: ArrayLike = (0.25, 0.5, 0.75)) -> pd.DataFrame:
        """Quantiles with limits per group: columns group, p, time, low, high."""
        return pd.concat([c.quantiles(probs).assign(group=g) for g, c in self.curves.items()],
                         ignore_index=True)[["group", "p", "time", "low", "high"]]

    def invariants(self) -> tuple[Check, ...]:
        """Every curve's invariants (named by group); group sizes add up to n."""
        checks = [equal("groups_sum_to_n", sum(c.n for c in self.curves.values()), self.n)]
        for g, c in self.curves.items():
            checks += [Check(f"{g}: {k.name}", k.ok, k.detail) for k in c.invariants()]
        return tuple(checks)

    def plot(self, ax: Any = None) -> Figure:
        """All survival curves on one axes, one colour per group."""
        fig, ax = new_figure(ax)
        for i, (g, c) in enumerate(self.curves.items()):
            tb = c.table
            ax.step(np.r_[0.0, tb["time"]], np.r_[1.0, tb["survival"]], where="post",
                    color=f"C{i % 10}", label=str(g))
        ax.set_xlabel("time (h)")
        ax.set_ylabel("survival probability (0-1)")
        ax.set_title("Kaplan-Meier by group")
        ax.legend(loc="best")
        return fig


def kaplan_meier_groups(durations: ArrayLike, observed: ArrayLike | None, groups: ArrayLike, *,
                        entry: ArrayLike | None, conf_level: float, conf_type: str,
                        estimate_kaplan_meier: Callable[..., Any]) -> KaplanMeierGroups:
    """One Kaplan–Meier curve per sorted distinct label of ``groups`` (missing labels dropped),
    each from ``estimate_kaplan_meier`` (:func:`reliab.models.estimate_kaplan_meier`, which
    calls this with itself)."""
    from reliab.models.logrank import factor_codes, stable_order

    t = np.asarray(durations, dtype=float)
    codes, uniques = factor_codes(groups, t.size, "groups")
    if not len(uniques):
        raise InsufficientDataError("no units with a group label")
    obs = None if observed is None else np.asarray(observed)
    ent = None if entry is None else np.asarray(entry, dtype=float)
    order = stable_order(codes, len(uniques))
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    curves = {}
    for k, label in enumerate(uniques):
        idx = order[bounds[k]:bounds[k + 1]]
        curves[label] = estimate_kaplan_meier(
            t[idx], None if obs is None else obs[idx], entry=None if ent is None else ent[idx],
            conf_level=conf_level, conf_type=conf_type)
    dropped = int((codes < 0).sum())
    notes = (f"{dropped} unit(s) without a group label dropped",) if dropped else ()
    return KaplanMeierGroups(curves=curves, n=int((codes >= 0).sum()), conf_level=conf_level,
                             conf_type=conf_type, notes=notes)


__all__ = ["KaplanMeierGroups", "kaplan_meier_groups"]
