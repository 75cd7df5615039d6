"""nvidia-smi -q, nvidia-smi dmon and dcgm-exporter text into the telemetry table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab import schema
from reliab.io.formats.telemetry.nvidia_smi import (
    _sniff_prom,
    _sniff_q,
    normalize_pci,
    read_dcgm_prometheus,
    read_nvidia_smi_dmon,
    read_nvidia_smi_q,
)

HERE = Path(__file__).parent


def _h200(name: str) -> Path:
    for base in (HERE / "reference" / "h200_telemetry", HERE.parent / "data" / "h200_telemetry",
                 HERE.parent.parent / "shared" / "data" / "h200_telemetry"):
        if (base / name).exists():
            return base / name
    pytest.skip("H200 capture not found")


def _identity(res) -> None:
    assert res.lines == res.parsed + res.irrelevant + res.malformed


def test_real_h200_nvidia_smi_q() -> None:
    """Reference: the real H200 `nvidia-smi -q` capture (data/h200_telemetry/SOURCE.md)."""
    res = read_nvidia_smi_q(str(_h200("nvidia_smi_q.txt")), host="h200")
    _identity(res)
    tel = res.tables["telemetry"]
    schema.validate(tel, "telemetry")
    row = tel.iloc[0]
    assert len(tel) == 1 and row["gpu"] == "0000:00:06"
    assert row["time"] == pd.Timestamp("2026-11-30 01:25:14", tz="UTC")
    assert (row["temp_c"], row["mem_temp_c"], row["power_w"], row["power_limit_w"]) == (36, 38, 77.09, 700)
    assert (row["sm_clock_mhz"], row["mem_clock_mhz"], row["fb_total_mib"]) == (345, 3201, 143771)
    assert row["ecc_volatile_dram_uncorrectable_count"] == 0 and row["remap_failure_flag"] == 0


DMON_DT = """\
#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk
#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %      %      %    MHz    MHz
 20261130   01:25:20      0    104     37     38     32      9      0      0      0      0   3201   1725
 20261130   01:25:21      0    699     52     50    100     41      0      0      0      0   3201   1470
 20261130   01:25:22      0      -     53     51    100     41      0      0      0      0   3201   1455
"""


def test_dmon_with_date_columns(tmp_path: Path) -> None:
    """Regression: `nvidia-smi dmon -o DT` rows, units from the header, '-' as missing."""
    p = tmp_path / "node0001.dmon"
    p.write_text(DMON_DT)
    res = read_nvidia_smi_dmon(str(p))
    _identity(res)
    tel = res.tables["telemetry"]
    schema.validate(tel, "telemetry")
    assert (res.parsed, res.irrelevant) == (3, 2)
    assert tel["power_w"].tolist()[:2] == [104, 699] and pd.isna(tel["power_w"].iloc[2])
    assert tel["sm_clock_mhz"].tolist() == [1725, 1470, 1455]
    assert tel["host"].unique().tolist() == ["node0001"]
    assert tel["time"].iloc[1] == pd.Timestamp("2026-11-30 01:25:21", tz="UTC")


def test_dmon_without_time_needs_start(tmp_path: Path) -> None:
    """Plain dmon rows carry no clock: one note naming start=, no quarantine row per line."""
    lines = DMON_DT.splitlines()
    plain = "\n".join(line.split(None, 2)[-1] if not line.startswith("#") else "# " + line.split(None, 2)[-1]
                      for line in lines) + "\n"
    p = tmp_path / "n.dmon"
    p.write_text(plain)
    res = read_nvidia_smi_dmon(str(p))
    assert (res.parsed, res.malformed, len(res.quarantine)) == (0, 0, 0)
    assert len(res.notes) == 1 and "start=" in res.notes[0] and "-o DT" in res.notes[0]
    assert "3 data line(s)" in res.notes[0]
    res = read_nvidia_smi_dmon(str(p), start="2026-11-30T01:25:20Z")
    assert res.malformed == 0
    assert res.tables["telemetry"]["time"].diff().dropna().dt.total_seconds().tolist() == [1.0, 1.0]


PROM = """\
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-c2f76b33-7953-256e-8f33-1343419b1a1c",pci_bus_id="00000000:31:00.0",device="nvidia0",modelName="NVIDIA L4",Hostname="i-030791dc5a37cd257",DCGM_FI_DRIVER_VERSION="580.105.08"} 31
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-x",pci_bus_id="00000000:31:00.0",device="nvidia0",Hostname="i-030791dc5a37cd257"} 16.3
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-y",pci_bus_id="00000000:32:00.0",device="nvidia1",hostname="node7"} 44
DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-y",hostname="node7"} 79
go_gc_duration_seconds 0.001
"""


def test_dcgm_exporter_both_hostname_labels(tmp_path: Path) -> None:
    """Reference: a real dcgm-exporter scrape line; the label lowercased by dcgm-exporter#655."""
    p = tmp_path / "metrics.prom"
    p.write_text(PROM)
    res = read_dcgm_prometheus(str(p), time="2026-11-30T01:00:00Z")
    _identity(res)
    tel = res.tables["telemetry"].set_index(["host", "gpu"])
    schema.validate(res.tables["telemetry"], "telemetry")
    assert tel.loc[("i-030791dc5a37cd257", "0"), "temp_c"] == 31
    assert tel.loc[("i-030791dc5a37cd257", "0"), "power_w"] == 16.3
    assert tel.loc[("node7", "1"), "last_xid_code"] == 79
    assert (res.parsed, res.irrelevant) == (4, 3)
    untimed = read_dcgm_prometheus(str(p))  # no scrape time given: one note, nothing quarantined
    assert (untimed.parsed, untimed.malformed) == (0, 0)
    assert len(untimed.notes) == 1 and "time=" in untimed.notes[0]


