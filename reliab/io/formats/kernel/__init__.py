"""Kernel logs (dmesg, journal, rsyslog) -> ``signals`` (source ``"kernel"``).

One reader for every common capture of the kernel ring buffer; the timestamp style is
recognised per line by :func:`reliab.io.formats._timestamps.parse_header` (rsyslog RFC 3339,
``dmesg -T``, ``dmesg --time-format iso`` with or without ``--decode``, ``journalctl -o
short-iso`` and ``-o short``, RFC 5424, raw printk seconds since boot).

Signals and the kernel messages they come from (domain.md §5):

* ``xid:<code>``: ``NVRM: Xid (PCI:0000:18:00): 79, pid=…, name=…, <text>`` printed by the
  NVIDIA driver (format: NVIDIA "Xid Errors" docs; real captures in gpud testdata), with or
  without ``PCI:`` and ``pid=``/``name=``; ``gpu`` is the PCI id, ``message`` the free text.
* ``sxid:<code>``: ``nvidia-nvswitchN: SXid (PCI:…): <code>, <Non-fatal|Fatal>, …``.
* ``nic:link_down`` (``mlx5_core <bdf> <if>: Link down``, mlx5 ``en_main.c``),
  ``nic:port_module_error`` (``Port module event[error]: …``, mlx5 ``events.c``),
  ``nic:health_compromised`` (mlx5 ``health.c`` "device's health compromised"),
  ``nic:lost_carrier`` (systemd-networkd "Lost carrier").
* ``nvme:controller_down`` (nvme ``core.c`` "controller is down; will reset"),
  ``block:io_error`` (``blk-core.c`` "I/O error, dev %s, sector %llu"),
  ``mce:hardware_error`` (``arch/x86/kernel/cpu/mce/core.c`` "CPU %d: Machine Check…"),
  ``edac:uncorrectable`` (``edac_mc.c`` "EDAC MC%d: %d UE …"),
  ``pcie:aer_fatal`` (``drivers/pci/pcie/aer.c`` "AER: Uncorrected (Fatal) error received").

Every other line is irrelevant, including the continuation lines of a multi-line report
(GSP RPC history tables, call traces).  A line that looks like a signal but cannot be read
(an Xid without a code, a signal line without a readable time) is malformed.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from reliab.errors import ParseError
from reliab.io._lines import LineContext, Row, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._timestamps import STYLE_WEIGHT, Header, localize, parse_header, resolve_tz
from reliab.io.formats.kernel._kmsg import LITERALS, match_signal

if TYPE_CHECKING:
    import polars as pl

SOURCE = "kernel"
_STEM_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".log", ".txt", ".out", ".kmsg")
_ANCHOR = "setting system clock to "


def host_from_path(path: str) -> str:
    """Host name implied by a per-host capture's file name (``dmesg/node0421.log`` -> node0421)."""
    name = Path(path).name
    changed = True
    while changed:
        changed = False
        for suffix in _STEM_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def sniff_kernel(path: str, first_lines: list[str] | tuple[str, ...]) -> float:
    """Confidence that ``path`` is a kernel/syslog capture, from its first lines.

    At least half of the non-blank lines must start with a readable timestamp of one of
    the supported styles; CSV rows that merely start with an ISO date do not count.
    """
    lines = [ln for ln in first_lines if ln.strip()]
    if not lines:
        return 0.0
    headers = [parse_header(ln) for ln in lines]
    # a line counts only if its timestamp reads cleanly and a message follows it
    weights = [STYLE_WEIGHT[h.style] if h.error is None and h.body.strip() else 0.0 for h in headers]
    hits = [w for w in weights if w > 0]
    frac = len(hits) / len(lines)
    if frac < 0.5:
        return 0.0
    bonus = 0.05 if any("kernel" in ln or "NVRM" in ln for ln in lines) else 0.0
    return min(1.0, frac * max(hits) + bonus)


def _boot_anchor(header: Header) -> datetime | None:
    """Boot time implied by a line that carries both a wall-clock and a printk time."""
    if header.monotonic is None:
        return None
    if header.when is not None:
        return header.when - timedelta(seconds=header.monotonic)
    at = header.message.find(_ANCHOR)
    if at >= 0:
        tail = header.message[at + len(_ANCHOR):]
        open_, close = tail.find("("), tail.find(")")
        if 0 <= open_ < close and tail[open_ + 1:close].isdigit():
            epoch = datetime.fromtimestamp(int(tail[open_ + 1:close]), tz=UTC)
            return epoch - timedelta(seconds=header.monotonic)
    return None


