"""The telemetry fast path's whole-text checks (a blank line, a line that may repeat the
header) done with byte arrays decide exactly what the substring searches they replace decide."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.telemetry import _fastcsv


def _blank_by_search(text: str) -> bool:
    """The ASCII branch of ``_blank_line`` as it was: one substring search per pattern."""
    return (not text or text.startswith("\n") or "\n\n" in text or " \n" in text or "\t\n" in text
            or text.endswith((" ", "\t", "\n")))


def _starts_by_search(raw: bytes, head_start: str) -> bool:
    """The header-start test of ``uniform`` as it was."""
    starts = b"\n" + raw[:1]
    return any(b"\n" + c.encode() in raw or starts == b"\n" + c.encode()
               for c in (" ", "\t", head_start.lower(), head_start.upper()))


_ASCII = st.text(alphabet=st.sampled_from(list("ab,T1 \t\n")), max_size=60)
_HEAD = st.sampled_from(["t", "T", "a", "1", "\u0131", "\u0130", "\u00e9", "\u017f", "k"])


@settings(max_examples=500, deadline=None)
@given(_ASCII)
def test_blank_line_equals_searches(text: str) -> None:
    assert _fastcsv._blank_line(text) == _blank_by_search(text)


@settings(max_examples=500, deadline=None)
@given(_ASCII, _HEAD)
def test_line_starts_equal_searches(text: str, head: str) -> None:
    raw = text.encode("ascii")
    codes = [b[0] for b in (c.encode() for c in (" ", "\t", head.lower(), head.upper())) if len(b) == 1]
    found = bool(set(_fastcsv._line_starts(raw).tolist()) & set(codes))
    assert found == _starts_by_search(raw, head)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab,T1 \t")), max_size=12), min_size=1, max_size=8), _HEAD)
def test_uniform_refuses_what_the_searches_refuse(lines: list[str], head: str) -> None:
    joined = "\n".join(lines)
    raw = joined.encode("ascii")
    width = joined.count(",") // len(lines) + 1
    got = _fastcsv.uniform(joined, lines, ",", width, head)
    if head.isalnum() and raw.count(b",") == (width - 1) * len(lines) and not _starts_by_search(raw, head):
        assert got == raw
    else:
        assert got is None


def test_edges() -> None:
    for text in ("", "\n", "a", "a\n", "a\n\nb", "a \nb", "a\t\nb", "a\n b", " ", "a\nb", "a\nb\t"):
        assert _fastcsv._blank_line(text) == _blank_by_search(text), repr(text)
    assert list(_fastcsv._line_starts(b"")) == []
    assert bytes(_fastcsv._line_starts(b"ab\ncd\n\nef\n")) == b"ac\ne"
