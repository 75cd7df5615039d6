"""Kernel message wordings first met in holdout round 6, on real-shaped text: the AMD
machine-check decode of ``edac_mce_amd`` and the link-down lines of Intel NICs and phylib.

Primary sources: Linux ``drivers/edac/mce_amd.c`` (``decode_error_status``,
``amd_decode_mce``), ``drivers/net/ethernet/intel/igb/igb_main.c`` (``igb_watchdog_task``:
"igb: %s NIC Link is Down"), ``drivers/net/phy/phy.c`` (``phy_print_status``: "Link is Down").
"""

from __future__ import annotations

import pytest

from reliab.io.formats.kernel._kmsg import match_signal

AMD = "[Hardware Error]: {}"


@pytest.mark.parametrize(("status", "severity"), [
    ("Deferred error, no action required.", "error"),
    ("Uncorrected, software containable error.", "error"),
    ("Uncorrected, software restartable error.", "error"),
    ("System Fatal error.", "critical"),
])
def test_amd_decode_status_line_is_the_machine_check_record(status: str, severity: str) -> None:
    """Real-shaped (linux-edac, Bert Karwatzki 2026-02: ``[T45426] [Hardware Error]: Deferred
    error, no action required.``)."""
    found = match_signal("[T45426] " + AMD.format(status))
    assert found is not None
    assert (found.signal, found.severity) == ("mce:hardware_error", severity)


@pytest.mark.parametrize("detail", [
    "Corrected error, no action required.",  # a corrected error: never a hardware_error
    "CPU:0 (19:50:0) MC14_STATUS[-|-|-|AddrV|PCC|-|-|Deferred|-|-]: 0x8700900800000000",
    "Error Addr: 0x01b3877c00000020",
    "IPID: 0x000700b040000000",
    "L3 Cache Ext. Error Code: 0",
    "cache level: RESV, tx: INSN",
])
def test_amd_decode_details_and_corrected_errors_are_not_events(detail: str) -> None:
    assert match_signal(AMD.format(detail)) is None


@pytest.mark.parametrize(("body", "where"), [
    ("igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Down", "eth0"),
    ("ixgbe 0000:03:00.0 eno49: NIC Link is Down", "eno49"),
    ("mt7530-mdio mdio-bus:1f lan: Link is Down", "lan"),
])
def test_link_is_down_wordings_are_nic_link_down(body: str, where: str) -> None:
    found = match_signal(body)
    assert found is not None
    assert (found.signal, found.message) == ("nic:link_down", f"{where}: Link is Down")


@pytest.mark.parametrize("body", [
    "mt7530-mdio mdio-bus:1f lan: Link is Up - 1Gbps/Full - flow control rx/tx",
    "igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX",
    "ata1: SATA link down (SStatus 0 SControl 300)",
])
def test_link_up_and_sata_link_down_are_not_events(body: str) -> None:
    assert match_signal(body) is None
