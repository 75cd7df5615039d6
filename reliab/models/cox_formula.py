"""Cox regression by formula: categorical covariates dummy-coded, hazard ratios named by level.

``fit_cox_formula(df, "C(cage) + C(batch) + age_h", duration=..., event=...,
reference={"cage": "c0"})`` builds the design matrix with :func:`reliab.models.formula.design_matrix`
(treatment contrasts; the reference level named, by default the first sorted) and fits it with
:func:`reliab.fit_cox`.  The hazard ratio of ``cage[T.c3]`` is the hazard of units in cage
``c3`` over that of units in the reference cage, the other terms held fixed (Therneau &
Grambsch 2000, §3.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from reliab.models.cox import CoxFit, fit_cox
from reliab.models.formula import design_matrix


def fit_cox_formula(
    df: pd.DataFrame,
    formula: str,
    *,
    duration: str | None = None,
    event: str,
    entry: str | None = None,
    start: str | None = None,
    stop: str | None = None,
    id: str | None = None,  # noqa: A002 - the survival-data name of the column
    reference: Mapping[str, object] | None = None,
    conf_level: float = 0.95,
) -> CoxFit:
    """Fit a Cox model whose covariates are given by a formula.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per unit (or per ``(start, stop]`` interval).
    formula : str
        Terms joined by ``+``: ``C(x)`` categorical, a bare numeric column as a number, a bare
        text column categorical (:mod:`reliab.models.formula`).
    duration, event, entry, start, stop, id
        As in :func:`reliab.fit_cox` (``entry``: left truncation).
    reference : mapping, optional
        Reference level per categorical column, e.g. ``{"cage": "c0"}``; default the first
        level in sorted order (as R and patsy).
    conf_level : float
        Level of the hazard-ratio intervals.

    Returns
    -------
    CoxFit
        Covariates named ``x`` or ``x[T.level]``; ``notes`` name each reference level.

    Raises
    ------
    ValueError
        A bad formula or reference (see :func:`reliab.models.formula.design_matrix`), or dummy
        columns that are collinear (a level nested in another factor's level, an empty level).

    References
    ----------
    Cox (1972), JRSS B 34, 187–220; Chambers & Hastie (1992), *Statistical Models in S*, ch. 2.
    """
    design = design_matrix(df, formula, reference)
    x = design.matrix
    rank = np.linalg.matrix_rank(np.c_[np.ones(len(x)), x.to_numpy()]) if len(x) else 0
    if rank < x.shape[1] + 1:
        raise ValueError(f"the {x.shape[1]} design columns of {formula!r} are collinear (rank "
                         f"{rank - 1} without the intercept): a factor nested in another, or "
                         "a numeric term constant; drop a term")
    taken = [c for c in (duration, event, entry, start, stop, id) if c is not None]
    clash = sorted(set(taken) & set(x.columns))
    if clash:
        raise ValueError(f"formula columns {clash} are also survival columns")
    data = pd.concat([df[taken].reset_index(drop=True), x.reset_index(drop=True)], axis=1)
    fit = fit_cox(data, duration=duration, event=event, covariates=list(x.columns), entry=entry,
                  start=start, stop=stop, id=id, conf_level=conf_level)
    return dataclasses.replace(fit, notes=(*fit.notes, f"formula: {formula}", *design.notes()))


__all__ = ["fit_cox_formula"]
