"""Kernel logs (dmesg, journal, rsyslog) -> ``signals`` (source ``"kernel"``).

One reader for every common capture of the kernel ring buffer; the timestamp style is
recognised per line by :func:`reliab.io.formats._timestamps.parse_header` (rsyslog RFC 3339,
``dmesg -T``, ``dmesg --time-format iso`` with or without ``--decode``, ``dmesg -H`` /
``--reltime``, ``journalctl -o short-iso``, ``-o short`` and ``-o short-precise``, RFC 5424,
OpenWrt ``logread``, a console logger's ``[date time][printk]``, raw printk seconds
since boot).  Lines without a year or a wall-clock time are completed by
:mod:`reliab.io.formats.kernel._clock` once the whole file is read.

Signals and the kernel messages they come from:

* ``xid:<code>``: ``NVRM: Xid (PCI:0000:18:00): 79, pid=…, name=…, <text>`` printed by the
  NVIDIA driver (format: NVIDIA "Xid Errors" docs; real captures in gpud testdata), with or
  without ``PCI:`` and ``pid=``/``name=``; ``gpu`` is the PCI id, ``message`` the free text.
  An NVRM "GPU has fallen off the bus" line without an Xid number is ``xid:79`` too, and
  the same event as an Xid 79 of that GPU printed just before it
  (:mod:`reliab.io.formats.kernel._reports`).
* ``sxid:<code>``: ``nvidia-nvswitchN: SXid (PCI:…): <code>, <Non-fatal|Fatal>, …``; the
  ``Severity …``/``Data {…}`` lines after it belong to the same report.
* ``nic:link_down`` (``mlx5_core <bdf> <if>: Link down``, mlx5 ``en_main.c``; Intel
  ``<if> NIC Link is Down``, ``igb_main.c``; phylib ``<if>: Link is Down``, ``phy.c``),
  ``nic:port_module_error`` (``Port module event[error]: …``, mlx5 ``events.c``),
  ``nic:health_compromised`` (mlx5 ``health.c`` "device's health compromised"),
  ``nic:lost_carrier`` (systemd-networkd "Lost carrier").
* ``nvme:controller_down`` (nvme ``core.c`` "controller is down; will reset"),
  ``block:io_error`` (``blk-core.c`` "I/O error, dev %s, sector %llu"),
  ``mce:hardware_error`` (``arch/x86/kernel/cpu/mce/core.c`` "CPU %d: Machine Check…"; the
  status line of an AMD record, ``drivers/edac/mce_amd.c`` "Deferred error, no action
  required." and the uncorrected ones),
  ``mce:events_logged`` ("Machine check events logged", ``mce_notify_irq``),
  ``apei:hardware_error`` (firmware-first report head "{N}[Hardware Error]: Hardware error from
  APEI Generic Hardware Error Source: <n>", ``drivers/acpi/apei/ghes.c``),
  ``edac:uncorrectable`` / ``edac:correctable`` (``edac_mc.c`` "EDAC MC%d: %d UE|CE …"),
  ``pcie:aer_fatal`` (``drivers/pci/pcie/aer.c`` "AER: Uncorrected (Fatal) error received").

Every other line is irrelevant, including the continuation lines of a multi-line report
(GSP RPC history tables, call traces).  A line that looks like a signal but cannot be read
(an Xid without a code, a signal line without a readable time) is malformed.  A signal line
without a timestamp of its own that starts with white space (dmesg indents the lines of a
multi-line record) takes the time of the timestamped line just before it.  An excerpt whose
date and host were cut away (``kernel: NVRM: Xid …``, no signal line of the file carries a
time) is read with the file's modification time, marked as inferred in the file's notes.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

import pandas as pd

from reliab.errors import InputFileError, ParseError
from reliab.io._files import head_lines
from reliab.io._lines import LineContext, Row, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._hostpath import host_from_path as path_host
from reliab.io.formats._timestamps import STYLE_WEIGHT, Header, parse_header, resolve_tz
from reliab.io.formats.kernel._clock import (
    ANCHOR,
    advance_reltime,
    boot_anchor,
    ordinal,
    reltime_stamp,
    resolve_times,
)
from reliab.io.formats.kernel._kmsg import CRITICAL_XIDS as CRITICAL_XIDS
from reliab.io.formats.kernel._kmsg import LITERALS, match_signal
from reliab.io.formats.kernel._kmsg import MAX_CODE_DIGITS as MAX_CODE_DIGITS
from reliab.io.formats.kernel._kmsg import WARNING_XIDS as WARNING_XIDS
from reliab.io.formats.kernel._reports import Clock, note_nvidia_gpu, resolve_report

if TYPE_CHECKING:
    import polars as pl

SOURCE = "kernel"
#: the start of kernel lines whose timestamp and host were cut away
_NO_CLOCK = ("kernel: ", "NVRM: ")
_STEM_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".log", ".txt", ".out", ".kmsg")


def host_from_path(path: str) -> str:
    """Host name implied by a per-host capture's path (``dmesg/node0421.log`` and
    ``node0421/dmesg.log`` -> node0421; :func:`reliab.io.formats._hostpath.host_from_path`)."""
    return path_host(path, _STEM_SUFFIXES)


#: timestamp styles whose lines carry a HOSTNAME field (RFC 3164 §4.1.2, rsyslog RFC 3339)
_HOST_STYLES = frozenset({"rfc3339", "rfc3164"})
#: a program tag right after the timestamp: the line has no host field (``kernel: …``)
_TAG_ONLY = re.compile(r"[^\s\[\]:]+(?:\[[0-9]+\])?:(?:\s|$)")


def unread_host_field(header: Header) -> str | None:
    """The host field of a syslog line that the host/tag pattern could not read, or ``None``.

    A line of a syslog style carries ``HOSTNAME TAG: MSG`` after its timestamp (RFC 3164
    §4.1.2).  When no host was read but the first word is not itself a tag (``kernel:``),
    that word is a host the pattern cannot read (``[2001:db8::7]``, ``node:7``): the row
    keeps the fallback host (``host=`` or the file name) and the file's notes say so,
    never silently.
    """
    if header.host is not None or header.style not in _HOST_STYLES:
        return None
    body = header.body.lstrip()
    if not body or _TAG_ONLY.match(body):
        return None
    return body.split(None, 1)[0][:80]


def _note_unread_hosts(rows: list[Row], ctx: LineContext) -> None:
    """One note for the signal rows whose host field could not be read."""
    pending = [(row, row["_host_unread"]) for row in rows if "_host_unread" in row and not row.get("_reject")]
    if not pending:
        return
    row, word = pending[0]
    origin = row.get("origin") or f"{ctx.path}:{row.get('_lineno', '?')}"
    ctx.state.setdefault("notes", []).append(
        f"{len(pending)} signal line(s) name a host this reader cannot read (first: {word!r} at"
        f" {origin}): their host is {row['host']!r} (the host= option, else the file name)")


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    """The kernel reader's whole-file step: host notes, then the times (``resolve_times``)."""
    _note_unread_hosts(rows, ctx)
    return resolve_times(rows, ctx)


