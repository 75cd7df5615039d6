"""Bulk decisions on candidate lines whose outcome is no row, or depends on the lines before them.

Two kinds of candidate lines of a large kernel log reached the per-line parser only because
the bulk parser (:mod:`reliab.io.formats.kernel._bulk`) had no shape for them:

* **noise** that holds a prefilter literal but carries no signal: driver start-up lines
  (``pcieport …: AER: enabled with IRQ 26``, ``EDAC MC0: Giving out device to module
  skx_edac …``, Linux ``drivers/pci/pcie/aer.c`` and ``drivers/edac/skx_base.c``) and the
  detail lines of an MCE report (``mce: [Hardware Error]: TSC 0 ADDR …``, ``PROCESSOR …``,
  ``arch/x86/kernel/cpu/mce/core.c`` ``__print_mce``).  :func:`quiet_of` marks a line only when
  it holds exactly one matcher trigger and lacks the words that matcher's expression needs,
  so :func:`reliab.io.formats.kernel._kmsg.match_signal` provably returns ``None`` for it,
  and it holds neither the boot-time anchor nor ``The NVIDIA GPU``: the per-line parser
  would count it irrelevant without touching the file's state, and so does the bulk route.
* **AER reports**: a first line (``AER: Corrected error received: <src>``) and the
  ``<dev>: PCIe Bus Error: severity=…`` line after it (``aer_print_error``), which is part of
  the report when an AER line of a related device came at most ``AER_LINES`` lines before
  it.  :func:`aer_details` reads the severity lines of the common rsyslog shape column-wise;
  :func:`resolve_aer` then walks the group's AER lines in line order through the very rule
  the per-line parser applies (:func:`reliab.io.formats.kernel._reports.remember_aer` and
  :func:`~reliab.io.formats.kernel._reports.aer_detail_seen`, which also keep ``ctx.state["aer_heads"]`` for the next group).  That is exact only if
  every AER line of the group is decided here; :func:`aer_in_bulk` checks it and otherwise
  leaves the reports to the per-line parser as before.

:func:`kernel_sxid` decides NVSwitch SXid reports (first and detail lines) the same way, all
of a group's or none.  :func:`reliab.io.formats.kernel._bulk_route.kernel_rows` runs them all.
"""

from __future__ import annotations

import re
from functools import cache

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._bulk import (
    _HEAD,
    _N,
    _P,
    _TRIGGERS,
    _aer_plans,
    _g,
    _no_rows,
    kernel_other,
    only_where,
)
from reliab.io.formats.kernel._bulk_time import with_time
from reliab.io.formats.kernel._clock import ANCHOR
from reliab.io.formats.kernel._reports import (
    UNSEEN_FIRST,
    aer_detail_seen,
    aer_parties,
    remember_aer,
)
from reliab.io.formats.kernel._triggers import with_mask

#: printable ASCII but the comma (``[^,]`` of ``_kmsg._AER_DETAIL`` on such a line)
_NO_COMMA = r"[ -+\--~]"
#: the severity line of an AER report after the rsyslog prefix; ``a`` is the word right
#: before ``: PCIe Bus Error``, as the per-line expression's leftmost match reads it
_DETAIL = (rf"{_HEAD}(?P<body>(?:{_N}+ )?(?P<a>{_N}+): PCIe Bus Error: severity=(?P<s>{_NO_COMMA}*)"
           rf"(?:,[ -~]*)?)$")


def _bit(trigger: str) -> int:
    return 1 << _TRIGGERS.index(trigger)


#: per trigger that can stand alone on a noise line, the literals whose absence makes it noise
_NOISE = (("AER:", ("received",)), ("EDAC", (" UE", " CE")),
          ("Hardware Error", ("APEI", "Machine check events logged", "Machine Check",
                              # an AMD machine-check record's status line (``_kmsg._AMD_STATUS``)
                              "Deferred error", "System Fatal error", "Uncorrected, software")))


def _none_of(*texts: str) -> pl.Expr:
    """True where the line holds none of ``texts`` (one pass: a SIMD search of their alternation)."""
    return ~pl.col("line").str.contains("|".join(re.escape(t) for t in texts))


