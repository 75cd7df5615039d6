"""Times of kernel-log lines that need more than their own prefix.

Three prefixes do not state a wall-clock time by themselves:

* raw printk seconds since boot (``[12345.678901] msg``, dmesg(1) without ``-T``): the boot
  time comes from ``boot_time=``, from a line that carries both a wall-clock and a printk
  time, or from the rtc driver's ``setting system clock to … UTC (<epoch>)`` line
  (``drivers/rtc/class.c``/``hctosys.c``);
* RFC 3164 (``Jun  3 14:02:11 host kernel: msg``, RFC 3164 §4.1.2) has no year;
* ``dmesg --reltime`` / ``dmesg -H`` prints the local minute (``[Jun26 06:24]``, no
  seconds, no year) when it changes and otherwise the seconds since the previous record
  (``[  +0.000001]``, util-linux ``dmesg.c``).  A line's time is its minute plus the
  increments since that minute's line; the minute line itself is placed at second 0, the
  earliest time it can have (the capture does not say more).  Lines before the first minute
  line (an excerpt that starts mid-minute) are placed back from it by their increments; a
  capture with no minute line at all is placed back from the file's modification time
  (inferred, and said in the file's notes).

A line with no timestamp at all (an excerpt whose date and host were cut away) gets the
file's modification time when no other signal line of the file carries a time (inferred,
said in the notes); otherwise it is malformed.

Rows carry ``_mono`` (printk seconds) or ``_partial`` (month, day, hour, minute, second)
plus ``_offset`` (seconds, reltime) until :func:`resolve_times` completes them once the
whole file is read.  A row whose time cannot be known or stored gets ``_reject``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from reliab.errors import ParseError
from reliab.io._lines import LATE_ROWS, LineContext, Row
from reliab.io.formats._timestamps import Header, localize, out_of_range, shifted

if TYPE_CHECKING:
    import polars as pl

ANCHOR = "setting system clock to "


def boot_anchor(header: Header, ctx: LineContext) -> datetime | None:
    """Boot time implied by a line that carries both a wall-clock and a printk time.

    An rtc epoch or printk time that cannot be turned into a storable time is ignored and
    remembered in ``ctx.state["anchor_error"]`` (the reason given to the raw lines that
    then lack a boot time).
    """
    if header.monotonic is None:
        return None
    if header.when is not None:
        boot, error = shifted(header.when, -header.monotonic)
    else:
        at = header.message.find(ANCHOR)
        if at < 0:
            return None
        tail = header.message[at + len(ANCHOR):]
        open_, close = tail.find("("), tail.find(")")
        digits = tail[open_ + 1:close] if 0 <= open_ < close else ""
        if not (digits.isascii() and digits.isdigit()):
            return None
        if len(digits) > 12:  # more than 30,000 years of seconds
            boot, error = None, f"rtc epoch {digits[:20]}… is not a representable time"
        else:
            clock, error = shifted(datetime(1970, 1, 1, tzinfo=UTC), int(digits))
            boot, error = (None, error) if clock is None else shifted(clock, -header.monotonic)
    if boot is None:
        ctx.state.setdefault("anchor_error", f"line {ctx.lineno}: {error}")
    return boot


def advance_reltime(header: Header, ctx: LineContext) -> None:
    """Follow the ``dmesg --reltime`` clock over every line (minute lines and increments).

    ``rel_total`` sums every increment from the start of the file, so that lines before the
    first minute line can be placed back from it (``rel_first``).
    """
    st = ctx.state
    if header.style != "dmesg_reltime":
        return
    if header.partial is not None:
        st["rel"] = [header.partial, 0.0]
        st.setdefault("rel_first", (header.partial, st.get("rel_total", 0.0)))
    elif header.delta is not None:
        st["rel_total"] = st.get("rel_total", 0.0) + header.delta
        if "rel" in st:
            st["rel"][1] += header.delta


def reltime_stamp(ctx: LineContext) -> tuple[tuple[int, int, int, int, int], float] | None:
    """The current ``(minute, seconds since it)`` of a reltime capture, ``None`` before any."""
    rel = ctx.state.get("rel")
    return None if rel is None else (rel[0], rel[1])


def _resolve_before_anchor(rows: list[Row], ctx: LineContext) -> None:
    """Reltime rows before the first minute line: placed back from it, else from the mtime."""
    pending = [r for r in rows if "_pre" in r]
    if not pending:
        return
    first = ctx.state.get("rel_first")
    if first is not None:
        for row in pending:
            row["_partial"], row["_offset"] = first[0], row.pop("_pre") - first[1]
        return
    total = ctx.state.get("rel_total", 0.0)
    mtime = datetime.fromtimestamp(os.stat(ctx.path).st_mtime, tz=UTC)
    for row in pending:
        when, error = shifted(mtime, row.pop("_pre") - total)
        if when is None:
            row["_reject"] = f"{row['signal']} line: {error}"
        else:
            row["time"] = when
    ctx.state.setdefault("notes", []).append(
        f"{len(pending)} dmesg --reltime line(s) without any '[MonDD HH:MM]' line: placed back from"
        f" the file's modification time ({mtime.isoformat()}) by their increments, inferred")


def _resolve_no_clock(rows: list[Row], ctx: LineContext) -> None:
    """Rows without any timestamp: the file's mtime if no signal line is dated, else malformed."""
    pending = [r for r in rows if r.pop("_noclock", False)]
    if not pending:
        return
    dated = "last_head" in ctx.state or "bulk_first" in ctx.state or "bulk_late" in ctx.state
    if dated:
        for row in pending:
            row["_reject"] = f"{row['signal']} line with no recognisable timestamp"
        return
    mtime = datetime.fromtimestamp(os.stat(ctx.path).st_mtime, tz=UTC)
    error = out_of_range(mtime)
    for row in pending:
        if error is None:
            row["time"] = mtime
        else:
            row["_reject"] = f"{row['signal']} line without a timestamp and the file's mtime: {error}"
    if error is None:
        ctx.state.setdefault("notes", []).append(
            f"{len(pending)} signal line(s) without any timestamp (the capture's date was cut away):"
            f" time inferred from the file's modification time ({mtime.isoformat()})")


