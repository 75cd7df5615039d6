"""The bulk route of the kernel reader: every bulk step over one group of candidate lines, in order.

:func:`kernel_rows` is the bulk hook of :func:`reliab.io.formats.kernel.read_kernel`.  It
gives the candidate lines of other header styles the rsyslog header the shapes read
(:mod:`._bulk_headers`: ``dmesg -T`` and ``journalctl -o short-iso`` with their own time,
RFC 3164 and raw printk with a placeholder time), drops noise, decides AER and SXid reports
(:mod:`._bulk_reports`) and reads the Xid and other signal shapes (:mod:`._bulk`).

A row of an RFC 3164 or raw printk line has no time of its own: its year (RFC 3164 §4.1.2
prints none, and rolls over in December) and its boot time (printk seconds since boot) are
settled at once where nothing later can change them (:mod:`._bulk_settle`), else once the
whole file is read (:func:`reliab.io.formats.kernel._clock.resolve_times`).  Such a row is
*deferred*: kept in a frame (:mod:`._late`), its line in neither the rows nor the lines left,
and completed in bulk with the per-line rows, in line order, by the same rules.

The header shapes :func:`reliab.io.formats._timestamps.parse_header` reads, and the route each takes:

=====================================  =========================================================
shape                                  route
=====================================  =========================================================
rsyslog RFC 3339, ``-o short-iso``     bulk, the time of the stamp
``dmesg -T``                           bulk in a fixed-offset zone (rewritten), else per line
``dmesg --time-format iso``, RFC 5424  bulk (rewritten; RFC 5424: APP-NAME ``kernel``, no MSGID
                                       or STRUCTURED-DATA, a host)
RFC 3164, ``-o short[-precise]``       bulk (English month, 15-character stamp, no PRI; no host:
                                       the file's); time settled in bulk or deferred (:mod:`._late`)
raw printk ``[  123.456789]``          bulk (not the rtc anchor line); settled or deferred
``logread``, console ``[date]``,       per line (each prints its shape rarely in a fleet's logs)
``talosctl``, ``/dev/kmsg``,
``--decode`` columns, localized months,
RFC 3164 with a PRI
``dmesg --reltime``                    per line, the whole file (every line moves the clock)
=====================================  =========================================================

This module imports the bulk modules; none of them imports it (no import circle).
"""

from __future__ import annotations

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._bulk import (
    _TRIGGERS,
    _no_rows,
    only_where,
    other_rows,
    rest_of,
    with_printable,
    xid_rows,
)
from reliab.io.formats.kernel._bulk_headers import (
    original_lines,
    rewrite_ctime,
    rewrite_iso,
    rewrite_printk,
    rewrite_syslog,
)
from reliab.io.formats.kernel._bulk_reports import aer_in_bulk, kernel_sxid, merge, quiet_of
from reliab.io.formats.kernel._bulk_settle import settle, track_year
from reliab.io.formats.kernel._bulk_time import stamp_times
from reliab.io.formats.kernel._late import keep, ordinal_of
from reliab.io.formats.kernel._reports import AER_LINES as _AER_LINES
from reliab.io.formats.kernel._reports import remember_xid79_rows
from reliab.io.formats.kernel._triggers import with_mask


def _bit(trigger: str) -> pl.Expr:
    """True where the line holds ``trigger`` (one of :data:`_TRIGGERS`), read from ``_mask``."""
    return (pl.col("_mask") & (1 << _TRIGGERS.index(trigger))) != 0


