"""``reliab.predict_failures``: features → rolling evaluation → metrics → risk table."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from reliab.errors import InsufficientDataError
from reliab.predict._drain import drain_curve, replay_drains
from reliab.predict._evaluate import BASELINES, WEEK_H, evaluate, fold_rows
from reliab.predict._features import (
    FAMILIES,
    US_PER_H,
    _us,
    build_features,
    collect_events,
    feature_columns,
    label,
)
from reliab.predict._metrics import at_k, calibration, score_metrics, unit_weights
from reliab.predict._models import Boosted, fit_boosted, fit_hazard
from reliab.predict._result import FailureRiskResult

PROBABILISTIC = ("boosted", "hazard")
#: threads fitting the boosted trees (each fit on one OpenMP thread, see ``fit_boosted``)
FIT_THREADS = max(1, min(2, os.cpu_count() or 1))


def _hours(value: str | float | pd.Timedelta) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    return pd.Timedelta(value).total_seconds() / 3600.0


def _tables(data: Any) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    if isinstance(data, dict):
        return data["signals"], data["interruptions"], data.get("jobs"), data.get("telemetry")
    return data.signals, data.interruptions, getattr(data, "jobs", None), getattr(data, "telemetry", None)


def _gpus_per_node(jobs: pd.DataFrame | None) -> int:
    if jobs is None or not {"ngpus", "nnodes"} <= set(jobs.columns):
        return 8
    r = (jobs["ngpus"].astype("Float64") / jobs["nnodes"].astype("Float64")).dropna()
    return int(round(float(r.median()))) if len(r) else 8


def _top_signals(frame: pd.DataFrame, rr: pd.DataFrame) -> list[str]:
    """Precursor families seen in the last 30 days, largest rate ratio first: '7 d / 30 d'."""
    ratio = {t.split(" in last")[0]: v for t, v in zip(rr["term"], rr["rate_ratio"], strict=True)}
    fams = sorted((*FAMILIES, "interrupt"), key=lambda f: -ratio.get(f, 0.0))
    week = frame[[f"{f}_7d" for f in fams]].to_numpy()
    month = frame[[f"{f}_30d" for f in fams]].to_numpy()
    return ["; ".join(f"{f} {int(a)}/{int(b)}" for f, a, b in zip(fams, w, m, strict=True) if b > 0)
            for w, m in zip(week, month, strict=True)]


def predict_failures(data: Any, *, horizon: str | float = "7d", ks: tuple[int, ...] = (1, 2, 5, 10, 20),
                     n_boot: int = 200, conf_level: float = 0.95, seed: int = 0,
                     components: tuple[str, ...] = ("GPU", "Host", "Network")) -> FailureRiskResult:
    """Rank nodes by the risk of a hardware interruption within ``horizon``, evaluated honestly.

    Parameters
    ----------
    data : IngestResult or dict
        ``reliab.ingest`` output (or a dict) with ``signals``, ``interruptions`` and
        optionally ``jobs`` (whose node lists define the fleet and each node's exposure) and
        ``telemetry`` (GPU temperature and power aggregates per node,
        :mod:`reliab.predict._telemetry`; the boosted model uses them where present).
    horizon : str or float
        Prediction horizon (``"24h"``, ``"7d"``, or hours).
    ks : tuple of int
        Nodes drained per week for precision/recall at k and the drain curve.
    n_boot : int
        Bootstrap resamples of the nodes for every interval.
    conf_level : float
        Level of the intervals.
    seed : int
        Seed of the trees and of the bootstrap.
    components : tuple of str
        Components whose unplanned interruptions count as hardware failures of the named node.

    Returns
    -------
    FailureRiskResult
        Risk table at the end of the logs, out-of-sample metrics of both models and the three
        baselines (lemon score, any correctable error in 7 days, own past failure rate),
        precision/recall at k, calibration, rate ratios and the drain-k curve.

    Raises
    ------
    InsufficientDataError
        When the logs are too short for one rolling-origin fold, or hold no hardware failure.
    ValueError
        When ``horizon`` or ``conf_level`` is out of range.
    """
    if not 0 < conf_level < 1:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    horizon_h = _hours(horizon)
    if horizon_h <= 0:
        raise ValueError(f"horizon must be positive, got {horizon!r}")
    signals, interruptions, jobs, telemetry = _tables(data)
    events = collect_events(signals, interruptions, jobs, components=components, telemetry=telemetry)
    if not len(events.failures[1]):
        raise InsufficientDataError("no hardware interruption names a node: nothing to predict")
    stamps = [signals["time"].max(), interruptions["time"].max()]
    if jobs is not None and len(jobs):
        stamps.append(jobs["end"].max())
    end = max(pd.Timestamp(s) for s in stamps if pd.notna(s))
    start = pd.Timestamp(min(int(events.first_seen.min()), int(events.failures[1].min())) * 1000,
                         tz="UTC").floor("D")
    times = pd.date_range(start + pd.Timedelta(days=1), end, freq="D")
    frame = build_features(events, times)
    if "in_service" in frame:  # the risk set: nodes in a running allocation at T
        frame = frame[frame["in_service"].to_numpy() > 0].reset_index(drop=True)
    y = label(events, frame, horizon_h)
    y1d = label(events, frame, 24.0)
    y7d = label(events, frame, WEEK_H)
    end_us = int(_us(pd.Series([end]))[0])
    # the five boosted fits (four folds' and the final one) are independent and seeded: they
    # run on FIT_THREADS threads (the trees release the GIL) beside the rest of the work
    fold_rows(_us(frame["time"]), end_us, horizon_h=horizon_h)  # no fold: raise before fitting
    with ThreadPoolExecutor(max_workers=FIT_THREADS) as pool:
        final = pool.submit(_final_boosted, frame, y, end_us, horizon_h, seed)
        folds = evaluate(frame, y, y1d, events, signals, interruptions, horizon_h=horizon_h,
                         end_us=end_us, seed=seed, pool=pool)
        boosted = final.result()
    units = frame["unit_index"].to_numpy()[folds.rows]
    weights = unit_weights(units, n_boot, seed)
    yt, y7 = y[folds.rows], y7d[folds.rows]
    metrics, k_rows, cal = [], [], []
    for name, s in folds.scores.items():
        prob = name in PROBABILISTIC
        metrics += score_metrics(name, s, yt, units, weights, conf_level, probability=prob)
        d = folds.decision
        k_rows += at_k(name, s[d], y7[d], units[d], folds.fold[d], ks, weights, conf_level)
        if prob:
            cal.append(calibration(name, s, yt, units, weights, conf_level))
    drain = drain_curve(frame, folds.rows, folds.scores, folds.decision, events,
                        tuple(sorted({0, *ks})), _gpus_per_node(jobs))
    risk, rr = _final(frame, boosted, y1d, events, end, horizon_h, conf_level)
    replayed, why = pd.DataFrame(), ()
    if jobs is not None and len(jobs):
        try:
            replayed = replay_drains(frame, folds.rows, folds.scores, folds.decision,
                                     tuple(sorted({0, *ks})), signals, interruptions, jobs)
        except (InsufficientDataError, ValueError, KeyError) as exc:
            why = (f"mitigation replay of the drains not available: {exc}",)
    notes = why + (f"baselines: {', '.join(BASELINES)}; the lemon score is recomputed at each origin "
             "from the data before it",
             "risk intervals cover the calibration's uncertainty only (delta method), not the trees'",
             "drain replay: a drained node is replaced by a healthy spare; its interruptions in "
             "the week are avoided (upper bound)")
    return FailureRiskResult(
        risk=risk, metrics=pd.DataFrame(metrics), at_k=pd.DataFrame(k_rows),
        calibration=pd.concat(cal, ignore_index=True), rate_ratios=rr, drain=drain,
        drain_replay=replayed,
        horizon_h=horizon_h, n_units=len(events.units), n_rows=len(frame),
        n_test_rows=len(folds.rows), n_events=len(events.failures[1]),
        folds=int(len(np.unique(folds.fold))), n_boot=n_boot, predicted_at=end,
        conf_level=conf_level, notes=notes)


def _final_boosted(frame: pd.DataFrame, y: np.ndarray, end_us: int, horizon_h: float,
                   seed: int) -> Boosted:
    """Trees on every closed row but the last week's, Platt on the last week's."""
    t = _us(frame["time"])
    h = int(horizon_h * US_PER_H)
    closed = t + h <= end_us
    c0 = end_us - h - int(WEEK_H * US_PER_H)
    train, cal = np.flatnonzero(closed & (t + h <= c0)), np.flatnonzero(closed & (t + h > c0))
    if not len(train) or not len(cal):
        train = cal = np.flatnonzero(closed)
    return fit_boosted(frame.iloc[train], y[train], frame.iloc[cal], y[cal],
                       feature_columns(frame), seed)


def _final(frame: pd.DataFrame, boosted: Boosted, y1d: np.ndarray, events: Any, end: pd.Timestamp,
           horizon_h: float, conf_level: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rank every node at the end of the logs: ``boosted`` from :func:`_final_boosted`, the
    hazard on every row whose next day closed."""
    t = _us(frame["time"])
    end_us = int(_us(pd.Series([end]))[0])
    day = np.flatnonzero(t + int(24 * US_PER_H) <= end_us)
    hazard = fit_hazard(frame.iloc[day], y1d[day])
    now = build_features(events, pd.DatetimeIndex([end]))
    raw = boosted.raw(now)
    prob = boosted.platt.probability(raw)
    lo, hi = boosted.platt.interval(raw, conf_level)
    rr = hazard.rate_ratios(conf_level)
    risk = pd.DataFrame({"unit": now["unit"], "probability": prob, "low": lo, "high": hi,
                         "hazard_probability": hazard.probability(now, horizon_h),
                         "top_signals": _top_signals(now, rr)})
    if "in_service" in now:
        risk["in_service"] = now["in_service"].to_numpy() > 0
    risk = risk.sort_values(["probability", "hazard_probability"], ascending=False,
                            kind="stable").reset_index(drop=True)
    risk.insert(0, "rank", np.arange(1, len(risk) + 1))
    return risk, rr
