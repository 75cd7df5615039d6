"""The job-level section of the report: ETTR of the run, the cost of failures, the replay.

Thin on purpose: it formats the frozen results of :func:`reliab.failure_cost` and
:func:`reliab.replay_mitigations` (their ``summary()``, ``notes`` and ``plot()``) and
computes nothing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from reliab.report.document import Block, Callout, Figure, RowKind, Section, Table, Text
from reliab.report.formatting import DASH, fmt_int, fmt_pct


def _f(value: Any, spec: str) -> str:
    """``value`` with a format spec, or a dash when missing."""
    return DASH if value is None or pd.isna(value) else format(float(value), spec)


def _cost_table(cost: Any) -> Table:
    s = cost.summary(by="category")
    gpus = cost.n_gpus
    data = pd.DataFrame({
        "Category": s["category"].astype(str),
        "Interruptions": [fmt_int(v) for v in s["interruptions"]],
        "Lost work h": [_f(v, ",.1f") for v in s["lost_work_h"]],
        "Downtime h": [_f(v, ",.1f") for v in s["downtime_h"]],
        "Restart h": [_f(v, ",.1f") for v in s["restart_h"]],
        "Lost GPU-hours": [fmt_int(v) for v in s["lost_gpu_hours"]],
        "Share %": [fmt_pct(v) for v in s["share_pct"]],
    })
    kinds: tuple[RowKind, ...] = tuple("total" if c == "Total" else "" for c in data["Category"])
    return Table("Cost of interruptions by category", data,
                 f"Per interruption: work since the last checkpoint, downtime until the next "
                 f"allocation, and its restart (checkpoint load), times the job's "
                 f"{gpus:,.0f} GPUs.", numeric=tuple(data.columns[1:]), row_kinds=kinds)


def _replay_table(replay: Any) -> Table:
    t = replay.summary()
    data = pd.DataFrame({
        "Scenario": t["scenario"].astype(str),
        "Interruptions": [fmt_int(v) for v in t["interruptions"]],
        "ETTR": [_f(v, ".3f") for v in t["ettr"]],
        "Change pp": [f"{v:+.2f}" for v in t["ettr_change_pp"]],
        "Lost GPU-hours": [fmt_int(v) for v in t["lost_gpu_hours"]],
        "Checkpoint GPU-hours": [fmt_int(v) for v in t["checkpoint_gpu_hours"]],
    })
    return Table("What each mitigation would have given", data,
                 "The observed interruptions replayed with one change at a time (in running "
                 "time: the failures strike after the same training time). 'Replay, observed "
                 "parameters' re-runs the cost model with the logged checkpoint interval and "
                 "write time; it equals the observed row when the run followed one fixed policy.",
                 numeric=tuple(data.columns[1:]))


def _plan_table(plan: Any, n_gpus: int) -> Table:
    o = plan.summary()
    o = o[o["n_gpus"] == n_gpus]
    o = o[o["restart_h"] == o["restart_h"].min()]
    data = pd.DataFrame({
        "Failure rate": o["scenario"].astype(str),
        "Per 1k node-days": [_f(1000 * v, ".3f") for v in o["node_failure_rate_per_day"]],
        "MTTF h": [_f(v, ".2f") for v in o["mtti_h"]],
        "Young min": [_f(60 * v, ".1f") for v in o["young_h"]],
        "Daly min": [_f(60 * v, ".1f") for v in o["daly_h"]],
        "ETTR at Daly": [_f(v, ".3f") for v in o["ettr_daly"]],
    })
    return Table(f"Checkpoint interval for {n_gpus:,} GPUs", data,
                 f"Young (1974) and Daly (2006) optimum intervals for a {60 * plan.checkpoint_write_h:g}-min "
                 f"checkpoint write and {60 * o['restart_h'].min():g}-min restarts, and the expected ETTR "
                 "there (exact renewal expectation, exponential failures).",
                 numeric=tuple(data.columns[1:]))


def job_section(cost: Any, replay: Any | None = None, *, mttf: Any | None = None,
                plan: Any | None = None) -> Section:
    """Section ``jobs``: callouts, cost table and figure, replay, MTTF vs size and the plan."""
    wall = cost.wall()
    blocks: list[Block] = [
        Callout("Effective training time", f"{100 * cost.ettr:.1f}%", f"of {cost.wall_h:,.0f} wall hours",
                "good" if cost.ettr >= 0.9 else "warn"),
        Callout("Lost to interruptions", f"{cost.lost_gpu_hours / 1e6:,.2f} M GPU-h",
                f"{cost.n:,} interruptions"),
        Callout("Checkpointing", _f(60 * cost.checkpoint_interval_h, ".0f") + " min",
                f"write {_f(3600 * cost.checkpoint_write_h, '.0f')} s (logged medians)"),
        Text(f"Run {cost.job_name!r} from {cost.start:%Y-%m-%d %H:%M} to {cost.end:%Y-%m-%d %H:%M} "
             "UTC. Wall-clock hours by use:",
             items=tuple(f"{r.use.replace('_', ' ')}: {r.hours:,.1f} h ({r.pct_of_wall:.1f}%)"
                         for r in wall.itertuples(index=False))),
        _cost_table(cost),
        Figure("Lost GPU-hours per category", cost.plot(),
               "Each bar splits what the category's interruptions cost into work lost since the "
               "last checkpoint, downtime and restart.", alt="Stacked bar chart of lost GPU-hours"),
    ]
    if replay is not None:
        blocks += [_replay_table(replay),
                   Figure("ETTR under each mitigation", replay.plot(),
                          "Dashed line: the observed run.", alt="Bar chart of replayed ETTR")]
    if mttf is not None:
        blocks.append(Figure("Job MTTF against job size", mttf.plot(),
                             "Line and band: a job as a series system of its nodes, 1/(N r) with the "
                             "rate's interval; dots: MTTF measured from the job records per size bucket.",
                             alt="Log-log plot of job MTTF against GPU count"))
    if plan is not None:
        size = int(round(cost.n_gpus)) if cost.n_gpus in set(plan.grid["n_gpus"]) else int(plan.grid["n_gpus"].iloc[0])
        blocks += [_plan_table(plan, size),
                   Figure("Expected ETTR: GPUs x checkpoint interval x restart time", plan.plot(),
                          "Exact renewal expectation of ETTR at the first failure rate of the plan; "
                          "one panel per restart time; triangles: Daly's optimum.",
                          alt="Heat-maps of expected ETTR")]
    notes = tuple(dict.fromkeys((*cost.notes, *(replay.notes if replay is not None else ()))))
    blocks.append(Text("ETTR is productive training time over wall time (Kokolis et al., HPCA 2025; "
                       "Llama 3's 'effective training time').", items=notes, kind="note"))
    return Section("Job-level reliability", tuple(blocks), key="jobs")
