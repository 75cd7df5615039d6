"""The failure-risk section runs on a thread beside the other analyses: its place in the
results, its warnings silenced as the others' are, its value the one a direct call gives."""

from __future__ import annotations

import threading
import warnings

import pandas as pd
import pytest
from test_analyze_node_hours import T0, _cluster

import reliab
import reliab.models.jobs.states as states
from reliab._result import NotAvailable
from reliab.errors import ReliabWarning
from reliab.study import analyze, fleet_facts


def _fleet(ing):
    return fleet_facts(jobs=ing.jobs, signals=ing.signals, gpus=104,
                       window=(T0, T0 + pd.Timedelta(days=25)))


def test_failure_risk_runs_beside_the_later_analyses(monkeypatch: pytest.MonkeyPatch) -> None:
    ing = _cluster()
    later = threading.Event()  # set when an analysis placed after failure_risk has started
    seen: list[str] = []
    real_states = states.estimate_end_states

    def end_states(*args, **kwargs):
        later.set()
        return real_states(*args, **kwargs)

    def risk(data, **kwargs):
        seen.append(threading.current_thread().name)
        warnings.warn("precursor table thin", ReliabWarning, stacklevel=1)
        seen.append("overlapped" if later.wait(timeout=20) else "waited alone")
        return NotAvailable("which node fails next", "sentinel")

    monkeypatch.setattr(states, "estimate_end_states", end_states)
    monkeypatch.setattr(reliab, "predict_failures", risk)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = analyze(ing, _fleet(ing))
    assert seen[0].startswith("reliab-risk") and seen[1] == "overlapped"
    assert out["failure_risk"].reason == "sentinel"
    keys = list(out)
    assert keys.index("lemons") + 1 == keys.index("failure_risk") == keys.index("job_end_states") - 1
    assert not [w for w in caught if issubclass(w.category, ReliabWarning)]
    # the process-wide filters are as they were once the thread is done
    with warnings.catch_warnings(record=True) as after:
        warnings.simplefilter("always")
        warnings.warn("shown", ReliabWarning, stacklevel=1)
    assert len(after) == 1


def test_failure_risk_not_run_without_node_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    ing = _cluster()
    ing.jobs = ing.jobs.assign(nodelist=pd.NA)
    monkeypatch.setattr(reliab, "predict_failures", lambda *a, **k: pytest.fail("ran without nodes"))
    out = analyze(ing, _fleet(ing))
    assert isinstance(out["failure_risk"], NotAvailable)
    assert out["failure_risk"].reason == "the job records name no nodes (NodeList)"
    assert out["failure_risk"].what == "which node fails next"


def test_an_error_of_the_thread_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    ing = _cluster()

    def broken(*args, **kwargs):
        raise ValueError("no usable precursor")

    monkeypatch.setattr(reliab, "predict_failures", broken)
    out = analyze(ing, _fleet(ing))
    assert out["failure_risk"].reason == "the data do not fit this analysis: no usable precursor"

    def crash(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(reliab, "predict_failures", crash)
    with pytest.raises(RuntimeError, match="bug"):
        analyze(ing, _fleet(ing))
