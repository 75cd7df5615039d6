"""Times between interruptions start at an interruption, never at the window start.

The time from the window start (or the first log line) to the first interruption is a forward
recurrence time, not a time between failures: the gap that straddles the start began at an
unseen event and is length-biased (Cox, *Renewal Theory*, 1962, §5.2; Ascher & Feingold 1984).
Only the gaps between consecutive observed interruptions are exact; the last one, to the window
end, is right-censored.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliab.study._analyses import _tbi
from reliab.study._fleet import Fleet

START = pd.Timestamp("2024-06-01", tz="UTC")
S = 3600.0


def _fleet(hours: float) -> Fleet:
    return Fleet(gpu_days=100.0, start=START, end=START + pd.Timedelta(hours=hours), gpus_per_node=8,
                 n_gpus=8, exposure_source="gpus", window_source="given")


def _captured(times_h: list[float], window_h: float) -> tuple[np.ndarray, np.ndarray]:
    seen: dict[str, np.ndarray] = {}

    def fit(durations, observed=None, upper=None, conf_level=0.95):  # noqa: ANN001, ARG001
        seen["d"], seen["o"] = np.asarray(durations), np.asarray(observed)
        return "fitted"

    times = pd.Series(START + pd.to_timedelta(times_h, unit="h"))
    assert _tbi(fit, times, _fleet(window_h), 0.95) == "fitted"
    return seen["d"], seen["o"]


def test_the_first_gap_starts_at_the_first_interruption() -> None:
    # interruptions at 10:00:17, 30:00:41 and 60:00:05 (h:m:s) of a 100 h window: gaps
    # 20:00:24 and 29:59:24, then 39:59:55 censored; the 10 h from the window start to the first
    # interruption is not a gap (seconds in the stamps, so the log's resolution is negligible)
    durations, observed = _captured([10 + 17 / S, 30 + 41 / S, 60 + 5 / S], 100.0)
    np.testing.assert_allclose(durations, [20 + 24 / S, 30 - 36 / S, 40 - 5 / S], rtol=1e-12)
    assert observed.tolist() == [1, 1, 0]


def test_an_interruption_at_the_window_end_leaves_no_censored_gap() -> None:
    durations, observed = _captured([5 + 3 / S, 25 + 59 / S, 100.0], 100.0)
    np.testing.assert_allclose(durations, [20 + 56 / S, 75 - 59 / S], rtol=1e-12)
    assert observed.tolist() == [1, 1]
