"""Training-log lines in storms, taken apart column-wise before the reader's rules see them.

During a hung collective a job's output is a few line shapes repeated per rank hundreds of
thousands of times: NCCL's own ``<host>:<pid>:<tid> [<dev>] NCCL INFO|WARN …`` (NCCL
``src/debug.cc``, ``ncclDebugLog``), glog records of the PyTorch C++ core
(``E1206 12:34:56.789012 123 file.cpp:12] …``, glog ``LogMessage::Init``) and PyTorch's
rank-prefixed ones (``[rank3]:[E1206 12:34:56.789012 ProcessGroupNCCL.cpp:1414] …``,
``c10/util/Logging.cpp``).  :func:`nccl_bulk` reads each group of lines handed over by the
line driver (:mod:`reliab.io._lines`, every line a candidate) with polars string kernels:

* **quiet** NCCL lines (``<host>:<pid>:<tid> [<dev>]`` with a lower-case host, no failure or
  checkpoint word, no ISO date, not after a line a terminal may have wrapped) carry nothing:
  dropped in the columnar pass, never looked at in Python; after a line that may have left a
  wrapped record, whether it did is looked up in the reader's state (a continuation is read
  with its record);
* **glog** records (optionally behind ``[rankN]:``) and NCCL lines holding a failure word get
  their prefix, rank, stamp and message from one regex per group; the reader's rules (clock,
  untimed rows, repeat rule, wrapped records) then run on these pieces
  (:func:`reliab.io.formats.nccl.read_glog`, ``read_nccl_own``, ``read_split``), with the
  message classified once per distinct text.  A glog record repeating one the repeat rule
  kept, while that one is still among the recent statements and within its windows
  (:func:`reliab.io.formats._nccl_repeat.anchored`), only moves the clock; a glog record
  without a failure word followed by another glog record changes nothing the next one does
  not set again, and is skipped;
* **inert** lines (printable ASCII, no clock ``HH:MM:SS`` and no date, no failure or
  checkpoint word, and short, ended like a sentence or no glog record: traceback frames,
  CUDA's hints, progress bars) carry nothing and leave nothing a later line reads; they only forget the record a
  terminal may have wrapped, unless they may continue it (the line right after such a
  record), when they are read in their place;
* **untimed** glog records (``[E ProcessGroupNCCL.cpp:475] …`` of older PyTorch, behind at
  most a ``[rankN]:``; no clock or date in the line) get their rank and message from the
  columnar pass and go to the reader's rules without ``split_line``;
* every other line (dated lines, other launcher prefixes, colour codes, non-ASCII text,
  checkpoint words, any ISO date) goes to the per-line parser in its place.

All lines are taken in line order in one pass, so the reader's state is the per-line
parser's at every line; the rows are held to the end of the file, where the reader's
``finish`` takes them (:func:`held_rows`, :data:`reliab.io._lines.LATE_ROWS`) and gives glog
rows their year and untimed rows their time.  The shapes are recognised conservatively (printable ASCII
only, no date anywhere): a line outside them costs time, never a different row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reliab.errors import ParseError
from reliab.io._lines import LATE_ROWS, LineContext, Row, unexpected
from reliab.io.formats._nccl_messages import Split
from reliab.io.formats._nccl_quiet import _PENDING
from reliab.io.formats._nccl_repeat import anchored

if TYPE_CHECKING:
    import polars as pl

__all__ = ["QUIET", "GLOG", "NCCL", "OTHER", "INERT", "UNTIMED", "shapes", "make_bulk"]

QUIET, GLOG, NCCL, OTHER, INERT, UNTIMED = 0, 1, 2, 3, 4, 5
#: a rank prefix and a glog stamp (``_nccl_messages._LAUNCHER`` then ``_GLOG``, as one regex) up
#: to the message, and the fields of such a head
_GLOG = (r"^(?:\[rank[0-9]+\]: ?)?\[?[IWEF][0-9]{3,4} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?(?: +[0-9]+)?"
         r" [^\s\]]+:[0-9]+\] ?")
_FIELDS = (r"^(?:\[rank([0-9]+)\]: ?)?\[?[IWEF]([0-9]{1,2})([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
           r"(?:\.([0-9]{1,9}))?")
#: NCCL's ``<host>:<pid>:<tid> [<dev>] `` with a lower-case host (no glog level, no month-day stamp)
_NCCL = r"^[a-z][A-Za-z0-9_.-]*:[0-9]+:[0-9]+ \[[0-9]+\] "
#: the reader's failure triggers and checkpoint words (``_nccl_quiet._WORDS``)
_TRIGGERS = r"atchdog|rror|NCCL WARN|Timeout at NCCL work"
_CHECKPOINT = r"heckpoint|global step|state loaded"
#: a line a terminal may have wrapped: long and not ended like a sentence (``nccl._remember_record``)
_WRAP_PUNCT = ".!?)]"
#: ``nccl_who`` looks for the NCCL prefix within the first 200 characters
_HEAD_MAX = 150
#: every stamp the per-line parser reads holds a clock (glog, ISO, Python logging month-day)
_CLOCK = r"[0-9]{2}:[0-9]{2}:[0-9]{2}"
#: an untimed glog record (``_nccl_messages._GLOG_NO_TIME``) at the line's start or behind one
#: ``[rankN]:`` (``_LAUNCHER``, with its one optional blank): the head, the rank, the message
_UNTIMED = r"^((?:\[rank([0-9]+)\]: ?)?\[[IWEF] [^\s\]]+:[0-9]+\] ?)(.*)$"

PerLine = Callable[[str, LineContext], Row | list[Row] | None]
ReadOwn = Callable[[str, LineContext, bool], Row | None]
ReadSplit = Callable[[str, Split, LineContext], Row | None]
ReadGlog = Callable[[str, "str | None", tuple[int, ...], str, LineContext, bool], Row | None]


def shapes(hits: pl.DataFrame) -> pl.DataFrame:
    """The lines of ``hits`` (``i``, ``line``) that are not quiet, their shape and pieces.

    Returns ``i``, ``line``, ``kind`` (:data:`GLOG`, :data:`NCCL`, :data:`INERT`, :data:`UNTIMED`,
    :data:`OTHER`), for glog
    records ``rank`` (of a ``[rankN]:`` prefix), their stamp as ``f2`` … ``f7`` (month, day,
    hour, minute, second, nanoseconds) and ``body`` (the message), ``words`` (a failure word in
    the message, or in an NCCL line) and ``idle``: a glog record without a failure word whose
    next line read is a glog record too (which sets again all the first one set: the clock and
    the record a terminal may have wrapped).
    """
    import polars as pl  # (loaded on first use: `import reliab` leaves polars unloaded)

    line = pl.col("line")
    plain = ((line.str.len_bytes() == line.str.len_chars()) & ~line.str.contains(r"(?-u)[\x00-\x1f\x7f]")
             & ~line.str.contains(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
             & ~line.str.contains(r"ESC\[|\^\[\[") & ~line.str.contains(_CHECKPOINT))
    maybe = line.str.contains(r"^(?:\[rank[0-9]|\[?[IWEF][0-9])")  # (the regex below only where it may match)
    # a line may leave a record for the next to continue when it is long, not ended like a
    # sentence and a record or itself such a continuation (nccl._remember_record, _wrapped)
    loose = (line.str.len_bytes() >= 100) & ~line.str.slice(-1).is_in(list(_WRAP_PUNCT))
    gap = (pl.col("i").shift(1) != pl.col("i") - 1).fill_null(True)
    frame = hits.with_columns(plain.alias("plain"), line.str.extract(f"({_NCCL})", 1).alias("head"),
                              line.str.contains(_TRIGGERS).alias("words"), loose.alias("loose"), gap.alias("gap"),
                              maybe.alias("maybe"))
    head, stamp = pl.col("head"), pl.col("stamp")
    frame = frame.with_columns(
        (pl.col("plain") & head.is_not_null() & (head.str.len_chars() <= _HEAD_MAX)).alias("nccl"),
        pl.when(pl.col("plain") & pl.col("maybe")).then(line).str.extract(f"({_GLOG})", 1).alias("stamp"))
    frame = frame.with_columns(stamp.str.extract_groups(_FIELDS).struct.with_fields(
        line.str.slice(stamp.str.len_chars()).alias("8")).alias("g"))
    # (loose lines of a run after the last short or punctuated one: one of them not NCCL's own
    # may have left a record, and the NCCL lines after it may be its continuations)
    seen = ((~pl.col("nccl") | pl.col("gap")) & pl.col("loose")).cast(pl.Int32).cum_sum()
    before_run = pl.when(~pl.col("loose")).then(seen).forward_fill().fill_null(0)
    leaves = pl.col("loose") & (seen > before_run)
    after = leaves.shift(1, fill_value=True) | pl.col("gap")
    is_glog = pl.col("g").struct.field("2").is_not_null()
    kind = (pl.when(is_glog).then(pl.lit(GLOG))
            .when(pl.col("nccl") & ~pl.col("words") & ~after).then(pl.lit(QUIET))
            .when(pl.col("nccl")).then(pl.lit(NCCL))
            .otherwise(pl.lit(OTHER)).cast(pl.Int8))
    frac = pl.col("f7").str.pad_end(9, "0").str.slice(0, 9).cast(pl.Int64).fill_null(0)
    # (a glog record's failure words are looked for in its message, as the reader does)
    words = pl.when(pl.col("kind") == GLOG).then(pl.col("f8").str.contains(_TRIGGERS)).otherwise(pl.col("words"))
    glog_next = (pl.col("kind") == GLOG).shift(-1, fill_value=False)
    return (_inert(frame.with_columns(kind.alias("kind")).filter(pl.col("kind") != QUIET))
            .unnest("g")
            .rename({str(k): f"f{k}" for k in range(1, 9)})
            .with_columns(words.alias("words"))
            .select("i", "line", "kind", pl.coalesce("f1", "urank").alias("rank"),
                    *(pl.col(f"f{k}").cast(pl.Int64) for k in range(2, 7)), frac.alias("f7"),
                    pl.when(pl.col("kind") == UNTIMED).then(pl.col("ubody")).otherwise(pl.col("f8")).alias("body"), ((pl.col("kind") == GLOG) & ~pl.col("words") & glog_next).alias("idle"), "words"))


def _inert(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its :data:`OTHER` lines that are inert made :data:`INERT` (the tests run on
    those lines alone: a storm of glog and NCCL lines pays nothing for them)."""
    import polars as pl

    other = frame.filter(pl.col("kind") == OTHER)
    if not other.height:
        return frame.with_columns(pl.lit(None, pl.String).alias("urank"), pl.lit(None, pl.String).alias("ubody"))
    line = pl.col("line")
    # (a line no terminal can have wrapped, as nccl._remember_record decides: short, ended like a
    # sentence after its blanks, or no glog record: no '[E ' level tag of an untimed one anywhere)
    whole = ((line.str.len_bytes() < 100) | line.str.strip_chars_end(" ").str.slice(-1).is_in(list(_WRAP_PUNCT))
             | ~line.str.contains(r"\[[IWEF] "))
    timeless = other.filter(pl.col("plain") & ~line.str.contains(_CLOCK))
    inert = timeless.filter(~pl.col("words") & whole).get_column("i")
    untimed = (timeless.filter(~pl.col("i").is_in(inert.implode()))
               .select("i", line.str.extract_groups(_UNTIMED).alias("u"))
               .filter(pl.col("u").struct.field("1").is_not_null())
               .select("i", pl.col("u").struct.field("2").alias("urank"), pl.col("u").struct.field("3").alias("ubody")))
    kind = (pl.when(pl.col("i").is_in(inert.implode())).then(pl.lit(INERT, pl.Int8))
            .when(pl.col("ubody").is_not_null()).then(pl.lit(UNTIMED, pl.Int8))
            .otherwise(pl.col("kind")))
    return frame.join(untimed, on="i", how="left", maintain_order="left").with_columns(kind.alias("kind"))


