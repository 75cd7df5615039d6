"""Headers and cells of the telemetry CSV readers: header name -> canonical ``telemetry`` column.

The generic ``telemetry_csv`` header (time, host and GPU columns, names ending in a unit
suffix of :data:`reliab.schema.TELEMETRY_UNITS`, DCGM field names or ids) and the
``nvidia-smi --query-gpu`` header (``power.draw [W]``: field and unit; the field names are
those ``nvidia-smi --help-query-gpu`` lists) are mapped and sniffed here, with the
missing-value tokens and cell units of nvidia-smi; the readers are in
:mod:`reliab.io.formats.telemetry.delimited`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from reliab import schema
from reliab.io.formats.telemetry.dcgm_fields import dcgm_column

__all__ = ["TIME_COLUMNS", "HOST_COLUMNS", "GPU_COLUMNS", "TEXT_COLUMNS", "ALIASES", "NVIDIA_SMI_FIELDS"]

TIME_COLUMNS = ("time", "timestamp", "t_unix")
HOST_COLUMNS = ("host", "hostname", "node")
GPU_COLUMNS = ("gpu", "gpu_index", "index")
TEXT_COLUMNS = ("phase", "source")
#: common unit-less names -> canonical names (NVML sample dumps such as the H200 capture)
ALIASES = {
    "clock_event_reasons": "clock_event_reasons_flag",
    "clocks_event_reasons": "clock_event_reasons_flag",
    "ecc_corrected_volatile": "ecc_corrected_volatile_count",
    "ecc_uncorrected_volatile": "ecc_uncorrected_volatile_count",
    "pcie_replay": "pcie_replay_count",
    "xid": "xid_count",
}
#: nvidia-smi --query-gpu field (unit stripped) -> canonical column
NVIDIA_SMI_FIELDS = {
    "temperature.gpu": "temp_c", "temperature.memory": "mem_temp_c",
    "power.draw": "power_w", "power.draw.average": "power_avg_w",
    "power.draw.instant": "power_instant_w", "power.limit": "power_limit_w",
    "enforced.power.limit": "enforced_power_limit_w",
    "clocks.sm": "sm_clock_mhz", "clocks.current.sm": "sm_clock_mhz",
    "clocks.mem": "mem_clock_mhz", "clocks.current.memory": "mem_clock_mhz",
    "clocks.gr": "gr_clock_mhz", "clocks.current.graphics": "gr_clock_mhz",
    "clocks.max.sm": "max_sm_clock_mhz", "clocks.max.memory": "max_mem_clock_mhz",
    "utilization.gpu": "util_gpu_pct", "utilization.memory": "util_mem_pct",
    "memory.used": "mem_used_mib", "memory.total": "mem_total_mib", "memory.free": "mem_free_mib",
    "fan.speed": "fan_pct", "pstate": "pstate",
    "clocks_event_reasons.active": "clock_event_reasons_flag",
    "clocks_throttle_reasons.active": "clock_event_reasons_flag",
    "ecc.errors.corrected.volatile.total": "ecc_corrected_volatile_count",
    "ecc.errors.uncorrected.volatile.total": "ecc_uncorrected_volatile_count",
    "ecc.errors.corrected.aggregate.total": "ecc_corrected_aggregate_count",
    "ecc.errors.uncorrected.aggregate.total": "ecc_uncorrected_aggregate_count",
}
_UNIT_SUFFIX = {"w": "_w", "mhz": "_mhz", "%": "_pct", "mib": "_mib", "gib": "_gib", "c": "_c",
                "j": "_j", "mj": "_mj", "ms": "_ms", "s": "_s", "v": "_v", "a": "_a"}
_NA = frozenset({"", "nan", "na", "n/a", "[n/a]", "[not supported]", "not supported", "none",
                 "[unknown error]", "[insufficient permissions]", "[gpu lost]", "[gpu requires reset]"})
#: nvidia-smi prints an NVML status in brackets where a value cannot be read: ``[N/A]``,
#: ``[Not Supported]``, ``[GPU is lost]``, ``[Requested functionality has been deprecated]``
#: (the ``nvmlErrorString`` texts, nvml.h ``NVML_ERROR_*``, e.g. ``NVML_ERROR_DEPRECATED``):
#: never a number, always a missing value (a bracketed number, ``[1]``, stays malformed)
_STATUS_CELL = r"^\[[^\[\]0-9]*[A-Za-z][^\[\]0-9]*\]$"
_CELL_UNIT = re.compile(r"\s+(?:W|MHz|MiB|GiB|%|C|J|mJ|ms|s|V|A)$")


def _has_unit(name: str) -> bool:
    return name.endswith(schema.TELEMETRY_UNITS)


def _generic_name(columns: Mapping[str, str]) -> Callable[[str], str | None]:
    mapping = {k.strip().lower(): v for k, v in columns.items()}

    def rename(name: str) -> str | None:
        key = name.strip().lower()
        if key in mapping:
            return mapping[key]
        if key in ("time", "timestamp"):
            return "time"
        if key in ("t_unix", "epoch", "unix_time"):
            return "t_unix"
        if key in HOST_COLUMNS:
            return "host"
        if key in GPU_COLUMNS:
            return "gpu"
        if key.startswith("dcgm_fi_") or key.isdigit():  # DCGM field CSV: names or field ids
            return dcgm_column(key)
        key = ALIASES.get(key, key)
        return key if _has_unit(key) or key in TEXT_COLUMNS or key == "pstate" else None

    return rename


def _bus_id(text: str) -> str | None:
    """``00000000:09:00.0`` -> ``0000:09:00`` (the kernel-log form of the GPU's bus id)."""
    parts = str(text).strip().lower().split(":")
    if len(parts) < 3:
        return None
    return f"{parts[-3][-4:].zfill(4)}:{parts[-2].zfill(2)}:{parts[-1].split('.')[0].zfill(2)}"


def _smi_name(name: str) -> str | None:
    m = re.match(r"^\s*(?P<field>[^\[]+?)\s*(?:\[(?P<unit>[^\]]*)\])?\s*$", name)
    if m is None:
        return None
    field, unit = m["field"].lower(), (m["unit"] or "").strip().lower()
    if field == "timestamp":
        return "time"
    if field == "index":
        return "gpu"
    if field in ("pci.bus_id", "gpu_bus_id"):
        return "_bus_id"
    if field in NVIDIA_SMI_FIELDS:
        return NVIDIA_SMI_FIELDS[field]
    if unit in _UNIT_SUFFIX:
        return re.sub(r"[^a-z0-9]+", "_", field).strip("_") + _UNIT_SUFFIX[unit]
    return None


def _sniff_generic(path: str, lines: Sequence[str]) -> float:
    if not lines or "," not in lines[0]:
        return 0.0
    names = [c.strip().lower() for c in lines[0].split(",")]
    if any(n in names for n in TIME_COLUMNS) and sum(_has_unit(n) or dcgm_column(n) is not None
                                                      for n in names) >= 1:
        return 0.8
    return 0.0


def _sniff_smi(path: str, lines: Sequence[str]) -> float:
    head = next((line.lower() for line in lines if line.strip()), "")
    fields = [c.strip().split(" [")[0] for c in head.split(",")]
    known = sum(f in NVIDIA_SMI_FIELDS or f in ("index", "pci.bus_id", "gpu_bus_id", "name", "gpu_name",
                                                "driver_version", "pstate") for f in fields)
    if head.startswith("timestamp") and any(f in head for f in ("temperature.gpu", "power.draw",
                                                               "utilization.gpu", "clocks.")):
        return 0.95
    if len(fields) >= 2 and known >= 2 and known * 2 >= len(fields):
        return 0.9  # a --query-gpu header without the timestamp field
    return 0.0
