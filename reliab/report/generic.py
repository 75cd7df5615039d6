"""Any result into the report: blocks from its ``summary()``, ``method``, ``notes`` and ``plot()``.

This is the one path every model takes into the report (the result contract is in
:mod:`reliab._result`).  A summary frame becomes a table of formatted cells: an estimate and
its ``_low``/``_high`` (or ``low``/``high``) columns merge into one ``estimate [low, high]``
cell with a bar drawing the interval's width; long step-function tables are shown at a few
times through the result's ``at(t)``; very long times get larger units.  A
:class:`~reliab.NotAvailable` becomes a note saying what is missing and why.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from reliab._result import NotAvailable
from reliab.report.document import Block, Figure, Table, Text
from reliab.report.formatting import (
    DASH,
    HOURS_PER_YEAR,
    clean_text,
    finite,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_p,
)

MAX_ROWS = 25
#: columns that take a bare ``low``/``high`` pair, in order of preference
PRIMARY = ("estimate", "cif", "survival", "mcf", "cumhaz", "ratio", "diff", "hazard_ratio")
#: interval columns named apart from their estimate
PAIRS = {"hazard_ratio": ("hr_low", "hr_high")}
LABELS = {
    "count": "Count", "share_pct": "Share %", "gpu_days": "GPU-days",
    "rate_per_1k_gpu_days": "Rate / 1k GPU-days", "rate_per_1k_node_days": "Rate / 1k node-days",
    "mtbf_gpu_hours": "MTBF (GPU-h)", "mtti_job_hours": "MTTI (job-h)", "afr_pct": "AFR %",
    "pvalue": "p", "qvalue": "q (BH)", "cif": "Cumulative incidence", "mcf": "MCF",
    "hazard_ratio": "Hazard ratio", "delta_aic": "ΔAIC", "aic": "AIC",
}
_INT = re.compile(r"(^|_)(count|events|failures|n|at_risk|censored|rank|interruptions)(_|$)|^count_")


#: words of a column name shown otherwise (acronyms, units)
WORDS = {"gpu": "GPU", "gpus": "GPUs", "ettr": "ETTR", "mttf": "MTTF", "mtbf": "MTBF", "mtti": "MTTI",
         "afr": "AFR", "se": "SE", "hac": "HAC", "mw": "MW", "aic": "AIC", "cif": "CIF", "mcf": "MCF",
         "km": "KM", "nccl": "NCCL", "xid": "Xid", "id": "ID", "pct": "%", "ci": "CI"}
#: a last word that is a unit, shown in brackets
UNITS = {"h": "(h)", "min": "(min)", "pp": "(pp)", "s": "(s)", "c": "(°C)", "w": "(W)"}
#: columns whose values name the row's quantity (rows are different quantities)
QUANTITY_COLUMNS = ("quantity", "parameter", "term", "effect", "statistic")
_IDENT = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def label(column: str) -> str:
    """Readable header of a summary column (``ettr_change_pp`` -> ``ETTR change (pp)``)."""
    if column in LABELS:
        return LABELS[column]
    words = str(column).split("_")
    if len(words) > 1 and words[0] == "n":  # n_nodes: the number of nodes
        words = words[1:]
    out = [WORDS.get(w, w) for w in words]
    last = words[-1]
    if len(words) > 1 and last in UNITS and words[-2] != "of":  # hour_of_min: the minimum's hour
        out[-1] = UNITS[last] if words[-2] != "per" else ("°C" if last == "c" else last)
    if len(words) > 1 and words[0] == "p":  # p_hac: the p-value of the HAC test
        return f"p ({' '.join(out[1:])})"
    text = " ".join(out)
    return text[:1].upper() + text[1:]


def _intervals(columns: list[str]) -> dict[str, tuple[str, str]]:
    """Estimate column -> (low, high) columns found in ``columns``: ``x_low``/``x_high``,
    ``x_low_unit``/``x_high_unit`` for ``x_unit``, and a bare ``low``/``high``."""
    out: dict[str, tuple[str, str]] = {}
    for c in columns:
        if f"{c}_low" in columns and f"{c}_high" in columns:
            out[c] = (f"{c}_low", f"{c}_high")
        elif "_" in c:
            base, unit = c.rsplit("_", 1)
            if f"{base}_low_{unit}" in columns and f"{base}_high_{unit}" in columns:
                out[c] = (f"{base}_low_{unit}", f"{base}_high_{unit}")
    for c, pair in PAIRS.items():
        if c in columns and all(p in columns for p in pair):
            out[c] = pair
    if "low" in columns and "high" in columns:
        first = next((c for c in PRIMARY if c in columns and c not in out), None)
        if first is not None:
            out[first] = ("low", "high")
    return out


def _named_intervals(columns: list[str], used: set[str]) -> dict[str, tuple[str, str]]:
    """``low_<kind>``/``high_<kind>`` pairs left over (several intervals of one estimate, as
    naive and HAC): shown as one ``<Kind> interval`` column each, at the ``low_`` column."""
    out: dict[str, tuple[str, str]] = {}
    for c in columns:
        if c.startswith("low_") and c not in used and f"high_{c[4:]}" in columns:
            out[c] = (c, f"high_{c[4:]}")
    return out


def _snap(values: pd.Series, ref: pd.Series | None = None) -> pd.Series:
    """Values that are rounding noise against the column's size (``-1e-13`` beside
    ``2.5e6``) shown as 0."""
    x = pd.to_numeric(values, errors="coerce").astype(float)
    r = pd.to_numeric(ref if ref is not None else values, errors="coerce").astype(float)
    top = float(np.nanmax(np.abs(r.to_numpy()))) if r.notna().any() else 0.0
    if not np.isfinite(top) or top == 0:
        return x
    return x.mask(x.abs() <= 1e-9 * top, 0.0)


def _is_p(name: str) -> bool:
    return name in ("p", "pvalue", "p_value", "qvalue", "lr_p") or name.endswith("_p") or name.startswith("p_")


def _is_int_column(name: str, s: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
        return False
    if pd.api.types.is_integer_dtype(s):
        return True
    vals = s.dropna().to_numpy(dtype=float)
    return bool(_INT.search(name)) and bool(np.all(np.isfinite(vals) & (vals == np.round(vals))))


def _years(name: str, values: pd.Series) -> bool:
    """GPU-hour columns shown in GPU-years when they pass ten years."""
    vals = pd.to_numeric(values, errors="coerce")
    vals = vals[np.isfinite(vals)]
    return "gpu_hours" in name and len(vals) > 0 and float(vals.abs().median()) >= 10 * HOURS_PER_YEAR


def _cell(v: Any, name: str, is_int: bool) -> str:
    if v is None or (not isinstance(v, (str, list, tuple, dict)) and pd.isna(v)):
        return DASH
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, pd.Timestamp):
        return f"{v:%Y-%m-%d %H:%M}"
    if isinstance(v, (int, float, np.integer, np.floating)):
        if _is_p(name):
            return fmt_p(v)
        return fmt_int(v) if is_int and finite(v) else fmt_num(v)
    return clean_text(v, 120)


def frame_table(frame: pd.DataFrame, title: str, *, caption: str = "", max_rows: int = MAX_ROWS,
                total_rows: int | None = None) -> Table:
    """A summary frame as a formatted :class:`Table` (intervals merged, units chosen).

    Parameters
    ----------
    frame : pandas.DataFrame
        A result's ``summary()`` (or rows of it); a named index becomes the first column.
    title, caption : str
        Heading and caption.
    max_rows : int
        Rows shown; the caption says how many more there are.
    total_rows : int, optional
        Rows of the full table when ``frame`` is already a selection of them.
    """
    # an index that names the rows (a named one, or labels such as beta / lambda) is shown;
    # a bare row number (also after rows were picked out) is not
    named = (any(n is not None for n in frame.index.names)
             or not pd.api.types.is_numeric_dtype(frame.index.dtype))
    df = frame.reset_index() if named else frame.reset_index(drop=True)
    if named and "index" in df.columns and "quantity" not in df.columns:
        df = df.rename(columns={"index": "quantity"})
    df = df.loc[:, [c for c in df.columns if not str(c).startswith("_")]]
    n_all = len(df) if total_rows is None else total_rows
    shown = df.head(max_rows).copy()
    cols = [str(c) for c in shown.columns]
    shown.columns = cols
    pairs = _intervals(cols)
    used = {c for p in pairs.values() for c in p}
    wald = "wald_low" in cols and "wald_high" in cols
    if wald:
        used |= {"wald_low", "wald_high"}
    extra = _named_intervals(cols, used)
    used |= {extra[c][1] for c in extra}
    # rows naming different quantities (shape, scale, B10 ...) share no scale: no bars
    per_quantity = any(c in QUANTITY_COLUMNS for c in cols)
    data: dict[str, list[str]] = {}
    numeric: list[str] = []
    bars: list[tuple[str, tuple[tuple[float, float, float], ...]]] = []
    for c in cols:
        if c in used:
            continue
        s = shown[c]
        scale, name = 1.0, label(c)
        if c in extra:
            lo, hi = (_snap(shown[p]) for p in extra[c])
            data[f"{label(c[4:])} interval"] = [DASH if not (finite(a) or finite(b)) else
                                                f"[{fmt_num(a)}, {fmt_num(b)}]"
                                                for a, b in zip(lo, hi, strict=True)]
            numeric.append(f"{label(c[4:])} interval")
            continue
        if c in pairs or pd.api.types.is_numeric_dtype(s):
            if _years(c, s):  # the header must say so: 282 GPU-years, never "282 GPU hours"
                scale = 1.0 / HOURS_PER_YEAR
                years = name.replace("GPU-h", "GPU-years").replace("GPU hours", "GPU-years")
                name = years if years != name else f"{name} (GPU-years)"
        if c in pairs:
            est = _snap(s) * scale
            lo, hi = (_snap(shown[p], s) * scale for p in pairs[c])
            data[name] = [fmt_interval(e, a, b) if (finite(a) or finite(b)) else fmt_num(e)
                          for e, a, b in zip(est, lo, hi, strict=True)]
            if not per_quantity:
                bars.append((name, tuple(zip(est, lo, hi, strict=True))))
            numeric.append(name)
        elif c in QUANTITY_COLUMNS and not pd.api.types.is_numeric_dtype(s):
            data[name] = [label(v) if isinstance(v, str) and _IDENT.match(v) else _cell(v, c, False)
                          for v in s.tolist()]
        else:
            is_int = _is_int_column(c, s)
            vals = s * scale if scale != 1.0 else s
            if pd.api.types.is_float_dtype(vals):
                vals = _snap(vals)
            data[name] = [_cell(v, c, is_int) for v in vals.tolist()]
            if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
                numeric.append(name)
        if c == "estimate" and wald:
            data["Wald interval"] = [f"[{fmt_num(a)}, {fmt_num(b)}]" for a, b in
                                     zip(shown["wald_low"], shown["wald_high"], strict=True)]
            numeric.append("Wald interval")
    more = n_all - len(shown)
    cap = caption + (f" First {len(shown):,} of {n_all:,} rows; the full table is in results.json."
                     if more > 0 else "")
    return Table(title, pd.DataFrame(data), cap.strip(), numeric=tuple(numeric),
                 intervals=tuple(bars))


def _grid(times: np.ndarray, k: int = 8) -> np.ndarray:
    """``k`` round times spread over ``(0, max]`` for showing a step function."""
    top = float(np.nanmax(times)) if times.size else 0.0
    if not top > 0:
        return times[:k]
    step = 10 ** math.floor(math.log10(top / k))
    step *= min((m for m in (1, 2, 2.5, 5, 10) if top / (step * m) <= k), default=10)
    return np.arange(1, k + 1) * step if step * k <= top else np.arange(step, top + step / 2, step)


def summary_table(result: Any, title: str, caption: str = "", columns: tuple[str, ...] = ()
                  ) -> Table:
    """The result's summary as a table (only ``columns`` when given, in their order); a long
    step function is shown at a few times through the result's ``at(t)``."""
    frame = result.summary()
    if columns:
        keep = [c for c in columns if c in frame.columns]
        frame = frame[keep] if keep else frame
    at = getattr(result, "at", None)
    if len(frame) > MAX_ROWS and "time" in frame.columns and callable(at):
        try:
            sel = at(_grid(frame["time"].to_numpy(dtype=float)))
        except (TypeError, ValueError, KeyError):
            sel = None
        if isinstance(sel, pd.DataFrame) and len(sel):
            return frame_table(sel, title, caption=(caption + f" Shown at {len(sel)} times; the "
                               f"estimate has {len(frame):,} steps (results.json).").strip(),
                               total_rows=len(sel))
    return frame_table(frame, title, caption=caption)


