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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the Fine-Gray fit of a tiny cluster: 0/0
def test_allocation_lives_computed_once_for_the_six_analyses(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import reliab.study._analyses as analyses

    ing = _cluster()
    one = ing.jobs.index % 2 == 0  # two job-size classes, each with interruptions
    ing.jobs.loc[one, "nnodes"] = 1
    ing.jobs.loc[one, "ngpus"] = 8
    ing.jobs.loc[one, "nodelist"] = ing.interruptions.loc[one, "hosts"].to_numpy()
    fleet = _fleet(ing)
    real = analyses._job_lifetimes
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reliab, "predict_failures", lambda *a, **k: NotAvailable("risk", "skipped"))
    monkeypatch.setattr(analyses, "_job_lifetimes", counted)
    out = analyze(ing, fleet)
    assert len(calls) == 1
    # each analysis as on lives computed for it alone
    def fresh():
        return real(ing.jobs, analyses.in_window(ing.interruptions, fleet), ing.policy)

    expected = {
        "job_km": lambda: reliab.estimate_kaplan_meier(fresh()["hours"], fresh()["cause"].notna()),
        "job_logrank": lambda: analyses._logrank_by_size(fresh()),
        "job_rmst": lambda: analyses._rmst_by_size(fresh(), 0.95),
        "job_gray": lambda: analyses._gray_by_size(fresh()),
        "job_finegray": lambda: analyses._fine_gray_by_size(fresh()),
        "job_cif": lambda: reliab.estimate_cumulative_incidence(fresh()["hours"], fresh()["cause"], censored=None),
    }
    for key, fn in expected.items():
        value = analyses._guarded(key, fn)
        if isinstance(value, NotAvailable):  # the Fine-Gray fit of this tiny cluster: singular
            assert out[key].reason == value.reason, key
            continue
        assert json.dumps(out[key].to_dict(), default=str) == json.dumps(value.to_dict(), default=str), key
    assert sum(not isinstance(out[k], NotAvailable) for k in expected) >= 4
