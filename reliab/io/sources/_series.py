"""Prometheus range-query answers -> the ``telemetry`` table and XID signals.

A ``query_range`` answer is a list of series, each a label set and ``[time, "value"]`` pairs
(Prometheus HTTP API, "Range vectors").  Labels name the unit measured: dcgm-exporter sets
``Hostname`` (``hostname`` since dcgm-exporter#655), ``gpu`` (index), ``UUID``, ``pci_bus_id``,
``device`` and ``modelName``; Prometheus adds ``instance`` and ``job``; Kubernetes adds
``pod``/``namespace``/``container``.  Host and GPU are taken from the first label present
in :data:`HOST_LABELS` and :data:`GPU_LABELS`; every other label is identity, not
measurement, so two series that map to the same (metric, host, GPU, time) are duplicates (a
second scrape job, a pod relabelled): the first is kept, the others counted irrelevant.

Each sample is one accounting "line", numbered 1.. in the order of the answer (series in
the server's order, then time): it is parsed, irrelevant (a duplicate) or malformed
(a series with no host label, an infinite value, or a last-XID value that is no Xid
number; quarantined with that number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliab import schema
from reliab.io.formats.kernel import CRITICAL_XIDS, MAX_CODE_DIGITS, WARNING_XIDS
from reliab.io.formats.telemetry.dcgm_fields import dcgm_column
from reliab.io.formats.telemetry.nvidia_smi import normalize_pci

HOST_LABELS = ("Hostname", "hostname", "host", "node", "nodename", "instance")
GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "device")
XID_COLUMN = "last_xid_code"
#: Prometheus base-unit suffixes (naming conventions) -> reliab unit suffixes
PROM_UNITS = (("_celsius", "_c"), ("_watts", "_w"), ("_joules", "_j"), ("_hertz", "_hz"),
              ("_seconds", "_s"), ("_bytes", "_bytes"), ("_volts", "_v"), ("_amperes", "_a"))
_NAME = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:]*$")


def column_for(metric: str) -> str:
    """Telemetry column of a metric: DCGM field names as the file readers name them,
    Prometheus base units as unit suffixes (``…_celsius`` -> ``…_c``), else ``<name>_raw``."""
    if metric.upper().startswith("DCGM_FI_"):
        return dcgm_column(metric) or f"dcgm_{metric.lower().removeprefix('dcgm_fi_dev_').removeprefix('dcgm_fi_')}_raw"
    name = re.sub(r"[^a-z0-9_]+", "_", metric.lower()).strip("_")
    counter = name.endswith("_total")
    name = name.removesuffix("_total")
    for suffix, unit in PROM_UNITS:
        if name.endswith(suffix):
            return name[: -len(suffix)] + unit
    if name.endswith(schema.TELEMETRY_UNITS):
        return name
    return name + ("_count" if counter else "_raw")


def host_of(labels: dict[str, str]) -> tuple[str | None, str | None]:
    """(host, label used); ``instance`` loses its ``:port``."""
    for key in HOST_LABELS:
        value = labels.get(key)
        if value:
            return (value.rsplit(":", 1)[0] if key == "instance" and value.count(":") == 1 else value), key
    return None, None


def gpu_of(labels: dict[str, str]) -> str | None:
    """GPU index if labelled, else UUID, PCI bus id (kernel form) or ``nvidiaN`` device number."""
    for key in GPU_LABELS:
        value = labels.get(key)
        if value:
            if key == "pci_bus_id":
                return normalize_pci(value)
            if key == "device" and value.startswith("nvidia") and value[6:].isdigit():
                return value[6:]
            return value
    return None


@dataclass
class Samples:
    """Samples gathered from every answer, column-wise, ready to become a table."""

    time_ms: list[np.ndarray] = field(default_factory=list)
    value: list[np.ndarray] = field(default_factory=list)
    key: list[np.ndarray] = field(default_factory=list)  # index into ``series``
    pos: list[np.ndarray] = field(default_factory=list)  # 1-based sample number in its answer
    chunk: list[np.ndarray] = field(default_factory=list)  # index of the answer
    series: list[tuple[str, str, str | None, dict[str, str]]] = field(default_factory=list)
    series_index: dict[tuple[str, str, str | None], int] = field(default_factory=dict)
    labelsets: dict[str, dict[str, str]] = field(default_factory=dict)  # every label set seen

    def key_of(self, column: str, host: str, gpu: str | None, labels: dict[str, str]) -> int:
        k = (column, host, gpu)
        if k not in self.series_index:
            self.series_index[k] = len(self.series)
            self.series.append((column, host, gpu, labels))
        return self.series_index[k]


@dataclass(frozen=True)
class AnswerCount:
    """Accounting of one answer: samples seen and what became of them."""

    lines: int
    parsed: int
    irrelevant: int
    bad: list[tuple[int, str, str]]  # (sample number, reason, text)


def _pairs(values: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times (ms), values and a mask of entries that are not ``[seconds, "number"]`` pairs."""
    try:
        t = np.fromiter((v[0] for v in values), dtype=np.float64, count=len(values))
        x = np.array([v[1] for v in values], dtype=np.float64)
        ok = np.isfinite(t) & (np.abs(t) < 9e9)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError):
        t, x = np.zeros(len(values)), np.zeros(len(values))
        ok = np.zeros(len(values), dtype=bool)
        for i, v in enumerate(values):
            try:
                t[i], x[i] = float(v[0]), float(v[1])
                ok[i] = bool(np.isfinite(t[i]) and abs(t[i]) < 9e9) and not isinstance(v[1], bool)
            except (ValueError, TypeError, IndexError, KeyError, OverflowError):
                continue
    return np.rint(np.where(ok, t, 0.0) * 1000.0).astype(np.int64), x, ok


