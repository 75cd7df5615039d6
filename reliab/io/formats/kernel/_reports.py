"""Kernel reports that span several lines: one event, however many lines print it.

* An NVSwitch SXid report is its first line (``…: 20034, Fatal, Link 48 LTSSM Fault Up``)
  followed by ``Severity 1 Engine instance 48 Sub-engine instance 00`` and ``Data {…}``
  lines with the same switch and code (nvswitch ``_nvswitch_dump_error_entry``; capture in
  leptonai/gpud ``components/accelerator/nvidia/sxid/README.md``).  The detail lines of a
  report already seen are irrelevant; a detail line whose first line is missing from the
  capture (ring buffer overrun, excerpt) still stands for its event.
* When a GPU falls off the bus the NVIDIA driver prints ``NVRM: Xid (PCI:…): 79, …`` and
  right after it ``NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.``; a GPU lost at
  probe time prints only ``NVRM: The NVIDIA GPU <bdf>`` / ``(PCI ID: …) installed in this
  system has`` / ``fallen off the bus and is not responding to commands.`` (NVIDIA
  NVSentinel issue #155).  A bus-drop line is the event of Xid 79: it becomes ``xid:79``
  unless an Xid 79 of the same host and GPU came shortly before it (within
  :data:`BUS_WINDOW_S`, or :data:`BUS_WINDOW_LINES` lines when the two times cannot be
  compared), as NVSentinel's syslog monitor suppresses such duplicates.

* An AER report is its first line (``pcieport <port>: AER: Corrected error received: <src>``)
  and the lines after it, the first of which repeats the severity (``<dev>: PCIe Bus Error:
  severity=Corrected, …``, ``aer_print_error`` in ``drivers/pci/pcie/aer.c``; ``<dev>`` is
  the port or the source device).  That line is part of the report just before it; one whose
  first line is missing from the capture stands for its event.

All rules look back only, so that the per-line parser and the bulk parser of the fast route
decide alike: the bulk parser records the Xid 79 rows it takes (:func:`remember_xid79_rows`) and
leaves the lines before an AER severity line to the per-line parser.
"""

from __future__ import annotations

import re
from typing import Any

from reliab.io._lines import LineContext
from reliab.io.formats.kernel._kmsg import KernelSignal

#: an Xid 79 this close before a bus-drop line of the same GPU is the same event
BUS_WINDOW_S = 300.0
BUS_WINDOW_LINES = 50
#: the three-line report names its GPU at most this many lines before "fallen off the bus"
_REPORT_LINES = 3
#: an SXid detail line belongs to a first line at most this many lines before it
_SXID_LINES = 200
#: an AER severity line belongs to a report line at most this many lines before it
AER_LINES = 8
#: bounded memory whatever the input: entries kept per GPU, SXid reports tracked
_KEEP_PER_GPU = 64
_MAX_OPEN_SXID = 10_000
_AER_PARTIES = re.compile(r"(?:(\S+?): )?(?:AER: .*received: (\S+)|PCIe Bus Error)")
_NV_GPU = re.compile(r"The NVIDIA GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})")

#: a comparable clock of a line: ("t", epoch seconds), ("m", printk seconds), ("p", calendar
#: seconds without year) or None
Clock = tuple[str, float] | None


def note_nvidia_gpu(text: str, ctx: LineContext) -> None:
    """Remember the GPU named by the first line of the three-line bus-drop report."""
    m = _NV_GPU.search(text)
    if m is not None:
        ctx.state["nv_gpu"] = (ctx.lineno, m.group(1).lower())


def remember_xid79(state: dict[str, Any], lineno: int, host: str, gpu: str | None, clock: Clock) -> None:
    """Record an Xid 79 row (per-line or bulk) for the bus-drop rule."""
    seen = state.setdefault("xid79", {})
    entries = seen.setdefault((host, gpu), [])
    entries.append((lineno, clock))
    if len(entries) > _KEEP_PER_GPU:
        del entries[0]


#: Xid 79 rows of the bulk parser kept (in frames) for the bus-drop rule; beyond, the oldest go
_KEEP_BULK_ROWS = 200_000


def remember_xid79_rows(state: dict[str, Any], frame: Any) -> None:
    """Record the Xid 79 rows of the bulk parser: a polars frame ``_lineno, host, gpu, kind, t``
    (the :data:`Clock` of each row: ``kind`` ``"t"`` with epoch seconds, ``"m"`` with printk
    seconds, ``"p"`` with calendar seconds), looked at only when a bus-drop line comes (rare)."""
    frames: list[Any] = state.setdefault("xid79_bulk", [])
    frames.append(frame)
    while sum(f.height for f in frames) > _KEEP_BULK_ROWS and len(frames) > 1:
        del frames[0]


def _bulk_entries(state: dict[str, Any], host: str, gpu: str | None, lineno: int) -> list[tuple[int, Clock]]:
    """The bulk parser's Xid 79 rows of ``host`` (and ``gpu``) before ``lineno``."""
    frames = state.get("xid79_bulk")
    if not frames:
        return []
    import polars as pl

    cond = (pl.col("host") == host) & (pl.col("_lineno") < lineno)
    if gpu is not None:
        cond = cond & (pl.col("gpu") == gpu)
    rows = pl.concat([f.filter(cond) for f in frames])
    return [(n, (kind, t)) for n, kind, t in rows.select("_lineno", "kind", "t").iter_rows()]


