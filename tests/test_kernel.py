"""Kernel-log parser: real gpud captures, every timestamp style, years, boot times, fuzzing."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliab.errors import ParseError
from reliab.io._lines import LineContext
from reliab.io.formats._timestamps import parse_header, resolve_tz
from reliab.io.formats.kernel import host_from_path, parse_kernel_line, read_kernel, sniff_kernel

GPUD = Path(__file__).parent / "reference" / "gpud_nvidia_kernel_logs"
XID79 = "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def _check(res) -> None:
    assert res.lines == res.parsed + res.irrelevant + res.malformed
    assert len(res.quarantine) == res.malformed


# --- real captures (leptonai/gpud test fixtures, see reference/gpud_nvidia_kernel_logs/SOURCE.md)

def test_gpud_xid119_dmesg_ctime() -> None:
    res = read_kernel(str(GPUD / "dmesg-with-xid-119.log"))
    _check(res)
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (43, 5, 38, 0)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["xid:119"] * 5
    assert set(sig["gpu"]) == {"0000:9b:00"}
    assert sig["time"].tolist() == [_ts(t) for t in (
        "2025-02-23 16:24:18", "2025-02-23 16:24:24", "2025-02-23 16:24:30",
        "2025-02-23 16:27:12", "2025-02-23 16:30:13")]
    assert [o.rsplit(":", 1)[1] for o in sig["origin"]] == ["3", "38", "40", "42", "43"]
    assert sig["message"].iloc[0] == ("Timeout after 6s of waiting for RPC response from GPU4 GSP!"
                                      " Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).")
    assert set(sig["severity"]) == {"critical"}
    assert set(sig["host"]) == {"dmesg-with-xid-119"}
    assert str(sig["time"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize(("stamp", "when"), [
    ("[Ter Set 19 06:01:41 2017]", "2017-09-19 06:01:41"),  # pt_BR (LabPETR/bpm-gw#73)
    ("[mar. févr.  6 10:11:12 2024]", "2024-02-06 10:11:12"),  # fr_FR
    ("[Di Mär  5 07:08:09 2024]", "2024-03-05 07:08:09"),  # de_DE
    ("[Tue Sep 19 06:01:41 2017]", "2017-09-19 06:01:41"),  # C
    ("[六 6月 28 02:52:53 2024]", "2024-06-28 02:52:53"),  # zh_CN
    ("[토 6월 28 02:52:53 2024]", "2024-06-28 02:52:53"),  # ko_KR
])
def test_dmesg_ctime_in_other_locales(tmp_path: Path, stamp: str, when: str) -> None:
    """util-linux ``dmesg -T`` prints ``%a %b`` in the user's locale: the month is read from
    the same table as localized syslog months."""
    res = read_kernel(_write(tmp_path, "node1.log", f"{stamp} {XID79}\n{stamp} pciehp 0000:02:05.0: Link Down\n"))
    _check(res)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["xid:79"] and sig["time"].tolist() == [_ts(when)]


def test_journal_lines_of_a_cjk_locale(tmp_path: Path) -> None:
    """Real-shaped (an nvidia-bug-report grep from a zh_CN host, ThreeStones1029 blog): journalctl
    prints the month as '6月' (ko_KR '6월'); such lines read exactly as the C locale's 'Jun' ones."""
    text = (f"6月 28 02:52:53 jjf-Super-Server kernel: {XID79}\n"
            f"12월 31 23:59:59 jjf-Super-Server kernel: {XID79}\n"
            f"13月 01 00:00:00 jjf-Super-Server kernel: {XID79}\n")
    res = read_kernel(_write(tmp_path, "bug-report.log", text))
    c_locale = read_kernel(_write(tmp_path, "c.log", text.replace("6月", "Jun").replace("12월", "Dec")
                                  .replace("13月", "Xyz")))
    _check(res)
    sig = res.tables["signals"]
    assert sig["host"].tolist() == ["jjf-Super-Server"] * 2
    assert res.malformed == c_locale.malformed == 1  # '13月' is no month: the Xid has no time
    assert sig["time"].tolist() == c_locale.tables["signals"]["time"].tolist()
    assert [t.strftime("%m-%d %H:%M:%S") for t in sig["time"]] == ["06-28 02:52:53", "12-31 23:59:59"]


