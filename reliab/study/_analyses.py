"""Every analysis a report shows, run on one ingest, each where its inputs exist.

:func:`analyze` returns a mapping ``key -> result`` in report order; an analysis whose inputs
are missing, or that has too little data, yields a :class:`~reliab.NotAvailable` saying why
(never an exception), so a folder without scheduler records or an empty folder still gives a
complete report.  The keys are the names the report and the archive use.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import NotAvailable
from reliab.errors import InsufficientDataError, ReliabWarning
from reliab.study._coverage import exposure_blocker, exposure_coverage
from reliab.study._failures import analyze_failures
from reliab.study._fleet import Fleet

#: component classes whose interruptions count as node (hardware) failures
HARDWARE = ("GPU", "Host", "Network")
NO_JOBS = ("no scheduler job records (Slurm sacct) in the input: interruptions are job ends, "
           "so none can be counted")


def _run(what: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, or NotAvailable with the reason when the data are too few or unsuitable."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabWarning)
        return _guarded(what, fn)


def _guarded(what: str, fn: Callable[[], Any]) -> Any:
    """:func:`_run` without its warnings context, for a thread: the filters are process-wide
    and a context entered on one thread and left on another would undo the other's, so the
    caller holds one context around the thread's whole life (:func:`analyze`)."""
    try:
        return fn()
    except InsufficientDataError as exc:
        return NotAvailable(what, f"too little data: {exc}")
    except ValueError as exc:
        return NotAvailable(what, f"the data do not fit this analysis: {exc}")


def _unexpected(interruptions: pd.DataFrame) -> pd.DataFrame:
    return interruptions[~interruptions["planned"].astype(bool)]


def _hours_since(times: pd.Series, fleet: Fleet) -> np.ndarray:
    h = ((times - fleet.start) / pd.Timedelta(hours=1)).to_numpy(dtype=float)
    return np.sort(h[(h > 0) & (h <= fleet.hours)])


def in_window(interruptions: pd.DataFrame, fleet: Fleet) -> pd.DataFrame:
    """The interruptions inside the observation window ``(start, end]``: the rates divide the
    window's exposure, so they count the window's interruptions, never the whole log's."""
    if not len(interruptions):
        return interruptions
    t = interruptions["time"]
    return interruptions[(t > fleet.start) & (t <= fleet.end)]


def _gaps(hours: np.ndarray, window_h: float, keep_zero: bool = False
          ) -> tuple[np.ndarray, np.ndarray]:
    """Times between consecutive interruptions; the last gap (to the window end) is
    right-censored.  The time from the window start to the first interruption is no gap: it is a
    forward recurrence time from an unseen event, length-biased (Cox 1962, *Renewal Theory*
    §5.2), so the gaps start at the first interruption."""
    if not hours.size:
        return np.empty(0), np.empty(0, dtype=int)
    gaps = np.diff(hours)
    tail = window_h - hours[-1]
    observed = np.r_[np.ones(gaps.size, dtype=int), 0] if tail > 0 else np.ones(gaps.size, dtype=int)
    gaps = np.r_[gaps, tail] if tail > 0 else gaps
    keep = gaps >= 0 if keep_zero else gaps > 0
    return gaps[keep], observed[keep]


def _tbi(fit: Callable[..., Any], times: pd.Series, fleet: Fleet, conf_level: float) -> Any:
    """``fit`` to the times between interruptions: exact when the log's time resolution is
    negligible against the gaps, else each gap interval-censored to within the resolution
    (:func:`reliab.models.resolution.gap_bounds`) and the result's notes say so."""
    from reliab.models.resolution import gap_bounds, infer_resolution, negligible

    hours = _hours_since(times, fleet)
    gaps, observed = _gaps(hours, fleet.hours, keep_zero=True)
    res = infer_resolution(times)
    failed = observed == 1
    if negligible(gaps[failed], res.hours):
        return fit(*_gaps(hours, fleet.hours), conf_level=conf_level)
    lower, upper = gap_bounds(gaps, res.hours)
    lower, upper = np.where(failed, lower, gaps), np.where(failed, upper, np.inf)
    result = fit(lower, None, upper=upper, conf_level=conf_level)
    note = (f"times recorded to the {res.name}: {int(failed.sum())} gaps interval-censored "
            f"(each within one {res.name} either side, {int((gaps[failed] == 0).sum())} "
            f"of them zero)")
    return dataclasses.replace(result, notes=(*result.notes, note))


