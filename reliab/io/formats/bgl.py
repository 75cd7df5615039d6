"""BlueGene/L RAS log with expert alert labels (USENIX CFDR, LogHub ``BGL``) -> ``bgl:*`` signals.

The release of Oliner & Stearley, "What Supercomputers Say: A Study of Five System Logs"
(DSN 2007), republished by LogHub (Zhu et al., ISSRE 2023), prefixes every RAS record of
the LLNL BlueGene/L with the alert label the system administrators assigned::

    KERNDTLB 1118536327 2005.06.11 R30-M0-N9-C:J16-U01 2005-06-11-17.32.07.581048 R30-M0-N9-C:J16-U01 RAS KERNEL FATAL data TLB error interrupt
    - 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected

Fields: alert label (``-`` for a non-alert record, else the alert category), epoch
seconds (UTC), date, location (rack-midplane-node card-card:chip, e.g.
``R02-M1-N0-C:J12-U11``, or ``NULL``/``UNKNOWN_LOCATION``), full local timestamp with
microseconds, location again, record type (``RAS``, some ``NULL``), component (``KERNEL``,
``APP``, ``MMCS``, ``DISCOVERY``, ``HARDWARE``...), severity (``INFO``, ``WARNING``,
``SEVERE``, ``ERROR``, ``FATAL``, ``FAILURE``) and the message.

Alert semantics (the rule of this reader):

* An **alert** line (label not ``-``) is a signal ``bgl:<category>`` (lower case, e.g.
  ``bgl:kerndtlb``), host = the location, message ``"<LABEL> <COMPONENT> <SEVERITY>:
  <text>"`` so the expert label stays in the evidence.  Its severity is the record's
  (``FATAL``/``FAILURE`` -> critical, ``SEVERE``/``ERROR`` -> error, ``WARNING`` ->
  warning), never below ``error``: the administrators tagged it as an alert.
* A **non-alert** line (``-``) is irrelevant, whatever its recorded severity: Oliner &
  Stearley show that the logged severity is a poor guide (most ``FATAL`` records of BG/L are
  not alerts), so the experts' label decides.
* A line that does not have the nine leading fields is malformed.

Time: the epoch seconds (UTC), with the microseconds of the local timestamp when its
seconds agree with the epoch's (the local stamp is LLNL wall-clock time, UTC-7/-8).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._line_sniff import matching_lines

SOURCE = "bgl"
#: alert label, epoch, date, location, local stamp, location, type, component, severity, text
_LINE = re.compile(
    r"(\S+) ([0-9]{9,11}) ([0-9]{4}\.[0-9]{2}\.[0-9]{2}) (\S+) "
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}\.[0-9]{2}\.([0-9]{2})\.([0-9]{6})) (\S+) (\S+) (\S+) "
    r"(INFO|WARNING|SEVERE|ERROR|FATAL|FAILURE)(?: (.*))?"
)
#: record severity -> signals severity (an alert is never below ``error``)
SEVERITY = {"FATAL": "critical", "FAILURE": "critical", "SEVERE": "error", "ERROR": "error",
            "WARNING": "warning", "INFO": "info"}
_NO_HOST = frozenset({"NULL", "UNKNOWN_LOCATION", "-"})


def parse_bgl_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    """One RAS record -> a signal row for an alert, ``None`` for a non-alert or blank line."""
    if not text.strip() or text.startswith("- "):
        return None  # the experts' non-alert records: irrelevant by the module rule
    m = _LINE.fullmatch(text.rstrip("\r\n"))
    if m is None:
        raise ParseError("not a BlueGene/L RAS record (label, epoch, date, location, "
                         "yyyy-mm-dd-hh.mm.ss.uuuuuu, location, type, component, severity, text)")
    label, epoch, _, loc, _, sec, micro, _, _, component, level, rest = m.groups()
    when = datetime.fromtimestamp(int(epoch), UTC)
    if int(sec) == when.second:
        when += timedelta(microseconds=int(micro))
    severity = SEVERITY[level]
    if severity in ("info", "warning"):
        severity = "error"
    return {
        "time": when,
        "host": None if loc in _NO_HOST else loc,
        "gpu": None,
        "job_id": None,
        "source": SOURCE,
        "signal": f"bgl:{label.lower()}",
        "severity": severity,
        "message": f"{label} {component} {level}: {rest or ''}".rstrip(),
    }


def _sniff(path: str, lines: Sequence[str]) -> float:
    hits, n = matching_lines(_LINE, lines)
    return 0.95 if hits and hits * 2 >= n else 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_bgl(path: str, *, strict: bool = False) -> FileResult:
    """BlueGene/L RAS log with alert labels (CFDR / LogHub ``BGL``) -> ``bgl:<category>`` signals.

    Parameters
    ----------
    path : str
        The log (possibly compressed).
    strict : bool
        Raise the first malformed line instead of quarantining it.

    Returns
    -------
    FileResult
        One signal per alert line; non-alert lines are irrelevant (see the module doc).

    References
    ----------
    A. J. Oliner and J. Stearley, "What Supercomputers Say: A Study of Five System Logs",
    DSN 2007; J. Zhu et al., "Loghub: A Large Collection of System Log Datasets for
    AI-driven Log Analytics", ISSRE 2023.
    """
    return scan_lines(path, SOURCE, parse_bgl_line, table="signals", strict=strict)


__all__ = ["read_bgl", "parse_bgl_line", "SEVERITY"]
