"""The ``sel:`` signal keys of IPMI SEL records and their severities.

A record's key is its sensor type and event: thresholds as ``<type>_<lower|upper>_<level>``,
named events per :data:`EVENT_KEYS`, anything else ``other`` (ipmitool
``include/ipmitool/ipmi_sel.h`` event strings, ``sensor_type_desc``; IPMI v2.0 tables 42-2
and 42-3).  Shared by the SEL reader (:mod:`reliab.io.formats.sel`) and the reader of SEL
records that reached syslog (:mod:`reliab.io.formats._sel_syslog`).
"""

from __future__ import annotations

import re

__all__ = ["SENSOR_TYPES", "EVENT_KEYS", "sensor_type", "event_key", "severity_of"]

_THRESHOLD = re.compile(r"\b(lower|upper) (non-critical|critical|non-recoverable) going (low|high)\b")
#: generic "severity" event states (IPMI v2.0 table 42-2, event type 07h; ipmitool ipmi_sel.h)
_TRANSITION = re.compile(r"\btransition to (non-critical|critical|non-recoverable)\b")
_LEVEL = {"non-critical": "noncritical", "critical": "critical", "non-recoverable": "nonrecoverable"}
#: sensor type names of ipmitool (``sensor_type_desc``) that a ``sel elist`` sensor starts with
SENSOR_TYPES = (
    "temperature", "voltage", "current", "fan", "physical security", "platform security",
    "processor", "power supply", "power unit", "cooling device", "other units-based sensor",
    "memory", "drive slot", "post memory resize", "system firmwares", "system firmware progress",
    "event logging disabled", "watchdog", "system event", "critical interrupt", "button",
    "module/board", "microcontroller", "add-in card", "chassis", "chip set", "other fru",
    "cable/interconnect", "terminator", "system boot initiated", "boot error", "os boot",
    "os critical stop", "slot/connector", "system acpi power state", "platform alert",
    "entity presence", "monitor asic", "lan", "management subsystem health", "battery",
    "session audit", "version change", "fru state",
)

#: (sensor type prefix, event substring, key), first match wins; event text per ipmitool
#: ``ipmi_sel.h`` and per FreeIPMI's short strings (``libfreeipmi/spec/
#: ipmi-sensor-and-event-code-tables-spec.c``: "Power Supply input lost (AC/DC)", "Machine
#: Check Exception", "Uncorrectable memory error"), which name the same IPMI sensor offsets
EVENT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("power supply", "ac lost", "power_supply_ac_lost"),
    ("power supply", "input lost", "power_supply_ac_lost"),
    ("power supply", "out-of-range", "power_supply_ac_out_of_range"),
    ("power supply", "failure detected", "power_supply_failure"),
    ("power supply", "predictive failure", "power_supply_predictive_failure"),
    ("power unit", "ac lost", "power_unit_ac_lost"),
    ("power unit", "failure detected", "power_unit_failure"),
    ("processor", "ierr", "processor_ierr"),
    ("processor", "uncorrectable machine check", "processor_mce"),
    ("processor", "correctable machine check", "processor_correctable_mce"),
    ("processor", "machine check exception", "processor_mce"),
    ("processor", "thermal trip", "processor_thermal_trip"),
    ("processor", "throttled", "processor_throttled"),
    ("memory", "uncorrectable ecc", "memory_uncorrectable_ecc"),
    ("memory", "correctable ecc", "memory_correctable_ecc"),
    ("memory", "uncorrectable memory error", "memory_uncorrectable_ecc"),
    ("memory", "correctable memory error", "memory_correctable_ecc"),
    ("critical interrupt", "bus correctable", "critical_interrupt_correctable"),
    ("critical interrupt", "", "critical_interrupt"),
    ("os critical stop", "run-time critical stop", "os_critical_stop"),
    ("os critical stop", "critical stop during os load", "os_critical_stop"),
    ("os critical stop", "error during system startup", "os_critical_stop"),
    ("os critical stop", "graceful", "os_graceful_shutdown"),
    ("system event", "undetermined system hardware failure", "system_hardware_failure"),
)
_CRITICAL = frozenset({
    "power_supply_ac_lost", "power_supply_failure", "power_unit_ac_lost", "power_unit_failure",
    "processor_ierr", "processor_mce", "processor_thermal_trip", "memory_uncorrectable_ecc",
    "critical_interrupt", "os_critical_stop", "system_hardware_failure",
})
_INFO = frozenset({"other", "os_graceful_shutdown"})


def sensor_type(sensor: str) -> str | None:
    """The IPMI sensor type a SEL sensor column starts with, as a key (``power_supply``)."""
    s = sensor.strip().lower()
    for kind in SENSOR_TYPES:
        if s.startswith(kind) and (len(s) == len(kind) or not s[len(kind)].isalnum()):
            return re.sub(r"[^a-z0-9]+", "_", kind).strip("_")
    return None


def event_key(sensor: str, event: str) -> str:
    """The signal key (without ``sel:``) of a sensor and event description.

    Threshold events give ``<sensor type>_<lower|upper>_<noncritical|critical|nonrecoverable>``
    and the generic severity states ``<sensor type>_<noncritical|critical|nonrecoverable>``
    (``Transition to Non-recoverable``); the others follow :data:`EVENT_KEYS`; anything else
    (including ``Log area reset/cleared``) is ``other``.
    """
    s, e = sensor.strip().lower(), event.strip().lower()
    kind = sensor_type(s)
    m = _THRESHOLD.search(e)
    if m is not None and kind is not None:
        return f"{kind}_{m[1]}_{_LEVEL[m[2]]}"
    for prefix, needle, key in EVENT_KEYS:
        if s.startswith(prefix) and needle in e:
            return key
    m = _TRANSITION.search(e)
    if m is not None and kind is not None:
        return f"{kind}_{_LEVEL[m[1]]}"
    return "other"


def severity_of(key: str) -> str:
    """The severity of an asserted record of key ``key``: critical, warning or info."""
    if key in _CRITICAL or key.endswith(("_critical", "_nonrecoverable")):
        return "critical"
    if key in _INFO:
        return "info"
    return "warning"


#: records remembered per file for :func:`repeated` (a full SEL holds a few thousand; cleared when full)
MAX_SEEN = 100_000


def repeated(seen: dict[str, str], record: str, key: str) -> bool:
    """Whether record ``record`` was already seen with text ``key``; remembers it.

    A SEL record printed twice (same id, same text: overlapping ``head``/``tail`` captures,
    a forwarded record written again) is one event.  At most :data:`MAX_SEEN` records are
    remembered; the memory is then started afresh, so a file's memory stays bounded.
    """
    if seen.get(record) == key:
        return True
    if len(seen) >= MAX_SEEN:
        seen.clear()
    seen[record] = key
    return False
