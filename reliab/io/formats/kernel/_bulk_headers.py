"""Candidate lines of other header styles, rewritten in bulk to the rsyslog header of the bulk shapes.

Every bulk shape (:mod:`reliab.io.formats.kernel._bulk`) starts with the rsyslog RFC 3339
header ``<stamp> <host> <tag>: `` (:data:`._bulk_shapes._HEAD`).  Two other common headers
state an absolute time too, and are read here for a whole group of candidate lines at once:

* ``journalctl -o short-iso`` (``2024-06-03T14:02:11+0000 host kernel: …``, journalctl(1)):
  its stamp differs only by an offset without a colon (ISO 8601 basic form), which the
  bulk stamp (:data:`._bulk_shapes._STAMP`) accepts as it is;
* ``dmesg -T`` (``[Mon Jun  3 14:02:11 2024] msg``, util-linux dmesg(1) ``--ctime``): local
  time in the reader's ``tz``, no host and no tag.  When ``tz`` is a fixed offset (UTC by
  default) the header is rewritten to ``<ISO stamp with that offset> <host> kernel: `` with
  the file's host, so that the bulk shapes read the line; the original text is kept in
  ``_orig`` and given back for every line no shape takes.  In a zone with summer time the
  lines stay with the per-line parser (the local time of a change is decided there).

The rewrite is exact for the bulk shapes: the new header holds no matcher literal (the host
is checked), the message is what the per-line ``dmesg -T`` pattern reads after ``] `` (one
space), the stamp is the same instant (ctime's English month; the weekday is not read), and
the row's host is the file's host, as the per-line parser gives a line without one.
``tests/test_kernel_bulk_headers.py`` checks the bulk route against the per-line reader.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._bulk_shapes import _STAMP, _WORD, _YEAR
from reliab.io.formats.kernel._clock import ANCHOR
from reliab.io.formats.kernel._kmsg import LITERALS

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
#: the ``dmesg -T`` header in English (``%a %b %e %T %Y`` in brackets) and one space
_CTIME = (rf"^\[[A-Z][a-z]{{2}} ({'|'.join(_MONTHS)}) +([0-9]{{1,2}}) ([0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}) "
          r"([0-9]{4})\] ")
#: how every ``dmesg -T`` header starts (``[`` and an English weekday): only those lines are parsed
_CTIME_LEAD = r"^\[[A-Z][a-z]{2} "
_HOST = re.compile(rf"{_WORD}+")


def _offset(tz: object) -> str | None:
    """``±hh:mm`` of a fixed-offset zone (less than a day, whole minutes), else ``None``."""
    if not isinstance(tz, timezone):
        return None
    off = tz.utcoffset(None)
    if abs(off) >= timedelta(hours=24) or off % timedelta(minutes=1):
        return None
    sign, off = ("-", -off) if off < timedelta(0) else ("+", off)
    minutes = int(off.total_seconds()) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _host(ctx: LineContext) -> str | None:
    """The file's host as an rsyslog host word holding no matcher literal, else ``None``."""
    host = ctx.state.get("host")
    if not isinstance(host, str) or _HOST.fullmatch(host) is None:
        return None
    head = f" {host} kernel: "
    if any(lit.decode() in head for lit in LITERALS):
        return None
    return host