def make_bulk(per_line: PerLine, read_own: ReadOwn, read_glog: ReadGlog,
              read_split: ReadSplit) -> Callable[..., tuple[pl.DataFrame, pl.DataFrame]]:
    """The bulk hook of the NCCL reader: ``per_line`` reads the lines of no shape, ``read_own``
    and ``read_glog`` apply the reader's rules to an NCCL line and to a glog record's pieces,
    ``read_split`` to an NCCL line that continues a record a terminal wrapped."""

    def nccl_bulk(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
        events = shapes(hits)
        held: list[Row] = ctx.state.setdefault("bulk_held", [])
        st = ctx.state
        columns = (column.to_list() for column in events.get_columns())  # (faster than iter_rows)
        for i, text, kind, rank, mon, day, hh, mm, ss, ns, body, idle, words in zip(*columns, strict=True):
            if idle and "waiting" not in st:  # (rows waiting for a time take the first stamp after them)
                continue
            ctx.lineno = lineno = i + 1
            if kind == GLOG and words and _PENDING not in st and "waiting" not in st:
                entry = st.get("anchors", {}).get((body, rank))
                if entry is not None and anchored(entry, lineno, float(
                        (((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss), st):
                    # a repeat of a kept glog record: it only moves the clock (as read_glog would)
                    st["last"] = ("glog", (mon, day, hh, mm, ss, ns), st.get("iso"))
                    st["prev"] = None
                    continue
            if kind == INERT:
                prev = st.get("prev")
                # (as the per-line parser reads it: it only forgets the record, which a line can
                # continue only right after it and starting in the middle of a word: nccl._wrapped)
                if prev is None or prev[0] != i or not text[:1].islower():
                    st["prev"] = None
                    continue
                kind = OTHER  # it may continue a record a terminal wrapped: read it in its place
            wraps = False
            if kind == NCCL:
                prev = st.get("prev")
                wraps = prev is not None and prev[0] == i  # it continues a wrapped record: read with it
                if not (wraps or words):  # (as the per-line parser reads it: it only forgets the record)
                    st["prev"] = None
                    continue
            try:
                if kind == GLOG:
                    out = read_glog(text, rank, (mon, day, hh, mm, ss, ns), body, ctx, words)
                elif kind == NCCL:  # (split_line gives an NCCL line whole: Split(None, text))
                    out = read_split(text, Split(None, text), ctx) if wraps else read_own(text, ctx, words)
                elif kind == UNTIMED:  # (as split_line takes it apart: _prefixes, then _GLOG_NO_TIME)
                    out = read_split(text, Split(rank, body, glog_untimed=True, prefixed=rank is not None), ctx)
                else:
                    out = per_line(text, ctx)
            except ParseError as exc:
                out = (exc.message,)
            except Exception as exc:  # noqa: BLE001 - one bad line never ends the run (as in scan_lines)
                out = (unexpected(exc),)
            if out is not None:
                _take(lineno, text, out, ctx, held)
        return hits.head(0), hits.head(0)

    return nccl_bulk


def held_rows(rows: list[Row], ctx: LineContext) -> tuple[list[Row], list[Row]]:
    """The reader's ``finish`` takes the rows the bulk hook held (:data:`reliab.io._lines.LATE_ROWS`):
    ``rows`` with the held rows among them in line order, and the held rejections (``_reject``)."""
    held = [dict(row) for row in ctx.state.get("bulk_held", ())]  # (copies: a failed try leaves them as they were)
    if not held:
        return rows, []
    ctx.state[LATE_ROWS] = (None, held)
    return sorted([*rows, *(r for r in held if "_reject" not in r)], key=lambda r: r["_lineno"]), [
        r for r in held if "_reject" in r]


def _take(lineno: int, text: str, out: Any, ctx: LineContext, held: list[Row]) -> None:
    """Hold the row(s) of a line, or its rejection (``out``: the reason in a tuple)."""
    if isinstance(out, tuple):
        held.append({"_lineno": lineno, "_reject": out[0], "_text": text[:2000]})
        return
    for row in out if isinstance(out, list) else [out]:
        row.setdefault("origin", f"{ctx.path}:{lineno}")
        row.setdefault("_lineno", lineno)
        held.append(row)
