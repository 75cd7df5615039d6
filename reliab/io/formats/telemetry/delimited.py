"""Telemetry CSV files -> the ``telemetry`` table (time, host, gpu + measurements with units).

Two sources:

``telemetry_csv``
    Generic CSV with a header and a time column (``time``/``timestamp`` as text, or
    ``t_unix`` epoch seconds), optional ``host`` and ``gpu`` columns, and numeric columns whose
    names end in a unit suffix (:data:`reliab.schema.TELEMETRY_UNITS`); ``columns=`` renames.
``nvidia_smi_csv``
    ``nvidia-smi --query-gpu=timestamp,index,... --format=csv [-lms N]``: header
    ``timestamp, index, temperature.gpu, power.draw [W], ...``, units inside the cells
    (``104.70 W``, ``1725 MHz``, ``32 %``), ``[N/A]``/``[Not Supported]`` for missing values,
    timestamps ``2026/11/30 01:25:20.280`` in the host's local time
    (``nvidia-smi --help-query-gpu`` lists the fields).

Reading is vectorized: the data lines are handed to :func:`pandas.read_csv` as text, then
converted column by column.  Every data row counts as one parsed line; a row whose time or a
numeric cell does not convert is malformed (quarantined with its line number), as is a line
with the wrong number of fields.  The header, repeated headers and blank lines are irrelevant.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from reliab import schema
from reliab.io._files import open_binary
from reliab.io._lines import quarantine_frame
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.telemetry.dcgm_fields import dcgm_column

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
_CELL_UNIT = re.compile(r"\s+(?:W|MHz|MiB|GiB|%|C|J|mJ|ms|s|V|A)$")


def _has_unit(name: str) -> bool:
    return name.endswith(schema.TELEMETRY_UNITS)


def _cells(line: str, sep: str) -> list[str]:
    """Fields of one CSV line (quotes honoured when present)."""
    if '"' not in line:
        return line.split(sep)
    try:
        return next(csv.reader([line.replace("\r", " ")], delimiter=sep), [])
    except csv.Error:
        return line.split(sep)


def _split_lines(path: str, sep: str) -> tuple[list[str], list[int], list[str], int]:
    """Read ``path``; return (header cells, data line numbers, data lines, total lines)."""
    with open_binary(path) as fh:
        text = fh.read().decode("utf-8", errors="replace")
    lines = text.split("\n")  # physical lines, as the line driver counts them
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.rstrip("\r") for line in lines]
    header: list[str] | None = None
    numbers: list[int] = []
    data: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if header is None:
            header = [c.strip().lstrip("\ufeff") for c in _cells(line, sep)]
            continue
        numbers.append(n)
        data.append(line)
    return header or [], numbers, data, len(lines)


def _frame(header: list[str], numbers: list[int], data: list[str], sep: str,
           bad: dict[int, str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Data lines -> string frame; wrong field counts and repeated headers go to ``bad``/skip."""
    width = len(header)
    plain: list[tuple[int, str]] = []
    quoted: list[tuple[int, list[str]]] = []
    head_text = [h.lower() for h in header]
    for n, line in zip(numbers, data, strict=True):
        cells = _cells(line, sep)
        if [c.strip().lower() for c in cells] == head_text:
            continue  # repeated header: irrelevant
        if len(cells) != width:
            bad[n] = f"expected {width} '{sep}'-separated fields, got {len(cells)}"
        elif '"' in line or "\r" in line:
            quoted.append((n, cells))
        else:
            plain.append((n, line))
    parts: list[pd.DataFrame] = []
    if plain:
        frame = pd.read_csv(io.StringIO("\n".join(line for _, line in plain)), sep=sep, header=None,
                            names=range(width), dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE,
                            skipinitialspace=True, skip_blank_lines=False, engine="c")
        if len(frame) != len(plain):  # the C parser saw other line breaks: read line by line
            frame = pd.DataFrame([line.split(sep) for _, line in plain], columns=range(width), dtype=str)
        frame.index = [n for n, _ in plain]
        parts.append(frame)
    if quoted:
        parts.append(pd.DataFrame([c for _, c in quoted], columns=range(width), index=[n for n, _ in quoted],
                                  dtype=str))
    if not parts:
        return pd.DataFrame(columns=header, dtype="string"), np.array([], dtype=np.int64)
    frame = pd.concat(parts).sort_index() if len(parts) > 1 else parts[0]
    line_no = frame.index.to_numpy(dtype=np.int64)
    frame = frame.reset_index(drop=True)
    frame.columns = header
    return frame, line_no


