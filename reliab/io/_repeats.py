"""Job records that several inputs repeat, kept once (merged by :mod:`reliab.io._job_merge`).

Scheduler exports overlap: daily ``sacct`` dumps each list a job that spans midnight, a
hand-over holds both a weekly and a daily capture, and a live window is read in chunks.
A job record is identified by its job id and its run (Slurm keeps the job id when it
requeues a job and gives each run a new start; ``sacct --duplicates`` lists every run, see
``sacct(1)``): copies with the same start, or without a start but with the same end, or
the only run of that id.  The copies of one run become one record, its fields taken first
from the copy that knows most (an ended copy over a still-running one, the latest end,
and among equals the copy read last), empty ones filled from the others.  Only copies from
*other* inputs are merged: records repeated within one file are that file's business (its
reader keeps them as written).  Counting a record repeated by another export twice would
count one interruption twice.  (:func:`job_record_key`, job id, submit and start, is the
key of the live Slurm source's chunks, which all print the same columns.)
"""

from __future__ import annotations

import pandas as pd

from reliab.io._job_merge import merge_job_copies

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
    kept, gone, conflicts = merge_job_copies(jobs)
    if not gone:
        return jobs, signals, None
    drop = (signals["origin"].astype(str).isin(set(gone))
            & signals["signal"].astype(str).str.startswith("slurm:")).to_numpy(dtype=bool)
    note = (f"{len(gone)} job record(s) repeated by another input (same job id and run: the same start, or"
            " the same end where a capture has no start) merged into one record per run, the fields of"
            " the ended copy with the latest end first, empty ones filled from the other copies")
    note = "; ".join([note, *conflicts])
    kept_signals = signals.loc[~drop].reset_index(drop=True) if drop.any() else signals
    return kept, kept_signals, note
