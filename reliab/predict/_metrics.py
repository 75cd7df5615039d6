"""Ranking and calibration metrics with cluster-bootstrap intervals over units.

AUROC is the Mann–Whitney probability that a positive row outranks a negative one, ties
counted one half (Hanley & McNeil, Radiology 1982); AUPRC is average precision (step
interpolation, as scikit-learn's ``average_precision_score``); the Brier score is the mean
squared error of the probabilities (Brier, Monthly Weather Review 1950).  Intervals are
percentile intervals of a cluster bootstrap that resamples *units* (nodes) with replacement
(Davison & Hinkley, "Bootstrap Methods and their Application", 1997, §3.8): rows of one
node are correlated, so the node, not the row, is the independent draw.  A resample enters
every metric as integer weights per row, so the rows are sorted only once per score.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class Ranked:
    """Scores sorted once, ties grouped; weighted AUROC / AP / Brier for any row weights."""

    def __init__(self, score: np.ndarray, y: np.ndarray) -> None:
        order = np.argsort(-score, kind="stable")
        self.order, self.y = order, y[order].astype(np.float64)
        s = score[order]
        self.starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        self.score, self.y_raw = score, y.astype(np.float64)

    def _groups(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wo = w[self.order]
        pos = np.add.reduceat(wo * self.y, self.starts)
        allw = np.add.reduceat(wo, self.starts)
        return pos, allw - pos

    def auroc(self, w: np.ndarray) -> float:
        pos, neg = self._groups(w)
        p_tot, n_tot = pos.sum(), neg.sum()
        if p_tot <= 0 or n_tot <= 0:
            return float("nan")
        neg_below = n_tot - np.cumsum(neg)  # negatives scored strictly lower (descending order)
        return float((pos * (neg_below + 0.5 * neg)).sum() / (p_tot * n_tot))

    def auprc(self, w: np.ndarray) -> float:
        pos, neg = self._groups(w)
        p_tot = pos.sum()
        if p_tot <= 0:
            return float("nan")
        tp, allc = np.cumsum(pos), np.cumsum(pos + neg)
        prec = np.divide(tp, allc, out=np.zeros_like(tp), where=allc > 0)
        return float((pos / p_tot * prec).sum())

    def brier(self, w: np.ndarray) -> float:
        return float((w * (self.score - self.y_raw) ** 2).sum() / w.sum())


def unit_weights(units: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot × n_units`` multiplicities of a bootstrap resample of the units."""
    n = int(units.max()) + 1 if len(units) else 0
    present = np.unique(units)
    rng = np.random.default_rng(seed)
    w = np.zeros((n_boot, n), dtype=np.float64)
    for b in range(n_boot):
        draw = rng.choice(present, size=len(present), replace=True)
        w[b] = np.bincount(draw, minlength=n)
    return w


def _interval(values: list[float], conf_level: float) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return float("nan"), float("nan")
    a = (1 - conf_level) / 2
    return float(np.quantile(v, a)), float(np.quantile(v, 1 - a))


def score_metrics(name: str, score: np.ndarray, y: np.ndarray, units: np.ndarray,
                  weights: np.ndarray, conf_level: float, *, probability: bool) -> list[dict]:
    """AUROC, AUPRC (and Brier for probabilities) with their bootstrap intervals."""
    r = Ranked(score, y)
    ones = np.ones(len(y))
    rows = []
    funcs = {"auroc": r.auroc, "auprc": r.auprc}
    if probability:
        funcs["brier"] = r.brier
    for metric, f in funcs.items():
        boots = [f(wb[units]) for wb in weights]
        lo, hi = _interval(boots, conf_level)
        rows.append({"model": name, "metric": metric, "estimate": f(ones), "low": lo, "high": hi})
    return rows


def at_k(name: str, score: np.ndarray, y: np.ndarray, units: np.ndarray, week: np.ndarray,
         ks: tuple[int, ...], weights: np.ndarray, conf_level: float) -> list[dict]:
    """Precision, recall and lift of draining the top ``k`` units at each weekly decision.

    ``week`` labels the decision each row belongs to (one row per unit and decision);
    precision = failing units among the k drained / k, recall = failing units drained /
    failing units, both pooled over the decisions; lift = precision / share of units that
    fail.  Bootstrap: the decisions' rows are reweighted by the unit multiplicities and the
    top ``k`` taken among the resampled copies.
    """
    rows = []
    groups = [np.flatnonzero(week == w) for w in np.unique(week)]
    ranked = [g[np.argsort(-score[g], kind="stable")] for g in groups]
    for k in ks:
        def stats(w: np.ndarray, k: int = k) -> tuple[float, float, float]:
            hit = tot = drained = units_n = 0.0
            for g in ranked:
                mult = w[units[g]]
                cum = np.cumsum(mult)
                take = np.minimum(mult, np.maximum(k - (cum - mult), 0))
                hit += float((take * y[g]).sum())
                drained += float(take.sum())
                tot += float((mult * y[g]).sum())
                units_n += float(mult.sum())
            prec = hit / drained if drained else float("nan")
            rec = hit / tot if tot else float("nan")
            base = tot / units_n if units_n else float("nan")
            return prec, rec, prec / base if base else float("nan")

        est = stats(np.ones(weights.shape[1]))
        boots = np.array([stats(wb) for wb in weights])
        row = {"model": name, "k": int(k)}
        for j, m in enumerate(("precision", "recall", "lift")):
            lo, hi = _interval(list(boots[:, j]), conf_level)
            row.update({m: est[j], f"{m}_low": lo, f"{m}_high": hi})
        rows.append(row)
    return rows


def calibration(name: str, prob: np.ndarray, y: np.ndarray, units: np.ndarray,
                weights: np.ndarray, conf_level: float, bins: int = 10) -> pd.DataFrame:
    """Observed frequency against mean predicted probability in quantile bins."""
    edges = np.unique(np.quantile(prob, np.linspace(0, 1, bins + 1)))
    b = np.clip(np.searchsorted(edges, prob, side="right") - 1, 0, max(len(edges) - 2, 0))
    rows = []
    for j in np.unique(b):
        m = b == j
        boots = []
        for wb in weights:
            ww = wb[units[m]]
            boots.append(float((ww * y[m]).sum() / ww.sum()) if ww.sum() else float("nan"))
        lo, hi = _interval(boots, conf_level)
        rows.append({"model": name, "bin": int(j), "n": int(m.sum()),
                     "predicted": float(prob[m].mean()), "observed": float(y[m].mean()),
                     "low": lo, "high": hi})
    return pd.DataFrame(rows)
