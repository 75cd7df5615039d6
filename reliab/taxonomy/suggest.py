"""Suggest categories for incident tickets that no rule matched — never applied silently.

Rules come first (``rules.csv``).  Tickets the rules leave unmatched get a *suggested*
category from a text classifier trained on the tickets the rules did label: TF-IDF word
and bigram features with a multinomial logistic regression (scikit-learn; Manning,
Raghavan & Schütze 2008, ch. 6 and 13).  Its stratified k-fold cross-validated accuracy is
reported beside the majority-class baseline, so a reader can judge the suggestions.  The
classifier learns from rule labels, so its accuracy measures agreement with the rules'
vocabulary on held-out tickets, not truth.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import ResultMixin, new_figure
from reliab.errors import InsufficientDataError


@dataclass(frozen=True)
class TicketSuggestions(ResultMixin):
    """Suggested categories for unmatched tickets, with the classifier's validation.

    ``table`` has one row per unmatched ticket: ``time``, ``host``, ``job_id``, ``message``,
    ``origin``, ``suggested_category``, ``probability``.  Nothing here changes any
    classification; a user applies a suggestion by writing a rule.
    """

    table: pd.DataFrame = field(repr=False)
    cv_accuracy: float
    cv_accuracy_std: float
    baseline_accuracy: float
    cv_folds: int
    n_labelled: int
    n_unlabelled: int
    classes: tuple[str, ...]
    method: str = "TF-IDF (1-2 grams) + logistic regression; stratified k-fold CV"
    notes: tuple[str, ...] = ()
    model: object = field(default=None, repr=False, compare=False)
    conf_level: None = None  # no interval: the cross-validated accuracy is reported with its sd

    @property
    def n(self) -> int:
        """Tickets considered: labelled by a rule plus unmatched."""
        return self.n_labelled + self.n_unlabelled

    def summary(self) -> pd.DataFrame:
        """One row per unmatched ticket with its suggested category and probability."""
        return self.table.copy()

    def plot(self, ax: Any = None) -> Any:
        """Unmatched tickets per suggested category, beside the validation accuracy."""
        fig, ax = new_figure(ax, (6, 0.3 * max(len(self.classes), 3) + 1.5))
        counts = self.table["suggested_category"].astype(str).value_counts().sort_values()
        ax.barh(counts.index, counts.to_numpy(), color="#4c78a8")
        ax.set_xlabel("unmatched tickets")
        ax.set_title(f"Suggested categories (CV accuracy {self.cv_accuracy:.2f} vs "
                     f"baseline {self.baseline_accuracy:.2f})")
        return fig


def _labelled(tickets: pd.DataFrame, rules) -> pd.DataFrame:
    from reliab.errors import UnclassifiedSignalsWarning
    from reliab.taxonomy import classify

    if not len(tickets):
        return tickets.assign(category=pd.Series(dtype="string"), rule_id=pd.Series(dtype="string"))
    with warnings.catch_warnings():  # unmatched tickets are exactly what this module handles
        warnings.simplefilter("ignore", UnclassifiedSignalsWarning)
        return classify(tickets, rules=rules)


def suggest_ticket_categories(signals: pd.DataFrame, *, rules=None, min_per_class: int = 3, cv: int = 5,
                              seed: int = 0) -> TicketSuggestions:
    """Train on rule-labelled tickets and suggest categories for the unmatched ones.

    Parameters
    ----------
    signals : DataFrame
        Canonical signals; rows whose key starts with ``ticket:`` are used.
    rules : Rules or path, optional
        Taxonomy rules (default: the shipped ones).
    min_per_class : int
        Categories with fewer labelled tickets are left out of training (noted).
    cv : int
        Folds of the stratified cross-validation (reduced to the smallest class size).

    Raises
    ------
    InsufficientDataError
        With fewer than two trainable categories.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    tickets = signals[signals["signal"].astype("string").str.startswith("ticket:").fillna(False)]
    classified = _labelled(tickets, rules)
    matched = classified["rule_id"].notna() & (classified["category"] != "Unclassified")
    train, todo = classified[matched], classified[~matched]
    counts = train["category"].value_counts()
    keep = counts[counts >= min_per_class].index
    notes = [f"left out of training (< {min_per_class} tickets): {', '.join(sorted(set(counts.index) - set(keep)))}"] \
        if len(keep) < len(counts) else []
    train = train[train["category"].isin(keep)]
    if len(keep) < 2:
        raise InsufficientDataError(f"{len(train)} rule-labelled ticket(s) in {len(keep)} category(ies); need 2+ categories")
    text, y = train["message"].fillna("").astype(str).to_numpy(), train["category"].astype(str).to_numpy()
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                          LogisticRegression(max_iter=2000, C=10.0))
    folds = int(min(cv, counts[keep].min()))
    scores = cross_val_score(model, text, y, cv=StratifiedKFold(folds, shuffle=True, random_state=seed)) \
        if folds >= 2 else np.array([np.nan])
    model.fit(text, y)
    table = todo[["time", "host", "job_id", "message", "origin"]].copy()
    if len(todo):
        proba = model.predict_proba(todo["message"].fillna("").astype(str).to_numpy())
        table["suggested_category"] = model.classes_[proba.argmax(axis=1)]
        table["probability"] = proba.max(axis=1)
    else:
        table["suggested_category"], table["probability"] = pd.Series(dtype="string"), pd.Series(dtype=float)
    return TicketSuggestions(
        table=table.reset_index(drop=True), cv_accuracy=float(np.mean(scores)), cv_accuracy_std=float(np.std(scores)),
        baseline_accuracy=float(counts[keep].max() / counts[keep].sum()), cv_folds=folds, n_labelled=len(train),
        n_unlabelled=len(todo), classes=tuple(model.classes_), notes=tuple(notes), model=model)
