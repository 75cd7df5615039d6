"""The Arrow route of a file's rows (reliab.io._rowtable) against the row-by-row schema boundary.

Regression tests: whenever :func:`arrow_rows` builds a table, :func:`reliab.schema.conform_rows`
must refuse no row of the same input and make the same frame; hostile values (instants
outside 1677-2262, naive and foreign-zone times, nanosecond Timestamps, integers beyond 64
bits, booleans, infinities, lone surrogates, unknown keys) must send the rows to that route.
"""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.io import _merge
from reliab.io._rowtable import FileTables, arrow_frame, arrow_rows, part_of

_TIMES = [datetime(2024, 6, 3, 14, 2, 11, tzinfo=UTC), datetime(2024, 6, 3, 14, 2, 11, 123456, tzinfo=UTC),
          datetime(2024, 3, 10, 7, 30, tzinfo=timezone(timedelta(hours=-5))), datetime(2024, 6, 3, 14, 2, 11),
          pd.Timestamp("2024-06-03 14:02:11.123456789", tz="UTC"), pd.Timestamp("2024-06-03 23:00", tz="Asia/Tokyo"),
          pd.Timestamp("2024-06-03", tz="UTC").as_unit("s"), datetime(2300, 1, 1, tzinfo=UTC),
          datetime(1600, 1, 1, tzinfo=UTC), pd.Timestamp(10**16, unit="ms", tz="UTC"), pd.NaT, None,
          "2024-06-03T14:02:11Z", 1717423331]
_TEXT = ["node0421", "", "xid:79", "caf\u00e9", "a\udcffb", None, 7, b"bytes", True, float("nan")]
_SEVERITY = ["critical", "warning", "error", "info", "fatal", None, ""]
_INTS = [0, 3, 16384, -1, 2**63 - 1, 2**63, 2**80, None, True, 1.0, 2.5, "4", float("inf")]

_SIGNAL_VALUES = {"time": _TIMES, "host": _TEXT, "gpu": _TEXT, "job_id": _TEXT, "source": _TEXT,
                  "signal": _TEXT, "severity": _SEVERITY, "message": _TEXT, "origin": _TEXT}
_JOB_VALUES = {"job_id": _TEXT, "name": _TEXT, "state": _TEXT, "submit": _TIMES, "start": _TIMES, "end": _TIMES,
               "nnodes": _INTS, "ngpus": _INTS, "restarts": _INTS, "origin": _TEXT}


@st.composite
def _rows(draw: st.DrawFn, values: dict[str, list], plain: dict[str, object]) -> list[dict]:
    """Rows that are mostly plain (drawn from index 0-1 of each list) with some hostile values."""
    n = draw(st.integers(1, 6))
    hostile = draw(st.booleans())
    out = []
    for _ in range(n):
        row = dict(plain)
        for name, choices in values.items():
            if draw(st.integers(0, 9)) == 0 and hostile:
                if draw(st.booleans()):
                    row[name] = draw(st.sampled_from(choices))
                else:
                    row.pop(name, None)
        if hostile and draw(st.integers(0, 20)) == 0:
            row["extra"] = "x"
        out.append(row)
    return out


_PLAIN_SIGNAL = {"time": _TIMES[0], "host": "n1", "gpu": None, "job_id": None, "source": "kernel",
                 "signal": "xid:79", "severity": "critical", "message": "GPU has fallen off the bus.", "origin": "f:1"}
_PLAIN_JOB = {"job_id": "12", "name": "train", "state": "FAILED", "submit": _TIMES[0], "start": _TIMES[1],
              "end": _TIMES[4], "nnodes": 2, "ngpus": 16, "restarts": 0, "origin": "sacct:2"}


def _same_as_row_route(rows: list[dict], table: str) -> None:
    fast = arrow_rows([dict(r) for r in rows], table)
    slow, refused = schema.conform_rows([dict(r) for r in rows], table)
    if fast is None:
        return
    assert refused == {}
    pd.testing.assert_frame_equal(arrow_frame(fast, table), slow, check_exact=True)


@settings(max_examples=300, deadline=None)
@given(_rows(_SIGNAL_VALUES, _PLAIN_SIGNAL))
def test_signal_rows_fast_equals_row_route(rows: list[dict]) -> None:
    _same_as_row_route(rows, "signals")


@settings(max_examples=300, deadline=None)
@given(_rows(_JOB_VALUES, _PLAIN_JOB))
def test_job_rows_fast_equals_row_route(rows: list[dict]) -> None:
    _same_as_row_route(rows, "jobs")


def test_plain_rows_take_the_fast_route() -> None:
    rows = [dict(_PLAIN_SIGNAL, time=t) for t in _TIMES[:6]] + [dict(_PLAIN_SIGNAL, gpu="0000:18:00", host=None)]
    table = arrow_rows(rows, "signals")
    assert table is not None and table.num_rows == len(rows)
    frame = arrow_frame(table, "signals")
    assert frame["time"].iloc[4] == pd.Timestamp("2024-06-03 14:02:11.123456789", tz="UTC")
    assert frame["time"].iloc[2] == pd.Timestamp("2024-03-10 12:30", tz="UTC")
    assert str(frame["host"].dtype) == "string" and frame["host"].isna().sum() == 1
    jobs = arrow_frame(arrow_rows([_PLAIN_JOB, dict(_PLAIN_JOB, ngpus=None)], "jobs"), "jobs")
    assert list(jobs["ngpus"]) == [16, pd.NA] and str(jobs["ngpus"].dtype) == "Int64"