def rewrite_ctime(hits: pl.DataFrame, ctx: LineContext) -> pl.DataFrame:
    """``hits`` with the ``dmesg -T`` header of its lines rewritten (see the module), and ``_orig``.

    ``_orig`` is the original text of a rewritten line, null on the others.  Returns ``hits``
    unchanged when no line can start with that header or the zone or host do not allow it.
    """
    line = pl.col("line")
    offset, host = _offset(ctx.state.get("tz")), _host(ctx)
    if offset is None or host is None or not hits.height:
        return hits
    # (a cheap anchored test first: in a raw printk file every line starts with ``[`` too)
    rows = hits.select(line.str.contains(_CTIME_LEAD)).to_series().arg_true()
    if not rows.len():
        return hits
    part = hits.select("line")[rows]
    g = part.select(line.str.extract_groups(_CTIME).alias("g"), n=line.str.find("] ", literal=True))
    month = pl.col("g").struct.field("1").replace_strict({m: f"{k:02d}" for k, m in enumerate(_MONTHS, 1)},
                                                        default=None)
    new = part.with_columns(g.to_series(0), g.to_series(1)).select(
        pl.concat_str(pl.col("g").struct.field("4"), pl.lit("-"), month, pl.lit("-"),
                      pl.col("g").struct.field("2").str.zfill(2), pl.lit("T"), pl.col("g").struct.field("3"),
                      pl.lit(f"{offset} {host} kernel: "), line.str.slice(pl.col("n") + 2))).to_series()
    taken = new.is_not_null()
    if not taken.any():
        return hits
    rows, new = rows.filter(taken), new.filter(taken)
    orig = pl.repeat(None, hits.height, dtype=pl.String, eager=True).scatter(rows, part.to_series().filter(taken))
    return hits.with_columns(hits.get_column("line").scatter(rows, new), orig.alias("_orig"))


#: the fake stamp of a rewritten line whose time needs the whole file (RFC 3164, raw printk): the
#: shapes read it, the row it gives is deferred (:func:`._bulk_route.kernel_rows`), never stored
DEFERRED_STAMP = "2000-01-01T00:00:00Z"
#: an RFC 3164 / ``journalctl -o short[-precise]`` header in English, ASCII, no PRI, 15 characters
#: (the day padded with a space or a zero), an optional fraction, one space: ``_timestamps._RFC3164``
#: reads the same fields on such a line, each at a fixed place (month 0-2, day 4-5, time 7-14)
_SYSLOG = rf"^(?:{'|'.join(_MONTHS)}) (?: [1-9]|[0-3][0-9]) [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(?:\.[0-9]{{1,9}})? "
#: a raw printk header, spaces only, at most ten integer and nine fraction digits, then one space
#: and a visible character (``_timestamps._RAW`` reads the same seconds and message)
_PRINTK = r"^\[ *([0-9]{1,10})\.([0-9]{1,9})\] ([!-~])"


def _scatter(hits: pl.DataFrame, rows: pl.Series, new: pl.Series, extra: dict[str, pl.Series]) -> pl.DataFrame:
    """``hits`` with ``line`` replaced at ``rows`` by ``new``, ``_orig`` kept, and ``extra`` columns
    (null elsewhere) set at ``rows``."""
    if rows.len() == hits.height:  # every line (a file of one header style): the columns as they are
        return hits.with_columns(new.alias("line"), hits.get_column("line").alias("_orig"),
                                 *(values.alias(name) for name, values in extra.items()))
    orig = hits.get_column("_orig") if "_orig" in hits.columns else pl.repeat(
        None, hits.height, dtype=pl.String, eager=True)
    cols = [hits.get_column("line").scatter(rows, new), orig.scatter(rows, hits.get_column("line").gather(rows))
            .alias("_orig")]
    for name, values in extra.items():
        base = hits.get_column(name) if name in hits.columns else pl.repeat(
            None, hits.height, dtype=values.dtype, eager=True)
        cols.append(base.scatter(rows, values).alias(name))
    return hits.with_columns(cols)


