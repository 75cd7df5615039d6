"""Hostile lines: one bad line never ends a run, and never takes others with it.

Every case writes a small file holding valid lines around one hostile line and checks that
the run completes, the valid events are all found, the hostile line is quarantined with its
``file:line`` and a reason, and ``lines == parsed + irrelevant + malformed``.  The valid
lines are real-shaped: written in the exact form of the bundled sample's captures (rsyslog
RFC 3339 and ``dmesg -T`` kernel lines, ``sacct -P``, ``ipmitool sel list``, tickets CSV).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.errors import ParseError
from reliab.io import _fastscan
from reliab.io._lines import scan_lines

XID = "NVRM: Xid (PCI:0000:3a:00): 79, pid=2000002, name=pt_main_thread, GPU has fallen off the bus."
SYSLOG = f"2024-06-01T01:20:46.707376+00:00 node1807 kernel: {XID}\n"
CTIME = f"[Fri Jun  7 12:13:51 2024] {XID}\n"
SACCT_HEAD = ("JobID|JobIDRaw|JobName|User|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|"
              "NodeList|Restarts|AllocTRES\n")
JOB = ("4312001|4312001|llama3-405b-pretrain|svc-llama|train|NODE_FAIL|0:0|2024-05-31T23:53:00|"
       "2024-06-01T00:00:00|2024-06-01T00:13:35|00:13:35|2048|node[0001-2048]|0|"
       "billing=458752,cpu=458752,gres/gpu=16384,mem=4096000G,node=2048\n")
SEL = "   2 | 06/25/2024 | 01:17:47 | Memory #0x87 | Uncorrectable ECC | Asserted\n"
TICKET_HEAD = "ticket_id,opened_at,host,job_id,incident_time,type,title,root_cause,resolution\n"
TICKET = ("INC-000001,2024-06-01T01:35:44Z,node0059,4312001,2024-06-01T00:08:44Z,incident,"
          "GPU5 replaced on node0059,GPU replaced (RMA): faulty GPU,\"GPU swapped, node returned to service\"\n")
#: a ticket without quotes, so that one added quote stays open
PLAIN_TICKET = ("INC-000001,2024-06-01T01:35:44Z,node0059,4312001,2024-06-01T00:08:44Z,incident,"
                "GPU5 replaced on node0059,GPU replaced (RMA): faulty GPU,GPU swapped\n")
PROM = 'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="node0001"} 31 1717200000000\n'


def _ingest(tmp_path: Path, name: str, text: str | bytes, **options: object) -> reliab.IngestResult:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    res = reliab.ingest(path, **options)
    acc = res.accounting
    assert (acc["lines"] == acc["parsed"] + acc["irrelevant"] + acc["malformed"]).all()
    return res


def _counts(res: reliab.IngestResult) -> list[int]:
    return res.accounting[["lines", "parsed", "irrelevant", "malformed"]].values.tolist()[0]


def _one_bad(res: reliab.IngestResult, lineno: int, reason: str) -> None:
    q = res.quarantine
    assert q["lineno"].tolist() == [lineno], q
    assert reason in q["reason"].iloc[0], q["reason"].iloc[0]
    assert q["path"].iloc[0] == res.accounting["path"].iloc[0]


# --- out-of-range times: the row is quarantined, the table and the run survive

@pytest.mark.parametrize("year", ["9999", "1600", "0001"])
@pytest.mark.parametrize("shape", ["syslog", "dmesg_t", "sacct", "sel", "tickets"])
def test_out_of_range_years(tmp_path: Path, shape: str, year: str) -> None:
    """Regression: a year of 9999, 1600 or 0001 was OutOfBoundsDatetime for the whole run."""
    good, name, source = {"syslog": (SYSLOG, "n.log", "kernel"), "dmesg_t": (CTIME, "n.log", "kernel"),
                          "sacct": (JOB, "sacct.txt", "sacct"), "sel": (SEL, "n.sel", "sel"),
                          "tickets": (TICKET, "tickets.csv", "tickets")}[shape]
    head = {"sacct": SACCT_HEAD, "tickets": TICKET_HEAD}.get(shape, "")
    bad = good.replace("2024", year)
    res = _ingest(tmp_path, name, head + good + bad + good, source=source)
    n = 2 if head else 1
    table = res.jobs if shape == "sacct" else res.signals
    assert len(table) == 2
    _one_bad(res, n + 1, "")
    reason = res.quarantine["reason"].iloc[0]
    # the reader's own range check, or the schema boundary's
    assert year in reason and ("is not a time a table can hold" in reason or "outside the range" in reason), reason
    assert _counts(res)[3] == 1
    assert (table["time" if shape != "sacct" else "end"].dt.year == 2024).all()  # nothing wrapped


def test_sacct_signal_of_a_refused_job_is_dropped(tmp_path: Path) -> None:
    """The slurm:<state> signal of a job refused (by the reader or the schema boundary) goes with
    it: one malformed line, no orphan signal; a signal the table cannot hold takes its job."""
    from reliab.io._registry import FileResult
    from reliab.io.formats.slurm import with_signals

    res = _ingest(tmp_path, "sacct.txt", SACCT_HEAD + JOB + JOB.replace("2024-06-01T00:13:35", "9999-06-01T00:13:35"),
                  source="sacct")
    assert len(res.jobs) == 1 and (res.signals["signal"] == "slurm:node_fail").sum() == 1
    _one_bad(res, 3, "9999-06-01T00:13:35")
    path = str(tmp_path / "s.txt")
    jobs = pd.DataFrame({"job_id": ["1", "2", "3"], "state": "FAILED", "origin": [f"{path}:{i}" for i in (2, 3, 4)]})
    quarantine = pd.DataFrame({"path": [path], "lineno": [3], "source": "sacct", "reason": "bad", "text": None})
    result = FileResult(path=path, source="sacct", lines=4, parsed=2, irrelevant=1, malformed=1,
                        tables={"jobs": reliab.schema.conform(jobs.iloc[[0, 2]], "jobs")},
                        quarantine=reliab.schema.conform(quarantine, "quarantine"))
    signal = {"time": pd.Timestamp("2024-06-01", tz="UTC"), "source": "sacct", "signal": "slurm:failed",
              "severity": "error"}
    out = with_signals(result, [{**signal, "origin": f"{path}:{i}"} for i in (2, 3)]
                       + [{**signal, "origin": f"{path}:4", "severity": "bogus"}])
    assert out.tables["signals"]["origin"].tolist() == [f"{path}:2"]  # line 3's is dropped
    assert out.tables["jobs"]["job_id"].tolist() == ["1"]  # line 4's signal was refused: its job goes
    assert (out.parsed, out.malformed) == (1, 2) and out.quarantine["lineno"].tolist() == [3, 4]


# --- integers: thousands of digits, beyond 64 bits, non-ASCII digits

@pytest.mark.parametrize(("name", "source", "text", "bad_line"), [
    ("xid.log", "kernel", SYSLOG + SYSLOG.replace(": 79,", ": " + "7" * 5000 + ","), 2),
    ("xid2.log", "kernel", SYSLOG + SYSLOG.replace(": 79,", ": 7\u00b2,"), 2),
    ("nnodes.txt", "sacct", SACCT_HEAD + JOB + JOB.replace("|2048|", "|" + "9" * 5000 + "|"), 3),
    ("nnodes2.txt", "sacct", SACCT_HEAD + JOB + JOB.replace("|2048|", "|99999999999999999999999|"), 3),
    ("nnodes3.txt", "sacct", SACCT_HEAD + JOB + JOB.replace("|2048|", "|2048\u00b2|"), 3),
    ("gres.txt", "sacct", SACCT_HEAD + JOB + JOB.replace("gres/gpu=16384", "gres/gpu=99999999999999999999999"), 3),
    ("ts.prom", "dcgm_prometheus", PROM + PROM.replace("1717200000000", "9" * 5000), 2),
    ("ts2.prom", "dcgm_prometheus", PROM + PROM.replace("1717200000000", "10000000000000000"), 2),
    ("tel.csv", "telemetry_csv", "t_unix,host,temp_c\n1717200000,n1,30\n" + "9" * 5000 + ",n1,3\n", 3),
    ("inf.csv", "telemetry_csv", "time,host,temp_c\n2024-06-01T00:00:00Z,n1,30\n2024-06-01T00:01:00Z,n1,Infinity\n", 3),
])
def test_numbers_a_table_cannot_hold(tmp_path: Path, name: str, source: str, text: str, bad_line: int) -> None:
    """Regression: huge/overflowing/superscript integers and infinities killed the run."""
    res = _ingest(tmp_path, name, text, source=source)
    assert res.quarantine["lineno"].tolist() == [bad_line], res.quarantine
    assert _counts(res)[1] == (2 if source == "sacct" else 1) - (source == "sacct")
    if source == "dcgm_prometheus":  # far future stays out: nothing stored as 1970
        assert res.telemetry["time"].dt.year.tolist() == [2024]


def test_sacct_json_hostile_values(tmp_path: Path) -> None:
    """Regression: a 5,000-digit integer, Infinity and an int64 overflow in sacct --json."""
    def job(i: int, **extra: object) -> dict:
        return {"job_id": i, "state": {"current": ["NODE_FAIL"]}, "allocation_nodes": 2,
                "time": {"start": 1725475933, "end": 1725560544}, **extra}
    jobs = [job(1), job(2, allocation_nodes="HUGE"), job(3, time={"start": 1, "end": "INF"}),
            job(4, allocation_nodes=2**70), job(5, restart_cnt={"set": True, "number": "INF"}), job(6)]
    text = json.dumps({"meta": {"plugin": {"name": "slurm"}}, "jobs": jobs}, indent=1)
    text = text.replace('"HUGE"', "9" * 5000).replace('"INF"', "Infinity")
    res = _ingest(tmp_path, "sacct.json", text, source="sacct_json")
    assert res.jobs["job_id"].tolist() == ["1", "6"]
    reasons = res.quarantine["reason"].tolist()
    assert len(reasons) == 4 and res.accounting["malformed"].iloc[0] == 4
    assert "5000 digits" in reasons[0] and "Infinity" in reasons[1] and "64-bit" in reasons[2]


def test_printk_time_overflow(tmp_path: Path) -> None:
    """Regression: ``[99999999999999.0]`` overflowed timedelta in the finish step."""
    text = ("[    1.000000] rtc_cmos 00:02: setting system clock to 2024-06-01T00:00:00 UTC (1717200000)\n"
            f"[99999999999999.0] {XID}\n[  100.000000] {XID}\n")
    res = _ingest(tmp_path, "dmesg.log", text, source="kernel")
    assert res.signals["time"].tolist() == [pd.Timestamp("2024-06-01T00:01:39Z")]  # boot = rtc - 1 s
    _one_bad(res, 2, "")


# --- line endings

@pytest.mark.parametrize("ending", ["\r", "\r\n", "mixed"])
@pytest.mark.parametrize("route", ["python", "polars", "polars-gzip"])
def test_line_endings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str, route: str) -> None:
    """Regression: 53 CR-only records were one line and 52 signals were lost."""
    if route != "python":
        monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    lines = [SYSLOG.replace("node1807", f"node{i:04d}").rstrip("\n") for i in range(53)]
    ends = ["\r", "\r\n", "\n"] if ending == "mixed" else [ending]
    data = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines)).encode()
    res = _ingest(tmp_path, "n.log" + (".gz" if route == "polars-gzip" else ""),
                  gzip.compress(data) if route == "polars-gzip" else data, source="kernel")
    assert _counts(res) == [53, 53, 0, 0]
    assert sorted(res.signals["host"]) == [f"node{i:04d}" for i in range(53)]
    assert res.signals["origin"].str.rsplit(":", n=1).str[1].astype(int).tolist() == list(range(1, 54))


def test_lone_cr_inside_lf_file_same_on_every_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress-bar ``\\r`` mid-file splits a line on the polars route exactly as on the others."""
    data = (SYSLOG * 3 + "progress 10%\rprogress 20%\r" + SYSLOG.replace("node1807", "node0002") * 2).encode()
    got = []
    for fast in (False, True):
        monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if fast else 1 << 60)
        res = _ingest(tmp_path, f"n{fast}.log", data, source="kernel")
        got.append((_counts(res), res.signals["origin"].str.rsplit(":", n=1).str[1].tolist()))
    assert got[0] == got[1] == ([7, 5, 2, 0], ["1", "2", "3", "6", "7"])


