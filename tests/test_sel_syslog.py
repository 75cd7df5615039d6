"""SEL records that reached syslog: OpenBMC ``sel-logger`` journal lines and ``/var/log/ipmi_sel``.

The verbatim lines are those of ``tests/reference/real_world/sel`` (an OpenBMC BMC's journal
and ipmi_sel file from the OpenBMC mailing list, an NVIDIA BlueField BMC's forwarded record);
expectations by hand from phosphor-sel-logger (``threshold_event_monitor.hpp``: a low
threshold deasserted reads "going high"), IPMI v2.0 table 42-2 (threshold offsets) and
intel-ipmi-oem ``sdrutils.hpp`` (D-Bus namespace -> sensor type).  Large files take the bulk
route (:mod:`reliab.io.formats._sel_syslog_bulk`), which must give the per-line route's
tables, quarantine and counts on any mix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _routes import assert_same_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.io import _fastscan
from reliab.io.formats import sel

_CORPUS = Path(__file__).resolve().parent / "reference" / "real_world" / "sel"
_JOURNAL = (_CORPUS / "openbmc-ml-2020-04-sel-logger-journal-thresholds.log").read_text().splitlines()
_IPMI_SEL = (_CORPUS / "openbmc-ml-2020-04-ipmi-sel-rsyslog-thresholds.log").read_text().splitlines()
_OTHER = sorted({line for p in _CORPUS.glob("*.log") for line in p.read_text(errors="replace").splitlines()})
#: shapes the corpus lines do not show (deasserted, the old D-Bus path sensor, RFC 3339 journal
#: stamps, other record types) and near misses (impossible dates, no leap day, broken fields)
_VARIANTS = [
    "Apr 25 15:17:02 lon sel-logger[240]: battery sensor crossed a warning low threshold going high."
    " Reading=2.600000 Threshold=2.500000.",
    "Sep 30 01:39:48 demoboard sel-logger[1187]: /xyz/openbmc_project/sensors/temperature/CPU1_Temp sensor crossed"
    " a critical high threshold going high. Reading=101.000000 Threshold=100.000000.",
    "2024-06-18T11:05:45.926095+03:00 bmc-7 sel-logger[88]: fan3 sensor crossed a critical low threshold going low."
    " Reading=0.000000 Threshold=500.000000.",
    "Feb 29 10:00:00 lon sel-logger[240]: battery sensor crossed a warning low threshold going low."
    " Reading=0.344000 Threshold=2.500000.",
    "Feb 30 10:00:00 lon sel-logger[240]: battery sensor crossed a warning low threshold going low."
    " Reading=0.344000 Threshold=2.500000.",
    "Apr 25 24:16:36 lon sel-logger[240]: battery sensor crossed a warning low threshold going low."
    " Reading=0.344000 Threshold=2.500000.",
    "Apr 25 15:16:36 lon sel-logger[240]: battery sensor crossed a warning threshold going low. Reading=1 Threshold=2.",
    "2020-04-25T15:16:37.000001+02:00 4,2,59FFFF,20,/xyz/openbmc_project/sensors/temperature/CPU1_Temp,0",
    "2020-04-25T15:16:38Z 5,2,07FFFF,20,/xyz/openbmc_project/sensors/fan_tach/Fan_3,1",
    "2020-04-25T15:16:39.5-05:30 6,2,A64700,2000,/xyz/openbmc_project/sensors/oem_health/utilization,1",
    "2020-04-25T15:16:40.1+00:00 7,C0,0102030405,20,/xyz/openbmc_project/sensors/voltage/P12V,1",
    "2020-02-30T15:16:36.125187+00:00 8,2,50FFFF,20,/xyz/openbmc_project/sensors/voltage/battery,1",
    "2020-04-25T15:16:36.125187+00:00 9,2,50FFFF,20,/xyz/openbmc_project/sensors/voltage/battery,2",
    "2020-04-25T15:16:36.125187+00:00 1,2,50FFFF,20,/xyz/openbmc_project/sensors/voltage/battery,1",
    "2020-04-25T15:16:36.125187+00:00 1,2,50FFFF,20,/xyz/openbmc_project/sensors/voltage/bat\x1ctery,1",
    "Apr 25 15:16:36 lon sel-logger[240]: bat\x1ftery sensor crossed a warning low threshold going low."
    " Reading=0.344000 Threshold=2.500000.",
]


#: a central syslog file's other lines: the kernel corpus's lines holding a comma (verbatim), a
#: FreeIPMI comma-separated header and record, a non-ASCII first cell
_KERNEL = Path(__file__).resolve().parent / "reference" / "real_world" / "kernel"
_COMMAS = sorted({line for p in _KERNEL.glob("*.log") for line in p.read_text(errors="replace").splitlines()
                  if "," in line and "|" not in line})[::7]
_CSV = ["ID,Date,Time,Name,Type,State,Event", "12,Jul-20-2017,10:00:00,CPU1,Processor,Critical,IERR",
        "\u0661\u0662,Jul-20-2017,10:00:00,CPU1,Processor,Critical,IERR",
        "\x1cID | Date | Time | Name | Type | State | Event", "\x1f12\x1c,Jul-20-2017,10:00:00,CPU1,Processor,IERR",
        "ID | Date | Time | Name | Type | State | Event", "1c,\xa006/03/2024\u2000,14:01:55,Fan,Lower Critical,Asserted",
        "6,3995,258429745,-;IPv6: ADDRCONF(NETDEV_CHANGE): cali160c958f6d3: link becomes ready",
        "caf\u00e9, 1,2", "\u00b2\u0661,Jul-20-2017,10:00:00,CPU1,Processor,IERR",
        "[Tue Feb 14 18:48:32 2023] Hardware name: Supermicro SYS-6018R-WTR/X10DRW-i, BIOS 2.0 12/17/2015",
        "NVRM: Assertion failed: (a || b), x @ rs_server.c:259"]


def _read(path: Path, bulk: bool, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[Any, ...]:
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0 if bulk else 1 << 62)
    res = sel.read_sel(str(path), **options)
    return (res.lines, res.parsed, res.irrelevant, res.malformed), res.tables["signals"], res.quarantine


def _assert_same(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> pd.DataFrame:
    fast, slow = _read(path, True, monkeypatch, **options), _read(path, False, monkeypatch, **options)
    assert_same_reads(fast, slow, path)
    return fast[1]


def test_variants_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bmc.log"
    path.write_text("\n".join(_VARIANTS) + "\n")
    table = _assert_same(path, monkeypatch, year=2020)
    got = {o.rsplit(":", 1)[1]: (s, v) for o, s, v in zip(table["origin"], table["signal"], table["severity"],
                                                          strict=True)}
    assert got == {
        "1": ("sel:other_deasserted", "info"),  # a low threshold going high: the reading came back
        "2": ("sel:temperature_upper_critical", "critical"),  # the old sel-logger names the D-Bus path
        "3": ("sel:other", "critical"),
        "4": ("sel:other", "warning"),  # 2020 has 29 February
        # 5, 6: no 30 February, no hour 24 (malformed); 7: not the sel-logger message (irrelevant)
        "8": ("sel:temperature_upper_critical_deasserted", "info"),  # offset 9: Upper Critical going high
        "9": ("sel:fan_upper_noncritical", "warning"),  # offset 7: Upper Non-critical going high
        "10": ("sel:other", "info"),  # oem_health: not a threshold sensor of the map
        "11": ("sel:other", "info"),  # record type c0: an OEM record
        # 12: 30 February (malformed); 13: assert flag 2 is no flag (irrelevant)
        "14": ("sel:voltage_lower_noncritical", "warning"),
    }
    times = dict(zip((o.rsplit(":", 1)[1] for o in table["origin"]), table["time"], strict=True))
    assert times["3"] == pd.Timestamp("2024-06-18T08:05:45.926095Z")
    assert times["8"] == pd.Timestamp("2020-04-25T13:16:37.000001Z")
    assert times["10"] == pd.Timestamp("2020-04-25T20:46:39.5Z")
    res = sel.read_sel(str(path), year=2020)
    assert (res.malformed, res.irrelevant) == (3, 4)  # (15, 16: a separator U+001C/U+001F is a blank)


def test_sniff_takes_files_of_sel_records_not_syslog_holding_a_few(tmp_path: Path) -> None:
    import reliab

    records = tmp_path / "bmc7.log"
    records.write_text("\n".join(_JOURNAL + _IPMI_SEL) + "\n")
    assert reliab.ingest(str(records)).sources[str(records)].source == "sel"
    kernel = _KERNEL / "akash-support-209-xid79-dmesg-T.log"
    mixed = tmp_path / "syslog.log"
    mixed.write_text(kernel.read_text() + _JOURNAL[0] + "\n")
    assert sel._sniff(str(mixed), mixed.read_text().splitlines()[:50]) == 0.0


def _per_line_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines given to the per-line parser from now on, in order."""
    calls: list[str] = []
    full = sel.parse_sel_line

    def counted(text: str, ctx: Any) -> Any:
        calls.append(text)
        return full(text, ctx)

    monkeypatch.setattr(sel, "parse_sel_line", counted)
    return calls


