"""Telemetry CSV files -> the ``telemetry`` table (time, host, gpu + measurements with units).

Two sources:

``telemetry_csv``
    Generic CSV with a header and a time column (``time``/``timestamp`` as text, or
    ``t_unix`` epoch seconds), optional ``host`` and ``gpu`` columns, and numeric columns whose
    names end in a unit suffix (:data:`reliab.schema.TELEMETRY_UNITS`); ``columns=`` renames.
``nvidia_smi_csv``
    ``nvidia-smi --query-gpu=timestamp,index,... --format=csv [-lms N]``: header
    ``timestamp, index, temperature.gpu, power.draw [W], ...``, units inside the cells
    (``104.70 W``, ``1725 MHz``, ``32 %``), ``[N/A]``, ``[Not Supported]`` or another bracketed
    NVML status (``[Requested functionality has been deprecated]``) for missing values,
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reliab import schema
from reliab.io._files import open_binary
from reliab.io._lines import unexpected
from reliab.io._localtime import localize_series, noting
from reliab.io._prefilter import MAX_LINE_BYTES, Terminators, all_lines
from reliab.io._quarantine import Quarantine
from reliab.io._registry import FileResult, register_parser
from reliab.io.formats.telemetry._columns import (  # noqa: F401  (the names tests and parquet.py use)
    _CELL_UNIT,
    _NA,
    _STATUS_CELL,
    ALIASES,
    GPU_COLUMNS,
    HOST_COLUMNS,
    NVIDIA_SMI_FIELDS,
    TEXT_COLUMNS,
    TIME_COLUMNS,
    _bus_id,
    _generic_name,
    _has_unit,
    _smi_name,
    _sniff_generic,
    _sniff_smi,
)
from reliab.io.formats.telemetry._fastcsv import (
    arrow_strings,
    decimals,
    iso_utc,
    plain_lines,
    uniform,
)


def _cells(line: str, sep: str) -> list[str]:
    """Fields of one CSV line (quotes honoured when present)."""
    if '"' not in line:
        return line.split(sep)
    try:
        return next(csv.reader([line.replace("\r", " ")], delimiter=sep), [])
    except csv.Error:
        return line.split(sep)


#: data lines converted at a time (the file is streamed, never held whole)
CHUNK_LINES = 200_000


@dataclass
class _Stream:
    """Header and chunks of data lines of a delimited file, read line by line."""

    path: str
    sep: str
    quarantine: Quarantine
    header: list[str] | None = None
    total: int = 0

    def chunks(self) -> Iterator[tuple[list[int], list[str]]]:
        """``(line numbers, lines)`` of up to CHUNK_LINES data lines (no blank line, no header).

        A line longer than ``MAX_LINE_BYTES`` is malformed here; lines end at ``\n``,
        ``\r\n`` or ``\r``.
        """
        whole = plain_lines(self.path)
        if whole is not None:  # a plain, clean file: split at C speed
            yield from self._whole(whole)
            return
        counter = [0]
        numbers: list[int] = []
        data: list[str] = []
        with Terminators(open_binary(self.path)) as fh:
            for lineno, raw, size in all_lines(fh, counter, skip_blank=True):  # type: ignore[arg-type]
                self.total = lineno
                if size > MAX_LINE_BYTES:
                    self.quarantine.add(lineno, f"line of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit",
                                        raw[:200].decode("utf-8", "replace"))
                    continue
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line.strip():
                    continue
                if self.header is None:
                    self.header = [c.strip().lstrip("\ufeff") for c in _cells(line, self.sep)]
                    continue
                numbers.append(lineno)
                data.append(line)
                if len(data) >= CHUNK_LINES:
                    yield numbers, data
                    numbers, data = [], []
        self.total = counter[0]
        if data:
            yield numbers, data

    def _whole(self, lines: list[str]) -> Iterator[tuple[list[int], list[str]]]:
        """:meth:`chunks` of a file whose lines :func:`plain_lines` gave (none blank)."""
        self.total = len(lines)
        self.header = [c.strip().lstrip("\ufeff") for c in _cells(lines[0], self.sep)]
        for start in range(1, len(lines), CHUNK_LINES):
            end = min(start + CHUNK_LINES, len(lines))
            yield list(range(start + 1, end + 1)), lines[start:end]


def _sort_lines(numbers: list[int], data: list[str], sep: str, header: list[str],
                bad: dict[int, str]) -> tuple[list[tuple[int, str]], list[tuple[int, list[str]]]]:
    """Data lines, one by one: plain ones, quoted ones (split); repeated headers skipped,
    wrong field counts to ``bad``."""
    width = len(header)
    plain: list[tuple[int, str]] = []
    quoted: list[tuple[int, list[str]]] = []
    head_text = [h.lower() for h in header]
    # a repeated header starts (after blanks) like the header: only such lines are split to compare
    head_start = head_text[0][:1] if head_text and head_text[0] else None
    for n, line in zip(numbers, data, strict=True):
        if '"' in line or "\r" in line or "\x00" in line:  # (pandas' C parser cuts a cell at NUL)
            cells = _cells(line, sep)
        elif head_start is None or line.lstrip()[:1].lower()[:1] == head_start:
            cells = line.split(sep)
        else:  # the common line: no quote, no header; its fields are counted, not split
            fields = line.count(sep) + 1
            if fields == width:
                plain.append((n, line))
            else:
                bad[n] = f"expected {width} '{sep}'-separated fields, got {fields}"
            continue
        if [c.strip().lower() for c in cells] == head_text:
            continue  # repeated header: irrelevant
        if len(cells) != width:
            bad[n] = f"expected {width} '{sep}'-separated fields, got {len(cells)}"
        elif '"' in line or "\r" in line or "\x00" in line:
            quoted.append((n, cells))
        else:
            plain.append((n, line))
    return plain, quoted


def _frame(header: list[str], numbers: list[int], data: list[str], sep: str,
           bad: dict[int, str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Data lines -> string frame; wrong field counts and repeated headers go to ``bad``/skip."""
    width = len(header)
    head_start = header[0].lower()[:1] if header and header[0] else None
    joined = "\n".join(data)
    raw = uniform(joined, data, sep, width, head_start)
    frame = None if raw is None else arrow_strings(raw, width, sep, len(data))
    if frame is not None:  # every line a plain record: split by Arrow, no loop over the lines
        frame.columns = header
        return frame, np.asarray(numbers, dtype=np.int64)
    plain, quoted = _sort_lines(numbers, data, sep, header, bad)
    parts: list[pd.DataFrame] = []
    if plain:
        text = joined if len(plain) == len(data) else "\n".join(line for _, line in plain)
        frame = pd.read_csv(io.StringIO(text), sep=sep, header=None,
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
    if not (strip_units or pstate):
        fast = decimals(values, _NA)  # plain decimals: converted by Arrow
        if fast is not None:
            return fast, np.zeros(len(values), dtype=bool)
    text = values.astype(schema.STRING).str.strip()  # Arrow-backed: vectorized text operations
    if pstate or strip_units:  # Python regular expressions (look-ahead, \s): Python-backed text
        text = text.astype("string")
    if pstate:  # nvidia-smi prints P0..P15
        text = text.str.replace(r"^[Pp](?=\d)", "", regex=True)
    if strip_units:
        text = text.str.replace(_CELL_UNIT, "", regex=True)
    missing = text.str.lower().isin(_NA) | text.isna() | text.str.match(_STATUS_CELL).fillna(False).astype(bool)
    if hex_ok and text.str.startswith("0x").any():
        ishex = text.str.match(r"^0[xX][0-9a-fA-F]+$").fillna(False).astype(bool)
        number = pd.to_numeric(text.where(~ishex), errors="coerce").astype("float64")
        number[ishex] = [float(int(v, 16)) for v in text[ishex]]
    else:
        number = pd.to_numeric(text, errors="coerce").astype("float64")
    return number, (number.isna() & ~missing).to_numpy()


#: epoch seconds a ``datetime64[ns]`` holds (about 2262-04-11)
_EPOCH_LIMIT = 9.2e9


def _to_time(values: pd.Series, *, epoch: bool, tz: str, fmt: str | None,
             problems: dict[int, str] | None = None) -> pd.Series:
    """Text (or epoch seconds) -> UTC times; NaT where a cell is not a time.

    Naive text is local time in ``tz`` (DST rule of :func:`reliab.io._localtime.localize`);
    ``problems`` receives position -> reason for times skipped by a DST change.
    """
    if not epoch and tz == "UTC" and fmt is None:
        fast = iso_utc(values)  # YYYY-MM-DDTHH:MM:SSZ throughout: converted by Arrow
        if fast is not None:
            return fast
    text = values.astype(schema.STRING).str.strip()
    # epoch seconds only if every cell is a number: the first cell is tried alone first
    numeric = epoch or (len(text) > 0 and pd.to_numeric(text.iloc[:1], errors="coerce").notna().all())
    seconds = pd.to_numeric(text, errors="coerce") if numeric else None
    if seconds is not None and (epoch or seconds.notna().all()):
        # only seconds a datetime64[ns] holds (1677-2262): never wrapped into another year
        seconds = seconds.astype("float64").where(seconds.astype("float64").abs() < _EPOCH_LIMIT)
        micros = (seconds * 1e6).round()  # float seconds: keep microseconds
        return pd.to_datetime(micros, unit="us", utc=True, errors="coerce")
    try:
        if tz == "UTC":  # naive text is UTC: let pandas convert aware text too
            parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce", utc=True)
        else:
            parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce")
            if not isinstance(parsed.dtype, pd.DatetimeTZDtype):
                parsed, gaps = localize_series(parsed, tz)  # the one DST rule
                if problems is not None:
                    problems.update(gaps)
    except (ValueError, TypeError):  # mixed offsets in one column
        parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce", utc=True)
    parsed = parsed.dt.tz_convert("UTC")
    if fmt is None and parsed.isna().any():
        retry = pd.to_datetime(text[parsed.isna()], format="mixed", errors="coerce", utc=True)
        parsed = parsed.where(parsed.notna(), retry)
    return parsed


def _chunk(header: list[str], names: list[str | None], numbers: list[int], data: list[str], sep: str,
           opts: dict[str, Any], bad: dict[int, str], notes: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Data lines of one chunk -> telemetry columns and their line numbers (``bad`` filled)."""
    time_cols = [i for i, n in enumerate(names) if n in ("time", "t_unix")]
    raw, line_no = _frame(header, numbers, data, sep, bad)
    out = pd.DataFrame()
    if not len(raw):
        return out, line_no
    if time_cols:
        i = time_cols[0]
        gaps: dict[int, str] = {}
        out["time"] = _to_time(raw.iloc[:, i], epoch=names[i] == "t_unix", tz=opts["tz"],
                               fmt=opts["time_format"], problems=gaps)
        for pos, why in gaps.items():
            bad.setdefault(int(line_no[pos]), f"{header[i]!r}: {why}")
        _flag(bad, line_no, out["time"].isna().to_numpy(), f"{header[i]!r} is not a time (1677-2262)")
    else:
        out["time"] = _sample_times(raw, names, opts["clock"], opts["seen"])
    host_i = [k for k, n in enumerate(names) if n == "host"]
    # text columns stay Arrow-backed (``.array``, placed by position): no Python string per cell
    out["host"] = (raw.iloc[:, host_i[0]].astype(schema.STRING).str.strip().array if host_i
                   else opts["host"] or Path(opts["path"]).name.split(".")[0])
    _flag(bad, line_no, (out["host"] == "").to_numpy(dtype=bool, na_value=False), "empty host")
    gpu_i = [k for k, n in enumerate(names) if n == "gpu"]
    bus_i = [k for k, n in enumerate(names) if n == "_bus_id"]
    out["gpu"] = (raw.iloc[:, gpu_i[0]].astype(schema.STRING).str.strip().replace("", pd.NA).array if gpu_i
                  else raw.iloc[:, bus_i[0]].map(_bus_id).to_numpy() if bus_i else pd.NA)
    if opts["clock"] is not None:
        out["origin"] = [f"{opts['path']}:{n}" for n in line_no]
    for k, name in enumerate(names):
        if name is None or name in ("time", "t_unix", "host", "gpu", "_bus_id") or name in out.columns:
            if name is None and header[k] and not any(header[k] in n for n in notes):
                notes.append(f"column {header[k]!r} skipped: no unit suffix (map it with columns=)")
            continue
        if name in TEXT_COLUMNS:
            out[name] = raw.iloc[:, k].str.strip().astype("string").to_numpy()
            continue
        number, failed = _to_number(raw.iloc[:, k], strip_units=opts["strip_units"],
                                    hex_ok=name.endswith("_flag"), pstate=name == "pstate")
        out[name] = number.to_numpy()
        _flag(bad, line_no, failed, f"{header[k]!r} is not a number")
    return out, line_no


def _safe_chunk(header: list[str], names: list[str | None], numbers: list[int], data: list[str], sep: str,
                opts: dict[str, Any], bad: dict[int, str], notes: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """:func:`_chunk`; if it raises, the chunk again line by line, a failing line quarantined."""
    try:
        return _chunk(header, names, numbers, data, sep, opts, bad, notes)
    except Exception:  # noqa: BLE001 - find the line(s) at fault; one bad line never ends the run
        outs, nums = [], []
        for n, line in zip(numbers, data, strict=True):
            try:
                out, line_no = _chunk(header, names, [n], [line], sep, opts, bad, notes)
            except Exception as exc:  # noqa: BLE001
                bad[n] = unexpected(exc)
                continue
            if len(out):
                outs.append(out)
                nums.append(line_no)
        if not outs:
            return pd.DataFrame(), np.array([], dtype=np.int64)
        return pd.concat(outs, ignore_index=True), np.concatenate(nums)


def _read(path: str, source: str, sep: str, rename: Callable[[str], str | None], *, host: str | None,
          tz: str, time_format: str | None, strip_units: bool, clock: tuple | None = None) -> FileResult:
    """Shared pipeline, chunk by chunk: frame, rename, convert time and numbers, account.

    ``clock`` (nvidia-smi CSV only) is ``(start, interval_s)``: a capture without a time
    column is read with ``start`` for its first sample (``None``: one note, no rows); the
    sample count of each GPU carries over from chunk to chunk.  A row whose values the table
    cannot hold (an infinite measurement, a time beyond 2262) is refused at the schema
    boundary (:func:`reliab.schema.conform_rows`) and quarantined.
    """
    path = str(path)
    quarantine = Quarantine(path, source)
    stream = _Stream(path, sep, quarantine)
    opts = {"tz": tz, "time_format": time_format, "strip_units": strip_units, "host": host, "path": path,
            "clock": clock, "seen": {}}
    notes: list[str] = []
    parts: list[pd.DataFrame] = []
    parsed = unread = 0
    with noting() as local_times:
        for numbers, data in stream.chunks():
            header = stream.header or []
            names = [rename(h) for h in header]
            bad: dict[int, str] = {}
            timed = any(n in ("time", "t_unix") for n in names)
            if not timed and clock is not None and clock[0] is None:
                unread += len(numbers)  # untimed capture without start=: counted, not read
                continue
            if not timed and clock is None:
                bad.update({n: f"no time column ({'/'.join(TIME_COLUMNS)}) in the header" for n in numbers})
                out, line_no = pd.DataFrame(), np.array([], dtype=np.int64)
            else:
                out, line_no = _safe_chunk(header, names, numbers, data, sep, opts, bad, notes)
            if len(out):
                keep = ~np.isin(line_no, np.fromiter(bad, dtype=np.int64, count=len(bad)))
                frame, refused = schema.conform_rows(out.loc[keep], "telemetry")
                kept_lines = line_no[keep]
                for pos, why in refused.items():
                    bad.setdefault(int(kept_lines[pos]), why)
                parts.append(frame)
                parsed += len(frame)
            text = dict(zip(numbers, data, strict=True)) if bad else {}
            for n, reason in sorted(bad.items()):
                quarantine.add(n, reason, text.get(n, "")[:2000])
    if unread:
        notes.append(f"no time column in the header: pass start= (time of the first sample) and interval_s="
                     f" (the -l period), or query timestamp; {unread} data line(s) not read")
    frames = [f for f in parts if len(f)]
    if len(frames) > 1:
        frame = schema.conform(pd.concat(frames, ignore_index=True), "telemetry")
    elif frames:
        frame = frames[0]
    else:
        frame = schema.empty("telemetry")
    total = stream.total
    if local_times.note():
        notes.append(local_times.note())
    return FileResult(path=path, source=source, lines=total, parsed=parsed,
                      irrelevant=total - parsed - quarantine.count, malformed=quarantine.count,
                      tables={"telemetry": frame}, quarantine=quarantine.frame(), notes=tuple(notes))


def _flag(bad: dict[int, str], line_no: np.ndarray, mask: np.ndarray, reason: str) -> None:
    for n in line_no[mask]:
        bad.setdefault(int(n), reason)


def _sample_times(raw: pd.DataFrame, names: list[str | None], clock: tuple,
                  seen: dict[str, int] | None = None) -> pd.Series:
    """Times of a ``--query-gpu`` loop without a timestamp column: ``start`` plus one
    ``interval_s`` each time a GPU (index or bus id) comes round again; rows that name no
    GPU are one snapshot.  ``seen`` (GPU -> samples in earlier chunks) is updated."""
    start, interval = clock
    seen = {} if seen is None else seen
    ids = [k for k, n in enumerate(names) if n in ("gpu", "_bus_id")]
    if ids:
        gpu = raw.iloc[:, ids[0]].str.strip()
        before = gpu.map(seen).fillna(0).astype("int64").to_numpy()
        sample = gpu.groupby(gpu).cumcount().to_numpy() + before
        seen.update({str(k): int(v) + seen.get(str(k), 0) for k, v in gpu.value_counts().items()})
    else:
        sample = np.zeros(len(raw), dtype=np.int64)
    base = pd.Timestamp(start)
    base = base.tz_localize("UTC") if base.tzinfo is None else base.tz_convert("UTC")
    return pd.Series(base + pd.to_timedelta(sample * float(interval), unit="s"))


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