def _to_number(values: pd.Series, *, strip_units: bool, hex_ok: bool,
               pstate: bool = False) -> tuple[pd.Series, np.ndarray]:
    """Strings -> float64 (NaN for n/a tokens) and a mask of cells that did not convert."""
    text = values.astype("string").str.strip()
    if pstate:  # nvidia-smi prints P0..P15
        text = text.str.replace(r"^[Pp](?=\d)", "", regex=True)
    if strip_units:
        text = text.str.replace(_CELL_UNIT, "", regex=True)
    missing = text.str.lower().isin(_NA) | text.isna()
    if hex_ok and text.str.startswith("0x").any():
        ishex = text.str.match(r"^0[xX][0-9a-fA-F]+$").fillna(False).astype(bool)
        number = pd.to_numeric(text.where(~ishex), errors="coerce").astype("float64")
        number[ishex] = [float(int(v, 16)) for v in text[ishex]]
    else:
        number = pd.to_numeric(text, errors="coerce").astype("float64")
    return number, (number.isna() & ~missing).to_numpy()


def _to_time(values: pd.Series, *, epoch: bool, tz: str, fmt: str | None) -> pd.Series:
    """Text (or epoch seconds) -> UTC times; NaT where a cell is not a time."""
    text = values.astype("string").str.strip()
    seconds = pd.to_numeric(text, errors="coerce")
    if epoch or (len(text) and seconds.notna().all()):
        seconds = seconds.where(seconds.abs() < 1e11)  # beyond year 5138: not epoch seconds
        micros = (seconds.astype("float64") * 1e6).round()  # float seconds: keep microseconds
        return pd.to_datetime(micros, unit="us", utc=True)
    try:
        if tz == "UTC":  # naive text is UTC: let pandas convert aware text too
            parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce", utc=True)
        else:
            parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce")
            if not isinstance(parsed.dtype, pd.DatetimeTZDtype):
                parsed = parsed.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    except (ValueError, TypeError):  # mixed offsets in one column
        parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce", utc=True)
    parsed = parsed.dt.tz_convert("UTC")
    if fmt is None and parsed.isna().any():
        retry = pd.to_datetime(text[parsed.isna()], format="mixed", errors="coerce", utc=True)
        parsed = parsed.where(parsed.notna(), retry)
    return parsed


def _assemble(path: str, source: str, total: int, numbers: np.ndarray, frame: pd.DataFrame,
              bad: dict[int, str], notes: list[str], raw_lines: dict[int, str]) -> FileResult:
    """Drop rows listed in ``bad``, conform, and do the accounting."""
    keep = ~np.isin(numbers, np.fromiter(bad, dtype=np.int64, count=len(bad)))
    frame = frame.loc[keep].reset_index(drop=True)
    frame = schema.conform(frame, "telemetry")
    quarantine = [(path, n, source, reason, raw_lines.get(n, "")[:2000]) for n, reason in sorted(bad.items())]
    parsed = int(keep.sum())
    return FileResult(path=path, source=source, lines=total, parsed=parsed,
                      irrelevant=total - parsed - len(bad), malformed=len(bad),
                      tables={"telemetry": frame}, quarantine=quarantine_frame(quarantine),
                      notes=tuple(notes))


