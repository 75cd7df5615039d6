"""Model formulas with categorical covariates: ``"C(cage) + C(node) + row"`` -> a design matrix.

A formula is terms joined by ``+``.  ``C(name)`` is a categorical covariate, dummy-coded
against a reference level (treatment contrasts): one 0/1 column per other level, named
``name[T.level]`` as R's ``model.matrix`` and patsy name them, so a hazard ratio reads
"level against the reference".  A bare ``name`` is numeric if its column is numeric, and
categorical otherwise (a text column cannot enter a model as a number).  The reference
level is the one given in ``reference={"name": level}``, else the first level in sorted
order — R's and patsy's default, so names and estimates agree with theirs.  Missing values
in a formula column are an error (naming the column and the count), never a silent drop.

References
----------
Chambers & Hastie (1992), *Statistical Models in S*, ch. 2 (formulas and treatment contrasts);
Therneau & Grambsch (2000), *Modeling Survival Data*, §3.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

_TERM = re.compile(r"^(?:C\(\s*(?P<cat>[A-Za-z_][\w.]*)\s*\)|(?P<name>[A-Za-z_][\w.]*))$")


@dataclass(frozen=True)
class Term:
    """One term of a formula: a column and whether it is categorical."""

    name: str
    categorical: bool


@dataclass(frozen=True)
class Design:
    """A design matrix and how it was coded."""

    matrix: pd.DataFrame
    terms: tuple[Term, ...]
    references: dict[str, str]
    levels: dict[str, tuple[str, ...]]

    def notes(self) -> tuple[str, ...]:
        """One line per categorical term: its reference level and level count."""
        return tuple(f"{t}: reference level {ref!r} (hazard ratios of the other "
                     f"{len(self.levels[t]) - 1} level(s) are against it)"
                     for t, ref in self.references.items())


def parse_formula(formula: str) -> tuple[Term, ...]:
    """The terms of ``formula`` (``C(x)`` categorical, a bare name as its column says).

    Raises
    ------
    ValueError
        On an empty formula or a term that is neither ``name`` nor ``C(name)``.
    """
    text = formula.split("~", 1)[1] if "~" in formula else formula
    parts = [p.strip() for p in text.split("+")]
    if not any(parts):
        raise ValueError("empty formula; write terms such as 'C(cage) + row'")
    terms = []
    for part in parts:
        m = _TERM.match(part)
        if m is None:
            raise ValueError(f"formula term {part!r} is not a column name or C(column)")
        terms.append(Term(m["cat"] or m["name"], m["cat"] is not None))
    names = [t.name for t in terms]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"formula names {dup} twice")
    return tuple(terms)


def _level_text(s: pd.Series) -> pd.Series:
    return s.astype(object).map(str)


def design_matrix(df: pd.DataFrame, formula: str,
                  reference: Mapping[str, object] | None = None) -> Design:
    """Dummy-coded design matrix of ``formula`` on ``df`` (module docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        The data; every formula column must be present and without missing values.
    formula : str
        ``"C(cage) + C(node) + row"``; an optional left side ``"... ~"`` is ignored.
    reference : mapping, optional
        Reference level per categorical column (compared as text), e.g. ``{"cage": "c0"}``.

    Returns
    -------
    Design
        ``matrix`` (float columns ``x`` or ``x[T.level]``), ``references``, ``levels``.

    Raises
    ------
    ValueError
        A missing column, missing values, a single-level factor, or an unknown reference.
    """
    reference = dict(reference or {})
    terms = parse_formula(formula)
    missing = [t.name for t in terms if t.name not in df.columns]
    if missing:
        raise ValueError(f"formula column(s) {missing} not in the data (columns: {list(df.columns)})")
    unused = sorted(set(reference) - {t.name for t in terms})
    if unused:
        raise ValueError(f"reference given for {unused}, which the formula does not name")
    cols: dict[str, np.ndarray] = {}
    refs: dict[str, str] = {}
    levels: dict[str, tuple[str, ...]] = {}
    out_terms = []
    for term in terms:
        s = df[term.name]
        if s.isna().any():
            raise ValueError(f"column {term.name!r} has {int(s.isna().sum())} missing value(s); "
                             "drop or fill those rows first")
        categorical = term.categorical or not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s)
        out_terms.append(Term(term.name, categorical))
        if not categorical:
            cols[term.name] = s.to_numpy(dtype=float)
            continue
        text = _level_text(s)
        lv = tuple(sorted(text.unique()))
        if len(lv) < 2:
            raise ValueError(f"C({term.name}) has a single level {lv!r}: nothing to compare")
        ref = str(reference.get(term.name, lv[0]))
        if ref not in lv:
            raise ValueError(f"reference level {ref!r} of {term.name!r} is not among its levels {list(lv)}")
        refs[term.name], levels[term.name] = ref, lv
        values = text.to_numpy()
        for level in lv:
            if level != ref:
                cols[f"{term.name}[T.{level}]"] = (values == level).astype(float)
    return Design(matrix=pd.DataFrame(cols, index=df.index), terms=tuple(out_terms),
                  references=refs, levels=levels)


__all__ = ["Design", "Term", "design_matrix", "parse_formula"]
