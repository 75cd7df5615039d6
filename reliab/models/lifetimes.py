"""Unit lifetimes (the ``lifetimes`` table) -> survival per group, removals by reason, Cox, Weibull.

A life is at risk from its install, observed inside a window ``[start, end]``:

* **left truncation** — a life installed before ``start`` enters the risk set at its age at
  ``start`` (delayed entry): the log would not show it had it been removed earlier
  (Klein & Moeschberger 2003, §3.4 and §4.6);
* **right censoring** — a life still in service at ``end``, or removed for a planned reason
  (``failed`` is false), is censored at that time (Meeker & Escobar 1998, §2.1);
* lives removed before ``start`` or installed after ``end`` are outside the window and left out;
  a removal for another reason than failure at ``end`` itself (a shutdown, the last
  inventory) ends the observation rather than being a removal by that reason.

Ages are in days.  Survival per group is Kaplan–Meier with delayed entry; the removals by
reason are Aalen–Johansen cumulative incidences with every recorded reason a competing cause;
Cox regression takes categorical covariates by formula (:func:`reliab.fit_cox_formula`);
Weibull is fitted per batch (or per kind) by maximum likelihood with delayed entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._checks import Check, contains, in_range
from reliab._result import NotAvailable, ResultMixin
from reliab.errors import InsufficientDataError

DAY = pd.Timedelta(days=1)
#: location columns tried for survival per location and for Cox, coarse to fine
LOCATION_FIELDS = ("site", "datacenter", "dc", "room", "cage", "row", "rack", "chassis", "node",
                   "host", "slot", "bay", "position", "location")
#: most groups shown per column (the rest pooled as "other")
MAX_GROUPS = 12


def lifetime_table(lifetimes: pd.DataFrame, *, start: Any = None, end: Any = None) -> pd.DataFrame:
    """Ages (days) at entry and exit and the failure flag of each life inside ``[start, end]``.

    Parameters
    ----------
    lifetimes : pandas.DataFrame
        Schema ``lifetimes`` (``installed``, ``removed``, ``failed``; other columns kept).
    start, end : timestamp-like, optional
        The observation window.  ``start`` default: none (every life observed from its
        install); ``end`` default: the last install or removal recorded.

    Returns
    -------
    pandas.DataFrame
        The lives inside the window with ``entry`` (age at start of observation), ``age``
        (at removal or censoring) and ``event`` (failed inside the window) added.
    """
    lt = lifetimes.copy()
    inst, rem = lt["installed"], lt["removed"]
    end_t = _utc(end) if end is not None else pd.concat([inst, rem.dropna()]).max()
    lo = inst if start is None else inst.clip(lower=_utc(start))
    hi = rem.fillna(end_t).clip(upper=end_t)
    lt["entry"] = ((lo - inst) / DAY).to_numpy(float)
    lt["age"] = ((hi - inst) / DAY).to_numpy(float)
    failed = lt["failed"].astype(bool).to_numpy() & (rem.notna() & (rem <= end_t)).to_numpy(dtype=bool)
    # a removal that is not a failure and falls on the end of observation (a shutdown, the
    # last inventory) is the end of observation, not an exit for a reason
    lt["exited"] = failed | (rem.notna() & (rem < end_t)).to_numpy(dtype=bool)
    lt["event"] = failed
    keep = (lt["age"] > lt["entry"]) & (inst <= end_t)
    return lt.loc[keep].reset_index(drop=True)


def _utc(t: Any) -> pd.Timestamp:
    ts = pd.Timestamp(t)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _groups(s: pd.Series) -> pd.Series:
    """Group labels as text, the rarest beyond :data:`MAX_GROUPS` pooled as ``other``."""
    text = s.astype(object).where(s.notna(), "(none)").map(str)
    top = text.value_counts().index[:MAX_GROUPS]
    return text.where(text.isin(top), "other")


@dataclass(frozen=True)
class GroupedSurvival(ResultMixin):
    """Kaplan–Meier survival of unit lives per group of one or more columns."""

    table: pd.DataFrame = field(repr=False)
    curves: dict[tuple[str, str], Any] = field(repr=False)
    n: int
    horizon_days: float
    conf_level: float
    method: str = ("Kaplan-Meier per group with delayed entry (left truncation); Greenwood "
                   "variance, log(-log) intervals")
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per group: by, group, n, failures, exposure_days, median_days, survival at the horizon."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Survival in [0, 1] inside its interval."""
        t = self.table
        return (in_range("survival", t["survival"], 0.0, 1.0, allow_nan=True),
                contains("survival interval", t["low"], t["survival"], t["high"]))


