"""Which matcher triggers a candidate kernel line holds: the bulk parser's dispatch key.

:func:`reliab.io.formats.kernel._kmsg.match_signal` chooses the expression that reads a
line by the substrings the line holds (:data:`TRIGGERS`).  The bulk parser
(:mod:`reliab.io.formats.kernel._bulk`) gives each candidate line a bit mask of them
(``_mask``, bit ``n`` for ``TRIGGERS[n]``) and lets a shape read only the lines whose mask is
exactly its own, so that a bulk row and the per-line row come from the same matcher.

:func:`with_mask` finds the mask in two regex passes over the lines instead of one
substring search per trigger: the first trigger of each line (a capture of the alternation
of all triggers) and the number of trigger occurrences (the same alternation, counted).  A
line with one occurrence holds exactly that trigger; only the rare lines with more are
tested trigger by trigger (:func:`full_mask`, the reference).  This is exact because no
trigger holds another and none ends with the start of another (:func:`overlap_free`): the
occurrences of different triggers never overlap, so a leftmost-first search finds each
trigger a line holds, and a count of one leaves no other trigger unseen.  (A trigger may
overlap itself, `` QID `` in `` QID QID ``: that only lowers the count of a line that
holds that one trigger, whose mask is the same either way.)
"""

from __future__ import annotations

import re
from functools import cache

import polars as pl

#: substrings that decide which matcher of ``_kmsg.match_signal`` (and which branch of
#: ``_mlx5``) reads a line; a bulk shape requires its own and none other
TRIGGERS = ("NVRM: Xid", "SXid", "mlx5", "Lost carrier", "controller is down", "I/O error, dev",
            "Hardware Error", "EDAC", "AER:", "Link down", "Port module event[error]",
            "health compromised", "fallen off the bus", "The NVIDIA GPU", "PCIe Bus Error", " QID ",
            "Removing after probe failure", "insufficient power", "Link is Down")


def bit(trigger: str) -> int:
    """The mask bit of ``trigger`` (one of :data:`TRIGGERS`)."""
    return 1 << TRIGGERS.index(trigger)


def overlap_free(texts: tuple[str, ...]) -> bool:
    """Whether no text holds another one and no text ends with the start of another one.

    Then occurrences of two different texts never overlap in any string, and a
    leftmost-first search of their alternation finds every text a string holds.
    """
    for a in texts:
        for b in texts:
            if a == b:
                continue
            if b in a or any(b.startswith(a[k:]) for k in range(1, len(a))):
                return False
    return True


@cache
def full_mask() -> pl.Expr:
    """The mask by one literal search per trigger (the reference, for lines with several)."""
    line = pl.col("line")
    return pl.sum_horizontal(line.str.contains(t, literal=True).cast(pl.Int32) * (1 << n)
                             for n, t in enumerate(TRIGGERS))


@cache
def _two_pass() -> tuple[pl.Expr, pl.Expr, pl.Expr] | None:
    """The triggers a line holds (``_found``), then from it the first-trigger bit and the occurrence
    count; ``None`` if the triggers overlap."""
    if not overlap_free(TRIGGERS):
        return None
    alternation = "|".join(re.escape(t) for t in TRIGGERS)
    found = pl.col("_found")  # every trigger a line holds, in order: one regex pass (``with_mask``)
    first = found.list.first().replace_strict({t: bit(t) for t in TRIGGERS}, default=0, return_dtype=pl.Int32)
    return pl.col("line").str.extract_all(alternation).alias("_found"), first, found.list.len()


def with_mask(hits: pl.DataFrame) -> pl.DataFrame:
    """``hits`` (column ``line``) with ``_mask`` (Int32): bit ``n`` set when the line holds ``TRIGGERS[n]``."""
    passes = _two_pass()
    if passes is None or not hits.height:
        return hits.with_columns(_mask=full_mask())
    frame = hits.select(passes[0]).select(_mask=passes[1], _n=passes[2])
    mask = frame.get_column("_mask")
    several = (frame.get_column("_n") > 1).arg_true()
    if several.len():
        mask = mask.scatter(several, hits[several].select(full_mask()).to_series())
    return hits.with_columns(mask.alias("_mask"))
