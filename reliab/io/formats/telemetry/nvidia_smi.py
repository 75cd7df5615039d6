"""GPU telemetry in NVIDIA's own text formats: ``nvidia-smi -q``, ``nvidia-smi dmon`` and
dcgm-exporter's Prometheus exposition.

Each becomes the canonical ``telemetry`` table (``time``, ``host``, ``gpu`` and numeric
columns whose names carry their unit).  Formats as printed by the tools (nvidia-smi manual;
dcgm-exporter ``etc/default-counters.csv`` and its Prometheus exposition format).
Accounting: a line that yields at least one value is parsed; headers, section titles and
text-valued fields are irrelevant; a data row that cannot be read is malformed.

Missing values (``-`` in dmon, ``N/A``, ``[N/A]``, ``[Not Supported]``) are NaN; a column
that is missing in every row (memory temperature on GDDR boards, ECC counters with ECC off)
is an all-NaN column.  Captures that carry no clock — ``dmon`` recorded without ``-o DT``
(or with ``-o T``, time without date), a dcgm-exporter scrape (samples without a timestamp),
an ``nvidia-smi -q`` report without its ``Timestamp`` line — are read with the time given
by an option (``start=`` and ``interval_s=`` for dmon, ``time=`` for the others); without
it their rows are counted irrelevant and the file gets ONE note naming the option, never a
quarantine row per line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from reliab.errors import ParseError
from reliab.io._lines import LineContext, scan_lines
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats._timestamps import TIME_MAX, TIME_MIN, localize
from reliab.io.formats.telemetry.dcgm_fields import dcgm_column, legacy_column

_UNIT_SUFFIX = {"C": "_c", "W": "_w", "MHz": "_mhz", "%": "_pct", "MiB": "_mib", "MB": "_mib", "MB/s": "_mbps",
                "mJ": "_mj", "J": "_j", "ms": "_ms", "us": "_us", "s": "_s"}


def normalize_pci(bus_id: str) -> str:
    """``00000000:18:00.0`` / ``0000:18:00.0`` / ``0000:18:00`` / ``0:2:0`` → kernel-log form ``0000:18:00``.

    Old drivers print the domain, bus and device in short hex (``GPU 0:2:0``); they are
    zero-padded to 4, 2 and 2 digits.
    """
    parts = bus_id.strip().lower().split(":")
    if len(parts) < 3:
        return bus_id.strip().lower()
    domain, bus, device = parts[-3][-4:], parts[-2], parts[-1].split(".")[0]
    return f"{domain.zfill(4)}:{bus.zfill(2)}:{device.zfill(2)}"


def _host_of(path: str, options: dict[str, Any]) -> str:
    return str(options.get("host") or Path(path).name.split(".")[0])


def _number(text: str) -> float | None:
    text = text.strip()
    if text in ("N/A", "[N/A]", "-", "[Not Supported]", "Not Supported", "Unknown Error", "[Unknown Error]"):
        return None
    if text in ("Yes", "No", "Enabled", "Disabled"):
        return 1.0 if text in ("Yes", "Enabled") else 0.0
    m = re.fullmatch(r"(-?[0-9]{1,300}(?:\.[0-9]{1,300})?)\s*(?:\S.*)?", text)
    return float(m.group(1)) if m else None


def _untimed(ctx: LineContext, what: str, option: str, line: int | None = None) -> None:
    """Count a data line (``line``, default the current one) that has no clock; :func:`_untimed_note`
    says it once per file."""
    st = ctx.state
    st["untimed"] = st.get("untimed", 0) + 1
    st.setdefault("untimed_first", (ctx.lineno if line is None else line, what, option))


def _untimed_note(ctx: LineContext) -> None:
    """The one note of a file whose data lines carry no clock: which option gives it."""
    n = ctx.state.get("untimed", 0)
    if n:
        first, what, option = ctx.state["untimed_first"]
        ctx.state.setdefault("notes", []).append(
            f"{what} carry no clock: pass {option}; {n} data line(s) from line {first} not read")


def _capture_time(value: str | None, tz: str = "UTC") -> pd.Timestamp | None:
    """The ``time=``/``start=`` option as a UTC Timestamp (naive times in ``tz``)."""
    if value is None:
        return None
    ts = pd.Timestamp(value)
    return localize(ts, tz)  # naive: the one DST rule


# ---------------------------------------------------------------- nvidia-smi -q
_Q_ALIASES = {
    "Temperature/GPU Current Temp": "temp_c",
    "Temperature/Gpu": "temp_c",  # drivers before ~340
    "Temperature/Memory Current Temp": "mem_temp_c",
    "GPU Power Readings/Average Power Draw": "power_w",
    "GPU Power Readings/Power Draw": "power_w",
    "Power Readings/Power Draw": "power_w",
    "GPU Power Readings/Instantaneous Power Draw": "power_instant_w",
    "GPU Power Readings/Current Power Limit": "power_limit_w",
    # driver 610 nests the limits: "GPU Power Readings / GPU Ceiling Power Limit / Current Power
    # Limit" (nvidia_gpu_exporter's captures of 610.57.04 and 610.62)
    "GPU Power Readings/GPU Ceiling Power Limit/Current Power Limit": "power_limit_w",
    "Clocks/SM": "sm_clock_mhz",
    "Clocks/Memory": "mem_clock_mhz",
    "Clocks/Graphics": "graphics_clock_mhz",
    "Utilization/GPU": "util_gpu_pct",
    "Utilization/Gpu": "util_gpu_pct",
    "Utilization/Memory": "util_mem_pct",
    "FB Memory Usage/Used": "fb_used_mib",
    "FB Memory Usage/Total": "fb_total_mib",
    "Retired Pages/Single Bit ECC": "retired_pages_sbe_count",
    "Retired Pages/Double Bit ECC": "retired_pages_dbe_count",
    "Remapped Rows/Correctable Error": "remapped_rows_correctable_count",
    "Remapped Rows/Uncorrectable Error": "remapped_rows_uncorrectable_count",
    "Remapped Rows/Pending": "remap_pending_flag",
    "Remapped Rows/Remapping Failure Occurred": "remap_failure_flag",
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _q_column(path: tuple[str, ...]) -> str | None:
    key = "/".join(path)
    if key in _Q_ALIASES:
        return _Q_ALIASES[key]
    if path[0] == "ECC Errors" and len(path) == 3:  # Volatile|Aggregate / SRAM Correctable ...
        leaf = _slug(path[2])
        if path[1] in ("Volatile", "Aggregate"):
            return f"ecc_{path[1].lower()}_{leaf}" + ("_flag" if "exceeded" in leaf else "_count")
        if path[1].startswith("Aggregate Uncorrectable SRAM"):
            return f"ecc_sram_uncorrectable_{leaf.removeprefix('sram_')}_count"
    return None


def _parse_q_line(text: str, ctx: LineContext) -> dict | None:
    if not text.strip() or text.startswith("="):
        return None
    indent = len(text) - len(text.lstrip(" "))
    key, sep, value = text.strip().partition(":")
    key = key.strip()
    st = ctx.state
    if indent == 0:
        if re.fullmatch(r"GPU [0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(\.[0-9])?", text.strip()):
            st["gpu"] = normalize_pci(text.strip()[4:])
            st["stack"] = []
            # every GPU of the report gets its row, even one whose values are all N/A
            st.setdefault("sections", {}).setdefault(st["gpu"], f"{ctx.path}:{ctx.lineno}")
        elif key == "Timestamp" and sep:
            try:
                st["time"] = localize(pd.Timestamp(value.strip()), ctx.options.get("tz", "UTC"))
            except (ValueError, OverflowError) as exc:
                raise ParseError(f"unreadable nvidia-smi Timestamp {value.strip()!r}") from exc
        return None
    level = indent // 4 - 1
    stack: list[str] = st.setdefault("stack", [])
    del stack[level:]
    if not sep or not value.strip():
        stack.append(key)
        return None
    column = _q_column((*stack, key))
    number = _number(value) if column else None
    if column is None or number is None:
        return None
    if "gpu" not in st:
        raise ParseError("value outside any 'GPU <bus id>' section")
    if st.get("time") is None and ctx.options.get("time") is None:
        _untimed(ctx, "nvidia-smi -q values without a Timestamp line", "time= (when the report was taken)")
        return None
    return {"_gpu": st["gpu"], "_col": column, "_val": number}


def _q_finish(rows: list[dict], ctx: LineContext) -> list[dict]:
    """One row per GPU section of the report: its values, missing where none was printed."""
    sections: dict[str, str] = ctx.state.get("sections", {})
    time = ctx.state.get("time") or _capture_time(ctx.options.get("time"), ctx.options.get("tz", "UTC"))
    if time is None and sections and "untimed" not in ctx.state:  # GPU sections without values or a clock
        first = int(next(iter(sections.values())).rsplit(":", 1)[1])
        _untimed(ctx, "nvidia-smi -q GPU sections without a Timestamp line", "time= (when the report was taken)",
                 line=first)
    _untimed_note(ctx)
    if time is None or not (rows or sections):
        return []
    host = _host_of(ctx.path, ctx.options)
    out: dict[str, dict] = {}
    for r in rows:
        rec = out.setdefault(r["_gpu"], {"time": time, "host": host, "gpu": r["_gpu"], "origin": r["origin"]})
        rec.setdefault(r["_col"], r["_val"])
    for gpu, origin in sections.items():
        out.setdefault(gpu, {"time": time, "host": host, "gpu": gpu, "origin": origin})
    return list(out.values())


#: the lines of a ``-q`` report's head: its top-level ``Key  : value`` fields and a GPU section
_Q_TOP = re.compile(r"(?:Timestamp|Driver Version|CUDA Version|Attached GPUs) +: ")
_Q_GPU = re.compile(r"GPU [0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-9])?$")


def _sniff_q(path: str, first_lines: Sequence[str]) -> float:
    """The ``NVSMI LOG`` banner, or (a report whose banner was cut away) two of its top-level
    fields and a ``GPU <bus id>`` section line."""
    if any("NVSMI LOG" in line for line in first_lines[:5]):
        return 0.98
    top = sum(_Q_TOP.match(line) is not None for line in first_lines[:12])
    return 0.9 if top >= 2 and any(_Q_GPU.match(line.rstrip()) for line in first_lines) else 0.0


@register_parser("nvidia_smi_q", sniff=_sniff_q, table="telemetry")
def read_nvidia_smi_q(path: str, *, host: str | None = None, tz: str = "UTC", time: str | None = None,
                      strict: bool = False) -> FileResult:
    """``nvidia-smi -q`` report → one telemetry row per GPU (ECC, remapped rows, power, clocks).

    ``time`` dates a report without its ``Timestamp`` line (naive times are in ``tz``).

    Parameters
    ----------
    time : str, optional
        Time of a report or scrape that carries none (naive times are in ``tz``).
    """
    return scan_lines(path, "nvidia_smi_q", _parse_q_line, table="telemetry", strict=strict,
                      options={"host": host, "tz": tz, "time": time}, finish=_q_finish)


# ---------------------------------------------------------------- nvidia-smi dmon
_DMON_NAMES = {"pwr": "power", "gtemp": "temp", "mtemp": "mem_temp", "sm": "util_sm", "mem": "util_mem",
               "enc": "util_enc", "dec": "util_dec", "jpg": "util_jpg", "ofa": "util_ofa", "mclk": "mem_clock",
               "pclk": "sm_clock", "fb": "fb_used", "bar1": "bar1_used", "ccpm": "ccpm_used",
               "rxpci": "pcie_rx", "txpci": "pcie_tx", "sbecc": "ecc_sbe", "dbecc": "ecc_dbe", "pci": "pcie_replay",
               "pviol": "power_violation", "tviol": "thermal_violation"}


def _dmon_header(text: str, ctx: LineContext) -> None:
    tokens = text.lstrip("#").split()
    if ctx.state.get("names") is None or any(t in ("gpu", "Date", "Time") for t in tokens[:3]):
        ctx.state["names"] = tokens
    else:
        ctx.state["units"] = tokens


def _dmon_column(name: str, unit: str) -> str:
    base = _DMON_NAMES.get(name, name)
    return base + _UNIT_SUFFIX.get(unit, "_count" if unit in ("-", "") else "_raw")


def _parse_dmon_line(text: str, ctx: LineContext) -> dict | None:
    if not text.strip():
        return None
    if text.startswith("#"):
        _dmon_header(text, ctx)
        return None
    names, units = ctx.state.get("names"), ctx.state.get("units")
    if not names or not units:
        raise ParseError("dmon data row before its '# gpu ...' and units header lines")
    values = text.split()
    if len(values) != len(names):
        raise ParseError(f"dmon row has {len(values)} fields, header has {len(names)}")
    row: dict[str, Any] = {}
    rest = list(zip(names, units, values, strict=True))
    if names[0] == "Date":
        row["time"] = _dmon_stamp(f"{values[0]} {values[1]}", "%Y%m%d %H:%M:%S", ctx)
        rest = rest[2:]
    elif names[0] == "Time":
        start = _capture_time(ctx.options.get("start"), ctx.options.get("tz") or "UTC")
        if start is None:
            _untimed(ctx, "dmon rows recorded with -o T (time without date)",
                     "start= (a time on the day of the first sample) or record with -o DT")
            return None
        row["time"] = _dmon_on_day(values[0], start, ctx)
        rest = rest[1:]
    else:
        start = _capture_time(ctx.options.get("start"), ctx.options.get("tz") or "UTC")
        if start is None:
            _untimed(ctx, "dmon rows recorded without -o DT",
                     "start= (time of the first sample) and interval_s= (the -d delay), or record with -o DT")
            return None
        n = ctx.state["n"] = ctx.state.get("n", -1) + (1 if values[0] == ctx.state.get("first_gpu", values[0]) else 0)
        ctx.state.setdefault("first_gpu", values[0])
        row["time"] = start + pd.Timedelta(seconds=float(ctx.options.get("interval_s", 1.0)) * n)
    for name, unit, value in rest:
        if name == "gpu":
            row["gpu"] = value
            continue
        number = _number(value)
        row[_dmon_column(name, unit)] = math.nan if number is None else number
    row["host"] = _host_of(ctx.path, ctx.options)
    return row


def _dmon_stamp(stamp: str, fmt: str, ctx: LineContext) -> pd.Timestamp:
    try:
        local = pd.Timestamp(pd.to_datetime(stamp, format=fmt))
        return localize(local, ctx.options.get("tz") or "UTC")
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"unreadable dmon date/time {stamp!r}") from exc


def _dmon_on_day(clock: str, start: pd.Timestamp, ctx: LineContext) -> pd.Timestamp:
    """A ``-o T`` time on the day of ``start``, moving to the next day when the clock wraps."""
    tz = ctx.options.get("tz") or "UTC"
    day = start.tz_convert(tz).strftime("%Y%m%d")
    when = _dmon_stamp(f"{day} {clock}", "%Y%m%d %H:%M:%S", ctx)
    shift = ctx.state.get("day_shift", 0)
    last = ctx.state.get("last_clock")
    if last is not None and clock < last:
        shift += 1
        ctx.state["day_shift"] = shift
    ctx.state["last_clock"] = clock
    return when + pd.Timedelta(days=shift)


def _dmon_finish(rows: list[dict], ctx: LineContext) -> list[dict]:
    _untimed_note(ctx)
    return rows


def _sniff_dmon(path: str, first_lines: Sequence[str]) -> float:
    head = [line for line in first_lines[:4] if line.startswith("#")]
    return 0.9 if head and re.search(r"#\s*(gpu|Date)\s", head[0]) and "pwr" in head[0] or (head and " sm " in head[0]) else 0.0


@register_parser("nvidia_smi_dmon", sniff=_sniff_dmon, table="telemetry")
def read_nvidia_smi_dmon(path: str, *, host: str | None = None, start: str | None = None,
                         interval_s: float = 1.0, tz: str = "UTC", strict: bool = False) -> FileResult:
    """``nvidia-smi dmon`` output (any ``-s`` column set; ``-o DT`` for timestamps) → telemetry.

    Without date columns, ``start`` is the time of the first sample and ``interval_s`` the
    ``-d`` delay between samples (``-o T``: ``start`` gives the day).
    """
    return scan_lines(path, "nvidia_smi_dmon", _parse_dmon_line, table="telemetry", strict=strict,
                      options={"host": host, "start": start, "interval_s": interval_s, "tz": tz},
                      finish=_dmon_finish)


# ---------------------------------------------------------------- dcgm-exporter (Prometheus text)
#: DCGM's "blank" sentinels (``dcgm_structs.h``: DCGM_INT64_BLANK 0x7ffffffffffffff0,
#: DCGM_INT32_BLANK 0x7ffffff0, DCGM_FP64_BLANK 140737488355328.0, each followed by
#: NOT_FOUND, NOT_SUPPORTED and NOT_PERMISSIONED): a value that is not there
_DCGM_BLANKS = ((0x7FFFFFFFFFFFFFF0, 0x7FFFFFFFFFFFFFFF), (0x7FFFFFF0, 0x7FFFFFF3),
                (140737488355328.0, 140737488355331.0))


def _dcgm_value(text: str) -> float:
    """A sample value, NaN for DCGM's blank sentinels (compared exactly, not as floats)."""
    exact: float | int = int(text) if text.isascii() and text.isdigit() and len(text) < 25 else float(text)
    if any(lo <= exact <= hi for lo, hi in _DCGM_BLANKS):
        return math.nan
    return float(exact)


