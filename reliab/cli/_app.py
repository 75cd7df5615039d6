"""The ``reliab`` Typer application, its root options, the one-line error helper and ``main``.

Commands live in sibling modules (one per command or group), each decorating its function
with ``@app.command()``; :mod:`reliab.cli` imports them all.  :func:`main` catches every
exception a command lets through and prints it as one line with exit code 1; ``reliab
--debug <command>`` (or ``RELIAB_DEBUG=1``) shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from reliab import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Failure-log statistics and reliability analytics for large GPU training clusters.",
)


def _flags_read_as_flags() -> None:
    """Show no value type beside an on/off flag in ``--help`` (``--strict``, not ``--strict <bool>``).

    Typer's rich help prints every option's type, a flag's too, which reads as if the flag took
    a value; an option that takes one keeps its type or metavar.
    """
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_reliab", False):
        return

    def display_type_rich(self: TyperOption, ctx: object) -> str | None:
        return None if self.is_flag else shown(self, ctx)  # type: ignore[arg-type]

    display_type_rich._reliab = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_read_as_flags()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reliab {__version__}")
        raise typer.Exit()


#: set by ``--debug``: let tracebacks through
_STATE = {"debug": os.environ.get("RELIAB_DEBUG", "") not in ("", "0")}


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the full traceback of an error.")] = False,
) -> None:
    """reliab: turn a GPU cluster's raw logs into reliability answers."""
    _STATE["debug"] = _STATE["debug"] or debug


def one_line(exc: BaseException) -> str:
    """``reliab: error: …`` on one printable line; the exception type unless it is a ReliabError.

    A message of several lines (a schema error and the checks that failed) is joined into
    one, its reasons separated by ``;``.
    """
    from reliab.cli._render import printable
    from reliab.errors import ReliabError

    lines = [ln.strip().removeprefix("- ") for ln in str(exc).strip().splitlines() if ln.strip()]
    message = " ".join(lines[:1] + ["; ".join(lines[1:])]).strip()
    if not isinstance(exc, ReliabError | FileNotFoundError | ValueError | TypeError | KeyError) or not message:
        message = f"{type(exc).__name__}: {message}".rstrip(": ") + " (run `reliab --debug …` for the traceback)"
    if isinstance(exc, KeyError) and message.startswith(("'", '"')):
        message = message[1:-1]
    return printable("reliab: error: " + message)


def _fail(exc: BaseException) -> None:
    if _STATE["debug"]:
        raise exc
    from reliab.cli._render import echo

    echo(one_line(exc), err=True)
    raise typer.Exit(code=1)




def main() -> None:
    """Entry point of the ``reliab`` console script: every error is one line and exit code 1.

    Importing ``reliab`` has already set polars' allocator option
    (:data:`reliab._allocator.ALLOCATOR_ENV`) unless the user set the variable.
    """
    from reliab.cli._render import echo

    try:  # typer >= 0.22 vendors click as typer._click; earlier versions use click itself
        from typer._click import exceptions as click
    except ImportError:  # pragma: no cover - older typer
        from click import exceptions as click

    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        echo("reliab: interrupted", err=True)
        sys.exit(130)
    except click.NoArgsIsHelpError as exc:  # `reliab` alone: the help, as click shows it
        exc.show()
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # bad usage: one line too, naming where help is
        command = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "reliab"
        echo(f"reliab: error: {exc.format_message()} (see `{command} --help`)", err=True)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - the promise: one line, no traceback
        if _STATE["debug"]:
            raise
        echo(one_line(exc), err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
