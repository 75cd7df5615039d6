"""Which signal hosts belong to a job's Slurm nodelist, without expanding the nodelist.

A 2,048-node job expands to 2,048 names; hundreds of restarts, each excluding a different bad
node, would expand to a million. Instead the distinct signal hosts are split once into
``head + number + tail`` and each nodelist term ``head[ranges]tail`` is tested against them
with array comparisons. Terms that do not fit that shape (several bracket groups, digits
right before ``[`` or inside the tail) are expanded with ``reliab.io.formats.slurm.hostlist``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

_HOST = re.compile(r"(?P<head>.*?)(?P<digits>\d{1,18})(?P<tail>\D*)")
_TERM = re.compile(r"(?P<head>[^\[\]]*)\[(?P<group>[^\[\]]*)\](?P<tail>[^\[\]]*)")


_MARKS = re.compile(r"[\[\],]")


def _split_top(expr: str) -> list[str]:
    """Split a hostlist on the commas outside brackets (only brackets and commas are visited)."""
    if "[" not in expr and "]" not in expr:
        parts = expr.split(",")
    else:
        parts, depth, start = [], 0, 0
        for m in _MARKS.finditer(expr):
            ch = m.group()
            if ch == ",":
                if depth == 0:
                    parts.append(expr[start:m.start()])
                    start = m.end()
            else:
                depth += 1 if ch == "[" else -1
        parts.append(expr[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_term(term: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", term)
    if m is None:
        return [term]
    head, tails = term[: m.start()], _expand_term(term[m.end():])
    out = []
    for lo, hi in _ranges(m.group(1), term):
        out += [head + str(i).zfill(len(lo)) + t for i in range(int(lo), int(hi) + 1)
                for t in tails]
    return out


def fallback_expand(expr: str) -> list[str]:
    """Expand ``node[0001-0003,0007]``; used only if ``reliab.io.formats.slurm.hostlist`` is missing."""
    return [h for term in _split_top(expr) for h in _expand_term(term)]


@functools.cache
def expander() -> Callable[[str], list[str]]:
    """``reliab.io.formats.slurm.hostlist.expand_hostlist`` if it exists, else :func:`fallback_expand`."""
    try:
        from reliab.io.formats.slurm.hostlist import expand_hostlist
    except ImportError:
        return fallback_expand
    return expand_hostlist


def _ranges(group: str, expr: str) -> list[tuple[str, str]]:
    """``0001-0003,0007`` -> ``[('0001', '0003'), ('0007', '0007')]``."""
    out = []
    for item in group.split(","):
        lo, sep, hi = item.strip().partition("-")
        hi = hi if sep else lo
        if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
            raise ValueError(f"hostlist {expr!r}: bad range {item.strip()!r}")
        out.append((lo, hi))
    return out


@dataclass(frozen=True, eq=False)
class HostIndex:
    """Distinct host names, each split as head + number + tail for range tests.

    ``groups`` maps ``head + '\\0' + tail`` to arrays (position in ``names``, number, number
    of digits as written, number of digits of the value).
    """

    names: tuple[str, ...]
    exact: Mapping[str, int]
    groups: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def host_index(names: Iterable[str]) -> HostIndex:
    """Index the distinct host names of the signals."""
    names = tuple(names)
    parts: dict[str, list[tuple[int, int, int]]] = {}
    for i, name in enumerate(names):
        m = _HOST.fullmatch(name)
        if m is not None:
            d = m["digits"]
            parts.setdefault(m["head"] + "\0" + m["tail"], []).append((i, int(d), len(d)))
    groups = {}
    for key, rows in parts.items():
        idx, val, width = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
        groups[key] = (idx, val, width, np.array([len(str(v)) for v in val], dtype=np.int64))
    return HostIndex(names, {n: i for i, n in enumerate(names)}, groups)


#: range x host comparisons made in one array operation (larger terms go in slices of ranges)
_BLOCK = 1 << 18


def _mark_ranges(mask: np.ndarray, group: tuple[np.ndarray, ...], ranges: list[tuple[str, str]]) -> None:
    """Set ``mask`` for the hosts of ``group`` inside any of ``ranges``: a host matches a range
    when its number lies in ``[lo, hi]`` and it is written with as many digits as the range's
    ``lo`` (or as its own value, when that is longer), as Slurm pads."""
    idx, val, width, ndigits = group
    top = np.iinfo(np.int64).max  # host numbers have at most 18 digits: a larger bound acts as this one
    lo = np.array([min(int(a), top) for a, _ in ranges], dtype=np.int64)[:, None]
    hi = np.array([min(int(b), top) for _, b in ranges], dtype=np.int64)[:, None]
    wide = np.array([len(a) for a, _ in ranges], dtype=np.int64)[:, None]
    step = max(1, _BLOCK // max(1, len(val)))
    hit = np.zeros(len(val), dtype=bool)
    for k in range(0, len(ranges), step):
        sl = slice(k, k + step)
        hit |= ((val >= lo[sl]) & (val <= hi[sl]) & (width == np.maximum(wide[sl], ndigits))).any(axis=0)
    mask[idx[hit]] = True


def members(index: HostIndex, nodelist: str | None, extra: Iterable[str | None] = ()) -> np.ndarray:
    """Boolean mask over ``index.names``: the host is in ``nodelist`` or in ``extra``.

    Zero padding follows Slurm: the width of ``lo`` is the width of every number of the
    range (``[08-10]`` is 08 09 10; ``[8-10]`` is 8 9 10).

    Raises
    ------
    ValueError
        For a malformed range inside brackets.
    """
    mask = np.zeros(len(index.names), dtype=bool)
    exact = [h for h in extra if h]
    for term in _split_top(nodelist or ""):
        m = _TERM.fullmatch(term)
        if "[" not in term:
            exact.append(term)
        elif m is None or m["head"][-1:].isdigit() or any(c.isdigit() for c in m["tail"]):
            exact += expander()(term)
        else:
            group = index.groups.get(m["head"] + "\0" + m["tail"])
            ranges = _ranges(m["group"], term)
            if group is not None:
                _mark_ranges(mask, group, ranges)
    for host in exact:
        i = index.exact.get(host)
        if i is not None:
            mask[i] = True
    return mask


__all__ = ["HostIndex", "host_index", "members", "expander", "fallback_expand"]
