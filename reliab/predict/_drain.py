"""Drain the top-k nodes each week: what it would have avoided, and what it costs.

Replayed on the observed logs at every weekly decision of the rolling evaluation: the ``k``
highest-risk nodes (out-of-sample scores) are drained for the next 7 days.  The hardware
interruptions those nodes caused in that week did not happen (avoided), saving their
observed lost GPU-hours (the ``lost_gpu_hours`` of each interruption as ingested; where it
is missing, the median of the others); the drains cost ``k × GPUs per node × 168 h`` of
capacity.  The replay assumes a drained node is replaced at once by a healthy spare and
that the interruption does not move to another node — an upper bound on the saving, as the
lemon-removal replay of Kokolis et al. (HPCA 2025, arXiv 2410.21680).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.predict._evaluate import WEEK_H
from reliab.predict._features import US_PER_H, Events, _us


def drain_curve(frame: pd.DataFrame, decision_rows: np.ndarray, scores: dict[str, np.ndarray],
                decision_mask: np.ndarray, events: Events, ks: tuple[int, ...],
                gpus_per_node: int) -> pd.DataFrame:
    """One row per (model, k): interruptions avoided, GPU-hours saved, capacity lost."""
    fu, ft, lost = events.failures
    fill = float(np.nanmedian(lost)) if np.isfinite(lost).any() else 0.0
    lost = np.where(np.isfinite(lost), lost, fill)
    rows_dec = decision_rows[decision_mask]
    t = _us(frame["time"].iloc[rows_dec])
    unit = frame["unit_index"].to_numpy()[rows_dec]
    week = int(WEEK_H * US_PER_H)
    out = []
    for name, s_all in scores.items():
        s = s_all[decision_mask]
        for k in ks:
            avoided = saved = 0.0
            for d in np.unique(t):
                g = np.flatnonzero(t == d)
                top = unit[g[np.argsort(-s[g], kind="stable")[:k]]]
                hit = np.isin(fu, top) & (ft >= d) & (ft < d + week)
                avoided += float(hit.sum())
                saved += float(lost[hit].sum())
            weeks = len(np.unique(t))
            out.append({"model": name, "k": int(k), "weeks": weeks,
                        "interruptions_avoided": avoided, "gpu_hours_saved": saved,
                        "capacity_gpu_hours": float(k * gpus_per_node * WEEK_H * weeks),
                        "net_gpu_hours": saved - k * gpus_per_node * WEEK_H * weeks})
    return pd.DataFrame(out)


def replay_drains(frame: pd.DataFrame, decision_rows: np.ndarray, scores: dict[str, np.ndarray],
                  decision_mask: np.ndarray, ks: tuple[int, ...], signals: pd.DataFrame,
                  interruptions: pd.DataFrame, jobs: pd.DataFrame,
                  models: tuple[str, ...] = ("boosted", "hazard", "lemon")) -> pd.DataFrame:
    """The same weekly drains through the mitigation replay of the run's allocations.

    :func:`reliab.replay_mitigations` merges the running times around every avoided
    interruption (GPU and host components only) and reports the run's ETTR and saved
    GPU-hours; one scenario per (model, k).
    """
    from reliab.models import failure_cost, replay_mitigations
    from reliab.models.jobs import Scenario

    cost = failure_cost(interruptions, jobs, signals)
    rows = frame.iloc[decision_rows[decision_mask]]
    when = pd.to_datetime(rows["time"], utc=True).to_numpy()
    units = rows["unit"].to_numpy()
    scen = []
    for name in models:
        s = scores[name][decision_mask]
        for k in ks:
            windows = []
            for d in np.unique(when):
                g = np.flatnonzero(when == d)
                top = g[np.argsort(-s[g], kind="stable")[:k]]
                start = pd.Timestamp(d).tz_localize("UTC") if pd.Timestamp(d).tzinfo is None \
                    else pd.Timestamp(d)
                windows += [(str(units[i]), start, start + pd.Timedelta(hours=WEEK_H)) for i in top]
            scen.append(Scenario(f"{name}|{k}", drain_windows=tuple(windows)))
    table = replay_mitigations(cost, scenarios=scen).table
    table = table[table["scenario"].str.contains("|", regex=False)]
    split = table["scenario"].str.split("|", expand=True)
    return pd.DataFrame({"model": split[0].to_numpy(), "k": split[1].astype(int).to_numpy(),
                         "interruptions": table["interruptions"].to_numpy(),
                         "ettr": table["ettr"].to_numpy(),
                         "ettr_change_pp": table["ettr_change_pp"].to_numpy(),
                         "saved_gpu_hours": table["saved_gpu_hours"].to_numpy()})
