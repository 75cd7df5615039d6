"""Kernel-log shapes of real hand-overs, on real-shaped text (each test names the capture or
source its lines follow), and the hostile inputs of a kernel capture.

Real-shaped = written by us in the exact form of a cited real excerpt; the verbatim excerpts
themselves are scored in ``tests/test_real_world.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import reliab
from reliab.io.formats._timestamps import parse_header
from reliab.io.formats.kernel import read_kernel

XID79 = "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _read(tmp_path: Path, text: str, name: str = "node7.log", **options):
    path = tmp_path / name
    path.write_text(text)
    res = read_kernel(str(path), **options)
    assert res.lines == res.parsed + res.irrelevant + res.malformed == text.count("\n")
    assert len(res.quarantine) == res.malformed
    return res, res.tables["signals"]


# --- dmesg -H / --reltime (util-linux dmesg.c print_record: "[%b%d %H:%M]" then "[  %+8.06f]")

RELTIME = """\
[Jun26 06:24] pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0
[  +0.000004] pcieport 0000:17:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
[  +0.000898] pcieport 0000:17:01.0:   device [8086:6f08] error status/mask=00004020/00000000
[  +1.050439] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[ +12.000000] usb 1-1: new high-speed USB device number 3 using xhci_hcd
[Jun26 06:25] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0)
"""


def test_reltime_minute_lines_anchor_the_increments(tmp_path: Path) -> None:
    """Real-shaped (rwth-i6/returnn#1500 lines under their minute line): every line advances
    the clock, including noise; the AER report's severity line is its continuation."""
    res, sig = _read(tmp_path, RELTIME, year=2024)
    assert sig["signal"].tolist() == ["pcie:aer_fatal", "xid:79", "edac:correctable"]
    assert sig["time"].tolist() == [_ts("2024-06-26 06:24:00"), _ts("2024-06-26 06:24:01.051341"),
                                    _ts("2024-06-26 06:25:00")]
    assert res.irrelevant == 3 and res.malformed == 0


def test_reltime_year_from_mtime_is_said_and_tz_applies(tmp_path: Path) -> None:
    path = tmp_path / "n.log"
    path.write_text(RELTIME)
    os.utime(path, (_ts("2025-07-01").timestamp(),) * 2)
    res = read_kernel(str(path), tz="Europe/Berlin")
    assert res.tables["signals"]["time"].iloc[0] == _ts("2025-06-26 04:24:00")
    assert any("modification time" in n and "inferred" in n for n in res.notes)


def test_reltime_lines_before_the_first_minute(tmp_path: Path) -> None:
    """An excerpt that starts mid-minute: placed back from the first minute line; with no
    minute line at all, back from the file's modification time (said in the notes)."""
    head = "[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0\n"
    _, sig = _read(tmp_path, head + "[  +2.000000] noise\n[Jun26 06:24] noise\n", year=2024)
    assert sig["time"].tolist() == [_ts("2024-06-26 06:23:58")]
    path = tmp_path / "cut.log"
    path.write_text(head + "[  +0.500000] noise\n")
    os.utime(path, (_ts("2024-01-21 10:00:00").timestamp(),) * 2)
    res = read_kernel(str(path))
    assert res.tables["signals"]["time"].tolist() == [_ts("2024-01-21 09:59:59.5")]
    assert any("without any '[MonDD HH:MM]' line" in n for n in res.notes)


def test_reltime_header_shapes() -> None:
    assert parse_header("[+0.000001]NVRM: x").delta == pytest.approx(1e-6)  # newer util-linux
    assert parse_header("[Jun26 06:24] x").partial == (6, 26, 6, 24, 0)
    assert parse_header("[Jun32 06:24] x").error is not None


# --- multi-line reports: one event each

def test_sxid_report_is_one_signal(tmp_path: Path) -> None:
    """Real-shaped (NVIDIA/nvtrust#124; nvswitch _nvswitch_dump_error_entry): first line, then
    'Severity …' and 'Data {…}' lines of the same switch and code; a cut report's first
    remaining line stands for its event."""
    lines = [
        "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Data {0x0000002b, 0x0000002b}",
        "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt",
        "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Severity 0 Engine instance 44 Sub-engine instance 00",
        "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Data {0x0000002c, 0x0000002c}",
        "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
        "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine instance 48 Sub-engine instance 00",
    ]
    text = "".join(f"[   38.{k:06d}] {line}\n" for k, line in enumerate(lines))
    _, sig = _read(tmp_path, text, boot_time="2025-10-01T00:00:00Z")
    assert sig["signal"].tolist() == ["sxid:22013", "sxid:22013", "sxid:20034"]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["1", "2", "5"]
    assert sig["severity"].tolist() == ["warning", "warning", "critical"]
    assert "first line of the report not in the capture" in sig["message"].iloc[0]


@pytest.mark.parametrize("second", [
    "NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",  # driver line after the Xid
    "NVRM: GPU at 0000:91:00.0 has fallen off the bus.",  # older drivers
])
def test_bus_drop_after_xid79_is_the_same_event(tmp_path: Path, second: str) -> None:
    """Real-shaped (leptonai/gpud sxid README; akash-network/support#209)."""
    text = f"[Fri Apr  5 21:29:39 2024] {XID79}\n[Fri Apr  5 21:29:39 2024] {second}\n"
    res, sig = _read(tmp_path, text)
    assert sig["signal"].tolist() == ["xid:79"] and res.irrelevant == 1
    # another GPU's drop, or the same GPU much later, is its own event
    text += "[Fri Apr  5 21:29:40 2024] NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.\n"
    text += "[Fri Apr  5 22:29:39 2024] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.\n"
    _, sig = _read(tmp_path, text)
    assert sig["signal"].tolist() == ["xid:79"] * 3
    assert sig["gpu"].tolist() == ["0000:91:00", "0000:18:00", "0000:91:00"]


def test_bus_drop_without_xid_is_xid79_at_the_notice(tmp_path: Path) -> None:
    """Real-shaped (NVIDIA/NVSentinel#155): the 3-line notice names the GPU on its first line,
    continuation lines are indented and carry no time."""
    text = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.\n"
            "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    _, sig = _read(tmp_path, text, boot_time="2025-10-25T00:00:00Z")
    assert sig[["signal", "gpu", "severity"]].values.tolist() == [["xid:79", "0000:b3:00", "critical"]]
    assert sig["origin"].iloc[0].endswith(":1")
    assert sig["time"].iloc[0] == _ts("2025-10-25 00:30:43.308145")


def test_aer_reports_keys_and_continuations(tmp_path: Path) -> None:
    """Real-shaped (wilicc/gpu-burn#1, minisforum-docs/MS-02-Ultra#10; Linux aer.c): corrected,
    non-fatal and fatal reports get distinct keys; 'PCIe Bus Error: severity=' continues the
    report before it and stands alone only when that report's first line is missing."""
    lines = [
        "pcieport 0000:00:1d.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e8(Receiver ID)",
        "pcieport 0000:00:02.0: AER: Corrected error received: id=0010",
        "pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, id=0010(Transmitter ID)",
        "pcieport 0000:80:1b.4: AER: Uncorrectable (Non-Fatal) error message received from 0000:80:1b.4",
        "pcieport 0000:80:1b.4: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Receiver ID)",
        "pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010",
        "xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)",
        "pcieport 0000:80:1b.4: AER: device recovery failed",
    ]
    text = "".join(f"2024-06-03T14:02:{k:02d}+00:00 n1 kernel: {line}\n" for k, line in enumerate(lines))
    _, sig = _read(tmp_path, text)
    assert sig["signal"].tolist() == ["pcie:aer_corrected", "pcie:aer_corrected", "pcie:aer_nonfatal",
                                      "pcie:aer_fatal"]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["1", "2", "4", "6"]
    assert sig["severity"].tolist() == ["warning", "warning", "error", "critical"]


# --- new keys

@pytest.mark.parametrize(("message", "signal", "severity"), [
    ("mce: [Hardware Error]: Machine check events logged", "mce:events_logged", "warning"),
    ("EDAC MC1: 262 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0) OVERFLOW",
     "edac:correctable", "warning"),
    ("EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 page:0x0 offset:0x0 grain:8)",
     "edac:correctable", "warning"),
    ("EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0", "edac:uncorrectable", "critical"),
    ("nvme nvme1: I/O 775 QID 2 timeout, aborting", "nvme:io_timeout", "error"),
    ("nvme nvme2: I/O 0 QID 0 timeout, reset controller", "nvme:io_timeout", "error"),
    ("nvme nvme2: Removing after probe failure status: -19", "nvme:removed", "critical"),
    ("mlx5_core 0000:1a:00.0: mlx5_pcie_event:299:(pid 9): Detected insufficient power on the PCIe slot (27W).",
     "nic:pcie_power", "warning"),
    ("{1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 0", "apei:hardware_error",
     "error"),
])
def test_new_kernel_keys(tmp_path: Path, message: str, signal: str, severity: str) -> None:
    """Message texts from the cited Linux sources and corpus captures (see _kmsg)."""
    _, sig = _read(tmp_path, f"Sep 16 19:51:15 host7 kernel: [    0.064261] {message}\n", year=2018)
    assert (sig["signal"].iloc[0], sig["severity"].iloc[0], sig["host"].iloc[0]) == (signal, severity, "host7")


def test_corrected_errors_are_never_root_causes() -> None:
    """A CE storm and an MCE notice inside a job's window leave the NCCL timeout the root cause."""
    t = pd.Timestamp("2024-06-03 14:00", tz="UTC")
    sig = pd.DataFrame({
        "time": [t - pd.Timedelta(minutes=m) for m in (3, 2, 1)], "host": ["n1", "n1", None],
        "gpu": [None] * 3, "job_id": [None, None, "7"], "source": ["kernel", "kernel", "nccl"],
        "signal": ["edac:correctable", "mce:events_logged", "nccl:watchdog_timeout"],
        "severity": ["warning", "warning", "error"], "message": ["MC0: 1 CE", "x", "rank 0: timeout"],
        "origin": ["a:1", "a:2", "b:1"]})
    jobs = pd.DataFrame({"job_id": ["7"], "state": ["FAILED"], "start": [t - pd.Timedelta(hours=5)], "end": [t],
                         "nodelist": ["n1"], "origin": ["s:2"]})
    from reliab import schema
    inter = reliab.taxonomy.attribute(schema.conform(sig, "signals"), schema.conform(jobs, "jobs"),
                                      policy="training-run")
    assert inter["category"].tolist() == ["NCCL Watchdog Timeouts"]
    assert inter["root_signal"].tolist() == ["nccl:watchdog_timeout"]


# --- timestamp shapes

def test_kmsg_localized_months_and_ipv6_hosts(tmp_path: Path) -> None:
    """/dev/kmsg records (Linux Documentation/ABI/testing/dev-kmsg), a journal in a locale
    with dotted month names (hirschmann/nbfc#181), an IPv6 HOSTNAME (RFC 5424 §6.2.4)."""
    _, sig = _read(tmp_path, f"6,3964,206764307,-;{XID79}\n", boot_time="2024-01-01T00:00:00Z")
    assert sig["time"].iloc[0] == _ts("2024-01-01 00:03:26.764307")  # 206764307 us after boot
    _, sig = _read(tmp_path, "jan. 29 20:50:17 kevin kernel: pcieport 0000:00:1c.5: AER: Corrected error"
                   " received: id=00e5\nokt 3 01:02:03 kevin kernel: mce: [Hardware Error]: Machine check"
                   " events logged\n", year=2017)
    assert sig["time"].tolist() == [_ts("2017-01-29 20:50:17"), _ts("2017-10-03 01:02:03")]
    assert set(sig["host"]) == {"kevin"}
    _, sig = _read(tmp_path, f"2024-06-03T14:02:11Z 2001:db8::7 kernel: {XID79}\n"
                   f"Jun  3 14:02:11 fe80::1%eth0 kernel: {XID79}\n", year=2024)
    assert sig["host"].tolist() == ["2001:db8::7", "fe80::1%eth0"]


def test_more_localized_months(tmp_path: Path) -> None:
    """journalctl in a Polish, Portuguese or Russian locale prints its own %b."""
    text = "".join(f"{mon} 12 08:15:02 n1 kernel: {XID79}\n" for mon in ("kwi", "out", "дек"))
    _, sig = _read(tmp_path, text, year=2023)
    assert sig["time"].tolist() == [_ts("2023-04-12 08:15:02"), _ts("2023-10-12 08:15:02"),
                                    _ts("2023-12-12 08:15:02")]


NO_CLOCK = f"""\
kernel: {XID79}
kernel: NVRM: GPU at PCI:0000:91:00: GPU-0b8c5a1e-33f1-4a8f-9f8e-1b2c3d4e5f60
NVRM: Xid (PCI:0000:92:00): 48, pid=1234, name=python, An uncorrectable double bit error
"""


def test_excerpt_without_dates_gets_the_mtime(tmp_path: Path) -> None:
    """Real-shaped (an issue comment pasting only 'kernel: NVRM: Xid …' with the syslog date
    and host cut away): recognised, read with the file's mtime, and the notes say so."""
    path = tmp_path / "excerpt.txt"
    path.write_text(NO_CLOCK)
    os.utime(path, (1717200000, 1717200000))
    assert reliab.ingest(path).sources[str(path)].source == "kernel"
    res = read_kernel(str(path))
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["xid:79", "xid:48"]
    assert (sig["time"] == _ts("2024-06-01 00:00:00")).all()
    assert res.malformed == 0 and any("modification time" in n for n in res.notes)
    # once a signal line of the file is dated, an undated one is not guessed
    path.write_text(f"2024-06-03T14:02:11Z n1 kernel: {XID79}\n" + NO_CLOCK)
    res = read_kernel(str(path))
    assert res.tables["signals"]["signal"].tolist() == ["xid:79"] and res.malformed == 2


# --- hostile input: a correct read or a quarantine row with its reason, never a wrong value

def test_printk_time_out_of_range(tmp_path: Path) -> None:
    text = ("[    1.000000] rtc_cmos 00:02: setting system clock to 2024-06-01T00:00:00 UTC (1717200000)\n"
            f"[99999999999999.0] {XID79}\n[12.0] {XID79}\n")
    res, sig = _read(tmp_path, text)
    assert sig["time"].tolist() == [_ts("2024-06-01 00:00:11")]
    assert "not a representable time" in res.quarantine["reason"].iloc[0]


def test_overflowing_rtc_epoch_keeps_every_line(tmp_path: Path) -> None:
    """Regression: the file is read to its end, 101 lines accounted, the raw Xid line
    quarantined with the reason naming the bad rtc line."""
    text = ("[    1.000000] rtc_cmos 00:02: setting system clock to 2024-06-01T00:00:00 UTC (" + "9" * 40 + ")\n"
            + "".join(f"[{k}.5] noise {k}\n" for k in range(99)) + f"[200.0] {XID79}\n")
    res, _ = _read(tmp_path, text)
    assert (res.lines, res.malformed) == (101, 1)
    assert "line 1: rtc epoch" in res.quarantine["reason"].iloc[0]


@pytest.mark.parametrize("stamp", ["9999-06-03T14:02:11Z", "1600-06-03T14:02:11Z", "0001-01-01T00:00:00Z",
                                   "2262-04-12T00:00:00Z"])
def test_years_outside_the_timestamp_range(tmp_path: Path, stamp: str) -> None:
    res, _ = _read(tmp_path, f"{stamp} n1 kernel: {XID79}\n")
    assert res.malformed == 1 and "outside the range" in res.quarantine["reason"].iloc[0]


def test_dmesg_ctime_year_9999_and_syslog_year_option(tmp_path: Path) -> None:
    res, _ = _read(tmp_path, f"[Mon Jun  3 14:02:11 9999] {XID79}\n")
    assert "outside the range" in res.quarantine["reason"].iloc[0]
    res, _ = _read(tmp_path, f"Jun  3 14:02:11 n1 kernel: {XID79}\n", year=9999)
    assert res.malformed == 1 and "outside the range" in res.quarantine["reason"].iloc[0]


def test_huge_and_non_ascii_codes(tmp_path: Path) -> None:
    text = (f"2024-06-03T14:02:11Z h kernel: NVRM: Xid (PCI:0000:18:00): {'7' * 5000}, boom\n"
            "2024-06-03T14:02:11Z h kernel: NVRM: Xid (PCI:0000:18:00): \u2077\u2079, superscript\n"
            "2024-06-03T14:02:11Z h kernel: NVRM: Xid (PCI:0000:18:00): \u0667\u0669, arabic-indic\n"
            f"[\u00b9\u00b2.5] {XID79}\n"
            "2024-06-03T14:02:11Z h kernel: nvidia-nvswitch0: SXid (PCI:0000:05:00.0): " + "1" * 900 + ", Fatal\n")
    res, sig = _read(tmp_path, text)
    assert len(sig) == 0 and res.malformed == 5
    reasons = res.quarantine["reason"].tolist()
    assert "5000 digits" in reasons[0] and "numeric Xid code" in reasons[1] and "numeric Xid code" in reasons[2]
    assert "no recognisable timestamp" in reasons[3] and "900 digits" in reasons[4]
