"""Loading and validating taxonomy rules: the shipped ``rules.csv`` plus an optional user file.

A rule maps a normalized signal key (regex, full match) and, optionally, a message pattern
(regex, case-insensitive search) to a category of the vocabulary (Llama 3 Table 5 plus
``NVLink``, ``Planned`` and ``Unclassified``), its component class, whether the interruption
was planned, a ``priority`` used to pick a root cause among several pieces of evidence, and
whether the signal may be a root cause at all (``root_cause``; e.g. Xid 45 and 154 may not).

Rules are data: changing the taxonomy means editing a CSV row.
A user file overrides and extends the shipped rules: a user row with the id of a shipped row
replaces it, new ids are added, and every user row is tried before the shipped ones.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import pandas as pd

from reliab._contain import check_regular
from reliab.errors import InputFileError, Origin, ParseError
from reliab.schema import COMPONENTS
from reliab.taxonomy.vocabulary import COMPONENT_OF

#: The columns of a rules file, in order.
RULE_COLUMNS: tuple[str, ...] = (
    "id", "signal", "message", "category", "component", "planned", "priority", "root_cause",
    "confidence", "note",
)
_CONFIDENCE = ("H", "M", "L")
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_SHIPPED = "rules.csv"
#: largest user rules file read (the shipped one is ~40 KB)
MAX_RULES_BYTES = 4 << 20


def user_pattern(pattern: str, ignore_case: bool) -> Any:
    """A user's (untrusted) pattern compiled with RE2, whose matching time is linear in the
    text whatever the pattern (Cox, "Regular Expression Matching Can Be Simple And Fast",
    2007; github.com/google/re2/wiki/Syntax).

    ``(a+)+$`` cannot hang a run; what only a backtracking engine can do (backreferences
    such as ``\\1``, lookahead and lookbehind) is refused.  The result has ``search``,
    ``fullmatch`` and ``pattern`` (``(?i)`` in front for a case-insensitive one).

    Raises
    ------
    ValueError
        The pattern is not valid RE2 syntax.
    """
    import re2

    options = re2.Options()
    options.log_errors = False
    text = f"(?i){pattern}" if ignore_case else pattern
    try:
        return re2.compile(text, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(f"{reason}; user rules are matched in linear time (RE2): no backreferences,"
                         " lookahead or lookbehind") from None


@dataclass(frozen=True, eq=False)
class Rules:
    """An ordered, validated set of taxonomy rules.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per rule in match order (the first matching rule wins), with the columns of
        the rules file (``planned`` and ``root_cause`` as bool, ``priority`` as int64) and an
        ``origin`` column (``file:line`` the rule was read from).
    sources : tuple of str
        The files the rules were read from, user file first.
    """

    table: pd.DataFrame
    sources: tuple[str, ...]
    _signal_re: tuple[Any, ...] = field(repr=False)  # re.Pattern, or RE2 for a user's rows
    _message_re: tuple[Any | None, ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.table)

    def __repr__(self) -> str:
        return f"Rules({len(self)} rules from {', '.join(self.sources)})"

    @property
    def ids(self) -> tuple[str, ...]:
        """Rule ids in match order."""
        return tuple(self.table["id"])

    def position(self, rule_id: str) -> int:
        """Position of ``rule_id`` in match order; ``KeyError`` if absent."""
        try:
            return self.ids.index(rule_id)
        except ValueError:
            raise KeyError(f"no taxonomy rule with id {rule_id!r}") from None

    def matching(self, signal: str) -> list[int]:
        """Positions of the rules whose signal pattern fully matches ``signal``, in order."""
        return [i for i, rx in enumerate(self._signal_re) if rx.fullmatch(signal)]

    def message_pattern(self, position: int) -> Any | None:
        """Compiled message pattern of the rule at ``position`` (``None``: any message)."""
        return self._message_re[position]

    def message_matches(self, position: int, message: str | None) -> bool:
        """Whether the message pattern of the rule at ``position`` accepts ``message``."""
        rx = self._message_re[position]
        return rx is None or (message is not None and rx.search(message) is not None)


def _flag(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v in _TRUE else False if v in _FALSE else None


def _check_row(row: dict[str, str], user: bool = False) -> list[str]:
    """Every problem of one raw rules row (empty list if it is valid); a ``user`` row's
    patterns must compile with the linear-time engine (:func:`user_pattern`)."""
    problems = []
    if not _ID.fullmatch(row["id"]):
        problems.append(f"id {row['id']!r} is empty or not a plain identifier")
    for col, flags in (("signal", 0), ("message", re.IGNORECASE)):
        if col == "signal" and not row[col]:
            problems.append("signal pattern is empty")
            continue
        try:
            user_pattern(row[col], bool(flags)) if user else re.compile(row[col], flags)
        except (re.error, ValueError) as exc:
            problems.append(f"{col} pattern {row[col]!r} is not a valid regex ({exc})")
    category, component = row["category"], row["component"]
    if category not in COMPONENT_OF:
        problems.append(f"category {category!r} is not in the vocabulary "
                        f"({', '.join(sorted(COMPONENT_OF))})")
    elif component != COMPONENT_OF[category]:
        problems.append(f"component {component!r} does not match category {category!r} "
                        f"(expected {COMPONENT_OF[category]!r})")
    if component not in COMPONENTS:
        problems.append(f"component {component!r} is not one of {', '.join(COMPONENTS)}")
    for col in ("planned", "root_cause"):
        if _flag(row[col]) is None:
            problems.append(f"{col} {row[col]!r} is not true/false")
    try:
        int(row["priority"])
    except ValueError:
        problems.append(f"priority {row['priority']!r} is not an integer")
    if row["confidence"] not in _CONFIDENCE:
        problems.append(f"confidence {row['confidence']!r} is not one of H, M, L")
    return problems


def _read_rows(text: str, name: str, user: bool = False) -> tuple[list[dict[str, str]], list[tuple[Origin, str]]]:
    """Parse rules CSV text into raw rows (with ``origin``) and a list of problems."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != RULE_COLUMNS:
        got = "nothing" if header is None else ",".join(header)
        origin = Origin(name, 1, got[:80])
        return [], [(origin, f"header must be {','.join(RULE_COLUMNS)}")]
    rows: list[dict[str, str]] = []
    problems: list[tuple[Origin, str]] = []
    seen: dict[str, int] = {}
    start = reader.line_num + 1
    for values in reader:
        lineno, start = start, reader.line_num + 1
        if not values or all(not v.strip() for v in values):
            continue
        origin = Origin(name, lineno, ",".join(values))
        if len(values) != len(RULE_COLUMNS):
            problems.append((origin, f"expected {len(RULE_COLUMNS)} fields, got {len(values)}"))
            continue
        row = {c: v.strip() for c, v in zip(RULE_COLUMNS, values, strict=True)}
        problems.extend((origin, p) for p in _check_row(row, user))
        if row["id"] in seen:
            problems.append((origin, f"duplicate id {row['id']!r} (first on line {seen[row['id']]})"))
        seen.setdefault(row["id"], lineno)
        rows.append({**row, "origin": origin.ref})
    return rows, problems


