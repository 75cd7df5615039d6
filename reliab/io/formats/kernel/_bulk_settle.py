"""Times of RFC 3164 and raw printk rows settled in bulk, when the rest of the file cannot change them.

:func:`reliab.io.formats.kernel._clock.resolve_times` completes these rows once the whole file
is read.  The bulk route (:mod:`reliab.io.formats.kernel._bulk_route`) gives a row its time at
once only where that time is already certain, and defers the others to the per-line step:

* **raw printk** (``[  123.456789] msg``): the time is the boot time plus the seconds since
  boot.  The boot time is ``boot_time=``, else the first boot anchor of the file
  (:func:`reliab.io.formats.kernel._clock.boot_anchor`), which later lines never replace.  It
  is certain when the option is given, when an earlier line set it, or when the first line of
  the group that could anchor it is an rtc ``setting system clock`` printk line (lines holding
  a bracketed printk time after another header, which may carry both clocks, count as possible
  anchors too) whose anchor reads.  The seconds are exact microseconds when they are below 1e8 with
  at most six fraction digits: below 2**27 s a double is within 0.02 us of its decimal, so
  Python's ``timedelta(seconds=float)`` rounds it to the same microsecond.
* **RFC 3164** (``Jun  3 14:02:11 host …``, no year, RFC 3164 §4.1.2): the year is the first
  year of the file (``year=``, else that of its first dated line) plus the rollovers counted
  over the year-less rows in line order (a row more than a day earlier than the one before).
  It is certain when the first year is known (the option, or a dated line of an earlier group)
  and no year-less line so far fell more than a day below the latest time before it (then no
  subsequence of them has a rollover), in a zone of fixed offset (no local-time rule), with a
  calendar date and at most six fraction digits.

Settled RFC 3164 rows are counted in ``ctx.state["settled_partial"]`` for the file's note on
years.  A settled Xid 79 row is recorded for the bus-drop rule with the clock of its header
(printk or calendar seconds), as the per-line parser records it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN, parse_header
from reliab.io.formats.kernel._clock import ANCHOR, boot_anchor, boot_time_of, ordinal
from reliab.io.formats.kernel._late import ordinal_of

#: a bracketed printk time anywhere in a line (a possible second clock, hence a boot anchor)
_PRINTK_ANYWHERE = r"\[\s*[0-9]+\.[0-9]+\]"
_DAY = 86400


def known_boot(hits: pl.DataFrame, ctx: LineContext) -> datetime | None:
    """The file's boot time if nothing after this group can change it, else ``None``."""
    if ctx.options.get("boot_time") is not None:  # (read once per group: only where no local-time rule applies)
        return boot_time_of(ctx) if _fixed_offset(ctx.state["tz"]) is not None else None
    if "boot" in ctx.state:
        return ctx.state["boot"]
    text = pl.coalesce("_orig", "line") if "_orig" in hits.columns else pl.col("line")
    printk = pl.col("_mono").is_not_null() if "_mono" in hits.columns else pl.lit(False)
    maybe = hits.select(pl.col("i"), text.alias("t"), may=(~printk & text.str.contains(_PRINTK_ANYWHERE))
                        | text.str.contains(ANCHOR, literal=True)).filter("may")
    if not maybe.height:
        return None
    first = maybe.row(0, named=True)["t"]
    header = parse_header(first, ctx.state["tz"])
    if header.style != "dmesg_raw" or ANCHOR not in header.message:
        return None
    probe = LineContext(path=ctx.path, source=ctx.source, state={"tz": ctx.state["tz"]})
    return boot_anchor(header, probe)


def _fixed_offset(tz: object) -> timedelta | None:
    if tz is UTC or isinstance(tz, timezone):
        return tz.utcoffset(None)  # type: ignore[union-attr]
    return None


def _first_year(ctx: LineContext) -> int | None:
    """``year=``, else the year of the first dated line read so far, else ``None``."""
    if ctx.options.get("year") is not None:
        return int(ctx.options["year"])
    firsts = [ctx.state[k] for k in ("first_year_at", "bulk_dated") if k in ctx.state]
    return min(firsts)[1] if firsts else None