# --- tickets: an unclosed quote ends at the next record

def test_unclosed_quote_does_not_swallow_tickets(tmp_path: Path) -> None:
    """Regression: one unclosed quote swallowed the next 100 tickets (1 parsed, 101 irrelevant)."""
    rows = [PLAIN_TICKET.replace("INC-000001", f"INC-{i:06d}") for i in range(102)]
    rows[1] = rows[1].replace(',GPU5 replaced on node0059,', ',"GPU5 replaced on node0059,')
    res = _ingest(tmp_path, "tickets.csv", TICKET_HEAD + "".join(rows), source="tickets")
    assert _counts(res) == [103, 101, 1, 1]
    assert len(res.signals) == 101
    _one_bad(res, 3, "unclosed quote")


def test_unclosed_quote_at_end_and_multiline_fields_kept(tmp_path: Path) -> None:
    """A legitimate multi-line field still reads; an unclosed one at the end of file is quarantined."""
    multi = TICKET.replace('"GPU swapped, node returned to service"', '"GPU swapped,\nnode returned\nto service"')
    res = _ingest(tmp_path, "tickets.csv", TICKET_HEAD + multi + TICKET + PLAIN_TICKET.replace(",GPU5", ',"GPU5'),
                  source="tickets")
    assert _counts(res) == [6, 2, 3, 1] and len(res.signals) == 2
    assert res.signals["message"].iloc[0].count("\n") == 0  # title | root cause; resolution is not read
    _one_bad(res, 6, "at the end of the file")


