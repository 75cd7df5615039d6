"""Column-wise (polars) parsing of the common rsyslog kernel signal lines, for the fast route.

The shapes of the bulk hook (:func:`._bulk_route.kernel_rows`) of the kernel reader: :func:`kernel_xid` for the NVIDIA
Xid lines described below, then :func:`kernel_other` for the rsyslog mlx5, networkd, Intel/phylib
link, nvme, blk, MCE (reports and "events logged"), APEI, EDAC (UE and CE) and AER lines (:data:`_KINDS`, same narrow-acceptance rule: a whole-line
shape in printable ASCII, one matcher trigger, literal counts that pin where the per-line
``search`` lands; anything else goes to the per-line parser), then
:func:`reliab.io.formats.kernel._bulk_reports.kernel_sxid` for
the NVSwitch SXid reports (first and detail lines, all of a group's or none).

On a large kernel log most candidate lines are NVIDIA Xid reports written by rsyslog::

    2024-06-03T14:02:11.123456+00:00 node0421 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=…, name=…, text

:func:`kernel_xid` reads every line of exactly that shape in one polars pass per batch and
returns the other lines for :func:`reliab.io.formats.kernel.parse_kernel_line`.  The shape is
deliberately narrower than what the per-line parser accepts, so that wherever it matches
both give the same row:

* only printable ASCII (so ``\\s``, ``\\d``, ``str.strip`` and letter case mean the same in
  Rust and Python, and no ``\\r`` is left to strip);
* an RFC 3339 stamp with a year 1900–2259 (inside what a ``datetime64[ns]`` column holds),
  seconds 00–59, at most six fraction digits and
  an offset (``Z`` or ``±hh:mm``, hours < 24) — what :meth:`datetime.fromisoformat` reads
  the same way; a stamp polars cannot place in the calendar (``02-30``) goes to Python;
* ``host tag[[pid]]: `` directly followed by ``NVRM: Xid (``, so the message holds no
  printk time (no boot anchor) and the Xid is the first signal in the line;
* a PCI id as ``_PCI`` reads it and a code of at most nine digits followed by ``,`` or the
  end of the line; the optional ``pid=``/``name=`` fields are dropped as ``_PID_NAME`` does.

Rust's regex engine reports the same (leftmost-first) groups as Python's backtracking one;
``tests/test_prefilter.py`` checks bulk rows against the per-line parser.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._bulk_shapes import (
    _HEAD,
    _KINDS,
    _N,
    _P,
    _STAMP,
    _WORD,
    _g,
    _Plan,
)
from reliab.io.formats.kernel._bulk_time import with_time
from reliab.io.formats.kernel._kmsg import CRITICAL_XIDS, WARNING_XIDS
from reliab.io.formats.kernel._triggers import TRIGGERS as _TRIGGERS
from reliab.io.formats.kernel._triggers import with_mask

#: the whole accepted shape, without captures so that Rust can match it with a DFA
_SHAPE = (
    rf"^{_STAMP} {_WORD}+ {_WORD}+(?:\[[0-9]+\])?: ?"
    r"NVRM: Xid \( *(?:PCI:)?[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])? *\):? *"
    r"[0-9]{1,9}(?:,[ -~]*| *)$"
)
#: ``_PID_NAME`` of :mod:`reliab.io.formats.kernel._kmsg` (in ASCII ``\d`` is ``[0-9]``)
_PID_NAME = r"^(?:pid=(?:'<unknown>'|<unknown>|[0-9]+), *)?(?:name=(?:'[^']*'|[^,]*), *)?"


def kernel_xid(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Signal rows of the rsyslog ``NVRM: Xid`` lines among ``hits``, and the other hits.

    Lines of the accepted shape (:data:`_SHAPE`) are cut apart with literal splits, each
    of which lands where the per-line parser's expressions do on such a line: the stamp
    and host are the first two space-separated words, the PCI id sits between
    ``NVRM: Xid (`` and the first ``)``, the code before the first ``,`` after it.

    Parameters
    ----------
    hits : polars.DataFrame
        Candidate lines: ``i`` (0-based line number, ascending) and ``line``.
    ctx : LineContext
        The file's context; ``state["host"]`` is only read for the schema (every accepted
        line names its host).

    Returns
    -------
    rows, rest : polars.DataFrame
        ``rows`` has ``_lineno`` and the ``signals`` columns but ``origin``; ``rest`` is the
        part of ``hits`` left to the per-line parser.
    """
    rows = xid_rows(hits)
    return rows, rest_of(hits, rows.get_column("_lineno") - 1)


def rest_of(hits: pl.DataFrame, taken: pl.Series) -> pl.DataFrame:
    """The ``hits`` whose 0-based line number ``i`` is not in ``taken``, in their order."""
    if not taken.len():
        return hits
    return hits.filter(~pl.col("i").cast(pl.Int64).is_in(taken.cast(pl.Int64).implode()))