def _keys(hits: pl.DataFrame, ctx: LineContext) -> pl.Series | None:
    """Calendar keys (:func:`ordinal`) of the group's lines that can give a year-less row, in
    line order; ``None`` if one cannot be placed in bulk (an indented or ``--reltime`` line)."""
    cols = hits.columns
    partial = pl.col("_partial") if "_partial" in cols else pl.lit(None, pl.Int64)
    other = partial.is_null()
    for name in ("_orig", "_time"):  # rewritten lines and RFC 3339 lines state no calendar key of their own
        if name in cols:
            other = other & pl.col(name).is_null()
    frame = hits.select(pl.col("i").cast(pl.Int64), "line", key=ordinal_of(partial), other=other)
    odd = frame.filter("other")
    extra: list[tuple[int, int]] = []
    for i, line in odd.select("i", "line").iter_rows():
        if line[:1].isspace():
            return None
        header = parse_header(line, ctx.state["tz"], tail=False)
        if header.style == "dmesg_reltime":
            return None
        if header.partial is not None:
            extra.append((i, ordinal(header.partial)))
    keys = frame.filter(pl.col("key").is_not_null()).select("i", "key")
    if extra:
        more = pl.DataFrame(extra, schema={"i": pl.Int64, "key": pl.Int64}, orient="row")
        keys = pl.concat([keys, more], how="vertical_relaxed").sort("i")
    return keys.get_column("key")


def track_year(hits: pl.DataFrame, ctx: LineContext) -> int | None:
    """The year of every RFC 3164 line of this group if nothing can change it, else ``None``.

    Called once per group, in line order: ``ctx.state["partial_max"]`` keeps the latest
    calendar key so far; once a key falls more than a day below the latest before it,
    ``partial_unsure`` stays set for the rest of the file.
    """
    st = ctx.state
    if st.get("partial_unsure"):
        return None
    keys = _keys(hits, ctx)
    if keys is None:
        st["partial_unsure"] = True
        return None
    if keys.len():
        top = st.get("partial_max")
        before = keys.cum_max().shift(1)
        if top is not None:
            before = before.fill_null(top).clip(lower_bound=top)
        if (keys < before - _DAY).any():
            st["partial_unsure"] = True
            return None
        st["partial_max"] = int(keys.max()) if top is None else max(top, int(keys.max()))
    year = _first_year(ctx)
    ok = year is not None and 1900 <= year <= 2200 and _fixed_offset(st["tz"]) is not None
    return year if ok else None


def settle(later: pl.DataFrame, hits: pl.DataFrame, year: int | None, ctx: LineContext) -> pl.DataFrame:
    """The rows of ``later`` (deferred rows with ``_partial``, ``_fracus``, ``_monous``) whose time
    is certain, with it (``year``: :func:`track_year` of the group); the uncertain ones are left out."""
    parts = []
    rows = later
    if "_monous" in rows.columns:
        boot = known_boot(hits, ctx)
        if boot is not None:
            at = pl.lit(boot.astimezone(UTC)).dt.cast_time_unit("us") + pl.duration(microseconds=pl.col("_monous"))
            parts.append(rows.filter(pl.col("_monous").is_not_null()).with_columns(time=at))
    if "_partial" in rows.columns:
        offset = _fixed_offset(ctx.state["tz"])
        if year is not None and offset is not None:
            p = pl.col("_partial")
            stamp = pl.format("{}-{}-{}T{}:{}:{}", pl.lit(str(year)), *(
                (p // 10**k % 100).cast(pl.String).str.zfill(2) for k in (8, 6, 4, 2)),
                pl.min_horizontal(p % 100, 59).cast(pl.String).str.zfill(2))
            local = stamp.str.to_datetime("%Y-%m-%dT%H:%M:%S", time_unit="us", strict=False)
            at = (local - pl.lit(offset) + pl.duration(microseconds=pl.col("_fracus"))).dt.replace_time_zone("UTC")
            part = rows.filter(p.is_not_null() & pl.col("_fracus").is_not_null()).with_columns(time=at)
            part = part.filter(pl.col("time").is_not_null())
            ctx.state["settled_partial"] = ctx.state.get("settled_partial", 0) + part.height
            if part.height:  # (their calendar keys join the rollover count of the rows left to the end)
                keys = part.select("_lineno", k=ordinal_of(p))
                ctx.state.setdefault("settled_keys", []).append((keys.get_column("_lineno"), keys.get_column("k")))
            parts.append(part)
    if not parts:
        return rows.head(0)
    out = pl.concat(parts, how="vertical_relaxed")
    lo, hi = (pl.lit(t).dt.cast_time_unit("us") for t in (TIME_MIN, TIME_MAX))
    return out.filter((pl.col("time") >= lo) & (pl.col("time") < hi))
