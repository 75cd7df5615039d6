"""One fleet end to end on a Dask LocalCluster, in its own process (run by ``bench_fleet.py``).

``python benchmarks/_fleet_pipeline.py <fleet folder> <work folder> <workers>`` prints one JSON
object: the wall time of each stage, the peak RSS of the client and of each worker, the
compute time of the cluster by kind of task (the profile), the sizes of the outputs and the
failure GLM's estimate beside the planted truth.

Stages: ``ingest`` (logs -> partitioned Parquet, ``engine="dask"``), ``reduce`` (per-GPU
telemetry -> host-hour windows with hours above 70 °C, power-swing counts and failures per
window, written as Parquet), ``rates`` (interruption rates per pod from the Parquet),
``glm`` (Poisson GLM of failures on the hourly mean temperature, on cells made on Dask).
The cluster has the settings of the one :func:`reliab.io.dask_client` starts
(:data:`reliab.io.distributed.QUIET_CLUSTER`) and no memory limit.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process so far."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def kind(key: object) -> str:
    """The kind of a task from its key: ``reliab-windows-7-ab12`` -> ``reliab-windows``, ``_hours-9f…`` -> ``_hours``."""
    key = key[0] if isinstance(key, tuple) else key
    text = str(key)
    if text.startswith("reliab-"):  # reliab-<kind>-<number…>-<token>
        return "-".join(text.split("-")[:2])
    return text.rsplit("-", 1)[0]


def kinds(profile: dict[str, float]) -> dict[str, float]:
    """Seconds per kind of task (see :func:`kind`), largest first."""
    out: dict[str, float] = defaultdict(float)
    for key, seconds in profile.items():
        out[key if key.startswith("[") else kind(key)] += seconds
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _profile(stream: list[dict]) -> dict[str, float]:
    """Seconds of compute per kind of task, and of transfers, summed over workers."""
    out: dict[str, float] = defaultdict(float)
    for task in stream:
        for part in task["startstops"]:
            name = kind(task["key"]) if part["action"] == "compute" else f"[{part['action']}]"
            out[name] += part["stop"] - part["start"]
    return kinds(out)


def main(fleet: Path, work: Path, workers: int) -> dict:
    import dask
    import pandas as pd
    from dask.distributed import Client, LocalCluster, get_task_stream

    import reliab
    from reliab.fleet import fit_failure_glm_cells, rates_by_group, reduce_telemetry
    from reliab.io.distributed import QUIET_CLUSTER

    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    params = json.loads((fleet / "truth" / "params.json").read_text())
    times: dict[str, float] = {}
    facts: dict[str, object] = {}
    start = time.perf_counter()
    with dask.config.set(QUIET_CLUSTER):  # the settings of reliab's own cluster (no dashboard)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               memory_limit=None)
    with cluster, Client(cluster) as client:
        times["cluster start"] = time.perf_counter() - start

        def cpu_now() -> float:  # client and workers: the stages' CPU time, which load does not stretch
            return _cpu_s() + sum(client.run(_cpu_s).values())

        cpu: dict[str, float] = {}
        with get_task_stream(client) as stream:
            c = cpu_now()
            t = time.perf_counter()
            result = reliab.ingest(fleet / "logs", engine="dask", client=client, output=work / "tables")
            times["ingest"] = time.perf_counter() - t
            now = cpu_now()
            cpu["ingest"], c = now - c, now
            facts["lines"] = int(result.accounting["lines"].sum())
            facts["files"] = len(result.accounting)
            facts["signals"] = len(result.signals)
            facts["interruptions"] = len(result.interruptions)
            t = time.perf_counter()
            windows = reduce_telemetry(fleet / "telemetry", client=client, thresholds={"gpu_temp_c": 70.0},
                                       swings={"power_w": 300.0}, events=result.interruptions,
                                       output=work / "windows")
            times["reduce"] = time.perf_counter() - t
            now = cpu_now()
            cpu["reduce"], c = now - c, now
            t = time.perf_counter()
            pods = pd.read_parquet(fleet / "inventory.parquet").set_index("host")["pod"].astype(str).to_dict()
            rates = rates_by_group(work / "tables", windows, "pod", groups=pods, client=client)
            times["rates"] = time.perf_counter() - t
            now = cpu_now()
            cpu["rates"], c = now - c, now
            t = time.perf_counter()
            fit = fit_failure_glm_cells(windows, ["gpu_temp_c_mean"], bins={"gpu_temp_c_mean": 0.25}, client=client)
            times["glm"] = time.perf_counter() - t
            cpu["glm"] = cpu_now() - c
        worker_rss = client.run(_rss_mib)
        profile = _profile(stream.data)
    times["total"] = time.perf_counter() - start
    row = fit.irr("gpu_temp_c_mean")
    facts.update(host_windows=int(fit.n), cells=int(fit.n_cells), failures_in_windows=float(fit.events),
                 rate_groups=len(rates.summary()) - 1,
                 log_irr_per_c=float(row["estimate"]), log_irr_low=float(row["estimate"] - 1.96 * row["std_error"]),
                 log_irr_high=float(row["estimate"] + 1.96 * row["std_error"]),
                 truth_log_irr_per_c=params["temp_effect_per_c"],
                 tables_bytes=sum(p.stat().st_size for p in (work / "tables").rglob("*") if p.is_file()),
                 windows_bytes=sum(p.stat().st_size for p in (work / "windows").rglob("*") if p.is_file()))
    cpu["total"] = sum(cpu.values())
    return {"times": times, "cpu_s": cpu, "load": os.getloadavg()[0], "client_rss_mib": _rss_mib(), "worker_rss_mib": list(worker_rss.values()),
            "profile": profile, "facts": facts}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))))