def boot_time_of(ctx: LineContext) -> datetime | None:
    """``boot_time=`` (the one DST rule of :func:`localize`), else the anchor read so far."""
    given = ctx.options.get("boot_time")
    if given is None:
        return ctx.state.get("boot")
    return localize(pd.Timestamp(given), ctx.state["tz"]).to_pydatetime()  # the one DST rule


def _resolve_monotonic(rows: list[Row], ctx: LineContext) -> None:
    boot = boot_time_of(ctx)
    why = ctx.state.get("anchor_error")
    for row in rows:
        if "_mono" not in row:
            continue
        if boot is None:
            row["_reject"] = (f"{row['signal']} line stamped {row['_mono']:.6f} s since boot, but the"
                              " boot time is unknown: pass boot_time= or keep the rtc 'setting"
                              " system clock' line in the capture"
                              + (f" (the one at {why})" if why else ""))
            continue
        when, error = shifted(boot, row["_mono"])
        if when is None:
            row["_reject"] = f"{row['signal']} line stamped {row['_mono']:.6f} s since boot: {error}"
        else:
            row["time"] = when


def ordinal(p: tuple[int, int, int, int, int]) -> int:
    mon, day, hh, mm, ss = p
    return (((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss


def _base_year(last: tuple[int, int, int, int, int], last_rel: int, ctx: LineContext) -> tuple[int, str]:
    """Year of the first pending row: ``year=``, the file's dated lines, else its mtime (from the
    last pending row ``last`` and the rollovers ``last_rel`` before it)."""
    tz = ctx.state["tz"]
    if ctx.options.get("year") is not None:
        return int(ctx.options["year"]), "the year= option"
    firsts = [ctx.state["first_year_at"]] if "first_year_at" in ctx.state else []
    if "bulk_dated" in ctx.state:  # the first bulk row of a dated line (``_bulk_route``), which may come first
        firsts.append(ctx.state["bulk_dated"])
    if firsts:
        return min(firsts)[1], "the file's dated lines"
    mtime = datetime.fromtimestamp(os.stat(ctx.path).st_mtime, tz=tz)
    last_year = mtime.year - (1 if last[:2] > (mtime.month, mtime.day) else 0)
    return last_year - last_rel, f"the file's modification time ({mtime.date()}), inferred"


def _rollovers(pending: list[Row], settled: Any, late: pl.DataFrame | None) -> tuple[list[int], pl.Series | None]:
    """Per pending row, the rollovers up to it, over the year-less rows in line order: the
    pending ones, those the bulk route settled (``settled``: ``(line numbers, keys)`` pairs) and
    those it kept for the end (``late``: ``_lineno`` and packed ``_partial``); then the same
    for each row of ``late``, in its order (``None`` without it).  A rollover is a key more
    than a day below the one before it."""
    if late is not None:
        return _late_rollovers(pending, settled, late)
    events = [(row["_lineno"], ordinal(row["_partial"]), k) for k, row in enumerate(pending)]
    for linenos, keys in settled:
        events += [(n, key, -1) for n, key in zip(linenos.to_list(), keys.to_list(), strict=True)]
    if len(events) > len(pending):
        events.sort(key=lambda e: e[0])
    rel, prev, rels = 0, None, [0] * len(pending)
    for _, key, k in events:
        if prev is not None and key < prev - 86400:
            rel += 1
        prev = key
        if k >= 0:
            rels[k] = rel
    return rels, None


def _late_rollovers(pending: list[Row], settled: Any, late: pl.DataFrame) -> tuple[list[int], pl.Series]:
    """:func:`_rollovers` column-wise, with the rows kept for the end (many, in a frame)."""
    import polars as pl

    from reliab.io.formats.kernel._late import ordinal_of

    events = {"n": pl.Int64, "key": pl.Int64, "k": pl.Int64}
    frames = [pl.DataFrame({"n": [row["_lineno"] for row in pending],
                            "key": [ordinal(row["_partial"]) for row in pending],
                            "k": list(range(len(pending)))}, schema=events)]
    for linenos, keys in settled:
        frames.append(pl.DataFrame({"n": linenos, "key": keys}).select(
            pl.col("n").cast(pl.Int64), pl.col("key").cast(pl.Int64), k=pl.lit(-1, pl.Int64)))
    frames.append(late.select(pl.col("_lineno").cast(pl.Int64).alias("n"), key=ordinal_of(pl.col("_partial")),
                              k=-2 - pl.int_range(pl.len(), dtype=pl.Int64)))
    key = pl.col("key")
    out = pl.concat(frames).sort("n", maintain_order=True).with_columns(
        rel=(key < key.shift(1) - 86400).fill_null(False).cast(pl.Int64).cum_sum())
    rels = out.filter(pl.col("k") >= 0).sort("k").get_column("rel").to_list()
    return rels, out.filter(pl.col("k") <= -2).sort("k", descending=True).get_column("rel")


def _resolve_years(rows: list[Row], ctx: LineContext, late: pl.DataFrame | None = None) -> pl.Series | None:
    """Give year-less rows (RFC 3164, reltime) a year, advancing it at Dec -> Jan rollovers.

    Years advance when a line is more than a day earlier in the calendar than the one
    before it; with the mtime the *last* line is anchored instead.  ``late`` are the year-less
    rows the bulk route kept for the end (``_lineno``, packed ``_partial``): they count among
    the rows, and their years are returned, in their order.
    """
    pending = [r for r in rows if "_partial" in r]
    settled = ctx.state.get("settled_partial", 0)  # RFC 3164 rows the bulk route gave their year
    n_late = 0 if late is None else late.height
    if not pending and not n_late:
        if settled:
            base, how = _base_year((0, 0, 0, 0, 0), 0, ctx)
            ctx.state.setdefault("notes", []).append(_year_note(base, settled, how))
        return None
    rels, late_rels = _rollovers(pending, ctx.state.get("settled_keys", ()), late)
    last, last_rel = (pending[-1]["_partial"], rels[-1]) if pending else (None, 0)
    if late is not None and n_late and (not pending or late.item(n_late - 1, "_lineno") > pending[-1]["_lineno"]):
        from reliab.io.formats.kernel._late import unpack

        last, last_rel = unpack(late.item(n_late - 1, "_partial")), late_rels[-1]  # type: ignore[index]
    base, how = _base_year(last, last_rel, ctx)  # type: ignore[arg-type]
    ctx.state.setdefault("notes", []).append(_year_note(base, len(pending) + n_late + settled, how))
    tz = ctx.state["tz"]
    for row, r in zip(pending, rels, strict=True):
        _complete(row, base + r, tz)
    return None if late_rels is None else late_rels + base


def _year_note(base: int, lines: int, how: str) -> str:
    return f"year {base} of {lines} line(s) printed without one (RFC 3164, dmesg --reltime) taken from {how}"


def _complete(row: Row, year: int, tz: Any) -> None:
    mon, day, hh, mm, ss = row["_partial"]
    try:
        when = localize(datetime(year, mon, day, hh, mm, min(ss, 59)), tz)
    except (ValueError, OverflowError) as exc:
        row["_reject"] = f"date {mon:02d}-{day:02d} impossible in year {year} ({exc})"
        return
    except ParseError as exc:  # skipped by a DST change
        row["_reject"] = f"{row['signal']} line: {exc.message}"
        return
    error = out_of_range(when)
    if error is None and row.get("_offset"):
        shifted_when, error = shifted(when, row["_offset"])
        when = shifted_when or when
    if error is not None:
        row["_reject"] = f"{row['signal']} line: {error}"
    else:
        row["time"] = when


def resolve_times(rows: list[Row], ctx: LineContext) -> list[Row]:
    """Complete the rows of :mod:`reliab.io.formats.kernel` that need the whole file.

    The rows the bulk route kept for the end (:mod:`._late`) are completed with them: in bulk,
    left in ``ctx.state[LATE_ROWS]``, or, if one of them cannot be placed in bulk, all as
    per-line rows returned with the others.
    """
    late = None
    if "bulk_late" in ctx.state:  # (polars is loaded only when the bulk route ran)
        import polars as pl

        from reliab.io.formats.kernel._late import complete, kept, per_line_rows

        late = kept(ctx)
    _resolve_no_clock(rows, ctx)
    _resolve_monotonic(rows, ctx)
    _resolve_before_anchor(rows, ctx)
    partial = None if late is None else late.filter(pl.col("_partial").is_not_null())
    years = _resolve_years(rows, ctx, partial)
    if late is None:
        return rows
    try:
        boot = boot_time_of(ctx)
    except Exception:  # noqa: BLE001 - each row then meets it as the per-line rows do
        boot = None
    done = complete(late, years, boot, ctx)
    if done is not None:
        ctx.state[LATE_ROWS] = (done, [])
        return rows
    extra = per_line_rows(late, ctx)
    _resolve_monotonic(extra, ctx)
    syslog = [row for row in extra if "_partial" in row]
    for row, year in zip(syslog, [] if years is None else years.to_list(), strict=True):
        _complete(row, year, ctx.state["tz"])
    ctx.state[LATE_ROWS] = (None, extra)
    return sorted(rows + extra, key=lambda row: row.get("_lineno", 0))  # (stable: in line order)
