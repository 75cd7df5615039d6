"""The observed timeline of training jobs: restarts, checkpoints, and what each interruption cost.

Inputs are reliab's canonical tables: ``jobs`` (Slurm allocations), ``interruptions`` and the
``train:checkpoint_saved`` / ``train:checkpoint_loaded`` signals that the training-log reader
emits (:mod:`reliab.io.formats._progress`).  Allocations with the same job name form a
*chain* (a requeued or resubmitted training run; without a name, the job id is the chain);
the allocation that follows an interrupted one is the first of its chain to start at or after
its end.  Per interruption (Kokolis et al., HPCA 2025, arXiv 2410.21680: "re-training from the
last checkpoint to the interruption, and restart overhead"):

* ``downtime_h`` — end of the interrupted allocation to the start of the next one;
* ``restart_h`` — start of the next allocation to its ``checkpoint_loaded`` line;
* ``lost_work_h`` — the last completed checkpoint (or the resume, if none) to the end;
  without any checkpoint line in the chain, half an assumed interval (default 1 h, as the
  RSC study's goodput estimate did), never more than the time since the resume;
* ``lost_gpu_hours`` — GPUs × (lost work + downtime + restart).

A value the logs cannot give is NaN and ``cost_basis`` says why.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: signal keys of checkpoint saves and loads (emitted by reliab.io.formats._progress)
SAVED, LOADED = "train:checkpoint_saved", "train:checkpoint_loaded"
_NS_PER_H = 3.6e12
_KEY = re.compile(r"(\w+)=(\S+)")


def _ns(values: pd.Series) -> np.ndarray:
    """UTC times as int64 ns (NaT -> int64 min)."""
    return pd.DatetimeIndex(pd.to_datetime(values, utc=True, cache=False)).as_unit("ns").asi8


def progress_events(signals: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(saves, loads)`` from the ``train:*`` signals: ``job_id``, ``t`` (ns), and for saves
    ``write_h`` (NaN when the log gives no duration)."""
    empty = pd.DataFrame({"job_id": pd.Series(dtype=object), "t": pd.Series(dtype=np.int64),
                          "write_h": pd.Series(dtype=float)})
    if signals is None or signals.empty:
        return empty, empty.drop(columns="write_h")
    # isin on the column as it is: astype("string") would turn 1M Arrow strings into Python ones
    rows = signals[signals["signal"].isin([SAVED, LOADED]).fillna(False).to_numpy(dtype=bool)]
    rows = rows[rows["job_id"].notna()]
    if rows.empty:
        return empty, empty.drop(columns="write_h")
    fields = [dict(_KEY.findall(str(m))) for m in rows["message"].astype(str)]
    frame = pd.DataFrame({"job_id": rows["job_id"].astype(str).to_numpy(), "t": _ns(rows["time"]),
                          "signal": rows["signal"].astype(str).to_numpy(),
                          "write_h": [float(f.get("write_s", "nan")) / 3600.0 for f in fields]})
    saves = frame[frame["signal"] == SAVED].drop(columns="signal")
    loads = frame[frame["signal"] == LOADED].drop(columns=["signal", "write_h"])
    return (saves.sort_values("t", kind="stable").reset_index(drop=True),
            loads.sort_values("t", kind="stable").reset_index(drop=True))


#: end of an allocation still running when the logs stop (and no window end was given)
_OPEN = np.iinfo(np.int64).max


