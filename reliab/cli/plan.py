"""``reliab plan``: how often will a job of N GPUs fail, what ETTR to expect, when to checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app
from reliab.cli._render import echo, printable


@app.command()
def plan(
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs of the job to plan.")] = 16_384,
    source: Annotated[Path | None, typer.Option(
        "--from", help="An ingest output folder: take the per-node failure rate from its records.")] = None,
    node_failure_rate: Annotated[float | None, typer.Option(
        "--node-failure-rate", help="Interruptions per node-day (RSC-1: 0.0065).")] = None,
    checkpoint_write: Annotated[str, typer.Option(
        "--checkpoint-write", help="Time to write one checkpoint, e.g. 5min.")] = "1min",
    restart: Annotated[str, typer.Option("--restart", help="Restart overhead per interruption, e.g. 5min.")] = "5min",
    gpus_per_node: Annotated[int, typer.Option(help="GPUs per node.")] = 8,
    non_blocking: Annotated[bool, typer.Option("--non-blocking", help="Checkpoint writes do not pause training.")] = False,
    runs: Annotated[int, typer.Option(
        min=0, help="Monte-Carlo runs per point for the simulated optimum (0: none).")] = 400,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the heat-map figure here (PNG, SVG or PDF); none without it.")] = None,
) -> None:
    """Print MTTF, expected ETTR and the Young / Daly / simulated checkpoint optimum for a job,
    with a what-if table over checkpoint interval x restart time; with --out, the heat-map.

    Without --from or --node-failure-rate the published rates are used (Llama 3 Table 5,
    Meta RSC-1 and RSC-2).
    """
    from reliab.errors import ReliabError

    try:
        rates = _rates(source, node_failure_rate)
        sizes = sorted({4096, 8192, 16384, 32768, 65536, 131072, gpus})
        result = _plan(rates, sizes, gpus, checkpoint_write, restart, gpus_per_node, non_blocking, runs)
        _print(result, gpus, restart)
        if out is not None:
            result.plot().savefig(out, bbox_inches="tight")
    except (ReliabError, ValueError) as exc:
        _fail(exc)
    if out is not None:
        echo(f"wrote {out}")


def _rates(source: Path | None, rate: float | None) -> dict[str, float] | None:
    from reliab.cli._ingested import read_tables
    from reliab.models.jobs import observed_node_rate

    if source is not None and rate is not None:
        raise ValueError("give --from or --node-failure-rate, not both")
    if rate is not None:
        return {f"{rate * 1000:.3g} per 1000 node-days": rate}
    if source is None:
        return None
    tables = read_tables(source, ("jobs", "interruptions"))
    obs = observed_node_rate(tables["interruptions"], tables["jobs"])
    echo(f"{source}: {obs['count']} unexpected interruptions in {obs['node_days']:,.1f} node-days "
               f"= {1000 * obs['rate']:.3f} per 1000 node-days "
               f"(95% {1000 * obs['low']:.3f}-{1000 * obs['high']:.3f})")
    return {f"from {source.name}": obs["rate"]}


def _plan(rates, sizes, gpus, write, restart, per_node, non_blocking, runs):
    from reliab.models.jobs import DEFAULT_RESTARTS_MIN, plan_checkpoints, to_hours

    restarts = sorted({to_hours(restart, "restart_h"), *(m / 60 for m in DEFAULT_RESTARTS_MIN)})
    return plan_checkpoints(checkpoint_write_h=write, n_gpus=sizes, node_failure_rate_per_day=rates,
                            restarts_h=restarts, blocking_writes=not non_blocking, gpus_per_node=per_node,
                            simulate=[gpus] if runs > 0 else False, n_runs=max(runs, 2))


def _print(result, gpus: int, restart: str) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from reliab.models.jobs import to_hours

    console = Console()
    u0 = to_hours(restart, "restart_h")
    opt = result.optima[(result.optima["n_gpus"] == gpus) & (abs(result.optima["restart_h"] - u0) < 1e-9)]
    table = Table(title=f"{gpus:,} GPUs, restart {60 * u0:g} min, checkpoint write "
                        f"{60 * result.checkpoint_write_h:g} min: optimum interval (min) and ETTR")
    cols = ["r/1k nd", "MTTF h", "Young", "Daly", "sim.", "ETTR Daly", "ETTR sim."]
    for c in ["scenario", *cols]:
        table.add_column(c, justify="left" if c == "scenario" else "right")
    for row in opt.itertuples(index=False):
        sim = getattr(row, "simulated_h", float("nan"))
        table.add_row(Text(printable(row.scenario)), f"{1000 * row.node_failure_rate_per_day:.3f}", f"{row.mtti_h:.2f}",
                      f"{60 * row.young_h:.1f}", f"{60 * row.daly_h:.1f}", f"{60 * sim:.1f}",
                      f"{row.ettr_daly:.3f}", f"{getattr(row, 'ettr_simulated', float('nan')):.3f}")
    console.print(table)
    for scenario in opt["scenario"]:
        pivot = result.what_if(scenario=scenario, n_gpus=gpus)
        what = Table(title=Text(f"expected ETTR, {printable(scenario)}: interval (rows) x restart (columns), min"))
        what.add_column("interval")
        for c in pivot.columns:
            what.add_column(f"{c:g}", justify="right")
        for interval, values in pivot.iterrows():
            what.add_row(f"{interval:g}", *(f"{v:.3f}" for v in values))
        console.print(what)