def _same_event(lineno: int, clock: Clock, entries: list[tuple[int, Clock]]) -> bool:
    for before, other in entries:
        if before >= lineno:
            continue
        if clock is not None and other is not None and clock[0] == other[0]:
            if abs(clock[1] - other[1]) <= BUS_WINDOW_S:
                return True
        elif lineno - before <= BUS_WINDOW_LINES:
            return True
    return False


def aer_parties(message: str) -> tuple[str | None, str | None]:
    """(port, source device) named by an AER row's message."""
    m = _AER_PARTIES.match(message)
    return (None, None) if m is None else (m.group(1), m.group(2) or None)


#: added to the message of a report's later line whose first line is not in the capture
UNSEEN_FIRST = " (first line of the report not in the capture)"


def remember_aer(state: dict[str, Any], lineno: int, message: str,
                 parties: tuple[str | None, str | None] | None = None) -> None:
    """Record a line of an AER report (per-line parser, in line order) for the severity-line rule.

    ``parties`` are ``aer_parties(message)`` when the caller has them already.
    """
    heads = state.setdefault("aer_heads", {})
    for old in [n for n in heads if n < lineno - AER_LINES]:  # bounded: one window kept
        del heads[old]
    heads[lineno] = aer_parties(message) if parties is None else parties


def aer_detail_seen(state: dict[str, Any], lineno: int, message: str,
                    parties: tuple[str | None, str | None] | None = None) -> bool:
    """Whether the severity line ``message`` at ``lineno`` belongs to a report line before it.

    It does when an AER line of a related device (its port or source, or either unnamed)
    came at most ``AER_LINES`` lines before it.  The line is remembered either way.
    ``parties`` are ``aer_parties(message)`` when the caller has them already.
    """
    heads: dict[int, tuple[str | None, str | None]] = state.setdefault("aer_heads", {})
    parties = aer_parties(message) if parties is None else parties
    dev = parties[0]
    related = any(lineno - AER_LINES <= n < lineno and (dev is None or port is None or dev in (port, src))
                  for n, (port, src) in heads.items())
    remember_aer(state, lineno, message, parties)
    return related


def _aer_detail(found: KernelSignal, ctx: LineContext) -> KernelSignal | None:
    if aer_detail_seen(ctx.state, ctx.lineno, found.message):
        return None
    return KernelSignal(found.signal, found.severity, found.message + UNSEEN_FIRST, found.gpu)


def _bus_drop(found: KernelSignal, host: str, clock: Clock, ctx: LineContext) -> KernelSignal | None:
    gpu = found.gpu
    named = ctx.state.get("nv_gpu")
    if gpu is None and named is not None and ctx.lineno - named[0] <= _REPORT_LINES:
        gpu = named[1]
        ctx.state["report_start"] = named[0]
    seen: dict[tuple[str, str | None], list[tuple[int, Clock]]] = ctx.state.get("xid79", {})
    candidates = [entries for (h, g), entries in seen.items() if h == host and (gpu is None or g == gpu)]
    candidates.append(_bulk_entries(ctx.state, host, gpu, ctx.lineno))
    if any(_same_event(ctx.lineno, clock, entries) for entries in candidates):
        return None
    return KernelSignal(found.signal, found.severity, found.message, gpu)


def _sxid_detail(found: KernelSignal, ctx: LineContext) -> KernelSignal | None:
    key = (found.message.split(":", 1)[0], found.signal)
    first = ctx.state.get("sxid_open", {}).get(key)
    if first is not None and 0 < ctx.lineno - first <= _SXID_LINES:
        return None
    return KernelSignal(found.signal, found.severity, found.message + UNSEEN_FIRST, found.gpu)


def _sxid_first(found: KernelSignal, ctx: LineContext) -> None:
    opened = ctx.state.setdefault("sxid_open", {})
    if len(opened) >= _MAX_OPEN_SXID:
        opened.clear()
    opened[(found.message.split(":", 1)[0], found.signal)] = ctx.lineno


def resolve_report(found: KernelSignal, host: str, clock: Clock, ctx: LineContext) -> KernelSignal | None:
    """The signal a line stands for given the lines before it, ``None`` if already counted."""
    if found.part == "bus_drop":
        return _bus_drop(found, host, clock, ctx)
    if found.part == "sxid_detail":
        return _sxid_detail(found, ctx)
    if found.part == "aer_detail":
        return _aer_detail(found, ctx)
    if found.signal.startswith("sxid:"):
        _sxid_first(found, ctx)
    elif found.signal == "xid:79":
        remember_xid79(ctx.state, ctx.lineno, host, found.gpu, clock)
    elif found.signal.startswith("pcie:aer_"):
        remember_aer(ctx.state, ctx.lineno, found.message)
    return found