def quiet_of(hits: pl.DataFrame) -> pl.Series:
    """True for candidate lines the per-line parser counts irrelevant without a look at state.

    Needs the ``_mask`` column (:func:`reliab.io.formats.kernel._triggers.with_mask`).  Each
    case is one trigger alone (no other matcher runs) and the absence of a literal its
    matcher's expression cannot match without: ``received`` for ``_AER``, `` UE``/`` CE``
    for ``_EDAC`` (the count or ``MCn:`` is followed by a space), and for ``_mce`` the APEI
    head, "Machine check events logged", ``Machine Check`` and the status wordings of an AMD
    record (``drivers/edac/mce_amd.c``); and the line must not hold
    the boot-time anchor.  Each search runs on the lines it can still decide: the literals
    of a case on the lines of its trigger, the anchor on the lines a case made noise.
    """
    mask = hits.get_column("_mask")
    quiet = pl.repeat(False, hits.height, eager=True)
    for trigger, texts in _NOISE:
        quiet = quiet | only_where(hits, mask == _bit(trigger), _none_of(*texts))
    if quiet.any():
        quiet = only_where(hits, quiet, _none_of(ANCHOR))
    return quiet.alias("_quiet")


@cache
def _detail_plan() -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """The filter, groups and acceptance of the severity-line shape."""
    line = pl.col("line")
    cond = (pl.col("_mask") == _bit("PCIe Bus Error")) & (line.str.count_matches("PCIe Bus Error", literal=True) == 1)
    ok = _g("body").is_not_null() & ~_g("body").str.starts_with("[") & pl.col("time").is_not_null()
    return cond, line.str.extract_groups(_DETAIL), ok


def aer_details(hits: pl.DataFrame) -> pl.DataFrame:
    """The AER severity lines of the common shape among ``hits`` (which carry ``_mask``).

    Columns ``i``, ``_lineno``, ``time``, ``host``, ``signal``, ``severity`` and ``message``
    (``<dev>: PCIe Bus Error: severity=<sev>``) as ``_kmsg._aer_detail`` makes them; lines
    whose severity names none of the three kinds are left out (they are no AER line).
    """
    cond, groups, ok = _detail_plan()
    hits = hits.rechunk()  # (polars 2.1 can panic on a string expression over a many-chunk frame)
    sev = _g("s").str.strip_chars(" ")
    kind = (pl.when(sev.str.contains("(Fatal)", literal=True)).then(pl.lit("fatal"))
            .when(sev.str.contains("Non-Fatal", literal=True)).then(pl.lit("non-fatal"))
            .when(sev.str.starts_with("Correct")).then(pl.lit("corrected")))
    found = with_time(hits).lazy().filter(cond).with_columns(_g=groups, time=pl.col("_time")).filter(ok).with_columns(_kind=kind)
    return found.filter(pl.col("_kind").is_not_null()).select(
        "i", _lineno=pl.col("i").cast(pl.Int64) + 1, time="time", host=_g("host"),
        signal=pl.col("_kind").replace_strict({"fatal": "pcie:aer_fatal", "non-fatal": "pcie:aer_nonfatal",
                                              "corrected": "pcie:aer_corrected"}),
        severity=pl.col("_kind").replace_strict({"fatal": "critical", "non-fatal": "error", "corrected": "warning"}),
        message=pl.format("{}: PCIe Bus Error: severity={}", _g("a"), sev),
    ).collect()


