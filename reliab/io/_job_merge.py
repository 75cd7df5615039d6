"""Copies of one job from several scheduler captures, merged into one record per run.

A hand-over often holds the same jobs in several ``sacct`` captures with different column
sets: a daily dump with Submit, an ad-hoc ``sacct -P`` with other fields and no Submit, a
fixed-width table whose names are cut to their column (``4CGN1IHUE+``).  A job id (array
task ``5005_2`` and heterogeneous component ``5006+1`` alike) printed by several captures is
one job.  Slurm keeps the job id when it requeues a job and gives each run its own start
(``sacct --duplicates`` lists every run, ``sacct(1)``), so copies are grouped per *run*:

- copies with a start belong to the run of that start;
- a copy without a start (the capture lacks Start, or the job was pending when captured)
  joins the run with the same end, else the only run of that id; with several runs and
  nothing to tell them apart it stays a record of its own;
- copies from one file are never merged with each other (that file's reader keeps them as
  written), only with copies from other files.

The copies of one run become one record: each field is taken from the copy that knows most
(an ended copy over a running one, then the latest end, then the copy read last), and where
that copy leaves the field empty, from the next one (non-empty wins).  A value cut by sacct
to its column (ending in ``+``) gives way to the full value it abbreviates.  Values that
differ between ended copies are listed as conflicts in the run's notes.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
import pyarrow.compute as pc

__all__ = ["merge_job_copies"]

#: fields compared between ended copies for the conflict notes
_COMPARED = ("name", "user", "partition", "state", "state_raw", "exit_code", "submit", "start",
             "end", "nnodes", "ngpus", "nodelist", "failed_node", "restarts")
_CUT_FIELDS = ("name", "user", "partition", "state_raw", "nodelist", "failed_node")
_MAX_LISTED = 5


def _all_distinct(ids: pd.Series) -> bool:
    """Whether no value of ``ids`` is repeated (missing counts as one value): Arrow text is
    counted in place (pandas' ``nunique`` takes twice the memory: 1M ids, +68 MiB against +33)."""
    if isinstance(ids.dtype, pd.StringDtype) and ids.dtype.storage == "pyarrow" and len(ids):
        return pc.count_distinct(ids.array.__arrow_array__(), mode="all").as_py() == len(ids)
    return ids.nunique(dropna=False) == len(ids)


_NO_RUN = np.iinfo(np.int64).min  # NaT's integer value: a run of copies that all lack a start


def _ns(stamps: pd.Series) -> np.ndarray:
    return stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy("datetime64[ns]").view(np.int64)


def _run_of(ids: np.ndarray, start: pd.Series, end: pd.Series) -> np.ndarray:
    """A run label per row (its start in ns), or the run a startless copy joins (module notes)."""
    label, end_ns = _ns(start).copy(), _ns(end)
    missing = np.flatnonzero(label == _NO_RUN)
    if not missing.size:
        return label
    known = pd.DataFrame({"id": ids, "start": label, "end": end_ns})[label != _NO_RUN]
    pairs = known.drop_duplicates(["id", "start"])
    n_runs = pairs["id"].value_counts()
    single = pairs[pairs["id"].map(n_runs).to_numpy() == 1]
    only = dict(zip(single["id"], single["start"], strict=True))
    by_end = known[known["end"].to_numpy() != _NO_RUN].drop_duplicates(["id", "end", "start"])
    by_end = by_end.drop_duplicates(["id", "end"], keep=False)  # an end two runs share tells nothing
    end_run = dict(zip(zip(by_end["id"], by_end["end"], strict=True), by_end["start"], strict=True))
    unmatched = -1  # labels no start can have (before 1970 by nanoseconds): one per copy
    for i in missing:
        job, when = ids[i], int(end_ns[i])
        if when != _NO_RUN and (job, when) in end_run:
            label[i] = end_run[(job, when)]
        elif job in only:
            label[i] = only[job]
        elif job in n_runs.index:
            label[i], unmatched = unmatched, unmatched - 1
    return label


def _uncut(frame: pd.DataFrame, group: np.ndarray) -> pd.DataFrame:
    """Blank a ``+``-cut value where another copy of the same run holds the full value."""
    out = frame
    for col in _CUT_FIELDS:
        if col not in frame:
            continue
        text = frame[col].astype("string")
        cut = text.str.endswith("+").fillna(False).to_numpy(dtype=bool)
        if not cut.any():
            continue
        wanted = set(group[cut].tolist())
        full: dict[int, list[str]] = {}
        for g, value in zip(group[~cut], text[~cut], strict=True):
            if g in wanted and value is not pd.NA:
                full.setdefault(int(g), []).append(str(value))
        blank = np.zeros(len(frame), dtype=bool)
        for i in np.flatnonzero(cut):
            stem = text.iat[i][:-1]
            blank[i] = any(v.startswith(stem) for v in full.get(int(group[i]), ()))
        if blank.any():
            out = out.copy() if out is frame else out
            out.loc[blank, col] = pd.NA
    return out


def _conflicts(copies: pd.DataFrame, group: np.ndarray) -> tuple[int, list[str]]:
    """How many runs have ended copies that disagree, and ``job <id>: <field> a / b`` for the
    first few."""
    ended = copies["end"].notna().to_numpy()
    cols = [c for c in _COMPARED if c in copies]
    rows = copies.loc[ended, cols].set_axis(group[ended])
    counts = rows.groupby(level=0, sort=False).nunique()
    bad = counts.index[(counts > 1).any(axis=1).to_numpy()]
    listed: list[str] = []
    for g in bad[:_MAX_LISTED]:
        mine = rows[rows.index == g]
        parts = [f"{c} {' / '.join(map(str, mine[c].dropna().unique()))}" for c in cols if counts.at[g, c] > 1]
        listed.append(f"job {copies['job_id'].to_numpy()[group == g][0]}: {'; '.join(parts)}")
    return len(bad), listed


def _like(frame: pd.DataFrame, model: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the dtypes of ``model`` (a group's first value may come back as object)."""
    cast = {c: frame[c].astype(model[c].dtype) for c in frame.columns if frame[c].dtype != model[c].dtype
            and not isinstance(model[c].dtype, pd.DatetimeTZDtype)}
    cast |= {c: pd.to_datetime(frame[c], utc=True) for c in frame.columns
             if isinstance(model[c].dtype, pd.DatetimeTZDtype) and frame[c].dtype != model[c].dtype}
    return frame.assign(**cast) if cast else frame


def merge_job_copies(jobs: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str]]:
    """One record per job run from copies of it in several inputs.

    Parameters
    ----------
    jobs : pandas.DataFrame
        Schema ``jobs`` of a whole run, in input order (extra columns are carried along,
        taken from the kept copy).

    Returns
    -------
    jobs : pandas.DataFrame
        The merged records, each at the position of the copy that knows most (whose
        ``origin`` it keeps); every other row unchanged and in order.
    gone : list of str
        ``origin`` of the copies merged into another record.
    notes : list of str
        Conflicts between ended copies (at most a few listed, with the count).

    References
    ----------
    ``sacct(1)``, Slurm 25.11: ``--duplicates`` (a requeued job's runs share its id) and the
    ``+`` that ends a value cut to its column in fixed-width output.
    """
    ids = jobs["job_id"]
    # Arrow strings stay Arrow strings (a million job ids are not turned into Python objects)
    ids = (ids if isinstance(ids.dtype, pd.StringDtype) else ids.astype("string")).str.strip()
    if _all_distinct(ids):  # no job id twice: no copies (nor file names built)
        return jobs, [], []
    files = jobs["origin"].astype("string").fillna("").str.rsplit(":", n=1).str[0]
    if files.nunique(dropna=False) < 2:  # copies come from different inputs: one file has none
        return jobs, [], []
    file = files.to_numpy(dtype=object)
    del files
    per_id = pd.Series(file).groupby(ids.to_numpy()).nunique()
    shared = ids.isin(per_id.index[per_id.to_numpy() > 1]).to_numpy()
    if not shared.any():
        return jobs, [], []
    sub = jobs[shared]
    start = pd.to_datetime(sub["start"], utc=True)
    end = pd.to_datetime(sub["end"], utc=True)
    run = _run_of(ids[shared].to_numpy(dtype=object), start, end)
    keys = pd.DataFrame({"id": ids[shared].to_numpy(), "run": run, "file": file[shared]})
    keys["occ"] = keys.groupby(["id", "run", "file"], sort=False).cumcount()
    group = keys.groupby(["id", "run", "occ"], sort=False).ngroup().to_numpy()
    pos = np.flatnonzero(shared)
    order = np.lexsort((pos, end.fillna(pd.Timestamp.min.tz_localize("UTC")).to_numpy(),
                        end.notna().to_numpy(), group))[::-1]  # per group: the best copy first
    copies = _uncut(sub.iloc[order], group[order])
    merged = copies.groupby(group[order], sort=False).first()
    best: dict[Hashable, int] = {}
    for g, p in zip(group[order], pos[order], strict=True):
        best.setdefault(g, int(p))
    n_conflicts, listed = _conflicts(copies, group[order])
    at = np.array([best[g] for g in merged.index], dtype=np.int64)
    keep = ~shared
    keep[at] = True
    gone = jobs["origin"].astype(str).to_numpy()[~keep].tolist()
    merged.index = at
    rest = jobs[~shared].set_axis(np.flatnonzero(~shared))
    out = pd.concat([rest, _like(merged[list(jobs.columns)], jobs)]).sort_index().reset_index(drop=True)
    more = [f"and {n_conflicts - len(listed)} more"] if n_conflicts > len(listed) else []
    text = [f"{n_conflicts} job run(s) whose ended copies in different inputs disagree (the copy with the latest"
            f" end kept): {', '.join(listed + more)}"] if n_conflicts else []
    return out, gone, text
