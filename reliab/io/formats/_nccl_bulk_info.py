"""NCCL ``INFO`` chatter, read without the per-line parser.

NCCL prints its own lines as ``<host>:<pid>:<tid> [<dev>] NCCL INFO …`` (NCCL ``src/debug.cc``,
``ncclDebugLog``); during a hang, set-up lines and return-code trails (``… NCCL INFO
proxy.cc:991 -> 6``) fill most of every rank's output.  Such a line carries no time of its
own and, without a failure or checkpoint word, no signal: the per-line parser of
:mod:`reliab.io.formats.nccl` takes no prefix off it (a host followed by ``:<pid>`` is no
pdsh, compose, Ray or rank prefix, a letter starts no stamp), finds no ISO date in its
first words and only forgets the record a terminal may have wrapped before it.
:func:`info_line` recognises it with one anchored regex, one literal search and one bounded
ISO search; every line it declines goes to that parser, so the rows are the same either way.
"""

from __future__ import annotations

import re

from reliab.io._lines import LineContext
from reliab.io.formats._nccl_messages import ISO
from reliab.io.formats._nccl_quiet import _ANY_WORD

__all__ = ["info_line"]

#: ``<host>:<pid>:<tid> [<dev>] NCCL INFO `` at the very start of a line
_INFO = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*:[0-9]+:[0-9]+ \[[0-9]+\] NCCL INFO ")
#: the per-line parser looks for an ISO date within this many characters of the line
_ISO_WITHIN = 48


def info_line(text: str, ctx: LineContext) -> bool:
    """Whether ``text`` is NCCL ``INFO`` chatter the per-line parser would return nothing for;
    if so, the record kept for a terminal's wrap is forgotten, as that parser forgets it.

    Declined (``False``, state untouched): any other start, colour codes (written or as
    text), a failure or checkpoint word anywhere, an ISO date in the first words, and a line
    right after a long unfinished glog record (it may continue that record).
    """
    if _INFO.match(text) is None or "\x1b" in text or "ESC[" in text or "^[[" in text:
        return False
    if _ANY_WORD.search(text) is not None or ISO.search(text, 0, _ISO_WITHIN) is not None:
        return False
    st = ctx.state
    prev = st.get("prev")
    if prev is not None and prev[0] == ctx.lineno - 1:
        return False
    st["prev"] = None
    return True
