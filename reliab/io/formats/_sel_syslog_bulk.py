"""Storms of SEL records in syslog, read column-wise (the bulk hook of the SEL reader).

A BMC whose DIMM or fan keeps crossing a threshold writes the same few records thousands of
times, and a central syslog server holds them for every BMC of the fleet.  The lines of the
shapes of :mod:`._sel_syslog` (``sel-logger`` journal lines with an RFC 3164 or RFC 3339
stamp, ``ipmi_sel`` records) are taken apart with one regex per shape and group; the key
and severity are worked out once per distinct (sensor, threshold, direction) or (record
type, event data, path, assert) and joined back; the time is built from the stamp's
fields.  Lines the per-line parser would reject (an impossible date or clock) and RFC 3164
lines read under a ``tz=`` zone (its daylight-saving rules) are left to it, as is every line
of another shape (``sel list`` records, FreeIPMI tables): it reads them after this group's
rows, which no row here depends on (:func:`._sel_syslog.record` keeps its repeat memory for
``ipmi_sel`` records alone, and an impossible time is rejected before it is consulted).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io.formats._sel_syslog import (
    _MONTHS,
    IPMI_SEL,
    LOGGER_3164,
    LOGGER_3339,
    _repeated,
    ipmi_sel_signal,
    logger_signal,
    written_at,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = ["syslog_rows", "make_bulk"]

_COLUMNS = ("_lineno", "time", "host", "gpu", "job_id", "source", "signal", "severity", "message")


def _stamp(g: pl.Expr, first: int, style: int, year: pl.Expr | None) -> pl.Expr:
    """The UTC time (``Datetime("us", "UTC")``) of the stamp fields ``first``… of struct ``g``;
    null where the date or clock is impossible."""
    import polars as pl

    f = [g.struct.field(str(first + k)) for k in range(8 if style == 3339 else 5)]
    if style == 3164:
        month = f[0].replace_strict(list(_MONTHS), list(range(1, 13)), return_dtype=pl.Int32)
        y, mo, d, clock, us, off = year, month, f[1].str.strip_chars(" ").cast(pl.Int32), f[2:5], pl.lit(0), pl.lit(0)
    else:
        y, mo, d, clock = f[0].cast(pl.Int32), f[1].cast(pl.Int32), f[2].cast(pl.Int32), f[3:6]
        us = f[6].str.pad_end(6, "0").cast(pl.Int64).fill_null(0)
        sign = pl.when(f[7].str.slice(0, 1) == "-").then(-1).otherwise(1)
        off = pl.when(f[7] == "Z").then(0).otherwise(
            sign * (f[7].str.slice(1, 2).cast(pl.Int64) * 60 + f[7].str.slice(4, 2).cast(pl.Int64)))
    hh, mi, ss = (c.cast(pl.Int64) for c in clock)
    def padded(e: pl.Expr, width: int) -> pl.Expr:
        return e.cast(pl.String).str.zfill(width)

    day = pl.format("{}-{}-{}", padded(y, 4), padded(mo, 2), padded(d, 2)).str.to_date("%Y-%m-%d", strict=False)
    ok = day.is_not_null() & (hh <= 23) & (mi <= 59) & (ss <= 59)
    when = (day.cast(pl.Datetime("us", "UTC")) + pl.duration(hours=hh, minutes=mi - off, seconds=ss, microseconds=us))
    return pl.when(ok).then(when)


def _logger_rows(hits: pl.DataFrame, ctx: LineContext, style: int) -> pl.DataFrame:
    import polars as pl

    pattern, n = (LOGGER_3164, 5) if style == 3164 else (LOGGER_3339, 8)
    hits = hits.filter(pl.col("line").str.contains("^[A-Z]" if style == 3164 else "^[0-9]"))  # (each its own)
    year = None
    if style == 3164:
        if ctx.options.get("tz") is not None:
            return hits.head(0)  # (a local zone's daylight-saving rules: the per-line parser's)
        if ctx.options.get("year") is not None:
            year = pl.lit(ctx.options["year"], dtype=pl.Int32)
        else:
            try:
                written = written_at(ctx)
            except ParseError:
                return hits.head(0)  # (no year to give: the per-line parser says so, line by line)
    frame = hits.select("i", "line", pl.col("line").str.extract_groups(f"^{pattern}$").alias("g"))
    frame = frame.filter(pl.col("g").struct.field("1").is_not_null())
    if style == 3164 and year is None:
        month = pl.col("g").struct.field("1").replace_strict(list(_MONTHS), list(range(1, 13)), return_dtype=pl.Int32)
        day = pl.col("g").struct.field("2").str.strip_chars(" ").cast(pl.Int32)
        later = month * 100 + day > written.month * 100 + written.day
        year = pl.when(later).then(written.year - 1).otherwise(written.year).cast(pl.Int32)
    g = pl.col("g")
    frame = frame.with_columns(_stamp(g, 1, style, year).alias("time"),
                               *(g.struct.field(str(n + k)).alias(name) for k, name in
                                 ((1, "host"), (2, "message"), (3, "sensor"), (4, "level"), (5, "side"), (6, "way"))))
    frame = frame.filter(pl.col("time").is_not_null())
    keys = frame.select("sensor", "level", "side", "way").unique()
    signals = [logger_signal(*k) for k in keys.iter_rows()]
    keys = keys.with_columns(pl.Series("signal", [s for s, _ in signals], dtype=pl.String),
                             pl.Series("severity", [v for _, v in signals], dtype=pl.String))
    return frame.join(keys, on=["sensor", "level", "side", "way"], how="left", nulls_equal=True)


def _ipmi_sel_rows(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.Series, pl.Series]:
    """The rows of the ``ipmi_sel`` records of ``hits``, the records written twice (``i``) and
    every line of the shape (``i``, also those with an impossible time)."""
    import polars as pl

    frame = hits.select("i", "line", pl.col("line").str.extract_groups(f"^{IPMI_SEL}$").alias("g"))
    frame = frame.filter(pl.col("g").struct.field("1").is_not_null())
    shaped = frame.get_column("i")
    g = pl.col("g")
    frame = frame.with_columns(_stamp(g, 1, 3339, None).alias("time"),
                               *(g.struct.field(str(k)).alias(name) for k, name in
                                 ((9, "rid"), (10, "rtype"), (11, "data"), (13, "path"), (14, "asserted"))))
    frame = frame.filter(pl.col("time").is_not_null())
    # (one record written twice is one record: in line order, as the per-line parser keeps them)
    st = ctx.state
    keep = [not _repeated(rid, text, st) for rid, text in zip(frame.get_column("rid").to_list(),
                                                              frame.get_column("line").to_list(), strict=True)]
    dropped = frame.filter(~pl.Series(keep, dtype=pl.Boolean)).get_column("i")
    frame = frame.filter(pl.Series(keep, dtype=pl.Boolean))
    keys = frame.select("rtype", "data", "path", "asserted").unique()
    signals = [ipmi_sel_signal(*k) for k in keys.iter_rows()]
    keys = keys.with_columns(*(pl.Series(name, [s[j] for s in signals], dtype=pl.String)
                               for j, name in enumerate(("signal", "severity", "message"))))
    frame = frame.join(keys, on=["rtype", "data", "path", "asserted"], how="left", nulls_equal=True)
    return frame.with_columns(pl.lit(ctx.options["host"], dtype=pl.String).alias("host")), dropped, shaped


#: lines that may make the per-line parser read commas as cells: a comma-separated SEL record or
#: header (``sel._csv_layout``, ``_is_csv_header``) has, stripped of the blanks ``str.strip``
#: removes, a first cell ``ID``, hexadecimal or digits (``str.isdigit``: any numeric character)
#: and a second cell that is an ipmitool or FreeIPMI date or ``Date`` (ASCII whatever the rest:
#: no other character lowers to these letters); a FreeIPMI ``|`` table's header
#: (``sel._freeipmi_header``) a second cell ``Date``; here any second cell that holds one
_CSV_FIRST = (r"(?i)^[\s\x1c-\x1f]*(?:id|[0-9a-f]+|\p{N}+)[\s\x1c-\x1f]*,[^,]*(?:[0-9]{2}/[0-9]{2}/[0-9]{2}|pre-init"
              r"|postinit|post-init|[a-z]{3}-[0-9]{2}-[0-9]{4}|date)")
_TABLE_HEAD = r"(?i)^[^|]*\|[^|]*date"


def _noise(hits: pl.DataFrame, rest: pl.DataFrame, ctx: LineContext) -> pl.Series:
    """The lines (``i``) that hold a comma and nothing the per-line parser reads: no ``|``, no
    ``sel-logger`` or ``ipmi_sel`` shape — before any line that may make the parser read
    commas as cells (a FreeIPMI table's header, a comma-separated record or header), and only
    while it does not."""
    import polars as pl

    if "sep" in ctx.state or "freeipmi" in ctx.state:
        return pl.Series("i", [], dtype=pl.Int64)
    line = pl.col("line")
    first = hits.filter(line.str.contains(_TABLE_HEAD) | line.str.contains(_CSV_FIRST)).get_column("i").min()
    keep = ~line.str.contains(_TABLE_HEAD) & ~line.str.contains(_CSV_FIRST)
    if first is not None:
        keep = keep & (pl.col("i") < first)
    return rest.filter(keep).get_column("i")


def syslog_rows(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of the ``sel-logger`` and ``ipmi_sel`` lines of ``hits`` (``i``, ``line``) and the
    lines left to the per-line parser (an ``ipmi_sel`` record written twice and the comma lines
    of :func:`_noise`, irrelevant, are in neither)."""
    import polars as pl

    line = pl.col("line")
    logger = hits.filter(line.str.contains("sensor crossed a ", literal=True))
    commas = hits.filter(line.str.contains(",", literal=True) & ~line.str.contains("sensor crossed a ", literal=True))
    ipmi, dropped, shaped = _ipmi_sel_rows(commas, ctx)
    rest = commas.filter(~line.str.contains("|", literal=True) & ~pl.col("i").is_in(shaped.implode()))
    if rest.height:  # (comma lines of no SEL shape)
        dropped = pl.concat([dropped, _noise(hits, rest, ctx).cast(dropped.dtype)])
    parts = [_logger_rows(logger, ctx, 3164), _logger_rows(logger, ctx, 3339), ipmi]
    rows = pl.concat([p.select((pl.col("i") + 1).alias("_lineno"), "time", "host", pl.lit(None, pl.String).alias("gpu"),
                               pl.lit(None, pl.String).alias("job_id"), pl.lit("sel").alias("source"),
                               "signal", "severity", "message") for p in parts if p.height]
                     or [_empty()]).sort("_lineno")
    taken = pl.concat([rows.get_column("_lineno") - 1, dropped.cast(rows.schema["_lineno"])])
    return rows, hits.filter(~pl.col("i").is_in(taken.implode()))


def _empty() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(schema={"i": pl.Int64, "_lineno": pl.Int64, "time": pl.Datetime("us", "UTC"),
                                "host": pl.String, "gpu": pl.String, "job_id": pl.String, "source": pl.String,
                                "signal": pl.String, "severity": pl.String, "message": pl.String}).drop("i")


def make_bulk() -> Callable[[pl.DataFrame, LineContext], tuple[pl.DataFrame, pl.DataFrame]]:
    """The bulk hook of the SEL reader (polars is loaded when a large file first needs it)."""

    def sel_bulk(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
        return syslog_rows(hits, ctx)

    return sel_bulk
