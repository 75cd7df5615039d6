"""Bulk rows finished at the end of the file (``LATE_ROWS``) and ``EVERY_LINE``.

A toy reader: lines ``A <n>`` are taken by a bulk hook that holds their rows back, lines
``B <n>`` by the per-line parser, ``X`` lines by neither (irrelevant), ``A bad`` lines are
held rejected.  Every row's message needs the number of ``A`` and ``B`` lines of the whole
file, which only ``finish`` knows; the hook counts its lines in ``ctx.state`` across groups,
and ``finish`` takes the held rows among the per-line ones and says so in ``LATE_ROWS``.
Expectations are written by hand from the file's text.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from reliab.io import _fastscan
from reliab.io._lines import EVERY_LINE, LATE_ROWS, LineContext, Row, scan_lines

_TIME = "2024-01-01T00:00:00Z"


def _row(n: str) -> Row:
    import pandas as pd

    return {"time": pd.Timestamp(_TIME), "host": None, "gpu": None, "job_id": None, "source": "toy",
            "signal": "toy:n", "severity": "info", "message": n}


def _per_line(text: str, ctx: LineContext) -> Row | None:
    if text.startswith("B "):
        ctx.state["seen"] = ctx.state.get("seen", 0) + 1
        return _row(text)
    return None


def _bulk(hits: pl.DataFrame, ctx: LineContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    held = ctx.state.setdefault("held", [])
    for i, line in hits.iter_rows():
        if line == "A bad":
            held.append({"_lineno": i + 1, "_reject": "bad A", "_text": line})
        elif line.startswith("A "):
            ctx.state["seen"] = ctx.state.get("seen", 0) + 1
            held.append({**_row(line), "_lineno": i + 1, "origin": f"{ctx.path}:{i + 1}"})
    rest = hits.filter(~pl.col("line").str.starts_with("A "))
    return hits.head(0), rest


def _finish(rows: list[Row], ctx: LineContext) -> list[Row]:
    held = [dict(row) for row in ctx.state.get("held", ())]
    ctx.state[LATE_ROWS] = (None, held)
    rows = sorted(rows + [r for r in held if "_reject" not in r], key=lambda r: r["_lineno"])
    for row in rows:
        row["message"] = f"{row['message']} of {ctx.state['seen']}"
    return rows + [r for r in held if "_reject" in r]


def _read(path: Path, bulk: bool) -> object:
    return scan_lines(str(path), "toy", _per_line, literals=EVERY_LINE, finish=_finish,
                      bulk=_bulk if bulk else None)


_LINES = ["X", "A 1", "B 2", "A bad", "X", "A 3", "B 4", "A 5", "X"]


@pytest.mark.parametrize("group", [2, 3, 100])
def test_held_rows_are_finished_in_line_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group: int) -> None:
    path = tmp_path / "toy.log"
    path.write_text("\n".join(_LINES) + "\n")
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", group)
    res = _read(path, bulk=True)
    table = res.tables["signals"]  # type: ignore[attr-defined]
    assert list(table["message"]) == ["A 1 of 5", "B 2 of 5", "A 3 of 5", "B 4 of 5", "A 5 of 5"]
    assert list(table["origin"]) == [f"{path}:{n}" for n in (2, 3, 6, 7, 8)]
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (9, 5, 3, 1)  # type: ignore[attr-defined]
    q = res.quarantine  # type: ignore[attr-defined]
    assert list(q["lineno"]) == [4] and "bad A" in q["reason"].iloc[0]


def test_every_line_small_file_reads_all_lines(tmp_path: Path) -> None:
    """Below the polars route's size every line goes to the per-line parser (no bulk)."""
    path = tmp_path / "toy.log"
    path.write_text("\n".join(_LINES) + "\n")
    res = _read(path, bulk=True)
    assert list(res.tables["signals"]["message"]) == ["B 2 of 2", "B 4 of 2"]  # type: ignore[attr-defined]
    assert (res.lines, res.parsed, res.irrelevant) == (9, 2, 7)  # type: ignore[attr-defined]
