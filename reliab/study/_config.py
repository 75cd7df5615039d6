"""A report described in a TOML file, so a quarterly analysis is re-run the same way each time.

Example (``analyses/quarterly/2024Q2.toml``)::

    label = "2024 Q2"
    title = "GPU cluster reliability: 2024 Q2"
    logs = ["../../data/quarters/2024Q2"]      # relative to this file
    out = "out/2024Q2"
    gpus = 2048                                  # or: inventory = "inventory.csv"
    window = ["2024-04-01", "2024-07-01"]
    policy = "training-run"
    previous = "out/2024Q1/results.json"         # compare with the previous quarter

Keys: ``logs`` (required), ``out``, ``label``, ``title``, ``subtitle``, ``gpus``,
``inventory``, ``gpus_per_node``, ``window``, ``policy``, ``job_name``, ``compare``
(``"llama3"``), ``previous``, ``conf_level``, ``pdf``.  Unknown keys are an error naming the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliab.errors import InputFileError

KEYS = {"logs": list, "out": str, "label": str, "title": str, "subtitle": str, "gpus": int,
        "inventory": str, "gpus_per_node": int, "window": list, "policy": str, "job_name": str,
        "compare": str, "previous": str, "conf_level": float, "pdf": bool, "strict": bool}
PATHS = ("out", "inventory", "previous")


@dataclass(frozen=True)
class ReportConfig:
    """A parsed report configuration; paths are absolute (resolved against the file)."""

    logs: tuple[Path, ...]
    options: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    text: str = ""


def load_config(path: str | Path) -> ReportConfig:
    """Read a report TOML file (see the module docstring).

    Raises
    ------
    InputFileError
        Missing file, invalid TOML, an unknown key or a value of the wrong type (named).
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"{p}: configuration file not found")
    text = p.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"{p}: invalid TOML ({exc})") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise InputFileError(f"{p}: unknown key(s) {unknown}; known keys: {', '.join(sorted(KEYS))}")
    for key, value in data.items():
        want = KEYS[key]
        ok = isinstance(value, want) or (want is float and isinstance(value, int))
        if not ok or (want is int and isinstance(value, bool)):
            raise InputFileError(f"{p}: {key} must be a {want.__name__}, got {value!r}")
    if "logs" not in data or not data["logs"]:
        raise InputFileError(f"{p}: 'logs' is required (a list of log folders or files)")
    if "window" in data and len(data["window"]) != 2:
        raise InputFileError(f"{p}: window must be [start, end], got {data['window']!r}")
    base = p.resolve().parent
    opts = {k: v for k, v in data.items() if k != "logs"}
    for key in PATHS:
        if key in opts:
            opts[key] = (base / opts[key]).resolve()
    if "window" in opts:
        opts["window"] = tuple(str(w) for w in opts["window"])
    return ReportConfig(logs=tuple((base / str(x)).resolve() for x in data["logs"]), options=opts,
                        path=p.resolve(), text=text)


__all__ = ["ReportConfig", "load_config"]
