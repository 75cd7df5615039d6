"""Thunderbird, Liberty and Spirit syslogs with expert alert labels (USENIX CFDR, LogHub) -> ``sandia:*``.

The Sandia National Laboratories logs released with Oliner & Stearley, "What
Supercomputers Say: A Study of Five System Logs" (DSN 2007), republished by LogHub
(``Thunderbird``; Zhu et al., ISSRE 2023), put the alert label and the collection time in
front of each syslog line::

    - 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]: session closed for user root
    - 1131566461 2005.11.09 eadmin1 Nov 9 12:01:01 src@eadmin1 crond[4308]: (root) CMD (run-parts /etc/cron.hourly)

Fields: alert label (``-`` for a non-alert line, else the alert category, e.g. ``VAPI``,
``ECC``, ``CPU``, ``PBS_CHK``, ``EXT_FS``), epoch seconds (UTC), date, host, then the
syslog line as the host wrote it (``Mon D HH:MM:SS``, the reporting host as
``host/host`` or ``src@host``, the program and its message).

Alert semantics (the rule of this reader): an alert line is a signal
``sandia:<category>`` (lower case) of severity ``error`` (syslog lines of these releases
carry no severity; the administrators tagged the line as an alert), host = the fourth
field, message ``"<LABEL>: <program and message>"``.  A non-alert line (``-``) is
irrelevant; a line without the leading label, epoch, date and host fields is malformed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._line_sniff import matching_lines

SOURCE = "sandia_syslog"
#: label, epoch, date, host, then the syslog stamp ``Mon D HH:MM:SS``, the reporter and the rest
_LINE = re.compile(
    r"(\S+) ([0-9]{9,11}) ([0-9]{4}\.[0-9]{2}\.[0-9]{2}) (\S+) "
    r"([A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}) (\S+)(?: (.*))?"
)


def parse_sandia_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    """One labelled syslog line -> a signal row for an alert, ``None`` for a non-alert or blank line."""
    if not text.strip() or text.startswith("- "):
        return None  # the experts' non-alert lines: irrelevant by the module rule
    m = _LINE.fullmatch(text.rstrip("\r\n"))
    if m is None:
        raise ParseError("not a labelled Sandia syslog line (label, epoch, date, host, Mon D HH:MM:SS,"
                         " reporter, message)")
    label, epoch, _, host, _, _, rest = m.groups()
    return {
        "time": datetime.fromtimestamp(int(epoch), UTC),
        "host": host,
        "gpu": None,
        "job_id": None,
        "source": SOURCE,
        "signal": f"sandia:{label.lower()}",
        "severity": "error",
        "message": f"{label}: {rest or ''}".rstrip(),
    }


def _sniff(path: str, lines: Sequence[str]) -> float:
    hits, n = matching_lines(_LINE, lines)
    return 0.95 if hits and hits * 2 >= n else 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_sandia_syslog(path: str, *, strict: bool = False) -> FileResult:
    """Thunderbird/Liberty/Spirit syslog with alert labels (CFDR / LogHub) -> ``sandia:<category>`` signals.

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
    return scan_lines(path, SOURCE, parse_sandia_line, table="signals", strict=strict)


__all__ = ["read_sandia_syslog", "parse_sandia_line"]