def estimate_survival_by(lt: pd.DataFrame, by: Sequence[str], *, horizon_days: float = 365.0,
                         conf_level: float = 0.95) -> GroupedSurvival:
    """Kaplan–Meier per group of each column in ``by`` on a :func:`lifetime_table`.

    Returns
    -------
    GroupedSurvival
        One row per (column, group): n, failures, exposure_days, median_days (inf when the
        curve stays above 0.5), survival at ``horizon_days`` with its interval.
    """
    from reliab.models.nonparametric import estimate_kaplan_meier

    rows, curves = [], {}
    for col in by:
        for group, part in lt.groupby(_groups(lt[col]), sort=True):
            km = estimate_kaplan_meier(part["age"], part["event"], entry=part["entry"],
                                       conf_level=conf_level)
            at = km.at(horizon_days).iloc[0]
            if part["age"].max() < horizon_days:  # no extrapolation past the last age seen
                at = dict.fromkeys(("survival", "low", "high"), np.nan)
            curves[(col, str(group))] = km
            rows.append({"by": col, "group": str(group), "n": km.n, "failures": km.n_failures,
                         "exposure_days": km.exposure, "median_days": km.median(),
                         "survival": at["survival"], "low": at["low"], "high": at["high"]})
    if not rows:
        raise InsufficientDataError("no lives inside the observation window")
    return GroupedSurvival(table=pd.DataFrame(rows), curves=curves, n=len(lt),
                           horizon_days=horizon_days, conf_level=conf_level)


@dataclass(frozen=True)
class GroupedWeibull(ResultMixin):
    """Weibull fits of unit lives per group (batch or kind)."""

    table: pd.DataFrame = field(repr=False)
    fits: dict[str, Any] = field(repr=False)
    by: str
    n: int
    conf_level: float
    method: str = "Weibull maximum likelihood per group with delayed entry; LR (profile) intervals"
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """Per group: n, failures, shape and scale (days) with intervals."""
        return self.table.copy()

    def invariants(self) -> tuple[Check, ...]:
        """Shape and scale positive, inside their intervals."""
        t = self.table
        return (in_range("shape", t["shape"], 0.0, allow_nan=True),
                contains("shape interval", t["shape_low"], t["shape"], t["shape_high"]),
                contains("scale interval", t["scale_low"], t["scale_days"], t["scale_high"]))


def fit_weibull_by(lt: pd.DataFrame, by: str, *, conf_level: float = 0.95) -> GroupedWeibull:
    """Weibull per group of column ``by`` on a :func:`lifetime_table`; a group whose fit cannot
    run (fewer than 2 failures) has NaN estimates and a note."""
    from reliab.models.weibull import fit_weibull

    rows, fits, notes = [], {}, []
    for group, part in lt.groupby(_groups(lt[by]), sort=True):
        row = {"group": str(group), "n": len(part), "failures": int(part["event"].sum())}
        try:
            fit = fit_weibull(part["age"], part["event"], entry=part["entry"], conf_level=conf_level)
        except (InsufficientDataError, ValueError) as exc:
            notes.append(f"{by}={group}: no fit ({exc})")
            rows.append({**row, **dict.fromkeys(("shape", "shape_low", "shape_high", "scale_days",
                                                 "scale_low", "scale_high"), np.nan)})
            continue
        fits[str(group)] = fit
        p = fit.params
        rows.append({**row, "shape": p.loc["shape", "estimate"], "shape_low": p.loc["shape", "low"],
                     "shape_high": p.loc["shape", "high"], "scale_days": p.loc["scale", "estimate"],
                     "scale_low": p.loc["scale", "low"], "scale_high": p.loc["scale", "high"]})
    if not fits:
        raise InsufficientDataError(f"no {by} group has the 2 failures a Weibull fit needs")
    return GroupedWeibull(table=pd.DataFrame(rows), fits=fits, by=by, n=len(lt),
                          conf_level=conf_level, notes=tuple(notes))


def _levels(lt: pd.DataFrame, col: str) -> int:
    return int(lt[col].nunique(dropna=True))


