"""Set aside records dated where no cluster ran, before the report computes with them.

``datetime64[ns]`` holds 1677-09-21 to 2262-04-11, and the ingest keeps any instant in it.
A job ending 2262-04-10 (a placeholder "never" end) or starting 1677-09-23 is accepted
there, but a window padded by a day, or GPU-hours summed over it, overflow the 64-bit
nanosecond count.  Slurm records instants as Unix times (``time_t``; ``sacct(1)``), so a
job before 1970 or centuries ahead is a placeholder or damage, not an observation.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from reliab.io import IngestResult

#: instants a report computes with; outside, a record is set aside with a note
PLAUSIBLE = (pd.Timestamp("1970-01-01", tz="UTC"), pd.Timestamp("2200-01-01", tz="UTC"))


def _outside(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series:
    lo, hi = PLAUSIBLE
    mask = pd.Series(False, index=frame.index)
    for col in columns:
        if col in frame.columns:
            t = frame[col]
            mask |= ((t < lo) | (t >= hi)).fillna(False).astype(bool)
    return mask


def set_aside_implausible(res: IngestResult) -> IngestResult:
    """``res`` without jobs (and their interruptions) dated outside :data:`PLAUSIBLE`.

    Returns
    -------
    IngestResult
        Unchanged when every job lies inside; else without those jobs, without the
        interruptions dated outside or belonging to them, and with a note counting them.
    """
    bad_jobs = _outside(res.jobs, ("submit", "start", "end"))
    inter = res.interruptions
    bad_inter = _outside(inter, ("time",))
    if len(inter) and "job_id" in inter.columns and bad_jobs.any():
        ids = set(res.jobs.loc[bad_jobs, "job_id"].dropna().astype(str))
        bad_inter |= inter["job_id"].astype("string").isin(ids).fillna(False).astype(bool)
    if not bad_jobs.any() and not bad_inter.any():
        return res
    lo, hi = PLAUSIBLE
    note = (f"Warning: {int(bad_jobs.sum())} job(s) set aside: dated before {lo:%Y-%m-%d} or after "
            f"{hi:%Y-%m-%d} (a placeholder or damaged time), with {int(bad_inter.sum())} interruption(s)")
    return replace(res, jobs=res.jobs.loc[~bad_jobs].reset_index(drop=True),
                   interruptions=inter.loc[~bad_inter].reset_index(drop=True), notes=(*res.notes, note))


__all__ = ["PLAUSIBLE", "set_aside_implausible"]
