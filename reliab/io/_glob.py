"""Manifest globs matched in linear time: a small automaton, never a backtracking regex.

A hand-over manifest is untrusted input, and a glob such as ``**a**a**a…b`` (43 bytes)
compiled to a Python regex backtracks exponentially on a 200-character path.  Here a glob
becomes a nondeterministic automaton (Thompson, "Regular expression search algorithm",
CACM 11(6), 1968) whose set of live states is advanced one character at a time: matching
costs at most ``len(path) × len(pattern)`` steps, whatever the pattern.

The rules are those of ``.gitignore`` (git-scm.com/docs/gitignore, "PATTERN FORMAT"):
``*`` and ``?`` stay within one path segment, ``**`` spans folders, ``**/`` matches zero
or more leading folders, a pattern without ``/`` (but a trailing one) matches a name at
any depth, a pattern ending in ``/`` matches everything under that folder, ``[...]`` is a
character class (``[!...]`` or ``[^...]`` negated, ``a-z`` ranges; ``]`` right after the
bracket is a member).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: a step of the automaton: which characters it takes
Test = Callable[[str], bool]


def _any(c: str) -> bool:
    return True


def _not_slash(c: str) -> bool:
    return c != "/"


def _class(body: str) -> Test:
    """The character class ``[body]`` (the text between the brackets)."""
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

    return test


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
        self._build(pattern)

    def _new(self) -> int:
        self._nodes.append(_Node())
        return len(self._nodes) - 1

    def _step(self, test: Test) -> None:
        """Append a state reached from the last one by one character passing ``test``."""
        last = len(self._nodes) - 1
        self._nodes[last].steps.append((test, self._new()))

    def _loop(self, test: Test) -> None:
        """Any number (zero included) of characters passing ``test``."""
        last = len(self._nodes) - 1
        self._nodes[last].steps.append((test, last))

    def _folders(self) -> None:
        """``(?:.*/)?``: nothing, or anything ending in ``/`` (zero or more whole folders)."""
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
                self._loop(_any)
                i += 2
            elif pat[i] == "*":
                self._loop(_not_slash)
                i += 1
            elif pat[i] == "?":
                self._step(_not_slash)
                i += 1
            elif pat[i] == "[" and (end := pat.find("]", i + 2)) > 0:
                self._step(_class(pat[i + 1:end]))
                i = end + 1
            else:
                self._step(lambda c, want=pat[i]: c == want)
                i += 1

    def _closure(self, states: set[int]) -> set[int]:
        todo, out = list(states), set(states)
        while todo:
            for nxt in self._nodes[todo.pop()].empty:
                if nxt not in out:
                    out.add(nxt)
                    todo.append(nxt)
        return out

    def fullmatch(self, path: str) -> bool:
        """Whether the whole of ``path`` (relative, with ``/``) matches the glob."""
        live = self._closure({0})
        for c in path:
            live = self._closure({nxt for s in live for test, nxt in self._nodes[s].steps if test(c)})
            if not live:
                return False
        return len(self._nodes) - 1 in live

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


__all__ = ["Glob"]