#: the first character of every line :func:`parse_header` reads a time from: ``[`` (printk,
#: ``dmesg -T``/``--reltime``), ``<`` (RFC 5424/3164 PRI), a digit (ISO, ``/dev/kmsg``, the
#: ``dmesg --decode`` facility) or a letter (RFC 3164 month, the facility); no other line can
_STAMP_START = re.compile(r"[\[<]|[^\W_]")


def _stamp_weight(line: str) -> float:
    """The sniffing weight of one line: its timestamp style's, if the time reads cleanly and
    a message follows it, else 0 (decided without :func:`parse_header` for a line that
    cannot start with a timestamp)."""
    if _STAMP_START.match(line) is None:
        return 0.0
    h = parse_header(line, tail=False)
    return STYLE_WEIGHT[h.style] if h.error is None and h.body.strip() else 0.0


def sniff_kernel(path: str, first_lines: list[str] | tuple[str, ...]) -> float:
    """Confidence that ``path`` is a kernel/syslog capture, from its first lines.

    At least half of the non-blank lines must start with a readable timestamp of one of
    the supported styles; CSV rows that merely start with an ISO date do not count.
    """
    lines = [ln for ln in first_lines if ln.strip()]
    if not lines:
        return 0.0
    if sum(ln.startswith(_NO_CLOCK) for ln in lines) * 2 >= len(lines):
        return 0.5  # a kernel excerpt whose date (and host) were cut away
    hits: list[float] = []
    misses = 0
    weights: dict[str, float] = {}  # a head often repeats a line (dmesg): each is weighed once
    for ln in lines:
        weight = weights.get(ln)
        if weight is None:
            weight = weights[ln] = _stamp_weight(ln)
        if weight > 0:
            hits.append(weight)
            continue
        misses += 1
        if misses * 2 > len(lines):  # fewer than half can still read: the score is 0 whatever follows
            return 0.0
    frac = len(hits) / len(lines)
    if frac < 0.5:
        return 0.0
    bonus = 0.05 if any("kernel" in ln or "NVRM" in ln for ln in lines) else 0.0
    return min(1.0, frac * max(hits) + bonus)