def xid_rows(hits: pl.DataFrame) -> pl.DataFrame:
    """The rows of :func:`kernel_xid` alone (in line order); the other hits are not copied."""
    line = pl.col("line")
    if "_mask" in hits.columns:  # only the lines holding ``NVRM: Xid`` are looked at
        hits = hits.filter((pl.col("_mask") & (1 << _TRIGGERS.index("NVRM: Xid"))) != 0)
    found = with_time(hits).lazy().filter(line.str.contains(_SHAPE)).with_columns(time=pl.col("_time")).filter(
        pl.col("time").is_not_null())
    words = line.str.splitn(" ", 3)
    xid = words.struct.field("field_2").str.splitn("NVRM: Xid (", 2).struct.field("field_1")
    pci = xid.str.splitn(")", 2)
    after = pci.struct.field("field_1").str.splitn(",", 2)
    code = after.struct.field("field_0").str.strip_chars(": ").cast(pl.Int64)
    return found.select(
        _lineno=pl.col("i").cast(pl.Int64) + 1,
        time="time",
        host=words.struct.field("field_1"),
        gpu=pci.struct.field("field_0").str.strip_chars(" ").str.strip_prefix("PCI:")
        .str.splitn(".", 2).struct.field("field_0").str.to_lowercase(),
        job_id=pl.lit(None, pl.String),
        source=pl.lit("kernel"),
        signal=pl.concat_str(pl.lit("xid:"), code.cast(pl.String)),
        severity=pl.when(code.is_in(sorted(CRITICAL_XIDS))).then(pl.lit("critical"))
        .when(code.is_in(sorted(WARNING_XIDS))).then(pl.lit("warning")).otherwise(pl.lit("error")),
        message=after.struct.field("field_1").str.strip_chars_start(" ").str.replace(_PID_NAME, "")
        .str.strip_chars(" ").fill_null(""),
    ).collect()




@cache
def _other_plans() -> tuple[_Plan, ...]:
    """Per :data:`_KINDS` shape: its filter, its groups, its acceptance and its row columns.

    Built once per process, so a call of :func:`kernel_other` only assembles a query.
    """
    line = pl.col("line")
    plans = []
    for kind in _KINDS:
        own = sum(1 << _TRIGGERS.index(t) for t in kind.own)
        cond = pl.lit(True)
        for text in kind.once:
            cond = cond & (line.str.count_matches(text, literal=True) == 1)
        for text in kind.absent:
            cond = cond & ~line.str.contains(text, literal=True)
        if kind.own == ("EDAC",):  # the shape is tested first, then cut apart without captures
            cond, groups = cond & pl.col("_printable") & line.str.contains(_EDAC_LEAD), _edac_groups()
        else:
            groups = line.str.extract_groups(f"{_HEAD}(?P<body>{kind.body})$")
        ok = _g("body").is_not_null() & ~_g("body").str.starts_with("[") & pl.col("time").is_not_null()
        if kind.accept is not None:
            ok = ok & kind.accept().fill_null(False)
        signal = pl.lit(kind.signal) if isinstance(kind.signal, str) else kind.signal()
        out = (
            (pl.col("i").cast(pl.Int64) + 1).alias("_lineno"), pl.col("time"), _g("host").alias("host"),
            pl.lit(None, pl.String).alias("gpu"), pl.lit(None, pl.String).alias("job_id"),
            pl.lit("kernel").alias("source"), signal.alias("signal"),
            kind.severity().alias("severity"), kind.message().alias("message"))
        plans.append((own, cond, groups, ok, out))
    return tuple(plans)


def _aer_plans() -> tuple[_Plan, ...]:
    """The plans of the AER shapes of :data:`_KINDS` alone."""
    return tuple(plan for plan, kind in zip(_other_plans(), _KINDS, strict=True) if kind.own == ("AER:",))


#: the EDAC shape of :data:`_KINDS` without captures (a DFA matches it; captures cost ~15 us a line)
_EDAC_SHAPE = (_HEAD.replace("(?P<host>", "(?:") + rf"EDAC (?:{_N}+ )?MC[0-9]+: [0-9]+ (?:UE|CE)(?-u:\b){_P}*$")
#: :data:`_EDAC_SHAPE` up to its printable tail ``{_P}*$``: a line has the shape exactly when it
#: matches this lead and is printable ASCII as a whole (the lead itself only matches printable
#: characters, so a character outside ``[ -~]`` is in the tail whatever the split).  The regex
#: then stops after the lead instead of reading the whole line (~3x cheaper on EDAC storms)
_EDAC_LEAD = _EDAC_SHAPE.removesuffix(f"{_P}*$")
#: the message starts after one word when the expression's optional word can be taken (it is tried first)
_EDAC_WORD = r"^[!-~]+ MC[0-9]+: [0-9]+ (?:UE|CE)(?-u:\b)"