def test_normalize_pci() -> None:
    """Regression: bus ids from nvidia-smi, DCGM and the kernel agree after normalization."""
    assert normalize_pci("00000000:18:00.0") == normalize_pci("0000:18:00") == "0000:18:00"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_fuzz_never_raises(tmp_path: Path, text: str) -> None:
    """Fuzz: arbitrary text never raises from any of the three readers; accounting holds."""
    p = tmp_path / "x.txt"
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    for reader in (read_nvidia_smi_q, read_nvidia_smi_dmon, read_dcgm_prometheus):
        try:
            res = reader(str(p))
        except Exception as exc:  # the contract: only ParseError for a whole-file problem
            from reliab.errors import ParseError

            assert isinstance(exc, ParseError), exc
            continue
        _identity(res)


def test_generic_parquet_with_mapping(tmp_path: Path) -> None:
    """Regression: a site's Parquet export maps its column names; an unreadable time is quarantined."""
    from reliab.io.formats.telemetry.parquet import read_telemetry_parquet

    df = pd.DataFrame({"timestamp": pd.to_datetime(["2024-06-01T00:00:00Z", "2024-06-01T00:01:00Z", None], utc=True),
                       "hostname": ["n1", "n1", "n2"], "GPU Temp": [40.0, 41.0, 42.0], "watts": [600, 610, 620]})
    p = tmp_path / "tel.parquet"
    df.to_parquet(p)
    res = read_telemetry_parquet(str(p), columns={"GPU Temp": "temp_c", "watts": "power_w"})
    _identity(res)
    tel = res.tables["telemetry"]
    schema.validate(tel, "telemetry")
    assert tel["temp_c"].tolist() == [40.0, 41.0] and tel["power_w"].tolist() == [600.0, 610.0]
    assert res.malformed == 1 and res.quarantine["lineno"].tolist() == [3]


def test_dcgm_field_csv(tmp_path: Path) -> None:
    """Regression: a CSV whose columns are DCGM field names or ids maps onto unit-named columns."""
    from reliab.io import get_parser

    p = tmp_path / "dcgm.csv"
    p.write_text("timestamp,hostname,gpu,DCGM_FI_DEV_GPU_TEMP,155,DCGM_FI_DEV_XID_ERRORS\n"
                 "2024-06-01T00:00:00Z,node1,0,41,612.5,0\n2024-06-01T00:00:10Z,node1,0,42,690.0,79\n")
    res = get_parser("telemetry_csv").read(str(p))
    tel = res.tables["telemetry"]
    schema.validate(tel, "telemetry")
    assert tel["temp_c"].tolist() == [41, 42] and tel["power_w"].tolist() == [612.5, 690.0]
    assert tel["last_xid_code"].tolist() == [0, 79]


