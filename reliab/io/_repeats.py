"""Job records that several inputs repeat, kept once.

Scheduler exports overlap: daily ``sacct`` dumps each list a job that spans midnight, a
hand-over holds both a weekly and a daily capture, and a live window is read in chunks.
A job record is identified by its job id, submit time and start time (Slurm keeps the job
id when it requeues a job and gives each run a new start; ``sacct --duplicates`` lists
every run, see ``sacct(1)``).  Of the copies of one record the one that knows most is
kept: an ended copy over a still-running one, the latest end, and among equals the copy
read last.  Only copies from *other* inputs are dropped: records repeated within one file
are that file's business (its reader keeps them as written).  Counting a record repeated
by another export twice would count one interruption twice.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["job_record_key", "drop_repeated_jobs"]


def job_record_key(jobs: pd.DataFrame) -> pd.Series:
    """One key per job record: ``job_id|submit|start`` (empty parts for missing values)."""
    parts = [jobs[c].astype("string").fillna("") for c in ("job_id", "submit", "start")]
    return parts[0] + "|" + parts[1] + "|" + parts[2]


def drop_repeated_jobs(jobs: pd.DataFrame, signals: pd.DataFrame
                       ) -> tuple[pd.DataFrame, pd.DataFrame, str | None]:
    """Keep each job record once; drop the ``slurm:<state>`` signals of the copies.

    Parameters
    ----------
    jobs, signals : pandas.DataFrame
        Schema ``jobs`` and ``signals`` of a whole run, in input order.

    Returns
    -------
    jobs, signals : pandas.DataFrame
        Without the repeated copies (order of the kept rows unchanged).
    note : str or None
        How many copies were dropped, for the run's notes; ``None`` when none.
    """
    if len(jobs) < 2:
        return jobs, signals, None
    key = job_record_key(jobs)
    if not key.duplicated().any():
        return jobs, signals, None
    end = pd.to_datetime(jobs["end"], utc=True)
    order = pd.DataFrame({"key": key.to_numpy(), "ended": end.notna().to_numpy(),
                          "end": end.fillna(pd.Timestamp.min.tz_localize("UTC")).to_numpy(),
                          "pos": np.arange(len(jobs))})
    best = order.sort_values(["key", "ended", "end", "pos"]).groupby("key", sort=False)["pos"].last()
    source = jobs["origin"].astype("string").fillna("").str.rsplit(":", n=1).str[0].to_numpy(dtype=object)
    best_pos = best.reindex(order["key"]).to_numpy()
    keep = source == source[best_pos]  # the kept copy and its own file's rows stay
    if keep.all():
        return jobs, signals, None
    gone = set(jobs.loc[~keep, "origin"].astype(str))
    drop = (signals["origin"].astype(str).isin(gone)
            & signals["signal"].astype(str).str.startswith("slurm:")).to_numpy(dtype=bool)
    n = int((~keep).sum())
    note = (f"{n} job record(s) repeated by another input (same job id, submit and start) "
            "counted once: the ended copy with the latest end kept")
    kept_signals = signals.loc[~drop].reset_index(drop=True) if drop.any() else signals
    return jobs.loc[keep].reset_index(drop=True), kept_signals, note
