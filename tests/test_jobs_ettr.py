"""Expected ETTR (reliab.models.jobs.ettr): the RSC study's numbers, the exact renewal form."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ReliabWarning
from reliab.models.jobs._failures import FailureModel, FailureProcess
from reliab.models.jobs._segments import expected_saved_checkpoints, split
from reliab.models.jobs.ettr import renewal_ettr

REF = pd.read_csv(Path(__file__).parent / "reference" / "job_reliability.csv").set_index("key")
RSC1 = float(REF.loc["rsc1_node_failure_rate", "value"]) / 1000


def test_published_rsc_ettr():
    """Reference: Kokolis et al. — a 16k-GPU job on RSC-1 with non-blocking writes and 5-min
    restarts has E[ETTR] about 0.7 at 60-min and 0.93 at 5-min checkpoints."""
    for key, interval in (("rsc1_ettr_16k_60min", "60min"), ("rsc1_ettr_16k_5min", "5min")):
        value, tol = REF.loc[key, ["value", "abs_tol"]]
        with pytest.warns(ReliabWarning, match="below 0.1 day"):  # 1.8 h job MTTF
            got = reliab.expected_ettr(n_nodes=2048, node_failure_rate_per_day=RSC1,
                                       checkpoint_interval_h=interval, restart_h="5min")
        assert got == pytest.approx(value, abs=tol)


def test_first_order_closed_form():
    """Closed form: (1 - N r (u0 + dt/2)) / (1 + w/dt), r per day and times in days."""
    n, r, dt, w, u0 = 500, 4e-3, 0.5, 1 / 60, 0.1
    expected = (1 - n * r * (u0 / 24 + dt / 48)) / (1 + w / dt)
    got = reliab.expected_ettr(n_nodes=n, node_failure_rate_per_day=r, checkpoint_interval_h=dt,
                               checkpoint_write_h=w, restart_h=u0)
    assert got == pytest.approx(expected, rel=1e-12)


def test_renewal_exponential_closed_form():
    """Closed form: with exponential gaps E[n] = e^{-lP} / (1 - e^{-lP}), P = dt + w."""
    n, r, dt, w, u0 = 1000, 6.5e-3, 0.5, 1 / 60, 5 / 60
    lam = n * r / 24
    p = dt + w
    expected = dt * math.exp(-lam * p) / (1 - math.exp(-lam * p)) / (1 / lam + u0)
    got = reliab.expected_ettr(n_nodes=n, node_failure_rate_per_day=r, checkpoint_interval_h=dt,
                               checkpoint_write_h=w, restart_h=u0, method="renewal")
    assert got == pytest.approx(expected, rel=1e-12)
    # the generic survival sum gives the same number
    model = FailureModel((FailureProcess("all", lam, 1.0),))
    saved = expected_saved_checkpoints(model.survival, dt, w, horizon_h=model.tail_h())
    assert dt * saved / (1 / lam + u0) == pytest.approx(expected, rel=1e-9)


def test_renewal_matches_direct_integration_for_weibull():
    """Closed form check of the survival sum: E[n] = E[floor(L/P)] by numerical quadrature
    of the Weibull density (independent of the series in _segments)."""
    from scipy import integrate, special

    shape, mean, p = 0.7, 3.0, 0.5
    scale = mean / special.gamma(1 + 1 / shape)
    proc = FailureProcess("w", 1 / mean, shape)
    pdf = lambda t: shape / scale * (t / scale) ** (shape - 1) * np.exp(-((t / scale) ** shape))  # noqa: E731
    direct = sum(k * integrate.quad(pdf, k * p, (k + 1) * p)[0] for k in range(1, 400))
    series = expected_saved_checkpoints(proc.survival, p, 0.0, horizon_h=proc.quantile(1 - 1e-16))
    assert series == pytest.approx(direct, rel=1e-6)


def test_no_failures_only_writes_cost():
    assert reliab.expected_ettr(n_nodes=10, node_failure_rate_per_day=0.0, checkpoint_interval_h=1,
                                checkpoint_write_h=0.25, restart_h=0.1) == pytest.approx(0.8)
    assert reliab.expected_ettr(n_nodes=10, node_failure_rate_per_day=0.0, checkpoint_interval_h=1,
                                checkpoint_write_h=0.25, restart_h=0.1, method="renewal") == pytest.approx(0.8)


@settings(max_examples=60, deadline=None)
@given(nodes=st.integers(1, 600), interval=st.floats(0.05, 2.0), restart=st.floats(0.0, 0.3))
def test_first_order_agrees_with_renewal_at_small_loss(nodes, interval, restart):
    """Property: the first-order form is the renewal expectation to first order in N r."""
    r = 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReliabWarning)
        first = reliab.expected_ettr(n_nodes=nodes, node_failure_rate_per_day=r,
                                     checkpoint_interval_h=interval, restart_h=restart)
    exact = reliab.expected_ettr(n_nodes=nodes, node_failure_rate_per_day=r,
                                 checkpoint_interval_h=interval, restart_h=restart, method="renewal")
    loss = nodes * r / 24 * (restart + interval / 2)
    assert abs(first - exact) <= 1.5 * loss**2 + 1e-12
    assert first <= exact + 1e-12  # the first-order form is pessimistic


@settings(max_examples=100, deadline=None)
@given(run=st.lists(st.floats(0, 50), min_size=1, max_size=20), interval=st.floats(0.01, 3),
       write=st.floats(0, 0.5), blocking=st.booleans(), censored=st.booleans())
def test_split_adds_up(run, interval, write, blocking, censored):
    """Property: productive + writing + lost = running time, all non-negative."""
    write = min(write, interval)
    prod, wr, lost = split(np.array(run), interval, write, blocking=blocking, censored=censored)
    assert np.allclose(prod + wr + lost, run)
    assert (prod >= 0).all() and (wr >= 0).all() and (lost >= -1e-9).all()
    if censored:
        assert (lost == 0).all()


def test_renewal_rejects_a_non_renewal_model():
    model = FailureModel((FailureProcess("a", 0.1, 0.7), FailureProcess("b", 0.1, 1.0)))
    with pytest.raises(ValueError, match="not a renewal"):
        renewal_ettr(model, 0.5, 0.0, 0.1)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_nodes": 0}, "n_nodes"),
    ({"node_failure_rate_per_day": -0.1}, "node_failure_rate_per_day"),
    ({"checkpoint_interval_h": 0}, "checkpoint_interval_h"),
    ({"checkpoint_interval_h": "-5min"}, "checkpoint_interval_h"),
    ({"restart_h": -1}, "restart_h"),
    ({"checkpoint_write_h": 2.0}, "checkpoint_write_h"),
    ({"checkpoint_write_h": "eleven"}, "checkpoint_write_h"),
    ({"method": "magic"}, "method"),
    ({"shape": 0.7}, "renewal"),
])
def test_nonsense_is_a_value_error_naming_the_parameter(kwargs, match):
    args = {"n_nodes": 100, "node_failure_rate_per_day": 1e-3, "checkpoint_interval_h": 1.0,
            "restart_h": 0.1} | kwargs
    with pytest.raises(ValueError, match=match):
        reliab.expected_ettr(**args)