def add_answer(samples: Samples, result: list[dict[str, Any]], chunk: int,
               columns: dict[str, str], fallback_column: str | None) -> AnswerCount:
    """Fold one ``query_range`` answer into ``samples`` and account for its samples."""
    lines = parsed = irrelevant = 0
    bad: list[tuple[int, str, str]] = []
    taken: dict[int, np.ndarray] = {}  # times already read in this answer, per series key
    for series in result:
        parts = _parts(series)
        if parts is None:
            lines += 1
            bad.append((lines, "not a series {metric, values}", repr(series)[:2000]))
            continue
        labels, values = parts
        first = lines + 1
        lines += len(values)
        if not values:
            continue
        name = labels.get("__name__", "")
        column = columns.get(name) or fallback_column or column_for(name or "value")
        host, _ = host_of(labels)
        text = _selector(labels)
        samples.labelsets.setdefault(text, labels)
        if host is None:
            bad += [(first + i, f"no host label ({'/'.join(HOST_LABELS)})", f"{text} {v!r}"[:2000])
                    for i, v in enumerate(values)]
            continue
        t, x, ok = _pairs(values)
        pos = np.arange(first, first + len(values), dtype=np.int64)
        if not ok.all():
            bad += [(int(p), "not a [time, value] pair", repr(values[int(p - first)])[:200]) for p in pos[~ok]]
            t, x, pos = t[ok], x[ok], pos[ok]
        inf = np.isinf(x)
        if inf.any():
            bad += [(int(p), "infinite value", f"{text} {v} @{s / 1000:g}")
                    for p, v, s in zip(pos[inf], x[inf], t[inf], strict=True)]
            t, x, pos = t[~inf], x[~inf], pos[~inf]
        if column == XID_COLUMN:
            t, x, pos = _xid_codes(t, x, pos, text, bad)
        key = samples.key_of(column, host, gpu_of(labels), labels)
        new = np.zeros(len(t), dtype=bool)
        new[np.unique(t, return_index=True)[1]] = True  # a time twice in one series: first kept
        if key in taken:
            new &= ~np.isin(t, taken[key])
        taken[key] = np.concatenate([taken[key], t[new]]) if key in taken else t
        irrelevant += int((~new).sum())
        parsed += int(new.sum())
        if new.any():
            samples.time_ms.append(t[new])
            samples.value.append(x[new])
            samples.pos.append(pos[new])
            samples.key.append(np.full(int(new.sum()), key, dtype=np.int64))
            samples.chunk.append(np.full(int(new.sum()), chunk, dtype=np.int64))
    return AnswerCount(lines, parsed, irrelevant, bad)


