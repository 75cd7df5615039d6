"""What one uninterrupted stretch of training yields: saved work, checkpoint overhead, lost work.

A *segment* is the running time ``L`` of a job between the moment training resumes and
the moment it is interrupted (or the end of the observation, for the last one).  With a
checkpoint every ``interval`` hours of training and a write of ``write`` hours:

* **blocking** writes pause training: checkpoint ``k`` completes at ``k (interval + write)``,
  so ``n = floor(L / (interval + write))`` checkpoints complete, ``n·interval`` hours of
  training are saved, ``n·write`` hours were spent writing and the rest is lost;
* **non-blocking** (asynchronous) writes snapshot the state at ``k·interval`` and finish
  ``write`` later while training goes on: ``n = floor((L - write) / interval)``, no write
  overhead, ``L - n·interval`` lost.

This is the cost model of Young (1974) and Daly (2006) — work since the last completed
dump is redone after a failure — and of the ETTR model of Kokolis et al. (HPCA 2025,
arXiv 2410.21680).  A segment that was not interrupted (censored at the end of the
window) loses nothing: all its training counts, only blocking write time does not.

The expectation over a random segment length follows from ``E[n] = Σ_k P(L ≥ t_k)`` with
``t_k`` the completion time of checkpoint ``k`` (:func:`expected_saved_checkpoints`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Terms of the survival sum are dropped once P(L >= t) falls below this.
_TAIL = 1e-15
_MAX_TERMS = 50_000_000


def saved_checkpoints(run_h: ArrayLike, interval_h: float, write_h: float,
                      blocking: bool = True) -> NDArray[np.int64]:
    """Checkpoints completed within a running time ``run_h`` (elementwise)."""
    run = np.asarray(run_h, dtype=float)
    _check_inputs(run, interval_h, write_h)
    if blocking:
        n = np.floor(run / (interval_h + write_h))
    else:
        n = np.where(run >= interval_h + write_h, np.floor((run - write_h) / interval_h), 0.0)
    return np.maximum(n, 0.0).astype(np.int64)


def _check_inputs(run: NDArray[np.float64], interval_h: float, write_h: float) -> None:
    """Refuse what would overflow the checkpoint count: an unknown (NaN) or infinite time."""
    if not (math.isfinite(interval_h) and interval_h > 0):
        raise ValueError(f"checkpoint interval must be a finite positive number of hours, got {interval_h!r}")
    if not (math.isfinite(write_h) and write_h >= 0):
        raise ValueError(f"checkpoint write time must be a finite number of hours >= 0, got {write_h!r}")
    if not np.isfinite(run).all():
        raise ValueError(f"{int((~np.isfinite(run)).sum())} running time(s) are not finite")


def split(run_h: ArrayLike, interval_h: float, write_h: float, *, blocking: bool = True,
          censored: ArrayLike = False) -> tuple[NDArray[np.float64], ...]:
    """Split running time into ``(productive, writing, lost)`` hours, elementwise.

    Parameters
    ----------
    run_h : array_like
        Running time of each segment (resume to interruption), hours.
    interval_h, write_h : float
        Training hours between checkpoints and the write time of one checkpoint.
    blocking : bool
        Writes pause training (True) or run in the background (False).
    censored : array_like of bool
        Segments that were not interrupted (the last one of a window): nothing is lost.

    Returns
    -------
    tuple of ndarray
        ``productive + writing + lost == run_h``.
    """
    run = np.asarray(run_h, dtype=float)
    cens = np.broadcast_to(np.asarray(censored, dtype=bool), run.shape)
    n = saved_checkpoints(run, interval_h, write_h, blocking).astype(float)
    if blocking:
        writing = n * write_h
        # a censored segment that ends inside a write has spent that part writing
        tail = run - n * (interval_h + write_h)
        writing = np.where(cens, writing + np.clip(tail - interval_h, 0.0, None), writing)
    else:
        writing = np.zeros_like(run)
    productive = np.where(cens, run - writing, n * interval_h)
    lost = run - productive - writing
    return productive, writing, np.where(np.abs(lost) < 1e-12, 0.0, lost)


def expected_saved_checkpoints(survival: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                               interval_h: float, write_h: float, *, blocking: bool = True,
                               horizon_h: float) -> float:
    """``E[n] = Σ_{k≥1} S(t_k)`` for segment lengths with survival function ``survival``.

    ``t_k = k (interval + write)`` (blocking) or ``k·interval + write`` (non-blocking);
    ``horizon_h`` is a time beyond which ``S`` is negligible (below 1e-15).
    """
    step = interval_h + write_h if blocking else interval_h
    offset = 0.0 if blocking else write_h
    n_terms = int(np.ceil(max(horizon_h - offset, 0.0) / step)) + 1
    if n_terms > _MAX_TERMS:
        raise ValueError(f"checkpoint interval {interval_h:g} h is too short for segments of up to "
                         f"{horizon_h:g} h ({n_terms:,} terms)")
    t = offset + step * np.arange(1, n_terms + 1, dtype=float)
    s = survival(t)
    return float(np.sum(s[s > _TAIL]))
