"""Line prefixes of kernel captures first met in holdout round 6, on real-shaped text (each
test names the capture its lines follow; the verbatim excerpts are scored in
``tests/test_real_world.py``): a serial-console logger's wall clock glued to the printk time,
RFC 3164 stamps with microseconds (``journalctl -o short-precise``, SONiC) and a severity word
before the tag, OpenWrt ``logread``, and the printk caller id.
"""

from __future__ import annotations

from pathlib import Path

from test_kernel_shapes import _read, _ts

from reliab.io.formats._timestamps import parse_header
from reliab.io.formats.kernel import sniff_kernel

# --- console logger: "[YYYY-MM-DD HH:MM:SS.ffffff][printk seconds] msg" (lkml, Shuai Xue 2023-08-28)

CONSOLE = """\
[2023-06-22 21:55:31.352444][5975153.869131] Memory failure: 0x7740c0: recovery action for dirty page: Recovered
[2023-06-22 21:55:31.352446][5975153.878190] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (a b)
[2023-06-22 21:55:33.843280][5975156.361284] EDAC MC0: 3 CE memorERROR: C00000002:V030 I0 D6476950 7731
[2023-06-22 21:55:34.218603]y read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (a)
"""


def test_console_wall_clock_is_the_time_and_printk_seconds_the_monotonic() -> None:
    h = parse_header("[2023-06-22 21:55:31.352446][5975153.878190] EDAC MC0: 1 UE memory read error")
    assert h.style == "console_iso" and h.error is None
    assert h.when == _ts("2023-06-22 21:55:31.352446") and h.monotonic == 5975153.878190
    assert h.message == "EDAC MC0: 1 UE memory read error"


def test_console_capture_is_a_kernel_log_with_timed_edac_events(tmp_path: Path) -> None:
    assert sniff_kernel("c.log", CONSOLE.splitlines()) > 0.5  # 3 of 4 lines carry the stamps
    res, sig = _read(tmp_path, CONSOLE)
    assert sig["signal"].tolist() == ["edac:uncorrectable", "edac:correctable"]
    assert sig["time"].tolist() == [_ts("2023-06-22 21:55:31.352446"), _ts("2023-06-22 21:55:33.843280")]
    assert res.malformed == 0


def test_a_bracketed_date_without_printk_time_is_not_a_console_stamp() -> None:
    """Collectors prefix training logs with ``[2026-01-04 21:33:04] `` (gpu-ops pod logs): no
    printk time follows, so the line is not read as a kernel console line."""
    assert parse_header("[2026-01-04 21:33:04] host:617:2799 [3] NCCL WARN NET/IB").style == "none"
    assert parse_header("[2023-06-22 21:55:34.218603]y read error on CPU").style == "none"


# --- RFC 3164 with microseconds and a severity word (sonic-net/sonic-buildimage#7310)

SONIC = """\
Apr  9 21:05:38.103350 str-s6100-acs-4 NOTICE swss#portsyncd: :- onMsg: nlmsg type:16 key:eth0 admin:1 oper:0
Apr  9 21:05:38.106121 str-s6100-acs-4 INFO kernel: [10601.214044] igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Down
"""


def test_short_precise_microseconds_and_severity_word(tmp_path: Path) -> None:
    h = parse_header(SONIC.splitlines()[1])
    assert (h.style, h.partial, h.fraction) == ("rfc3164", (4, 9, 21, 5, 38), 0.106121)
    assert (h.host, h.tag, h.monotonic) == ("str-s6100-acs-4", "kernel", 10601.214044)
    res, sig = _read(tmp_path, SONIC, year=2021)
    assert sig["time"].tolist() == [_ts("2021-04-09 21:05:38.106121")]
    assert sig["host"].tolist() == ["str-s6100-acs-4"]
    assert not any("cannot read" in n for n in res.notes)


def test_journalctl_short_precise_without_severity(tmp_path: Path) -> None:
    """``journalctl -o short-precise`` (journalctl(1)): ``Jun 03 14:02:11.123456 host kernel: msg``."""
    text = "Jun 03 14:02:11.123456 gpu-node-7 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"
    _, sig = _read(tmp_path, text, year=2024)
    assert sig["time"].tolist() == [_ts("2024-06-03 14:02:11.123456")]
    assert sig["host"].tolist() == ["gpu-node-7"] and sig["signal"].tolist() == ["xid:79"]


# --- OpenWrt logread (openwrt/openwrt#17351; ubox log/logread.c)

def test_logread_ctime_facility_and_optional_host() -> None:
    h = parse_header("Sun Apr 27 05:48:33 2025 kern.info kernel: [10079.572058] mt7530-mdio mdio-bus:1f lan: Link is Down")
    assert (h.style, h.when, h.host, h.tag) == ("logread", _ts("2025-04-27 05:48:33"), None, "kernel")
    assert h.monotonic == 10079.572058
    h = parse_header("Sun Apr 27 05:48:33 2025 ap-1 kern.warn kernel: [1.0] msg")
    assert (h.host, h.tag, h.message) == ("ap-1", "kernel", "msg")
    assert parse_header("Sun Feb 30 05:48:33 2025 kern.info kernel: x").error is not None


# --- printk caller id (CONFIG_PRINTK_CALLER; linux-edac threads of 2025-2026)

def test_caller_id_after_the_stamp_is_not_a_host_or_time(tmp_path: Path) -> None:
    text = ("[ 1419.919580][ T9955] EDAC MC0: 1 UE Multi-bit ECC on unknown memory (node:0 card:1)\n"
            "2026-02-13T12:47:34.505714+01:00 [T449218] mce: [Hardware Error]: Machine check events logged\n")
    res, sig = _read(tmp_path, text, boot_time="2025-10-30T00:00:00+00:00")
    assert sig["signal"].tolist() == ["edac:uncorrectable", "mce:events_logged"]
    assert sig["time"].tolist() == [_ts("2025-10-30 00:23:39.919580"), _ts("2026-02-13 11:47:34.505714")]
    assert sig["host"].tolist() == ["node7", "node7"]