_PROM = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+(?P<ts>-?\d+))?\s*$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _parse_prom_line(text: str, ctx: LineContext) -> dict | None:
    if not text.strip() or text.startswith("#"):
        return None
    m = _PROM.match(text)
    if m is None:
        raise ParseError("not a Prometheus sample line")
    name = m["name"]
    labels = dict(_LABEL.findall(m["labels"] or "")) if name.startswith(("DCGM_", "dcgm_")) else {}
    column = _prom_column(name, labels)
    if column is None:
        return None
    try:
        value = _dcgm_value(m["value"])
    except ValueError as exc:
        raise ParseError(f"sample value {m['value']!r} is not a number") from exc
    if m["ts"] is not None:
        time = _epoch_ms(m["ts"])
    elif ctx.options.get("time") is not None:
        time = _capture_time(ctx.options["time"])
    else:
        _untimed(ctx, "dcgm-exporter samples without a timestamp (a /metrics scrape)",
                 "time= (when the scrape was taken)")
        return None
    host = labels.get("Hostname") or labels.get("hostname") or _host_of(ctx.path, ctx.options)
    gpu = labels.get("gpu") or (normalize_pci(labels["pci_bus_id"]) if "pci_bus_id" in labels else None)
    return {"time": time, "host": host, "gpu": gpu, "_col": column, "_val": value}