def _clock(header: Header, ctx: LineContext, rel: tuple | None) -> Clock:
    """A comparable clock of a line, for the bus-drop rule of ``_reports``."""
    if header.when is not None:
        return ("t", header.when.timestamp())
    if rel is not None:
        return ("p", ordinal(rel[0]) + rel[1])
    if header.partial is not None:
        return ("p", float(ordinal(header.partial)))
    if header.monotonic is not None:
        return ("m", header.monotonic)
    return None


def _continued(header: Header, text: str, ctx: LineContext) -> Header:
    """An indented line without a timestamp takes the time of the line just before it.

    The last header is kept as a :class:`Header` (or as the text of its line, read here only
    when an indented line needs it).
    """
    last = ctx.state.get("last_head")
    if header.style != "none" or not text[:1].isspace() or last is None or ctx.lineno - last[0] > 3:
        return header
    head = last[1] if isinstance(last[1], Header) else parse_header(last[1], ctx.state["tz"])
    return replace(head, message=text.strip(), body=text.strip())


def _remember(header: Header, ctx: LineContext) -> None:
    """Anchors read from any line the parser looks at: boot time, first year, last time."""
    if "boot" not in ctx.state:
        anchor = boot_anchor(header, ctx)
        if anchor is not None:
            ctx.state["boot"] = anchor
    if header.when is not None:
        at = ctx.state.get("first_year_at")
        if at is None or ctx.lineno < at[0]:  # the bulk parser may have seen a later line
            ctx.state["first_year_at"] = (ctx.lineno, header.when.astimezone(ctx.state["tz"]).year)
    if header.style != "none" and header.error is None:
        ctx.state["last_head"] = (ctx.lineno, header)


def parse_kernel_line(text: str, ctx: LineContext) -> Row | None:
    """One kernel-log line -> a signal row, ``None`` (irrelevant) or :class:`ParseError`.

    The signal is matched first (cheap substring tests), so noise that passed the byte
    prefilter is never split into timestamp, host and tag.  Boot-time and year anchors are
    therefore read from signal lines and the rtc ``setting system clock`` line.  In a
    ``dmesg --reltime`` capture every line is read, since each one advances the clock.
    Rows whose time needs the whole file (RFC 3164 and reltime without a year, printk
    seconds since boot) carry ``_partial``/``_offset``/``_mono`` and are completed by
    :func:`reliab.io.formats.kernel._clock.resolve_times`.
    """
    st = ctx.state
    reltime = st.get("reltime", False)
    header = parse_header(text, st["tz"]) if reltime else None
    if header is not None:
        advance_reltime(header, ctx)
    found = match_signal(text)
    if found is None and ANCHOR not in text and "The NVIDIA GPU" not in text:
        return None
    if header is None:
        header = parse_header(text, st["tz"])
    header = _continued(header, text, ctx)
    _remember(header, ctx)
    if found is None:
        note_nvidia_gpu(text, ctx)
        return None
    noclock = header.style == "none" and text.startswith(_NO_CLOCK)
    if header.error is not None and not noclock:
        raise ParseError(f"{found.signal} line with {header.error}")
    rel = reltime_stamp(ctx) if header.style == "dmesg_reltime" else None
    host = header.host or st["host"]
    unread_host = None if header.host else unread_host_field(header)
    found = resolve_report(found, host, _clock(header, ctx, rel), ctx)
    if found is None:
        return None  # the rest of a report already counted
    row: Row = {
        "time": header.when, "host": host, "gpu": found.gpu,
        "job_id": None, "source": SOURCE, "signal": found.signal, "severity": found.severity,
        "message": found.message,
    }
    if unread_host is not None:
        row["_host_unread"] = unread_host  # kept with the fallback host, said in the notes
    start = st.pop("report_start", None)
    if start is not None:  # a report printed over several lines: its event is at its first line
        row["origin"] = f"{ctx.path}:{start}"
    if header.when is None:
        row["_text"] = text[:2000]
        if noclock:
            row["_noclock"] = True
        elif header.style == "dmesg_reltime" and rel is None:
            row["_pre"] = st.get("rel_total", 0.0)  # before the first minute line
        elif rel is not None:
            row["_partial"], row["_offset"] = rel
        elif header.partial is not None:
            row["_partial"] = header.partial
            if header.fraction:  # ``-o short-precise`` microseconds, added once the year is known
                row["_offset"] = header.fraction
        elif header.monotonic is not None:
            row["_mono"] = header.monotonic
    return row


