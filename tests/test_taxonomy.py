"""Taxonomy rules: loading, user overrides, validation errors, classify and explain.

Regression tests of reliab's own rules (no external reference values); the categories are
those of Llama 3 Table 5 and the Xid meanings those of the NVIDIA Xid catalog.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliab.errors import ParseError, UnclassifiedSignalsWarning
from reliab.schema import COMPONENTS, conform
from reliab.taxonomy import Explanation, Rules, classify, explain, load_rules
from reliab.taxonomy._rules import RULE_COLUMNS
from reliab.taxonomy.vocabulary import COMPONENT_OF

HEADER = ",".join(RULE_COLUMNS) + "\n"


def _write(tmp_path: Path, body: str, name: str = "rules.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def test_shipped_rules_are_valid_and_ordered() -> None:
    rules = load_rules()
    t = rules.table
    assert isinstance(rules, Rules)
    assert list(t.columns) == [*RULE_COLUMNS, "origin"]
    assert t["id"].is_unique
    assert set(t["category"]) <= set(COMPONENT_OF)
    assert set(t["component"]) <= set(COMPONENTS)
    assert t["planned"].dtype == bool and t["root_cause"].dtype == bool
    assert t["priority"].dtype == "int64"
    assert load_rules() is rules  # cached
    assert rules.position("xid-79") < rules.position("xid-secondary")


def test_user_file_replaces_and_extends(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "xid-79,xid:79,,NVLink,GPU,false,95,true,M,site policy\n"
        "xid-9999,xid:9999,,Faulty GPU,GPU,false,50,true,L,a new code\n"
    ))
    shipped = load_rules()
    rules = load_rules(path)
    t = rules.table
    assert len(rules) == len(shipped) + 1
    assert list(t["id"][:2]) == ["xid-79", "xid-9999"]  # user rows first
    assert (t["id"] == "xid-79").sum() == 1
    assert t.loc[0, "origin"] == f"{path}:2"
    assert rules.sources == (str(path), "reliab/taxonomy/rules.csv")
    assert explain("xid:79", rules=rules).category == "NVLink"
    assert explain("xid:9999", rules=path).rule_id == "xid-9999"
    assert explain("xid:79").category == "Faulty GPU"  # shipped rules unchanged


def test_user_rule_wins_over_shipped_with_same_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "site-nccl,nccl:watchdog_timeout,,Software Bug,Dependency,"
                            "false,10,true,L,\n")
    e = explain("nccl:watchdog_timeout", rules=load_rules(path))
    assert e.rule_id == "site-nccl"
    assert e.matched == ("site-nccl", "nccl-timeout")


def test_bad_regex_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "ok-rule,xid:1,,Faulty GPU,GPU,false,50,true,L,\n"
        "bad-rule,xid:(79,,Faulty GPU,GPU,false,50,true,L,\n"
    ))
    with pytest.raises(ParseError) as info:
        load_rules(path)
    text = str(info.value)
    assert f"{path}:3" in text and "not a valid regex" in text
    assert info.value.origin is not None and info.value.origin.lineno == 3


def test_every_problem_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "a,xid:1,,Broken GPU,GPU,false,50,true,L,\n"
        "b,xid:2,,Faulty GPU,Host,maybe,high,true,X,\n"
        "a,xid:3,[,Faulty GPU,GPU,false,50,true,L,\n"
        "c,xid:4,,Faulty GPU\n"
    ))
    with pytest.raises(ParseError) as info:
        load_rules(path)
    text = str(info.value)
    for expected in (f"{path}:2: category 'Broken GPU'", f"{path}:3: component 'Host'",
                     "planned 'maybe'", "priority 'high'", "confidence 'X'",
                     f"{path}:4: duplicate id 'a'", f"{path}:4: message pattern",
                     f"{path}:5: expected 10 fields"):
        assert expected in text


def test_bad_header_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,signal,category\n", encoding="utf-8")
    with pytest.raises(ParseError, match="header must be"):
        load_rules(path)
    with pytest.raises(Exception, match="cannot read taxonomy rules"):
        load_rules(tmp_path / "missing.csv")
    with pytest.raises(TypeError):
        classify(pd.DataFrame({"signal": ["xid:79"]}), rules=42)  # type: ignore[arg-type]


def test_explain_xid79() -> None:
    e = explain("xid:79")
    assert isinstance(e, Explanation)
    assert (e.rule_id, e.category, e.component) == ("xid-79", "Faulty GPU", "GPU")
    assert e.root_cause and not e.planned and e.priority == 90
    assert e.matched == ("xid-79",)
    text = str(e)
    assert "xid-79" in text and "Faulty GPU" in text and "priority 90" in text
    d = e.to_dict()
    assert json.loads(json.dumps(d))["rule"]["id"] == "xid-79"


def test_explain_xid45_is_secondary() -> None:
    e = explain("xid:45")
    assert e.rule_id == "xid-secondary"
    assert not e.root_cause and e.category == "Unclassified"
    assert "never a root cause" in str(e)


def test_explain_nccl_timeout() -> None:
    e = explain("nccl:watchdog_timeout", "Watchdog caught collective operation timeout")
    assert (e.category, e.component, e.rule_id) == ("NCCL Watchdog Timeouts", "Unknown",
                                                     "nccl-timeout")
    assert e.root_cause and e.priority < explain("xid:79").priority


def test_explain_messages_and_unmatched() -> None:
    assert explain("ticket:incident", "unplanned host maintenance: BMC").category == \
        "Host Maintenance"
    planned = explain("ticket:maintenance", "planned maintenance: firmware upgrade")
    assert planned.category == "Planned" and planned.planned
    assert explain("slurm:cancelled", "CANCELLED by 0").rule_id == "slurm-cancelled-admin"
    assert explain("slurm:cancelled", "CANCELLED by 4242").rule_id == "slurm-state"
    none = explain("ticket:incident")
    assert none.rule_id is None and none.category == "Unclassified"
    assert "ticket-planned" in none.key_only and "matches no taxonomy rule" in str(none)
    assert explain("foo:bar").to_dict()["rule"] == {}


POOL = [
    ("xid:79", "GPU has fallen off the bus."), ("xid:48", "DBE"), ("xid:172", "SRAM"),
    ("xid:95", "Uncontained: SRAM error"), ("xid:95", "Uncontained ECC"), ("xid:45", None),
    ("nccl:watchdog_timeout", "WorkNCCL timeout"), ("slurm:cancelled", "CANCELLED by 0"),
    ("slurm:cancelled", "CANCELLED by 1234"), ("slurm:node_fail", "NODE_FAIL"),
    ("ticket:incident", "GPU replaced (RMA): faulty GPU"),
    ("ticket:incident", "silent data corruption confirmed by loss spike"),
    ("ticket:maintenance", "planned maintenance: firmware upgrade"),
    ("ticket:incident", "unplanned host maintenance: reseat"), ("ticket:incident", "??"),
    ("sel:temperature_upper_critical", "Temperature GPU3_Temp"),
    ("sel:power_supply_ac_lost", "Power Supply #0xfb"), ("mystery:key", "x"), ("xid:13", None),
]


def test_classify_vectorized_matches_explain() -> None:
    rng = np.random.default_rng(7)
    pick = rng.integers(0, len(POOL), 100_000)
    df = pd.DataFrame({"signal": [POOL[i][0] for i in pick],
                       "message": [POOL[i][1] for i in pick]}).astype("string")
    with pytest.warns(UnclassifiedSignalsWarning, match=r"mystery:key \(\d+\)") as record:
        out = classify(df)
    assert len(record) == 1
    assert list(out.columns[-6:]) == ["category", "component", "planned", "priority",
                                      "root_cause", "rule_id"]
    expected = {(k, m): explain(k, m) for k, m in POOL}
    for i, (k, m) in enumerate(POOL):
        rows = out[pick == i]
        e = expected[(k, m)]
        assert (rows["category"] == e.category).all(), (k, m)
        assert (rows["component"] == e.component).all()
        assert (rows["root_cause"] == e.root_cause).all()
        if e.rule_id is None:
            assert rows["rule_id"].isna().all() and rows["priority"].isna().all()
        else:
            assert (rows["rule_id"] == e.rule_id).all() and (rows["priority"] == e.priority).all()
    assert df.columns.tolist() == ["signal", "message"]  # input untouched


def test_classify_schema_frame_and_reclassify() -> None:
    sig = conform(pd.DataFrame({
        "time": ["2024-06-03T14:00:00Z"] * 2, "host": ["node0001", None], "gpu": [None, None],
        "job_id": [None, "7"], "source": ["kernel", "nccl"],
        "signal": ["xid:79", "nccl:failure_detected"], "severity": ["critical", "error"],
        "message": ["fallen off the bus", None], "origin": ["a:1", "b:2"],
    }), "signals")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        once = classify(sig)
        twice = classify(once)
    assert list(once["category"]) == ["Faulty GPU", "NCCL Watchdog Timeouts"]
    pd.testing.assert_frame_equal(once, twice)
    empty = classify(sig.iloc[:0])
    assert len(empty) == 0 and "rule_id" in empty


def test_classify_requires_signal_column() -> None:
    with pytest.raises(ValueError, match="signal"):
        classify(pd.DataFrame({"message": ["x"]}))


def test_polars_message_path_agrees_with_python(monkeypatch: pytest.MonkeyPatch) -> None:
    import reliab.taxonomy._classify as cl

    msgs = [f"{m} #{i}" for i, m in enumerate(
        ["GPU replaced (RMA): faulty GPU", "unplanned host maintenance", "planned maintenance",
         "storage outage", "nothing known", "NVSwitch tray"] * 50)]
    df = pd.DataFrame({"signal": "ticket:incident", "message": msgs}).astype("string")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnclassifiedSignalsWarning)
        python = classify(df)
        monkeypatch.setattr(cl, "_POLARS_MIN", 1)
        rust = classify(df)
    pd.testing.assert_frame_equal(python, rust)
    assert set(python["rule_id"].dropna()) == {"ticket-gpu", "ticket-unplanned", "ticket-planned",
                                               "ticket-dependency", "ticket-nvlink"}