def _prepared(hits: pl.DataFrame) -> pl.DataFrame:
    """``hits`` with ``_mask`` and, in the same query, the flags every later step reads.

    ``_always``, ``_tail``, ``_before``: hits left to the per-line parser whatever their
    shape, so that the look-back rules of ``_reports`` see them: ``_always`` — those
    followed within three lines by a hit that does not start with a visible ASCII character
    (an indented continuation line takes the time of the line before it) and the last
    :data:`_AER_LINES` lines of the group (``_tail``: their followers are in the next
    group); ``_before`` — those at most :data:`_AER_LINES` lines before a ``PCIe Bus Error``
    hit (an AER report's second line) but NVSwitch SXid lines, held only when the group's
    AER reports are not decided in bulk.  ``_quiet``: noise
    (:func:`._bulk_reports.quiet_of`); ``_aer``: the lines holding ``AER:`` or ``PCIe Bus Error``;
    ``_printable`` (:func:`with_printable`).
    """
    hits = with_mask(with_printable(hits)).with_columns(stamp_times(hits))
    i = pl.col("i").cast(pl.Int64)
    nxt_i, nxt = i.shift(-1), pl.col("line").shift(-1)
    indented = ((nxt_i - i) <= 3) & ~nxt.str.contains("^[!-~]")
    next_detail = pl.when(_bit("PCIe Bus Error")).then(i).backward_fill()
    # (an NVSwitch SXid line is read by its own matcher, never as part of an AER report)
    switch = only_where(hits, hits.select(_bit("SXid")).to_series(),
                        pl.col("line").str.contains("nvidia-nvswitch", literal=True))
    tail = i >= i.max() - _AER_LINES
    return hits.with_columns(quiet_of(hits).alias("_quiet"), switch.alias("_switch")).lazy().with_columns(
        _always=tail | indented.fill_null(False), _tail=tail,
        _before=(((next_detail.shift(-1) - i) <= _AER_LINES) & ~pl.col("_switch")).fill_null(False),
        _aer=_bit("AER:") | _bit("PCIe Bus Error"),
    ).drop("_switch").collect()


def _remember_xid79(rows: pl.DataFrame, ctx: LineContext) -> None:
    """Keep the Xid 79 rows taken here (as a small frame) for the bus-drop rule of ``_reports``."""
    if not rows.height:
        return
    lost = rows.filter(pl.col("signal") == "xid:79")
    if lost.height:
        remember_xid79_rows(ctx.state, lost.select("_lineno", "host", "gpu", kind=pl.lit("t"),
                                                   t=pl.col("time").dt.epoch("us") / 1e6))


def _rewritten(hits: pl.DataFrame, ctx: LineContext) -> pl.DataFrame:
    """``hits`` with every header style the shapes can read rewritten to their rsyslog header."""
    return rewrite_syslog(rewrite_printk(rewrite_iso(rewrite_ctime(hits.rechunk(), ctx), ctx), ctx), ctx)


def _deferred_lines(hits: pl.DataFrame) -> pl.DataFrame | None:
    """``_lineno`` and the settlement columns of the hits whose rows need the whole file, or ``None``."""
    cols = [c for c in ("_partial", "_frac", "_fracus", "_mono", "_monous") if c in hits.columns]
    if not cols:
        return None
    flag = pl.any_horizontal(pl.col(c).is_not_null() for c in cols if c in ("_partial", "_mono"))
    out = hits.filter(flag).select((pl.col("i").cast(pl.Int64) + 1).alias("_lineno"), *cols)
    return out if out.height else None


