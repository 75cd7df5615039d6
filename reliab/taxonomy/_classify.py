"""Map signals to taxonomy categories (:func:`classify`) and say why (:func:`explain`).

The first rule in match order whose signal pattern fully matches the signal key and whose
message pattern (if any) is found in the message wins. Evaluation is vectorized over the
unique signal keys: each key is matched against the rule patterns once, and message patterns
are evaluated only for the rows of keys whose first candidate rule needs one, and then only on
the unique messages of those rows.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from reliab.errors import UnclassifiedSignalsWarning
from reliab.taxonomy._rules import Rules, as_rules

#: Columns that :func:`classify` adds (or overwrites).
TAXONOMY_COLUMNS: tuple[str, ...] = (
    "category", "component", "planned", "priority", "root_cause", "rule_id",
)
_UNMATCHED = -1
_TOP_UNMATCHED = 5
#: From this many distinct messages on, message patterns run in polars (Rust regex).
_POLARS_MIN = 20_000


def _message_rows(
    rules: Rules, candidates: list[int], messages: np.ndarray
) -> np.ndarray:
    """Winning rule position for each message, given the candidate rules of one key."""
    out = np.full(len(messages), _UNMATCHED, dtype=np.int64)
    codes, uniques = pd.factorize(messages, use_na_sentinel=True)
    winner = np.full(len(uniques) + 1, _UNMATCHED, dtype=np.int64)  # last slot: NA message
    open_ = np.arange(len(uniques))  # unique non-NA messages without a winner yet
    has_na = bool((codes < 0).any())
    for pos in candidates:
        rx = rules.message_pattern(pos)
        if rx is None:
            winner[open_] = pos
            winner[-1] = pos  # a NA message matches only rules without a message pattern
            break
        hit = _search(rx, uniques[open_])
        winner[open_[hit]] = pos
        open_ = open_[~hit]
        if not len(open_) and not has_na:
            break
    out[:] = winner[codes]  # code -1 (NA) indexes the last slot
    return out


def _search(rx: Any, texts: np.ndarray) -> np.ndarray:
    """Boolean mask: ``rx.search`` finds the pattern in each text (polars for large sets)."""
    if len(texts) >= _POLARS_MIN:
        try:
            import polars as pl

            flags = "(?i)" if getattr(rx, "flags", 0) & re.IGNORECASE else ""  # RE2: inline (?i)
            found = pl.Series(texts, dtype=pl.String).str.contains(flags + rx.pattern)
            return found.fill_null(False).to_numpy().astype(bool)
        except Exception:  # a pattern the Rust regex engine rejects: use Python's re
            pass
    return np.fromiter((rx.search(m) is not None for m in texts), bool, len(texts))


def rule_positions(rules: Rules, keys: pd.Series, messages: pd.Series | None) -> np.ndarray:
    """Position (in match order) of the winning rule per row; ``-1`` where none matches."""
    codes, uniques = pd.factorize(keys.to_numpy(dtype=object, na_value=None))
    per_key = np.full(len(uniques) + 1, _UNMATCHED, dtype=np.int64)
    out = np.empty(len(codes), dtype=np.int64)
    needs_message: list[tuple[int, list[int]]] = []
    for j, key in enumerate(uniques):
        candidates = rules.matching(str(key))
        if candidates and rules.message_pattern(candidates[0]) is not None:
            needs_message.append((j, candidates))
        elif candidates:
            per_key[j] = candidates[0]
    out[:] = per_key[codes]
    if needs_message:
        msg = (np.full(len(codes), None, dtype=object) if messages is None
               else messages.to_numpy(dtype=object, na_value=None))
        for j, candidates in needs_message:
            rows = np.flatnonzero(codes == j)
            out[rows] = _message_rows(rules, candidates, msg[rows])
    return out


def taxonomy_columns(rules: Rules, positions: np.ndarray) -> dict[str, pd.Series | Any]:
    """The taxonomy columns for rows whose winning rule positions are ``positions``."""
    t = rules.table
    idx = np.where(positions < 0, len(t), positions)

    def take(col: str, fill: Any) -> np.ndarray:
        return np.append(t[col].to_numpy(dtype=object), fill)[idx]

    return {
        "category": pd.array(take("category", "Unclassified"), dtype="string"),
        "component": pd.array(take("component", "Unknown"), dtype="string"),
        "planned": take("planned", False).astype(bool),
        "priority": pd.array(take("priority", pd.NA), dtype="Int64"),
        "root_cause": take("root_cause", False).astype(bool),
        "rule_id": pd.array(take("id", pd.NA), dtype="string"),
    }


def warn_unmatched(keys: pd.Series, positions: np.ndarray, stacklevel: int) -> None:
    miss = positions < 0
    if not miss.any():
        return
    counts = keys[miss].value_counts(dropna=False)
    top = ", ".join(f"{k} ({n})" for k, n in counts.head(_TOP_UNMATCHED).items())
    more = f" and {len(counts) - _TOP_UNMATCHED} more key(s)" if len(counts) > _TOP_UNMATCHED else ""
    warnings.warn(
        f"{int(miss.sum())} of {len(keys)} signal(s) matched no taxonomy rule and are "
        f"'Unclassified'; top keys: {top}{more}. Add rules with load_rules(path).",
        UnclassifiedSignalsWarning, stacklevel=stacklevel + 1,
    )


def classify(
    signals: pd.DataFrame, rules: Rules | str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Add taxonomy columns to a signals table.

    Parameters
    ----------
    signals : pandas.DataFrame
        Needs a ``signal`` column (normalized key such as ``xid:79``); ``message`` is used
        when present (schema ``signals``).
    rules : Rules, path or None
        Rules from :func:`load_rules`, a user rules file, or ``None`` for the shipped rules.

    Returns
    -------
    pandas.DataFrame
        A copy of ``signals`` with ``category``, ``component`` (string), ``planned`` (bool),
        ``priority`` (Int64), ``root_cause`` (bool) and ``rule_id`` (string). The first rule
        in match order wins. Unmatched signals get ``Unclassified``/``Unknown``,
        ``root_cause`` False, ``priority`` and ``rule_id`` NA.

    Warns
    -----
    reliab.errors.UnclassifiedSignalsWarning
        Once, listing the most frequent unmatched keys with their counts.

    Notes
    -----
    Categories follow Llama 3 Table 5 (arXiv 2407.21783); Xid rows follow the NVIDIA Xid
    catalog (docs.nvidia.com/deploy/xid-errors).
    """
    if "signal" not in signals.columns:
        raise ValueError("signals needs a 'signal' column (schema 'signals')")
    rules = as_rules(rules)
    keys = signals["signal"]
    positions = rule_positions(rules, keys, signals.get("message"))
    out = signals.drop(columns=[c for c in TAXONOMY_COLUMNS if c in signals.columns])
    for name, values in taxonomy_columns(rules, positions).items():
        out[name] = values
    warn_unmatched(keys, positions, stacklevel=2)
    return out


