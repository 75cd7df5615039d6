"""Input checks of :func:`reliab.models.cox.fit_cox`: columns, rows, subject intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray


def columns(df: pd.DataFrame, names: Sequence[str]) -> None:
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the data frame (has {list(df.columns)})")


def check_rows(start: NDArray[np.float64], stop: NDArray[np.float64], event: NDArray[np.float64],
                x: NDArray[np.float64], covariates: Sequence[str]) -> None:
    checks = [
        (~np.isfinite(stop) | np.isnan(start) | np.isposinf(start),
         "row(s) with missing or infinite times"),
        (~np.isin(event, (0.0, 1.0)), "event value(s) not 0/1"),
        (stop < 0, "negative duration(s)"),
        (start >= stop, "row(s) with start (entry) not before stop (duration)"),
    ]
    for j, name in enumerate(covariates):
        checks.append((~np.isfinite(x[:, j]), f"missing/non-finite value(s) of {name!r}"))
    for mask, what in checks:
        if mask.any():
            raise ValueError(f"{int(mask.sum())} {what} (first at row position "
                             f"{int(np.flatnonzero(mask)[0])})")


def check_ids(ids: NDArray, start: NDArray[np.float64], stop: NDArray[np.float64]) -> int:
    """Number of subjects; raises if one subject's intervals overlap."""
    codes, uniq = pd.factorize(ids)
    order = np.lexsort((start, codes))
    same = codes[order][1:] == codes[order][:-1]
    overlap = same & (start[order][1:] < stop[order][:-1])
    if overlap.any():
        pos = int(order[1:][overlap][0])
        raise ValueError(f"{int(overlap.sum())} interval(s) overlap an earlier interval of the "
                         f"same id (first at row position {pos}, id {ids[pos]!r})")
    return len(uniq)


def codes(df: pd.DataFrame, cols: str | Sequence[str] | None) -> NDArray[np.intp]:
    """Integer codes of the combinations of ``cols`` (all zero when None)."""
    if cols is None:
        return np.zeros(len(df), dtype=np.intp)
    names = [cols] if isinstance(cols, str) else list(cols)
    columns(df, names)
    bad = df[names].isna().any(axis=1).to_numpy()
    if bad.any():
        raise ValueError(f"{int(bad.sum())} missing value(s) in {names} (first at row position "
                         f"{int(np.flatnonzero(bad)[0])})")
    return df.groupby(names, sort=True, observed=True).ngroup().to_numpy(dtype=np.intp)


def numeric(df: pd.DataFrame, col: str | None, default: float, what: str,
            positive: bool = False) -> NDArray[np.float64]:
    """A finite numeric column (weights: also > 0), or ``default`` everywhere."""
    if col is None:
        return np.full(len(df), default)
    columns(df, [col])
    v = df[col].to_numpy(dtype=float)
    bad = ~np.isfinite(v) | ((v <= 0) if positive else False)
    if np.any(bad):
        raise ValueError(f"{int(np.sum(bad))} invalid {what} value(s) in {col!r} (first at row "
                         f"position {int(np.flatnonzero(bad)[0])})")
    return v
