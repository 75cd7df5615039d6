"""Bulk decisions on candidate lines whose outcome is no row, or depends on the lines before them.

Two kinds of candidate lines of a large kernel log reached the per-line parser only because
the bulk parser (:mod:`reliab.io.formats.kernel._bulk`) had no shape for them:

* **noise** that holds a prefilter literal but carries no signal: driver start-up lines
  (``pcieport …: AER: enabled with IRQ 26``, ``EDAC MC0: Giving out device to module
  skx_edac …``, Linux ``drivers/pci/pcie/aer.c`` and ``drivers/edac/skx_base.c``) and the
  detail lines of an MCE report (``mce: [Hardware Error]: TSC 0 ADDR …``, ``PROCESSOR …``,
  ``arch/x86/kernel/cpu/mce/core.c`` ``__print_mce``).  :func:`noise` marks a line only when
  it holds exactly one matcher trigger and lacks the words that matcher's expression needs,
  so :func:`reliab.io.formats.kernel._kmsg.match_signal` provably returns ``None`` for it,
  and it holds neither the boot-time anchor nor ``The NVIDIA GPU``: the per-line parser
  would count it irrelevant without touching the file's state, and so does the bulk route.
* **AER reports**: a first line (``AER: Corrected error received: <src>``) and the
  ``<dev>: PCIe Bus Error: severity=…`` line after it (``aer_print_error``), which is part of
  the report when an AER line of a related device came at most ``AER_LINES`` lines before
  it.  :func:`aer_details` reads the severity lines of the common rsyslog shape column-wise;
  :func:`resolve_aer` then walks the group's AER lines in line order through the very rule
  the per-line parser applies (:func:`reliab.io.formats.kernel._reports.resolve_report`,
  which also keeps ``ctx.state["aer_heads"]`` for the next group).  That is exact only if
  every AER line of the group is decided here; :func:`reliab.io.formats.kernel._bulk.kernel_rows`
  checks it and otherwise leaves the reports to the per-line parser as before.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._bulk import _HEAD, _N, _TRIGGERS, _g, _when
from reliab.io.formats.kernel._clock import ANCHOR
from reliab.io.formats.kernel._kmsg import KernelSignal
from reliab.io.formats.kernel._reports import remember_aer, resolve_report

#: printable ASCII but the comma (``[^,]`` of ``_kmsg._AER_DETAIL`` on such a line)
_NO_COMMA = r"[ -+\--~]"
#: the severity line of an AER report after the rsyslog prefix; ``a`` is the word right
#: before ``: PCIe Bus Error``, as the per-line expression's leftmost match reads it
_DETAIL = (rf"{_HEAD}(?P<body>(?:{_N}+ )?(?P<a>{_N}+): PCIe Bus Error: severity=(?P<s>{_NO_COMMA}*)"
           rf"(?:,[ -~]*)?)$")


def _bit(trigger: str) -> int:
    return 1 << _TRIGGERS.index(trigger)


@cache
def noise() -> pl.Expr:
    """True for candidate lines the per-line parser counts irrelevant without a look at state.

    Needs the ``_mask`` column of :func:`reliab.io.formats.kernel._bulk._other_mask`.  Each
    case is one trigger alone (no other matcher runs) and the absence of a literal its
    matcher's expression cannot match without: ``received`` for ``_AER``, `` UE``/`` CE``
    for ``_EDAC`` (the count or ``MCn:`` is followed by a space), and for ``_mce`` the APEI
    head, "Machine check events logged" and ``Machine Check``.
    """
    line, mask = pl.col("line"), pl.col("_mask")

    def none_of(*texts: str) -> pl.Expr:
        return ~pl.any_horizontal([line.str.contains(t, literal=True) for t in texts])

    aer = (mask == _bit("AER:")) & none_of("received")
    edac = (mask == _bit("EDAC")) & none_of(" UE", " CE")
    mce = (mask == _bit("Hardware Error")) & none_of("APEI", "Machine check events logged", "Machine Check")
    return (aer | edac | mce) & none_of(ANCHOR)


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
    found = hits.lazy().filter(cond).with_columns(_g=groups, time=_when()).filter(ok).with_columns(_kind=kind)
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
    ``details`` from :func:`aer_details`.  Each line goes through
    :func:`reliab.io.formats.kernel._reports.resolve_report` (first lines are remembered, a
    severity line is dropped when it belongs to a report) with ``ctx.lineno`` set to it, so
    the rule and ``ctx.state["aer_heads"]`` are exactly the per-line parser's.
    """
    firsts = heads.select("_lineno", "message").iter_rows() if heads.height else ()
    events = sorted([(n, m, None, None) for n, m in firsts]
                    + list(details.select("_lineno", "message", "signal", "severity").iter_rows()))
    kept: list[tuple[int, str]] = []
    saved = ctx.lineno
    try:
        for lineno, message, signal, severity in events:
            if signal is None:
                remember_aer(ctx.state, lineno, message)
                continue
            ctx.lineno = lineno
            found = resolve_report(KernelSignal(signal, severity, message, part="aer_detail"), "", None, ctx)
            if found is not None:
                kept.append((lineno, found.message))
    finally:
        ctx.lineno = saved
    out = pl.DataFrame(kept, schema={"_lineno": pl.Int64, "message": pl.String}, orient="row")
    return details.drop("message").join(out, on="_lineno", how="inner", maintain_order="left").select(
        "_lineno", "time", "host", gpu=pl.lit(None, pl.String), job_id=pl.lit(None, pl.String),
        source=pl.lit("kernel"), signal="signal", severity="severity", message="message")
