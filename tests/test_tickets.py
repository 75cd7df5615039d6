"""Incident-ticket CSV reader (reliab.io.formats.tickets)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab.io.formats.tickets  # noqa: F401  (registers tickets)
from reliab import schema
from reliab.errors import ParseError
from reliab.io._registry import FileResult, get_parser

HEADER = "ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,resolution"
TEXT = "\n".join([
    HEADER,
    'INC-1,2024-06-03T15:00:00+00:00,node0421,1001,2024-06-03T14:02:00+00:00,incident,GPU replaced (RMA),"faulty GPU:',
    "fell off the bus",
    'during step 1200",RMA',
    "INC-2,2024-06-04T10:00:00Z,node0002,,,maintenance,planned maintenance: firmware upgrade,,done",
    "",
    'INC-3,2024-06-05 08:00:00,node0003,1003,2024-06-05 07:55,,"Host down, ""again""",'
    "unplanned host maintenance: PSU swap,",
]) + "\n"


def _write(tmp_path: Path, text: str, name: str = "incidents.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _check(result: FileResult) -> None:
    assert result.lines == result.parsed + result.irrelevant + result.malformed
    schema.validate(result.tables["signals"], "signals")
    schema.validate(result.quarantine, "quarantine")
    assert len(result.quarantine) == result.malformed


def test_tickets(tmp_path: Path) -> None:
    r = get_parser("tickets").read(_write(tmp_path, TEXT))
    _check(r)
    # header + 3-line record (1 parsed, 2 irrelevant) + record + blank + record
    assert (r.lines, r.parsed, r.irrelevant, r.malformed) == (7, 3, 4, 0)
    s = r.tables["signals"]
    assert s["signal"].tolist() == ["ticket:incident", "ticket:maintenance", "ticket:incident"]
    assert s["time"].tolist() == [pd.Timestamp("2024-06-03T14:02:00Z"), pd.Timestamp("2024-06-04T10:00:00Z"),
                                  pd.Timestamp("2024-06-05T07:55:00Z")]
    assert s["message"].iloc[0] == "GPU replaced (RMA) | faulty GPU:\nfell off the bus\nduring step 1200"
    assert s["message"].iloc[1] == "planned maintenance: firmware upgrade"
    assert s["message"].iloc[2] == 'Host down, "again" | unplanned host maintenance: PSU swap'
    assert s["job_id"].iloc[0] == "1001" and pd.isna(s["job_id"].iloc[1])
    assert s["origin"].tolist()[1].endswith("incidents.csv:5")


def test_columns_case_insensitive_any_order(tmp_path: Path) -> None:
    text = "Title,Type,Opened_At,Host\nPSU failed,Incident,2024-06-03 14:00,node1\n"
    r = get_parser("tickets").read(_write(tmp_path, text), tz="Europe/Berlin")
    _check(r)
    assert r.tables["signals"]["time"].iloc[0] == pd.Timestamp("2024-06-03T12:00:00Z")
    assert r.tables["signals"]["signal"].iloc[0] == "ticket:incident"


def test_bad_time_is_quarantined(tmp_path: Path) -> None:
    text = f"{HEADER}\nINC-9,last tuesday,node1,,,incident,x,y,z\nINC-10,,node1,,,incident,x,y,z\n"
    path = _write(tmp_path, text)
    r = get_parser("tickets").read(path)
    _check(r)
    assert r.malformed == 2 and r.quarantine["lineno"].tolist() == [2, 3]
    assert "not a date/time" in r.quarantine["reason"].iloc[0]
    with pytest.raises(ParseError, match="incidents.csv:2"):
        get_parser("tickets").read(path, strict=True)


def test_header_without_time_column(tmp_path: Path) -> None:
    r = get_parser("tickets").read(_write(tmp_path, "a,b\n1,2\n"))
    _check(r)
    assert r.malformed == 2 and "header" in r.quarantine["reason"].iloc[0]


def test_sniff() -> None:
    assert get_parser("tickets").sniff("tickets/incidents.csv", [HEADER]) > 0.9
    assert get_parser("tickets").sniff("x.csv", ["time,host,gpu,temp_c"]) == 0


_fragments = st.sampled_from([*TEXT.splitlines(), "", '"', '"a,\nb"', "x,y,z"])
_line = st.one_of(_fragments, st.text(max_size=60))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=10), st.booleans())
def test_fuzz_no_exception_escapes(lines: list[str], with_header: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        path.write_bytes("\n".join([HEADER] * with_header + lines).encode("utf-8", "surrogatepass"))
        _check(get_parser("tickets").read(str(path)))