def _prom_column(name: str, labels: dict[str, str]) -> str | None:
    """The telemetry column of a dcgm-exporter sample, ``None`` for samples that are not read.

    ``DCGM_FI_*`` fields by :func:`dcgm_column` and dcgm-exporter 1.x's ``dcgm_*`` names by
    :func:`legacy_column` (unknown ones kept ``_raw``); the exporter's own
    Xid metrics, one column per Xid code of their ``xid`` label (dcgm-exporter's counter list,
    ``etc/default-counters.csv``): ``DCGM_EXP_XID_ERRORS_COUNT`` (gauge: errors within the
    configured window; also seen spelled ``DCGM_FI_DEV_XID_ERRORS_ACTIVE``) as
    ``xid_<code>_count``, ``DCGM_EXP_XID_ERRORS_TOTAL`` (counter since the exporter started) as
    ``xid_<code>_total``.
    """
    xid = labels.get("xid", "")
    if "XID_ERRORS" in name and xid.isascii() and xid.isdigit() and len(xid) < 6:
        return f"xid_{int(xid)}_{'total' if name.endswith('_TOTAL') else 'count'}"
    if name.startswith("dcgm_"):  # dcgm-exporter 1.x names (dcgm_fields.legacy_column)
        return legacy_column(name) or f"{name}_raw"
    if not name.startswith("DCGM_FI_"):
        return None
    return dcgm_column(name) or f"dcgm_{name.lower().removeprefix('dcgm_fi_dev_')}_raw"


