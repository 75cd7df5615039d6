"""``reliab report``: a reliability report for your own cluster's logs.

It reads the logs as ``reliab ingest`` does, with the same options (``--manifest``,
``--source``, ``--quarantine-limit`` and every run setting and reader option,
:mod:`reliab.cli._readeropts`), and prints what it wrote, what it did not read and the
headline.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from reliab.cli._app import _fail, app
from reliab.cli._readeropts import (
    given_options,
    manifest_parameters,
    manifest_value,
    reading_parameters,
)
from reliab.cli._render import echo


def _own_parameters() -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY

    def opt(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
        return inspect.Parameter(name, kw, annotation=annotation, default=default)

    return [
        inspect.Parameter("logs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=Annotated[
            list[Path] | None, typer.Argument(metavar="LOGS", help="Log files or folders (every file is accounted for).",
                                              show_default=False)]),
        opt("out", Annotated[Path | None, typer.Option(
            "--out", "-o", help="Output folder for report.html, report.pdf, results.json and tables.")]),
        opt("gpus", Annotated[int | None, typer.Option(help="GPUs in service over the window (the exposure's fleet size).")]),
        opt("inventory", Annotated[Path | None, typer.Option(
            help="Inventory CSV (unit, kind, installed[, removed, removal_reason]) instead of --gpus.")]),
        opt("window", Annotated[tuple[str, str] | None, typer.Option(
            metavar="START END", help="Observation window: two UTC dates or times, START and END.")]),
        opt("gpus_per_node", Annotated[int, typer.Option(help="GPUs per node.")], 8),
        opt("config", Annotated[Path | None, typer.Option(
            help="A TOML file with these settings (command-line options win).")]),
        opt("compare", Annotated[str | None, typer.Option(help="Compare category counts with a published table: llama3.")]),
        opt("previous", Annotated[Path | None, typer.Option(
            help="results.json of the previous period, to report the change.")]),
        opt("policy", Annotated[str | None, typer.Option(
            help="What counts as an interruption: fleet (default) or training-run.")]),
        opt("job_name", Annotated[str | None, typer.Option(help="The training run for --policy training-run.")]),
        opt("title", Annotated[str | None, typer.Option(help="Report title.")]),
        opt("label", Annotated[str | None, typer.Option(help="Name of the period, for example '2024 Q2'.")]),
        opt("pdf", Annotated[bool, typer.Option(help="Also render report.pdf (--no-pdf: only the HTML).")], True),
        opt("quiet", Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")], False),
        opt("strict", Annotated[bool, typer.Option(
            "--strict", help="Fail on the first malformed line or file not read.")], False),
        opt("source", Annotated[str | None, typer.Option(help="Force a format (see `reliab sources`).")]),
        *manifest_parameters(),
        opt("stream", Annotated[bool | None, typer.Option(
            "--stream/--no-stream", help="Stream the tables to OUT/tables while reading and read back only the rows"
            " the analyses use (bounded memory; default: when the inputs hold at least 256 MiB).",
            show_default=False)]),
        opt("quarantine_limit", Annotated[int | None, typer.Option(
            help="Malformed lines of a file kept in full in the quarantine (default 1000); the rest are"
                 " counted in one summary row (also a reliab.toml key).", show_default=False)]),
    ]


_OWN = _own_parameters()


def _window(window: tuple[str, str] | None) -> tuple[str, str] | None:
    """``--window START END``, refused when an option was taken for END (a one-value window)."""
    if window is not None and any(w.startswith("-") and not w[1:2].isdigit() for w in window):
        raise typer.BadParameter(f"--window needs two values, START and END; got {window[0]!r} then the option"
                                 f" {window[1]!r}")
    return window


def _report(**values: Any) -> None:
    """Ingest LOGS, run every analysis and write the report (HTML and PDF), results.json and tables.

    The exposure is explicit: --gpus N or --inventory FILE, over --window START END (default:
    the span of the job records). Without a fleet size, GPU-days come from the job records and
    the report says so. What cannot be computed is stated in the report with the reason.  The
    logs are read as reliab ingest reads them, with the same options (a reliab.toml beside
    them, --manifest, --boot-time, --tz...).
    """
    from reliab.cli.ingest import reading_lines
    from reliab.errors import ReliabError
    from reliab.study import load_config, run_report

    logs = values["logs"]
    try:
        opts: dict = {}
        text = None
        if values["config"] is not None:
            cfg = load_config(values["config"])
            opts = dict(cfg.options)
            text = cfg.text
            logs = logs or list(cfg.logs)
        run, readers = given_options(values, _SPECS)
        given = {k: values[k] for k in ("out", "gpus", "inventory", "compare", "previous", "policy", "job_name",
                                        "title", "label", "source", "quarantine_limit")}
        given["window"] = _window(values["window"])
        opts.update({k: v for k, v in given.items() if v is not None})
        opts.update(run)
        opts.update(readers)
        if values["manifest"] is not None or values["no_manifest"]:
            opts["manifest"] = manifest_value(values)
        if values["gpus_per_node"] != 8 or "gpus_per_node" not in opts:
            opts["gpus_per_node"] = values["gpus_per_node"]
        if not values["pdf"]:
            opts["pdf"] = False
        if values["strict"]:
            opts["strict"] = True
        if values["stream"] is not None:
            opts["stream"] = values["stream"]
        if not logs:
            raise typer.BadParameter("give LOGS (files or folders) or --config FILE")
        if opts.get("gpus") is not None and opts.get("inventory") is not None:
            raise typer.BadParameter("give --gpus or --inventory, not both")
        opts.setdefault("out", Path("report"))
        result = run_report(logs, progress=not values["quiet"], config_text=text, **opts)
    except (ReliabError, FileNotFoundError, ValueError, KeyError) as exc:
        _fail(exc)
    for name, path in result.files.items():
        if not name.endswith(".parquet"):
            echo(f"{name:>14}  {path}")
    for line in reading_lines(result.ingest, [str(p) for p in logs]):
        echo(line)
    echo(result.headline())


_GENERATED, _SPECS = reading_parameters([p.name for p in _OWN])
_report.__signature__ = inspect.Signature([*_OWN, *_GENERATED])  # type: ignore[attr-defined]
app.command("report")(_report)