def test_talosctl_dmesg_node_level_and_bracketed_rfc3339(tmp_path: Path) -> None:
    """Real-shaped (vllm-project/vllm#40652, ``talosctl dmesg``): '<node>: kern: warning:
    [<RFC 3339>]: <message>' names the host and the time of every record."""
    text = ("192.168.11.119: kern: warning: [2026-04-22T21:27:51.291919134Z]: NVRM: _issueRpcAndWait:"
            " rpcRecvPoll timedout for fn 76 sequence 4127!\n"
            "192.168.11.119: kern: warning: [2026-04-22T21:29:21.342163186Z]: NVRM: Xid (PCI:0000:0b:00): 119,"
            " pid=11431, name=gpu-feature-dis, Timeout after 45s of waiting for RPC response from GPU3 GSP!\n"
            "talos-cp-1: kern:    info: [2026-04-22T21:30:00Z]: nvme nvme0: I/O 900 (I/O Cmd) QID 2 timeout, aborting\n")
    path = _write(tmp_path, "talos.log", text)
    assert sniff_kernel(path, text.splitlines()) >= 0.9
    res = read_kernel(path)
    _check(res)
    sig = res.tables["signals"]
    assert sig["signal"].tolist() == ["xid:119", "nvme:io_timeout"]
    assert sig["host"].tolist() == ["192.168.11.119", "talos-cp-1"] and sig["gpu"].iloc[0] == "0000:0b:00"
    assert sig["time"].tolist() == [_ts("2026-04-22 21:29:21.342163"), _ts("2026-04-22 21:30:00")]


@pytest.mark.parametrize("line", [
    "nvme nvme0: I/O 900 QID 2 timeout, reset controller",  # before Linux 5.x
    "nvme nvme0: I/O 900 (I/O Cmd) QID 2 timeout, aborting",  # with the opcode name (oxidecomputer/propolis#1156)
    "nvme nvme0: I/O tag 900 (0384) opcode 0x2 (I/O Cmd) QID 2 timeout, aborting req_op:READ(0) size:4096",
])
def test_nvme_timeout_in_every_kernel_wording(line: str) -> None:
    """drivers/nvme/host/pci.c nvme_timeout has printed the tag and queue three ways."""
    ctx = LineContext(path="f", source="kernel", state={"tz": resolve_tz(None), "host": "h"})
    row = parse_kernel_line(f"2024-06-03T14:02:11Z n1 kernel: {line}", ctx)
    assert row is not None and row["signal"] == "nvme:io_timeout"
    assert row["message"].startswith("nvme0: I/O 900 QID 2 timeout")


def test_gpud_decode_iso_xid13_xid43() -> None:
    res = read_kernel(str(GPUD / "dmesg-decode-iso-xid13-xid43-oom.log"), host="gpu-node-7")
    _check(res)
    assert (res.lines, res.parsed, res.malformed) == (24, 17, 0)
    sig = res.tables["signals"]
    assert sig["signal"].value_counts().to_dict() == {"xid:13": 16, "xid:43": 1}
    assert set(sig["gpu"]) == {"0000:38:00"}
    assert set(sig["host"]) == {"gpu-node-7"}
    assert sig["time"].iloc[0] == _ts("2025-01-21 04:41:44.283302")
    last = sig.iloc[-1]
    assert (last["signal"], last["time"], last["message"]) == (
        "xid:43", _ts("2025-01-21 04:41:44.287197"), "Ch 00000008")
    assert sig["message"].iloc[0] == "Graphics SM Global Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors"
    assert set(sig["severity"]) == {"error"}


def test_gpud_files_without_signals() -> None:
    seg = read_kernel(str(GPUD / "dmesg-decode-iso-nccl-segfault.log"))
    assert (seg.lines, seg.parsed, seg.irrelevant) == (2, 0, 2)
    fm = read_kernel(str(GPUD / "fabricmanager.log"))
    assert (fm.lines, fm.parsed, fm.malformed) == (101, 0, 0)


# --- timestamp styles