def location_columns(lt: pd.DataFrame) -> list[str]:
    """The location columns of ``lt`` with 2 to 50 levels, coarse to fine (the joined
    ``location`` only when the file had no location fields of its own)."""
    cols = [c for c in LOCATION_FIELDS if c in lt.columns and 2 <= _levels(lt, c) <= 50]
    return cols[:-1] if len(cols) > 1 and cols[-1] == "location" else cols


def default_formula(lt: pd.DataFrame) -> str | None:
    """``C(kind)`` (several kinds), ``C(batch)`` (several batches) and the coarsest location
    column with 2–20 levels, or ``None`` when no column varies.  A term whose dummy columns
    are collinear with the terms before it (a batch that is one cage) is left out."""
    from reliab.models.formula import design_matrix

    names = [c for c in ("kind", "batch") if c in lt.columns and 2 <= _levels(lt, c) <= 20]
    loc = [c for c in location_columns(lt) if _levels(lt, c) <= 20 and c != "location"]
    terms: list[str] = []
    filled = lt.fillna(dict.fromkeys(names + loc[:1], "(none)"))
    for name in names + loc[:1]:
        x = design_matrix(filled, " + ".join([*terms, f"C({name})"])).matrix
        if np.linalg.matrix_rank(np.c_[np.ones(len(x)), x.to_numpy()]) == x.shape[1] + 1:
            terms.append(f"C({name})")
    return " + ".join(terms) or None


def analyze_lifetimes(lifetimes: pd.DataFrame, *, start: Any = None, end: Any = None,
                      formula: str | None = None, conf_level: float = 0.95) -> dict[str, Any]:
    """Every unit-lifetime analysis the columns allow, each a result or :class:`NotAvailable`.

    Returns
    -------
    dict
        ``unit_survival`` (Kaplan–Meier per kind and per location column),
        ``unit_removals`` (cumulative incidence by removal reason), ``unit_cox`` (Cox by
        ``formula``, default :func:`default_formula`), ``unit_weibull`` (per batch, else kind).
    """
    from reliab.models.competing import estimate_cumulative_incidence
    from reliab.models.cox_formula import fit_cox_formula

    lt = lifetime_table(lifetimes, start=start, end=end)
    for c in ("kind", "reason"):
        lt[c] = lt[c].astype(object).where(lt[c].notna(), None)
    out: dict[str, Any] = {}
    by = [c for c in ("kind",) if lt["kind"].notna().any()] + location_columns(lt)
    out["unit_survival"] = _guard("survival of unit lives", lambda: estimate_survival_by(
        lt, by or ["kind"], conf_level=conf_level))
    cause = _groups(lt["reason"].fillna("(no reason)")).where(lt["exited"], None)
    out["unit_removals"] = _guard("cumulative incidence by removal reason", lambda: (
        estimate_cumulative_incidence(lt["age"], cause, entry=lt["entry"], censored=None,
                                      conf_level=conf_level)))
    f = formula or default_formula(lt)
    cox_data = lt if formula else lt.fillna(dict.fromkeys(  # a missing batch or cage is a level
        [c for c in ("kind", "batch", *location_columns(lt)) if c in lt.columns], "(none)"))
    out["unit_cox"] = (NotAvailable("Cox regression of unit lives", "no kind, batch or location column "
                                    "varies across the lives") if f is None else
                       _guard("Cox regression of unit lives", lambda: fit_cox_formula(
                           cox_data, f, duration="age", event="event", entry="entry",
                           conf_level=conf_level)))
    wb = "batch" if "batch" in lt.columns else "kind"
    out["unit_weibull"] = _guard(f"Weibull per {wb}", lambda: fit_weibull_by(lt, wb, conf_level=conf_level))
    if start is None:  # say what the absent window start means for every result that ran
        why = ("no observation start given: every life is taken as observed from its install (no "
               "left truncation); if the log began after the earliest install, give the window")
        out = {k: dataclasses.replace(v, notes=(*v.notes, why)) if hasattr(v, "notes") else v
               for k, v in out.items()}
    return out


def _guard(what: str, fn: Any) -> Any:
    try:
        return fn()
    except InsufficientDataError as exc:
        return NotAvailable(what, f"too little data: {exc}")
    except (ValueError, np.linalg.LinAlgError) as exc:
        return NotAvailable(what, f"the data do not fit this analysis: {exc}")


__all__ = ["GroupedSurvival", "GroupedWeibull", "analyze_lifetimes", "default_formula",
           "estimate_survival_by", "fit_weibull_by", "lifetime_table", "location_columns"]
