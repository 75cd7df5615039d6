"""The frozen result of :func:`reliab.job_outcomes`: every ended job, counted or set apart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import ResultMixin, new_figure
from reliab.taxonomy._policy import (
    INTERRUPTION,
    NOT_INTERRUPTION,
    OUTSIDE_RUN,
    USER_FAILURE,
)

OUTCOMES: tuple[str, ...] = (INTERRUPTION, USER_FAILURE, NOT_INTERRUPTION, OUTSIDE_RUN)


@dataclass(frozen=True)
class JobOutcomes(ResultMixin):
    """How every ended allocation counts under an interruption policy.

    Attributes
    ----------
    interruptions : pandas.DataFrame
        Schema ``interruptions``: the job ends that count, with root cause, evidence and
        ``evidence_kind``.
    user_failures : pandas.DataFrame
        Schema ``interruptions``: FAILED jobs without infrastructure evidence (fleet view),
        attributed like interruptions (an application Xid or an NCCL timeout may be there)
        but not counted as interruptions.
    outcomes : pandas.DataFrame
        One row per ended allocation: ``job_id``, ``name``, ``state``, ``state_raw``,
        ``end``, ``outcome`` (interruption, user_failure, not_interruption, outside_run),
        ``reason`` and ``evidence_kind`` (NA where the state alone decided).
    policy : str
        ``fleet`` or ``training-run``.
    run : str or None
        The training run (job name, or job id when no job has a name); ``None`` for fleet.
    n : int
        Ended allocations assessed.
    method : str
        The policy in one sentence (stated in the report's methods).
    notes : tuple of str
        Counts per outcome and evidence coverage; warnings start with ``"Warning: "``.
    """

    interruptions: pd.DataFrame = field(repr=False)
    user_failures: pd.DataFrame = field(repr=False)
    outcomes: pd.DataFrame = field(repr=False)
    policy: str
    run: str | None
    n: int
    method: str
    notes: tuple[str, ...] = ()

    conf_level: None = None  # counts only: no interval

    def plot(self, ax: Any = None) -> Any:
        """Ended allocations per end state, stacked by outcome."""
        table = self.summary().drop(index="Total", columns="total")
        fig, ax = new_figure(ax, (6.5, 0.3 * max(len(table), 3) + 1.5))
        left = np.zeros(len(table))
        for i, outcome in enumerate(OUTCOMES):
            ax.barh(table.index, table[outcome].to_numpy(), left=left, color=f"C{i}", label=outcome)
            left = left + table[outcome].to_numpy()
        ax.set_xlabel("ended allocations")
        ax.set_title(f"Job ends under the {self.policy} policy")
        ax.legend(loc="lower right", fontsize="small")
        return fig

    def summary(self) -> pd.DataFrame:
        """Allocations per end state (rows, plus ``Total``) and outcome (columns)."""
        o = self.outcomes
        table = pd.crosstab(o["state"].astype(str), o["outcome"].astype(str))
        table = table.reindex(columns=list(OUTCOMES), fill_value=0)
        table.loc["Total"] = table.sum()
        table["total"] = table.sum(axis=1)
        table.index.name, table.columns.name = "state", None
        return table.astype("int64")

    def headline(self) -> str:
        """One line for a command-line summary: policy and counts."""
        planned = int(self.interruptions["planned"].sum()) if len(self.interruptions) else 0
        run = f" of {self.run!r}" if self.run else ""
        text = (f"policy {self.policy}{run}: {len(self.interruptions):,} interruption(s)"
                f" ({planned:,} planned)")
        if self.policy == "fleet":
            text += f", {len(self.user_failures):,} user/application failure(s) counted apart"
        apart = int((self.outcomes["outcome"] != INTERRUPTION).sum()) - len(self.user_failures)
        return text + f", {apart:,} other job end(s) not counted"


def _by_state(frame: pd.DataFrame) -> str:
    counts = frame["state"].astype(str).value_counts()
    return ", ".join(f"{n:,} {s}" for s, n in counts.items())


def policy_notes(outcomes: pd.DataFrame, policy: str, run: str | None, how: str,
                 not_ended: pd.Series, no_end: int, kept: int) -> tuple[str, ...]:
    """Counts per outcome as sentences: what counted, what was set apart and why."""
    notes: list[str] = []
    o = outcomes
    counted = o.loc[(o["outcome"] == INTERRUPTION).to_numpy(dtype=bool), ["state", "reason"]]
    if policy == "training-run":
        name = f"Training run {run!r}" if run else "No training run"  # no job records: no run name
        notes.append(f"{name} ({how}): {int((o['outcome'] != OUTSIDE_RUN).sum()):,} "
                     f"ended allocation(s), {len(counted):,} interruption(s)"
                     + (f" ({_by_state(counted)})" if len(counted) else "") + ".")
        outside = int((o["outcome"] == OUTSIDE_RUN).sum())
        if outside:
            notes.append(f"{outside:,} ended allocation(s) of other jobs are outside the training "
                         "run and not counted.")
    else:
        reasons = counted["reason"].astype(str).value_counts()
        parts = ", ".join(f"{n:,} {r.split(':')[0]}" for r, n in reasons.items())
        notes.append(f"Fleet policy: {len(counted):,} interruption(s)" + (f" ({parts})" if parts else "")
                     + ".")
        user = int((o["outcome"] == USER_FAILURE).sum())
        notes.append(f"{user:,} FAILED job(s) without infrastructure evidence in the window are "
                     "user or application failures, counted apart (user_failures), not as "
                     "interruptions.")
    rest = o.loc[(o["outcome"] == NOT_INTERRUPTION).to_numpy(dtype=bool), ["state"]]  # (not every column)
    if len(rest):
        notes.append(f"Not interruptions: {_by_state(rest)}.")
    if len(not_ended):
        counts = not_ended.astype(str).value_counts()
        notes.append("Not ended, not counted: "
                     + ", ".join(f"{n:,} {s}" for s, n in counts.items()) + ".")
    if no_end:
        notes.append(f"Warning: {no_end:,} job(s) in an end state have no End time (the sacct "
                     "capture lacks End or prints Unknown): they cannot be placed in time and "
                     "are not counted.")
    if kept < len(counted):
        notes.append(f"job_filter kept {kept:,} of {len(counted):,} interruption(s).")
    return tuple(notes)


__all__ = ["JobOutcomes", "OUTCOMES", "policy_notes"]
