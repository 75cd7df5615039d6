"""The ``reliab`` Typer application, its root options, the one-line error helper and ``main``.

Commands live in sibling modules (one per command or group), each decorating its function
with ``@app.command()``; :mod:`reliab.cli` imports them all.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reliab._version import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Failure-log statistics and reliability analytics for large GPU training clusters.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reliab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """reliab: turn a GPU cluster's raw logs into reliability answers."""


def _fail(exc: BaseException) -> None:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    typer.echo(f"reliab: error: {message}", err=True)
    raise typer.Exit(code=1)


def main() -> None:
    """Entry point of the ``reliab`` console script."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        typer.echo("reliab: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
