"""The ``reliab`` command line: ``demo``, ``ingest``, ``sources``, ``explain``, ``report``.

Every data or input problem ends with a one-line message on stderr and exit code 1 — no
traceback.  The CLI uses the public API only.
"""

from __future__ import annotations

import sys
from pathlib import Path
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


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.html, report.pdf and Parquet tables.")] = Path("demo-report"),
    data: Annotated[Path | None, typer.Option(help="Sample folder (default: the bundled llama3-54d).")] = None,
    pdf: Annotated[bool, typer.Option(help="Also render report.pdf.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
) -> None:
    """Run the whole pipeline on the bundled Llama-3-scale sample and write the report."""
    from reliab._demo import demo as run_demo
    from reliab.errors import ReliabError

    try:
        result = run_demo(out, data=data, pdf=pdf, progress=not quiet)
    except (ReliabError, FileNotFoundError) as exc:
        _fail(exc)
    for name, path in result.files.items():
        typer.echo(f"{name:>22}  {path}")
    typer.echo(result.headline())


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to read.")],
    source: Annotated[str | None, typer.Option(help="Force a format (see `reliab sources`).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the canonical tables as Parquet here.")] = None,
    store: Annotated[Path | None, typer.Option(
        "--store", help="Incremental store folder: read only new files and new lines, keep all tables there.")] = None,
    strict: Annotated[bool, typer.Option(help="Fail on the first malformed line.")] = False,
    year: Annotated[int | None, typer.Option(help="Year for timestamps that carry none (RFC 3164).")] = None,
    rules: Annotated[Path | None, typer.Option(help="A user taxonomy rules CSV that overrides the shipped one.")] = None,
    why: Annotated[bool, typer.Option("--why", help="Also say why each format was chosen.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Read raw logs, show the format and compression chosen and the line accounting of every file.

    With --store the accounting shows this run's new lines per file and a status
    (new, appended, unchanged, rotated); the tables are the whole store.
    """
    from reliab.errors import ReliabError
    from reliab.io import ingest as run_ingest

    options = {} if year is None else {"year": year}
    try:
        result = run_ingest(paths, source=source, strict=strict, store=store, rules=rules, progress=not quiet,
                            **options)
    except (ReliabError, KeyError) as exc:
        _fail(exc)
    from rich.console import Console
    from rich.table import Table

    acc = result.accounting
    status = "status" in acc.columns
    title = "line accounting (lines = parsed + irrelevant + malformed)"
    table = Table(title=title + (": new lines of this run" if status else ""))
    text_cols = ["path", "source", "compression", "confidence", *(["status"] if status else []),
                 *(["why"] if why else [])]
    for col in [*text_cols, "lines", "parsed", "irrelevant", "malformed"]:
        table.add_column(col, justify="left" if col in text_cols else "right", overflow="fold")
    for row in acc.itertuples(index=False):
        choice = result.sources.get(str(row.path))
        table.add_row(str(row.path), str(row.source), _compression(row.path),
                      "" if choice is None else f"{choice.confidence:.2f}",
                      *([str(row.status)] if status else []),
                      *([choice.reason if choice is not None else ""] if why else []),
                      *(f"{int(v):,}" for v in (row.lines, row.parsed, row.irrelevant, row.malformed)))
    Console().print(table)
    if status:
        counts = acc["status"].value_counts()
        typer.echo("files: " + ", ".join(f"{int(counts.get(s, 0)):,} {s}"
                                         for s in ("new", "appended", "rotated", "unchanged")))
    typer.echo(f"{len(result.signals):,} signals, {len(result.jobs):,} jobs, "
               f"{len(result.interruptions):,} interruptions, {len(result.quarantine):,} quarantined lines"
               + (f" in store {store}" if store is not None else ""))
    if len(result.interruptions):
        top = result.interruptions["category"].value_counts().head(8)
        typer.echo("interruptions by category: " + ", ".join(f"{k} {v:,}" for k, v in top.items()))
    if out is not None:
        written = result.write_parquet(out)
        for path in written:
            typer.echo(f"wrote {path}")


def _compression(path: object) -> str:
    from reliab.io._files import compression_of

    try:
        return compression_of(str(path)) or "none"
    except OSError:
        return "?"


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


def main() -> None:
    """Entry point of the ``reliab`` console script."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        typer.echo("reliab: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
