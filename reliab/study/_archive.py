"""Each report run archives its results as JSON, so the next period compares without recomputing.

The archive (``results.json`` beside the report) holds every result's ``to_dict()`` (or the
reason it was not available), the fleet facts, the label of the period and ``history``: one
``[label, unexpected interruptions, GPU-days]`` row per period so far, oldest first, which
becomes the per-period (Backblaze-style) table of the next report; ``failed_checks`` lists
every invariant of a published number that failed (result, check, detail; see
:mod:`reliab._checks`), the results concerned being archived as not available.  Like evidently's
snapshots, an archive is plain data any tool can read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reliab._atomic import write_atomic
from reliab._result import NotAvailable, json_safe
from reliab._version import __version__
from reliab.errors import InputFileError

FORMAT = "reliab-results/1"


def archive(results: dict[str, Any], *, label: str, fleet: Any, previous: dict[str, Any] | None,
            inputs: list[dict[str, Any]] | None = None, config: dict[str, Any] | None = None,
            failed_checks: Sequence[tuple[str, Any]] = ()) -> dict[str, Any]:
    """The archive of one run as a JSON-safe dict (see the module docstring); ``failed_checks``
    (pairs of result key and :class:`reliab._checks.Check`) become ``failed_checks`` rows."""
    history = [list(h) for h in (previous or {}).get("history", [])]
    rates = results.get("rates")
    if rates is not None and not isinstance(rates, NotAvailable):
        total = rates.summary()
        total = total[total["category"].astype(str) == "Total"]
        history.append([label, int(total["count"].iloc[0]), float(rates.gpu_days)])
    return json_safe({
        "format": FORMAT, "reliab_version": __version__, "label": label,
        "fleet": None if fleet is None or isinstance(fleet, NotAvailable) else fleet.to_dict(),
        "results": {k: v.to_dict() for k, v in results.items()},
        "history": history, "inputs": inputs or [], "config": config or {},
        "failed_checks": [{"result": k, "check": c.name, "detail": c.detail}
                          for k, c in failed_checks],
    })


def write_archive(data: dict[str, Any], path: str | Path) -> Path:
    """Write an archive (from :func:`archive`) as indented JSON, atomically."""
    return write_atomic(path, json.dumps(data, indent=1, allow_nan=False))


def load_archive(path: str | Path) -> dict[str, Any]:
    """Read an archive written by an earlier run.

    Raises
    ------
    InputFileError
        When the file is missing, not JSON, or not a reliab results archive.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"{p}: previous results not found (run the previous period's report first)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{p}: not a JSON results archive ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputFileError(f"{p}: not a reliab results archive (format {FORMAT!r} expected)")
    return data


__all__ = ["FORMAT", "archive", "load_archive", "write_archive"]
