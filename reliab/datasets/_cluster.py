"""The simulated cluster: ground truth in memory, raw files on :meth:`SimulatedCluster.write`.

:func:`simulate` chains the processes of :mod:`._simulate` (timeline, frailty, node pool),
:mod:`._jobs`, :mod:`._signatures` (evidence per category) and :mod:`._environment`
(telemetry).  Background signals that did not interrupt the job are kept at least 20
minutes from every attribution window ``[end − 10 min, end + 5 min]`` (docs/raw-formats.md)
and are about ten times as frequent on lemon nodes (an assumption of this generator) — the
lemon signals of Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning
Research Clusters" (arXiv 2410.21680, HPCA 2025; lemon-node detection): distinct XIDs,
tickets, link flaps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reliab.datasets import _messy
from reliab.datasets import _writers as w
from reliab.datasets._environment import cluster_telemetry
from reliab.datasets._evidence import Evidence, add_background
from reliab.datasets._jobs import build_jobs, hostlist
from reliab.datasets._noise import kernel_noise, syslog_noise, training_lines
from reliab.datasets._other_jobs import build_other_jobs
from reliab.datasets._precursors import plant_precursors
from reliab.datasets._progress import (
    CHECKPOINT_WRITE_S,
    checkpoint_schedule,
    progress_truth,
    resume_time,
)
from reliab.datasets._signatures import Case, express
from reliab.datasets._simulate import (
    GPU_PCI,
    US_PER_MIN,
    SimParams,
    assign_hosts,
    draw_counts,
    draw_nodes,
    draw_timeline,
    host_name,
    rng_for,
    true_rates,
)
from reliab.taxonomy.vocabulary import COMPONENT_OF, TABLE5_COUNTS

# window [end-10, end+5] widened by 20 min (+1 min for the trailing lines of a link flap)
_KEEP_AWAY_US = (31 * US_PER_MIN, 25 * US_PER_MIN)
_BG_WEIGHTS = {False: np.array([0.3, 0.2, 0.2, 0.15, 0.14, 0.01]),
               True: np.array([0.35, 0.25, 0.1, 0.1, 0.05, 0.15])}
_LEMON_BG_FACTOR = 10.0
_FIRST_STEP = 350_000  # global step at the start of the window (assumed)


@dataclass(frozen=True)
class SimulatedCluster:
    """Ground truth of one simulated 54-day run; :meth:`write` produces the raw logs.

    Attributes
    ----------
    interruptions : DataFrame
        One row per interruption: ``time`` (job end, UTC), ``job_id``, ``category``,
        ``component``, ``planned``, ``host``, ``gpu`` (PCI id), ``gpu_index``,
        ``failure_time``, ``downtime_h``, ``job_state``.
    jobs : DataFrame
        One row per Slurm allocation (columns of ``reliab.schema.JOBS`` plus ``category``).
    nodes : DataFrame
        ``host``, ``frailty``, ``lemon``, ``spare`` and the number of interruptions.
    telemetry : dict of DataFrame
        ``cluster`` (1 min), ``nodes`` (15 min), ``gpus`` (one day at 1 min).
    true_rates : DataFrame
        Expected count, rate per GPU-hour and time shape per category.
    params : SimParams
        The parameters of the run.
    checkpoints : DataFrame
        Every checkpoint written: ``job_id``, ``time`` (completion), ``write_s``.
    costs : DataFrame
        What each interruption cost (``reliab.datasets._progress.progress_truth``): downtime,
        restart, lost work and lost GPU-hours.
    other_jobs : DataFrame
        Other users' allocations on spare nodes (``reliab.datasets._other_jobs``): their
        sacct rows only, and ``truth/other_jobs.csv``.
    """

    interruptions: pd.DataFrame
    jobs: pd.DataFrame
    nodes: pd.DataFrame
    telemetry: dict[str, pd.DataFrame]
    true_rates: pd.DataFrame
    params: SimParams
    evidence: Evidence = field(repr=False)
    raw_jobs: pd.DataFrame = field(repr=False)
    other_jobs: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    checkpoints: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    costs: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    precursors: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def write(self, directory: str | Path) -> dict[str, Path]:
        """Write every raw file of docs/raw-formats.md and ``truth/*.csv`` under ``directory``.

        Returns
        -------
        dict of str to Path
            Relative name -> path of every file written.
        """
        return write_cluster(self, Path(directory))

    def summary(self) -> pd.DataFrame:
        """Interruptions per category: simulated count, share, expected count, Table 5."""
        got = self.interruptions["category"].value_counts()
        rates = self.true_rates.set_index("category")
        out = pd.DataFrame({
            "component": [COMPONENT_OF.get(c, "Unknown") for c in rates.index],
            "count": [int(got.get(c, 0)) for c in rates.index],
            "expected_count": rates["expected_count"].to_numpy(),
            "table5_count": [TABLE5_COUNTS.get(c, 0) for c in rates.index],
        }, index=rates.index.rename("category"))
        unexpected = out.loc[out.index != "Planned", "count"].sum()
        out["pct_of_unexpected"] = np.where(out.index != "Planned",
                                            100 * out["count"] / max(unexpected, 1), np.nan)
        return out.reset_index()


def simulate(params: SimParams) -> SimulatedCluster:
    """Run every process of the simulation once (no files are written)."""
    counts = draw_counts(params, rng_for(params, 1))
    timeline = draw_timeline(params, counts, rng_for(params, 2))
    nodes = draw_nodes(params, rng_for(params, 3))
    timeline, segments, spans = assign_hosts(params, timeline, nodes, rng_for(params, 4))
    raw_jobs = build_jobs(params, timeline, segments, rng_for(params, 5))
    ev = Evidence()
    _express_all(params, timeline, raw_jobs, segments, ev, rng_for(params, 6))
    _background(params, nodes, timeline, ev, rng_for(params, 7))
    planted = (plant_precursors(params, timeline, ev, rng_for(params, 9))
               if params.precursor_fraction > 0 else pd.DataFrame())
    telemetry = cluster_telemetry(params, raw_jobs, spans, rng_for(params, 8))
    nodes = nodes.assign(interruptions=np.bincount(timeline["node"][timeline["node"] >= 0],
                                                   minlength=len(nodes)))
    checkpoints, costs = progress_truth(params, raw_jobs, timeline)
    others = build_other_jobs(params, raw_jobs, spans, len(nodes), _evidence_times(ev),
                              rng_for(params, 30))
    return SimulatedCluster(
        interruptions=_truth_interruptions(timeline, raw_jobs), jobs=_public_jobs(params, raw_jobs,
                                                                                   timeline),
        nodes=nodes, telemetry=telemetry, true_rates=true_rates(params), params=params,
        evidence=ev, raw_jobs=raw_jobs, other_jobs=others, checkpoints=checkpoints,
        costs=costs, precursors=planted)


def _evidence_times(ev: Evidence) -> dict[int, np.ndarray]:
    """Times of every evidence record per node index (-1: records without a host)."""
    out: dict[int, list[int]] = {}
    recs = ([(r[0], r[1]) for r in ev.kernel] + [(r[0], r[1]) for r in ev.sel]
            + [(t, r[1]) for r in ev.tickets for t in (r[0], r[3])])
    for t, host in recs:
        key = int(host[4:]) - 1 if host.startswith("node") else -1
        out.setdefault(key, []).append(int(t))
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def _express_all(params: SimParams, timeline: pd.DataFrame, jobs: pd.DataFrame,
                 segments: list[np.ndarray], ev: Evidence, rng: np.random.Generator) -> None:
    gpn = params.gpus_per_node
    for i, row in enumerate(timeline.itertuples(index=False)):
        seg, node, gpu = segments[i], int(row.node), max(int(row.gpu_index), 0)
        pos = int(np.searchsorted(seg, node)) if node >= 0 else int(rng.integers(len(seg)))
        rank = pos * gpn + gpu
        others = rng.integers(0, len(seg) * gpn, 2)
        ranks = [int(x) for x in (others[0], rank, others[1])]
        host = host_name(node) if node >= 0 else ""
        case = Case(ev, int(row.failure_us), int(row.end_us), jobs["job_id"].iat[i], host, gpu,
                    rank, rng)
        express(case, row.category, ranks)


def _background(params: SimParams, nodes: pd.DataFrame, timeline: pd.DataFrame, ev: Evidence,
                rng: np.random.Generator) -> None:
    """Benign signals away from every attribution window; ×10 on lemon nodes."""
    lemon = nodes["lemon"].to_numpy()
    lam = params.background_per_node_day * params.days * np.where(lemon, _LEMON_BG_FACTOR, 1.0)
    n = rng.poisson(lam)
    ends = np.sort(timeline["end_us"].to_numpy())
    lo, hi = ends - _KEEP_AWAY_US[0], ends + _KEEP_AWAY_US[1]
    t0 = params.start_us + 30 * US_PER_MIN
    t1 = params.start_us + params.window_us - 30 * US_PER_MIN
    for node in np.flatnonzero(n):
        t = np.sort(rng.integers(t0, t1, n[node]))
        k = np.searchsorted(lo, t, side="right") - 1
        ok = (k < 0) | (t > hi[np.maximum(k, 0)])
        p = _BG_WEIGHTS[bool(lemon[node])]
        for tt in t[ok]:
            kind = int(rng.choice(len(p), p=p / p.sum()))
            add_background(ev, int(tt), host_name(int(node)), bool(lemon[node]), kind, rng)


def _to_time(us: np.ndarray | pd.Series) -> pd.DatetimeIndex:
    """UTC timestamps (ns) from microseconds; int64 minimum becomes NaT."""
    return pd.to_datetime(np.asarray(us, dtype=np.int64), unit="us", utc=True).as_unit("ns")


def _truth_interruptions(timeline: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    node, gpu = timeline["node"].to_numpy(), timeline["gpu_index"].to_numpy()
    return pd.DataFrame({
        "time": _to_time(timeline["end_us"].to_numpy()),
        "job_id": jobs["job_id"].iloc[: len(timeline)].to_numpy(),
        "category": timeline["category"].to_numpy(),
        "component": [COMPONENT_OF[c] for c in timeline["category"]],
        "planned": timeline["planned"].to_numpy(),
        "host": pd.array([host_name(x) if x >= 0 else pd.NA for x in node], dtype="string"),
        "gpu": pd.array([GPU_PCI[g] if g >= 0 and x >= 0 else pd.NA for g, x in zip(gpu, node,
                         strict=True)], dtype="string"),
        "gpu_index": pd.array(np.where(gpu >= 0, gpu, -1), dtype="Int64").astype("Int64"),
        "failure_time": _to_time(timeline["failure_us"].to_numpy()),
        "downtime_h": timeline["downtime_min"].to_numpy() / 60.0,
        "job_state": jobs["state_raw"].iloc[: len(timeline)].to_numpy(),
    }).assign(gpu_index=lambda d: d["gpu_index"].where(d["gpu_index"] >= 0)).astype(
        {"job_id": "string", "category": "string", "component": "string", "job_state": "string"})


def _public_jobs(params: SimParams, raw: pd.DataFrame, timeline: pd.DataFrame) -> pd.DataFrame:
    end = raw["end_us"].to_numpy()
    return pd.DataFrame({
        "job_id": raw["job_id"].astype("string"),
        "name": "llama3-405b-pretrain", "user": "svc-llama", "partition": "train",
        "state": raw["state"].astype("string"), "state_raw": raw["state_raw"].astype("string"),
        "exit_code": raw["exit_code"].astype("string"),
        "submit": _to_time(raw["submit_us"].to_numpy()), "start": _to_time(raw["start_us"]),
        "end": _to_time(np.where(end >= 0, end, np.iinfo(np.int64).min)),
        "nnodes": pd.array([params.n_nodes] * len(raw), dtype="Int64"),
        "ngpus": pd.array([params.n_gpus] * len(raw), dtype="Int64"),
        "nodelist": raw["nodelist"].astype("string"),
        "failed_node": raw["failed_node"].replace("", pd.NA).astype("string"),
        "restarts": pd.array([0] * len(raw), dtype="Int64"),
        "origin": "simulate_cluster",
        "category": pd.array(list(timeline["category"]) + [pd.NA], dtype="string"),
    }).astype({"name": "string", "user": "string", "partition": "string", "origin": "string"})


def write_cluster(cluster: SimulatedCluster, directory: Path) -> dict[str, Path]:
    """Write all raw files and the truth tables (deterministic for given parameters)."""
    p, ev = cluster.params, cluster.evidence
    directory.mkdir(parents=True, exist_ok=True)
    t0, t1 = p.start_us, p.start_us + p.window_us
    hosts = list(cluster.nodes["host"])
    rng = rng_for(p, 20)
    kern_hosts = sorted({r[1] for r in ev.kernel if r[2] == "kernel"})
    dmesg_hosts = {h for h in kern_hosts if rng.random() < 0.3}
    to_dmesg = [r for r in ev.kernel if r[2] == "kernel" and r[1] in dmesg_hosts]
    to_syslog = [r for r in ev.kernel if not (r[2] == "kernel" and r[1] in dmesg_hosts)]
    n_noise = int(p.noise_lines_per_node_day * len(hosts) * p.days)
    messy = rng_for(p, 22)  # the untidy shapes of a real hand-over (._messy), drawn apart
    storms = _messy.edac_storms(messy, t0, t1, hosts)
    out = w.write_syslog(directory, to_syslog + syslog_noise(rng, t0, t1, hosts, n_noise) + storms)
    noise = [rec for h in sorted(dmesg_hosts) for rec in kernel_noise(rng, t0, t1, h, 25)]
    styles = {h: int(h[4:]) % 3 for h in dmesg_hosts}
    out |= w.write_dmesg(directory, to_dmesg + noise, styles)
    unpadded = _messy.unpadded_jobs(messy, list(cluster.raw_jobs["job_id"]))
    out |= w.write_train(directory, ev.train + _train_progress(cluster, rng_for(p, 21)), unpadded)
    out |= w.write_text(directory, _messy.clean_logs(messy))
    reset = [(t0 - 2 * 86_400_000_000, h, "Event Logging Disabled #0x07",
              "Log area reset/cleared", True) for h in sorted({r[1] for r in ev.sel})]
    empty = _messy.empty_sel_hosts(messy, hosts, {r[1] for r in ev.sel})
    out |= w.write_sel(directory, ev.sel + reset, empty)
    out |= w.write_tickets(directory, ev.tickets)
    others = cluster.other_jobs
    other_lists = [hostlist(np.asarray(n, dtype=np.int64)) for n in others.get("nodes", [])]
    rows = w.merge_by_job_id(w.sacct_rows(_sacct_jobs(cluster), p.gpus_per_node, t1),
                             w.other_sacct_rows(others, other_lists, p.gpus_per_node)
                             if len(others) else [])
    out |= w.write_sacct(directory, rows)
    out |= _write_telemetry(cluster, directory)
    out |= _write_truth(cluster, directory)
    out |= _write_facts(cluster, directory)
    out |= _write_manifest(directory)
    return dict(sorted(out.items()))


#: the sample's hand-over manifest (``reliab.io._manifest``): truth and fleet facts are not logs
MANIFEST = """\
# Hand-over manifest of this sample: reliab.ingest applies it when it walks the folder.
# Ground truth and fleet facts sit beside the logs but are not logs; ingest lists them as skipped.
skip = ["truth/", "cluster.json", "regenerate.py"]
"""


def _write_manifest(directory: Path) -> dict[str, Path]:
    """``reliab.toml``: skip the ground truth and the fleet facts when the folder is ingested."""
    path = directory / "reliab.toml"
    path.write_text(MANIFEST, encoding="utf-8")
    return {"reliab.toml": path}


def _write_facts(cluster: SimulatedCluster, directory: Path) -> dict[str, Path]:
    """``cluster.json``: what an operator knows about the fleet (size, window) — not truth."""
    p = cluster.params
    start = pd.Timestamp(p.start_us, unit="us", tz="UTC")
    facts = {"n_gpus": p.n_gpus, "gpus_per_node": p.gpus_per_node, "n_nodes": p.n_nodes,
             "n_spare_nodes": p.n_spares, "start": start.isoformat(),
             "end": (start + pd.Timedelta(microseconds=p.window_us)).isoformat()}
    path = directory / "cluster.json"
    path.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return {"cluster.json": path}


def _train_progress(cluster: SimulatedCluster, rng: np.random.Generator) -> list[tuple]:
    """Step, checkpoint and end-of-job lines of every allocation."""
    p, jobs = cluster.params, cluster.raw_jobs
    tput = cluster.telemetry["cluster"]["throughput_tokens_per_s"].to_numpy()
    recs, step = [], _FIRST_STEP
    for job in jobs.itertuples(index=False):
        end = job.end_us if job.end_us >= 0 else p.start_us + p.window_us
        lines, step = training_lines(rng, job.job_id, job.start_us, end, step, tput, p.start_us,
                                     resume_us=resume_time(job.start_us),
                                     saves_us=checkpoint_schedule(job.start_us, end),
                                     write_s=CHECKPOINT_WRITE_S)
        recs += lines
        if job.end_us < 0:
            continue
        stamp = w.iso_us([job.end_us])[0][:19]
        first = job.nodelist.replace("node[", "node").split("-")[0].split(",")[0]
        if job.state == "FAILED":
            text = f"srun: error: {first}: task 0: Exited with exit code 1"
        else:
            why = " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS" \
                if job.state == "NODE_FAIL" else ""
            text = f"slurmstepd: error: *** JOB {job.job_id} ON {first} CANCELLED AT {stamp}{why} ***"
        recs.append((job.end_us, job.job_id, "raw", text))
    return recs


def _sacct_jobs(cluster: SimulatedCluster) -> list[tuple]:
    p = cluster.params
    return [(j.job_id, j.submit_us, j.start_us, j.end_us, j.state_raw, j.exit_code, j.nodelist,
             p.n_nodes, j.nodelist.replace("node[", "node").split("-")[0].split(",")[0])
            for j in cluster.raw_jobs.itertuples(index=False)]


def _write_telemetry(cluster: SimulatedCluster, directory: Path) -> dict[str, Path]:
    tel = cluster.telemetry
    day = tel["gpus"]["time"].iloc[0].strftime("%Y%m%d") if len(tel["gpus"]) else "none"
    return (w.write_csv(directory, "telemetry/cluster_1min.csv", tel["cluster"])
            | w.write_csv(directory, "telemetry/nodes_15min.csv", tel["nodes"])
            | w.write_csv(directory, f"telemetry/gpus_1min_{day}.csv", tel["gpus"]))


def _write_truth(cluster: SimulatedCluster, directory: Path) -> dict[str, Path]:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    return (w.write_csv(directory, "truth/interruptions.csv", cluster.interruptions,
                        date_format=fmt)
            | w.write_csv(directory, "truth/nodes.csv", cluster.nodes)
            | w.write_csv(directory, "truth/rates.csv", cluster.true_rates)
            | w.write_csv(directory, "truth/checkpoints.csv", cluster.checkpoints, date_format=fmt)
            | w.write_csv(directory, "truth/costs.csv", cluster.costs, date_format=fmt)
            | _write_other_truth(cluster, directory, fmt)
            | (w.write_csv(directory, "truth/precursors.csv", cluster.precursors, date_format=fmt)
               if len(cluster.precursors) else {}))


def _write_other_truth(cluster: SimulatedCluster, directory: Path, fmt: str) -> dict[str, Path]:
    """``truth/other_jobs.csv``: the other users' jobs, none of them an interruption."""
    o = cluster.other_jobs
    if not len(o):
        return {}
    table = pd.DataFrame({
        "job_id": o["job_id"], "name": o["name"], "user": o["user"], "state": o["state"],
        "state_raw": o["state_raw"],
        "start": _to_time(np.where(o["start_us"] >= 0, o["start_us"], np.iinfo(np.int64).min)),
        "end": _to_time(o["end_us"].to_numpy()),
        "nodes": [",".join(host_name(n) for n in nodes) for nodes in o["nodes"]],
    })
    return w.write_csv(directory, "truth/other_jobs.csv", table, date_format=fmt)