def _read(path: str, source: str, sep: str, rename: Callable[[str], str | None], *, host: str | None,
          tz: str, time_format: str | None, strip_units: bool, clock: tuple | None = None) -> FileResult:
    """Shared pipeline: split lines, frame, rename, convert time and numbers, account.

    ``clock`` (nvidia-smi CSV only) is ``(start, interval_s)``: a capture without a time
    column is read with ``start`` for its first sample (``None``: one note, no rows).
    """
    path = str(path)
    header, numbers, data, total = _split_lines(path, sep)
    raw_lines = dict(zip(numbers, data, strict=True))
    bad: dict[int, str] = {}
    notes: list[str] = []
    names = [rename(h) for h in header]
    time_cols = [i for i, n in enumerate(names) if n in ("time", "t_unix")]
    untimed = bool(header) and not time_cols and clock is not None
    if untimed and clock[0] is None:
        notes.append(f"no time column in the header: pass start= (time of the first sample) and interval_s="
                     f" (the -l period), or query timestamp; {len(numbers)} data line(s) not read")
        numbers, data = [], []
    elif header and not time_cols and clock is None:
        bad.update({n: f"no time column ({'/'.join(TIME_COLUMNS)}) in the header" for n in numbers})
    readable = header and (time_cols or untimed)
    raw, line_no = _frame(header, numbers, data, sep, bad) if readable else (None, None)
    out = pd.DataFrame()
    if raw is not None and len(raw):
        if time_cols:
            i = time_cols[0]
            out["time"] = _to_time(raw.iloc[:, i], epoch=names[i] == "t_unix", tz=tz, fmt=time_format)
            _flag(bad, line_no, out["time"].isna().to_numpy(), f"{header[i]!r} is not a time")
        else:
            out["time"] = _sample_times(raw, names, clock)  # type: ignore[arg-type]
        host_i = [k for k, n in enumerate(names) if n == "host"]
        out["host"] = (raw.iloc[:, host_i[0]].str.strip().to_numpy() if host_i
                       else host or Path(path).name.split(".")[0])
        _flag(bad, line_no, (out["host"] == "").to_numpy(), "empty host")
        gpu_i = [k for k, n in enumerate(names) if n == "gpu"]
        bus_i = [k for k, n in enumerate(names) if n == "_bus_id"]
        out["gpu"] = (raw.iloc[:, gpu_i[0]].str.strip().replace("", pd.NA).to_numpy() if gpu_i
                      else raw.iloc[:, bus_i[0]].map(_bus_id).to_numpy() if bus_i else pd.NA)
        if clock is not None:
            out["origin"] = [f"{path}:{n}" for n in line_no]
        for k, name in enumerate(names):
            if name is None or name in ("time", "t_unix", "host", "gpu", "_bus_id") or name in out.columns:
                if name is None and header[k]:
                    notes.append(f"column {header[k]!r} skipped: no unit suffix (map it with columns=)")
                continue
            if name in TEXT_COLUMNS:
                out[name] = raw.iloc[:, k].str.strip().astype("string").to_numpy()
                continue
            number, failed = _to_number(raw.iloc[:, k], strip_units=strip_units,
                                        hex_ok=name.endswith("_flag"), pstate=name == "pstate")
            out[name] = number.to_numpy()
            _flag(bad, line_no, failed, f"{header[k]!r} is not a number")
    if raw is None or not len(raw):
        line_no = np.array([], dtype=np.int64)
        out = pd.DataFrame({"time": pd.Series(dtype=schema.UTC), "host": pd.Series(dtype="string"),
                            "gpu": pd.Series(dtype="string")})
    return _assemble(path, source, total, line_no, out, bad, notes, raw_lines)


def _flag(bad: dict[int, str], line_no: np.ndarray, mask: np.ndarray, reason: str) -> None:
    for n in line_no[mask]:
        bad.setdefault(int(n), reason)


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