def result_blocks(result: Any, title: str, *, caption: str = "", reading: str = "",
                  figure_caption: str = "", columns: tuple[str, ...] = (),
                  figure: bool = True) -> list[Block]:
    """Blocks for one result: what it says, the method and notes, its table and its figure."""
    if isinstance(result, NotAvailable):
        shown = result.reason if result.reason.startswith("not shown:") else \
            f"not available: {result.reason}"
        return [Text(f"{title}: {shown}", kind="note")]
    blocks: list[Block] = []
    method = str(getattr(result, "method", "") or "")
    conf = getattr(result, "conf_level", None)
    head = (f"{reading} " if reading else "") + (f"Method: {method.rstrip('.')}." if method else "")
    if conf:
        head += f" Intervals: {conf:.0%}, two-sided."
    n = getattr(result, "n", None)
    if n is not None:
        head += f" n = {int(n):,}."
    blocks.append(Text(head.strip(), items=tuple(str(x) for x in getattr(result, "notes", ())),
                       title=title))
    plot = getattr(result, "plot", None) if figure else None
    if callable(plot):
        try:
            fig = plot()
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            blocks.append(Text(f"{title}: figure not available: {exc}", kind="note"))
        else:
            blocks.append(Figure("", fig, figure_caption or caption, alt=title))
    blocks.append(summary_table(result, f"{title}: estimates", caption if not callable(plot) else "",
                                columns))
    return blocks


__all__ = ["LABELS", "MAX_ROWS", "frame_table", "label", "result_blocks", "summary_table"]