def resolve_aer(heads: pl.DataFrame, details: pl.DataFrame, ctx: LineContext) -> pl.DataFrame:
    """Rows of the severity lines that stand for their own event, walking the AER lines in order.

    ``heads`` are the bulk rows of the group's AER first lines (``_lineno``, ``message``),
    ``details`` from :func:`aer_details`.  Each line goes through the functions the
    per-line parser's ``resolve_report`` calls (:func:`reliab.io.formats.kernel._reports.remember_aer`
    for a first line, :func:`~reliab.io.formats.kernel._reports.aer_detail_seen` for a severity
    line, dropped when it belongs to a report), so the rule and ``ctx.state["aer_heads"]`` are
    exactly the per-line parser's.
    """
    firsts = heads.select("_lineno", "message", _detail=pl.lit(False))
    events = pl.concat([firsts, details.select("_lineno", "message", _detail=pl.lit(True))]).sort("_lineno")
    kept: list[tuple[int, str]] = []
    state = ctx.state
    known: dict[str, tuple[str | None, str | None]] = {}  # (a storm repeats a few messages: each read once)
    for lineno, message, detail in events.iter_rows():
        parties = known.get(message)
        if parties is None:
            parties = known[message] = aer_parties(message)
        if not detail:
            remember_aer(state, lineno, message, parties)
        elif not aer_detail_seen(state, lineno, message, parties):
            kept.append((lineno, message + UNSEEN_FIRST))
    out = pl.DataFrame(kept, schema={"_lineno": pl.Int64, "message": pl.String}, orient="row")
    return details.drop("message").join(out, on="_lineno", how="inner", maintain_order="left").select(
        "_lineno", "time", "host", gpu=pl.lit(None, pl.String), job_id=pl.lit(None, pl.String),
        source=pl.lit("kernel"), signal="signal", severity="severity", message="message")