def _job_lifetimes(jobs: pd.DataFrame, interruptions: pd.DataFrame, policy: str
                   ) -> pd.DataFrame:
    """Ended allocations with duration (hours) and the component that interrupted them."""
    j = jobs.dropna(subset=["start", "end"]).drop_duplicates("job_id", keep="last")
    if policy == "training-run" and len(interruptions):
        names = set(jobs.loc[jobs["job_id"].isin(interruptions["job_id"]), "name"].dropna())
        # a run without job names is its job ids (the policy's requeue chain)
        j = j[j["name"].isin(names) | j["job_id"].isin(interruptions["job_id"])]
    dur = ((j["end"] - j["start"]) / pd.Timedelta(hours=1)).to_numpy(dtype=float)
    cause = j["job_id"].map(_unexpected(interruptions).drop_duplicates("job_id")
                            .set_index("job_id")["component"])
    nodes = j["nnodes"] if "nnodes" in j else pd.Series(pd.NA, index=j.index)
    out = pd.DataFrame({"hours": dur, "cause": cause.astype(object).to_numpy(),
                        "nodes": pd.array(nodes, dtype="Int64")})
    return out[out["hours"] > 0]


#: job-size classes (nodes per allocation) compared by the log-rank test and RMST
SIZE_CLASSES = ((1, 1, "1 node"), (2, 7, "2-7 nodes"), (8, 63, "8-63 nodes"),
                (64, None, "64+ nodes"))


def _size_class(life: pd.DataFrame) -> pd.Series:
    """Job-size class per allocation (missing when the node count is unknown)."""
    nodes = life["nodes"].astype("Float64")
    label = pd.Series(pd.NA, index=life.index, dtype=object)
    for lo, hi, name in SIZE_CLASSES:
        label[(nodes >= lo) & ((nodes <= hi) if hi is not None else True)] = name
    return label