def test_storm_lines_skip_the_per_line_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bmc.log"
    lines = (_JOURNAL + _IPMI_SEL) * 50
    path.write_text("\n".join(lines) + "\n")
    calls = _per_line_calls(monkeypatch)
    table = _assert_same(path, monkeypatch, year=2020)
    calls.clear()
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    sel.read_sel(str(path), year=2020)
    assert calls == []
    # every journal line; the records 2 and 3 once (written again: the same record); the two
    # records of id 1 alternate, so neither repeats the last one written under its id
    assert len(table) == 50 * 4 + 50 * 2 + 2


def test_comma_noise_skips_the_per_line_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Syslog lines with a comma and no SEL shape are irrelevant without the per-line parser,
    until a comma-separated SEL header: from there on it reads commas as cells (failed before
    with the pipe line: every line after it went to the per-line parser)."""
    path = tmp_path / "syslog.log"
    noise = _COMMAS[:3]
    pipes = _CSV[-1]  # ('|' but no table: read by the per-line parser, it changes nothing)
    path.write_text("\n".join([*noise, _IPMI_SEL[2], pipes, *noise, _CSV[0], *noise]) + "\n")
    calls = _per_line_calls(monkeypatch)
    monkeypatch.setattr(_fastscan, "FAST_MIN_BYTES", 0)
    sel.read_sel(str(path), year=2020)
    assert calls == [pipes, _CSV[0], *noise]
    assert len(noise) == 3
    _assert_same(path, monkeypatch, year=2020)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_JOURNAL + _IPMI_SEL + _VARIANTS + _OTHER + _COMMAS + _CSV), min_size=1, max_size=60),
       st.sampled_from([None, 2020]), st.sampled_from([None, "Europe/Berlin"]), st.sampled_from([3, 7, 1000]))
def test_bulk_route_equals_per_line_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str],
                                          year: int | None, tz: str | None, group: int) -> None:
    monkeypatch.setattr(_fastscan, "BATCH_ROWS", 5)
    monkeypatch.setattr(_fastscan, "BULK_ROWS", group)
    path = tmp_path / "node07.log"
    path.write_text("\n".join(lines) + "\n")
    _assert_same(path, monkeypatch, year=year, tz=tz)