def _allocations(jobs: pd.DataFrame, window_end: int | None) -> pd.DataFrame:
    """One row per allocation with a start: chain, start/end (ns), GPUs, censored flag."""
    missing = {"job_id", "start", "end"} - set(jobs.columns)
    if missing:
        raise ValueError(f"jobs lacks column(s) {sorted(missing)} (schema 'jobs')")
    # the columns used, then the rows (not a copy of every column of a million allocations)
    j = jobs[[c for c in ("job_id", "name", "start", "end", "ngpus") if c in jobs]]
    j = j[j["start"].notna().to_numpy(dtype=bool)].reset_index(drop=True)
    name = j["name"].astype("string") if "name" in j else pd.Series(pd.NA, index=j.index, dtype="string")
    ids = j["job_id"].astype(str)
    ngpus = pd.to_numeric(j["ngpus"], errors="coerce") if "ngpus" in j else pd.Series(np.nan, index=j.index)
    end = _ns(j["end"])
    running = end == np.iinfo(np.int64).min
    end = np.where(running, _OPEN if window_end is None else window_end, end)
    codes, names = pd.factorize(name, use_na_sentinel=True)
    chain = np.asarray(names, dtype=object)[codes] if len(names) else np.full(len(j), None, dtype=object)
    chain[codes < 0] = None  # one string per distinct name, shared by its allocations
    unnamed = name.isna().to_numpy(dtype=bool)
    chain[unnamed] = ("job:" + ids[unnamed]).to_numpy(dtype=object)  # (only those: 1M jobs, 1M strings less)
    return pd.DataFrame({
        "job_id": ids.to_numpy(), "chain": chain,
        "start": _ns(j["start"]), "end": end.astype(np.int64), "censored": running,
        "ngpus": ngpus.to_numpy(dtype=float)})


def _asof(left: pd.DataFrame, on: str, right: pd.DataFrame, right_on: str, by: str,
          direction: str, cols: list[str]) -> pd.DataFrame:
    """``merge_asof`` that keeps ``left``'s row order; the matched key is ``_hit``."""
    # only the keys are sorted and merged (not copies of every column: 1M allocations, ~700 MB less)
    ordered = left[[on, by]].reset_index(names="_row").sort_values(on, kind="stable")
    right = right[[by, right_on, *cols]].sort_values(right_on, kind="stable")
    out = pd.merge_asof(ordered, right.rename(columns={right_on: "_hit"}), left_on=on,
                        right_on="_hit", by=by, direction=direction)
    return out.set_index("_row").sort_index()[["_hit", *cols]]


def _times(values: pd.Series | np.ndarray) -> np.ndarray:
    """int64 ns (or a float copy) as float, with the open end as NaN."""
    x = np.asarray(values, dtype=float)
    return np.where(x >= float(_OPEN), np.nan, x)


def allocation_progress(jobs: pd.DataFrame, signals: pd.DataFrame | None, *,
                        window_end: int | None = None) -> pd.DataFrame:
    """Per allocation: resume, last checkpoint, writes and the next allocation of its chain.

    Columns: ``job_id``, ``chain``, ``start``, ``end`` (int64 ns; the end of an allocation
    still running is ``window_end``, else open), ``censored``, ``ngpus``, and as float ns
    (NaN when unknown) ``resume``, ``last_save``, ``next_start``, ``next_resume``,
    ``next_end``; ``n_saves`` and ``write_h`` (sum of the logged write times, NaN when the
    log gives none) with ``write_known``.
    """
    a = _allocations(jobs, window_end)
    saves, loads = progress_events(signals)
    none = np.full(len(a), np.nan)  # no checkpoint lines at all: no merge of every allocation
    resume = _times(_asof(a, "start", loads, "t", "job_id", "forward", [])["_hit"]) if len(loads) else none
    a["resume"] = np.where(resume <= a["end"], resume, np.nan)
    last = _times(_asof(a, "end", saves, "t", "job_id", "backward", [])["_hit"]) if len(saves) else none
    a["last_save"] = np.where(last >= a["start"], last, np.nan)
    owner = _asof(saves, "t", a[["job_id", "start", "end"]].reset_index(names="_alloc"), "start", "job_id",
                  "backward", ["_alloc", "end"])  # (the columns used, not a copy of every column)
    inside = saves.assign(_alloc=owner["_alloc"].to_numpy(), _end=owner["end"].to_numpy())
    inside = inside[inside["t"] <= inside["_end"]]
    grouped = inside.groupby("_alloc")
    a["n_saves"] = grouped.size().reindex(a.index, fill_value=0).to_numpy()
    a["write_h"] = grouped["write_h"].sum(min_count=1).reindex(a.index).to_numpy(dtype=float)
    a["write_known"] = grouped["write_h"].count().reindex(a.index, fill_value=0).to_numpy() == a["n_saves"]
    starts = a[["chain", "start"]].reset_index(names="_alloc").rename(columns={"start": "_s"})
    idx = _asof(a, "end", starts, "_s", "chain", "forward", ["_alloc"])["_alloc"].to_numpy(dtype=float)
    idx = np.where(idx == np.arange(len(a)), np.nan, idx)  # a zero-length allocation is not its own restart
    ok = ~np.isnan(idx)
    take = idx[ok].astype(int)
    for col, src in (("next_start", "start"), ("next_resume", "resume"), ("next_end", "end")):
        values = np.full(len(a), np.nan)
        values[ok] = _times(a[src].to_numpy(dtype=float)[take])
        a[col] = values
    return a


