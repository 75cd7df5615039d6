"""Times: one DST rule in every reader; far-future times quarantined, never wrapped.

The rule (``reliab.io._localtime``): a local time in the repeated hour of a DST change is the
earlier instant (PEP 495 ``fold=0``) and the file gets a note; a local time in the skipped
hour does not exist and its line is quarantined.  America/New_York changed on 2024-03-10
(02:00 -> 03:00) and 2024-11-03 (02:00 -> 01:00), Australia/Sydney on 2024-04-07
(03:00 -> 02:00) and 2024-10-06 (02:00 -> 03:00) (IANA tz database).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reliab
from reliab.errors import ParseError
from reliab.io._localtime import localize, localize_series, noting

NY = "America/New_York"
XID = "NVRM: Xid (PCI:0000:3a:00): 79, pid=1, name=x, GPU has fallen off the bus."
NCCL = ("[rank1]:[E{md} {hm}:00.476387609 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
        " ran for 600282 milliseconds before timing out.")

#: per reader: (file name, source, text with an ambiguous then a nonexistent local time)
CASES = {
    "dmesg_t": ("n.log", "kernel", f"[Sun Nov  3 01:30:00 2024] {XID}\n[Sun Mar 10 02:30:00 2024] {XID}\n"),
    # (no year in the line: the skipped time comes first, or it would be read as 2025)
    "rfc3164": ("n.log", "kernel", f"Mar 10 02:30:00 n1 kernel: {XID}\nNov  3 01:30:00 n1 kernel: {XID}\n"),
    "iso_naive": ("n.log", "kernel", f"2024-11-03T01:30:00 n1 kernel: {XID}\n2024-03-10T02:30:00 n1 kernel: {XID}\n"),
    "sacct": ("sacct.txt", "sacct", "JobID|State|Start|End\n1|FAILED|2024-11-02T01:00:00|2024-11-03T01:30:00\n"
              "2|FAILED|2024-03-10T01:00:00|2024-03-10T02:30:00\n"),
    "tickets": ("t.csv", "tickets", "ticket_id,opened_at,host,incident_time,type\n"
                "I1,2024-11-03 01:30,n1,2024-11-03 01:30,incident\nI2,2024-03-10 02:30,n1,2024-03-10 02:30,incident\n"),
    "telemetry_csv": ("tel.csv", "telemetry_csv", "time,host,temp_c\n2024-11-03 01:30:00,n1,1\n2024-03-10 02:30:00,n1,2\n"),
    "nvidia_smi_csv": ("smi.csv", "nvidia_smi_csv", "timestamp, index, temperature.gpu\n"
                       "2024/11/03 01:30:00.000, 0, 40\n2024/03/10 02:30:00.000, 0, 40\n"),
    "sel": ("n.sel", "sel", "   2 | 11/03/2024 | 01:30:00 | Memory #0x87 | Uncorrectable ECC | Asserted\n"
            "   3 | 03/10/2024 | 02:30:00 | Memory #0x87 | Uncorrectable ECC | Asserted\n"),
    "nccl": ("train.log", "nccl", NCCL.format(md="0310", hm="02:30") + "\n"
             + NCCL.format(md="1103", hm="01:30") + "\n"),
    "nvidia_smi_dmon": ("n.dmon", "nvidia_smi_dmon", "#Date       Time        gpu    pwr  gtemp\n"
                        "#YYYYMMDD   HH:MM:SS    Idx      W      C\n"
                        " 20241103   01:30:00      0    104     37\n 20240310   02:30:00      0    699     52\n"),
    "nvidia_smi_q": ("q.txt", "nvidia_smi_q", "".join(
        "==============NVSMI LOG==============\n\n"
        f"Timestamp                                 : {stamp}\n"
        "Driver Version                            : 550.54.15\n\n"
        "Attached GPUs                             : 1\nGPU 00000000:18:00.0\n"
        "    Product Name                          : NVIDIA H100 80GB HBM3\n"
        "    Temperature\n        GPU Current Temp                  : 31 C\n\n"
        for stamp in ("Sun Nov  3 01:30:00 2024", "Sun Mar 10 02:30:00 2024"))),
    "lifetimes": ("inv.csv", "lifetimes", "serial,kind,installed,removed\nA1,gpu,2024-11-03 01:30:00,\n"
                  "A2,gpu,2024-03-10 02:30:00,\n"),
    "helios": ("cluster_log.csv", "helios",
               "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
               "j1,u1,vc1,8,16,1,COMPLETED,2024-11-02 20:00:00,2024-11-02 21:00:00,2024-11-03 01:30:00,16200,0\n"
               "j2,u1,vc1,8,16,1,COMPLETED,2024-03-09 20:00:00,2024-03-09 21:00:00,2024-03-10 02:30:00,19800,0\n"),
    "acme": ("trace_seren.csv", "acme",
             "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue\n"
             "j1,u1,1,8,16,Other,COMPLETED,2024-11-02 20:00:00,2024-11-02 21:00:00,2024-11-03 01:30:00,16200,0\n"
             "j2,u1,1,8,16,Other,COMPLETED,2024-03-09 20:00:00,2024-03-09 21:00:00,2024-03-10 02:30:00,19800,0\n"),
    "philly": ("cluster_job_log", "philly", json.dumps([
        {"status": "Pass", "vc": "vc1", "jobid": f"application_{i}", "user": "u1",
         "submitted_time": sub, "attempts": [{"start_time": sub, "end_time": end,
                                              "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]}
        for i, (sub, end) in enumerate([("2024-11-02 20:00:00", "2024-11-03 01:30:00"),
                                        ("2024-03-09 20:00:00", "2024-03-10 02:30:00")])])),
}
#: readers whose rows go to the telemetry table
TELEMETRY = ("telemetry_csv", "nvidia_smi_csv", "nvidia_smi_dmon", "nvidia_smi_q")
#: readers whose rows go to another table than signals: (table, its time column)
TABLE_TIME = {"lifetimes": ("lifetimes", "installed"), "helios": ("jobs", "end"), "acme": ("jobs", "end"),
              "philly": ("jobs", "end")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_dst_rule_in_every_reader(tmp_path: Path, case: str) -> None:
    """Regression: DST edges were resolved silently by some readers, refused with the
    wrong message by others."""
    name, source, text = CASES[case]
    (tmp_path / name).write_text(text)
    res = reliab.ingest(tmp_path / name, source=source, tz=NY, **({"year": 2024} if source in ("kernel", "nccl") else {}))
    table, column = TABLE_TIME.get(source, ("telemetry" if source in TELEMETRY else "signals", "time"))
    times = getattr(res, table)[column]
    # the ambiguous 01:30 is the earlier instant, 01:30 EDT = 05:30 UTC
    assert times.dt.floor("s").tolist() == [pd.Timestamp("2024-11-03T05:30:00Z")]
    q = res.quarantine
    assert len(q) == 1 and "does not exist in America/New_York" in q["reason"].iloc[0]
    assert res.accounting["malformed"].iloc[0] == 1
    note = res.sources[str(tmp_path / name)].reason
    assert "1 local time(s) fell in the repeated hour of a DST change in America/New_York" in note
    assert "earlier instant" in note


def test_every_reader_with_a_tz_option_is_checked() -> None:
    """A reader that reads local times (it has a ``tz`` option) is in :data:`CASES`."""
    from reliab.io._options import reader_options

    with_tz = {source for source in reader_options()["tz"].sources if not source.endswith("://")}
    assert with_tz and with_tz <= {source for _, source, _ in CASES.values()}, with_tz


def test_localize_rule() -> None:
    # ambiguous: the earlier instant, in both hemispheres
    assert localize(datetime(2024, 11, 3, 1, 30), NY) == datetime(2024, 11, 3, 5, 30, tzinfo=UTC)
    assert localize(datetime(2024, 4, 7, 2, 30), "Australia/Sydney") == datetime(2024, 4, 6, 15, 30, tzinfo=UTC)
    with pytest.raises(ParseError, match="does not exist in America/New_York"):
        localize(datetime(2024, 3, 10, 2, 30), NY)
    with pytest.raises(ParseError, match="does not exist in Australia/Sydney"):
        localize(datetime(2024, 10, 6, 2, 30), "Australia/Sydney")
    # nanoseconds kept, aware values only converted, fixed zones never ambiguous
    ts = pd.Timestamp("2024-11-03 01:30:00.123456789")
    assert localize(ts, NY) == pd.Timestamp("2024-11-03T05:30:00.123456789Z")
    aware = datetime(2024, 3, 10, 2, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert localize(aware, NY) == datetime(2024, 3, 10, 7, 30, tzinfo=UTC)
    assert localize(datetime(2024, 3, 10, 2, 30), "UTC") == datetime(2024, 3, 10, 2, 30, tzinfo=UTC)
    with noting() as log:
        localize(datetime(2024, 11, 3, 1, 0), NY)
        localize(datetime(2024, 11, 3, 1, 59), NY)
    assert log.ambiguous == 2 and log.first == "2024-11-03 01:00:00"


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
       st.sampled_from([NY, "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata", "America/Sao_Paulo"]))
def test_localize_series_equals_localize(wall: datetime, zone: str) -> None:
    """The vectorized form gives what the scalar rule gives, wall time by wall time."""
    series = pd.Series([pd.Timestamp(wall)])
    out, problems = localize_series(series, zone)
    try:
        expected = localize(pd.Timestamp(wall), zone)
    except ParseError:
        assert problems and pd.isna(out.iloc[0])
    else:
        assert not problems and out.iloc[0] == expected
        # a real instant: its wall time in the zone is the one given
        assert expected.tz_convert(zone).tz_localize(None) == pd.Timestamp(wall)


# --- far-future and far-past times are quarantined, never stored as another year

@pytest.mark.parametrize(("name", "source", "text", "bad_line"), [
    ("a.prom", "dcgm_prometheus", 'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="n1"} 31 1717200000000\n'
                                  'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="n1"} 31 10000000000000000\n', 2),
    ("b.csv", "telemetry_csv", "t_unix,host,temp_c\n1717200000,n1,30\n99999999999,n1,30\n", 3),
    ("c.csv", "telemetry_csv", "time,host,temp_c\n2024-06-01T00:00:00Z,n1,30\n9999-06-01T00:00:00Z,n1,30\n", 3),
    ("d.csv", "telemetry_csv", "t_unix,host,temp_c\n1717200000,n1,30\n-99999999999,n1,30\n", 3),
])
def test_far_times_are_quarantined(tmp_path: Path, name: str, source: str, text: str, bad_line: int) -> None:
    """Regression: a dcgm timestamp in the far future was stored as 1970."""
    (tmp_path / name).write_text(text)
    res = reliab.ingest(tmp_path / name, source=source)
    assert res.telemetry["time"].dt.year.tolist() == [2024]
    assert res.quarantine["lineno"].tolist() == [bad_line]


def test_parquet_times_beyond_2262(tmp_path: Path) -> None:
    table = pa.table({"time": pa.array([datetime(2024, 1, 1), datetime(9999, 1, 1), datetime(1, 1, 1)],
                                       pa.timestamp("us")),
                      "host": ["a", "b", "c"], "temp_c": [1.0, 2.0, 3.0]})
    pq.write_table(table, tmp_path / "t.parquet")
    res = reliab.ingest(tmp_path / "t.parquet")
    assert res.telemetry["time"].tolist() == [pd.Timestamp("2024-01-01", tz="UTC")]
    assert res.quarantine["lineno"].tolist() == [2, 3]
    assert res.accounting[["lines", "parsed", "malformed"]].values.tolist() == [[3, 1, 2]]
