"""``reliab report``: a reliability report for your own cluster's logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app
from reliab.cli._render import echo


@app.command()
def report(
    logs: Annotated[list[Path] | None, typer.Argument(help="Log files or folders (every file is accounted for).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder for report.html, report.pdf, results.json and tables.")] = None,
    gpus: Annotated[int | None, typer.Option(help="GPUs in service over the window (the exposure's fleet size).")] = None,
    inventory: Annotated[Path | None, typer.Option(help="Inventory CSV (unit, kind, installed[, removed, removal_reason]) instead of --gpus.")] = None,
    window: Annotated[tuple[str, str] | None, typer.Option(help="Observation window START END (UTC dates or times).")] = None,
    gpus_per_node: Annotated[int, typer.Option(help="GPUs per node.")] = 8,
    config: Annotated[Path | None, typer.Option(help="A TOML file with these settings (command-line options win).")] = None,
    compare: Annotated[str | None, typer.Option(help="Compare category counts with a published table: llama3.")] = None,
    previous: Annotated[Path | None, typer.Option(help="results.json of the previous period, to report the change.")] = None,
    policy: Annotated[str | None, typer.Option(help="What counts as an interruption: fleet (default) or training-run.")] = None,
    job_name: Annotated[str | None, typer.Option(help="The training run for --policy training-run.")] = None,
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    label: Annotated[str | None, typer.Option(help="Name of the period, e.g. '2024 Q2'.")] = None,
    pdf: Annotated[bool, typer.Option(help="Also render report.pdf.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on the first malformed line or file not read.")] = False,
) -> None:
    """Ingest LOGS, run every analysis and write the report (HTML and PDF), results.json and tables.

    The exposure is explicit: --gpus N or --inventory FILE, over --window START END (default:
    the span of the job records). Without a fleet size, GPU-days come from the job records and
    the report says so. What cannot be computed is stated in the report with the reason.
    """
    from reliab.errors import ReliabError
    from reliab.study import load_config, run_report

    try:
        opts: dict = {}
        text = None
        if config is not None:
            cfg = load_config(config)
            opts = dict(cfg.options)
            text = cfg.text
            logs = logs or list(cfg.logs)
        given = {"out": out, "gpus": gpus, "inventory": inventory, "window": window,
                 "compare": compare, "previous": previous, "policy": policy, "job_name": job_name,
                 "title": title, "label": label}
        opts.update({k: v for k, v in given.items() if v is not None})
        if gpus_per_node != 8 or "gpus_per_node" not in opts:
            opts["gpus_per_node"] = gpus_per_node
        if not pdf:
            opts["pdf"] = False
        if strict:
            opts["strict"] = True
        if not logs:
            raise typer.BadParameter("give LOGS (files or folders) or --config FILE")
        if opts.get("gpus") is not None and opts.get("inventory") is not None:
            raise typer.BadParameter("give --gpus or --inventory, not both")
        opts.setdefault("out", Path("report"))
        result = run_report(logs, progress=not quiet, config_text=text, **opts)
    except (ReliabError, FileNotFoundError, ValueError, KeyError) as exc:
        _fail(exc)
    for name, path in result.files.items():
        if not name.endswith(".parquet"):
            echo(f"{name:>14}  {path}")
    echo(result.headline())
