"""Rolling-origin evaluation: train on the past, calibrate on a later past, test on the next week.

For each origin ``o`` (weekly), with horizon ``h`` and a calibration span ``c``: the trees
learn from rows whose outcome window closed before ``o − h − c``; the Platt map from rows
whose outcome closed before ``o``; the hazard model from rows whose next day closed before
``o``; the lemon baseline from signals and interruptions before ``o``.  Test rows are the
prediction times in ``[o, o + 7 d)`` whose outcome window closed within the data.  Rows are
never shuffled (Tashman, International Journal of Forecasting 2000, rolling-origin
evaluation).  Predictions of every fold are pooled before the metrics are computed.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reliab.predict._features import US_PER_H, Events, _us, feature_columns
from reliab.predict._models import Boosted, correctable_7d, fit_boosted, fit_hazard, past_rate

WEEK_H = 168.0
MODELS = ("boosted", "hazard")
BASELINES = ("lemon", "correctable_7d", "past_rate")


@dataclass(frozen=True)
class Folds:
    """Pooled out-of-sample scores: one entry per test row."""

    rows: np.ndarray  # row indices into the feature frame
    fold: np.ndarray  # fold number of each test row
    decision: np.ndarray  # True on the first prediction time of each fold (weekly drain)
    scores: dict[str, np.ndarray]
    origins: tuple[pd.Timestamp, ...]
    hazard: object  # the last fold's hazard (for reference only)


def origins(times: np.ndarray, end_us: int, horizon_h: float, cal_h: float,
            min_train_h: float) -> list[int]:
    """Weekly origins: the first leaves ``min_train_h`` of outcome-closed training rows."""
    h, c, w = (int(x * US_PER_H) for x in (horizon_h, cal_h, WEEK_H))
    first = int(times.min()) + int(min_train_h * US_PER_H) + h + c + h
    out, o = [], first
    while o + max(h, w) <= end_us:
        out.append(o)
        o += w
    return out


def lemon_scores(signals: pd.DataFrame, interruptions: pd.DataFrame, events: Events,
                 at_us: int) -> np.ndarray:
    """Lemon multi-signal score of every unit from the data strictly before ``at_us``."""
    from reliab.errors import InsufficientDataError
    from reliab.models.lemons import find_lemons

    cut = pd.Timestamp(at_us * 1000, tz="UTC")
    hours = pd.Series(np.maximum(at_us - np.minimum(events.first_seen, at_us), 0) / US_PER_H,
                      index=list(events.units))
    try:
        with np.errstate(divide="ignore", invalid="ignore"):  # nodes not yet in service: 0 h
            res = find_lemons(signals[signals["time"] < cut],
                              interruptions[interruptions["time"] < cut], node_hours=hours,
                              anomaly=False)
    except (InsufficientDataError, ValueError):
        return np.zeros(len(events.units))
    return res.table.set_index("host")["score"].reindex(list(events.units)).fillna(0).to_numpy(float)


def fold_rows(t: np.ndarray, end_us: int, *, horizon_h: float, cal_h: float = WEEK_H,
              min_train_h: float = WEEK_H) -> list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Every usable fold: number, origin (µs) and the train, calibration and test rows.

    Raises
    ------
    InsufficientDataError
        When no fold has rows in all three parts.
    """
    h = int(horizon_h * US_PER_H)
    out = []
    for i, o in enumerate(origins(np.unique(t), end_us, horizon_h, cal_h, min_train_h)):
        c0 = o - h - int(cal_h * US_PER_H)
        train = np.flatnonzero(t + h <= c0)
        cal = np.flatnonzero((t >= c0) & (t + h <= o))
        test = np.flatnonzero((t >= o) & (t < o + int(WEEK_H * US_PER_H))
                              & (t + max(h, int(WEEK_H * US_PER_H)) <= end_us))
        if len(test) and len(train) and len(cal):
            out.append((i, o, train, cal, test))
    if not out:
        from reliab.errors import InsufficientDataError

        raise InsufficientDataError("no rolling-origin fold fits in the data: need at least "
                         f"{(min_train_h + 2 * horizon_h + cal_h + max(horizon_h, WEEK_H)) / 24:.0f} "
                         "days of logs")
    return out


def evaluate(frame: pd.DataFrame, y: np.ndarray, y1d: np.ndarray, events: Events,
             signals: pd.DataFrame, interruptions: pd.DataFrame, *, horizon_h: float,
             end_us: int, cal_h: float = WEEK_H, min_train_h: float = WEEK_H,
             seed: int = 0, pool: Executor | None = None) -> Folds:
    """Fit and score every fold; return the pooled out-of-sample scores.

    With ``pool``, the folds' boosted trees are fitted on its threads while this one fits
    the hazards and scores the baselines (each fit is independent and seeded: the scores are
    the same either way).
    """
    t = _us(frame["time"])
    cols = feature_columns(frame)
    plans = []
    for i, o, train, cal, test in fold_rows(t, end_us, horizon_h=horizon_h, cal_h=cal_h,
                                            min_train_h=min_train_h):
        args = (frame.iloc[train], y[train], frame.iloc[cal], y[cal], cols, seed)
        fit: Future[Boosted] | Boosted = (pool.submit(fit_boosted, *args) if pool is not None
                                          else fit_boosted(*args))
        plans.append((i, o, test, fit))
    rows, fold, dec = [], [], []
    scores: dict[str, list[np.ndarray]] = {m: [] for m in (*MODELS, *BASELINES)}
    hazard = None
    for i, o, test, fit in plans:
        past = np.flatnonzero(t + int(24 * US_PER_H) <= o)
        hazard = fit_hazard(frame.iloc[past], y1d[past])
        te = frame.iloc[test]
        scores["hazard"].append(hazard.probability(te, horizon_h))
        scores["lemon"].append(lemon_scores(signals, interruptions, events, o)[
            te["unit_index"].to_numpy()])
        scores["correctable_7d"].append(correctable_7d(te))
        scores["past_rate"].append(past_rate(te))
        boosted = fit.result() if isinstance(fit, Future) else fit
        scores["boosted"].append(boosted.probability(te))
        rows.append(test)
        fold.append(np.full(len(test), i))
        dec.append(t[test] == t[test].min())
    return Folds(np.concatenate(rows), np.concatenate(fold), np.concatenate(dec),
                 {m: np.concatenate(v) for m, v in scores.items()},
                 tuple(pd.Timestamp(o * 1000, tz="UTC") for o in
                       origins(np.unique(t), end_us, horizon_h, cal_h, min_train_h)), hazard)
