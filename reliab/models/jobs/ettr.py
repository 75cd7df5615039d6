"""Expected effective training time ratio (ETTR) of a job that checkpoints and restarts.

ETTR is "the ratio of productive runtime to the available wallclock time of a job run"
(Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research Clusters",
HPCA 2025, arXiv 2410.21680); Llama 3 calls it effective training time, "the time spent on
useful training over the elapsed time" (arXiv 2407.21783, §3.3.4).  Two forms:

* ``"first-order"`` — Kokolis et al.'s closed form
  ``E[ETTR] ≈ (1 - N·r·(u0 + Δ/2)) / (1 + w/Δ)`` with ``N`` nodes failing at ``r`` per node
  and day, restart overhead ``u0``, checkpoint interval ``Δ`` and blocking write ``w``.  The
  authors state it holds while ``(N·r)⁻¹ ≥ 0.1`` day;
* ``"renewal"`` — the exact expectation of the same cost model when the gaps between
  interruptions are i.i.d. (exponential, or Weibull with ``shape``): by the renewal-reward
  theorem ``ETTR = Δ·E[n] / (E[L] + u0)`` with ``E[n] = Σ_k P(L ≥ k(Δ + w))`` checkpoints
  completed per segment of length ``L`` (:mod:`._segments`).  It is what the Monte-Carlo
  simulator converges to, and shows where the first-order form drifts (large ``N·r·Δ``,
  shape ≠ 1).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

from reliab.errors import ReliabWarning
from reliab.models.jobs._durations import HoursLike, check_write, to_count, to_hours, to_rate
from reliab.models.jobs._failures import FailureModel, FailureProcess
from reliab.models.jobs._segments import expected_saved_checkpoints

HOURS_PER_DAY = 24.0
#: Kokolis et al.: the closed form is valid while the job MTTF is at least 0.1 day.
VALID_MTTF_DAYS = 0.1


def first_order_ettr(job_rate_per_h: float, interval_h: float, write_h: float,
                     restart_h: float) -> float:
    """Kokolis et al.'s closed form from a job-level rate (per hour); may be negative."""
    return (1.0 - job_rate_per_h * (restart_h + interval_h / 2.0)) / (1.0 + write_h / interval_h)


def renewal_ettr(model: FailureModel, interval_h: float, write_h: float, restart_h: float, *,
                 blocking: bool = True) -> float:
    """Exact long-run ETTR when the gaps between interruptions are i.i.d. (renewal-reward).

    ``restart_h`` is the mean time from an interruption to training again (restart overhead
    plus any queueing).
    """
    no_failures = 1.0 / (1.0 + write_h / interval_h) if blocking else 1.0
    mean = model.mtti_h
    # a rate so small (subnormal) that the mean time overflows: the limit of no failures
    if model.rate_per_h == 0 or not math.isfinite(mean):
        return no_failures
    if all(p.shape == 1.0 for p in model.processes):
        # exponential gaps: Σ_k exp(-λ (offset + k·step)) is geometric
        lam, step = model.rate_per_h, interval_h + write_h if blocking else interval_h
        offset = 0.0 if blocking else write_h
        saved = math.exp(-lam * (offset + step)) / -math.expm1(-lam * step)
        if not math.isfinite(saved):
            return no_failures
    else:
        saved = expected_saved_checkpoints(model.survival, interval_h, write_h, blocking=blocking,
                                           horizon_h=model.tail_h())
    return interval_h * saved / (mean + restart_h)


def expected_ettr(
    *,
    n_nodes: int,
    node_failure_rate_per_day: float,
    checkpoint_interval_h: HoursLike,
    checkpoint_write_h: HoursLike = 0.0,
    restart_h: HoursLike,
    method: Literal["first-order", "renewal"] = "first-order",
    shape: float = 1.0,
) -> float:
    """Expected ETTR of a job on ``n_nodes`` nodes that checkpoints every ``Δ`` hours.

    Parameters
    ----------
    n_nodes : int
        Nodes the job spans (16,384 H100 GPUs = 2,048 eight-GPU nodes).
    node_failure_rate_per_day : float
        Interruptions per node and day, ``r_f`` (Meta RSC-1: 6.50e-3, RSC-2: 2.34e-3 per
        node-day; Llama 3 Table 5: 419 / (2,048 × 54) = 3.79e-3).
    checkpoint_interval_h : float or str
        Training time between checkpoints, ``Δ`` (hours, or e.g. ``"60min"``).
    checkpoint_write_h : float or str
        Time training is paused per checkpoint, ``w`` (0 for non-blocking writes).  May not
        exceed ``Δ``.
    restart_h : float or str
        Restart overhead per interruption, ``u0``: from the interruption to training again.
    method : {"first-order", "renewal"}
        Kokolis et al.'s closed form, or the exact renewal-reward expectation.
    shape : float
        Weibull shape of the gaps between interruptions (``"renewal"`` only; 1 = exponential).

    Returns
    -------
    float
        Expected ETTR in [0, 1].  The first-order form is clipped at 0 when the loss
        exceeds the wall time (with a warning).

    Raises
    ------
    ValueError
        Zero nodes, a negative rate or time, a zero interval, a write longer than the
        interval, or an unknown method; the message names the parameter.

    Warns
    -----
    ReliabWarning
        ``"first-order"`` outside its stated validity, ``(N·r)⁻¹ < 0.1`` day.

    References
    ----------
    Kokolis, A. et al. (2025). Revisiting reliability in large-scale machine learning
    research clusters. HPCA 2025, 1259–1274. arXiv:2410.21680.

    Examples
    --------
    The RSC study's hypothetical 16k-GPU job on RSC-1, non-blocking writes, 5-min restarts:

    >>> round(expected_ettr(n_nodes=2048, node_failure_rate_per_day=6.5e-3,
    ...                     checkpoint_interval_h="5min", restart_h="5min"), 2)
    0.93
    """
    nodes = to_count(n_nodes, "n_nodes")
    rate = to_rate(node_failure_rate_per_day, "node_failure_rate_per_day")
    interval = to_hours(checkpoint_interval_h, "checkpoint_interval_h", positive=True)
    write = to_hours(checkpoint_write_h, "checkpoint_write_h")
    restart = to_hours(restart_h, "restart_h")
    check_write(write, interval)
    job_rate = nodes * rate / HOURS_PER_DAY
    if method == "first-order":
        if shape != 1.0:
            raise ValueError(f"shape={shape!r}: the first-order form assumes exponential gaps; "
                             "use method='renewal'")
        if rate > 0 and 1.0 / (nodes * rate) < VALID_MTTF_DAYS:
            warnings.warn(f"job MTTF {24.0 / (nodes * rate):.2f} h is below 0.1 day: outside the "
                          "validity of the first-order ETTR (Kokolis et al.); see method='renewal'",
                          ReliabWarning, stacklevel=2)
        value = first_order_ettr(job_rate, interval, write, restart)
        if value < 0:
            warnings.warn(f"expected loss exceeds the wall time (first-order ETTR {value:.3f}); "
                          "returning 0", ReliabWarning, stacklevel=2)
        return max(0.0, value)
    if method == "renewal":
        model = FailureModel((FailureProcess("all", job_rate, float(shape)),))
        return renewal_ettr(model, interval, write, restart)
    raise ValueError(f"method must be 'first-order' or 'renewal', got {method!r}")