def _with_text(rows: pl.DataFrame, hits: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with ``_text``: the line each was read from, as read (for a quarantine)."""
    if not rows.height:
        return rows
    text = pl.coalesce("_orig", "line") if "_orig" in hits.columns else pl.col("line")
    lines = hits.select((pl.col("i").cast(pl.Int64) + 1).alias("_lineno"), _text=text.str.slice(0, 2000))
    return rows.join(lines, on="_lineno", how="left", maintain_order="left")


def defer_rows(rows: pl.DataFrame, lines: pl.DataFrame, hits: pl.DataFrame, year: int | None,
               ctx: LineContext) -> pl.DataFrame:
    """The rows that stand alone or whose time is settled now (:func:`._bulk_settle.settle`); the
    others are kept for the end of the file (:func:`._late.keep`), their lines in no frame.

    ``lines`` (:func:`_deferred_lines`) name the lines whose rows need the whole file for their
    time.  An Xid 79 row among them is recorded for the bus-drop rule at once, with the clock
    of its header (printk or calendar seconds), as the per-line parser records it.
    """
    later = rows.join(lines, on="_lineno", how="inner", maintain_order="left")
    if not later.height:
        _date(rows, ctx)
        return rows
    lost = later.filter(pl.col("signal") == "xid:79")
    if lost.height:  # (settled or not: the rule reads the clock of the header, not the time)
        mono = pl.col("_mono") if "_mono" in lost.columns else pl.lit(None, pl.Float64)
        calendar = ordinal_of(pl.col("_partial")).cast(pl.Float64) if "_partial" in lost.columns else pl.lit(None)
        remember_xid79_rows(ctx.state, lost.select("_lineno", "host", "gpu", kind=pl.when(mono.is_not_null())
                                                   .then(pl.lit("m")).otherwise(pl.lit("p")),
                                                   t=pl.coalesce(mono, calendar)))
    settled = settle(later, hits, year, ctx).select(rows.columns)
    waiting = later.join(settled.select("_lineno"), on="_lineno", how="anti", maintain_order="left")
    keep(_with_text(waiting, hits), ctx)
    alone = rows.join(lines.select("_lineno"), on="_lineno", how="anti", maintain_order="left")
    _date(alone, ctx)
    return merge([alone, settled])


def _date(rows: pl.DataFrame, ctx: LineContext) -> None:
    """Keep the line and year of the file's first bulk row of a dated line (``_clock._base_year``)."""
    if "bulk_dated" not in ctx.state and rows.height:
        first = rows.row(0, named=True)
        ctx.state["bulk_dated"] = (first["_lineno"], first["time"].astimezone(ctx.state["tz"]).year)


def _sxid_lines(hits: pl.DataFrame, always: pl.Series, tail: pl.Series) -> int:
    """The group's lines holding ``SXid`` that the bulk step must decide all of: every one but
    those held in the group's tail, when no other is held (the tail's come after every bulk
    row, so the per-line parser reads them in line order with the open reports the bulk step
    left); else every one (then ``kernel_sxid`` leaves them all to the per-line parser)."""
    sxid = hits.select(_bit("SXid")).to_series()
    held = sxid & always
    return int(sxid.sum()) - (int(held.sum()) if not (held & ~tail).any() else 0)


def kernel_rows(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`kernel_xid`, :func:`kernel_other` then ``kernel_sxid``; rows in line order.

    Headers of other styles are first given the rsyslog header the shapes read
    (:func:`_rewritten`; the lines left over are given back as read).
    Noise lines (:func:`._bulk_reports.quiet_of`) are dropped first (they are irrelevant); AER
    reports are decided in bulk when the whole group's are (:func:`._bulk_reports.aer_in_bulk`).
    Each shape requires its own triggers (the Xid shape ``NVRM: Xid``, every other shape
    its exact trigger set), so no line can be taken by two of them: each looks at the free
    lines of its mask only, and the lines none took are left once, at the end, in line order.
    The rows of RFC 3164 and raw printk lines are deferred (:func:`defer_rows`): their lines
    are left too, with their rows kept for the per-line parser.
    """
    hits = _prepared(_rewritten(hits, ctx))  # (the flags are read on every hit: the tail is the group's last lines)
    if hits.get_column("_quiet").any():
        hits = hits.filter(~pl.col("_quiet"))
    year = track_year(hits, ctx)  # (every group, in line order, before this group's rows are dated)
    always, tail, before = hits.get_column("_always"), hits.get_column("_tail"), hits.get_column("_before")
    aer = aer_in_bulk(hits, always, tail, ctx)
    if aer is None:  # the AER reports go to the per-line parser, with the lines before them
        free, left, aer_rows = hits.filter(~(always | before)), hits, _no_rows()
    else:
        taken, aer_rows = aer
        free, left = hits.filter(~always & ~taken), hits.filter(~taken) if taken.any() else hits
    sxid, sxid_taken = kernel_sxid(free, ctx, _sxid_lines(hits, always, tail))
    rows = merge([xid_rows(free), other_rows(free), sxid, aer_rows])
    rest = rest_of(left, pl.concat([rows.get_column("_lineno") - 1, sxid_taken]))  # (held lines are in no row)
    later = _deferred_lines(hits)
    if later is not None and rows.height:
        rows = defer_rows(rows, later, hits, year, ctx)
    else:
        _date(rows, ctx)
    _remember_xid79(rows, ctx)
    return rows, original_lines(rest)
