"""Slurm hostlist expressions: ``node[0001-0003,0007],gpu1`` <-> a list of host names.

Slurm prints node sets (``NodeList`` in ``sacct``/``squeue``, ``scontrol show hostnames``) as
comma-separated *hostlist* expressions.  A bracket group holds comma-separated numbers and
``lo-hi`` ranges; the width of ``lo`` is the zero-padded width of every number of the range
(``[08-10]`` -> ``08 09 10``, ``[8-10]`` -> ``8 9 10``).  A name may carry several bracket
groups (``rack[1-2]-node[01-02]``), which expand as a cartesian product.

References
----------
Slurm ``src/common/hostlist.c`` and the ``scontrol show hostnames`` section of ``scontrol(1)``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

_TRAILING_NUMBER = re.compile(r"^(?P<prefix>.*?)(?P<digits>\d+)(?P<suffix>\D*)$")
MAX_HOSTS = 1_000_000  # guard against expressions such as node[0-999999999]


def _split_top_level(expr: str) -> list[str]:
    """Split ``expr`` on commas that are not inside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"hostlist {expr!r}: nested '[' at position {i}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"hostlist {expr!r}: unmatched ']' at position {i}")
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"hostlist {expr!r}: unclosed '['")
    parts.append(expr[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_group(group: str, expr: str) -> list[str]:
    """``0001-0003,0007`` -> ``['0001', '0002', '0003', '0007']``."""
    out: list[str] = []
    for item in group.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        if not (lo.isascii() and lo.isdigit()) or (sep and not (hi.isascii() and hi.isdigit())):
            raise ValueError(f"hostlist {expr!r}: bad range {item!r} inside brackets")
        if not sep:
            out.append(lo)
            continue
        start, stop = int(lo), int(hi)
        if stop < start:
            raise ValueError(f"hostlist {expr!r}: range {item!r} runs backwards")
        if stop - start >= MAX_HOSTS:
            raise ValueError(f"hostlist {expr!r}: range {item!r} exceeds {MAX_HOSTS} hosts")
        out.extend(str(n).zfill(len(lo)) for n in range(start, stop + 1))
    return out


def expand_hostlist(expr: str) -> list[str]:
    """Expand a Slurm hostlist expression into host names, in the order written.

    Parameters
    ----------
    expr : str
        For example ``"node[0001-0003,0007],gpu1"`` or ``"rack[1-2]-n[01-02]"``.
        An empty string gives an empty list.

    Returns
    -------
    list of str
        ``['node0001', 'node0002', 'node0003', 'node0007', 'gpu1']``; zero padding is kept.

    Raises
    ------
    ValueError
        On unbalanced brackets, a non-numeric or backwards range, or more than
        ``MAX_HOSTS`` names.

    Examples
    --------
    >>> expand_hostlist("node[0001-0003,0007],gpu1")
    ['node0001', 'node0002', 'node0003', 'node0007', 'gpu1']
    """
    hosts: list[str] = []
    for part in _split_top_level(expr):
        pieces = re.split(r"\[([^\]]*)\]", part)
        # even indices are literal text, odd indices are bracket contents
        choices = [[p] if i % 2 == 0 else _expand_group(p, expr) for i, p in enumerate(pieces)]
        if any(("[" in p or "]" in p) for p in pieces[::2]):
            raise ValueError(f"hostlist {expr!r}: stray bracket in {part!r}")
        for combo in itertools.product(*choices):
            hosts.append("".join(combo))
            if len(hosts) > MAX_HOSTS:
                raise ValueError(f"hostlist {expr!r} expands to more than {MAX_HOSTS} hosts")
    return hosts


def _ranges(numbers: list[int], width: int) -> str:
    """Sorted unique ints -> ``0001-0003,0007`` (each range zero-filled to ``width``)."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        lo, hi = str(start).zfill(width), str(prev).zfill(width)
        out.append(lo if start == prev else f"{lo}-{hi}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def compress_hostlist(hosts: Iterable[str]) -> str:
    """Compress host names into a Slurm hostlist expression (inverse of :func:`expand_hostlist`).

    Names are grouped by the text around their last run of digits; numbers of a group are
    sorted, de-duplicated and written as ranges.  Zero-padded numbers keep their width;
    an unpadded number joins the widest padded group it fits (``0999`` and ``1000`` share
    ``[0999-1000]``).  Names without digits are kept as they are.

    Parameters
    ----------
    hosts : iterable of str
        Host names; they must not contain ``[``, ``]`` or ``,``.

    Returns
    -------
    str
        For example ``"node[0001-0003,0007],gpu1"``.  ``expand_hostlist`` of the result gives
        the unique names, grouped and sorted.

    Examples
    --------
    >>> compress_hostlist(["node0002", "node0001", "node0003", "node0007", "gpu1"])
    'gpu1,node[0001-0003,0007]'
    """
    plain: set[str] = set()
    numbered: dict[tuple[str, str], list[str]] = {}
    for host in hosts:
        if any(c in host for c in "[],") or not host.strip() or host != host.strip():
            raise ValueError(f"cannot compress host name {host!r}")
        m = _TRAILING_NUMBER.match(host)
        if m is None:
            plain.add(host)
        else:
            numbered.setdefault((m["prefix"], m["suffix"]), []).append(m["digits"])
    groups: dict[tuple[str, str, int], set[int]] = {}
    for (prefix, suffix), digit_list in numbered.items():
        padded = sorted({len(d) for d in digit_list if len(d) > 1 and d[0] == "0"})
        for d in digit_list:
            if len(d) > 1 and d[0] == "0":
                width = len(d)
            else:  # unpadded: the widest padded width not longer than the number, else 1
                width = max((w for w in padded if w <= len(d)), default=1)
            groups.setdefault((prefix, suffix, width), set()).add(int(d))
    parts = [(h, h) for h in plain]
    for (prefix, suffix, width), numbers in groups.items():
        ordered = sorted(numbers)
        if len(ordered) == 1:
            text = f"{prefix}{str(ordered[0]).zfill(width)}{suffix}"
        else:
            text = f"{prefix}[{_ranges(ordered, width)}]{suffix}"
        parts.append((f"{prefix}\0{suffix}\0{width:04d}\0{ordered[0]:020d}", text))
    return ",".join(text for _, text in sorted(parts))


__all__ = ["expand_hostlist", "compress_hostlist"]
