"""The reading options ``reliab ingest`` and ``reliab report`` share, defined once.

Built from two signatures, so they never fall behind the API: the run-level keywords of
:func:`reliab.ingest` a manifest may also set (``--rules``, ``--before``, ``--after`` and
whatever the API adds) and every per-source option of the registered readers and live
sources (``--year``, ``--tz``, ``--boot-time``, ``--host``, ``--job-id``, ``--fields``,
``--start``, ``--time``, ``--columns THEIR=OURS``…, :func:`reliab.io._options.reader_options`),
with ``--manifest`` and ``--no-manifest``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

#: help of run settings whose docstring's first sentence says too little on a command line
_RUN_HELP = {
    "policy": "What counts as an interruption: fleet (default; NODE_FAIL, or FAILED with infrastructure "
              "evidence) or training-run (every end of one run, as Llama 3 counted).",
    "job_name": "The training run for --policy training-run (default: the job name with the most GPU-hours).",
    "rules": "A taxonomy rules file used instead of the built-in rules.",
    "before": "How long before a job's end a signal is evidence of its interruption (default 10min).",
    "after": "How long after a job's end a signal is evidence of its interruption (default 5min).",
}


def flag(name: str) -> str:
    """``--boot-time`` for ``boot_time``."""
    return "--" + name.replace("_", "-")


def manifest_parameters() -> list[inspect.Parameter]:
    """``--manifest PATH`` and ``--no-manifest``."""
    kw = inspect.Parameter.KEYWORD_ONLY
    return [
        inspect.Parameter("manifest", kw, default=None, annotation=Annotated[Path | None, typer.Option(
            help="Hand-over manifest to apply (default: reliab.toml in each folder given).")]),
        inspect.Parameter("no_manifest", kw, default=False, annotation=Annotated[bool, typer.Option(
            "--no-manifest", help="Ignore reliab.toml files.")]),
    ]


def manifest_value(values: dict[str, Any]) -> bool | Path:
    """The ``manifest=`` of :func:`reliab.ingest` for ``--manifest`` / ``--no-manifest``."""
    if values["no_manifest"] and values["manifest"] is not None:
        raise ValueError("give --manifest or --no-manifest, not both")
    return False if values["no_manifest"] else (values["manifest"] or True)


def reading_parameters(taken: Iterable[str]) -> tuple[list[inspect.Parameter], dict[str, Any]]:
    """Run-level keywords of ``reliab.ingest`` and every reader option, as text options.

    ``taken`` names the command's own parameters (not offered again).  Returns the
    parameters and, by name, the reader option's spec (``None`` for a run keyword).
    """
    from reliab.io import doc_lines, reader_options, run_keys
    from reliab.io import ingest as api

    taken = set(taken)
    kw = inspect.Parameter.KEYWORD_ONLY
    params, specs = [], {}
    docs = doc_lines(api)
    for name in run_keys():
        if name in taken:
            continue
        about = _RUN_HELP.get(name) or docs.get(name) or f"{name}= of reliab.ingest"
        params.append(inspect.Parameter(name, kw, default=None, annotation=Annotated[str | None, typer.Option(
            flag(name), help=f"{about.rstrip('.')} (also a reliab.toml key).", rich_help_panel="Run settings")]))
        specs[name] = None
    for name, spec in reader_options().items():
        if name in taken or name in specs:
            continue
        many = spec.kind == "mapping"
        annotation = list[str] | None if many else str | None
        help_text = (spec.doc or name) + f" (read by {', '.join(spec.sources)})"
        params.append(inspect.Parameter(name, kw, default=None, annotation=Annotated[annotation, typer.Option(
            flag(name), help=help_text + (" (THEIR=OURS, repeatable)" if many else ""),
            rich_help_panel="Per-source options", show_default=False)]))
        specs[name] = spec
    return params, specs


def given_options(values: dict[str, Any], specs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run keywords, reader options) given on the command line, converted."""
    from reliab.io import convert_text

    run, readers = {}, {}
    for name, spec in specs.items():
        value = values.get(name)
        if value is None or value == []:
            continue
        if spec is None:
            run[name] = value
        else:
            readers[name] = convert_text(spec, value)
    return run, readers


__all__ = ["flag", "given_options", "manifest_parameters", "manifest_value", "reading_parameters"]
