"""Labels of power swings from the job timeline: job start, job stop, failure, pause.

The timeline is the canonical ``jobs`` table (Slurm ``sacct`` start, end and state) and,
optionally, the ``interruptions`` table.  Windows are parameters; the default stop window
is the attribution window of Meta's RSC study (10 min before to 5 min after a job's end;
Kokolis et al., HPCA 2025).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: job end states that point to a failure rather than a planned stop (Slurm sacct states)
FAILURE_STATES = ("NODE_FAIL", "FAILED", "BOOT_FAIL")
LABELS = ("job start", "job stop", "failure-induced", "pause (checkpoint/collective)",
          "unexplained")


def utc(s: pd.Series) -> pd.Series:
    return pd.to_datetime(s, utc=True)


def _naive64(s: pd.Series) -> np.ndarray:
    """UTC times as naive ``datetime64[ns]`` (NaT kept) for vectorised comparisons."""
    return pd.DatetimeIndex(utc(s)).tz_localize(None).to_numpy(dtype="datetime64[ns]")


def label_power_swings(
    swings: pd.DataFrame,
    *,
    jobs: pd.DataFrame | None = None,
    interruptions: pd.DataFrame | None = None,
    start_window: tuple[str, str] = ("-2min", "10min"),
    stop_window: tuple[str, str] = ("-10min", "5min"),
    max_pause: str = "15min",
    max_w_per_gpu: float | None = 1000.0,
) -> pd.DataFrame:
    """Name the cause of each swing from the job timeline.

    Jobs are taken largest first (``ngpus``, else ``nnodes``), and a job with ``ngpus`` can
    only explain a swing of at most ``ngpus × max_w_per_gpu`` watts (default 1000 W: the
    700 W TDP of an H100/H200 (Llama 3 §3.3.1) plus its share of the host), so the small jobs
    of a shared cluster never claim the swings of the large one.  In this order: the first rise whose onset lies in
    ``start_window`` around a job's start is a ``job start``; a drop followed within ``max_pause`` by a rise that is not a job start is
    a ``pause (checkpoint/collective)`` (both swings get the label); a remaining drop in
    ``stop_window`` around a job's end is ``failure-induced`` when the job ended in a failure
    state (``NODE_FAIL``, ``FAILED``, ``BOOT_FAIL``) or an unplanned interruption of
    ``interruptions`` falls in that window, else a ``job stop``.  Anything else is
    ``unexplained``.  The default stop window is the attribution window of Meta's RSC study
    (10 min before to 5 min after a job's end; Kokolis et al. 2025).

    Returns
    -------
    pandas.DataFrame
        ``swings`` with a ``label`` column and ``job_id`` (the job that explains it, if any).
    """
    out = swings.copy()
    n = len(out)
    label = np.full(n, "", dtype=object)
    job = np.full(n, None, dtype=object)
    start = _naive64(out["start"]) if n else np.array([], dtype="datetime64[ns]")
    ends = _naive64(out["end"]) if n else start
    rise = (out["direction"] == "rise").to_numpy(dtype=bool)
    timeline = _Timeline(jobs, interruptions, max_w_per_gpu) if jobs is not None and n else None
    size = out["delta_w"].abs().to_numpy(dtype=float) if n else np.zeros(0)
    if timeline is not None:
        rises = np.flatnonzero(rise)
        for k, i in timeline.first_rises(start[rises], size[rises], start_window):
            label[rises[i]], job[rises[i]] = "job start", timeline.ids[k]
    pause = pd.Timedelta(max_pause).to_timedelta64()
    for i in range(n - 1):
        if label[i] == "" and label[i + 1] == "" and not rise[i] and rise[i + 1] \
                and start[i + 1] - ends[i] <= pause:
            label[i] = label[i + 1] = "pause (checkpoint/collective)"
    if timeline is not None:
        for i in np.flatnonzero(~rise & (label == "")):
            hit = timeline.ended(start[i], size[i], stop_window)
            if hit is not None:
                label[i], job[i] = hit
    label[label == ""] = "unexplained"
    out["label"] = pd.array(label.astype(str), dtype="string")
    out["job_id"] = pd.array(job, dtype="string")
    return out


class _Timeline:
    """Job starts and ends (naive UTC datetime64) for labelling swings."""

    def __init__(self, jobs: pd.DataFrame, interruptions: pd.DataFrame | None,
                 max_w_per_gpu: float | None) -> None:
        missing = [c for c in ("job_id", "start", "end") if c not in jobs.columns]
        if missing:
            raise ValueError(f"jobs is missing column(s) {missing}")
        j = jobs.dropna(subset=["start"])
        size = next((pd.to_numeric(j[c], errors="coerce").fillna(0) for c in ("ngpus", "nnodes")
                     if c in j), pd.Series(1, index=j.index))
        order = np.argsort(-size.to_numpy(dtype=float), kind="stable")  # largest job first
        j = j.iloc[order]
        gpus = pd.to_numeric(j["ngpus"], errors="coerce").to_numpy(dtype=float) if "ngpus" in j \
            else np.full(len(j), np.nan)
        # NaN (unknown GPUs or no bound) never rules a job out
        self.cap = gpus * max_w_per_gpu if max_w_per_gpu is not None else np.full(len(j), np.nan)
        self.starts, self.ends = _naive64(j["start"]), _naive64(j["end"])
        self.ids = j["job_id"].astype("string").to_numpy()
        states = j["state"].astype("string").fillna("") if "state" in j else \
            pd.Series("", index=j.index)
        self.failed = states.str.split(" ").str[0].isin(FAILURE_STATES).to_numpy(dtype=bool)
        fails = np.array([], dtype="datetime64[ns]")
        if interruptions is not None and len(interruptions):
            unplanned = (~interruptions["planned"].astype("boolean").fillna(False)).to_numpy(bool) \
                if "planned" in interruptions else np.ones(len(interruptions), dtype=bool)
            fails = _naive64(interruptions.loc[unplanned, "time"])
        self.fails = np.sort(fails)

    @staticmethod
    def _window(w: tuple[str, str]) -> tuple[np.timedelta64, np.timedelta64]:
        return tuple(pd.Timedelta(v).to_timedelta64() for v in w)  # type: ignore[return-value]

    def _can(self, k: int, size: float) -> bool:
        return not self.cap[k] < size  # NaN cap: no bound

    def first_rises(self, onsets: np.ndarray, sizes: np.ndarray, window: tuple[str, str]
                    ) -> list[tuple[int, int]]:
        """(job, rise) pairs: each job start, largest job first, takes the first rise in its
        window that no larger job took and that the job is big enough to cause."""
        lo, hi = self._window(window)
        taken: set[int] = set()
        pairs = []
        for k in range(len(self.starts)):
            i = int(np.searchsorted(onsets, self.starts[k] + lo, side="left"))
            while i < len(onsets) and onsets[i] <= self.starts[k] + hi and (
                    i in taken or not self._can(k, sizes[i])):
                i += 1
            if i < len(onsets) and onsets[i] <= self.starts[k] + hi:
                taken.add(i)
                pairs.append((k, i))
        return pairs

    def ended(self, t: np.datetime64, size: float, window: tuple[str, str]
              ) -> tuple[str, str] | None:
        lo, hi = self._window(window)
        ok = ~np.isnat(self.ends) & ~(self.cap < size)
        hit = np.flatnonzero(ok & (t >= self.ends + lo) & (t <= self.ends + hi))
        if not hit.size:
            return None
        k = int(hit[0])
        a, b = self.ends[k] + lo, self.ends[k] + hi
        failed = bool(self.failed[k]) or bool(np.any((self.fails >= a) & (self.fails <= b)))
        return ("failure-induced" if failed else "job stop"), str(self.ids[k])


__all__ = ["label_power_swings", "LABELS", "FAILURE_STATES", "utc"]