def _bulk_xid(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Bulk parser of the fast route (imports polars only when a large file needs it)."""
    from reliab.io.formats.kernel._bulk_route import kernel_rows

    return kernel_rows(hits, ctx)


#: how every ``dmesg --reltime`` line starts (``[  +0.000001]``, ``[Jun26 06:24]``), after the
#: ``facility:level :`` columns of ``--decode``: lines that do not are never parsed to find out
_RELTIME_START = re.compile(r"(?:[a-z0-9]+\s*:\s*[a-z]+\s*: )?\[(?: *\+|[A-Z][a-z]{2}[0-9]{2} )")


def _is_reltime(path: str) -> bool:
    """Whether the file starts like ``dmesg --reltime`` output (then every line is read)."""
    try:
        head = head_lines(path, 20)
    except (InputFileError, OSError, ValueError):
        return False  # the line scan reports the file's problem
    return any(_RELTIME_START.match(line) and parse_header(line).style == "dmesg_reltime" for line in head)


@register_parser(SOURCE, sniff=sniff_kernel, table="signals")
def read_kernel(
    path: str,
    *,
    year: int | None = None,
    tz: str | tzinfo | None = None,
    boot_time: str | datetime | pd.Timestamp | None = None,
    host: str | None = None,
    strict: bool = False,
) -> FileResult:
    """Kernel logs (dmesg, journalctl, rsyslog): NVRM Xid, SXid, mlx5, nvme, MCE, EDAC, AER.

    Parameters
    ----------
    path : str
        Log file, optionally gzip/bz2/xz/zstd compressed.
    year : int, optional
        Year of the first line printed without one (RFC 3164 ``Jun  3 14:02:11 …``,
        ``dmesg --reltime`` ``[Jun26 06:24]``); otherwise the year of the file's other dated
        lines, else inferred from the file's mtime (said in the file's notes).
    tz : str or tzinfo, optional
        Zone of times printed without an offset (``dmesg -T``, ``--reltime``, RFC 3164);
        default UTC.
    boot_time : str, datetime or Timestamp, optional
        Boot time for raw ``dmesg`` lines (``[12345.678901] msg``).  Without it, the
        rtc line ``setting system clock to … UTC (<epoch>)`` or a line carrying both a
        wall-clock and a printk time anchors the boot; failing that such lines are malformed.
    host : str, optional
        Host for lines that name none (default: the file name stem).
    strict : bool
        Raise :class:`~reliab.errors.ParseError` at the first malformed line.

    Returns
    -------
    FileResult
        ``tables["signals"]`` plus accounting and quarantine.
    """
    if year is not None and not isinstance(year, int):
        raise TypeError(f"year must be an int, not {type(year).__name__}")
    reltime = _is_reltime(path)
    state = {"tz": resolve_tz(tz), "host": host or host_from_path(path), "reltime": reltime}
    options = {"year": year, "boot_time": boot_time}
    return scan_lines(path, SOURCE, parse_kernel_line, literals=None if reltime else LITERALS,
                      options=options, state=state, strict=strict, finish=_finish,
                      bulk=None if reltime else _bulk_xid)
