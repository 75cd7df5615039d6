"""Kernel message bodies -> normalized signal keys (the message half of ``kernel``).

:func:`match_signal` looks at the text after a line's timestamp and returns the signal
it carries, ``None`` for noise, or raises :class:`~reliab.errors.ParseError` when the text
announces a signal it then fails to state (e.g. ``NVRM: Xid (PCI:0000:18:00): garbage``).
Cheap substring tests guard every regular expression, and :data:`LITERALS` is the byte
prefilter that lets the line driver skip all other lines undecoded.

Sources of the message formats: NVIDIA driver ``NVRM: Xid`` lines (NVIDIA "Xid Errors"
documentation, docs.nvidia.com/deploy/xid-errors; ``leptonai/gpud`` testdata
``components/accelerator/nvidia/xid/testdata/``), ``nvidia-nvswitch`` SXid (gpud
``components/accelerator/nvidia/sxid/README.md``), Linux
``drivers/net/ethernet/mellanox/mlx5/core/{en_main,events,health}.c``,
``drivers/nvme/host/core.c``, ``block/blk-core.c``, ``arch/x86/kernel/cpu/mce/core.c``,
``drivers/edac/edac_mc.c``, ``drivers/edac/mce_amd.c``, ``drivers/pci/pcie/aer.c``,
``drivers/net/ethernet/intel/igb/igb_main.c``, ``drivers/net/phy/phy.c`` and systemd-networkd.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reliab.errors import ParseError

#: XIDs whose documented resolution is a GPU reset/reboot or RMA (NVIDIA Xid catalog,
#: docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)
CRITICAL_XIDS = frozenset({48, 62, 64, 74, 79, 95, 119, 120, 121, 122, 123, 140, 143, 144, 145,
                           146, 147, 148, 149, 150, 155, 158, 167, 171, 172})
#: informational or secondary XIDs (IGNORE bucket, GCM non-critical list, 45/154 follow others)
WARNING_XIDS = frozenset({45, 63, 92, 154})

#: a line containing none of these bytes cannot carry a kernel signal (or a boot anchor).
#: mlx5 signals are anchored on their event text, not on ``mlx5`` (which most mlx5_core
#: chatter carries): each of the three is required by :func:`_mlx5` anyway.  ``The NVIDIA
#: GPU`` opens the three-line "has fallen off the bus" report that names the GPU.
LITERALS: tuple[bytes, ...] = (
    b"NVRM: Xid", b"SXid", b"Link down", b"Port module event[error]", b"health compromised",
    b"Lost carrier", b"controller is down", b"I/O error, dev", b"Hardware Error", b"EDAC",
    b"AER:", b"setting system clock", b"fallen off the bus", b"The NVIDIA GPU", b"PCIe Bus Error",
    b" QID ", b"Removing after probe failure", b"insufficient power", b"Link is Down",
)
#: the longest Xid/SXid code read as a number (NVIDIA codes have at most 5 digits)
MAX_CODE_DIGITS = 9


@dataclass(frozen=True, slots=True)
class KernelSignal:
    """A signal found in a kernel message.

    ``part`` marks lines whose signal depends on the lines around them (resolved by the
    reader): ``"bus_drop"`` for a "GPU has fallen off the bus" line without an Xid number
    (the same event as an Xid 79 of that GPU just before it), ``"sxid_detail"`` for the
    ``Severity …``/``Data {…}`` lines that follow an SXid report's first line.
    """

    signal: str
    severity: str
    message: str
    gpu: str | None = None
    part: str = ""


_XID = re.compile(r"NVRM: Xid \(([^)]*)\):?\s*(.*)", re.S)
_PCI = re.compile(r"(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?")
_CODE = re.compile(r"([0-9]+)(?:,\s*|\s*$)(.*)", re.S)
_PID_NAME = re.compile(r"(?:pid=(?:'<unknown>'|<unknown>|\d+),\s*)?(?:name=(?:'[^']*'|[^,]*),\s*)?")
_SXID = re.compile(r"(nvidia-nvswitch[0-9]+): SXid \(([^)]*)\):?\s*([0-9]+)(?:,\s*|\s*$)(.*)", re.S)
#: the lines nvswitch ``_nvswitch_dump_error_entry`` prints after a report's first line
_SXID_DETAIL = re.compile(r"Severity ([0-9]+) Engine instance|Data \{")
#: the GPU named by a bus-drop line: ``GPU 0000:91:00.0:``, ``GPU at 0000:01:00.0``,
#: ``The NVIDIA GPU 0000:b3:00.0`` (NVIDIA kernel module ``nv.c``; NVSentinel issue #155)
_BUS_GPU = re.compile(r"GPU (?:at )?(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?")
_LINK_DOWN = re.compile(r"mlx5_core (\S+) (\S+?): Link down")
#: the interface of another driver's link-down line: Intel ``<if> NIC Link is Down`` (igb, ixgbe,
#: i40e, ice, e1000e ``*_watchdog_task``) and phylib/phylink ``<dev> <if>: Link is Down``
_LINK_IS_DOWN = re.compile(r"(\S+?):? (?:NIC )?Link is Down")
_MLX5_DEV = re.compile(r"mlx5_core (\S+?):? ")
_PORT_MODULE = re.compile(r"Port module event\[error\]: (.*)", re.S)
_CARRIER = re.compile(r"(\S+): Lost carrier")
_NVME = re.compile(r"nvme (nvme\d+): controller is down(.*)", re.S)
_BLK = re.compile(r"I/O error, dev (\S+?),(.*)", re.S)
#: the head line of a firmware-first (APEI GHES) report; its detail lines repeat ``{N}[Hardware Error]:``
_APEI = re.compile(r"\[Hardware Error\]: Hardware error from APEI Generic Hardware Error Source: ([0-9]+)")
_MCE = re.compile(r"CPU (\d+): Machine Check( Exception)?: (.*)", re.S)
#: the status line of an AMD machine-check record decoded by edac_mce_amd (``drivers/edac/mce_amd.c``
#: ``decode_error_status``); "Corrected error, no action required." is left out (a corrected error)
_AMD_STATUS = re.compile(r"\[Hardware Error\]: (Deferred error, no action required|System Fatal error|"
                         r"Uncorrected, software (?:restartable|containable) error)\.")
_EDAC = re.compile(r"EDAC (?:\S+ )?(MC[0-9]+): (?:([0-9]+) )?(UE|CE)\b(.*)", re.S)
_AER = re.compile(r"(?:pcieport (\S+?): )?AER: (?:Multiple )?(Uncorrected|Uncorrectable|Corrected|Correctable) "
                  r"(?:\((Fatal|Non-Fatal)\) )?error (?:message )?received(?: from)?:?\s*(\S*)")
#: the second line of an AER report, which repeats its severity (``aer_print_error``)
_AER_DETAIL = re.compile(r"(?:\S+ )?(\S+?): PCIe Bus Error: severity=([^,]*)")
#: ``nvme_timeout`` (``drivers/nvme/host/pci.c``) over kernel versions: ``I/O 900 QID 2 timeout``,
#: ``I/O 900 (I/O Cmd) QID 2 timeout``, ``I/O tag 900 (0384) opcode 0x2 (I/O Cmd) QID 2 timeout``
_NVME_TIMEOUT = re.compile(r"nvme (nvme[0-9]+): I/O (?:tag )?([0-9]+) (?:\([^()]*\) )?(?:opcode \S+ \([^()]*\) )?"
                           r"QID ([0-9]+) timeout(.*)", re.S)
_NVME_REMOVED = re.compile(r"nvme (nvme[0-9]+): Removing after probe failure status: (-?[0-9]+)")
_PCIE_POWER = re.compile(r"mlx5_core (\S+?):? .*Detected insufficient power on the PCIe slot(.*)", re.S)


def _xid(body: str) -> KernelSignal:
    m = _XID.search(body)
    if m is None:
        raise ParseError("NVRM Xid line without a '(PCI:dddd:bb:dd)' device")
    dev = _PCI.fullmatch(m.group(1).strip())
    if dev is None:
        raise ParseError(f"NVRM Xid line with an unreadable PCI id {m.group(1)[:40]!r}")
    code = _CODE.match(m.group(2))
    if code is None:
        raise ParseError(f"NVRM Xid line without a numeric Xid code (found {m.group(2)[:40]!r})")
    if len(code.group(1)) > MAX_CODE_DIGITS:
        raise ParseError(f"Xid code of {len(code.group(1))} digits is not an Xid number")
    number = int(code.group(1))
    text = code.group(2)
    text = text[_PID_NAME.match(text).end():].strip()  # type: ignore[union-attr]
    severity = "critical" if number in CRITICAL_XIDS else "warning" if number in WARNING_XIDS else "error"
    return KernelSignal(f"xid:{number}", severity, text, dev.group(1).lower())


def _sxid(body: str) -> KernelSignal | None:
    """``nvidia-nvswitchN: SXid (PCI:…): <code>, <Fatal|Non-fatal>, <text>`` and its detail lines.

    The nvswitch driver prints a report's first line, then (``_nvswitch_dump_error_entry``)
    ``Severity <n> Engine instance …`` and one or two ``Data {…}`` lines with the same
    code: those are marked ``part="sxid_detail"`` (severity 1 is
    ``NVSWITCH_ERROR_SEVERITY_FATAL``).
    """
    if "nvidia-nvswitch" not in body:
        return None
    m = _SXID.search(body)
    if m is None:
        raise ParseError("NVSwitch SXid line without a '(PCI:…): <code>' part")
    if len(m.group(3)) > MAX_CODE_DIGITS:
        raise ParseError(f"SXid code of {len(m.group(3))} digits is not an SXid number")
    text = m.group(4).strip()
    where = f"{m.group(1)} ({m.group(2)})"
    detail = _SXID_DETAIL.match(text)
    if detail is not None:
        fatal = detail.group(1) == "1"
        return KernelSignal(f"sxid:{int(m.group(3))}", "critical" if fatal else "warning",
                            f"{where}: {text}", part="sxid_detail")
    fatal = text.lower().startswith("fatal") or ", fatal" in text.lower()
    return KernelSignal(f"sxid:{int(m.group(3))}", "critical" if fatal else "warning", f"{where}: {text}")


def _mlx5(body: str) -> KernelSignal | None:
    if "Link down" in body:
        m = _LINK_DOWN.search(body)
        where = f"{m.group(2)} ({m.group(1)})" if m else "mlx5"
        return KernelSignal("nic:link_down", "warning", f"{where}: Link down")
    if "Port module event[error]" in body:
        m = _PORT_MODULE.search(body)
        return KernelSignal("nic:port_module_error", "error", f"Port module event[error]: {m.group(1).strip()}"
                            if m else body.strip())
    if "health compromised" in body:
        m = _MLX5_DEV.search(body)
        dev = m.group(1) if m else "mlx5"
        return KernelSignal("nic:health_compromised", "critical",
                            f"{dev}: device's health compromised")
    if "insufficient power" in body:  # events.c mlx5_pcie_event()
        m = _PCIE_POWER.search(body)
        if m is not None:
            return KernelSignal("nic:pcie_power", "warning",
                                f"{m.group(1)}: Detected insufficient power on the PCIe slot{m.group(2)}".strip())
    return None


def _link_is_down(body: str) -> KernelSignal | None:
    """``<if> NIC Link is Down`` (Intel ``igb_main.c`` and siblings) or phylib ``Link is Down``.

    The wording of ``drivers/net/ethernet/intel/igb/igb_main.c`` (``igb_watchdog_task``),
    ``ixgbe_main.c``, ``i40e_main.c`` and of ``drivers/net/phy/phy.c`` (``phy_print_status``) /
    ``phylink.c`` (``phylink_link_down``): the same event as mlx5's ``Link down``.
    """
    m = _LINK_IS_DOWN.search(body)
    return None if m is None else KernelSignal("nic:link_down", "warning", f"{m.group(1)}: Link is Down")


def _carrier(body: str) -> KernelSignal | None:
    m = _CARRIER.search(body)
    return None if m is None else KernelSignal("nic:lost_carrier", "warning", f"{m.group(1)}: Lost carrier")


def _nvme(body: str) -> KernelSignal | None:
    m = _NVME.search(body)
    if m is None:
        return None
    return KernelSignal("nvme:controller_down", "critical", f"{m.group(1)}: controller is down{m.group(2)}".strip())


def _nvme_timeout(body: str) -> KernelSignal | None:
    """``nvme nvmeN: I/O <tag> QID <q> timeout, aborting|reset controller`` (``pci.c`` ``nvme_timeout``)."""
    m = _NVME_TIMEOUT.search(body)
    if m is None:
        return None
    return KernelSignal("nvme:io_timeout", "error", f"{m.group(1)}: I/O {m.group(2)} QID {m.group(3)} timeout{m.group(4)}".strip())


def _nvme_removed(body: str) -> KernelSignal | None:
    """``nvme nvmeN: Removing after probe failure status: <n>`` (``pci.c`` ``nvme_remove_dead_ctrl``)."""
    m = _NVME_REMOVED.search(body)
    if m is None:
        return None
    return KernelSignal("nvme:removed", "critical", f"{m.group(1)}: Removing after probe failure status: {m.group(2)}")


def _blk(body: str) -> KernelSignal | None:
    m = _BLK.search(body)
    if m is None:
        return None
    return KernelSignal("block:io_error", "error", f"I/O error, dev {m.group(1)},{m.group(2)}".strip())


def _mce(body: str) -> KernelSignal | None:
    if "APEI Generic Hardware Error Source" in body:  # ghes.c ghes_print_estatus(): firmware-first report
        m = _APEI.search(body)
        if m is not None:
            return KernelSignal("apei:hardware_error", "error",
                                f"Hardware error from APEI Generic Hardware Error Source: {m.group(1)}")
    amd = _AMD_STATUS.search(body)
    if amd is not None:  # mce_amd.c amd_decode_mce(): the record's status line, its details follow
        severity = "critical" if amd.group(1).startswith("System Fatal") else "error"
        return KernelSignal("mce:hardware_error", severity, f"{amd.group(1)} (AMD machine-check record)")
    if "mce" not in body:
        return None
    if "Machine check events logged" in body:  # mce_notify_irq(): records are in mcelog
        return KernelSignal("mce:events_logged", "warning", "Machine check events logged")
    m = _MCE.search(body)
    if m is None:
        return None  # the detail lines of an MCE report (TSC, ADDR, PROCESSOR …)
    severity = "critical" if m.group(2) else "error"
    return KernelSignal("mce:hardware_error", severity, f"CPU {m.group(1)}: Machine Check{m.group(2) or ''}: {m.group(3).strip()}")


def _edac(body: str) -> KernelSignal | None:
    """``EDAC [<driver> ]MC<n>: [<count> ]UE|CE …`` (``edac_mc.c`` ``edac_raw_mc_handle_error``).

    Corrected errors (CE) and uncorrected ones (UE) get distinct keys: a CE storm is never
    read as an uncorrectable memory error.
    """
    m = _EDAC.search(body)
    if m is None:
        return None
    count = f"{m.group(2)} " if m.group(2) is not None else ""
    message = f"{m.group(1)}: {count}{m.group(3)}{m.group(4)}".rstrip()
    if m.group(3) == "CE":
        return KernelSignal("edac:correctable", "warning", message)
    return KernelSignal("edac:uncorrectable", "critical", message)


def _bus_drop(body: str) -> KernelSignal | None:
    """An NVRM "fallen off the bus" line without an Xid number: the event of Xid 79.

    The GPU is read from the line when it names one; the last line of the three-line
    ``The NVIDIA GPU <bdf> / (PCI ID: …) installed in this system has / fallen off the bus
    …`` report names none (the reader takes it from the first line).
    """
    if "NVRM" not in body:
        return None
    m = _BUS_GPU.search(body)
    return KernelSignal("xid:79", "critical", "GPU has fallen off the bus (no Xid line)",
                        m.group(1).lower() if m else None, part="bus_drop")


#: AER severities (``drivers/pci/pcie/aer.c``, old and new wordings) -> (key, severity, label)
_AER_KINDS = {
    "fatal": ("pcie:aer_fatal", "critical", "Uncorrected (Fatal) error"),
    "non-fatal": ("pcie:aer_nonfatal", "error", "Uncorrected (Non-Fatal) error"),
    "corrected": ("pcie:aer_corrected", "warning", "Corrected error"),
}


def _aer_kind(kind: str, sev: str | None) -> str | None:
    if kind in ("Corrected", "Correctable"):
        return None if sev else "corrected"
    return None if sev is None else sev.lower()


def _aer(body: str) -> KernelSignal | None:
    """The first line of an AER report: ``<port>: AER: [Multiple ]<severity> error [message ]received…``.

    Fatal, non-fatal and corrected errors get distinct keys (a corrected storm is never read
    as fatal); the report's other lines are not signals (``AER: can't recover``, ``device
    recovery failed`` are consequences).
    """
    m = _AER.search(body)
    if m is None:
        return None
    kind = _aer_kind(m.group(2), m.group(3))
    if kind is None:
        return None
    key, severity, label = _AER_KINDS[kind]
    port = f"{m.group(1)}: " if m.group(1) else ""
    return KernelSignal(key, severity, f"{port}AER: {label} received: {m.group(4)}".strip())


def _aer_detail(body: str) -> KernelSignal | None:
    """``<dev>: PCIe Bus Error: severity=<…>``: the second line of an AER report (``part``)."""
    m = _AER_DETAIL.search(body)
    if m is None:
        return None
    sev = m.group(2).strip()
    kind = ("fatal" if "(Fatal)" in sev else "non-fatal" if "Non-Fatal" in sev
            else "corrected" if sev.startswith("Correct") else None)
    if kind is None:
        return None
    key, severity, _ = _AER_KINDS[kind]
    return KernelSignal(key, severity, f"{m.group(1)}: PCIe Bus Error: severity={sev}", part="aer_detail")


_MATCHERS: tuple[tuple[str, Callable[[str], KernelSignal | None]], ...] = (
    ("NVRM: Xid", _xid),
    ("SXid", _sxid),
    ("mlx5", _mlx5),
    ("Link is Down", _link_is_down),
    ("Lost carrier", _carrier),
    ("controller is down", _nvme),
    (" QID ", _nvme_timeout),
    ("Removing after probe failure", _nvme_removed),
    ("I/O error, dev", _blk),
    ("Hardware Error", _mce),
    ("EDAC", _edac),
    ("AER:", _aer),
    ("PCIe Bus Error", _aer_detail),
    ("fallen off the bus", _bus_drop),
)


def match_signal(body: str) -> KernelSignal | None:
    """The signal in a kernel message body, ``None`` if it carries none.

    Raises
    ------
    ParseError
        If the body announces a signal (``NVRM: Xid``, ``SXid``) it does not state.
    """
    for literal, matcher in _MATCHERS:
        if literal in body:
            found = matcher(body)
            if found is not None:
                return found
    return None
