"""Telemetry CSV readers (reliab.io.formats.telemetry.delimited) on the real H200 capture and small files."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab.io.formats.telemetry.delimited  # noqa: F401  (registers telemetry_csv, nvidia_smi_csv)
from reliab import schema
from reliab.io._registry import FileResult, get_parser

H200 = Path(__file__).parent / "reference" / "h200_telemetry"  # see its SOURCE.md


def _check(result: FileResult) -> None:
    assert result.lines == result.parsed + result.irrelevant + result.malformed
    schema.validate(result.tables["telemetry"], "telemetry")
    schema.validate(result.quarantine, "quarantine")
    assert len(result.quarantine) == result.malformed


def test_nvidia_smi_query_h200() -> None:
    """reference: real nvidia-smi --query-gpu capture of one H200 (SOURCE.md)."""
    path = H200 / "nvidia_smi_query.csv"
    n_lines = len(path.read_text().splitlines())
    r = get_parser("nvidia_smi_csv").read(str(path), host="h200")
    _check(r)
    t = r.tables["telemetry"]
    assert (r.lines, r.parsed, r.irrelevant, r.malformed) == (n_lines, n_lines - 1, 1, 0)
    assert len(t) == n_lines - 1
    first = t.iloc[0]
    assert first["time"] == pd.Timestamp("2026-11-30T01:25:20.280Z")
    assert (first["host"], first["gpu"]) == ("h200", "0")
    assert (first["temp_c"], first["mem_temp_c"], first["power_w"]) == (37, 38, 104.70)
    assert (first["sm_clock_mhz"], first["mem_clock_mhz"], first["util_gpu_pct"]) == (1725, 3201, 32)
    assert first["clock_event_reasons_flag"] == 0
    assert t["power_w"].max() <= 720  # 700 W cap (SOURCE.md)


def test_nvml_samples_h200() -> None:
    """reference: NVML samples of the same run (t_unix epoch seconds, unit-less names aliased)."""
    path = H200 / "nvml_samples.csv"
    n_lines = len(path.read_text().splitlines())
    r = get_parser("telemetry_csv").read(str(path), host="h200")
    _check(r)
    t = r.tables["telemetry"]
    assert len(t) == n_lines - 1 and r.malformed == 0
    assert t["time"].iloc[0] == pd.Timestamp("2026-11-30T01:25:20.254200Z")
    assert t["power_w"].iloc[0] == pytest.approx(104.699)
    assert t["clock_event_reasons_flag"].iloc[1] == 4
    assert "ecc_corrected_volatile_count" in t and t["phase"].iloc[0] == "idle"


def test_nvidia_smi_units_na_hex_and_bad_rows(tmp_path: Path) -> None:
    text = "\n".join([
        "timestamp, index, pstate, temperature.gpu, power.draw [W], clocks.sm [MHz], utilization.gpu [%], "
        "clocks_event_reasons.active, memory.used [MiB], name",
        "2024/06/03 14:00:00.000, 3, P0, 61, 650.10 W, 1755 MHz, 99 %, 0x0000000000000004, 81000 MiB, H100",
        "2024/06/03 14:00:01.000, 3, P0, [N/A], [Not Supported], 1755 MHz, 99 %, 0x1A, 81000 MiB, H100",
        "2024/06/03 14:00:02.000, 3, P0, hot, 650 W, 1755 MHz, 99 %, 0x0, 1 MiB, H100",
        "2024/06/03 14:00:03.000, 3, P0, 61",
        "not a time, 3, P0, 61, 650 W, 1755 MHz, 99 %, 0x0, 1 MiB, H100",
        "",
    ])
    path = tmp_path / "node0007.csv"
    path.write_text(text + "\n")
    r = get_parser("nvidia_smi_csv").read(str(path))
    _check(r)
    assert (r.parsed, r.irrelevant, r.malformed) == (2, 2, 3)
    t = r.tables["telemetry"]
    assert t["host"].tolist() == ["node0007", "node0007"]
    assert t["clock_event_reasons_flag"].tolist() == [4, 26]
    assert np.isnan(t["temp_c"].iloc[1]) and np.isnan(t["power_w"].iloc[1])
    assert t["pstate"].tolist() == [0, 0] and t["mem_used_mib"].iloc[0] == 81000
    assert "name" not in t
    q = r.quarantine.set_index("lineno")["reason"]
    assert "temperature.gpu" in q[4] and "expected 10" in q[5] and "not a time" in q[6]


def test_generic_csv_mapping_and_host_column(tmp_path: Path) -> None:
    text = ("timestamp,node,gpu,GPU Temp,power_w,throughput\n"
            "2024-06-03T14:00:00Z,node0001,0,55,600,1.5\n"
            "2024-06-03T16:00:00+02:00,node0002,1,56,610,1.4\n")
    path = tmp_path / "tele.csv"
    path.write_text(text)
    r = get_parser("telemetry_csv").read(str(path), columns={"GPU Temp": "temp_c"})
    _check(r)
    t = r.tables["telemetry"]
    assert t["host"].tolist() == ["node0001", "node0002"]
    assert t["time"].tolist() == [pd.Timestamp("2024-06-03T14:00:00Z")] * 2
    assert t["temp_c"].tolist() == [55, 56]
    assert "throughput" not in t and any("throughput" in n for n in r.notes)


def test_no_time_column_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b_c\n1,2\n")
    r = get_parser("telemetry_csv").read(str(path))
    _check(r)
    assert r.malformed == 1 and "no time column" in r.quarantine["reason"].iloc[0]


def test_sniff() -> None:
    head = (H200 / "nvidia_smi_query.csv").read_text().splitlines()[:3]
    assert get_parser("nvidia_smi_csv").sniff("q.csv", head) > 0.9
    assert get_parser("telemetry_csv").sniff("q.csv", ["time,host,gpu,temp_c"]) > 0.5
    assert get_parser("telemetry_csv").sniff("t.csv", ["ticket_id,opened_at,host"]) == 0


_smi = (H200 / "nvidia_smi_query.csv").read_text().splitlines()[:4]
_fragments = st.sampled_from([*_smi, "", "time,host,gpu,temp_c", "2024-06-03T14:00:00Z,n1,0,55", "t_unix,power_w",
                              "1796001920.25,100", "x,y", '"a,b",c'])
_line = st.one_of(_fragments, st.text(max_size=60))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=10), st.sampled_from(["telemetry_csv", "nvidia_smi_csv"]))
def test_fuzz_no_exception_escapes(lines: list[str], source: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "n1.csv"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        _check(get_parser(source).read(str(path)))