# --- hand-over shapes (real-shaped; the verbatim captures are scored in tests/test_real_world.py)

def test_dmon_dash_column_in_every_row_is_missing_not_an_error(tmp_path: Path) -> None:
    """Regression: 'mtemp' is '-' in every row on GDDR boards (Microway's dmon
    article); the folder run no longer dies of a SchemaError."""
    import reliab
    p = tmp_path / "node3.dmon"
    p.write_text("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n"
                 "# Idx      W      C      C      %      %      %      %    MHz    MHz\n"
                 "    0     72     46      -      0      0      0      0   7000    210\n"
                 "    1     70     44      -      0      0      0      0   7000    210\n")
    res = reliab.ingest(p, start="2024-06-01T00:00:00Z", interval_s=2)
    tel = res.telemetry
    assert len(tel) == 2 and tel["mem_temp_c"].isna().all() and tel["temp_c"].tolist() == [46, 44]
    assert str(tel["mem_temp_c"].dtype) == "float64"
    assert tel["time"].nunique() == 1  # two GPUs of one sample


def test_dmon_time_only_rows_take_the_day_of_start(tmp_path: Path) -> None:
    p = tmp_path / "n.dmon"
    p.write_text("#Time        gpu    pwr\n#HH:MM:SS    Idx      W\n 23:59:59      0     70\n 00:00:00      0     71\n")
    res = read_nvidia_smi_dmon(str(p))
    assert (res.parsed, res.malformed) == (0, 0) and "start=" in res.notes[0] and "-o T" in res.notes[0]
    res = read_nvidia_smi_dmon(str(p), start="2024-06-01T23:00:00Z")
    assert res.tables["telemetry"]["time"].tolist() == [pd.Timestamp("2024-06-01 23:59:59", tz="UTC"),
                                                        pd.Timestamp("2024-06-02 00:00:00", tz="UTC")]


def test_q_without_timestamp_and_old_names(tmp_path: Path) -> None:
    """Real-shaped (Microway's 270.41 '-q': 'GPU 0:2:0', 'Temperature / Gpu : N/A')."""
    p = tmp_path / "n.txt"
    p.write_text("==============NVSMI LOG==============\n\nAttached GPUs                   : 1\n"
                 "GPU 0:2:0\n    Utilization\n        Gpu                     : 44 %\n"
                 "    Temperature\n        Gpu                     : N/A\n")
    res = read_nvidia_smi_q(str(p))
    assert len(res.tables["telemetry"]) == 0 and len(res.notes) == 1 and "time=" in res.notes[0]
    tel = read_nvidia_smi_q(str(p), time="2011-12-05T22:05:49Z").tables["telemetry"]
    assert tel[["gpu", "util_gpu_pct"]].values.tolist() == [["0000:02:00", 44.0]]
    assert "temp_c" not in tel.columns or tel["temp_c"].isna().all()


