"""Manifest globs matched in linear time: never a backtracking regex.

A hand-over manifest is untrusted input, and a glob such as ``**a**a**a…b`` (43 bytes)
compiled to a Python regex backtracks exponentially on a 200-character path.  Here a glob
becomes a nondeterministic automaton (Thompson, "Regular expression search algorithm",
CACM 11(6), 1968) whose set of live states is advanced one character at a time: matching
costs at most ``len(path) × len(pattern)`` steps, whatever the pattern.  The glob is also
written as a Python regular expression, used (it runs in C) only when the glob has at most
:data:`MAX_LOOPS` unbounded wildcards, where backtracking stays polynomial (Cox, "Regular
Expression Matching Can Be Simple And Fast", 2007, on why more cannot be bounded).

The rules are those of ``.gitignore`` (git-scm.com/docs/gitignore, "PATTERN FORMAT"):
``*`` and ``?`` stay within one path segment, ``**`` spans folders, ``**/`` matches zero
or more leading folders, a pattern without ``/`` (but a trailing one) matches a name at
any depth, a pattern ending in ``/`` matches everything under that folder, ``[...]`` is a
character class (``[!...]`` or ``[^...]`` negated, ``a-z`` ranges; ``]`` right after the
bracket is a member).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

#: unbounded wildcards (``*``, ``**``, ``**/``, the leading "any folder" of a pattern without
#: ``/``) up to which a glob is matched by Python's regex engine: with k of them a
#: backtracking match costs at most ~len(path)**k steps, so two stay polynomial and small
MAX_LOOPS = 2
#: sets of live states kept numbered at a time (each with its moves); then the cache restarts
MAX_STATES = 4096
#: a step of the automaton: which characters it takes
Test = Callable[[str], bool]


def _any(c: str) -> bool:
    return True


def _not_slash(c: str) -> bool:
    return c != "/"


def _literal(c: str) -> str:
    """``c`` as a literal of a Python regular expression."""
    return re.escape(c)


def _class(body: str) -> tuple[Test, str]:
    """The character class ``[body]`` (the text between the brackets): test and regex form."""
    negated = body[:1] in ("!", "^")
    items = body[1:] if negated else body
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(items):
        if i + 2 < len(items) and items[i + 1] == "-":
            lo, hi = items[i], items[i + 2]
            if lo > hi:
                raise ValueError(f"bad character range {lo}-{hi}")
            ranges.append((lo, hi))
            i += 3
        else:
            singles.add(items[i])
            i += 1

    def test(c: str) -> bool:
        member = c in singles or any(lo <= c <= hi for lo, hi in ranges)
        return member != negated

    regex = "".join(_literal(c) for c in sorted(singles)) + "".join(
        f"{_literal(lo)}-{_literal(hi)}" for lo, hi in ranges)
    return test, f"[{'^' if negated else ''}{regex}]"


@dataclass
class _Node:
    """One state: character steps ``(test, next state)`` and empty steps to other states."""

    steps: list[tuple[Test, int]] = field(default_factory=list)
    empty: list[int] = field(default_factory=list)


class Glob:
    """A compiled manifest glob; :meth:`fullmatch` tells whether a relative path matches."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._nodes: list[_Node] = [_Node()]
        self._regex: list[str] = []
        self._build(pattern)
        self._accept = len(self._nodes) - 1
        loops = sum(piece in ("(?:.*/)?", ".*", "[^/]*") for piece in self._regex)
        self._fast = re.compile("".join(self._regex), re.S) if loops <= MAX_LOOPS else None
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._moves: dict[tuple[int, str], int] = {}

    def _new(self) -> int:
        self._nodes.append(_Node())
        return len(self._nodes) - 1

    def _step(self, test: Test, regex: str) -> None:
        """Append a state reached from the last one by one character passing ``test``."""
        self._regex.append(regex)
        last = len(self._nodes) - 1
        self._nodes[last].steps.append((test, self._new()))

    def _loop(self, test: Test, regex: str) -> None:
        """Any number (zero included) of characters passing ``test``."""
        self._regex.append(regex)
        last = len(self._nodes) - 1
        self._nodes[last].steps.append((test, last))

    def _folders(self) -> None:
        """``(?:.*/)?``: nothing, or anything ending in ``/`` (zero or more whole folders)."""
        self._regex.append("(?:.*/)?")
        start = len(self._nodes) - 1
        inner = self._new()
        end = self._new()
        self._nodes[start].empty += [inner, end]
        self._nodes[inner].steps += [(_any, inner), (lambda c: c == "/", end)]

    def _build(self, pattern: str) -> None:
        pat = pattern.strip()
        anchored = "/" in pat.rstrip("/")
        if pat.endswith("/"):
            pat += "**"
        pat = pat.lstrip("/")
        if not anchored:
            self._folders()
        i = 0
        while i < len(pat):
            if pat.startswith("**/", i):
                self._folders()
                i += 3
            elif pat.startswith("**", i):
                self._loop(_any, ".*")
                i += 2
            elif pat[i] == "*":
                self._loop(_not_slash, "[^/]*")
                i += 1
            elif pat[i] == "?":
                self._step(_not_slash, "[^/]")
                i += 1
            elif pat[i] == "[" and (end := pat.find("]", i + 2)) > 0:
                self._step(*_class(pat[i + 1:end]))
                i = end + 1
            else:
                self._step(lambda c, want=pat[i]: c == want, _literal(pat[i]))
                i += 1

    def _closure(self, states: set[int]) -> frozenset[int]:
        todo, out = list(states), set(states)
        while todo:
            for nxt in self._nodes[todo.pop()].empty:
                if nxt not in out:
                    out.add(nxt)
                    todo.append(nxt)
        return frozenset(out)

    def _state(self, live: frozenset[int]) -> int:
        """The number of a set of live states (a state of the equivalent DFA)."""
        if live not in self._ids:
            if len(self._sets) >= MAX_STATES:  # bounded memory: start the cache afresh
                self._ids.clear()
                self._sets.clear()
                self._moves.clear()
            self._ids[live] = len(self._sets)
            self._sets.append(live)
        return self._ids[live]

    def _move(self, state: int, c: str) -> int:
        live = self._sets[state]
        nxt = self._closure({n for s in live for test, n in self._nodes[s].steps if test(c)})
        return self._state(nxt)

    def fullmatch(self, path: str) -> bool:
        """Whether the whole of ``path`` (relative, with ``/``) matches the glob.

        A glob of at most :data:`MAX_LOOPS` unbounded wildcards is answered by Python's
        regex engine (in C; its backtracking is then bounded by ``len(path)²``); any other
        by the automaton (:meth:`automaton`).
        """
        if self._fast is not None:
            return self._fast.fullmatch(path) is not None
        return self.automaton(path)

    def automaton(self, path: str) -> bool:
        """:meth:`fullmatch` by the automaton itself.

        The sets of live states met are numbered and their moves kept (a DFA built lazily,
        at most :data:`MAX_STATES` sets at a time): a path costs one dictionary look-up per
        character once the moves it needs are known, and never more than
        ``len(path) × len(pattern)`` steps.
        """
        if not self._sets:
            self._state(self._closure({0}))
        state, dead = 0, self._state(frozenset())
        moves = self._moves
        for c in path:
            nxt = moves.get((state, c))
            if nxt is None:
                nxt = self._move(state, c)
                if not self._sets:  # the cache was started afresh while moving
                    return self._slow(path)
                moves[(state, c)] = nxt
            if nxt == dead:
                return False
            state = nxt
        return self._accept in self._sets[state]

    def _slow(self, path: str) -> bool:
        """:meth:`fullmatch` without the cache (when it overflowed)."""
        live = self._closure({0})
        for c in path:
            live = self._closure({n for s in live for test, n in self._nodes[s].steps if test(c)})
            if not live:
                return False
        return self._accept in live

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


__all__ = ["Glob"]
