"""ipmitool sel list / elist reader (reliab.io.formats.sel)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reliab.io.formats.sel  # noqa: F401  (registers sel)
from reliab import schema
from reliab.errors import ParseError
from reliab.io._registry import FileResult, get_parser

# real `ipmitool sel list` lines (ipmitool docs; test fixtures of Meta's facebookresearch/gcm
# health checks) and elist forms
LINES = [
    "  11 | 02/06/2020 | 18:30:50 | Power Supply #0xfb | Power Supply AC lost | Asserted",
    " 1 | 12/24/2022 | 13:58:36 | Voltage #0x4d | Upper Non-critical going high | Asserted",
    "  2 | 01/18/2023 | 14:49:30 | Critical Interrupt #0x90 | Bus Fatal Error | Asserted",
    "  1a | 06/03/2024 | 14:01:55 | Power Supply #0xfb | Power Supply AC lost | Deasserted",
    "  1b | 06/03/2024 | 17:12:16 UTC | Temperature GPU3_Temp | Upper Critical going high | Asserted"
    " | Reading 92 > Threshold 90 degrees C",
    "  1c | 06/03/2024 | 16:12:16 +01:00 | Power Supply PS2 Status | Failure detected | Asserted",
    "  1d | 06/03/2024 | 14:01:55 | Event Logging Disabled #0x07 | Log area reset/cleared | Asserted",
    "  1e | 06/03/2024 | 14:01:56 | Processor CPU1 Status | IERR | Asserted",
    "  1f | 06/03/2024 | 14:01:57 | Memory #0x01 | Uncorrectable ECC | Asserted",
    "  20 | 06/03/2024 | 14:01:58 | Memory #0x01 | Correctable ECC | Asserted",
    "  21 | 06/03/2024 | 14:01:59 | Critical Interrupt #0x91 | PCI SERR | Asserted",
    "  22 | 06/03/2024 | 14:02:00 | Temperature #0x30 | Upper Non-critical going high | Asserted",
    "  23 | 06/03/2024 | 14:02:01 | Power Unit #0x01 | AC lost | Asserted",
    "  24 | 06/03/2024 | 14:02:02 | Processor #0x02 | Uncorrectable machine check exception | Asserted",
    "  25 | 06/03/2024 | 14:02:03 | Processor #0x02 | Thermal Trip | Asserted",
]
KEYS = [
    "sel:power_supply_ac_lost", "sel:voltage_upper_noncritical", "sel:critical_interrupt",
    "sel:power_supply_ac_lost_deasserted", "sel:temperature_upper_critical", "sel:power_supply_failure",
    "sel:other", "sel:processor_ierr", "sel:memory_uncorrectable_ecc", "sel:memory_correctable_ecc",
    "sel:critical_interrupt", "sel:temperature_upper_noncritical", "sel:power_unit_ac_lost",
    "sel:processor_mce", "sel:processor_thermal_trip",
]


def _write(tmp_path: Path, lines: list[str], name: str = "node0421.sel") -> str:
    path = tmp_path / "ipmi" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _check(result: FileResult) -> None:
    assert result.lines == result.parsed + result.irrelevant + result.malformed
    schema.validate(result.tables["signals"], "signals")
    schema.validate(result.quarantine, "quarantine")
    assert len(result.quarantine) == result.malformed


def test_keys_severity_and_message(tmp_path: Path) -> None:
    r = get_parser("sel").read(_write(tmp_path, ["SEL has no entries", *LINES]))
    _check(r)
    assert (r.lines, r.parsed, r.irrelevant, r.malformed) == (16, 15, 1, 0)
    s = r.tables["signals"]
    assert s["signal"].tolist() == KEYS
    assert set(s["host"]) == {"node0421"}
    assert s["severity"].tolist()[:7] == ["critical", "warning", "critical", "info", "critical", "critical", "info"]
    assert s["message"].iloc[4].startswith("Temperature GPU3_Temp | Upper Critical going high")
    assert s["time"].iloc[0] == pd.Timestamp("2020-02-06T18:30:50Z")
    assert s["time"].iloc[5] == pd.Timestamp("2024-06-03T15:12:16Z")  # +01:00 offset
    assert s["origin"].iloc[0].endswith("node0421.sel:2")


def test_named_zone_needs_tz(tmp_path: Path) -> None:
    """An ambiguous zone name (CST: China or US Central) needs tz=; an unambiguous one does not."""
    line = "   4 | 06/03/2024 | 03:21:32 CST | Power Supply PS2 Status | Failure detected | Asserted"
    path = _write(tmp_path, [line])
    r = get_parser("sel").read(path)
    _check(r)
    assert r.malformed == 1 and "CST" in r.quarantine["reason"].iloc[0]
    assert r.quarantine["lineno"].iloc[0] == 1
    r = get_parser("sel").read(path, tz="America/Chicago")
    assert r.tables["signals"]["time"].iloc[0] == pd.Timestamp("2024-06-03T08:21:32Z")
    with pytest.raises(ParseError, match="node0421.sel:1"):
        get_parser("sel").read(path, strict=True)
    r = get_parser("sel").read(_write(tmp_path, [line.replace("CST", "SAST")], "n2.sel"))
    assert r.tables["signals"]["time"].iloc[0] == pd.Timestamp("2024-06-03T01:21:32Z")


def test_host_option_and_compressed_name(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "node0007.sel.gz"
    path.write_bytes(gzip.compress(("\n".join(LINES[:2]) + "\n").encode()))
    assert get_parser("sel").read(str(path)).tables["signals"]["host"].tolist() == ["node0007"] * 2
    assert set(get_parser("sel").read(str(path), host="h1").tables["signals"]["host"]) == {"h1"}


def test_malformed_lines(tmp_path: Path) -> None:
    lines = ["   7 | Pre-Init  |0000000005| System Event #0x00 | Timestamp Clock Sync | Asserted",
             "   8 | 13/45/2024 | 14:01:55 | Memory #0x01 | Correctable ECC | Asserted",
             "   9 | 06/03/2024 | 14:01:55"]
    r = get_parser("sel").read(_write(tmp_path, lines))
    _check(r)
    assert r.malformed == 3
    assert "Pre-Init" in r.quarantine["reason"].iloc[0]
    assert "MM/DD/YYYY" in r.quarantine["reason"].iloc[1]


def test_sniff() -> None:
    assert get_parser("sel").sniff("ipmi/node1.sel", LINES[:2]) > 0.8
    assert get_parser("sel").sniff("x.log", ["JobID|State|Start|End"]) == 0


_fragments = st.sampled_from([*LINES, "", "SEL has no entries", "|||||", " 1 | 06/03/2024 | 25:00:00 | a | b | c"])
_line = st.one_of(_fragments, st.text(max_size=80), _fragments.map(lambda s: s.replace("|", "", 1)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=12))
def test_fuzz_no_exception_escapes(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "n1.sel"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        _check(get_parser("sel").read(str(path)))


# --- real hand-over shapes (real-shaped, each names the thread it follows)

@pytest.mark.parametrize(("line", "key", "when"), [
    # ipmitool#385: two-digit year and a zone name
    ("    e | 06/10/22 | 19:31:43 CEST | Memory #0x87 | Correctable ECC () | Asserted",
     "sel:memory_correctable_ecc", "2022-06-10T17:31:43Z"),
    ("  3a | 12/14/22 | 23:09:44 CET | Memory #0x88 | Correctable ECC (CPU0_G1) | Asserted",
     "sel:memory_correctable_ecc", "2022-12-14T22:09:44Z"),
    # ipmitool#346: 12-hour clock
    ("1b5b | 05/27/2022 | 06:12:15 PM UTC | Temperature PSU1_Inlet_Temp | Upper Non-critical going high | Deasserted",
     "sel:temperature_upper_noncritical_deasserted", "2022-05-27T18:12:15Z"),
])
def test_dates_clocks_and_zones(tmp_path: Path, line: str, key: str, when: str) -> None:
    r = get_parser("sel").read(_write(tmp_path, [line]))
    _check(r)
    assert r.tables["signals"][["signal", "time"]].values.tolist() == [[key, pd.Timestamp(when)]]


def test_unset_bmc_clock_is_flagged_never_dated(tmp_path: Path) -> None:
    """Real-shaped (open-power/op-build#594 01/01/2000; ipmitool#346 Pre-Init; FreeIPMI PostInit)."""
    lines = ["   1 | 01/01/2000 | 00:15:20 | System Firmware Progress #0x05 | Motherboard initialization | Asserted",
             "   2 | 01/01/1970 | 00:00:07 | Power Supply #0xfb | Failure detected | Asserted",
             "   3 |  Pre-Init  |0000000116| reserved #0xff |  | Asserted",
             "   4 | 06/03/2024 | 14:01:55 | Power Supply #0xfb | Failure detected | Asserted"]
    r = get_parser("sel").read(_write(tmp_path, lines))
    _check(r)
    assert r.tables["signals"]["time"].tolist() == [pd.Timestamp("2024-06-03T14:01:55Z")]
    reasons = r.quarantine["reason"].tolist()
    assert len(reasons) == 3 and all("BMC clock was" in x and "no wall-clock time" in x for x in reasons)


def test_freeipmi_tables_duplicates_and_critical_records(tmp_path: Path) -> None:
    """Real-shaped (check_ipmi_sensor#26 'ipmi-sel --output-event-state'; facebook/openbmc#273
    duplicated record; IPMI OS Critical Stop and severity transitions, ipmitool ipmi_sel.h)."""
    lines = ["ID   | Date        | Time     | Name                    | Type              | State    | Event",
             "1    | PostInit    | PostInit | Power Supply PS2 Status | Power Supply      | Critical | Power Supply Failure detected",
             "4    | Jul-20-2017 | 10:29:49 | Power Supply PS2 Status | Power Supply      | Critical | Power Supply Failure detected",
             "6    | Jul-20-2017 | 10:37:20 | Sensor #0               | OS Critical Stop  | Warning  | OS Graceful Shutdown"]
    r = get_parser("sel").read(_write(tmp_path, lines))
    _check(r)
    sig = r.tables["signals"]
    assert sig[["signal", "severity"]].values.tolist() == [["sel:power_supply_failure", "critical"],
                                                           ["sel:os_graceful_shutdown", "warning"]]
    assert r.malformed == 1
    lines = ["   1 | 05/14/2026 | 20:40:26 | Processor #0x40 | Uncorrectable machine check exception | Asserted",
             "   1 | 05/14/2026 | 20:40:26 | Processor #0x40 | Uncorrectable machine check exception | Asserted",
             "   2 | 05/14/2026 | 20:41:00 | OS Critical Stop #0x46 | Run-time critical stop | Asserted",
             "   3 | 05/14/2026 | 20:42:00 | Power Supply PS1 Status | Transition to Non-recoverable | Asserted",
             "   4 | 05/14/2026 | 20:43:00 | Power Supply #0x51 | Upper Non-recoverable going high | Asserted",
             "   5 | 05/14/2026 | 20:44:00 | System Event #0x4a | Undetermined system hardware failure | Asserted"]
    r = get_parser("sel").read(_write(tmp_path, lines, "n2.sel"))
    sig = r.tables["signals"]
    assert sig["signal"].tolist() == ["sel:processor_mce", "sel:os_critical_stop", "sel:power_supply_nonrecoverable",
                                      "sel:power_supply_upper_nonrecoverable", "sel:system_hardware_failure"]
    assert set(sig["severity"]) == {"critical"} and r.irrelevant == 1


def test_empty_sel_is_a_sel_without_events(tmp_path: Path) -> None:
    path = _write(tmp_path, ["SEL has no entries"], "node9.txt")
    res = __import__("reliab").ingest(path)
    assert res.sources[path].source == "sel" and len(res.signals) == 0
    assert res.accounting[["lines", "irrelevant"]].values.tolist() == [[1, 1]]


def test_freeipmi_comma_separated_output(tmp_path: Path) -> None:
    """``ipmi-sel --comma-separated-output`` (FreeIPMI ipmi-sel(8)): the header and PostInit
    record quoted by prometheus-community/ipmi_exporter (collector_sel_events.go), then the
    check_ipmi_sensor#26 records in that form; headerless (``--no-header-output``, as
    ipmi_exporter runs it) with and without the State column; commas past the last column
    belong to the event text."""
    import reliab

    lines = ["ID,Date,Time,Name,Type,State,Event",
             "3,PostInit,PostInit,Sensor #211,Memory,Warning,Correctable memory error ; Event Data3 = 34h",
             "4,Jul-20-2017,10:29:49,Power Supply PS2 Status,Power Supply,Critical,Power Supply Failure detected",
             "6,Jul-20-2017,10:37:20,Sensor #0,OS Critical Stop,Warning,OS Graceful Shutdown"]
    path = _write(tmp_path, lines, "n1.txt")
    res = reliab.ingest(path)
    assert res.sources[path].source == "sel"
    sig = res.signals
    assert sig[["signal", "severity"]].values.tolist() == [["sel:power_supply_failure", "critical"],
                                                           ["sel:os_graceful_shutdown", "warning"]]
    assert sig["time"].tolist() == [pd.Timestamp("2017-07-20T10:29:49Z"), pd.Timestamp("2017-07-20T10:37:20Z")]
    assert res.accounting[["lines", "parsed", "irrelevant", "malformed"]].values.tolist() == [[4, 2, 1, 1]]
    headerless = ["4,Jul-20-2017,10:29:49,Power Supply PS2 Status,Power Supply,Critical,Power Supply Failure detected",
                  "7,Jul-21-2017,08:00:00,Chassis Intru,Physical Security,Critical,General Chassis Intrusion, door open"]
    r = get_parser("sel").read(_write(tmp_path, headerless, "n2.txt"))
    _check(r)
    assert r.tables["signals"]["signal"].tolist() == ["sel:power_supply_failure", "sel:other"]
    assert r.tables["signals"]["severity"].tolist() == ["critical", "critical"]
    assert "door open" in r.tables["signals"]["message"].iloc[1]
    stateless = ["9,Jul-22-2017,09:00:00,Sensor #1,OS Critical Stop,Run-time Critical Stop"]
    r = get_parser("sel").read(_write(tmp_path, stateless, "n3.txt"))
    assert r.tables["signals"][["signal", "severity"]].values.tolist() == [["sel:os_critical_stop", "critical"]]
    assert get_parser("sel").sniff(str(tmp_path / "x.txt"), ["a,b,c", "1,2,3"]) == 0.0


def test_freeipmi_event_wordings_take_the_ipmitool_keys(tmp_path: Path) -> None:
    """FreeIPMI prints its own short strings for the same IPMI sensor offsets (FreeIPMI
    libfreeipmi/spec/ipmi-sensor-and-event-code-tables-spec.c; the memory wording as in the
    record ipmi_exporter quotes, 'Correctable memory error ; Event Data3 = 34h'): they take the
    keys of ipmitool's wordings (include/ipmitool/ipmi_sel.h)."""
    lines = ["ID,Date,Time,Name,Type,State,Event",
             "3,Jul-20-2017,10:00:00,Sensor #211,Memory,Warning,Correctable memory error ; Event Data3 = 34h",
             "4,Jul-20-2017,10:00:01,Sensor #211,Memory,Critical,Uncorrectable memory error ; Event Data3 = 34h",
             "5,Jul-20-2017,10:00:02,CPU1 Status,Processor,Critical,Machine Check Exception",
             "6,Jul-20-2017,10:00:03,CPU1 Status,Processor,Warning,Correctable Machine Check Error",
             "7,Jul-20-2017,10:00:04,PS1 Status,Power Supply,Critical,Power Supply input lost (AC/DC)",
             "8,Jul-20-2017,10:00:05,PS1 Status,Power Supply,Critical,Power Supply input lost or out-of-range",
             "9,Jul-20-2017,10:00:06,PS1 Status,Power Supply,Warning,Power Supply input out-of-range, but present",
             "10,Jul-20-2017,10:00:07,Sensor #1,OS Critical Stop,Critical,Run-time Critical Stop"]
    r = get_parser("sel").read(_write(tmp_path, lines, "n4.txt"))
    _check(r)
    assert r.tables["signals"]["signal"].tolist() == [
        "sel:memory_correctable_ecc", "sel:memory_uncorrectable_ecc", "sel:processor_mce",
        "sel:processor_correctable_mce", "sel:power_supply_ac_lost", "sel:power_supply_ac_lost",
        "sel:power_supply_ac_out_of_range", "sel:os_critical_stop"]
    assert reliab.io.formats.sel.event_key("Processor #0x02", "Uncorrectable machine check exception") == "processor_mce"
    assert reliab.io.formats.sel.event_key("Memory #0x01", "Correctable ECC logging limit reached") == "memory_correctable_ecc"


def test_ipmitool_csv_sel_list_is_not_taken_for_freeipmi(tmp_path: Path) -> None:
    """Real-shaped 'ipmitool -c sel list' (ipmitool lib/ipmi_sel.c csv_output: the '|' cells
    with commas, hex record ids, Pre-Init records): read like 'sel list', never as FreeIPMI's
    columns (its sixth cell is the direction, not an event)."""
    lines = ["1,09/07/2021,12:12:35,Drive Slot / Bay #0x42,Drive Present,Deasserted",
             "2,09/07/2021,12:12:36,Drive Slot / Bay #0x42,In Failed Array,Asserted",
             "e,Pre-Init,0000000093,System ACPI Power State #0xd5,S0/G0: working,Asserted",
             "1f,09/08/2021,06:34:16,Power Supply #0x3b,Power Supply AC lost,Asserted"]
    path = _write(tmp_path, lines, "n5.txt")
    assert get_parser("sel").sniff(path, lines) == 0.9
    r = get_parser("sel").read(path)
    _check(r)
    assert r.tables["signals"]["signal"].tolist() == ["sel:other_deasserted", "sel:other",
                                                      "sel:power_supply_ac_lost"]
    assert r.tables["signals"]["time"].iloc[2] == pd.Timestamp("2021-09-08T06:34:16Z")
    assert r.malformed == 1 and "Pre-Init" in r.quarantine["reason"].iloc[0]