def _sample_times(raw: pd.DataFrame, names: list[str | None], clock: tuple) -> pd.Series:
    """Times of a ``--query-gpu`` loop without a timestamp column: ``start`` plus one
    ``interval_s`` each time a GPU (index or bus id) comes round again; rows that name no
    GPU are one snapshot."""
    start, interval = clock
    ids = [k for k, n in enumerate(names) if n in ("gpu", "_bus_id")]
    if ids:
        gpu = raw.iloc[:, ids[0]].str.strip()
        sample = gpu.groupby(gpu).cumcount().to_numpy()
    else:
        sample = np.zeros(len(raw), dtype=np.int64)
    base = pd.Timestamp(start)
    base = base.tz_localize("UTC") if base.tzinfo is None else base.tz_convert("UTC")
    return pd.Series(base + pd.to_timedelta(sample * float(interval), unit="s"))


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


@register_parser("telemetry_csv", sniff=_sniff_generic, table="telemetry")
def read_telemetry_csv(path: str, *, columns: Mapping[str, str] | None = None, host: str | None = None,
                       tz: str = "UTC", time_format: str | None = None) -> FileResult:
    """Generic telemetry CSV (header with a time column) -> the ``telemetry`` table.

    Parameters
    ----------
    path : str
        CSV with a header; ``time``/``timestamp`` (text) or ``t_unix`` (epoch seconds).
    columns : mapping, optional
        ``{"their name": "our_name_unit"}``; a target of ``time``/``t_unix``/``host``/``gpu``
        marks those roles.  Unmapped columns without a unit suffix are skipped (see notes).
    host : str, optional
        Host of every row when the file has no host column (default: the file name stem).
    tz : str
        Zone of naive text times.
    time_format : str, optional
        strftime format of the time column (default ISO 8601, then pandas' mixed parser).
    """
    return _read(path, "telemetry_csv", ",", _generic_name(columns or {}), host=host, tz=tz,
                 time_format=time_format, strip_units=False)


@register_parser("nvidia_smi_csv", sniff=_sniff_smi, table="telemetry")
def read_nvidia_smi_csv(path: str, *, host: str | None = None, tz: str = "UTC", start: str | None = None,
                        interval_s: float = 1.0) -> FileResult:
    """``nvidia-smi --query-gpu=... --format=csv`` capture -> the ``telemetry`` table.

    Known fields map to canonical names (``temperature.gpu`` -> ``temp_c``, ``power.draw`` ->
    ``power_w``, ``clocks.sm`` -> ``sm_clock_mhz``, ``utilization.gpu`` -> ``util_gpu_pct``,
    ``clocks_event_reasons.active`` (hex) -> ``clock_event_reasons_flag``, ...); others with
    a ``[unit]`` in the header get a derived name; the rest are skipped (see notes).

    Parameters
    ----------
    path : str
        Output of ``nvidia-smi --query-gpu=timestamp,index,... --format=csv`` (with header).
    host : str, optional
        Host of the capture (default: the file name stem).
    tz : str
        Zone of the host's local timestamps (nvidia-smi prints no offset).
    start, interval_s : str, float
        For a query without the ``timestamp`` field: time of the first sample and the
        ``-l``/``-lms`` period; a GPU named again (``index`` or ``pci.bus_id``) starts the next
        sample.  Without ``start`` such a file gives one note and no rows.  A ``pci.bus_id``
        column names the GPU (kernel-log form) when there is no ``index``.

    References
    ----------
    ``nvidia-smi --help-query-gpu`` (field names and units), NVIDIA System Management
    Interface documentation.
    """
    return _read(path, "nvidia_smi_csv", ",", _smi_name, host=host, tz=tz,
                 time_format="%Y/%m/%d %H:%M:%S.%f", strip_units=True, clock=(start, interval_s))


__all__ = ["read_telemetry_csv", "read_nvidia_smi_csv", "NVIDIA_SMI_FIELDS", "ALIASES"]