def _xid_codes(t: np.ndarray, x: np.ndarray, pos: np.ndarray, text: str,
               bad: list[tuple[int, str, str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples of the last-XID gauge that hold an Xid number; the others go to ``bad``.

    An Xid is a non-negative integer of at most :data:`MAX_CODE_DIGITS` digits, as the
    kernel reader requires of ``NVRM: Xid (PCI:…): <code>``; ``NaN`` (no value) stays.
    """
    wrong = ~np.isnan(x) & ((x < 0) | (x != np.floor(x)) | (x >= 10.0 ** MAX_CODE_DIGITS))
    if not wrong.any():
        return t, x, pos
    bad += [(int(p), f"not an Xid code (a whole number from 0 to {10 ** MAX_CODE_DIGITS - 1:,})",
             f"{text} {v:g} @{s / 1000:g}") for p, v, s in zip(pos[wrong], x[wrong], t[wrong], strict=True)]
    return t[~wrong], x[~wrong], pos[~wrong]


def _parts(series: Any) -> tuple[dict[str, str], list[Any]] | None:
    """Labels and values of one series of an answer; ``None`` when it has another shape."""
    if not isinstance(series, dict) or not isinstance(series.get("values", []), list):
        return None
    metric = series.get("metric")
    labels = {str(k): str(v) for k, v in metric.items()} if isinstance(metric, dict) else {}
    return labels, series.get("values") or []


def _selector(labels: dict[str, str]) -> str:
    name = labels.get("__name__", "")
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{inner}}}"


def _flat(samples: Samples) -> dict[str, np.ndarray]:
    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts) if parts else np.array([], dtype=dtype)

    return {"time_ms": cat(samples.time_ms, np.int64), "value": cat(samples.value, np.float64),
            "key": cat(samples.key, np.int64), "pos": cat(samples.pos, np.int64),
            "chunk": cat(samples.chunk, np.int64)}


def telemetry_table(samples: Samples) -> pd.DataFrame:
    """Wide ``telemetry`` rows, one per (time, host, GPU), one column per metric."""
    flat = _flat(samples)
    if not len(flat["key"]):
        return schema.empty("telemetry")
    series = samples.series
    col_of = np.array([s[0] for s in series], dtype=object)
    unit_of = pd.MultiIndex.from_tuples([(s[1], s[2]) for s in series])
    unit_code, units = pd.factorize(unit_of)
    long = pd.DataFrame({"time": flat["time_ms"], "unit": unit_code[flat["key"]],
                         "col": col_of[flat["key"]], "value": flat["value"]})
    wide = long.set_index(["time", "unit", "col"])["value"].unstack("col")
    wide.columns.name = None
    t_idx = wide.index.get_level_values("time").to_numpy(dtype=np.int64)
    u_idx = wide.index.get_level_values("unit").to_numpy(dtype=np.int64)
    order = np.lexsort((u_idx, t_idx))
    hosts = np.array([u[0] for u in units], dtype=object)
    gpus = np.array([u[1] for u in units], dtype=object)
    out = pd.DataFrame({
        "time": pd.to_datetime(t_idx[order], unit="ms", utc=True).as_unit("ns"),
        "host": pd.array(hosts[u_idx[order]], dtype=schema.STRING),
        "gpu": pd.array(gpus[u_idx[order]], dtype=schema.STRING),
    })
    for name in sorted(wide.columns):
        out[name] = wide[name].to_numpy(dtype=np.float64)[order]
    return schema.conform(out, "telemetry")


def xid_signals(samples: Samples, origins: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """``xid:<code>`` signals where a GPU's last-XID gauge changes to a new non-zero value.

    dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` is a gauge holding "the value of the last XID
    error encountered" (dcgm-exporter ``etc/default-counters.csv``): a change to a non-zero
    code is a new XID, seen at the first evaluation step that shows it.  A repeat of the same
    code leaves the gauge unchanged and cannot be seen here (the kernel log shows it).  The
    first sample of each GPU in the window is the baseline: a non-zero baseline is noted, as
    its XID happened before the window.
    """
    flat = _flat(samples)
    keys = [i for i, s in enumerate(samples.series) if s[0] == XID_COLUMN]
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for key in keys:
        mask = flat["key"] == key
        t, x = flat["time_ms"][mask], flat["value"][mask]
        pos, chunk = flat["pos"][mask], flat["chunk"][mask]
        order = np.argsort(t, kind="stable")
        t, x, pos, chunk = t[order], x[order], pos[order], chunk[order]
        ok = ~np.isnan(x)
        t, x, pos, chunk = t[ok], x[ok], pos[ok], chunk[ok]
        if not len(x):
            continue
        _, host, gpu, labels = samples.series[key]
        if x[0] != 0:
            notes.append(f"{host} GPU {gpu}: XID gauge already {x[0]:g} at the window start (an XID before the window)")
        change = np.flatnonzero((x[1:] != x[:-1]) & (x[1:] != 0)) + 1
        ident = ", ".join(labels[k] for k in ("UUID", "pci_bus_id") if labels.get(k))
        for i in change:
            code = int(x[i])
            rows.append({
                "time": pd.Timestamp(int(t[i]), unit="ms", tz="UTC"), "host": host, "gpu": gpu,
                "job_id": None, "source": "prometheus", "signal": f"xid:{code}",
                "severity": "critical" if code in CRITICAL_XIDS else "warning" if code in WARNING_XIDS else "error",
                "message": f"DCGM_FI_DEV_XID_ERRORS {x[i - 1]:g} -> {code}" + (f" ({ident})" if ident else ""),
                "origin": f"{origins[int(chunk[i])]}:{int(pos[i])}"})
    frame = schema.conform(pd.DataFrame(rows), "signals") if rows else schema.empty("signals")
    return frame, notes


def identity_notes(samples: Samples) -> list[str]:
    """GPU models seen, and GPUs whose UUID changed in the window (a board replaced)."""
    models: dict[str, set[tuple[str, str | None]]] = {}
    uuids: dict[tuple[str, str | None], set[str]] = {}
    for labels in samples.labelsets.values():
        host, _ = host_of(labels)
        gpu = gpu_of(labels)
        if host is None:
            continue
        if labels.get("modelName"):
            models.setdefault(labels["modelName"], set()).add((host, gpu))
        if labels.get("UUID") and gpu != labels["UUID"]:
            uuids.setdefault((host, gpu), set()).add(labels["UUID"])
    notes = [f"GPU model {m}: {len(u)} GPU(s)" for m, u in sorted(models.items())]
    notes += [f"{h} GPU {g}: {len(u)} UUIDs in the window ({', '.join(sorted(u))}): board replaced?"
              for (h, g), u in sorted(uuids.items(), key=str) if len(u) > 1]
    return notes


def is_metric_name(text: str) -> bool:
    """Whether ``text`` is a bare metric name (not a PromQL expression)."""
    return bool(_NAME.match(text))