def test_q_gpu_without_any_value_still_has_its_row(tmp_path: Path) -> None:
    """Real-shaped (netdata/netdata#4892, a GeForce '-q' whose every field is identity or N/A):
    each GPU section of the report is one row at the Timestamp, missing where nothing was
    printed; a GPU with values keeps the origin of its first value line."""
    p = tmp_path / "q.txt"
    head = "==============NVSMI LOG==============\n\nTimestamp                           : Sat Dec  1 23:45:21 2018\n"
    body = ("GPU 00000000:01:00.0\n    Product Name                    : GeForce GTX 960M\n"
            "    Serial Number                   : N/A\n    Temperature\n        GPU Current Temp            : N/A\n"
            "GPU 00000000:02:00.0\n    Product Name                    : Tesla T4\n    Temperature\n"
            "        GPU Current Temp            : 41 C\n")
    p.write_text(head + body)
    res = read_nvidia_smi_q(str(p))
    _identity(res)
    tel = res.tables["telemetry"].set_index("gpu")
    schema.validate(res.tables["telemetry"], "telemetry")
    assert sorted(tel.index) == ["0000:01:00", "0000:02:00"]
    assert pd.isna(tel.loc["0000:01:00", "temp_c"]) and tel.loc["0000:02:00", "temp_c"] == 41
    assert set(tel["time"]) == {pd.Timestamp("2018-12-01 23:45:21", tz="UTC")}
    assert tel.loc["0000:01:00", "origin"].endswith(":4") and tel.loc["0000:02:00", "origin"].endswith(":12")
    p.write_text(head.replace("Timestamp", "Stamp of nothing") + body.replace("41 C", "N/A"))
    untimed = read_nvidia_smi_q(str(p))  # no clock and no value: no row, one note naming time=
    assert len(untimed.tables["telemetry"]) == 0 and len(untimed.notes) == 1
    assert "time=" in untimed.notes[0] and "from line 4" in untimed.notes[0]


def test_dcgm_exporter_xid_counters_one_column_per_code(tmp_path: Path) -> None:
    """dcgm-exporter's own Xid metrics carry the code in an ``xid`` label (its counter list:
    DCGM_EXP_XID_ERRORS_COUNT a gauge over the window, _TOTAL a counter since start); the
    last-Xid gauge DCGM_FI_DEV_XID_ERRORS stays last_xid_code; other DCGM_EXP_ metrics are not read."""
    p = tmp_path / "m.prom"
    p.write_text('DCGM_EXP_XID_ERRORS_COUNT{gpu="0",Hostname="n1",window_size_in_ms="300000",xid="13"} 2\n'
                 'DCGM_EXP_XID_ERRORS_COUNT{gpu="0",Hostname="n1",window_size_in_ms="300000",xid="31"} 1\n'
                 'DCGM_EXP_XID_ERRORS_TOTAL{gpu="0",Hostname="n1",xid="13"} 5\n'
                 'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="n1"} 31\n'
                 'DCGM_EXP_CLOCK_EVENTS_COUNT{gpu="0",Hostname="n1",clock_event="power_cap"} 3\n')
    res = read_dcgm_prometheus(str(p), time="2026-05-06T00:00:00Z")
    _identity(res)
    row = res.tables["telemetry"].iloc[0]
    assert (row["xid_13_count"], row["xid_31_count"], row["xid_13_total"], row["last_xid_code"]) == (2, 1, 5, 31)
    assert not any("clock_event" in c for c in res.tables["telemetry"].columns) and res.irrelevant == 1


def test_dcgm_exporter_1x_lower_case_names(tmp_path: Path) -> None:
    """Real-shaped (NVIDIA/dcgm-exporter#188: the 1.x exporter's 'dcgm_<field>' names, some not the
    field's own: dcgm_memory_clock is MEM_CLOCK, dcgm_gpu_utilization GPU_UTIL)."""
    p = tmp_path / "m.prom"
    labels = 'gpu="0",UUID="GPU-1",Hostname="n1",pod=""'
    p.write_text(f"# HELP dcgm_sm_clock SM clock frequency (in MHz).\ndcgm_sm_clock{{{labels}}} 585\n"
                 f"dcgm_memory_clock{{{labels}}} 5000\ndcgm_gpu_utilization{{{labels}}} 7\n"
                 f"dcgm_sync_boost_violation{{{labels}}} 0\n")
    assert _sniff_prom(str(p), p.read_text().splitlines()) >= 0.9
    row = read_dcgm_prometheus(str(p), time="2020-01-01T00:00:00Z").tables["telemetry"].iloc[0]
    assert (row["host"], row["sm_clock_mhz"], row["mem_clock_mhz"], row["util_gpu_pct"]) == ("n1", 585, 5000, 7)
    assert row["dcgm_sync_boost_violation_raw"] == 0


