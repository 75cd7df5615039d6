"""Telemetry CSV data lines: the counted (not split) route of ``delimited._frame`` against splitting every line.

Regression test: ``_frame`` splits a line only when it may be a repeated header or holds a
quote, CR or NUL; every other line is classified by counting its separators.  The result
(frame, line numbers, refused lines and reasons) must equal splitting every line, as the
reader did before.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reliab.io.formats.telemetry import delimited

HEADER = ["time", "host", "gpu", "temp_c", "power_w"]
_CELLS = ["2024-06-03T00:00:00Z", "node1", "0", "63.5", "", " 7", "time", "TIME", " Time ", "host", "a\"b", "x\ty",
          "\u00a0time", "\u0130me", "t", "ti", "\x00"]


def _reference(header: list[str], numbers: list[int], data: list[str], sep: str) -> tuple[list, list, dict]:
    """Every line split (the reader's former loop), then the same frame construction."""
    width = len(header)
    head_text = [h.lower() for h in header]
    bad: dict[int, str] = {}
    keep = []
    for n, line in zip(numbers, data, strict=True):
        cells = delimited._cells(line, sep)
        if [c.strip().lower() for c in cells] == head_text:
            continue
        if len(cells) != width:
            bad[n] = f"expected {width} '{sep}'-separated fields, got {len(cells)}"
        else:
            keep.append(n)
    return keep, bad


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_CELLS), min_size=3, max_size=7), min_size=1, max_size=25),
       st.sampled_from([",", "\t", ";"]), st.sampled_from([HEADER, ["Time", "host"], ["", "x", "y"]]))
def test_counted_lines_equal_split_lines(rows: list[list[str]], sep: str, header: list[str]) -> None:
    rows = [r if len(r) != len(header) or r[0] != "time" else header for r in rows]  # some exact repeats
    data = [sep.join(r) for r in rows]
    numbers = list(range(2, len(data) + 2))
    bad: dict[int, str] = {}
    frame, line_no = delimited._frame(header, numbers, data, sep, bad)
    keep, want_bad = _reference(header, numbers, data, sep)
    assert bad == want_bad
    assert list(line_no) == keep
    assert len(frame) == len(keep)


def test_repeated_headers_and_short_lines_in_a_file(tmp_path: object) -> None:
    text = ("time,host,gpu,temp_c\n2024-06-03T00:00:00Z,n1,0,60\n  TIME , Host,gpu,temp_c\n"
            "2024-06-03T00:01:00Z,n1,0\n2024-06-03T00:02:00Z,n1,0,61\n")
    path = tmp_path / "t.csv"  # type: ignore[operator]
    path.write_text(text)
    res = delimited.read_telemetry_csv(str(path))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (5, 2, 2, 1)
    assert list(res.quarantine["lineno"]) == [4]
    assert res.quarantine["reason"].iloc[0] == "expected 4 ','-separated fields, got 3"
    assert list(res.tables["telemetry"]["temp_c"]) == [60.0, 61.0]
