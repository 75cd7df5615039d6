"""``reliab demo``: ``reliab report`` on the bundled sample, compared with Llama 3 Table 5."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app
from reliab.cli._render import echo


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.html, report.pdf, results.json and tables.")] = Path("demo-report"),
    data: Annotated[Path | None, typer.Option(help="Sample folder (default: the bundled llama3-54d).")] = None,
    pdf: Annotated[bool, typer.Option(help="Also render report.pdf.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
) -> None:
    """The whole pipeline on the bundled Llama-3-scale sample: `reliab report` with --compare llama3."""
    from reliab import demo as run_demo
    from reliab.errors import ReliabError

    try:
        result = run_demo(out, data=data, pdf=pdf, progress=not quiet)
    except (ReliabError, FileNotFoundError, ValueError) as exc:
        _fail(exc)
    for name, path in result.files.items():
        echo(f"{name:>22}  {path}")
    echo(result.headline())