STYLES = [
    ("2024-06-03T14:02:11.123456+00:00 node0421 kernel: " + XID79, "2024-06-03 14:02:11.123456", "node0421"),
    ("2024-06-03T16:02:11.5+02:00 node0421 kernel: " + XID79, "2024-06-03 14:02:11.5", "node0421"),
    ("[Mon Jun  3 14:02:11 2024] " + XID79, "2024-06-03 14:02:11", None),
    ("2024-06-03T14:02:11,123456+00:00 " + XID79, "2024-06-03 14:02:11.123456", None),
    ("kern  :warn  : 2024-06-03T14:02:11,000001+00:00 " + XID79, "2024-06-03 14:02:11.000001", None),
    ("2024-06-03T14:02:11+0000 node0421 kernel: " + XID79, "2024-06-03 14:02:11", "node0421"),
    ("<13>1 2024-06-03T14:02:11.003Z node0421 kernel - - - " + XID79, "2024-06-03 14:02:11.003", "node0421"),
    ("Jun  3 14:02:11 node0421 kernel: " + XID79, "2024-06-03 14:02:11", "node0421"),
    ("May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.", "2024-05-18 19:02:39", None),
    ("2024-06-03T14:02:11.1+00:00 node0421 kernel: [  12.5] " + XID79, "2024-06-03 14:02:11.1", "node0421"),
]


@pytest.mark.parametrize(("line", "when", "host"), STYLES)
def test_timestamp_styles(tmp_path: Path, line: str, when: str, host: str | None) -> None:
    res = read_kernel(_write(tmp_path, "node9999.log", line + "\n"), year=2024)
    _check(res)
    row = res.tables["signals"].iloc[0]
    assert row["time"] == _ts(when)
    assert row["host"] == (host or "node9999")
    assert row["signal"] == "xid:79"


def test_local_time_zone_for_offsetless_styles(tmp_path: Path) -> None:
    path = _write(tmp_path, "n.log", "[Mon Jun  3 14:02:11 2024] " + XID79 + "\n")
    res = read_kernel(path, tz="Europe/Berlin")
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-06-03 12:02:11")


def test_host_from_path() -> None:
    assert host_from_path("dmesg/node0421.log") == "node0421"
    assert host_from_path("x/node0007.log.gz") == "node0007"


def test_header_styles() -> None:
    assert parse_header("[12345.678901] hello").monotonic == pytest.approx(12345.678901)
    assert parse_header("no time here").style == "none"
    assert parse_header("Jun  3 14:02:11 h kernel: m").partial == (6, 3, 14, 2, 11)
    assert resolve_tz("UTC") is resolve_tz(None)
    with pytest.raises(ValueError, match="unknown time zone"):
        resolve_tz("Mars/Olympus")


# --- years and boot times

def test_rfc3164_year_rollover(tmp_path: Path) -> None:
    text = (f"Dec 31 23:59:58 node1 kernel: {XID79}\n"
            "Dec 31 23:59:59 node1 CRON[1]: noise\n"
            f"Jan  1 00:00:05 node1 kernel: {XID79}\n")
    res = read_kernel(_write(tmp_path, "messages", text), year=2023)
    assert res.tables["signals"]["time"].tolist() == [_ts("2023-12-31 23:59:58"), _ts("2024-01-01 00:00:05")]
    assert "year 2023" in res.notes[0]


def test_rfc3164_year_from_mtime(tmp_path: Path) -> None:
    text = f"Dec 31 23:59:58 node1 kernel: {XID79}\nJan  1 00:00:05 node1 kernel: {XID79}\n"
    path = _write(tmp_path, "messages", text)
    stamp = datetime(2025, 1, 2, 12, 0).timestamp()
    os.utime(path, (stamp, stamp))
    res = read_kernel(path)
    assert res.tables["signals"]["time"].dt.year.tolist() == [2024, 2025]
    assert "modification time" in res.notes[0]


def test_rfc3164_year_from_dated_lines(tmp_path: Path) -> None:
    text = (f"2022-03-01T00:00:00+00:00 node1 kernel: {XID79}\n"
            f"Mar  2 10:00:00 node1 kernel: {XID79}\n")
    res = read_kernel(_write(tmp_path, "messages", text))
    assert res.tables["signals"]["time"].iloc[1] == _ts("2022-03-02 10:00:00")


def test_rfc3164_feb29_in_a_common_year_is_malformed(tmp_path: Path) -> None:
    res = read_kernel(_write(tmp_path, "m", f"Feb 29 10:00:00 node1 kernel: {XID79}\n"), year=2023)
    _check(res)
    assert res.malformed == 1 and "impossible" in res.quarantine["reason"].iloc[0]