def rewrite_syslog(hits: pl.DataFrame, ctx: LineContext | None = None) -> pl.DataFrame:
    """``hits`` with each RFC 3164 header (:data:`_SYSLOG`) replaced by :data:`DEFERRED_STAMP`.

    The host and tag after the stamp stay as they are (the per-line parser splits the same
    ``host tag: msg`` tail after either stamp); a line with no host (``kernel: msg`` right
    after the stamp) is given the file's host (``ctx``), as the per-line parser gives it.  ``_partial`` (month, day, hour, minute,
    second as the decimal digits ``MMDDhhmmss`` of one integer), ``_frac`` (the fraction, null without
    one) and ``_fracus`` (it in whole microseconds: null beyond six digits) keep the stamp;
    lines whose fields are out of range (the per-line parser rejects them) are left alone.
    """
    if not hits.height:
        return hits
    line = pl.col("line")
    rows = hits.select(line.str.contains(_SYSLOG)).to_series().arg_true()
    if not rows.len():
        return hits
    part = hits.select("line") if rows.len() == hits.height else hits.select("line")[rows]
    day = line.str.slice(4, 2).str.strip_chars_start(" ").cast(pl.Int32)
    hms = line.str.slice(7, 8).str.replace_all(":", "", literal=True).cast(pl.Int32)  # hhmmss
    month = line.str.slice(0, 3).replace_strict({m: k for k, m in enumerate(_MONTHS, 1)}, return_dtype=pl.Int32)
    dot = line.str.slice(15, 1) == "."
    frac = pl.when(dot).then(line.str.extract(r"^.{15}(\.[0-9]{1,9}) ", 1))
    ok = day.is_between(1, 31) & (hms // 10000 < 24) & (hms // 100 % 100 < 60) & (hms % 100 < 61)
    out = part.select(
        ok=ok, partial=(month * 100 + day).cast(pl.Int64) * 1_000_000 + hms,
        frac=pl.concat_str(pl.lit("0"), frac).cast(pl.Float64),
        fracus=pl.when(~dot).then(0).when(frac.str.len_chars() <= 7)
        .then(frac.str.slice(1).str.pad_end(6, "0").cast(pl.Int64)),
        line=pl.concat_str(pl.lit(DEFERRED_STAMP + " "), line.str.slice(16 + frac.str.len_chars().fill_null(0))))
    host = None if ctx is None else _host(ctx)
    if host is not None:  # (``kernel: `` is a tag alone: the per-line expression reads no host before it)
        out = out.with_columns(pl.when(pl.col("line").str.starts_with(DEFERRED_STAMP + " kernel: "))
                               .then(pl.col("line").str.replace(DEFERRED_STAMP, f"{DEFERRED_STAMP} {host}",
                                                                literal=True))
                               .otherwise(pl.col("line")).alias("line"))
    keep = out.get_column("ok")
    if not keep.all():
        if not keep.any():
            return hits
        out, rows = out.filter(keep), rows.filter(keep)
    return _scatter(hits, rows, out.get_column("line"), {"_partial": out.get_column("partial"),
                                                          "_frac": out.get_column("frac"),
                                                          "_fracus": out.get_column("fracus")})


def rewrite_printk(hits: pl.DataFrame, ctx: LineContext) -> pl.DataFrame:
    """``hits`` with each raw printk header (:data:`_PRINTK`) replaced by
    ``<DEFERRED_STAMP> <host> kernel: `` (the file's host, as the per-line parser gives a line
    without one); ``_mono`` keeps the seconds since boot, ``_monous`` them in whole microseconds
    (null from 1e8 seconds or beyond six fraction digits).  A line holding the rtc anchor is left
    alone.  Unchanged when the host is not a
    host word free of matcher literals."""
    host = _host(ctx)
    if host is None or not hits.height:
        return hits
    line = pl.col("line")
    # (a line holding the rtc anchor may set the boot time: the per-line parser reads it)
    rows = hits.select(line.str.contains(_PRINTK) & ~line.str.contains(ANCHOR, literal=True)).to_series().arg_true()
    if not rows.len():
        return hits
    part = hits.select("line") if rows.len() == hits.height else hits.select("line")[rows]
    # (on a line of the shape the first ``] `` closes the header: its seconds are cut out, not captured)
    n = line.str.find("] ", literal=True)
    seconds = line.str.slice(1, n - 1).str.strip_chars_start(" ")
    g = part.select(mono=seconds.cast(pl.Float64), n=n, dot=line.str.find(".", literal=True))
    # below 1e8 s with at most six fraction digits a double is within 0.02 us of the decimal, so
    # its microseconds round exactly (and ``timedelta(seconds=…)`` gives them: ``_bulk_settle``)
    exact = (pl.col("mono") < 1e8) & (pl.col("n") - pl.col("dot") <= 7)
    out = g.select("mono", "n", monous=pl.when(exact).then((pl.col("mono") * 1e6).round().cast(pl.Int64)))
    new = part.with_columns(out.get_column("n")).select(
        pl.concat_str(pl.lit(f"{DEFERRED_STAMP} {host} kernel: "), line.str.slice(pl.col("n") + 2))).to_series()
    return _scatter(hits, rows, new, {"_mono": out.get_column("mono"), "_monous": out.get_column("monous")})


#: ``dmesg --time-format iso`` (util-linux dmesg(1): ``%Y-%m-%dT%H:%M:%S,<usec><offset>``): the
#: bulk stamp (:data:`._bulk_shapes._STAMP`) with a comma before its fraction, and one space
_DMESG_ISO = (rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9],[0-9]{{1,6}}"
              r"(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9]) ")