def parse_kernel_line(text: str, ctx: LineContext) -> Row | None:
    """One kernel-log line -> a signal row, ``None`` (irrelevant) or :class:`ParseError`.

    The signal is matched first (cheap substring tests), so noise that passed the byte
    prefilter is never split into timestamp, host and tag.  Boot-time and year anchors are
    therefore read from signal lines and the rtc ``setting system clock`` line.
    Rows whose time needs the whole file (RFC 3164 without a year, printk seconds since
    boot) carry ``_partial``/``_mono`` and are completed by :func:`_finish`.
    """
    found = match_signal(text)
    if found is None and _ANCHOR not in text:
        return None
    header = parse_header(text, ctx.state["tz"])
    if "boot" not in ctx.state:
        anchor = _boot_anchor(header)
        if anchor is not None:
            ctx.state["boot"] = anchor
    if header.when is not None:
        at = ctx.state.get("first_year_at")
        if at is None or ctx.lineno < at[0]:  # the bulk parser may have seen a later line
            ctx.state["first_year_at"] = (ctx.lineno, header.when.astimezone(ctx.state["tz"]).year)
    if found is None:
        return None
    if header.error is not None:
        raise ParseError(f"{found.signal} line with {header.error}")
    row: Row = {
        "time": header.when, "host": header.host or ctx.state["host"], "gpu": found.gpu,
        "job_id": None, "source": SOURCE, "signal": found.signal, "severity": found.severity,
        "message": found.message,
    }
    if header.when is None:
        row["_text"] = text[:2000]
        if header.partial is not None:
            row["_partial"] = header.partial
        elif header.monotonic is not None:
            row["_mono"] = header.monotonic
    return row


def _boot_time(ctx: LineContext) -> datetime | None:
    given = ctx.options.get("boot_time")
    if given is None:
        return ctx.state.get("boot")
    return localize(pd.Timestamp(given), ctx.state["tz"]).to_pydatetime()


def _resolve_monotonic(rows: list[Row], ctx: LineContext) -> None:
    boot = _boot_time(ctx)
    for row in rows:
        if "_mono" not in row:
            continue
        if boot is None:
            row["_reject"] = (f"{row['signal']} line stamped {row['_mono']:.6f} s since boot, but the"
                              " boot time is unknown: pass boot_time= or keep the rtc 'setting"
                              " system clock' line in the capture")
        else:
            row["time"] = boot + timedelta(seconds=row["_mono"])


def _ordinal(p: tuple[int, int, int, int, int]) -> int:
    mon, day, hh, mm, ss = p
    return (((mon * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss


def _resolve_years(rows: list[Row], ctx: LineContext) -> None:
    """Give RFC 3164 rows a year: ``year=``, else the file's dated lines, else its mtime.

    Years advance when a line is more than a day earlier in the calendar than the one
    before it (Dec -> Jan rollover); with the mtime the *last* line is anchored instead.
    """
    pending = [r for r in rows if "_partial" in r]
    if not pending:
        return
    rel, prev, rels = 0, None, []
    for row in pending:
        key = _ordinal(row["_partial"])
        if prev is not None and key < prev - 86400:
            rel += 1
        prev = key
        rels.append(rel)
    tz = ctx.state["tz"]
    base = ctx.options.get("year")
    how = "year= option"
    firsts = [ctx.state["first_year_at"]] if "first_year_at" in ctx.state else []
    if "bulk_first" in ctx.state:  # the first bulk-parsed row, which may come first
        first = ctx.state["bulk_first"]
        firsts.append((first["_lineno"], first["time"].astimezone(tz).year))
    if base is None and firsts:
        base, how = min(firsts)[1], "the file's dated lines"
    if base is None:
        mtime = datetime.fromtimestamp(os.stat(ctx.path).st_mtime, tz=tz)
        last = pending[-1]["_partial"]
        last_year = mtime.year - (1 if last[:2] > (mtime.month, mtime.day) else 0)
        base, how = last_year - rels[-1], "the file's modification time"
    ctx.state.setdefault("notes", []).append(f"RFC 3164 year {base} taken from {how}")
    for row, r in zip(pending, rels, strict=True):
        mon, day, hh, mm, ss = row["_partial"]
        try:
            row["time"] = localize(datetime(int(base) + r, mon, day, hh, mm, min(ss, 59)), tz)
        except ValueError as exc:
            row["_reject"] = f"syslog date {mon:02d}-{day:02d} impossible in year {int(base) + r} ({exc})"
        except ParseError as exc:  # skipped by a DST change
            row["_reject"] = f"{row['signal']} line: {exc.message}"


def _bulk_xid(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Bulk parser of the fast route (imports polars only when a large file needs it)."""
    from reliab.io.formats.kernel._bulk import kernel_rows

    return kernel_rows(hits, ctx)


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    _resolve_monotonic(rows, ctx)
    _resolve_years(rows, ctx)
    return rows


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
        Year of the first RFC 3164 line (``Jun  3 14:02:11 …`` has none); otherwise the
        year of the file's other dated lines, else inferred from the file's mtime.
    tz : str or tzinfo, optional
        Zone of times printed without an offset (``dmesg -T``, RFC 3164); default UTC.
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
    state = {"tz": resolve_tz(tz), "host": host or host_from_path(path)}
    options = {"year": year, "boot_time": boot_time}
    return scan_lines(path, SOURCE, parse_kernel_line, literals=LITERALS, options=options,
                      state=state, strict=strict, finish=_finish, bulk=_bulk_xid)
