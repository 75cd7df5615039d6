"""``reliab ingest``: read raw logs and account for every file.

The command's options are built from two signatures, so they never fall behind the API:
the run-level keywords of :func:`reliab.ingest` a manifest may also set (``--rules``,
``--before``, ``--after`` and whatever the API adds) and every per-source option of the
registered readers and live sources (``--year``, ``--tz``, ``--boot-time``, ``--host``,
``--job-id``, ``--fields``, ``--start``, ``--time``, ``--columns THEIR=OURS``…,
:func:`reliab.io._options.reader_options`).  Output is plain text: a per-folder roll-up
(``--files`` for one row per file), paths relative to the folder given, then a summary
naming the files not read.
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
from reliab.cli._render import echo, folder_of, printable, relative, table

#: CLI switches of this command (reader options of these names are not offered as flags)
_FIXED = ("paths", "source", "out", "store", "rebuild", "strict", "manifest", "no_manifest", "files", "why",
          "quiet", "engine", "scheduler", "workers", "quarantine_limit", "stream")
_NUMBERS = ("files", "lines", "parsed", "irrelevant", "malformed")
#: how many files not read the summary names before "and N more"
_NAMED = 5


def _fixed_parameters() -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY

    def opt(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(name, kw, annotation=annotation, default=default)

    return [
        inspect.Parameter("paths", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Annotated[
            list[str], typer.Argument(metavar="PATHS", help="Files, folders or scheme:// sources to read.", show_default=False)]),
        opt("source", Annotated[str | None, typer.Option(help="Force a format (see `reliab sources`).")], None),
        opt("out", Annotated[Path | None, typer.Option("--out", "-o", help="Write the canonical tables as Parquet here.")],
            None),
        opt("store", Annotated[Path | None, typer.Option(
            help="Incremental store folder: read only new files and new lines, keep all tables there.")], None),
        opt("rebuild", Annotated[bool, typer.Option(
            "--rebuild", help="With --store: discard the store and read every file afresh.")], False),
        opt("strict", Annotated[bool, typer.Option(
            "--strict", help="Fail on the first malformed line or file not read.")], False),
        *manifest_parameters(),
        opt("files", Annotated[bool, typer.Option("--files", help="One row per file instead of per folder.")], False),
        opt("why", Annotated[bool, typer.Option("--why", help="With each file, why its format was chosen.")], False),
        opt("quiet", Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")], False),
        opt("quarantine_limit", Annotated[int | None, typer.Option(
            help="Malformed lines of a file kept in full in the quarantine (default 1000); the rest are"
                 " counted in one summary row (also a reliab.toml key).", show_default=False)], None),
        opt("engine", Annotated[str, typer.Option(
            help="local: read the files here; dask: on a Dask cluster (--scheduler, else a local one of"
                 " --workers processes), same result; with --out the workers write Parquet partitioned by"
                 " source and date.", rich_help_panel="Scale-out")], "local"),
        opt("stream", Annotated[bool, typer.Option(
            "--stream", help="With --out (local engine): write each file's tables as soon as it is read,"
                             " partitioned by source and date as --engine dask writes them, so memory stays"
                             " bounded on inputs of any size.", rich_help_panel="Scale-out")], False),
        opt("scheduler", Annotated[str | None, typer.Option(
            help="With --engine dask: address of a running scheduler, e.g. tcp://host:8786.",
            rich_help_panel="Scale-out")], None),
        opt("workers", Annotated[int | None, typer.Option(
            help="With --engine dask and no --scheduler: worker processes of the local cluster (default:"
                 " one per core).", rich_help_panel="Scale-out")], None),
    ]


def _roots(paths: list[str]) -> list[str]:
    return [p if Path(p).is_dir() else str(Path(p).parent) for p in paths]


def _rollup(result: Any, roots: list[str]) -> str:
    acc = result.accounting
    groups: dict[tuple[str, str], list[int]] = {}
    for row in acc.itertuples(index=False):
        key = (folder_of(str(row.path), roots), str(row.source))
        g = groups.setdefault(key, [0, 0, 0, 0, 0])
        for i, v in enumerate((1, row.lines, row.parsed, row.irrelevant, row.malformed)):
            g[i] += int(v)
    rows = [(folder, source, *counts) for (folder, source), counts in sorted(groups.items())]
    total = [sum(int(v) for v in acc[c]) for c in ("lines", "parsed", "irrelevant", "malformed")]
    rows.append(("total", "", len(acc), *total))
    return table(["folder", "source", *_NUMBERS], rows, numeric=_NUMBERS)


def _per_file(result: Any, roots: list[str], why: bool) -> str:
    acc = result.accounting
    status = "status" in acc.columns
    header = ["path", "source", "compression", "confidence", *(["status"] if status else []),
              "lines", "parsed", "irrelevant", "malformed", *(["why"] if why else [])]
    rows = []
    for row in acc.itertuples(index=False):
        choice = result.sources.get(str(row.path))
        reason = row.reason if isinstance(row.reason, str) else (choice.reason if choice is not None else "")
        rows.append((relative(str(row.path), roots), str(row.source), _compression(str(row.path)),
                     "" if choice is None or choice.confidence == 0 else f"{choice.confidence:.2f}",
                     *([str(row.status)] if status else []),
                     int(row.lines), int(row.parsed), int(row.irrelevant), int(row.malformed),
                     *([reason] if why else [])))
    return table(header, rows, numeric=_NUMBERS[1:])


def _files_line(result: Any, roots: list[str]) -> str:
    unread, skipped = result.not_read(), result.not_read(skipped=True)
    n_read = len(result.accounting) - len(unread) - len(skipped)
    text = f"{n_read:,} file(s) read; {len(unread):,} not read"
    if len(unread):
        named = [f"{relative(str(p), roots)} ({s})" for p, s in zip(unread["path"], unread["source"], strict=True)]
        more = len(named) - _NAMED
        text += ": " + ", ".join(named[:_NAMED]) + (f" and {more:,} more (--files lists them)" if more > 0 else "")
    links = int((skipped["source"] == "duplicate").sum()) if len(skipped) else 0
    text += f"; {len(skipped) - links:,} skipped by name"
    if links:
        text += f", {links:,} link(s) to a file read"
    return printable(text + (" (--files lists them)" if len(skipped) else ""))


def _inferred_line(result: Any, roots: list[str]) -> str | None:
    """"times inferred: FILE (the parser's note)…" for the files whose times were not all read."""
    from reliab.io import inferred_times

    found = inferred_times(result.sources)
    if not found:
        return None
    named = [f"{relative(str(p), roots)} ({note})" for p, note in found]
    more = len(named) - _NAMED
    return printable("times inferred: " + "; ".join(named[:_NAMED])
                     + (f"; and {more:,} more (--why lists them)" if more > 0 else ""))


def reading_lines(result: Any, paths: list[str]) -> list[str]:
    """What a run did not read, as ``reliab ingest`` says it: the files not read (with why), the
    quarantined lines and the times inferred; ``reliab report`` prints the same lines."""
    roots = _roots(paths)
    inferred = _inferred_line(result, roots)
    return [_files_line(result, roots), _quarantined(result.quarantine), *([inferred] if inferred else [])]


def _counts_line(result: Any, store: Path | None) -> str:
    inter = result.interruptions
    planned = int(inter["planned"].sum()) if len(inter) else 0
    apart = f"; {len(result.user_failures):,} user failures apart" if result.policy == "fleet" else ""
    return (f"{result.to_dict()['signals']:,} signals, {len(result.jobs):,} jobs, {len(inter):,} interruptions"
            f" ({len(inter) - planned:,} unexpected, {planned:,} planned; policy {result.policy}{apart}),"
            f" {_quarantined(result.quarantine)}" + (f"; store {store}" if store else "")
            + (f"; {len(lives):,} unit lives" if len(lives := getattr(result, "lifetimes", ())) else ""))


def _quarantined(quarantine: Any) -> str:
    """"N quarantined line(s)", and past the per-file limit how many are kept in full."""
    from reliab.io import OMITTED, quarantined_lines

    lines = quarantined_lines(quarantine)
    if not len(quarantine) or lines == len(quarantine):
        return f"{lines:,} quarantined line(s)"
    kept = int((~quarantine["reason"].astype(str).str.startswith(OMITTED + "=")).sum())
    return f"{lines:,} quarantined line(s) ({kept:,} kept in full: --quarantine-limit)"


def _compression(path: str) -> str:
    from reliab.io import compression_of

    try:
        return compression_of(path) or "none" if Path(path).is_file() else ""
    except OSError:
        return "?"


def _ingest(**values: Any) -> None:
    """Read raw logs; show the line accounting per folder (or per file) and what was not read.

    A folder run never stops at a file: files no reader recognises, empty, binary, special
    (FIFO, socket, device) and unreadable files are listed with the reason and the run
    goes on (--strict makes them failures).  A reliab.toml beside the logs sets per-glob
    source and options.  With --store the counts are this run's new lines per file and a
    status column says new, appended, unchanged, rotated or rewritten.
    """
    from reliab.io import ingest as run_ingest

    paths: list[str] = values["paths"]
    engine, dask = values["engine"], values["engine"] == "dask"
    try:
        run, readers = given_options(values, _SPECS)
        manifest = manifest_value(values)
        if engine not in ("local", "dask"):
            raise ValueError(f"--engine must be local or dask, got {engine!r}")
        if not dask and (values["scheduler"] or values["workers"]):
            raise ValueError("--scheduler and --workers go with --engine dask")
        if values["stream"] and (values["out"] is None or dask or values["store"] is not None):
            raise ValueError("--stream goes with --out, the local engine and no --store")
        partitioned = values["out"] is not None and values["store"] is None and (dask or values["stream"])
        with _cluster(values) as client:
            result = run_ingest(paths, source=values["source"], strict=values["strict"], store=values["store"],
                                rebuild=values["rebuild"], manifest=manifest, progress=not values["quiet"],
                                engine=engine, client=client,
                                output=values["out"] if partitioned else None,
                                **run, **readers, **_limit(values))
    except Exception as exc:  # noqa: BLE001 - one line, exit 1 (see reliab.cli._app)
        _fail(exc)
    roots = _roots(paths)
    echo(_per_file(result, roots, values["why"]) if values["files"] or values["why"] else _rollup(result, roots))
    echo("")
    acc = result.accounting
    if "status" in acc.columns:
        counts = acc["status"].value_counts()
        echo("files: " + ", ".join(f"{int(counts.get(s, 0)):,} {s}" for s in
                                         ("new", "appended", "rotated", "rewritten", "unchanged")))
    echo(_files_line(result, roots))
    echo(_counts_line(result, values["store"]))
    inferred = _inferred_line(result, roots)
    if inferred:
        echo(inferred)
    if len(result.interruptions):
        top = result.interruptions["category"].value_counts().head(8)
        echo("interruptions by category: " + ", ".join(f"{k} {v:,}" for k, v in top.items()))
    for note in result.notes:  # evidence-coverage warnings are never silent; nor are manifests and repairs
        if note.startswith("Warning: "):
            echo(printable(note))
        elif note.startswith(("hand-over manifest", "store ")):
            echo(printable(f"note: {note}"))
    if partitioned:
        echo(f"wrote {printable(str(values['out']))}: tables partitioned by source and date, and a manifest")
    elif values["out"] is not None:
        for path in result.write_parquet(values["out"]).values():
            echo(f"wrote {printable(path)}")


def _limit(values: dict[str, Any]) -> dict[str, int]:
    """``quarantine_limit=`` when ``--quarantine-limit`` is given (else the manifest's or the default)."""
    return {} if values["quarantine_limit"] is None else {"quarantine_limit": values["quarantine_limit"]}


def _cluster(values: dict[str, Any]) -> Any:
    """The Dask client of ``--engine dask`` (``--scheduler`` or a local cluster), else no client."""
    from contextlib import nullcontext

    if values["engine"] != "dask":
        return nullcontext(None)
    from reliab.io import dask_client

    return dask_client(scheduler=values["scheduler"], workers=values["workers"])


_GENERATED, _SPECS = reading_parameters(_FIXED)
_ingest.__signature__ = inspect.Signature([*_fixed_parameters(), *_GENERATED])  # type: ignore[attr-defined]
app.command("ingest")(_ingest)
