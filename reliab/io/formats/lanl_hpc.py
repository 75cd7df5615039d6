"""LANL HPC event log (LogHub ``HPC``, system 20 of Los Alamos) -> ``lanl_hpc:*`` signals.

The records (used by Makanju et al., KDD 2009, and He et al., DSN 2016, and republished by
LogHub, Zhu et al., ISSRE 2023) are space-separated
``LogId Node Component State Time Flag Content``::

    134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component State Change: Component \\042alt0\\042 is in the unavailable state (HWID=1973)
    2559971 gige7 gige temperature 1073151998 1 normal

``Time`` is epoch seconds (UTC).  ``Node`` names a node, switch module or storage domain,
except for scheduler commands (``boot_cmd``, ``shutdown_cmd``: the command number) and
partitions (the partition name): those records have no host.

The release carries no expert labels, so this reader's rule (stated here, from the
record vocabulary) decides which records are failure evidence; all others (temperature
readings, ``running``/``normal`` states, command progress, link-counter housekeeping) are
irrelevant:

==================================================  ========
record (component, state, text)                      severity
==================================================  ========
``fdmn.panic`` (a file-system domain panic)          critical
``state_change.unavailable``, ``net.niff.down``,     error
``clusterfilesystem.no_server``/``.not_served``,
``fdmn.full``, ``node psu`` (psu failure), a
command or action ``error``/``abort``, a ``status``
of ``not responding``, ``switch_module control``
``switch_module`` ``temphigh``, ``bcast-error``,     warning
``error`` whose text is ``Link error``
==================================================  ========

Signals are ``lanl_hpc:<component>:<state>``; the message is the content.  A line with
fewer than six fields or a non-numeric ``Time`` is malformed; a ``LogId ...`` header is
irrelevant.
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

SOURCE = "lanl_hpc"
_LINE = re.compile(r"([0-9]+) (\S+) (\S+) (\S+) ([0-9]{9,11}) (-?[0-9]+)(?: (.*))?")
_CRITICAL_STATES = frozenset({"fdmn.panic"})
_ERROR_STATES = frozenset({"state_change.unavailable", "net.niff.down", "clusterfilesystem.no_server",
                           "clusterfilesystem.not_served", "fdmn.full", "abort"})
_NOT_RESPONDING = re.compile(r"\bnot[- ]responding\b")
_HOSTLESS = ("_cmd", "partition")


def severity_of(component: str, state: str, content: str) -> str | None:
    """The severity of a record by the module rule, ``None`` when it is not failure evidence."""
    if state in _CRITICAL_STATES:
        return "critical"
    if state in _ERROR_STATES or (component == "node" and state == "psu"):
        return "error"
    if state == "error" and (component.endswith("_cmd") or component == "action"):
        return "error"
    if state == "status" and _NOT_RESPONDING.search(content):
        return "error"
    if component == "switch_module":
        if state == "control":
            return "error"
        if state in ("temphigh", "bcast-error") or (state == "error" and content.strip() == "Link error"):
            return "warning"
    return None


def parse_hpc_line(text: str, ctx: LineContext) -> dict[str, Any] | None:
    """One record -> a signal row when it is failure evidence, else ``None``."""
    line = text.rstrip("\r\n")
    if not line.strip() or line.startswith("LogId "):
        return None
    m = _LINE.fullmatch(line)
    if m is None:
        raise ParseError("not a LANL HPC record (LogId Node Component State Time Flag Content)")
    _, node, component, state, epoch, _, content = m.groups()
    severity = severity_of(component, state, content or "")
    if severity is None:
        return None
    return {
        "time": datetime.fromtimestamp(int(epoch), UTC),
        "host": None if component.endswith(_HOSTLESS) else node,
        "gpu": None,
        "job_id": None,
        "source": SOURCE,
        "signal": f"lanl_hpc:{component.lower()}:{state.lower()}",
        "severity": severity,
        "message": content or state,
    }


def _sniff(path: str, lines: Sequence[str]) -> float:
    first = next((line for line in lines if line.strip()), "")
    if first.startswith("LogId Node Component State Time Flag"):
        return 0.95
    hits, n = matching_lines(_LINE, lines)
    return 0.8 if hits and hits >= min(3, n) and hits * 2 >= n else 0.0


@register_parser(SOURCE, sniff=_sniff, table="signals")
def read_lanl_hpc(path: str, *, strict: bool = False) -> FileResult:
    """LANL HPC event log (LogHub ``HPC``) -> ``lanl_hpc:<component>:<state>`` signals.

    Parameters
    ----------
    path : str
        The log (possibly compressed).
    strict : bool
        Raise the first malformed line instead of quarantining it.

    Returns
    -------
    FileResult
        One signal per record the module rule keeps; the others are irrelevant.

    References
    ----------
    A. Makanju, A. N. Zincir-Heywood and E. E. Milios, "Clustering Event Logs Using
    Iterative Partitioning", KDD 2009; J. Zhu et al., "Loghub", ISSRE 2023.
    """
    return scan_lines(path, SOURCE, parse_hpc_line, table="signals", strict=strict)


__all__ = ["read_lanl_hpc", "parse_hpc_line", "severity_of"]