def _edac_groups() -> pl.Expr:
    """The groups of the EDAC shape the row needs (``host``, ``body``, ``m``, ``t``) cut with literal splits.

    Only for lines of :data:`_EDAC_SHAPE` (the plan filters on it first): on such a line
    (printable ASCII, ``EDAC`` once) the host is the second
    word, and the message ``m`` runs from ``MC<n>`` to the end: right after ``EDAC `` or
    after one more word when :data:`_EDAC_WORD` matches there, as the optional word of the
    expression is tried first.  ``UE|CE`` (``t``) starts its third space-separated part.
    """
    line = pl.col("line")
    after = line.str.splitn("EDAC ", 2).struct.field("field_1")
    message = pl.when(after.str.contains(_EDAC_WORD)).then(after.str.splitn(" ", 2).struct.field("field_1")) \
        .otherwise(after)
    words = message.str.splitn(" ", 3)
    rest = words.struct.field("field_2")
    return pl.struct(host=line.str.splitn(" ", 3).struct.field("field_1"), body=after, m=message,
                     t=rest.str.slice(0, 2))


def kernel_other(hits: pl.DataFrame, ctx: LineContext,
                 plans: tuple[_Plan, ...] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Signal rows of the rsyslog mlx5, networkd, nvme, blk, MCE, EDAC and AER lines.

    Each shape of :data:`_KINDS` is a whole line: the rsyslog prefix of :func:`kernel_xid`
    with ``tag: `` (one space), then the message.  It requires the triggers and literal
    counts of its :class:`_Kind`, so that the per-line matcher that reads the line is the
    one of the shape and its ``search`` lands where the anchored expression does.  The
    message must not start with ``[`` (a printk time, which may anchor the boot time).

    Parameters
    ----------
    hits : polars.DataFrame
        Candidate lines: ``i`` (0-based line number, ascending) and ``line``.
    ctx : LineContext
        The file's context (not read: every accepted line names its host).

    Returns
    -------
    rows, rest : polars.DataFrame
        As for :func:`kernel_xid`.
    """
    hits = hits.rechunk()  # (polars 2.1 can panic on a string expression over a many-chunk frame)
    if "_mask" not in hits.columns:
        hits = with_mask(hits)
    if "_printable" not in hits.columns:
        hits = with_printable(hits)
    rows = other_rows(hits, plans).sort("_lineno")
    return rows, rest_of(hits, rows.get_column("_lineno") - 1)


def other_rows(hits: pl.DataFrame, plans: tuple[_Plan, ...] | None = None) -> pl.DataFrame:
    """The rows of :func:`kernel_other` alone, shape after shape (not in line order).

    ``hits`` carry ``_mask``; only the lines of a shape's mask are copied out of them.
    """
    plans = plans or _other_plans()
    # each shape requires its own triggers exactly: it only looks at the lines of that mask
    chosen = hits.filter(pl.col("_mask").is_in(sorted({plan[0] for plan in plans})))
    by_mask = with_time(chosen).partition_by(
        "_mask", as_dict=True, maintain_order=True)
    parts = [by_mask[(own,)].lazy().filter(cond).with_columns(_g=groups, time=pl.col("_time")).filter(ok).select(*out)
             for own, cond, groups, ok, out in plans if (own,) in by_mask]
    if not parts:
        return _no_rows()
    return pl.concat(parts, how="vertical_relaxed").collect()


def with_printable(hits: pl.DataFrame) -> pl.DataFrame:
    """``hits`` with ``_printable``: the line is printable ASCII (every byte in ``[ -~]``).

    Arrow's ``ascii_is_printable`` reads each string's bytes once, ~7x cheaper than a
    ``^[ -~]*$`` regex in polars (same answer, the empty string included).
    """
    import pyarrow.compute as pc

    printable = pc.ascii_is_printable(hits.get_column("line").to_arrow())
    return hits.with_columns(pl.Series("_printable", printable, dtype=pl.Boolean))


def _no_rows() -> pl.DataFrame:
    """An empty frame of bulk rows (``_lineno`` and the ``signals`` columns but ``origin``)."""
    return pl.DataFrame(schema={"_lineno": pl.Int64, "time": pl.Datetime("us", "UTC"), "host": pl.String,
                                "gpu": pl.String, "job_id": pl.String, "source": pl.String, "signal": pl.String,
                                "severity": pl.String, "message": pl.String})


def only_where(hits: pl.DataFrame, chosen: pl.Series, test: pl.Expr) -> pl.Series:
    """``test`` evaluated on the ``chosen`` rows of ``hits`` only; ``False`` on the others.

    A polars expression runs over every row of its frame (``when/then`` included), so a
    substring search that matters for a few lines is run on those lines alone.
    """
    out = pl.repeat(False, hits.height, eager=True)
    rows = chosen.arg_true()
    if rows.len():
        out = out.scatter(rows, hits.select("line")[rows].select(test).to_series())
    return out
