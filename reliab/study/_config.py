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
(``"llama3"``), ``previous``, ``conf_level``, ``pdf``, ``strict``; and how the logs are read,
as ``reliab ingest`` reads them: ``manifest`` (a path, or ``false`` for none), ``source``,
``quarantine_limit``, ``rules``, ``before``, ``after`` and every reader option (``boot_time``,
``tz``, ``year``, ``host``, ``fields``…, :func:`reliab.io._options.reader_options`).  Unknown
keys are an error naming the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliab.errors import InputFileError
from reliab.io import reader_options, toml_time_text, value_problem

KEYS = {"logs": list, "out": str, "label": str, "title": str, "subtitle": str, "gpus": int,
        "inventory": str, "gpus_per_node": int, "window": list, "policy": str, "job_name": str,
        "compare": str, "previous": str, "conf_level": float, "pdf": bool, "strict": bool}
#: keys of reliab.ingest (the reader options are looked up in the registry)
READING = {"manifest": (str, bool), "source": str, "quarantine_limit": int, "rules": str, "before": str,
           "after": str}
PATHS = ("out", "inventory", "previous", "rules")


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
    readers = reader_options()
    unknown = sorted(set(data) - set(KEYS) - set(READING) - set(readers))
    if unknown:
        raise InputFileError(f"{p}: unknown key(s) {unknown}; known keys: {', '.join(sorted(KEYS))},"
                             f" {', '.join(sorted(READING))} and the reader options of `reliab ingest --help`")
    for key, value in data.items():
        if key in readers and key not in KEYS:
            problem = value_problem(readers[key], value)
            if problem:
                raise InputFileError(f"{p}: {key} {problem}")
            data[key] = toml_time_text(readers[key], value)
            continue
        want = KEYS.get(key) or READING[key]
        ok = isinstance(value, want) or (want is float and isinstance(value, int))
        if not ok or (want is int and isinstance(value, bool)):
            name = want.__name__ if isinstance(want, type) else " or ".join(w.__name__ for w in want)
            raise InputFileError(f"{p}: {key} must be a {name}, got {value!r}")
    if "logs" not in data or not data["logs"]:
        raise InputFileError(f"{p}: 'logs' is required (a list of log folders or files)")
    if "window" in data and len(data["window"]) != 2:
        raise InputFileError(f"{p}: window must be [start, end], got {data['window']!r}")
    base = p.resolve().parent
    opts = {k: v for k, v in data.items() if k != "logs"}
    if isinstance(opts.get("manifest"), str):
        opts["manifest"] = (base / opts["manifest"]).resolve()
    for key in PATHS:
        if key in opts:
            opts[key] = (base / opts[key]).resolve()
    if "window" in opts:
        opts["window"] = tuple(str(w) for w in opts["window"])
    return ReportConfig(logs=tuple((base / str(x)).resolve() for x in data["logs"]), options=opts,
                        path=p.resolve(), text=text)


__all__ = ["ReportConfig", "load_config"]