def _epoch_ms(digits: str) -> pd.Timestamp:
    """A Prometheus sample timestamp (milliseconds since the epoch), range-checked."""
    if len(digits.lstrip("-")) > 16:
        raise ParseError(f"sample timestamp {digits[:24]}… ms is out of range")
    try:
        when = pd.Timestamp(int(digits), unit="ms", tz="UTC")
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"sample timestamp {digits} ms is out of range") from exc
    if not pd.Timestamp(TIME_MIN) <= when < pd.Timestamp(TIME_MAX):
        raise ParseError(f"sample timestamp {digits} ms is out of range")
    return when


def _prom_finish(rows: list[dict], ctx: LineContext) -> list[dict]:
    _untimed_note(ctx)
    if not rows:
        return []
    long = pd.DataFrame(rows)
    wide = long.pivot_table(index=["time", "host", "gpu"], columns="_col", values="_val", aggfunc="last", dropna=False)
    origins = long.groupby(["time", "host", "gpu"], dropna=False)["origin"].first()
    wide = wide.join(origins).reset_index()
    wide.columns.name = None
    return wide.to_dict("records")


#: a dcgm-exporter 1.x sample (``dcgm_gpu_temp{gpu="0",…} 54``) or its HELP/TYPE line
_LEGACY_PROM = re.compile(r"(?:# (?:HELP|TYPE) )?dcgm_[a-z0-9_]+(?:\{| )")


def _sniff_prom(path: str, first_lines: Sequence[str]) -> float:
    if any(line.startswith(("DCGM_FI_", "# HELP DCGM_FI_", "# TYPE DCGM_FI_")) for line in first_lines):
        return 0.95
    return 0.9 if any(_LEGACY_PROM.match(line) for line in first_lines) else 0.0


@register_parser("dcgm_prometheus", sniff=_sniff_prom, table="telemetry")
def read_dcgm_prometheus(path: str, *, host: str | None = None, time: str | None = None,
                         strict: bool = False) -> FileResult:
    """dcgm-exporter metrics (Prometheus text; ``Hostname`` or ``hostname`` label) → telemetry."""
    return scan_lines(path, "dcgm_prometheus", _parse_prom_line, table="telemetry", strict=strict,
                      options={"host": host, "time": time}, finish=_prom_finish)
