"""Slurm job states: the JOB STATE CODES of ``sacct(1)`` (Slurm 25.11 ``doc/man/man1/sacct.1``)
and the ``slurm:<state>`` signal of an allocation that ended."""

from __future__ import annotations

import re
from typing import Any

from reliab.errors import ParseError

#: JOB STATE CODES of sacct(1): abbreviation -> name
STATE_CODES = {
    "BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "DL": "DEADLINE", "F": "FAILED",
    "NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED",
    "R": "RUNNING", "RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED",
    "TO": "TIMEOUT",
}
#: states of an allocation that has not ended: no ``slurm:*`` signal
NOT_ENDED = frozenset({"RUNNING", "PENDING", "SUSPENDED", "RESIZING", "REQUEUE_HOLD"})
_SEVERITY = {
    "NODE_FAIL": "critical", "BOOT_FAIL": "critical", "FAILED": "error", "OUT_OF_MEMORY": "error",
    "TIMEOUT": "error", "DEADLINE": "error", "LAUNCH_FAILED": "error", "COMPLETED": "info",
}
_STATE = re.compile(r"^(?P<state>[A-Z][A-Z_]*)\+?(?: by (?P<by>\S+))?\+?$")

def normalize_state(raw: str) -> str:
    """``'CANCELLED by 0'`` -> ``'CANCELLED'``; ``'CA'`` -> ``'CANCELLED'``; ``'FAILED+'`` -> ``'FAILED'``.

    Raises
    ------
    ParseError
        If ``raw`` is not a state code of the form of sacct(1) JOB STATE CODES.
    """
    m = _STATE.match(raw.strip())
    if m is None:
        raise ParseError(f"State {raw!r} is not a Slurm job state")
    return STATE_CODES.get(m["state"], m["state"])


def end_signal(job: dict[str, Any], source: str, origin: str) -> dict[str, Any] | None:
    """The ``slurm:<state>`` signal of an ended allocation, or ``None`` if it has not ended."""
    if job["end"] is None or job["state"] in NOT_ENDED:
        return None
    state = job["state"]
    return {
        "time": job["end"], "host": job["failed_node"], "gpu": None, "job_id": job["job_id"],
        "source": source, "signal": f"slurm:{state.lower()}",
        "severity": _SEVERITY.get(state, "warning"), "message": job["state_raw"], "origin": origin,
    }

__all__ = ["STATE_CODES", "NOT_ENDED", "normalize_state", "end_signal"]
