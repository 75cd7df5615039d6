"""The training-log sniffer's glog hint, two searches, finds a match exactly when the one
alternation it replaces does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats import _nccl_sniff

_ALTERNATION = re.compile(r"[IWEF][0-9]{3,4} [0-9]{2}:[0-9]{2}:[0-9]{2}|\[[IWEF] ")
_PIECES = ["I", "W", "E", "F", "X", "[", "]", " ", ":", "0", "06", "0603", "12", "14:02:11", "I0603 ", "[I ",
           "[E", "E0601 00:09:29.476", "\n", "rank1]:", "é", "Ｉ", "١٢"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join) | st.text(max_size=30)


@settings(max_examples=1000, deadline=None)
@given(_TEXT)
def test_glog_hint_equals_alternation(text: str) -> None:
    assert _nccl_sniff.Hints.of(text).glog == ("\x1b" in text or _ALTERNATION.search(text) is not None)


def test_edges() -> None:
    for text, hit in (("I0603 14:02:11.1 x", True), ("[W python] x", True), ("E123 12:00:00", True),
                      ("W12345 12:00:00", False), ("I0603 14:02", False), ("[X ", False), ("", False)):
        assert _nccl_sniff.Hints.of(text).glog is hit, text
