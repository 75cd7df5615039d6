"""DCGM field names and ids → reliab telemetry columns (units in the names).

Field ids and names from NVIDIA DCGM ``dcgmlib/dcgm_fields.h`` (github.com/NVIDIA/DCGM); units
as documented there.  The violation counters are kept ``_raw``: DCGM's header says ns and
dcgm-exporter's help text (``etc/default-counters.csv``) says us, so no unit is claimed.
"""

from __future__ import annotations

DCGM_COLUMNS = {
    "GPU_TEMP": "temp_c", "MEMORY_TEMP": "mem_temp_c", "POWER_USAGE": "power_w",
    "POWER_USAGE_INSTANT": "power_instant_w", "TOTAL_ENERGY_CONSUMPTION": "energy_mj",
    "SM_CLOCK": "sm_clock_mhz", "MEM_CLOCK": "mem_clock_mhz", "GPU_UTIL": "util_gpu_pct",
    "MEM_COPY_UTIL": "util_mem_copy_pct", "ENC_UTIL": "util_enc_pct", "DEC_UTIL": "util_dec_pct",
    "FB_FREE": "fb_free_mib", "FB_USED": "fb_used_mib", "PCIE_REPLAY_COUNTER": "pcie_replay_count",
    "XID_ERRORS": "last_xid_code", "ECC_SBE_VOL_TOTAL": "ecc_sbe_volatile_count",
    "ECC_DBE_VOL_TOTAL": "ecc_dbe_volatile_count", "ECC_SBE_AGG_TOTAL": "ecc_sbe_aggregate_count",
    "ECC_DBE_AGG_TOTAL": "ecc_dbe_aggregate_count", "UNCORRECTABLE_REMAPPED_ROWS": "remapped_rows_uncorrectable_count",
    "CORRECTABLE_REMAPPED_ROWS": "remapped_rows_correctable_count", "ROW_REMAP_FAILURE": "remap_failure_flag",
    # dcgm_fields.h says ns, dcgm-exporter's default-counters.csv says us: kept raw, unit unknown
    "POWER_VIOLATION": "power_violation_raw", "THERMAL_VIOLATION": "thermal_violation_raw",
    "PCIE_TX_THROUGHPUT": "pcie_tx_raw", "PCIE_RX_THROUGHPUT": "pcie_rx_raw",
    "NVLINK_BANDWIDTH_TOTAL": "nvlink_bandwidth_total_raw",
    # bit mask of active clock-event (throttle) reasons; CLOCK_THROTTLE_REASONS is the deprecated alias
    "CLOCKS_EVENT_REASONS": "clock_event_reasons_flag", "CLOCK_THROTTLE_REASONS": "clock_event_reasons_flag",
}

#: documented numeric field ids -> field name (without the DCGM_FI_DEV_ prefix)
FIELD_IDS = {
    112: "CLOCKS_EVENT_REASONS", 140: "MEMORY_TEMP", 150: "GPU_TEMP", 155: "POWER_USAGE", 156: "TOTAL_ENERGY_CONSUMPTION",
    157: "POWER_USAGE_INSTANT", 202: "PCIE_REPLAY_COUNTER", 203: "GPU_UTIL", 230: "XID_ERRORS",
    240: "POWER_VIOLATION", 241: "THERMAL_VIOLATION", 310: "ECC_SBE_VOL_TOTAL", 311: "ECC_DBE_VOL_TOTAL",
    312: "ECC_SBE_AGG_TOTAL", 313: "ECC_DBE_AGG_TOTAL", 393: "UNCORRECTABLE_REMAPPED_ROWS",
    394: "CORRECTABLE_REMAPPED_ROWS", 395: "ROW_REMAP_FAILURE",
}


#: dcgm-exporter 1.x metric names (``dcgm_<field>``, its metrics CSV: ``DCGM_FI_DEV_SM_CLOCK,
#: dcgm_sm_clock``) that are not the DCGM field name in lower case
LEGACY_NAMES = {
    "memory_clock": "MEM_CLOCK", "gpu_utilization": "GPU_UTIL", "mem_copy_utilization": "MEM_COPY_UTIL",
    "enc_utilization": "ENC_UTIL", "dec_utilization": "DEC_UTIL",
    "ecc_sbe_volatile_total": "ECC_SBE_VOL_TOTAL", "ecc_dbe_volatile_total": "ECC_DBE_VOL_TOTAL",
    "ecc_sbe_aggregate_total": "ECC_SBE_AGG_TOTAL", "ecc_dbe_aggregate_total": "ECC_DBE_AGG_TOTAL",
}


def legacy_column(name: str) -> str | None:
    """Column for a dcgm-exporter 1.x metric (``dcgm_gpu_temp``, ``dcgm_memory_clock``), ``None`` if unknown."""
    field = name.removeprefix("dcgm_")
    return DCGM_COLUMNS.get(LEGACY_NAMES.get(field, field.upper()))


def dcgm_column(name: str) -> str | None:
    """Column for a DCGM field given as ``DCGM_FI_DEV_GPU_TEMP``, ``GPU_TEMP`` or ``150``."""
    key = name.strip().upper()
    if key.isascii() and key.isdigit():  # a field id ('²'.isdigit() is True too)
        key = FIELD_IDS.get(int(key), "") if len(key) < 6 else ""
    key = key.removeprefix("DCGM_FI_DEV_").removeprefix("DCGM_FI_PROF_")
    return DCGM_COLUMNS.get(key)