def _chain_codes(jobs: pd.DataFrame, job_code: np.ndarray) -> np.ndarray:
    """Integer chain of every row: its name's code, else one code per job id (``job:<id>``)."""
    if "name" not in jobs:
        return job_code
    codes, names = pd.factorize(jobs["name"], use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    unnamed = codes < 0
    codes[unnamed] = len(names) + job_code[unnamed]
    named_like_ids = [n for n in names if str(n).startswith("job:")]
    if named_like_ids and unnamed.any():  # a job named "job:<id>" shares the chain of the unnamed <id>
        lookup = {n: i for i, n in enumerate(names) if n in set(named_like_ids)}
        rows = np.flatnonzero(unnamed)
        keys = ("job:" + jobs["job_id"].iloc[rows].astype(str)).map(lookup)
        hit = keys.notna().to_numpy(dtype=bool)
        codes[rows[hit]] = keys[hit].to_numpy(dtype=np.int64)
    return codes


def _in(ids: pd.Series, keys: set[str]) -> np.ndarray:
    """``ids`` (as text, NA as ``"<NA>"``) in ``keys``, without a Python string per row."""
    if not isinstance(ids.dtype, (pd.StringDtype, pd.ArrowDtype)):
        ids = ids.astype(str)
    hit = ids.isin(list(keys)).fillna(False).to_numpy(dtype=bool)
    return hit | (ids.isna().to_numpy(dtype=bool) & ("<NA>" in keys))


def needed_allocations(jobs: pd.DataFrame, signals: pd.DataFrame | None,
                       tables: list[pd.DataFrame], *, window_end: int | None = None) -> np.ndarray:
    """Rows of ``jobs`` whose :func:`allocation_progress` the costs of ``tables`` read.

    Those are every allocation of a job id that ``tables`` (schema ``interruptions``) or the
    ``train:*`` signals name, and every allocation of the job id of the next allocation of
    their chains.  :func:`allocation_progress` of these rows alone gives the same values for
    the interrupted allocations as of every row: resumes, saves and checkpoints are matched
    within a job id, and the next allocation of a chain is the same in any subset holding it.
    """
    touched = {str(v) for t in tables for v in t["job_id"].astype(str).unique()}
    saves, loads = progress_events(signals)
    signalled = touched | set(saves["job_id"]) | set(loads["job_id"])
    job_code = np.asarray(pd.factorize(jobs["job_id"], use_na_sentinel=False)[0], dtype=np.int64)
    chain = _chain_codes(jobs, job_code)
    nat = np.iinfo(np.int64).min
    # one int64 per started allocation at a time (1M jobs: each is 8 MB), each freed when done
    start = _ns(jobs["start"])
    rows = np.flatnonzero(start != nat)
    start = start[rows]
    u = np.unique(start)
    width = len(u) + 1
    key = chain[rows]
    key *= width
    key += np.searchsorted(u, start)
    del start
    order = np.argsort(key, kind="stable")  # by chain, then start, ties in row order
    key = key[order]
    ask = rows[_in(jobs["job_id"], touched)[rows]]
    end = _ns(jobs["end"])[ask]
    end[end == nat] = _OPEN if window_end is None else window_end
    want = chain[ask] * width + np.searchsorted(u, end, side="left")
    pos = np.searchsorted(key, want, side="left")
    ok = pos < len(order)
    nxt = rows[order[pos[ok]]]
    nxt = nxt[chain[nxt] == chain[ask[ok]]]
    wanted = np.zeros(int(job_code.max(initial=-1)) + 1, dtype=bool)
    wanted[job_code[nxt]] = True
    return wanted[job_code] | _in(jobs["job_id"], signalled)


def interruption_costs(interruptions: pd.DataFrame, jobs: pd.DataFrame,
                       signals: pd.DataFrame | None = None, *,
                       assumed_checkpoint_interval_h: float = 1.0,
                       progress: pd.DataFrame | None = None) -> pd.DataFrame:
    """Downtime, restart, lost work and lost GPU-hours of every interruption.

    Parameters
    ----------
    interruptions : DataFrame
        One row per interruption with ``job_id`` and ``time`` (the allocation's end).
    jobs : DataFrame
        Schema ``jobs`` (``job_id``, ``name``, ``start``, ``end``, ``ngpus``).
    signals : DataFrame, optional
        Schema ``signals``; its ``train:checkpoint_*`` rows give checkpoint and resume times.
    assumed_checkpoint_interval_h : float
        Checkpoint interval assumed for a chain whose logs have no checkpoint line: the work
        lost is then half of it (at most the time since the resume).
    progress : DataFrame, optional
        :func:`allocation_progress` output, when already computed.

    Returns
    -------
    DataFrame
        Aligned with ``interruptions``: ``downtime_h``, ``restart_h``, ``lost_work_h``,
        ``lost_gpu_hours`` and ``cost_basis`` (how each was obtained, or why it is missing).
    """
    if progress is None:
        progress = allocation_progress(jobs[needed_allocations(jobs, signals, [interruptions])], signals)
    a = progress
    keys = pd.DataFrame({"job_id": interruptions["job_id"].astype(str).to_numpy(),
                         "end": _ns(interruptions["time"])})
    a_key = a[["job_id", "end"]].reset_index(names="_alloc")[["job_id", "end", "_alloc"]].drop_duplicates(
        ["job_id", "end"])
    hit = keys.merge(a_key, on=["job_id", "end"], how="left")["_alloc"].to_numpy(dtype=float)
    found = ~np.isnan(hit)
    row = np.where(found, hit, 0).astype(int)
    c = {col: _times(a[col].to_numpy(dtype=float)[row]) for col in
         ("start", "end", "resume", "last_save", "next_start", "next_resume", "next_end")}
    ngpus = a["ngpus"].to_numpy(dtype=float)[row]
    chain = a["chain"].to_numpy(dtype=object)[row]
    has_save = np.isin(chain, a.loc[a["n_saves"] > 0, "chain"].unique())
    has_load = np.isin(chain, a.loc[a["resume"].notna(), "chain"].unique())
    restarted = ~np.isnan(c["next_start"])
    down = (c["next_start"] - c["end"]) / _NS_PER_H
    restart = (c["next_resume"] - c["next_start"]) / _NS_PER_H
    # the chain logs resumes but the next allocation never resumed: all of it was restart
    never = has_load & restarted & np.isnan(c["next_resume"])
    restart = np.where(never, (c["next_end"] - c["next_start"]) / _NS_PER_H, restart)
    restart = np.where(~has_load & restarted, 0.0, restart)
    began = np.where(np.isnan(c["resume"]), c["start"], c["resume"])
    since = np.clip((c["end"] - began) / _NS_PER_H, 0.0, None)
    from_log = np.clip((c["end"] - np.fmax(c["last_save"], began)) / _NS_PER_H, 0.0, None)
    lost = np.where(has_save, from_log, np.minimum(since, assumed_checkpoint_interval_h / 2.0))
    out = pd.DataFrame({
        "downtime_h": down, "restart_h": restart, "lost_work_h": lost,
        "lost_gpu_hours": ngpus * (lost + down + restart),
        "cost_basis": _basis(found, has_save, has_load, restarted, ngpus, assumed_checkpoint_interval_h),
    }, index=interruptions.index)
    out.loc[~found, ["downtime_h", "restart_h", "lost_work_h", "lost_gpu_hours"]] = np.nan
    return out


def _basis(found: np.ndarray, has_save: np.ndarray, has_load: np.ndarray, restarted: np.ndarray,
           ngpus: np.ndarray, assumed_h: float) -> list[str]:
    out = []
    for f, s, ld, r, g in zip(found, has_save, has_load, restarted, ngpus, strict=True):
        if not f:
            out.append("no job record for this interruption")
            continue
        parts = ["checkpoint lines" if s else f"no checkpoint lines: assumed every {60 * assumed_h:g} min"]
        if not ld:
            parts.append("no resume lines: restart counted 0")
        if not r:
            parts.append("no later job in the chain: downtime unknown")
        if np.isnan(g):
            parts.append("job has no GPU count")
        out.append("; ".join(parts))
    return out
