"""Random hostile lines mixed into valid files: every valid event is still found.

For each format a valid file is generated, hostile lines (random text, invalid UTF-8, NUL
bytes, lone carriage returns, unclosed quotes, years 0001/1600/9999, integers of 5,000
digits or beyond 64 bits, superscript digits, ``Infinity``) are inserted at random places,
and the mixed file must yield every event of the valid one, account for every line
(``lines == parsed + irrelevant + malformed``, ``lines`` = the file's universal-newline
lines) and quarantine exactly the malformed ones.  The valid lines are real-shaped (the
forms of the bundled sample: rsyslog RFC 3339 and ``dmesg -T`` kernel lines, ``sacct -P``,
``ipmitool sel list``, tickets CSV, telemetry CSV).
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.io._readfile import read_file
from reliab.io._registry import FileResult
from reliab.io._result import SourceChoice


def _kernel(i: int) -> str:
    code = (79, 48, 63, 13, 119)[i % 5]
    if i % 2:
        return (f"2024-06-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:07.123456+00:00 node{i:04d} kernel: "
                f"NVRM: Xid (PCI:0000:3a:00): {code}, pid={1000 + i}, name=pt_main_thread, text {i}")
    return f"[Fri Jun  7 {i % 24:02d}:{i % 60:02d}:51 2024] NVRM: Xid (PCI:0000:{i % 256:02x}:00): {code}, text {i}"


def _sacct(i: int) -> str:
    return (f"{4312000 + i}|{4312000 + i}|llama3|svc|train|{('NODE_FAIL', 'FAILED', 'CANCELLED by 0')[i % 3]}|0:0|"
            f"2024-05-31T23:53:00|2024-06-01T00:00:00|2024-06-{1 + i % 28:02d}T00:{i % 60:02d}:35|00:13:35|2|"
            f"node[0001-0002]|0|billing=16,cpu=16,gres/gpu=16,node=2")


def _sel(i: int) -> str:
    event = ("Memory #0x87 | Uncorrectable ECC", "Power Supply #0x51 | Power Supply AC lost")[i % 2]
    return f"{i + 1:4x} | 06/{1 + i % 28:02d}/2024 | {i % 24:02d}:{i % 60:02d}:47 | {event} | Asserted"


def _ticket(i: int) -> str:
    return (f"INC-{i:06d},2024-06-01T01:35:44Z,node{i:04d},{4312000 + i},2024-06-{1 + i % 28:02d}T00:08:{i % 60:02d}Z,"
            f"{('incident', 'maintenance')[i % 2]},GPU{i % 8} replaced on node{i:04d},"
            f"\"GPU replaced (RMA): faulty GPU, case {i}\",done")


def _telemetry(i: int) -> str:
    return f"2024-06-03T00:{i % 60:02d}:{i // 60 % 60:02d}Z,node{i % 7:04d},{i % 8},{40 + i % 50}.5,{600 + i}.0"


#: format -> (file name, source, header, valid line maker, table, key columns)
FORMATS = {
    "kernel": ("node0001.log", "kernel", "", _kernel, "signals", ["time", "host", "signal"]),
    "sacct": ("sacct.txt", "sacct", "JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|"
              "Elapsed|NNodes|NodeList|Restarts|AllocTRES", _sacct, "jobs", ["job_id", "state", "end"]),
    "sel": ("node0001.sel", "sel", "", _sel, "signals", ["time", "signal"]),
    "tickets": ("incidents.csv", "tickets", "ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,"
                "resolution", _ticket, "signals", ["time", "host", "signal"]),
    "telemetry": ("gpus.csv", "telemetry_csv", "time,host,gpu,temp_c,power_w", _telemetry, "telemetry",
                  ["time", "host", "gpu", "temp_c"]),
}


@st.composite
def _hostile(draw: st.DrawFn, valid: str) -> bytes:
    """One hostile line: a twisted copy of a valid line, or noise."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.text(max_size=60)).encode("utf-8", "surrogatepass")
    if kind == 1:
        return draw(st.binary(max_size=40))
    if kind == 2:
        return valid.replace("2024", draw(st.sampled_from(["9999", "1600", "0001"]))).encode()
    if kind == 3:
        return valid.replace("0", draw(st.sampled_from(["9" * 5000, "99999999999999999999999", "\u00b2", "\u0667"])),
                             1).encode()
    if kind == 4:
        return valid.replace(",", ',"', 1).encode()  # an unclosed quote
    if kind == 5:
        return valid[: len(valid) // 2].encode() + b"\x00\xff\xfe" + valid[len(valid) // 2:].encode()
    if kind == 6:
        return valid.replace("|", "||", 1).replace(",", ",,", 1).encode()  # a field too many
    if kind == 7:
        return valid[: draw(st.integers(0, len(valid)))].encode()  # cut short
    if kind == 8:
        return valid.replace("40", "Infinity", 1).replace("1000", "-inf", 1).encode()
    return b"x\rprogress 10%\r" + valid.encode()[:20]  # lone carriage returns


def _read(path: Path, source: str) -> FileResult:
    """The driver's per-file step (what ``ingest`` runs per file), tables validated."""
    res = read_file(path, SourceChoice(source, 1.0, "forced"))
    for name, frame in res.tables.items():
        if name in schema.TABLES:
            schema.validate(frame, name)
    schema.validate(res.quarantine, "quarantine")
    return res


def _keys(res: FileResult, table: str, cols: list[str]) -> list[tuple]:
    frame = res.tables[table]
    return sorted(tuple(str(v) for v in row) for row in frame[cols].itertuples(index=False))


@cache
def _expected(fmt: str, n: int) -> list[tuple]:
    """Keys of the events of the valid file of ``n`` lines."""
    name, source, header, make, table, cols = FORMATS[fmt]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, name)
        path.write_text("\n".join(([header] if header else []) + [make(i) for i in range(n)]) + "\n")
        keys = _keys(_read(path, source), table, cols)
    assert len(keys) == n
    return keys


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_hostile_lines_never_cost_a_valid_event(fmt: str, data: st.DataObject) -> None:
    name, source, header, make, table, cols = FORMATS[fmt]
    n = data.draw(st.integers(1, 25), label="valid lines")
    valid = [make(i) for i in range(n)]
    hostile = data.draw(st.lists(_hostile(valid[0]), min_size=1, max_size=8), label="hostile lines")
    where = data.draw(st.lists(st.integers(0, n), min_size=len(hostile), max_size=len(hostile)), label="where")
    mixed: list[bytes] = [v.encode() for v in valid]
    for at, line in sorted(zip(where, hostile, strict=True), key=lambda p: -p[0]):
        mixed.insert(at, line)
    head = [header.encode()] if header else []
    blob = b"\n".join(head + mixed) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / name).write_bytes(blob)
        got = _read(Path(tmp) / name, source)
    assert got.lines == len(blob.splitlines()) == got.parsed + got.irrelevant + got.malformed
    assert len(got.quarantine) == got.malformed
    expected = _expected(fmt, n)
    found = _keys(got, table, cols)
    missing = pd.Series(expected)[~pd.Series(expected).isin(found)].tolist()
    assert not missing, (missing, got.quarantine[["lineno", "reason"]].values.tolist())