#: an RFC 5424 kernel line as rsyslog and journald forwarders write it (RFC 5424 §6: PRI, version 1,
#: the bulk stamp, a host, APP-NAME ``kernel``, a PROCID or ``-``, no MSGID, no STRUCTURED-DATA)
_RFC5424 = rf"^<[0-9]{{1,3}}>1 {_STAMP} {_WORD}+ kernel (?:-|[0-9]+) - - "


def rewrite_iso(hits: pl.DataFrame, ctx: LineContext) -> pl.DataFrame:
    """``hits`` with the ``dmesg --time-format iso`` and RFC 5424 headers of their lines rewritten.

    ``dmesg --time-format iso`` (:data:`_DMESG_ISO`) states the instant with its offset but no
    host or tag: the comma before the fraction becomes a dot and ``<file's host> kernel: ``
    follows, as in :func:`rewrite_ctime` (the per-line parser reads the message after one space
    and gives the file's host).  RFC 5424 (:data:`_RFC5424`) becomes ``<stamp> <host> kernel: ``
    (the per-line expression reads the same stamp and host, and the message after the ``-`` of
    the structured data and one space); a line whose host is ``-`` (none) or holds a matcher
    literal is left alone.  The original text is kept in ``_orig``.
    """
    if not hits.height:
        return hits
    line = pl.col("line")
    first = line.str.slice(0, 1)
    host = _host(ctx)
    # (the comma after the seconds, or ``<``, first: an rsyslog line is ruled out without a regex)
    lead = hits.select(((line.str.slice(19, 1) == ",") if host is not None else pl.lit(False)) | (first == "<"))
    maybe = lead.to_series().arg_true()
    if not maybe.len():
        return hits
    part = hits.select("line")[maybe]
    ok = part.select(line.str.contains(_DMESG_ISO) | line.str.contains(_RFC5424)).to_series()
    rows = maybe.filter(ok)
    if not rows.len():
        return hits
    part = hits.select("line")[rows]
    words = line.str.splitn(" ", 8)  # (RFC 5424: PRI and version, stamp, host, app, procid, msgid, SD, message)
    f = words.struct.field
    n = line.str.find(" ", literal=True)
    literal = "|".join(re.escape(lit.decode()) for lit in LITERALS)
    out = part.select(
        new=pl.when(first == "<").then(pl.concat_str(f("field_1"), pl.lit(" "), f("field_2"), pl.lit(" kernel: "),
                                                     f("field_7")))
        .otherwise(pl.concat_str(line.str.head(n).str.replace(",", ".", literal=True),
                                 pl.lit(f" {host} kernel: "), line.str.slice(n + 1))),
        ok=(first != "<") | ((f("field_2") != "-") & ~f("field_2").str.contains(literal)))
    keep = out.get_column("ok")
    if not keep.all():
        if not keep.any():
            return hits
        out, rows = out.filter(keep), rows.filter(keep)
    return _scatter(hits, rows, out.get_column("new"), {})


def original_lines(rest: pl.DataFrame) -> pl.DataFrame:
    """``i`` and ``line`` of ``rest``, each rewritten line given back as it was read."""
    if "_orig" not in rest.columns:
        return rest.select("i", "line")
    return rest.select("i", pl.coalesce("_orig", "line").alias("line"))
