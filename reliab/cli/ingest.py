"""``reliab ingest``: read raw logs and show every file's line accounting."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(
        help="Files or folders to read, or live sources: slurm://[cluster], prometheus://host:9090.")],
    source: Annotated[str | None, typer.Option(help="Force a format (see `reliab sources`).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the canonical tables as Parquet here.")] = None,
    store: Annotated[Path | None, typer.Option(
        "--store", help="Incremental store folder: read only new files and new lines, keep all tables there.")] = None,
    strict: Annotated[bool, typer.Option(help="Fail on the first malformed line.")] = False,
    year: Annotated[int | None, typer.Option(help="Year for timestamps that carry none (RFC 3164).")] = None,
    rules: Annotated[Path | None, typer.Option(help="A user taxonomy rules CSV that overrides the shipped one.")] = None,
    why: Annotated[bool, typer.Option("--why", help="Also say why each format was chosen.")] = False,
    policy: Annotated[str | None, typer.Option(
        help="What counts as an interruption: fleet (default; NODE_FAIL, or FAILED with infrastructure "
             "evidence) or training-run (every end of one run, as Llama 3 counted).")] = None,
    job_name: Annotated[str | None, typer.Option(
        help="The training run for --policy training-run (default: the job name with the most GPU-hours).")] = None,
    start: Annotated[str | None, typer.Option(help="Live sources: start of the window (UTC if no offset).")] = None,
    end: Annotated[str | None, typer.Option(help="Live sources: end of the window (default now).")] = None,
    chunk: Annotated[str | None, typer.Option(help="slurm://: length of one sacct call (default 1D).")] = None,
    partition: Annotated[str | None, typer.Option(help="slurm://: only these partitions (comma-separated).")] = None,
    user: Annotated[str | None, typer.Option(help="slurm://: only these users (default all).")] = None,
    slurm_conf: Annotated[Path | None, typer.Option(help="slurm://: SLURM_CONF for sacct.")] = None,
    raw_dir: Annotated[Path | None, typer.Option(help="slurm://: keep the sacct output read here.")] = None,
    step: Annotated[str | None, typer.Option(help="prometheus://: evaluation step, e.g. 30s (default 60s).")] = None,
    metric: Annotated[list[str] | None, typer.Option(help="prometheus://: a metric to read (repeat; default the DCGM set).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Read raw logs, show the format and compression chosen and the line accounting of every file.

    With --store the accounting shows this run's new lines per file and a status
    (new, appended, unchanged, rotated); the tables are the whole store.
    """
    from reliab.errors import ReliabError
    from reliab.io import ingest as run_ingest
    from reliab.io.sources import scheme_of

    live = {"start": start, "end": end, "chunk": chunk, "partition": partition, "user": user,
            "slurm_conf": slurm_conf, "raw_dir": raw_dir, "step": step, "metrics": metric or None}
    options = {k: v for k, v in {"year": year, **live}.items() if v is not None}
    locations = [p if scheme_of(p) else Path(p) for p in paths]
    try:
        result = run_ingest(locations, source=source, strict=strict, store=store, rules=rules,
                            progress=not quiet, policy=policy, job_name=job_name, **options)
    except (ReliabError, KeyError, ValueError) as exc:
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
               f"{len(result.interruptions):,} interruptions (policy {result.policy}"
               + (f"; {len(result.user_failures):,} user failures apart" if result.policy == "fleet" else "")
               + f"), {len(result.quarantine):,} quarantined lines"
               + (f" in store {store}" if store is not None else ""))
    for note in result.notes:  # evidence-coverage warnings are never silent
        if note.startswith("Warning: "):
            typer.echo(note)
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
