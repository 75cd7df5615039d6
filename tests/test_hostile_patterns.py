"""Patterns from a hand-over cannot hang a run (issue 21, item 5).

A 43-byte manifest glob ``**a**a…b`` compiled to a backtracking regex never finished on a
200-character path; a user rules file with the message pattern ``(a+)+$`` hung
classification.  Each case runs in a child process with a timeout, so a regression fails
the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import reliab
from reliab.errors import ParseError
from reliab.io._manifest import glob_regex
from reliab.taxonomy import load_rules

EVIL_GLOB = "**a" * 14 + "b"  # 43 bytes
HEADER = "id,signal,message,category,component,planned,priority,root_cause,confidence,note\n"
BOUND_S = 30


def _bounded(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(reliab.__file__).parents[1])}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=BOUND_S, env=env, check=False)


def test_the_probe_glob_is_43_bytes() -> None:
    assert len(EVIL_GLOB) == 43


def test_a_catastrophic_glob_on_a_long_path_ends_at_once() -> None:
    code = ("import sys, time\nfrom reliab.io._manifest import glob_regex\n"
            "m = glob_regex(sys.argv[1]); t = time.perf_counter()\n"
            "hit = m.fullmatch('a' * 200)\nprint(bool(hit), time.perf_counter() - t)\n")
    done = _bounded(code, EVIL_GLOB)
    assert done.returncode == 0, done.stderr
    hit, seconds = done.stdout.split()
    assert hit == "False" and float(seconds) < 0.5


def test_a_catastrophic_skip_glob_in_a_manifest_does_not_hang_ingest(tmp_path: Path) -> None:
    folder = tmp_path / ("a" * 100) / ("a" * 100)
    folder.mkdir(parents=True)
    (folder / "aaaa.log").write_text("x\n")
    (tmp_path / "reliab.toml").write_text(f'skip = ["{EVIL_GLOB}"]\n')
    code = ("import sys, reliab\nres = reliab.ingest(sys.argv[1])\n"
            "print(sorted(res.accounting['source']))\n")
    done = _bounded(code, str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "unrecognized" in done.stdout or "empty" in done.stdout


@pytest.mark.parametrize(("pattern", "yes", "no"), [
    ("[!a]x", ["bx", "d/bx"], ["ax"]),
    ("[a-c]?.log", ["b1.log", "x/c9.log"], ["d1.log", "b/.log"]),
    ("logs/**", ["logs/a", "logs/x/y"], ["logs", "a/logs/b"]),
    ("**", ["a", "a/b/c"], []),
    ("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["a/xb", "b"]),
    ("*", ["a", "x/y"], []),
    ("a*b*c", ["abc", "aXbYc", "d/aabbcc"], ["ab/c", "acb"]),
    ("x.[ch]", ["x.c", "x.h"], ["x.o", "x.ch"]),
    ("[]]x", ["]x"], ["ax"]),
])
def test_glob_rules_kept(pattern: str, yes: list[str], no: list[str]) -> None:
    m = glob_regex(pattern)
    assert all(m.fullmatch(p) for p in yes), [p for p in yes if not m.fullmatch(p)]
    assert not any(m.fullmatch(p) for p in no), [p for p in no if m.fullmatch(p)]


def test_a_bad_range_is_still_a_bad_glob() -> None:
    with pytest.raises(ValueError):
        glob_regex("[z-a].log")


def test_a_catastrophic_message_pattern_does_not_hang_classification(tmp_path: Path) -> None:
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + r"evil,xid:79,(a+)+$,Faulty GPU,GPU,false,50,true,L,hand-over rule" + "\n")
    code = ("import sys, time, pandas as pd\nfrom reliab.taxonomy import classify\n"
            "sig = pd.DataFrame({'signal': ['xid:79'] * 3, 'message': ['a' * 60 + 'b', 'a' * 5000 + '!',"
            " 'aaaa']})\nt = time.perf_counter()\nout = classify(sig, rules=sys.argv[1])\n"
            "print(list(out['rule_id'].fillna('-')), time.perf_counter() - t)\n")
    done = _bounded(code, str(rules))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("['xid-79', 'xid-79', 'evil']"), done.stdout


def test_a_catastrophic_signal_pattern_does_not_hang_classification(tmp_path: Path) -> None:
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + r"evil,(x+x+)+y,,Faulty GPU,GPU,false,50,true,L,hand-over rule" + "\n")
    code = ("import sys, pandas as pd\nfrom reliab.taxonomy import classify\n"
            "sig = pd.DataFrame({'signal': ['x' * 40, 'xxy']})\n"
            "print(list(classify(sig, rules=sys.argv[1])['rule_id'].fillna('-')))\n")
    done = _bounded(code, str(rules))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['-', 'evil']"


def test_a_backreference_in_a_user_rule_is_refused_with_file_and_line(tmp_path: Path) -> None:
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + r"echo,xid:79,(a)\1,Faulty GPU,GPU,false,50,true,L,backreference" + "\n")
    with pytest.raises(ParseError, match=r"message pattern.*RE2.*rules\.csv:2"):
        load_rules(rules)


def test_user_rules_keep_their_meaning(tmp_path: Path) -> None:
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + r"mine,xid:(79|48),\bFALLEN\b,Faulty GPU,GPU,false,50,true,L,case-insensitive" + "\n")
    loaded = load_rules(rules)
    pos = loaded.position("mine")
    assert loaded.matching("xid:48")[0] == pos and not loaded.matching("xid:480")
    assert loaded.message_matches(pos, "GPU has fallen off the bus")
    assert not loaded.message_matches(pos, "GPU has fallenoff the bus")


def test_the_regex_and_the_automaton_agree() -> None:
    """Globs of at most two wildcards are answered by Python's regex engine, the others by
    the automaton: both must give the .gitignore answer, so each is checked against the
    other on every pattern and path of the rule tables here and in test_manifest."""
    patterns = ["truth/", "/truth/", "*.png", "syslog/*", "**/node[0-9]*.sel", "dmesg/**/*.log", "notes-?.txt",
                "[!a]x", "[a-c]?.log", "logs/**", "**", "a/**/b", "*", "a*b*c", "x.[ch]", "[]]x", "*a*b", "a/b/"]
    paths = ["truth/a.csv", "truth/x/y.csv", "a/truth/b.csv", "truthy/a", "truth.csv", "a.png", "x/y/a.png",
             "a.png.log", "syslog/messages", "syslog/a/messages", "ipmi/node1.sel", "node7.sel", "ipmi/nodeA.sel",
             "dmesg/a.log", "dmesg/x/y/a.log", "a.log", "notes-1.txt", "notes-12.txt", "bx", "ax", "d/bx",
             "b1.log", "b/.log", "logs", "logs/a", "a/b", "a/x/b", "aXbYc", "acb", "x.c", "x.ch", "]x", "a/b/c",
             "z/a/b/c", "", "a\nb"]
    for pattern in patterns:
        m = glob_regex(pattern)
        for path in paths:
            assert m.automaton(path) == m.fullmatch(path), (pattern, path)


def test_a_name_that_is_not_utf8_is_matched() -> None:
    name = os.fsdecode(b"logs/caf\xe9.log")  # a lone surrogate, as the walk hands it over
    assert glob_regex("logs/*.log").fullmatch(name)
    assert glob_regex("**a" * 3 + ".log").automaton(name) is False
