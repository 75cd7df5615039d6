"""The "Environment" section: each environment result shown through its own summary/plot.

Thin on purpose: every result brings ``summary()``, ``method``, ``notes`` and ``plot()``;
this module only formats the cells and names the analyses.  Skipped analyses are listed
with their reason.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from reliab.report.document import Block, Figure, Section, Table, Text
from reliab.report.formatting import DASH, fmt_int, fmt_interval, fmt_num

TITLES = {
    "diurnal": ("Diurnal cycle of throughput",
                "Mean day of throughput relative to its trend (STL), with the day-block "
                "bootstrap band; dashed: the temperature profile."),
    "throughput": ("Throughput against temperature",
                   "Hourly throughput against temperature; bands: naive and Newey-West (HAC) "
                   "intervals of the slope."),
    "power_swings": ("Power swings",
                     "Cluster power and the step changes found in it, labelled from the job "
                     "timeline; dashed lines: the grid limit."),
    "clock_events": ("Clock-event reasons",
                     "Share of samples with each NVML clock-event reason active; the label "
                     "gives the median SM clock change while active."),
    "failure_glm": ("Failures against temperature",
                    "Incidence-rate ratios per unit of each covariate (log axis)."),
}


def _cell(v: Any) -> str:
    if isinstance(v, (bool,)):
        return "yes" if v else "no"
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return fmt_num(v)
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return DASH
    return str(v)


def _triplets(columns: list[str]) -> dict[str, tuple[str, str]]:
    """Columns ``c`` that come with ``c_low``/``c_high`` (or ``estimate`` with ``low``/``high``)."""
    out = {c: (f"{c}_low", f"{c}_high") for c in columns
           if f"{c}_low" in columns and f"{c}_high" in columns}
    if {"estimate", "low", "high"} <= set(columns):
        out["estimate"] = ("low", "high")
    return out


def format_table(frame: pd.DataFrame, max_rows: int = 30) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Cells as strings (4 significant digits), each estimate with its interval in one cell
    (``est [low, high]``), and the names of the numeric columns."""
    shown = frame.head(max_rows)
    cols = [str(c) for c in shown.columns]
    triples = _triplets(cols)
    bounds = {b for pair in triples.values() for b in pair}
    numeric = []
    cells: dict[str, list[str]] = {}
    for c in cols:
        if c in bounds:
            continue
        if c in triples:
            lo, hi = triples[c]
            cells[c] = [fmt_interval(v, a, b) if pd.notna(a) or pd.notna(b) else _cell(v)
                        for v, a, b in zip(shown[c], shown[lo], shown[hi], strict=True)]
        elif pd.api.types.is_integer_dtype(shown[c]):
            cells[c] = [fmt_int(v) for v in shown[c].tolist()]
        else:
            cells[c] = [_cell(v) for v in shown[c].tolist()]
        if pd.api.types.is_numeric_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c]):
            numeric.append(c)
    return pd.DataFrame(cells), tuple(numeric)


def environment_section(study: Any) -> Section:
    """Section ``environment`` from an :class:`~reliab.models.environment.study.EnvironmentStudy`."""
    blocks: list[Block] = [Text(
        "Temperature, power and throughput from the telemetry: the diurnal cycle Llama 3 "
        "reported (1-2 % of throughput), synchronised power swings, and whether heat goes "
        "with failures. Each analysis states its method; intervals are two-sided at "
        f"{study.conf_level:.0%}.")]
    for name, result in study.results:
        title, caption = TITLES.get(name, (name, ""))
        data, numeric = format_table(result.summary())
        blocks.append(Text(f"{title}. Method: {result.method}.",
                           items=tuple(str(n) for n in result.notes)))
        blocks.append(Table(title, data, caption="", numeric=numeric))
        if hasattr(result, "plot"):
            blocks.append(Figure(title, result.plot(), caption, alt=title))
    if study.skipped:
        blocks.append(Text("Not run:", items=tuple(f"{TITLES.get(k, (k,))[0]}: {why}"
                                                   for k, why in study.skipped), kind="note"))
    for note in study.notes:
        blocks.append(Text(note, kind="note"))
    return Section("Environment", tuple(blocks), key="environment")


__all__ = ["environment_section", "format_table"]