def test_raw_dmesg_needs_boot_time(tmp_path: Path) -> None:
    path = _write(tmp_path, "node5.log", f"[    5.000000] usb 1-1: new device\n[ 100.250000] {XID79}\n")
    res = read_kernel(path)
    _check(res)
    assert (res.parsed, res.malformed) == (0, 1)
    q = res.quarantine.iloc[0]
    assert q["lineno"] == 2 and "boot_time" in q["reason"] and "NVRM" in q["text"]
    res = read_kernel(path, boot_time="2024-06-03 14:00:00")
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-06-03 14:01:40.25")
    assert res.tables["signals"]["host"].iloc[0] == "node5"


def test_raw_dmesg_boot_time_from_rtc_line(tmp_path: Path) -> None:
    text = (f"[  100.000000] {XID79}\n"
            "[    2.000000] rtc_cmos 00:04: setting system clock to 2024-06-03T14:00:02 UTC (1717423202)\n")
    res = read_kernel(_write(tmp_path, "n.log", text))
    _check(res)
    assert res.tables["signals"]["time"].iloc[0] == _ts("2024-06-03 14:01:40")


def test_raw_dmesg_strict_raises(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="boot time"):
        read_kernel(_write(tmp_path, "n.log", f"[1.0] {XID79}\n"), strict=True)


# --- signals

SIGNALS = [
    ("mlx5_core 0000:1a:00.0 ens1f0np0: Link down", "nic:link_down", "warning", "ens1f0np0 (0000:1a:00.0): Link down"),
    ("systemd-networkd[2385]: ens1f0np0: Lost carrier", "nic:lost_carrier", "warning", "ens1f0np0: Lost carrier"),
    ("mlx5_core 0000:1a:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, High Temperature",
     "nic:port_module_error", "error", "Port module event[error]: module 0, Cable error, High Temperature"),
    ("mlx5_core 0000:1a:00.0: poll_health:739:(pid 0): device's health compromised - reached miss count",
     "nic:health_compromised", "critical", "0000:1a:00.0: device's health compromised"),
    ("nvme nvme3: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff", "nvme:controller_down",
     "critical", "nvme3: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff"),
    ("blk_update_request: I/O error, dev nvme3n1, sector 2048 op 0x0:(READ)", "block:io_error", "error",
     "I/O error, dev nvme3n1, sector 2048 op 0x0:(READ)"),
    ("mce: [Hardware Error]: CPU 12: Machine Check: 0 Bank 5: be00000000800400", "mce:hardware_error", "error",
     "CPU 12: Machine Check: 0 Bank 5: be00000000800400"),
    ("mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 1: b200000000000000", "mce:hardware_error",
     "critical", "CPU 3: Machine Check Exception: 5 Bank 1: b200000000000000"),
    ("EDAC MC0: 1 UE memory read error on DIMM_A1 (channel:0)", "edac:uncorrectable", "critical",
     "MC0: 1 UE memory read error on DIMM_A1 (channel:0)"),
    ("pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0", "pcie:aer_fatal", "critical",
     "0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0"),
    ("nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)",
     "sxid:12028", "warning", "nvidia-nvswitch3 (PCI:0000:05:00.0): Non-fatal, Link 32 egress non-posted PRIV error (First)"),
    ("NVRM: Xid (0000:03:00): 14, Channel 00000001", "xid:14", "error", "Channel 00000001"),
    ("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
     "xid:63", "warning", "Row Remapper: New row marked for remapping, reset gpu to activate."),
    ("NVRM: Xid (PCI:0000:91:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error",
     "xid:48", "critical", "An uncorrectable double bit error"),
]


@pytest.mark.parametrize(("msg", "signal", "severity", "message"), SIGNALS)
def test_signal_keys(tmp_path: Path, msg: str, signal: str, severity: str, message: str) -> None:
    res = read_kernel(_write(tmp_path, "n.log", f"2024-06-03T14:02:11+00:00 node1 kernel: {msg}\n"))
    row = res.tables["signals"].iloc[0]
    assert (row["signal"], row["severity"], row["message"]) == (signal, severity, message)


def test_noise_and_continuations_are_irrelevant(tmp_path: Path) -> None:
    text = "".join(f"2024-06-03T14:02:11+00:00 node1 kernel: {m}\n" for m in (
        "NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be",
        "mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 268269): ACCESS_REG(0x805) op_mod(0x1) failed",
        "mce: [Hardware Error]: TSC 0 ADDR 1ffffffff MISC 0", "EDAC sbridge MC0: HANDLING MCE MEMORY ERROR",
        "mlx5_core 0000:1a:00.0 ens1f0np0: Link up", "nvme nvme0: 32/0/0 default/read/poll queues"))
    res = read_kernel(_write(tmp_path, "n.log", text))
    assert (res.lines, res.parsed, res.irrelevant, res.malformed) == (6, 0, 6, 0)