def test_arrow_frame_skips_the_copy_only_of_a_conformed_frame() -> None:
    table = arrow_rows([dict(_PLAIN_SIGNAL), dict(_PLAIN_SIGNAL, host="n2")], "signals")
    frame = arrow_frame(table, "signals")
    pd.testing.assert_frame_equal(frame, schema.conform(table.to_pandas(), "signals"), check_exact=True)
    frame.loc[0, "time"] = pd.Timestamp("2020-01-01", tz="UTC")  # a frame of its own, writeable
    assert table.column("time")[0].as_py() == _TIMES[0]
    # an Arrow table of other types (int64 job counts, plain strings, another zone) is still conformed
    raw = pa.table({"job_id": ["12"], "name": ["train"], "state": ["FAILED"],
                    "submit": pa.array([_TIMES[0]], pa.timestamp("us", "Europe/Paris")),
                    "start": pa.array([_TIMES[1]], pa.timestamp("ns", "UTC")),
                    "end": pa.array([_TIMES[0]], pa.timestamp("ns", "UTC")), "nnodes": [2], "ngpus": [16],
                    "restarts": [0], "origin": ["sacct:2"]})
    jobs = arrow_frame(raw, "jobs")
    schema.validate(jobs, "jobs")
    assert jobs["submit"].iloc[0] == pd.Timestamp(_TIMES[0]) and str(jobs["submit"].dtype) == schema.UTC


@pytest.mark.parametrize("bad", [
    {"time": datetime(2300, 1, 1, tzinfo=UTC)}, {"time": None}, {"severity": "fatal"}, {"signal": ""},
    {"host": "a\udcffb"}, {"host": 7}, {"extra": 1}, {"time": pd.Timestamp(10**16, unit="ms", tz="UTC")},
])
def test_rows_the_boundary_refuses_take_the_row_route(bad: dict) -> None:
    rows = [dict(_PLAIN_SIGNAL), dict(_PLAIN_SIGNAL, **bad)]
    assert arrow_rows(rows, "signals") is None


def test_file_tables_convert_on_first_read_and_pickle() -> None:
    table = arrow_rows([dict(_PLAIN_SIGNAL)], "signals")
    tables = FileTables({"signals": table, "jobs": schema.empty("jobs")})
    assert "signals" in tables and "telemetry" not in tables and len(tables) == 2
    assert isinstance(part_of(tables, "signals"), pa.Table)
    again = pickle.loads(pickle.dumps(tables))
    assert isinstance(again["signals"], pd.DataFrame)
    assert isinstance(tables["signals"], pd.DataFrame) and tables.arrow("signals") is None
    assert {**tables}.keys() == {"signals", "jobs"}
    pd.testing.assert_frame_equal(tables["signals"], again["signals"])


def test_driver_joins_arrow_and_pandas_parts() -> None:
    one = arrow_rows([dict(_PLAIN_SIGNAL)], "signals")
    two = schema.conform_rows([dict(_PLAIN_SIGNAL, host="n2", origin="g:3")], "signals")[0]
    joined = _merge.concat([one, two, schema.empty("signals")], "signals")
    assert list(joined["host"]) == ["n1", "n2"]
    pd.testing.assert_frame_equal(joined, schema.conform(pd.concat([arrow_frame(one, "signals"), two],
                                                                   ignore_index=True), "signals"))
    surrogate = schema.conform_rows([dict(_PLAIN_SIGNAL, origin="a\udcffb:1")], "signals")[0]
    mixed = _merge.concat([one, surrogate], "signals")  # Arrow cannot hold it: joined through pandas
    assert list(mixed["origin"]) == ["f:1", "a\udcffb:1"]


def test_table_parts_keep_file_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files' tables gathered while reading (runs of Arrow tables joined) == concatenating all results."""
    from reliab.io._registry import FileResult

    monkeypatch.setattr(_merge.TableParts, "JOIN", 2)
    results = []
    for k in range(9):
        row = dict(_PLAIN_SIGNAL, host=f"n{k}", origin=f"f{k}:1")
        table = (schema.conform_rows([row], "signals")[0] if k % 4 == 3 else arrow_rows([row], "signals"))
        results.append(FileResult(path=f"f{k}", source="kernel", lines=1, parsed=1, irrelevant=0, malformed=0,
                                  tables=FileTables({"signals": table}), quarantine=schema.empty("quarantine")))
    parts = _merge.TableParts()
    light = [parts.take(r) for r in results]
    assert all(r.tables == {} and r.quarantine is None for r in light)
    got = parts.tables()
    assert list(got["signals"]["host"]) == [f"n{k}" for k in range(9)]
    pd.testing.assert_frame_equal(got["signals"], _merge.file_tables(results)["signals"])
    assert len(got["quarantine"]) == 0 and len(got["jobs"]) == 0
    # the parts are let go once joined: the finishing step does not hold them beside the tables
    assert all(len(table) == 0 for table in parts.tables().values())


def test_a_file_without_rows_shares_one_empty_arrow_table(tmp_path: Path) -> None:
    """No rows: the file's table is one shared (immutable) empty Arrow table, read as schema.empty."""
    from reliab.io._lines import scan_lines
    from reliab.io._rowtable import empty_rows

    results = []
    for k in range(2):
        path = tmp_path / f"noise{k}.log"
        path.write_text("2024-06-03T14:00:00+00:00 node1 systemd[1]: Started Session 1 of user root.\n")
        results.append(scan_lines(str(path), "kernel", lambda text, ctx: None))
    assert results[0].tables.arrow("signals") is results[1].tables.arrow("signals") is empty_rows("signals")
    assert results[0].parsed == 0 and results[0].irrelevant == 1
    pd.testing.assert_frame_equal(results[0].tables["signals"], schema.empty("signals"))
    assert empty_rows("telemetry") is None  # a table arrow_rows does not build keeps a pandas frame
