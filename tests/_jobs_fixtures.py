"""A hand-built three-allocation training run whose costs are worked out by hand.

Times in hours from T0 (window 0-10 h), 64 GPUs, checkpoint writes of 0.1 h:

==========  =====  ======  =================  =====  ===========================
allocation  start  resume  checkpoints        end    interruption
==========  =====  ======  =================  =====  ===========================
A (1)       0.0    0.1     1.1, 2.1           2.6    xid:79 on node0001 at 2.55
B (2)       3.0    3.2     4.2                4.5    xid:79 on node0001 at 4.45
C (3)       5.0    5.1     6.1, 7.1, 8.1, 9.1  -     (running at the window end)
==========  =====  ======  =================  =====  ===========================

Interruption A: lost work 2.6 - 2.1 = 0.5, downtime 0.4, restart 0.2 -> 1.1 h x 64 GPUs.
Interruption B: lost 0.3, downtime 0.5, restart 0.1 -> 0.9 h x 64.  Productive: A 2.0 - 0.2,
B 1.0 - 0.1, C 4.9 - 0.4 = 7.2 h of 10 -> ETTR 0.72.
"""

from __future__ import annotations

import pandas as pd

from reliab.schema import conform

T0 = pd.Timestamp("2024-03-01", tz="UTC")


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def _signal(hours: float, key: str, job: str | None, *, host: str | None = None,
            message: str | None = None, severity: str = "info") -> dict:
    return {"time": at(hours), "host": host, "gpu": "0000:18:00" if host else None, "job_id": job,
            "source": key.split(":")[0], "signal": key, "severity": severity, "message": message,
            "origin": f"test:{hours}"}


def tables(*, checkpoints: bool = True, resumes: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(jobs, signals) of the run."""
    jobs = conform(pd.DataFrame([
        {"job_id": "1", "name": "run", "state": "NODE_FAIL", "start": at(0.0), "end": at(2.6),
         "nnodes": 8, "ngpus": 64, "nodelist": "node[0001-0008]", "origin": "t:1"},
        {"job_id": "2", "name": "run", "state": "NODE_FAIL", "start": at(3.0), "end": at(4.5),
         "nnodes": 8, "ngpus": 64, "nodelist": "node[0001-0008]", "origin": "t:2"},
        {"job_id": "3", "name": "run", "state": "RUNNING", "start": at(5.0), "end": None,
         "nnodes": 8, "ngpus": 64, "nodelist": "node[0001-0008]", "origin": "t:3"},
    ]), "jobs")
    rows = [_signal(2.55, "xid:79", None, host="node0001", message="GPU has fallen off the bus.",
                    severity="critical"),
            _signal(4.45, "xid:79", None, host="node0001", message="GPU has fallen off the bus.",
                    severity="critical")]
    if resumes:
        rows += [_signal(t, "train:checkpoint_loaded", j, message="via=test")
                 for j, t in (("1", 0.1), ("2", 3.2), ("3", 5.1))]
    if checkpoints:
        rows += [_signal(t, "train:checkpoint_saved", j, message="write_s=360 via=test")
                 for j, ts in (("1", (1.1, 2.1)), ("2", (4.2,)), ("3", (6.1, 7.1, 8.1, 9.1)))
                 for t in ts]
    signals = conform(pd.DataFrame(rows), "signals").sort_values("time", ignore_index=True)
    return jobs, signals


def interruptions() -> pd.DataFrame:
    """The two interruptions as attribution would give them."""
    return pd.DataFrame({"time": [at(2.6), at(4.5)], "job_id": ["1", "2"],
                         "hosts": ["node0001", "node0001"], "planned": [False, False],
                         "category": ["Faulty GPU", "Faulty GPU"], "component": ["GPU", "GPU"]})