# --- malformed, strict, robustness

def test_corrupt_xid_line_is_quarantined(tmp_path: Path) -> None:
    text = (f"2024-06-03T14:02:11+00:00 node1 kernel: {XID79}\n"
            "2024-06-03T14:02:12+00:00 node1 kernel: NVRM: Xid (PCI:0000:18:00): garbage\n"
            "2024-13-45T99:02:12+00:00 node1 kernel: " + XID79 + "\n"
            "NVRM: Xid (PCI:0000:18:00): 79, no timestamp at all\n"
            "2024-06-03T14:02:13+00:00 node1 kernel: NVRM: Xid (PCI:zz:top): 79, bad id\n")
    path = _write(tmp_path, "n.log", text)
    res = read_kernel(path)
    _check(res)
    assert (res.parsed, res.malformed) == (1, 4)
    q = res.quarantine
    assert q["lineno"].tolist() == [2, 3, 4, 5]
    assert "numeric Xid code" in q["reason"].iloc[0]
    assert "unreadable timestamp" in q["reason"].iloc[1]
    assert "no recognisable timestamp" in q["reason"].iloc[2]
    assert "PCI id" in q["reason"].iloc[3]
    assert set(q["path"]) == {path}
    with pytest.raises(ParseError) as info:
        read_kernel(path, strict=True)
    assert f"{path}:2" in str(info.value)


def test_bad_bytes_nul_and_long_lines(tmp_path: Path) -> None:
    data = (b"2024-06-03T14:02:11+00:00 node1 kernel: NVRM: Xid (PCI:0000:18:00): 79, \xff\xfe bad utf8\n"
            b"\x00\x00\x00 NVRM: Xid \x00\n"
            + b"2024-06-03T14:02:11+00:00 node1 kernel: NVRM: Xid " + b"x" * (2 << 20) + b"\n"
            + b"\x00" * 100 + b"\n")
    res = read_kernel(_write(tmp_path, "n.log", data))
    _check(res)
    assert (res.lines, res.parsed, res.malformed) == (4, 1, 2)
    assert "exceeds" in res.quarantine["reason"].iloc[1]
    assert "\ufffd" in res.tables["signals"]["message"].iloc[0]


# --- fuzzing

KERNELISH = st.sampled_from([
    "NVRM: Xid (PCI:0000:18:00): ", "NVRM: Xid (", "2024-06-03T14:02:11", ",123+00:00 ", "[", "]",
    "Jun  3 14:02:11 ", "kernel: ", "mlx5_core ", "Link down", "SXid (", "nvidia-nvswitch1: ",
    "EDAC MC0: 1 UE", "AER: Uncorrected (Fatal) error received: ", "79, ", "\n", " ", "<13>1 ",
    "[Mon Jun  3 14:02:11 2024] ", "[12.5] ", "setting system clock to ", "(17)", "kern  :warn  : ",
])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(KERNELISH, st.text(max_size=12)), max_size=12).map("".join))
def test_fuzz_parse_line_text(text: str) -> None:
    ctx = LineContext(path="f", source="kernel", state={"tz": resolve_tz(None), "host": "h"})
    try:
        parse_kernel_line(text, ctx)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(KERNELISH.map(str.encode), st.binary(max_size=16)), max_size=20).map(b"".join),
       st.sampled_from([None, 2024]))
def test_fuzz_read_kernel_bytes(data: bytes, year: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "node1.log")
        with open(path, "wb") as fh:
            fh.write(data)
        res = read_kernel(path, year=year)
    _check(res)
    if not data.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")):  # not an archive
        # lines end at \n, \r\n or a lone \r (universal newlines)
        assert res.lines == len(data.splitlines())


def test_sniff_kernel_rejects_csv_and_accepts_captures() -> None:

    csv = ["time,host,gpu,temp_c", "2024-06-01T00:00:00Z,node0001,0,41.5", "2024-06-01T00:01:00Z,node0001,0,41.7"]
    assert sniff_kernel("gpus.csv", csv) == 0.0
    assert sniff_kernel("x.log", ["[Mon Jun  3 14:02:11 2024] hello", "[Mon Jun  3 14:02:12 2024] x"]) > 0.8
    assert sniff_kernel("x.log", []) == 0.0