def test_ticket_record_too_long_is_not_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quoted field that never closes over many lines is quarantined once, then skipped."""
    from reliab.io.formats import tickets

    monkeypatch.setattr(tickets, "MAX_RECORD_BYTES", 1000)
    text = TICKET_HEAD + PLAIN_TICKET.replace(",GPU5", ',"GPU5') + "free text line\n" * 200 + TICKET
    res = _ingest(tmp_path, "tickets.csv", text, source="tickets")
    assert len(res.signals) == 1 and res.signals["origin"].iloc[0].endswith(":203")
    _one_bad(res, 2, "record longer than 1000 bytes")


# --- a parser's own bug is one quarantined line

def _boom(text: str, ctx: object) -> dict | None:
    if "boom" in text:
        return {"x": 1 / 0}
    if "deep" in text:
        raise RecursionError("maximum recursion depth exceeded")
    return {"time": pd.Timestamp("2024-06-01", tz="UTC"), "source": "t", "signal": "t:ok", "severity": "info"}


def test_any_exception_in_parse_line_is_one_quarantined_line(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("ok\nboom\nok\ndeep\nok\n")
    res = scan_lines(str(path), "t", _boom)
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (5, 3, 0, 2)
    assert res.quarantine["reason"].tolist() == ["unreadable line (ZeroDivisionError: division by zero)",
                                                 "unreadable line (RecursionError: maximum recursion depth exceeded)"]
    with pytest.raises(ParseError, match=r"x.log:2"):
        scan_lines(str(path), "t", _boom, strict=True)


def test_a_failing_finish_hook_rejects_only_its_rows(tmp_path: Path) -> None:
    def finish(rows: list[dict], ctx: object) -> list[dict]:
        for row in rows:
            if row["signal"] == "t:bad":
                raise OverflowError("days=1157407407; must have magnitude <= 999999999")
        return rows

    def parse(text: str, ctx: object) -> dict:
        return {"time": pd.Timestamp("2024-06-01", tz="UTC"), "source": "t", "signal": f"t:{text}", "severity": "info"}

    path = tmp_path / "x.log"
    path.write_text("a\nbad\nb\n")
    res = scan_lines(str(path), "t", parse, finish=finish)
    assert res.tables["signals"]["signal"].tolist() == ["t:a", "t:b"]
    assert res.quarantine["lineno"].tolist() == [2] and "OverflowError" in res.quarantine["reason"].iloc[0]


def test_a_failing_bulk_hook_falls_back_to_parse_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reliab.io.formats import kernel

    def broken(hits: object, ctx: object) -> object:
        raise RuntimeError("bulk bug")

    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(kernel, "_bulk_xid", broken)
    path = tmp_path / "n.log"
    path.write_text(SYSLOG * 3)
    res = kernel.read_kernel(str(path))
    assert (res.lines, res.parsed, res.malformed) == (3, 3, 0)


def test_bulk_rows_beyond_2262_are_quarantined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The polars bulk parser reads years to 2999; beyond 2262 the line is malformed, not a crash."""
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    res = _ingest(tmp_path, "n.log", SYSLOG + SYSLOG.replace("2024", "2900") + SYSLOG, source="kernel")
    assert len(res.signals) == 2
    _one_bad(res, 2, "outside the range")
    assert "2900" in res.quarantine["reason"].iloc[0] or "2262" in res.quarantine["reason"].iloc[0]


