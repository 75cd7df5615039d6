"""Bulk rows whose time needs the whole file, kept back by the bulk route and completed at its end.

The bulk route (:mod:`reliab.io.formats.kernel._bulk_route`) reads RFC 3164 and raw printk
signal lines in bulk, but the time of such a row may depend on lines not read yet: the year
of an RFC 3164 stamp (none printed, RFC 3164 §4.1.2; it rolls over in December, and the first
dated line of the file or its modification time names it) and the boot time of a printk
line (seconds since boot; the rtc line may come later).  Rows whose time is not certain when
their group is read (:mod:`._bulk_settle`) are kept here as polars frames, their lines given
to neither the rows nor the per-line parser (:data:`reliab.io._lines.LATE_ROWS`).

Once the file is read, :func:`reliab.io.formats.kernel._clock.resolve_times` gives them their
year by the rules of the per-line rows, counted over both together in line order, and
:func:`complete` their times column-wise, exactly as the per-line ``_complete`` and
``_resolve_monotonic`` would (same instants, proleptic calendar, fixed offset).  When one row
cannot be placed that way (a zone with summer time, a fraction beyond microseconds, a date
not in the calendar, a time beyond what a table holds, no boot time) every kept row becomes
a per-line row and goes through those very functions instead, so the outcome never differs.
"""

from __future__ import annotations

from datetime import UTC, timedelta, timezone
from typing import Any

import polars as pl

from reliab.io._lines import LineContext, Row
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN

#: ``ctx.state`` key of the kept frames (one per group, in line order)
KEPT = "bulk_late"
#: the columns kept per row: the row's, its settlement fields, and its line for a quarantine
COLUMNS = ("_lineno", "host", "gpu", "job_id", "source", "signal", "severity", "message", "_partial", "_frac",
           "_fracus", "_mono", "_monous", "_text")
_SIGNALS = ("_lineno", "time", "host", "gpu", "job_id", "source", "signal", "severity", "message")


def keep(waiting: pl.DataFrame, ctx: LineContext) -> None:
    """Keep the rows ``waiting`` (with their settlement columns and ``_text``) until the file ends."""
    if waiting.height:
        cols = [pl.col(c) if c in waiting.columns else pl.lit(None, _DTYPES.get(c, pl.String)).alias(c)
                for c in COLUMNS]
        ctx.state.setdefault(KEPT, []).append(waiting.select(cols).sort("_lineno"))


_DTYPES = {"_partial": pl.Int64, "_frac": pl.Float64, "_fracus": pl.Int64, "_mono": pl.Float64, "_monous": pl.Int64}


def kept(ctx: LineContext) -> pl.DataFrame | None:
    """Every kept row, in line order, or ``None``."""
    frames = ctx.state.get(KEPT)
    return pl.concat(frames, how="vertical_relaxed") if frames else None


def unpack(partial: int) -> tuple[int, int, int, int, int]:
    """``(month, day, hour, minute, second)`` of a packed ``MMDDhhmmss`` stamp."""
    return (partial // 10**8, partial // 10**6 % 100, partial // 10**4 % 100, partial // 100 % 100, partial % 100)


def ordinal_of(p: pl.Expr) -> pl.Expr:
    """``_clock.ordinal`` of a packed ``MMDDhhmmss`` partial stamp."""
    mon, day, hh, mm, ss = (p // 10**k % 100 for k in (8, 6, 4, 2, 0))
    return (((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss


def per_line_rows(late: pl.DataFrame, ctx: LineContext) -> list[Row]:
    """The kept rows as the per-line parser gives them (no year or boot time yet)."""
    out: list[Row] = []
    for r in late.iter_rows(named=True):
        row: Row = {"time": None, "host": r["host"], "gpu": r["gpu"], "job_id": None, "source": r["source"],
                    "signal": r["signal"], "severity": r["severity"], "message": r["message"], "_text": r["_text"],
                    "origin": f"{ctx.path}:{r['_lineno']}", "_lineno": r["_lineno"]}
        if r["_partial"] is not None:
            row["_partial"] = unpack(r["_partial"])
            if r["_frac"]:
                row["_offset"] = r["_frac"]
        else:
            row["_mono"] = r["_mono"]
        out.append(row)
    return out


def _fixed(tz: Any) -> timedelta | None:
    return tz.utcoffset(None) if tz is UTC or isinstance(tz, timezone) else None


def complete(late: pl.DataFrame, years: pl.Series | None, boot: Any, ctx: LineContext) -> pl.DataFrame | None:
    """The kept rows with their time, column-wise, or ``None`` if one of them cannot be placed so.

    ``years`` is the year of each row with ``_partial`` (in line order; see ``_clock``), ``boot``
    the file's boot time (``None``: unknown) for the rows with ``_mono``.
    """
    lo, hi = (pl.lit(t).dt.cast_time_unit("us") for t in (TIME_MIN, TIME_MAX))
    printk = late.filter(pl.col("_partial").is_null())
    syslog = late.filter(pl.col("_partial").is_not_null())
    parts = []
    if printk.height:
        if boot is None or printk.get_column("_monous").null_count():
            return None
        at = pl.lit(boot.astimezone(UTC)).dt.cast_time_unit("us") + pl.duration(microseconds=pl.col("_monous"))
        parts.append(printk.with_columns(time=at))
    if syslog.height:
        offset = _fixed(ctx.state["tz"])
        if offset is None or years is None or syslog.get_column("_fracus").null_count():
            return None
        if not years.is_between(1900, 2200).all():
            return None
        p = pl.col("_partial")
        stamp = pl.format("{}-{}-{}T{}:{}:{}", pl.col("_year").cast(pl.String), *(
            (p // 10**k % 100).cast(pl.String).str.zfill(2) for k in (8, 6, 4, 2)),
            pl.min_horizontal(p % 100, 59).cast(pl.String).str.zfill(2))
        local = stamp.str.to_datetime("%Y-%m-%dT%H:%M:%S", time_unit="us", strict=False) - pl.lit(offset)
        placed = syslog.with_columns(years.alias("_year")).with_columns(
            _when=local.dt.replace_time_zone("UTC")).with_columns(
            time=pl.col("_when") + pl.duration(microseconds=pl.col("_fracus")))
        when = pl.col("_when")
        if placed.select((when.is_null() | (when < lo) | (when >= hi)).any()).item():
            return None  # (a date not in that year's calendar, or beyond the table's range: per line)
        parts.append(placed.drop("_year", "_when"))
    out = pl.concat(parts, how="vertical_relaxed").sort("_lineno")
    if out.select(((pl.col("time") < lo) | (pl.col("time") >= hi)).any()).item():
        return None
    return out.select(_SIGNALS)