def _raise(problems: list[tuple[Origin, str]]) -> None:
    if len(problems) == 1:
        origin, reason = problems[0]
        raise ParseError(f"invalid taxonomy rule: {reason}", origin)
    lines = [f"{len(problems)} problems in taxonomy rules:"]
    lines += [f"  {origin.ref}: {reason}" for origin, reason in problems]
    raise ParseError("\n".join(lines))


def _build(rows: list[dict[str, str]], sources: tuple[str, ...], user: int = 0) -> Rules:
    """Rules of ``rows`` in match order; the first ``user`` rows (a user's file) are compiled
    with the linear-time engine."""
    table = pd.DataFrame(rows, columns=[*RULE_COLUMNS, "origin"])
    for col in ("planned", "root_cause"):
        table[col] = table[col].map(_flag).astype(bool)
    table["priority"] = table["priority"].astype("int64")
    for col in ("id", "signal", "message", "category", "component", "confidence", "note",
                "origin"):
        table[col] = table[col].astype("string")
    signal_re = tuple(user_pattern(p, False) if i < user else re.compile(p)
                      for i, p in enumerate(table["signal"]))
    message_re = tuple((user_pattern(p, True) if i < user else re.compile(p, re.IGNORECASE)) if p else None
                       for i, p in enumerate(table["message"]))
    return Rules(table, sources, signal_re, message_re)


