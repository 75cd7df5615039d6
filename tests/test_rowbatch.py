"""Rows left unconverted inside ``batching`` (reliab.io._rowtable.plain_rows) are exactly the
rows whose own conversion succeeds, and converting many files' rows at once gives the tables
of converting each file: same routes (so the same accounting), same values, same order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.io import _merge
from reliab.io._lines import scan_lines
from reliab.io._registry import FileResult
from reliab.io._rowtable import (
    FileTables,
    PendingRows,
    _certain,
    arrow_rows,
    batching,
    join_pending,
    part_of,
    plain_rows,
)

_TIMES = [datetime(2024, 6, 3, 14, 2, 11, tzinfo=UTC), datetime(2024, 6, 3, 14, 2, 11, 999999, tzinfo=UTC),
          datetime(1678, 1, 1, tzinfo=UTC), datetime(2262, 1, 1, tzinfo=UTC), datetime(1677, 12, 31, 23, 59, tzinfo=UTC),
          datetime(1677, 9, 21, 0, 12, 43, 145224, tzinfo=UTC), datetime(1677, 9, 21, 0, 12, 43, 145225, tzinfo=UTC),
          datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=UTC), datetime(2262, 4, 11, 23, 47, 17, tzinfo=UTC),
          datetime(2262, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(2024, 6, 3, 14, 2, 11),
          datetime(2024, 6, 3, 16, 2, 11, tzinfo=timezone(timedelta(hours=2))),
          pd.Timestamp("2024-06-03 14:02:11.123456789", tz="UTC"), pd.Timestamp("2024-06-03 23:00", tz="Asia/Tokyo"),
          pd.Timestamp("2024-06-03", tz="UTC").as_unit("s"), pd.Timestamp("3000-01-01", tz="UTC").as_unit("s"),
          pd.Timestamp.max.tz_localize("UTC"), pd.Timestamp.min.tz_localize("UTC"), None]
_TEXT = ["n1", "node0421", "caf\u00e9", "a\udcffb", "", None, "\u4e2d"]
_INTS = [0, 5, 2**63 - 1, 2**63, -(2**63), -1, None, True, 2.0]
_SEVERITY = ["critical", "info", "fatal"]

_SIGNAL = {"time": _TIMES, "host": _TEXT, "gpu": _TEXT, "job_id": _TEXT, "source": ["kernel", "caf\u00e9"],
           "signal": ["xid:79", ""], "severity": _SEVERITY, "message": _TEXT, "origin": ["f:1", "a\udcffb:1"]}
_JOB = {"job_id": ["12", "caf\u00e9"], "name": _TEXT, "state": ["FAILED"], "submit": _TIMES, "start": _TIMES,
        "end": _TIMES, "nnodes": _INTS, "ngpus": _INTS, "restarts": _INTS, "origin": ["sacct:2"]}


@st.composite
def _files(draw: st.DrawFn, values: dict[str, list]) -> list[list[dict]]:
    """Files of 1-4 rows, each value mostly the first of its list, now and then any."""
    files = []
    for _ in range(draw(st.integers(1, 6))):
        rows = []
        for _ in range(draw(st.integers(1, 4))):
            row = {}
            for name, choices in values.items():
                pick = draw(st.integers(0, 7))
                if pick == 0:
                    continue  # a missing key
                row[name] = draw(st.sampled_from(choices)) if pick == 1 else choices[0]
            rows.append(row)
        files.append(rows)
    return files


def _check(files: list[list[dict]], table: str) -> None:
    pending, converted = [], []
    for rows in files:
        alone = arrow_rows([dict(r) for r in rows], table)
        got = plain_rows([dict(r) for r in rows], table)
        assert (got is None) == (alone is None)  # the same route: the same accounting
        if isinstance(got, PendingRows):
            assert join_pending([got]).equals(alone)
            pending.append(got)
            converted.append(alone)
        elif got is not None:
            assert got.equals(alone)
    if pending:
        assert join_pending(pending).equals(pa.concat_tables(converted).combine_chunks())


@settings(max_examples=400, deadline=None)
@given(_files(_SIGNAL))
def test_signal_rows_batched_equal_each_file(files: list[list[dict]]) -> None:
    _check(files, "signals")


@settings(max_examples=400, deadline=None)
@given(_files(_JOB))
def test_job_rows_batched_equal_each_file(files: list[list[dict]]) -> None:
    _check(files, "jobs")


def test_certain_values() -> None:
    assert _certain({datetime(2024, 1, 1, tzinfo=UTC), pd.Timestamp("2024-01-01", tz="UTC")}, schema.UTC)
    for value in (datetime(2024, 1, 1), datetime(2300, 1, 1, tzinfo=UTC), datetime(1677, 10, 1, tzinfo=UTC),
                  pd.Timestamp("2024-01-01", tz="Asia/Tokyo")):
        assert not _certain({value}, schema.UTC)
    assert _certain({"abc", ""}, "string") and not _certain({"caf\u00e9"}, "string")
    assert _certain({0, 2**63 - 1, -(2**63)}, "Int64") and not _certain({2**63}, "int64")
    assert _certain({1.5, float("nan")}, "float64") and not _certain({1.5, 3}, "float64")
    assert _certain({True}, "bool") and _certain(set(), "Int64")


_ROW = {"time": _TIMES[0], "host": "n1", "gpu": None, "job_id": None, "source": "kernel", "signal": "xid:79",
        "severity": "critical", "message": "m", "origin": "f:1"}


@pytest.mark.parametrize(("join", "rows"), [(2, 16_384), (512, 3), (512, 16_384)])
def test_table_parts_keep_file_order(monkeypatch: pytest.MonkeyPatch, join: int, rows: int) -> None:
    """Pending rows, Arrow tables and pandas frames of 11 files come out in file order."""
    monkeypatch.setattr(_merge.TableParts, "JOIN", join)
    monkeypatch.setattr(_merge.TableParts, "ROWS", rows)
    results = []
    for k in range(11):
        file_rows = [dict(_ROW, host=f"n{k}", origin=f"f{k}:{i}") for i in range(1 + k % 3)]
        table = (schema.conform_rows(file_rows, "signals")[0] if k % 5 == 4
                 else arrow_rows(file_rows, "signals") if k % 5 == 2 else plain_rows(file_rows, "signals"))
        results.append(FileResult(path=f"f{k}", source="kernel", lines=len(file_rows), parsed=len(file_rows),
                                  irrelevant=0, malformed=0, tables=FileTables({"signals": table})))
    assert sum(isinstance(r.tables.pending("signals"), PendingRows) for r in results) == 7
    parts = _merge.TableParts()
    for r in results:
        parts.take(r)
    got = parts.tables()["signals"]
    assert list(got["origin"]) == [f"f{k}:{i}" for k in range(11) for i in range(1 + k % 3)]
    pd.testing.assert_frame_equal(got, _merge.file_tables(results)["signals"], check_exact=True)


def test_pending_rows_read_like_a_table() -> None:
    tables = FileTables({"signals": plain_rows([dict(_ROW)], "signals")})
    assert isinstance(tables.pending("signals"), PendingRows)
    assert isinstance(part_of(tables, "signals"), pa.Table)  # converted when asked for as Arrow
    pd.testing.assert_frame_equal(tables["signals"], schema.conform_rows([dict(_ROW)], "signals")[0])


def test_scan_inside_batching_gives_the_same_result(tmp_path: Path) -> None:
    path = tmp_path / "k.log"
    path.write_text("a 1\nb 2\nc 3\n")

    def parse(text: str, ctx) -> dict:
        return dict(_ROW, host=text.split()[0], message=text)

    plain = scan_lines(str(path), "kernel", parse)
    with batching():
        batched = scan_lines(str(path), "kernel", parse)
    assert isinstance(batched.tables.pending("signals"), PendingRows)
    assert not isinstance(plain.tables.pending("signals"), PendingRows)
    assert (batched.lines, batched.parsed, batched.irrelevant, batched.malformed) == (3, 3, 0, 0)
    pd.testing.assert_frame_equal(batched.tables["signals"], plain.tables["signals"], check_exact=True)
