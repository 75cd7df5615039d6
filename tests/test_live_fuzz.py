"""Hypothesis fuzz of the live sources' own parsing: Prometheus answers, sacctmgr events, journal entries.

Whatever a server or client prints, each must account for every sample, line or entry
(parsed + irrelevant + malformed) and never raise.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io.sources._series import Samples, add_answer, telemetry_table, xid_signals
from reliab.io.sources.journald import entry_line
from reliab.io.sources.slurm import node_events

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                     max_leaves=12)
_label = st.sampled_from(["__name__", "Hostname", "hostname", "gpu", "UUID", "instance", "job", "x"])
_value = st.one_of(st.sampled_from(["1", "NaN", "+Inf", "-Inf", "1e3", "x", ""]), st.floats(), st.integers(), st.none())
_time = st.one_of(st.integers(-10**14, 10**14), st.floats(), st.text(max_size=4), st.none())
_series = st.one_of(
    st.fixed_dictionaries({"metric": st.dictionaries(_label, st.sampled_from(
        ["DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP", "n1", "0", "h:9400", ""]), max_size=5),
        "values": st.lists(st.one_of(st.tuples(_time, _value).map(list), _json), max_size=6)}),
    _json)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_series, max_size=5))
def test_prometheus_answers_are_accounted(result):
    samples = Samples()
    count = add_answer(samples, result, 0, {}, None)
    assert count.lines == count.parsed + count.irrelevant + len(count.bad)
    table = telemetry_table(samples)
    assert len(table) <= count.parsed
    xid_signals(samples, ["prometheus://x"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), max_size=8))
def test_sacctmgr_event_lines_are_accounted(lines):
    text = "\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines)
    r = node_events(text, "slurm://?start=a")
    assert r.lines == r.parsed + r.irrelevant + r.malformed == len(text.splitlines())


@settings(max_examples=100, deadline=None)
@given(_json)
def test_journal_entries_never_raise(entry):
    line = entry_line(entry)
    assert line is None or ("\n" not in line and "kernel" in line or ": " in line)
    entry_line(json.loads(json.dumps({"MESSAGE": "x", "__REALTIME_TIMESTAMP": "1717372800000000"})))
