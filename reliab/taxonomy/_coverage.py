"""Evidence coverage: how each interruption was attributed, and which evidence is missing.

A count of interruptions says little when the logs that could explain them were never
handed over.  These notes say, never silently, how many interruptions rest on hardware
evidence, on other evidence (software, dependency, operator), on NCCL evidence only, or on
none, and warn when a source family is missing: no Slurm records (nothing can be counted),
no kernel logs (NVIDIA Xid, PCIe AER, MCE, EDAC and mlx5 lines are the evidence of most GPU
and host failures), no IPMI SEL (power supplies, CPU IERR and DIMM errors are often recorded
only by the BMC), or kernel logs that name none of the hosts that failed.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

#: share of interruptions without evidence above which a warning is given
NO_EVIDENCE_WARN_SHARE = 0.2
#: share of failed hosts without any kernel-log signal above which a warning is given
KERNEL_GAP_WARN_SHARE = 0.5
_SHOW_HOSTS = 5

#: parser-name prefixes of each source family (parser names of ``reliab.available_sources``)
_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("slurm", ("sacct", "slurm", "squeue", "scontrol")),
    ("kernel", ("kernel", "dmesg", "journal", "syslog")),
    ("sel", ("sel", "ipmi")),
    ("job logs", ("nccl", "flight_recorder", "pytorch", "train")),
    ("tickets", ("ticket",)),
)


def source_family(source: str) -> str | None:
    """The family of a parser name (``kernel``, ``sel``, ``slurm``, ``job logs``, ``tickets``)."""
    name = str(source).lower()
    for family, prefixes in _FAMILIES:
        if name.startswith(prefixes):
            return family
    return None


def coverage_counts(interruptions: pd.DataFrame) -> dict[str, int]:
    """Interruptions per ``evidence_kind`` (hardware, other, nccl, none), all kinds present."""
    from reliab.taxonomy._policy import EVIDENCE_KINDS

    kinds = interruptions.get("evidence_kind", pd.Series(dtype="string")).fillna("none")
    counts = kinds.value_counts()
    return {k: int(counts.get(k, 0)) for k in EVIDENCE_KINDS}


def _families(signals: pd.DataFrame, sources: Iterable[str] | None) -> set[str]:
    names = set(map(str, sources)) if sources is not None else set()
    if "source" in signals and len(signals):
        names |= set(map(str, signals["source"].dropna().unique()))
    return {f for f in map(source_family, names) if f is not None}


def _failed_hosts(interruptions: pd.DataFrame, jobs: pd.DataFrame) -> set[str]:
    """Hosts named by the interruptions: root-cause evidence hosts and Slurm FailedNode."""
    hosts: set[str] = set()
    for value in interruptions.get("hosts", pd.Series(dtype="string")).dropna():
        hosts |= {h for h in str(value).split(",") if h}
    if "failed_node" in jobs and "job_id" in jobs:
        ids = set(interruptions["job_id"].dropna().astype(str))
        failed = jobs.loc[jobs["job_id"].astype(str).isin(ids), "failed_node"].dropna()
        hosts |= {str(h) for h in failed if str(h)}
    return hosts


def _kernel_gap(interruptions: pd.DataFrame, signals: pd.DataFrame,
                jobs: pd.DataFrame) -> str | None:
    failed = _failed_hosts(interruptions, jobs)
    if not failed or "source" not in signals:
        return None
    codes, names = pd.factorize(signals["source"].to_numpy(dtype=object, na_value=None))
    is_kernel = np.array([source_family(str(s)) == "kernel" for s in names] + [False], dtype=bool)
    kernel = is_kernel[codes]
    seen = set(signals.loc[kernel, "host"].dropna().astype(str)) if "host" in signals else set()
    gap = sorted(failed - seen)
    if not gap:
        return None
    share = len(gap) / len(failed)
    head = "Warning: " if share > KERNEL_GAP_WARN_SHARE else ""
    shown = ", ".join(gap[:_SHOW_HOSTS]) + (", ..." if len(gap) > _SHOW_HOSTS else "")
    return (f"{head}{len(gap):,} of {len(failed):,} host(s) named by interruptions have no "
            f"kernel-log signal anywhere in the input ({shown}); if their kernel logs were "
            "not handed over, kernel-only evidence (Xid, AER, MCE, EDAC, mlx5) is missing there.")


def coverage_notes(interruptions: pd.DataFrame, signals: pd.DataFrame, jobs: pd.DataFrame, *,
                   sources: Iterable[str] | None = None) -> tuple[str, ...]:
    """Notes on evidence coverage; warnings start with ``"Warning: "``.

    Parameters
    ----------
    interruptions : pandas.DataFrame
        Schema ``interruptions`` with ``evidence_kind``.
    signals, jobs : pandas.DataFrame
        What the interruptions were attributed from.
    sources : iterable of str, optional
        Parser names of every file read (``IngestResult.accounting["source"]``), so that a
        family read without any signal (an empty SEL) still counts as handed over; by
        default the sources of the signals.
    """
    notes: list[str] = []
    families = _families(signals, sources)
    if len(jobs) == 0:
        notes.append("Warning: no Slurm job records (sacct) were read: without job ends "
                     "nothing can be counted as an interruption.")
    n = len(interruptions)
    if n == 0 and len(jobs) == 0:
        return tuple(notes)
    c = coverage_counts(interruptions)
    if n:
        notes.append(f"Evidence coverage of {n:,} interruption(s): {c['hardware']:,} by hardware "
                     f"evidence, {c['other']:,} by other evidence only (software, dependency, "
                     f"operator or scheduler), {c['nccl']:,} by NCCL evidence only, "
                     f"{c['none']:,} without evidence.")
    if n and c["none"] / n > NO_EVIDENCE_WARN_SHARE:
        notes.append(f"Warning: {c['none']:,} of {n:,} interruptions ({c['none'] / n:.0%}) have "
                     "no evidence in the attribution window: their causes are unknown "
                     "('Unclassified'), so category shares and rates understate every cause.")
    if "kernel" not in families:
        notes.append("Warning: no kernel logs (dmesg, journalctl, syslog) were read: NVIDIA "
                     "Xid, PCIe AER, MCE, EDAC and mlx5 evidence of GPU and host failures is "
                     "missing (under the fleet policy a FAILED job without infrastructure "
                     "evidence counts as a user failure).")
    elif n:
        gap = _kernel_gap(interruptions, signals, jobs)
        if gap:
            notes.append(gap)
    if "sel" not in families:
        notes.append("Warning: no IPMI SEL (ipmitool sel elist) was read: power-supply, "
                     "CPU IERR and DIMM failures that only the BMC records cannot be attributed.")
    if "job logs" not in families:
        notes.append("No training-job logs were read: NCCL watchdog and CUDA error evidence "
                     "is missing.")
    return tuple(notes)


__all__ = ["coverage_notes", "coverage_counts", "source_family", "NO_EVIDENCE_WARN_SHARE",
           "KERNEL_GAP_WARN_SHARE"]