def _by_size(life: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Allocations and their job-size class, when two or more classes have an interruption
    each (the log-rank test and RMST have nothing to compare otherwise)."""
    size = _size_class(life)
    hit = life["cause"].notna().groupby(size).sum()
    if (hit > 0).sum() < 2:
        raise InsufficientDataError("fewer than two job-size classes (nodes per allocation) "
                                    "have an interruption")
    return life, size


def _logrank_by_size(life: pd.DataFrame) -> Any:
    from reliab.models.logrank import logrank_test

    life, size = _by_size(life)
    return logrank_test(life["hours"], life["cause"].notna(), size)


def _gray_by_size(life: pd.DataFrame) -> Any:
    """Gray's test per component class: is its cumulative incidence the same for every size?"""
    from reliab.models.graytest import gray_test

    life, size = _by_size(life)
    return gray_test(life["hours"], life["cause"].fillna("").astype(str), size, censored="")


def _fine_gray_by_size(life: pd.DataFrame) -> Any:
    """Fine–Gray regression of the commonest interrupting component on log2(nodes): how the
    subdistribution hazard of that component scales with each doubling of the job size."""
    from reliab.models.finegray import fit_fine_gray

    life, _ = _by_size(life)
    life = life[life["nodes"].notna()]
    cause = life["cause"].value_counts().index[0]
    x = pd.DataFrame({"log2_nodes": np.log2(life["nodes"].to_numpy(dtype=float))})
    return fit_fine_gray(life["hours"].to_numpy(), life["cause"].fillna("").astype(str).to_numpy(),
                         x, cause=str(cause), censored="")


def _rmst_by_size(life: pd.DataFrame, conf_level: float) -> Any:
    """RMST to the shortest of the classes' longest run times (every curve is defined there)."""
    from reliab.models.rmst import estimate_rmst

    life, size = _by_size(life)
    tau = float(life.groupby(size)["hours"].max().min())
    return estimate_rmst(life["hours"], life["cause"].notna(), groups=size, tau=tau,
                                conf_level=conf_level)


def _node_events(inter: pd.DataFrame, fleet: Fleet, hosts: pd.Index) -> tuple[pd.DataFrame, pd.DataFrame]:
    hw = _unexpected(inter)
    hw = hw[hw["component"].isin(HARDWARE) & hw["hosts"].notna()]
    ev = hw.assign(unit=hw["hosts"].astype(str).str.split(",")).explode("unit")
    ev["unit"] = ev["unit"].str.strip()
    ev = ev[ev["unit"].isin(hosts)]
    ev = pd.DataFrame({"unit": ev["unit"].to_numpy(),
                       "time": ((ev["time"] - fleet.start) / pd.Timedelta(hours=1)).to_numpy(float)})
    ev = ev[(ev["time"] >= 0) & (ev["time"] <= fleet.hours)]
    obs = pd.DataFrame({"unit": list(hosts), "start": 0.0, "end": fleet.hours})
    return ev, obs


def _hosts(ingest: Any) -> pd.Series:
    """Hours at risk per node: from the job records, else the window for every host seen."""
    from reliab.prepare import node_hours

    if len(ingest.jobs) and ingest.jobs["nodelist"].notna().any():
        return node_hours(ingest.jobs)
    return pd.Series(dtype=float)


def analyze(
    ingest: Any,
    fleet: Fleet | NotAvailable,
    *,
    conf_level: float = 0.95,
    policy: str | None = None,
    previous: dict[str, Any] | None = None,
    labels: tuple[str, str] = ("previous", "current"),
) -> dict[str, Any]:
    """Run every analysis the report shows on one ingest.

    Parameters
    ----------
    ingest : IngestResult
        Output of :func:`reliab.ingest`.
    fleet : Fleet or NotAvailable
        Window and exposure (:func:`reliab.study.fleet_facts`).
    conf_level : float
        Level of every interval.
    policy : str, optional
        The interruption policy of the ingest (default: ``ingest.policy``).
    previous : dict, optional
        The archive of an earlier period (:func:`reliab.study.load_archive`); adds the
        period comparison and the per-period table.
    labels : (str, str)
        Names of the previous and the current period.

    Returns
    -------
    dict of str to result or NotAvailable
        In report order: ``rates``, ``rates_by_component``, ``exposure_coverage`` (whether
        the exposure covers the fleet: GPU-level MTBF and job MTTF need it), ``tbi_weibull``,
        ``tbi_distributions``, ``job_km``, ``job_cif``, ``node_mcf``, ``crow_amsaa``,
        ``trend_laplace``, ``trend_mil_hdbk_189``, ``trend_reverse_arrangement``,
        ``trend_verdict`` (the one answer to "falling, flat or rising?"), ``lemons``,
        ``job_end_states``, ``job_failures_by_size``, the failure-record analyses
        (``failure_rates_by_system`` ... ``failure_lemons``, :mod:`reliab.study._failures`: they
        need no job records),
        the job-level results, ``environment``, then (with ``previous``)
        ``period_comparison`` and ``period_rates``.
    """
    # the failure-risk section runs on a thread beside the others (its fits release the GIL
    # while they run): one warnings context for both threads, entered before it starts and
    # left after it ends (see _guarded)
    with warnings.catch_warnings(), ThreadPoolExecutor(1, thread_name_prefix="reliab-risk") as side:
        warnings.simplefilter("ignore", ReliabWarning)
        return _analyze(ingest, fleet, side, conf_level=conf_level, policy=policy,
                        previous=previous, labels=labels)


def _analyze(ingest: Any, fleet: Fleet | NotAvailable, side: Executor, *, conf_level: float,
             policy: str | None, previous: dict[str, Any] | None,
             labels: tuple[str, str]) -> dict[str, Any]:
    """The body of :func:`analyze`; ``side`` runs the failure-risk section."""
    import reliab
    from reliab.models.jobs.states import estimate_end_states

    policy = policy or getattr(ingest, "policy", "fleet")
    inter, jobs = ingest.interruptions, ingest.jobs
    out: dict[str, Any] = {}
    no_fleet = fleet if isinstance(fleet, NotAvailable) else None
    no_jobs = NotAvailable("interruptions", NO_JOBS) if not len(jobs) else None

    def gate(key: str, what: str, fn: Callable[[], Any], *needs: NotAvailable | None) -> None:
        missing = next((n for n in needs if n is not None), None)
        out[key] = NotAvailable(what, missing.reason) if missing is not None else _run(what, fn)

    f: Fleet = fleet  # type: ignore[assignment]
    if no_fleet is None:
        inter = in_window(inter, f)
    hosts = _hosts(ingest)  # hours per node from the job records, expanded once for all
    no_hosts = NotAvailable("nodes", "the job records name no nodes (NodeList)") if not len(hosts) else None
    what = "which node fails next"
    blocker = next((n for n in (no_jobs, no_hosts) if n is not None), None)
    risk = side.submit(_guarded, what, lambda: reliab.predict_failures(
        ingest, horizon="7d", n_boot=100, conf_level=conf_level)) if blocker is None else None
    gate("rates", "rates per category", lambda: reliab.estimate_rates(
        inter, by=["component", "category"], gpu_days=f.gpu_days, gpus_per_node=f.gpus_per_node,
        job_hours=f.hours, conf_level=conf_level), no_jobs, no_fleet)
    gate("rates_by_component", "rates and MTBF per component", lambda: reliab.estimate_rates(
        inter, by="component", gpu_days=f.gpu_days, gpus_per_node=f.gpus_per_node,
        job_hours=f.hours, conf_level=conf_level), no_jobs, no_fleet)
    gate("exposure_coverage", "exposure against the fleet",
         lambda: exposure_coverage(f, ingest, node_hours=hosts if len(hosts) else None), no_fleet)
    def hours() -> np.ndarray:
        return _hours_since(_unexpected(inter)["time"], f)

    gate("tbi_weibull", "Weibull fit of the times between interruptions",
         lambda: dataclasses.replace(_tbi(reliab.fit_weibull, _unexpected(inter)["time"], f,
                                          conf_level), durations="gaps"),
         no_jobs, no_fleet)
    gate("tbi_distributions", "distributions of the times between interruptions",
         lambda: _tbi(reliab.compare_distributions, _unexpected(inter)["time"], f, conf_level),
         no_jobs, no_fleet)
    lives: list[pd.DataFrame] = []

    def life() -> pd.DataFrame:  # computed once; each analysis gets its own copy
        if not lives:
            lives.append(_job_lifetimes(jobs, inter, policy))
        return lives[0].copy()

    gate("job_km", "survival of job allocations", lambda: reliab.estimate_kaplan_meier(
        life()["hours"], life()["cause"].notna(), conf_level=conf_level), no_jobs)
    gate("job_logrank", "survival of allocations by job size",
         lambda: _logrank_by_size(life()), no_jobs)
    gate("job_rmst", "restricted mean run time by job size",
         lambda: _rmst_by_size(life(), conf_level), no_jobs)
    gate("job_gray", "cumulative incidence by component across job sizes",
         lambda: _gray_by_size(life()), no_jobs)
    gate("job_finegray", "subdistribution hazard of the commonest component by job size",
         lambda: _fine_gray_by_size(life()), no_jobs)
    gate("job_cif", "cumulative incidence by component", lambda: reliab.estimate_cumulative_incidence(
        life()["hours"], life()["cause"], censored=None, conf_level=conf_level), no_jobs)
    gate("node_mcf", "mean cumulative hardware interruptions per node", lambda: reliab.estimate_mcf(
        *_node_events(inter, f, hosts.index), conf_level=conf_level), no_jobs, no_fleet, no_hosts)
    gate("crow_amsaa", "Crow-AMSAA reliability growth", lambda: reliab.fit_crow_amsaa(
        hours(), end=f.hours, conf_level=conf_level), no_jobs, no_fleet)
    for method in ("laplace", "mil-hdbk-189", "reverse-arrangement"):
        gate(f"trend_{method.replace('-', '_')}", f"{method} trend test", lambda m=method: reliab.trend_test(
            hours(), end=f.hours, method=m, conf_level=conf_level), no_jobs, no_fleet)
    gate("trend_verdict", "verdict on the interruption rate", lambda: reliab.trend_verdict(
        tests=[out[f"trend_{m}"] for m in ("laplace", "mil_hdbk_189", "reverse_arrangement")],
        crow=out["crow_amsaa"], weibull=out["tbi_weibull"], distributions=out["tbi_distributions"],
        conf_level=conf_level), no_jobs, no_fleet)
    gate("lemons", "lemon nodes", lambda: reliab.find_lemons(
        ingest.signals, inter, node_hours=hosts, jobs=jobs, conf_level=conf_level),
        no_jobs, no_hosts)
    out["failure_risk"] = NotAvailable(what, blocker.reason) if blocker is not None else None  # its place
    gate("job_end_states", "how jobs end", lambda: estimate_end_states(
        jobs, interruptions=inter, user_failures=getattr(ingest, "user_failures", None),
        conf_level=conf_level), no_jobs)
    ends = out["job_end_states"]
    out["job_failures_by_size"] = ends.by_size if not isinstance(ends, NotAvailable) else NotAvailable(
        "failed jobs against job size", ends.reason)
    out.update(analyze_failures(ingest, _run, conf_level=conf_level))  # failure records, with or without jobs
    _job_level(out, ingest, f, no_jobs or no_fleet, conf_level)
    _environment(out, ingest, fleet, conf_level)
    _unit_lifetimes(out, ingest, fleet, conf_level)
    if previous is not None:
        out.update(compare_with(out["rates"], previous, fleet, conf_level=conf_level, labels=labels))
    if risk is not None:
        out["failure_risk"] = risk.result()
    return out


def _job_level(out: dict[str, Any], ingest: Any, f: Fleet, missing: NotAvailable | None,
               conf_level: float) -> None:
    """The run's cost (ETTR, lost GPU-hours), the replay of mitigations, job MTTF against size
    and the checkpoint plan (:mod:`reliab.models.jobs`), each where its inputs exist."""
    from reliab.models.jobs import (
        PUBLISHED_RATES,
        estimate_job_mttf,
        failure_cost,
        plan_checkpoints,
        replay_mitigations,
    )

    def need(*keys: str) -> NotAvailable | None:
        if missing is not None:
            return missing
        return next((out[k] for k in keys if isinstance(out.get(k), NotAvailable)), None)

    def put(key: str, what: str, fn: Callable[[], Any], blocker: NotAvailable | None) -> None:
        out[key] = NotAvailable(what, blocker.reason) if blocker is not None else _run(what, fn)

    jobs = ingest.jobs
    put("job_costs", "cost of interruptions (ETTR, lost GPU-hours)", lambda: failure_cost(
        ingest.interruptions, jobs, ingest.signals, start=f.start, end=f.end), need())
    put("replay", "replay of mitigations", lambda: replay_mitigations(out["job_costs"]), need("job_costs"))
    put("job_mttf", "job MTTF against job size", lambda: estimate_job_mttf(
        out["rates"], gpus_per_node=f.gpus_per_node, jobs=jobs.dropna(subset=["end"]),
        interruptions=ingest.interruptions), need("rates") or exposure_blocker(
            out.get("exposure_coverage"), "job MTTF against job size"))
    put("plan", "checkpoint interval plan", lambda: plan_checkpoints(
        checkpoint_write_h=max(out["job_costs"].checkpoint_write_h, 1 / 60),
        node_failure_rate_per_day={"this run": out["job_mttf"].rate_per_node_day, **PUBLISHED_RATES},
        gpus_per_node=f.gpus_per_node, simulate=False), need("job_costs", "job_mttf") or _no_write_time(out))


def _no_write_time(out: dict[str, Any]) -> NotAvailable | None:
    """Why the checkpoint plan cannot run: the logs never timed a checkpoint write, else ``None``.

    Young's and Daly's optimum (Young 1974, Daly 2006) is ``sqrt(2 * write * MTTI)``: without
    a write time there is no optimum to state, so none is invented.
    """
    write = out["job_costs"].checkpoint_write_h
    if write is not None and np.isfinite(write):
        return None
    return NotAvailable("checkpoint interval plan",
                        "no checkpoint write time: the training logs hold no checkpoint-save lines to time"
                        " it (reliab plan --checkpoint-write gives the plan for a write time you know)")


def _environment(out: dict[str, Any], ingest: Any, fleet: Fleet | NotAvailable,
                 conf_level: float) -> None:
    """Temperature, power and throughput (:func:`reliab.analyze_environment`) when the input
    has telemetry.  Power steps count from 100 W per GPU of the fleet (so a 16,384-GPU fleet's
    steps of at least 1.6 MW); without the fleet size, swings are not detected."""
    from reliab.models.environment.study import analyze_environment

    tel = getattr(ingest, "telemetry", None)
    if tel is None or not len(tel):
        out["environment"] = NotAvailable("environment analyses", "no telemetry in the input")
        return
    gpus = None if isinstance(fleet, NotAvailable) else fleet.n_gpus
    out["environment"] = _run("environment analyses", lambda: analyze_environment(
        tel, jobs=ingest.jobs, interruptions=ingest.interruptions,
        min_step_w=100.0 * gpus if gpus else None, conf_level=conf_level))


def _unit_lifetimes(out: dict[str, Any], ingest: Any, fleet: Fleet | NotAvailable,
                    conf_level: float) -> None:
    """Survival per kind and location, removals by reason, Cox and Weibull of the unit lives
    read from inventories (:func:`reliab.analyze_lifetimes`), when the input has any; a window
    the user gave is their observation window (left truncation, censoring at its end)."""
    from reliab.models.lifetimes import analyze_lifetimes

    lt = getattr(ingest, "lifetimes", None)
    if lt is None or not len(lt):
        return
    given = not isinstance(fleet, NotAvailable) and fleet.window_source == "given"
    out.update(analyze_lifetimes(lt, start=fleet.start if given else None,  # type: ignore[union-attr]
                                 end=fleet.end if given else None, conf_level=conf_level))  # type: ignore[union-attr]


def compare_with(rates: Any, previous: dict[str, Any], fleet: Fleet | NotAvailable, *,
                 conf_level: float, labels: tuple[str, str]) -> dict[str, Any]:
    """The period comparison and per-period table against an earlier archive."""
    import reliab

    prev_rates = previous.get("results", {}).get("rates")
    if isinstance(rates, NotAvailable) or not prev_rates or prev_rates.get("type") != "RatesResult":
        why = rates.reason if isinstance(rates, NotAvailable) else "the earlier archive has no rates"
        na = NotAvailable("change since the previous period", why)
        return {"period_comparison": na, "period_rates": na}
    history = [tuple(h) for h in previous.get("history", [])]
    total = next(r for r in rates.summary().to_dict(orient="records") if r["category"] == "Total")
    history.append((labels[1], int(total["count"]), float(rates.gpu_days)))
    return {
        "period_comparison": _run("change since the previous period", lambda: reliab.compare_periods(
            rates, prev_rates, by="category", labels=labels, conf_level=conf_level)),
        "period_rates": _run("rates per period", lambda: reliab.estimate_period_rates(
            history, conf_level=conf_level)),
    }


__all__ = ["analyze", "compare_with", "in_window"]