def test_nul_in_a_telemetry_cell_is_not_cut(tmp_path: Path) -> None:
    """pandas' C parser ends a cell at NUL (``4\\x005`` would read as 4): such rows take the
    line-by-line path and are malformed."""
    text = "time,host,temp_c\n2024-06-01T00:00:00Z,n1,4\x005\n2024-06-01T00:01:00Z,n1,40\n"
    res = _ingest(tmp_path, "gpus.csv", text, source="telemetry_csv")
    assert res.telemetry["temp_c"].tolist() == [40.0]
    _one_bad(res, 2, "'temp_c' is not a number")


def test_bulk_rows_a_table_cannot_hold_are_quarantined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence behind the readers: a bulk row beyond 2262 (polars would fail the cast to
    nanoseconds for the whole batch) makes its line malformed; the other rows stay."""
    import polars as pl

    from reliab.io.formats import kernel

    def bulk(hits: pl.DataFrame, ctx: object) -> tuple[pl.DataFrame, pl.DataFrame]:
        years = [2900 if i == 1 else 2024 for i in hits["i"].to_list()]
        rows = pl.DataFrame({"_lineno": [i + 1 for i in hits["i"].to_list()],
                             "time": [pd.Timestamp(f"{y}-06-01", tz="UTC").to_pydatetime() for y in years],
                             "host": "n", "source": "kernel", "signal": "xid:79", "severity": "critical"})
        return rows, hits.head(0)

    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(kernel, "_bulk_xid", bulk)
    res = _ingest(tmp_path, "n.log", SYSLOG * 3, source="kernel")
    assert res.signals["origin"].str.rsplit(":", n=1).str[1].tolist() == ["1", "3"]
    _one_bad(res, 2, "time outside the range a table can hold")
