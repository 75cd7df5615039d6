"""Candidate evidence of job interruptions: windows, host matching, storms, repeated app Xids.

The join is array-based: signals are sorted by time once and each job's window
``[end - before, end + after]`` is a ``searchsorted`` slice; hosts, jobs and signal keys are
integer codes, so storms are collapsed and episodes ranked with ``lexsort``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reliab.taxonomy._classify import rule_positions, warn_unmatched
from reliab.taxonomy._hosts import HostIndex, host_index, members
from reliab.taxonomy._rules import Rules

#: Application Xids (NVIDIA Xid catalog: RESTART_APP; ignored by the k8s device plugin).
APP_XIDS: tuple[str, ...] = ("xid:13", "xid:31", "xid:43")
SIGNAL_COLUMNS = ("time", "host", "gpu", "job_id", "signal", "message", "origin")


def ns(values: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds."""
    return pd.DatetimeIndex(pd.to_datetime(values, utc=True, cache=False)).as_unit("ns").asi8


def obj(values: pd.Series) -> np.ndarray:
    """Values as an object array with ``None`` for missing."""
    return values.to_numpy(dtype=object, na_value=None)


def _windows(t: np.ndarray, ends: np.ndarray, before: int,
             after: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Time order of ``t``, per-job slice bounds in that order, and the union of windows."""
    order = np.argsort(t, kind="stable")
    ts = t[order]
    lo = np.searchsorted(ts, ends - before, "left")
    hi = np.searchsorted(ts, ends + after, "right")
    cover = np.zeros(len(ts) + 1, dtype=np.int64)
    np.add.at(cover, lo, 1)
    np.add.at(cover, hi, -1)
    inside = np.zeros(len(ts), dtype=bool)
    inside[order[np.cumsum(cover[:-1]) > 0]] = True
    return order, lo, hi, inside


def _linked_tickets(signals: pd.DataFrame, job_ids: np.ndarray) -> np.ndarray:
    """Mask of ticket signals that name one of ``job_ids``."""
    codes, keys = pd.factorize(signals["signal"])  # on the column itself: no Python string per row
    ticket = np.append([str(k).startswith("ticket:") for k in keys], False).astype(bool)[codes]
    ticket &= signals["job_id"].notna().to_numpy(dtype=bool)
    if ticket.any():  # usually few rows: test only those against the job ids
        ticket[ticket] = np.isin(obj(signals["job_id"])[ticket], np.asarray(job_ids, dtype=object))
    return ticket


def relevant_signals(signals: pd.DataFrame, jobs: pd.DataFrame, before: int,
                     after: int) -> pd.DataFrame:
    """The signals inside any job's window, or tickets naming an interrupted job."""
    _, _, _, inside = _windows(ns(signals["time"]), ns(jobs["end"]), before, after)
    keep = inside | _linked_tickets(signals, obj(jobs["job_id"]))
    return signals.loc[keep, list(SIGNAL_COLUMNS)].reset_index(drop=True)


def with_job_states(signals: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """Add a ``slurm:<state>`` signal at the end of every interrupted job that has none.

    So that ``CANCELLED by 0`` reaches the ``slurm-cancelled-admin`` rule even when the
    caller passes only kernel or ticket signals. ``jobs`` needs the ``_state`` column.
    """
    codes, keys = pd.factorize(signals["signal"])
    is_slurm = np.append([str(k).startswith("slurm:") for k in keys], False).astype(bool)[codes]
    have = signals.loc[is_slurm, "job_id"].dropna()  # Arrow strings stay Arrow (no set of 1M str)
    todo = jobs[~jobs["job_id"].isin(have).to_numpy(dtype=bool)]
    if todo.empty:
        return signals
    raw = todo["state_raw"] if "state_raw" in todo else todo["state"]
    extra = pd.DataFrame({
        "time": todo["end"].to_numpy(), "host": None, "gpu": None,
        "job_id": todo["job_id"].to_numpy(),
        "signal": ("slurm:" + todo["_state"].str.lower()).to_numpy(),
        "message": raw.fillna(todo["state"]).to_numpy(),
        "origin": (todo["origin"] if "origin" in todo else todo["job_id"]).to_numpy(),
    })
    extra = extra.astype({c: signals[c].dtype for c in SIGNAL_COLUMNS if c != "time"})
    extra["time"] = pd.to_datetime(extra["time"], utc=True)
    return pd.concat([signals, extra], ignore_index=True)


def _members(index: HostIndex, nodelist: str | None, failed: str | None,
             job_id: str) -> np.ndarray:
    try:
        return np.append(members(index, nodelist, (failed,)), False)  # code -1: no host
    except ValueError as exc:
        raise ValueError(f"job {job_id}: {exc}") from exc


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (-1 missing) and the distinct values as objects, in order of appearance."""
    codes, uniques = pd.factorize(values)
    return np.asarray(codes, dtype=np.int64), obj(pd.Series(uniques, dtype=object))


def candidate_pairs(sig: pd.DataFrame, jobs: pd.DataFrame, rules: Rules, before: int,
                    after: int) -> pd.DataFrame:
    """(job, signal row) pairs of root-cause evidence, with integer codes for grouping.

    A signal is evidence of a job if its rule may be a root cause, it lies in the job's
    window and it names the job, or its host is in the job's nodelist (or ``failed_node``),
    or it has neither host nor job (cluster-wide); a ``slurm:*`` end state only if it names
    the job. Tickets naming the job count at any time.
    """
    t = ns(sig["time"])
    order, lo, hi, inside = _windows(t, ns(jobs["end"]), before, after)
    job_ids = obj(jobs["job_id"])
    # codes from the columns as they are (Arrow strings: no Python string per signal)
    sjob, sjob_uniques = pd.factorize(sig["job_id"])
    job_code = np.asarray(pd.Index(sjob_uniques).get_indexer(jobs["job_id"]), dtype=np.int64)
    job_code[job_code < 0] = -2  # not named by any signal (-1 is a signal without a job)
    tickets = _linked_tickets(sig, job_ids)
    rows = np.flatnonzero(inside | tickets)
    pos = np.full(len(sig), -1, dtype=np.int64)
    keys = sig["signal"].iloc[rows]
    pos[rows] = rule_positions(rules, keys, sig["message"].iloc[rows])
    warn_unmatched(keys, pos[rows], stacklevel=3)
    root = (pos >= 0) & rules.table["root_cause"].to_numpy()[pos]
    host, host_uniques = _codes(sig["host"])
    key_code, key_uniques = _codes(sig["signal"])
    # a Slurm end state is evidence for its own job only, never for a job sharing its node
    own_only = np.append([str(k).startswith("slurm:") for k in key_uniques], False)[key_code]
    index = host_index(host_uniques)
    nodelist = obj(jobs["nodelist"]) if "nodelist" in jobs else [None] * len(jobs)
    failed = obj(jobs["failed_node"]) if "failed_node" in jobs else [None] * len(jobs)
    cache: dict[tuple[Any, Any], np.ndarray] = {}
    out_job, out_row = [], []
    for j in range(len(jobs)):
        seg = order[lo[j]:hi[j]]
        seg = seg[root[seg]]
        if len(seg):
            hosts = (nodelist[j], failed[j])
            if hosts not in cache:
                cache[hosts] = _members(index, *hosts, job_ids[j])
            h, sj = host[seg], sjob[seg]
            ok = (sj == job_code[j]) | ((cache[hosts][h] | ((h < 0) & (sj < 0))) & ~own_only[seg])
            out_row.append(seg[ok])
            out_job.append(np.full(int(ok.sum()), j))
    linked = np.flatnonzero(tickets & root)
    job_of_code = {c: j for j, c in enumerate(job_code)}
    out_row.append(linked)
    out_job.append(np.array([job_of_code[c] for c in sjob[linked]], dtype=np.int64))
    pairs = pd.DataFrame({"job": np.concatenate(out_job).astype(np.int64),
                          "row": np.concatenate(out_row).astype(np.int64)})
    pairs = pairs.drop_duplicates(ignore_index=True)
    r = pairs["row"].to_numpy()
    return pairs.assign(rule_pos=pos[r], t=t[r], host_code=host[r], key_code=key_code[r])


def escalate_app_xids(pairs: pd.DataFrame, sig: pd.DataFrame, rules: Rules) -> pd.DataFrame:
    """Re-key application Xids repeated on one GPU across >= 2 jobs as ``xid_repeat:<code>``.

    NVIDIA and Meta treat Xid 13/31/43 as application errors (NVIDIA ``k8s-device-plugin``
    ``internal/rm/health.go``; Meta ``facebookresearch/gcm``
    ``gcm/health_checks/check_utils/xid_error_codes.py``); a GPU that raises them in several
    different jobs is the likelier cause (this project's rule, not a published one). Every
    occurrence on that GPU is then classified by the rule of ``xid_repeat:<code>``
    (``xid-app-repeat``).
    """
    keys = obj(sig["signal"])[pairs["row"].to_numpy()]
    app = np.isin(keys, APP_XIDS)
    if not app.any():
        return pairs
    gpu = obj(sig["gpu"])[pairs["row"].to_numpy()]
    sub = pd.DataFrame({"host": pairs["host_code"].to_numpy()[app], "gpu": gpu[app],
                        "job": pairs["job"].to_numpy()[app], "row": pairs["row"].to_numpy()[app]})
    sub = sub[(sub["host"] >= 0) & sub["gpu"].notna()]
    by_gpu = sub.groupby(["host", "gpu"])
    repeat = (by_gpu["job"].transform("nunique") >= 2) & (by_gpu["row"].transform("nunique") >= 2)
    idx = np.flatnonzero(app)[sub.index[repeat.to_numpy()]]
    if len(idx):
        derived = pd.Series([k.replace("xid:", "xid_repeat:") for k in keys[idx]])
        new = rule_positions(rules, derived, None)
        pairs = pairs.copy()
        rule_pos = pairs["rule_pos"].to_numpy().copy()
        rule_pos[idx] = np.where(new >= 0, new, rule_pos[idx])
        pairs["rule_pos"] = rule_pos
    return pairs


def collapse_storms(pairs: pd.DataFrame, gap: int) -> pd.DataFrame:
    """Keep the first signal of each storm: same job, host and key, each within ``gap``.

    Adds ``count``, the number of signals in the episode.
    """
    job, host, key, t = (pairs[c].to_numpy() for c in ("job", "host_code", "key_code", "t"))
    o = np.lexsort((t, key, host, job))
    job, host, key, t = job[o], host[o], key[o], t[o]
    new = np.ones(len(o), dtype=bool)
    new[1:] = ((job[1:] != job[:-1]) | (host[1:] != host[:-1]) | (key[1:] != key[:-1])
               | (np.diff(t) > gap))
    starts = np.flatnonzero(new)
    count = np.diff(np.append(starts, len(o)))
    return pairs.iloc[o[starts]].assign(count=count).reset_index(drop=True)


__all__ = ["APP_XIDS", "relevant_signals", "with_job_states", "candidate_pairs",
           "escalate_app_xids", "collapse_storms", "ns", "obj"]