def test_q_report_whose_banner_was_cut_away(tmp_path: Path) -> None:
    """Real-shaped (paradoxxxzero/gnome-shell-system-monitor-applet#356, 'nvidia-smi -q -d
    MEMORY,UTILIZATION' posted without its banner): its top fields and GPU section make it a -q report."""
    p = tmp_path / "q.txt"
    p.write_text("Timestamp                           : Tue Aug 15 16:00:35 2017\n"
                 "Driver Version                      : 375.66\n\nAttached GPUs                       : 1\n"
                 "GPU 0000:01:00.0\n    FB Memory Usage\n        Total                       : 1995 MiB\n"
                 "        Used                        : 1934 MiB\n    BAR1 Memory Usage\n"
                 "        Used                        : 5 MiB\n")
    assert _sniff_q(str(p), p.read_text().splitlines()) >= 0.9
    assert _sniff_q(str(p), ["Timestamp : now", "GPU 0000:01:00.0"]) == 0.0  # one field is not a report
    row = read_nvidia_smi_q(str(p)).tables["telemetry"].iloc[0]
    assert (row["fb_total_mib"], row["fb_used_mib"]) == (1995, 1934)  # BAR1 'Used' is another field


def test_dcgm_blank_sentinels_are_missing(tmp_path: Path) -> None:
    """dcgm-exporter README scrape: DCGM_FI_DEV_MEMORY_TEMP = DCGM_INT64_BLANK + 2 (not supported)."""
    p = tmp_path / "m.prom"
    p.write_text('DCGM_FI_DEV_MEMORY_TEMP{gpu="0", UUID="GPU-1"} 9223372036854775794\n'
                 'DCGM_FI_DEV_GPU_TEMP{gpu="0", UUID="GPU-1"} 2147483634\n'
                 'DCGM_FI_DEV_POWER_USAGE{gpu="0", UUID="GPU-1"} 140737488355330\n'
                 'DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-1"} 139\n')
    tel = read_dcgm_prometheus(str(p), time="2026-05-06T00:00:00Z").tables["telemetry"]
    assert tel[["mem_temp_c", "temp_c", "power_w"]].isna().all().all() and tel["sm_clock_mhz"].iloc[0] == 139


def test_query_gpu_csv_without_timestamp(tmp_path: Path) -> None:
    """Real-shaped (ksysguard-gpu#27 '--query-gpu=index,…' in a -l 1 loop; system-monitoring-
    center#57 'pci.bus_id'): start=/interval_s= date the samples, the bus id names the GPU."""
    import reliab
    p = tmp_path / "q.csv"
    p.write_text("index, temperature.gpu, power.draw [W]\n0, 56, 83.92 W\n1, 50, 80.00 W\n0, 55, 78.22 W\n")
    res = reliab.ingest(p)
    assert res.sources[str(p)].source == "nvidia_smi_csv" and len(res.telemetry) == 0
    assert len(res.quarantine) == 0 and "start=" in res.sources[str(p)].reason
    tel = reliab.ingest(p, start="2022-11-18T00:00:00Z", interval_s=1).telemetry
    assert tel["time"].dt.second.tolist() == [0, 0, 1] and tel["gpu"].tolist() == ["0", "1", "0"]
    assert [o.rsplit(":", 1)[1] for o in tel["origin"]] == ["2", "3", "4"]
    p.write_text("name, pci.bus_id, temperature.gpu\nGeForce RTX 2060, 00000000:09:00.0, 36\n")
    tel = reliab.ingest(p, start="2022-04-18T00:00:00Z").telemetry
    assert tel[["gpu", "temp_c"]].values.tolist() == [["0000:09:00", 36.0]]


def test_dcgm_timestamps_out_of_range_are_quarantined(tmp_path: Path) -> None:
    """Regression: a far-future or 5000-digit sample timestamp is never stored as 1970."""
    p = tmp_path / "m.prom"
    p.write_text('DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="h"} 31 99999999999999999\n'
                 'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="h"} 31 ' + "9" * 5000 + "\n"
                 'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="h"} 32 1717400000000\n')
    res = read_dcgm_prometheus(str(p))
    _identity(res)
    assert res.tables["telemetry"]["time"].tolist() == [pd.Timestamp(1717400000000, unit="ms", tz="UTC")]
    assert res.malformed == 2 and all("out of range" in r for r in res.quarantine["reason"])