@functools.cache
def _shipped() -> tuple[tuple[dict[str, str], ...], str]:
    ref = resources.files("reliab.taxonomy").joinpath(_SHIPPED)
    name = f"reliab/taxonomy/{_SHIPPED}"
    rows, problems = _read_rows(ref.read_text(encoding="utf-8"), name)
    if problems:
        _raise(problems)
    return tuple(rows), name


@functools.cache
def _default() -> Rules:
    rows, name = _shipped()
    return _build(list(rows), (name,))


def load_rules(path: str | os.PathLike[str] | None = None) -> Rules:
    """Load the shipped taxonomy rules, optionally overridden and extended by a user file.

    Parameters
    ----------
    path : str or path-like, optional
        A CSV file with the columns of ``reliab/taxonomy/rules.csv`` (id, signal, message,
        category, component, planned, priority, root_cause, confidence, note). A row whose
        id is also a shipped id replaces the shipped row; rows with new ids are added. All
        user rows come first in match order, in the order of the file, so a user rule wins
        over any shipped rule that also matches.

    Returns
    -------
    Rules
        Frozen; ``.table`` holds the rules in match order.

    Raises
    ------
    reliab.errors.ParseError
        Naming ``file:line`` and the reason for every invalid row (bad header, bad regex,
        category outside the vocabulary, component not matching the category, bad flag,
        non-integer priority, duplicate id).
    reliab.errors.InputFileError
        If the user file cannot be read.

    Notes
    -----
    The default vocabulary is Llama 3 Table 5 (arXiv 2407.21783) plus ``NVLink``,
    ``Planned`` and ``Unclassified``; the Xid rows follow the NVIDIA Xid catalog
    (docs.nvidia.com/deploy/xid-errors) as mapped by this project (``xid_catalog.csv``;
    not a published mapping).
    """
    if path is None:
        return _default()
    name = os.fspath(path)
    try:
        check_regular(name)  # a FIFO blocks, /dev/zero never ends, /proc is not a rules file
    except InputFileError as exc:
        raise InputFileError(f"cannot read taxonomy rules {name!r}: {exc}") from None
    try:
        with open(name, "rb") as fh:
            data = fh.read(MAX_RULES_BYTES + 1)
    except OSError as exc:
        raise InputFileError(f"cannot read taxonomy rules {name!r}: {exc}") from exc
    if len(data) > MAX_RULES_BYTES:
        raise InputFileError(f"taxonomy rules {name!r}: larger than {MAX_RULES_BYTES:,} bytes; not a rules file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"taxonomy rules {name!r}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    user, problems = _read_rows(text, name, user=True)
    if problems:
        _raise(problems)
    shipped, shipped_name = _shipped()
    user_ids = {r["id"] for r in user}
    rows = user + [r for r in shipped if r["id"] not in user_ids]
    return _build(rows, (name, shipped_name), user=len(user))


def as_rules(rules: Rules | str | os.PathLike[str] | None) -> Rules:
    """Coerce the ``rules=`` argument of the public functions to :class:`Rules`."""
    if isinstance(rules, Rules):
        return rules
    if rules is None or isinstance(rules, (str, os.PathLike)):
        return load_rules(rules)
    raise TypeError(f"rules must be Rules, a path or None, not {type(rules).__name__}")


__all__ = ["Rules", "load_rules", "as_rules", "RULE_COLUMNS"]