def merge(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Row frames in line order (the first one when all are empty)."""
    full = [f for f in frames if f.height]
    if not full:
        return frames[0]
    return (full[0] if len(full) == 1 else pl.concat(full, how="vertical_relaxed")).sort("_lineno")


def aer_in_bulk(hits: pl.DataFrame, always: pl.Series, tail: pl.Series,
                 ctx: LineContext) -> tuple[pl.Series, pl.DataFrame] | None:
    """The group's AER lines and their rows, when every one of them is decided in bulk.

    That is when none but those of the tail is held (the tail's follow in line order, after
    the bulk rows) and each of the others is a first line of a :data:`_KINDS` AER shape or
    a severity line of :func:`aer_details`; ``None`` otherwise (then the
    reports go to the per-line parser as before).  ``ctx.state["aer_heads"]`` is updated.
    """
    line = pl.col("line")
    aer = (hits.get_column("_aer") if "_aer" in hits.columns else
           hits.select(line.str.contains("AER:", literal=True) | line.str.contains("PCIe Bus Error", literal=True)
                       ).to_series())
    if not aer.any():
        return aer, _no_rows()
    if (aer & always & ~tail).any():
        return None
    lines = hits.filter(aer & ~always)
    heads, rest = kernel_other(lines, ctx, plans=_aer_plans())
    details = aer_details(rest)
    if heads.height + details.height != lines.height:
        return None
    return aer & ~always, merge([heads, resolve_aer(heads, details, ctx)])


#: an NVSwitch SXid line (first or detail line of a report) after the rsyslog prefix of :data:`_HEAD`
_SXID_BODY = (rf"(?P<a>nvidia-nvswitch[0-9]+): SXid \((?P<b>[^)]*)\):? *(?P<c>[0-9]{{1,9}})(?:, *| *$)"
              rf"(?P<d>{_P}*)")
#: the start of a detail line's text (``_SXID_DETAIL`` of ``_kmsg``)
_SXID_DETAIL = r"^(?:Severity [0-9]+ Engine instance|Data \{)"


@cache
def _sxid_plan() -> tuple[pl.Expr, pl.Expr]:
    """The filter of the SXid shape (its trigger alone, ``SXid`` and the switch name once) and its groups."""
    line = pl.col("line")
    cond = ((pl.col("_mask") == (1 << _TRIGGERS.index("SXid")))
            & (line.str.count_matches("SXid", literal=True) == 1)
            & (line.str.count_matches("nvidia-nvswitch", literal=True) == 1))
    return cond, line.str.extract_groups(f"{_HEAD}(?P<body>{_SXID_BODY})$")


def kernel_sxid(hits: pl.DataFrame, ctx: LineContext, sxid_lines: int) -> tuple[pl.DataFrame, pl.Series]:
    """Signal rows of the rsyslog NVSwitch SXid reports among ``hits``, and the other hits.

    A report is its first line and ``Severity …``/``Data {…}`` detail lines of the same
    switch and code (:mod:`reliab.io.formats.kernel._reports`): a detail line is no row when
    the last first line of its switch and code came at most ``_SXID_LINES`` lines before it
    (earlier groups' first lines are read from ``ctx.state["sxid_open"]``, which this call
    updates as the per-line parser would), else it stands for its event.  Those rules look
    at every SXid line in order, so the lines are taken all or none: only when every one of
    the group's ``sxid_lines`` lines holding ``SXid`` has the shape (none held back for the
    per-line parser) and the table of open reports cannot overflow.

    Parameters
    ----------
    hits : polars.DataFrame
        Candidate lines left by the other shapes: ``i`` (0-based line number) and ``line``.
    ctx : LineContext
        The file's context: ``state["sxid_open"]`` is read and updated.
    sxid_lines : int
        Lines of the whole group that hold ``SXid``.

    Returns
    -------
    rows : polars.DataFrame
        As for :func:`kernel_xid`, not in line order.
    taken : polars.Series
        The ``i`` of every line decided here (detail lines of a report already counted
        have no row, and are no longer candidates either).
    """
    from reliab.io.formats.kernel._reports import _MAX_OPEN_SXID, _SXID_LINES

    hits = hits.rechunk()  # (see kernel_other)
    none = (_no_rows(), pl.Series("i", [], pl.Int64))
    if not sxid_lines:
        return none
    cond, groups = _sxid_plan()
    own = hits if "_mask" in hits.columns else with_mask(hits)
    own = own.filter(pl.col("_mask") == (1 << _TRIGGERS.index("SXid")))  # (an integer test first: cheap)
    if own.height != sxid_lines:  # some are held back for the per-line parser: all go there
        return none
    found = (with_time(own).lazy().filter(cond).with_columns(_g=groups, time=pl.col("_time"))
             .filter(_g("body").is_not_null() & pl.col("time").is_not_null()).collect())
    opened: dict[tuple[str, str], int] = ctx.state.get("sxid_open", {})
    if found.height != sxid_lines or len(opened) + found.height >= _MAX_OPEN_SXID:
        return none
    text = _g("d").str.strip_chars(" ")
    where = pl.format("{} ({})", _g("a"), _g("b"))
    message = pl.format("{}: {}", where, text)
    signal = pl.concat_str(pl.lit("sxid:"), _g("c").cast(pl.Int64).cast(pl.String))
    detail = text.str.contains(_SXID_DETAIL)
    lineno = pl.col("i").cast(pl.Int64) + 1
    known = {f"{k[0]}\x00{k[1]}": v for k, v in opened.items()}
    frame = found.with_columns(_lineno=lineno, _message=message, signal=signal, _detail=detail, _text=text).with_columns(
        _key=pl.concat_str(pl.col("_message").str.splitn(":", 2).struct.field("field_0"), pl.lit("\x00"),
                           pl.col("signal")))
    frame = frame.with_columns(
        _first=pl.when(~pl.col("_detail")).then(pl.col("_lineno")).forward_fill().over("_key"),
        _known=pl.col("_key").replace_strict(known, default=None, return_dtype=pl.Int64))
    first = pl.coalesce(pl.col("_first"), pl.col("_known"))
    counted = pl.col("_detail") & first.is_not_null() & ((pl.col("_lineno") - first) <= _SXID_LINES)
    low = pl.col("_text").str.to_lowercase()
    fatal = pl.when(pl.col("_detail")).then(pl.col("_text").str.extract(r"^Severity ([0-9]+)", 1) == "1") \
        .otherwise(low.str.starts_with("fatal") | low.str.contains(", fatal", literal=True)).fill_null(False)
    rows = frame.filter(~counted).select(
        "_lineno", "time", host=_g("host"), gpu=pl.lit(None, pl.String), job_id=pl.lit(None, pl.String),
        source=pl.lit("kernel"), signal="signal",
        severity=pl.when(fatal).then(pl.lit("critical")).otherwise(pl.lit("warning")),
        message=pl.when(pl.col("_detail")).then(pl.format("{} (first line of the report not in the capture)",
                                                           pl.col("_message"))).otherwise(pl.col("_message")))
    opened = ctx.state.setdefault("sxid_open", opened)
    for text_, key, line_no in frame.filter(~pl.col("_detail")).select("_message", "signal", "_lineno").iter_rows():
        opened[(text_.split(":", 1)[0], key)] = line_no  # in line order, as _reports._sxid_first does
    return rows, found.get_column("i").cast(pl.Int64)
