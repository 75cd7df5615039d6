"""``reliab demo``: the whole pipeline on the bundled Llama-3-scale sample.

raw logs → :func:`reliab.ingest` (parse, classify, attribute) → :func:`reliab.estimate_rates`
→ :func:`reliab.build_report` → ``report.html``, ``report.pdf`` and Parquet tables.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class ClusterFacts:
    """What the rates need to know about the fleet: size and observation window."""

    n_gpus: int
    gpus_per_node: int
    start: pd.Timestamp
    end: pd.Timestamp

    @property
    def days(self) -> float:
        return (self.end - self.start) / pd.Timedelta(days=1)

    @property
    def n_nodes(self) -> int:
        return self.n_gpus // self.gpus_per_node


@dataclass(frozen=True)
class DemoResult:
    """Files written by :func:`demo`, with the timings of each stage (seconds)."""

    files: dict[str, Path]
    timings: dict[str, float]
    n_interruptions: int
    n_unexpected: int
    facts: ClusterFacts
    extra: dict[str, Any] = field(default_factory=dict)

    def headline(self) -> str:
        total = sum(self.timings.values())
        policy = f" [policy {self.extra['policy']}]" if "policy" in self.extra else ""
        return (f"{self.n_interruptions} interruptions ({self.n_unexpected} unexpected){policy} on "
                f"{self.facts.n_gpus:,} GPUs over {self.facts.days:.0f} days; done in {total:.1f} s")


def cluster_facts(data: Path, jobs: pd.DataFrame) -> ClusterFacts:
    """Fleet size and window from ``cluster.json`` in the sample folder, else from the jobs.

    Without ``cluster.json`` the window is first job start → last job end and the fleet is
    the largest allocation's GPU count (8 GPUs per node assumed when none is recorded).
    """
    meta = data / "cluster.json"
    if meta.exists():
        d = json.loads(meta.read_text())
        return ClusterFacts(int(d["n_gpus"]), int(d.get("gpus_per_node", 8)),
                            pd.Timestamp(d["start"]).tz_convert("UTC"), pd.Timestamp(d["end"]).tz_convert("UTC"))
    ngpus = int(jobs["ngpus"].max()) if jobs["ngpus"].notna().any() else int(jobs["nnodes"].max()) * 8
    end = jobs["end"].max() if jobs["end"].notna().any() else jobs["start"].max()
    return ClusterFacts(ngpus, 8, jobs["start"].min(), end)


def _job_level(result: Any, facts: ClusterFacts, rates: Any) -> tuple[Any, Any, Any, Any]:
    """Cost of the sample's training run, the default replay, MTTF vs size, checkpoint plan."""
    from reliab.models.jobs import (
        PUBLISHED_RATES,
        estimate_job_mttf,
        failure_cost,
        plan_checkpoints,
        replay_mitigations,
    )

    costs = failure_cost(result.interruptions, result.jobs, result.signals, start=facts.start,
                         end=facts.end)
    mttf = estimate_job_mttf(rates, gpus_per_node=facts.gpus_per_node,
                             jobs=result.jobs.dropna(subset=["end"]), interruptions=result.interruptions)
    scenarios = {"this run": mttf.rate_per_node_day, **PUBLISHED_RATES}
    plan = plan_checkpoints(checkpoint_write_h=max(costs.checkpoint_write_h, 1 / 60),
                            node_failure_rate_per_day=scenarios, gpus_per_node=facts.gpus_per_node,
                            simulate=False)
    return costs, replay_mitigations(costs), mttf, plan


def demo(out: str | Path = "demo-report", *, data: str | Path | None = None, pdf: bool = True,
         progress: bool = False, policy: str = "training-run",
         job_name: str | None = None) -> DemoResult:
    """Run ingest → rates → report on the bundled sample and write everything to ``out``.

    Parameters
    ----------
    out : path
        Output folder; created if needed.
    data : path, optional
        A sample folder; default the bundled ``llama3-54d`` (synthetic, calibrated to
        Llama 3 Table 5).
    pdf : bool
        Also render ``report.pdf`` with WeasyPrint.
    progress : bool
        Show progress bars while reading.
    policy, job_name : str, str or None
        What counts as an interruption (:func:`reliab.job_outcomes`).  The bundled sample is
        one training run, so the demo counts as Llama 3 did (``training-run``: 466
        interruptions, 47 of them planned); ``"fleet"`` shows the shared-cluster view of the
        same logs (application failures and cancellations set apart).

    Returns
    -------
    DemoResult
        Paths of ``report.html``, ``report.pdf`` and the Parquet tables, and timings.
    """
    from reliab.datasets import sample_path
    from reliab.io import ingest
    from reliab.models.rates import estimate_rates
    from reliab.report import build_report, write_html, write_pdf
    from reliab.taxonomy.vocabulary import table5

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(data) if data is not None else sample_path()
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    result = ingest(data, progress=progress, policy=policy, job_name=job_name)
    timings["ingest"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    facts = cluster_facts(data, result.jobs)
    rates = estimate_rates(result.interruptions, by="category", gpu_days=facts.n_gpus * facts.days,
                           gpus_per_node=facts.gpus_per_node, job_hours=facts.days * 24.0)
    timings["rates"] = time.perf_counter() - t0

    environment = None
    if len(result.telemetry):
        from reliab.models.environment.study import analyze_environment

        t0 = time.perf_counter()
        # demo choices: steps of >= 100 W per GPU of the fleet; an illustrative 10 MW grid limit
        environment = analyze_environment(
            result.telemetry, jobs=result.jobs, interruptions=result.interruptions,
            min_step_w=100.0 * facts.n_gpus, grid_limit_mw=10.0)
        timings["environment"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    costs, replay, job_mttf, plan = _job_level(result, facts, rates)
    timings["jobs"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    meta = {
        "data": str(data),
        "GPUs": f"{facts.n_gpus:,} ({facts.n_nodes:,} nodes × {facts.gpus_per_node})",
        "window": f"{facts.start:%Y-%m-%d %H:%M} → {facts.end:%Y-%m-%d %H:%M} UTC ({facts.days:.1f} days)",
        "input files": f"{len(result.accounting):,} ({int(result.accounting['lines'].sum()):,} lines)",
        "interruption policy": result.policy,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    report = build_report(result, rates=rates, reference=table5(),
                          title="Reliability report: Llama-3-scale sample cluster",
                          subtitle="Synthetic logs calibrated to Llama 3 Table 5 (arXiv 2407.21783)", meta=meta,
                          job_costs=costs, replay=replay, job_mttf=job_mttf, plan=plan,
                          environment=environment)
    files = {"report.html": write_html(report, out / "report.html")}
    timings["html"] = time.perf_counter() - t0
    if pdf:
        t0 = time.perf_counter()
        files["report.pdf"] = write_pdf(report, out / "report.pdf")
        timings["pdf"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for name, path in result.write_parquet(out).items():
        files[f"{name}.parquet" if not str(name).endswith(".parquet") else str(name)] = Path(path)
    timings["parquet"] = time.perf_counter() - t0

    inter = result.interruptions
    return DemoResult(files=files, timings=timings, n_interruptions=len(inter),
                      n_unexpected=int((~inter["planned"]).sum()), facts=facts,
                      extra={"policy": result.policy, "user_failures": len(result.user_failures)})
