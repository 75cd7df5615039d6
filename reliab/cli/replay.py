"""``reliab replay``: what did failures cost a run, and what would each mitigation have saved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app
from reliab.cli._render import echo, printable


@app.command()
def replay(
    folder: Annotated[Path, typer.Argument(metavar="FOLDER", help="An ingest output folder (reliab ingest --out).")],
    checkpoint_interval: Annotated[str | None, typer.Option(
        "--checkpoint-interval", help="Replay with this checkpoint interval, e.g. 10min.")] = None,
    checkpoint_write: Annotated[str | None, typer.Option(
        "--checkpoint-write", help="Replay with this checkpoint write time.")] = None,
    restart: Annotated[str | None, typer.Option(
        "--restart", help="Replay with this time from each interruption to training again.")] = None,
    non_blocking: Annotated[bool, typer.Option("--non-blocking", help="Replay with background checkpoint writes.")] = False,
    drain: Annotated[bool, typer.Option(
        "--drain-after-first-critical", help="Drain a node after its first critical Xid.")] = False,
    lemons: Annotated[bool, typer.Option("--lemons", help="Remove the lemon nodes find_lemons flags.")] = False,
    job_name: Annotated[str | None, typer.Option(help="The run (job name); default the largest.")] = None,
    start: Annotated[str | None, typer.Option(help="Window start (ISO time); default the first job start.")] = None,
    end: Annotated[str | None, typer.Option(help="Window end (ISO time); default the last log line.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the figure of ETTR per scenario here (PNG, SVG or PDF); none without it.")] = None,
) -> None:
    """Print the run's ETTR, its lost GPU-hours per category, and the replay table.

    Without any change option a default menu is replayed: checkpoints at the Daly optimum,
    2-minute restarts, non-blocking writes and draining after the first critical Xid.
    """
    from reliab.cli._ingested import read_tables
    from reliab.errors import ReliabError
    from reliab.models import failure_cost, find_lemons, replay_mitigations

    try:
        t = read_tables(folder)
        cost = failure_cost(t["interruptions"], t["jobs"], t["signals"], job_name=job_name,
                            start=start, end=end)
        hosts = find_lemons(t["signals"], t["interruptions"], node_hours=cost.wall_h).lemons if lemons else None
        res = replay_mitigations(cost, checkpoint_interval_h=checkpoint_interval,
                                 checkpoint_write_h=checkpoint_write, restart_h=restart,
                                 blocking_writes=False if non_blocking else None,
                                 drain_after_first_critical=drain, lemons=hosts)
        _print(cost, res)
        if out is not None:
            res.plot().savefig(out, bbox_inches="tight")
    except (ReliabError, ValueError) as exc:
        _fail(exc)
    if out is not None:
        echo(f"wrote {out}")


def _print(cost, res) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    echo(f"run {cost.job_name!r}: {cost.start:%Y-%m-%d %H:%M} -> {cost.end:%Y-%m-%d %H:%M} UTC, "
               f"{cost.n} interruptions, ETTR {cost.ettr:.3f}, lost {cost.lost_gpu_hours:,.0f} GPU-hours")
    echo("wall clock: " + ", ".join(f"{k.replace('_', ' ')} {v:,.1f} h"
                                          for k, v in cost.breakdown.items()))
    by_cat = Table(title="cost of interruptions by category")
    for c in ("category", "interruptions", "lost work h", "downtime h", "restart h", "lost GPU-hours", "share %"):
        by_cat.add_column(c, justify="left" if c == "category" else "right")
    for r in cost.summary().itertuples(index=False):
        by_cat.add_row(Text(printable(r.category)), f"{r.interruptions:,.0f}", f"{r.lost_work_h:,.1f}",
                       f"{r.downtime_h:,.1f}", f"{r.restart_h:,.1f}", f"{r.lost_gpu_hours:,.0f}",
                       f"{r.share_pct:.1f}")
    console.print(by_cat)
    table = Table(title="what each change would have given (replay of the observed interruptions)")
    for c in ("scenario", "interruptions", "ETTR", "change pp", "not training GPU-h", "saved GPU-h",
              "interruptions GPU-h", "ckpt writes GPU-h"):
        table.add_column(c, justify="left" if c == "scenario" else "right")
    for r in res.table.itertuples(index=False):
        table.add_row(Text(printable(r.scenario)), f"{r.interruptions}", f"{r.ettr:.3f}", f"{r.ettr_change_pp:+.2f}",
                      _gpu_h(r.not_training_gpu_hours), _gpu_h(r.saved_gpu_hours),
                      _gpu_h(r.lost_gpu_hours), _gpu_h(r.checkpoint_gpu_hours))
    console.print(table)
    echo("not training: GPUs x wall time x (1 - ETTR); saved: the observed run's not-training "
               "GPU-hours minus the scenario's")
    assumed = str(res.table["assumptions"].iloc[0]) if len(res.table) else "none"
    echo(f"assumed (the logs do not give it): {assumed}")
    for note in res.notes:
        if not note.startswith("assumed: "):
            echo(f"note: {note}")


def _gpu_h(value: float) -> str:
    """GPU-hours as printed; a GPU count the job records do not give reads as such."""
    return "unknown (no GPU count)" if value != value else f"{value:,.0f}"