def test_query_gpu_csv_bracketed_nvml_status_cells_are_missing(tmp_path: Path) -> None:
    """Real cells of nvidia_gpu_exporter's H100 MIG capture (driver 590.48.01): an NVML status
    in brackets ('[Requested functionality has been deprecated]', NVML_ERROR_DEPRECATED; '[GPU
    is lost]') where a number belongs is a missing value, never a malformed row; a cell that is
    text without brackets still is malformed."""
    import reliab
    p = tmp_path / "q.csv"
    p.write_text("timestamp, index, temperature.gpu, power.draw [W], clocks.applications.graphics [MHz], "
                 "utilization.gpu [%]\n"
                 "2026/07/14 09:00:44.579, 0, 53, 433.78 W, [Requested functionality has been deprecated], [N/A]\n"
                 "2026/07/14 09:00:45.579, 0, 54, [GPU is lost], 1980 MHz, 7 %\n"
                 "2026/07/14 09:00:46.579, 0, 54, deprecated, 1980 MHz, 7 %\n")
    res = reliab.ingest(p)
    tel = res.telemetry
    assert len(tel) == 2 and res.quarantine["lineno"].tolist() == [4]
    assert tel["clocks_applications_graphics_mhz"].isna().tolist() == [True, False]
    assert tel["power_w"].isna().tolist() == [False, True] and tel["power_w"].iloc[0] == 433.78
    assert tel["util_gpu_pct"].isna().tolist() == [True, False]


def test_q_610_nested_power_limit(tmp_path: Path) -> None:
    """Real-shaped (nvidia_gpu_exporter's Windows capture, driver 610.62, RTX 2080 SUPER; the
    default limit and the memory power set to other numbers so a wrong path shows): the current
    power limit is nested under 'GPU Ceiling Power Limit'; 'Default Power Limit' and the 'GPU
    Memory Power Readings ' block (title ending in a blank) are other quantities."""
    p = tmp_path / "q.txt"
    p.write_text("==============NVSMI LOG==============\n\n"
                 "Timestamp                                              : Wed Jun 24 10:17:41 2026\n"
                 "Driver Version                                         : 610.62\n\n"
                 "Attached GPUs                                          : 1\n"
                 "GPU 00000000:0C:00.0\n"
                 "    GPU Power Readings\n"
                 "        Average Power Draw                             : N/A\n"
                 "        Instantaneous Power Draw                       : 37.21 W\n"
                 "        GPU Ceiling Power Limit\n"
                 "            Current Power Limit                        : 250.00 W\n"
                 "            Requested Power Limit                      : 250.00 W\n"
                 "            Default Power Limit                        : 260.00 W\n"
                 "        Min Power Limit                                : 105.00 W\n"
                 "    GPU Memory Power Readings \n"
                 "        Average Power Draw                             : N/A\n"
                 "        Instantaneous Power Draw                       : 12.00 W\n")
    res = read_nvidia_smi_q(str(p))
    _identity(res)
    tel = res.tables["telemetry"]
    assert tel[["gpu", "power_limit_w", "power_instant_w"]].values.tolist() == [["0000:0c:00", 250.0, 37.21]]
    assert "power_w" not in tel or tel["power_w"].isna().all()  # Average Power Draw: N/A


def test_query_gpu_csv_bracketed_number_stays_malformed(tmp_path: Path) -> None:
    """Only a bracketed NVML status text is a missing value: '[1]' is no status and no number."""
    import reliab
    p = tmp_path / "q.csv"
    p.write_text("timestamp, index, temperature.gpu\n2026/07/14 09:00:44.579, 0, [1]\n"
                 "2026/07/14 09:00:45.579, 0, [GPU requires reset]\n")
    res = reliab.ingest(p)
    assert res.quarantine["lineno"].tolist() == [2] and res.telemetry["temp_c"].isna().tolist() == [True]