def classify_failures(failures: pd.DataFrame, signals: pd.DataFrame,
                      rules: Rules | str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Failure records (schema ``failures``) with the ``category`` and ``component`` of their signals.

    A reader that files failure records gives each one also as a signal read from the same
    line (the same ``origin``, ``file:line``); a record without a category takes the classes
    :func:`classify` gives that signal, so a failure and its signal are counted under one
    category.  Records whose line gave no signal keep theirs empty.  Unmatched keys are not
    warned about here: the signals' own classification counts them.

    Parameters
    ----------
    failures : pandas.DataFrame
        Schema ``failures`` (e.g. ``read_lanl_signals(path).tables["failures"]``).
    signals : pandas.DataFrame
        The signals read with them (schema ``signals``: ``signal``, ``message``, ``origin``).
    rules : Rules, path or None
        As for :func:`classify` (``None``: the shipped rules).

    Returns
    -------
    pandas.DataFrame
        A copy of ``failures`` with ``category`` and ``component`` filled where they were empty.
    """
    todo = failures["category"].isna().to_numpy(dtype=bool) if len(failures) else np.zeros(0, dtype=bool)
    if not todo.any():
        return failures
    mine = signals.loc[signals["origin"].isin(failures["origin"]).to_numpy(dtype=bool), ["signal", "message", "origin"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnclassifiedSignalsWarning)
        classes = classify(mine.reset_index(drop=True), rules).drop_duplicates("origin").set_index("origin")
    out = failures.copy()
    for name in ("category", "component"):
        found = out["origin"].map(classes[name]).astype("string")
        out[name] = out[name].astype("string").where(~todo, found)
    return out


@dataclass(frozen=True)
class Explanation:
    """Why a signal (and message) gets its category.

    Attributes
    ----------
    signal, message : str, str or None
        What was explained.
    rule_id : str or None
        The winning rule, ``None`` when no rule matches.
    category, component : str
        The result (``Unclassified``/``Unknown`` when no rule matches).
    planned, root_cause : bool
    priority : int or None
    matched : tuple of str
        Every rule that matches, in match order (the first wins).
    key_only : tuple of str
        Rules whose signal pattern matches but whose message pattern does not.
    rule : Mapping
        The winning rule row (empty when no rule matches).
    """

    signal: str
    message: str | None
    rule_id: str | None
    category: str
    component: str
    planned: bool
    root_cause: bool
    priority: int | None
    matched: tuple[str, ...]
    key_only: tuple[str, ...]
    rule: Mapping[str, Any]
    catalog: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __str__(self) -> str:
        text = f"Signal {self.signal!r}" + (f" with message {self.message!r}" if self.message else "")
        if self.rule_id is None:
            text += " matches no taxonomy rule, so it is 'Unclassified' (component 'Unknown')."
        else:
            why = "its signal pattern" + (f" {self.rule['signal']!r} fully matches the key")
            if self.rule["message"]:
                why += f" and its message pattern {self.rule['message']!r} is found in the message"
            text += (f" is classified '{self.category}' (component '{self.component}') by rule "
                     f"{self.rule_id!r} ({self.rule['origin']}): {why}.")
            text += (" It counts as planned." if self.planned else "")
            text += (f" As a root cause it has priority {self.priority} (higher wins)."
                     if self.root_cause else
                     " It is never a root cause: it is secondary evidence or a job state.")
            if self.rule["note"]:
                text += f" Note: {self.rule['note']}."
            if len(self.matched) > 1:
                text += f" Later matching rules, not used: {', '.join(self.matched[1:])}."
        if self.key_only:
            text += (f" Rules matching the key but not the message: {', '.join(self.key_only)}.")
        if self.catalog:
            c = self.catalog
            action = " / ".join(a for a in (c["immediate_action"], c["investigatory_action"]) if a) or "none listed"
            text += (f" NVIDIA catalog: Xid {c['xid']} {c['mnemonic']} — {c['description']}; "
                     f"resolution {action}; cause flags {c['r555_cause_flags'] or 'none listed'}; "
                     f"reliab maps it to '{c['category']}' with confidence {c['confidence']}.")
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of every field."""
        return {
            "signal": self.signal, "message": self.message, "rule_id": self.rule_id,
            "category": self.category, "component": self.component,
            "planned": self.planned, "root_cause": self.root_cause, "priority": self.priority,
            "matched": list(self.matched), "key_only": list(self.key_only),
            "rule": dict(self.rule), "catalog": dict(self.catalog),
        }


def _plain(value: Any) -> Any:
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def explain(
    signal: str, message: str | None = None,
    rules: Rules | str | os.PathLike[str] | None = None,
) -> Explanation:
    """Explain which rule classifies ``signal`` (with ``message``) and why.

    Parameters
    ----------
    signal : str
        Normalized signal key, e.g. ``"xid:79"``.
    message : str, optional
        Free text of the evidence; rules with a message pattern match only if it is found.
    rules : Rules, path or None
        As for :func:`classify`.

    Returns
    -------
    Explanation
        Frozen; ``str()`` is a readable paragraph, ``to_dict()`` is JSON-safe.
    """
    from reliab.taxonomy.xid import catalog_entry

    rules = as_rules(rules)
    catalog = MappingProxyType(catalog_entry(signal) or {})
    by_key = rules.matching(signal)
    matched = [p for p in by_key if rules.message_matches(p, message)]
    ids = rules.table["id"]
    key_only = tuple(str(ids.iloc[p]) for p in by_key if p not in matched)
    if not matched:
        return Explanation(signal, message, None, "Unclassified", "Unknown", False, False,
                           None, (), key_only, MappingProxyType({}), catalog)
    row = {k: _plain(v) for k, v in rules.table.iloc[matched[0]].items()}
    return Explanation(
        signal, message, row["id"], row["category"], row["component"], row["planned"],
        row["root_cause"], row["priority"], tuple(str(ids.iloc[p]) for p in matched),
        key_only, MappingProxyType(row), catalog,
    )


__all__ = ["classify", "classify_failures", "explain", "Explanation", "TAXONOMY_COLUMNS", "rule_positions",
           "taxonomy_columns", "warn_unmatched"]
