"""Column-wise (polars) parsing of the commonest kernel signal line, for the fast route.

On a large kernel log most candidate lines are NVIDIA Xid reports written by rsyslog::

    2024-06-03T14:02:11.123456+00:00 node0421 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=…, name=…, text

:func:`kernel_xid` reads every line of exactly that shape in one polars pass per batch and
returns the other lines for :func:`reliab.ingest.kernel.parse_kernel_line`.  The shape is
deliberately narrower than what the per-line parser accepts, so that wherever it matches
both give the same row:

* only printable ASCII (so ``\\s``, ``\\d``, ``str.strip`` and letter case mean the same in
  Rust and Python, and no ``\\r`` is left to strip);
* an RFC 3339 stamp with a year 1900–2999, seconds 00–59, at most six fraction digits and
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

import polars as pl

from reliab.ingest._kmsg import CRITICAL_XIDS, WARNING_XIDS
from reliab.ingest._lines import LineContext

#: printable ASCII but space, ``:``, ``[`` and ``]`` (``[^\s:\[\]]`` of ``_TAG`` in ASCII)
_WORD = r"[!-9;-Z\\\^-~]"
#: the whole accepted shape, without captures so that Rust can match it with a DFA
_SHAPE = (
    r"^(?:19|2[0-9])[0-9]{2}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9]) "
    rf"{_WORD}+ {_WORD}+(?:\[[0-9]+\])?: ?"
    r"NVRM: Xid \( *(?:PCI:)?[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])? *\):? *"
    r"[0-9]{1,9}(?:,[ -~]*| *)$"
)
#: ``_PID_NAME`` of :mod:`reliab.ingest._kmsg` (in ASCII ``\d`` is ``[0-9]``)
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
    line = pl.col("line")
    stamp = line.str.splitn(" ", 3).struct.field("field_0")
    when = stamp.str.replace("Z", "+00:00", literal=True).str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%:z", time_unit="us", time_zone="UTC", strict=False)
    found = hits.with_columns(time=pl.when(line.str.contains(_SHAPE)).then(when))
    ok = pl.col("time").is_not_null()
    rest = found.filter(~ok).select("i", "line")
    if rest.height == hits.height:
        return found.head(0).select(_lineno=pl.col("i").cast(pl.Int64)), rest
    words = line.str.splitn(" ", 3)
    xid = words.struct.field("field_2").str.splitn("NVRM: Xid (", 2).struct.field("field_1")
    pci = xid.str.splitn(")", 2)
    after = pci.struct.field("field_1").str.splitn(",", 2)
    code = after.struct.field("field_0").str.strip_chars(": ").cast(pl.Int64)
    rows = found.filter(ok).select(
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
    )
    return rows, rest
