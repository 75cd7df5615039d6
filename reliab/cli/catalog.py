"""``reliab sources`` and ``reliab explain``: what reliab reads and how it classifies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app


@app.command()
def sources() -> None:
    """List the registered input formats."""
    from reliab.io import available_sources

    for row in available_sources().itertuples(index=False):
        typer.echo(f"{row.name:<16} {row.table:<10} {row.summary}")


@app.command()
def explain(
    signal: Annotated[str, typer.Argument(help="Signal key, e.g. xid:79 or nccl:watchdog_timeout.")],
    message: Annotated[str | None, typer.Option(help="Message text, for rules that match on it.")] = None,
    rules: Annotated[Path | None, typer.Option(help="A user rules CSV that overrides the shipped one.")] = None,
) -> None:
    """Show which taxonomy rule classifies SIGNAL, and why."""
    from reliab.errors import ReliabError
    from reliab.taxonomy import explain as run_explain
    from reliab.taxonomy import load_rules

    try:
        loaded = load_rules(rules) if rules is not None else None
        typer.echo(str(run_explain(signal, message, rules=loaded)))
    except (ReliabError, FileNotFoundError) as exc:
        _fail(exc)
