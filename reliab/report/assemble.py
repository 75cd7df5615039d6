"""Turn ingested tables and a rates result into a :class:`~reliab.report.document.Report`.

This is the only module that knows which numbers go in which section.  It counts rows and
formats numbers for display (it never estimates: rates and their intervals come from the
rates result), and it calls :mod:`reliab.plots` for the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import pandas as pd

from reliab import plots
from reliab._version import __version__
from reliab.report.document import Block, Callout, Figure, Report, RowKind, Section, Table, Text
from reliab.report.formatting import (
    DASH,
    clean_text,
    decimals,
    finite,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_pct,
    fmt_with,
)
from reliab.report.jobs_section import job_section
from reliab.report.quality import quality_section
from reliab.taxonomy.vocabulary import COMPONENT_OF

#: Default attribution window, stated in the methods when ``meta`` gives none (ARCHITECTURE.md).
DEFAULT_WINDOW = "10 minutes before to 5 minutes after the job's end (as in Meta's RSC study)"


class IngestLike(Protocol):
    """What :func:`assemble` reads from an ingest result (schemas in :mod:`reliab.schema`)."""

    signals: pd.DataFrame
    interruptions: pd.DataFrame
    accounting: pd.DataFrame
    quarantine: pd.DataFrame


class RatesLike(Protocol):
    """What :func:`assemble` reads from a rates result."""

    conf_level: float
    notes: tuple[str, ...]

    def summary(self) -> pd.DataFrame: ...


# ---------------------------------------------------------------------------- formatting
def _interruptions(ingest: IngestLike) -> pd.DataFrame:
    df = getattr(ingest, "interruptions", None)
    if df is None:
        return pd.DataFrame(columns=["time", "category", "component", "planned"])
    out = df.copy()
    out["category"] = out["category"].astype("string").fillna("Unclassified")
    out["component"] = out["component"].astype("string").fillna("Unknown")
    out["planned"] = out["planned"].fillna(False).astype(bool)
    return out


def _component_map(interruptions: pd.DataFrame) -> dict[str, str]:
    """Category -> component: the most frequent in the data, else the default vocabulary."""
    out = dict(COMPONENT_OF)
    if len(interruptions):
        mode = (
            interruptions.groupby(["category", "component"])
            .size()
            .reset_index(name="n")
            .sort_values("n", ascending=False)
            .drop_duplicates("category")
        )
        out.update(zip(mode["category"], mode["component"], strict=True))
    return out


def _swatches() -> tuple[tuple[str, str], ...]:
    return tuple(plots.COMPONENT_COLOURS.items())


def _total_row(summary: pd.DataFrame) -> pd.Series | None:
    rows = summary[summary["category"].astype(str) == "Total"]
    return None if rows.empty else rows.iloc[0]


def _interval_detail(row: pd.Series | None, col: str, unit: str, conf: float) -> tuple[str, str]:
    if row is None or col not in row.index or not finite(row[col]):
        return DASH, "not available"
    d = decimals(row[col], 3)
    value = f"{fmt_with(row[col], d)} {unit}"
    detail = (
        f"{conf:.0%} CI {fmt_with(row[f'{col}_low'], d)}–{fmt_with(row[f'{col}_high'], d)} {unit}"
    )
    return value, detail


# ---------------------------------------------------------------------------- sections
def _summary_section(
    df: pd.DataFrame, summary: pd.DataFrame, conf: float, reference: pd.DataFrame | None
) -> Section:
    n = len(df)
    unexpected = df[~df["planned"]]
    nu, npl = len(unexpected), int(df["planned"].sum())
    total = _total_row(summary)
    mtti, mtti_d = _interval_detail(total, "mtti_job_hours", "h", conf)
    mtbf, mtbf_d = _interval_detail(total, "mtbf_gpu_hours", "GPU-h", conf)
    n_gpu = int((unexpected["component"] == "GPU").sum())
    gpu_share = f"{100 * n_gpu / nu:.1f}%" if nu else DASH
    blocks: list[Block] = [
        Callout("Interruptions", fmt_int(n), "all causes"),
        Callout(
            "Unexpected",
            fmt_int(nu),
            f"{100 * nu / n:.1f}% of all" if n else "",
            "bad" if nu else "good",
        ),
        Callout("Planned", fmt_int(npl), "maintenance, upgrades"),
        Callout("Job-level MTTI", mtti, mtti_d),
        Callout("GPU-level MTBF", mtbf, mtbf_d),
        Callout(
            "GPU share of unexpected", gpu_share, f"{n_gpu:,} of {nu:,} unexpected" if nu else ""
        ),
    ]
    if nu:
        top = unexpected["category"].value_counts()
        blocks.append(
            Text(
                f"{nu:,} of {n:,} interruptions were unexpected. Components of class GPU caused "
                f"{gpu_share} of them; the largest single category is {top.index[0]} "
                f"({top.iloc[0]:,}, {100 * top.iloc[0] / nu:.1f}%)."
            )
        )
        blocks.append(
            Figure(
                "What interrupted jobs",
                plots.plot_category_bars(df, reference=reference),
                "Unexpected interruptions per category, coloured by component class; the legend "
                "gives each class's share."
                + (
                    " Black ticks: counts published in the reference."
                    if reference is not None
                    else ""
                ),
                alt="Horizontal bar chart of unexpected interruptions per category",
            )
        )
    else:
        blocks.append(Text("No interruptions in the input."))
    return Section("Summary", tuple(blocks), key="summary")


def _check_cell(count: int, ref: pd.Series | None) -> tuple[str, bool]:
    if ref is None:
        return "✗ not in reference", True
    problems = []
    if count != int(ref["count"]):
        problems.append(f"count {count - int(ref['count']):+d}")
    if abs(float(ref["pct_printed"]) - float(ref["pct_from_count"])) > 0.051:
        problems.append("misprinted share")
    return ("✗ " + "; ".join(problems), True) if problems else ("✓", False)


def _misprint_notes(reference: pd.DataFrame) -> list[str]:
    total = int(reference["count"].sum())
    bad = reference[(reference["pct_printed"] - reference["pct_from_count"]).abs() > 0.051]
    return [
        f"The paper prints {r.pct_printed:.1f}% for {r.category}, where its own count "
        f"gives {r.pct_from_count:.1f}% ({int(r.count)}/{total}). Shares here are "
        "recomputed from counts."
        for r in bad.itertuples()
    ]


def _categories_section(df: pd.DataFrame, reference: pd.DataFrame | None) -> Section:
    unexpected = df[~df["planned"]]
    nu = len(unexpected)
    comp = _component_map(df)
    counts = unexpected["category"].value_counts()
    cats = list(counts.index)
    ref = reference.set_index("category") if reference is not None else None
    if ref is not None:
        cats += [c for c in ref.index if c not in counts.index]
    rows = pd.DataFrame({"category": cats, "count": [int(counts.get(c, 0)) for c in cats]})
    rows["component"] = [comp.get(c, "Unknown") for c in cats]
    if ref is not None:  # the published component wins for published categories
        rows["component"] = [
            ref["component"].get(c, k) for c, k in zip(cats, rows["component"], strict=True)
        ]
    comp_total = rows.groupby("component")["count"].transform("sum")
    rows = rows.assign(_ct=comp_total).sort_values(
        ["_ct", "component", "count", "category"], ascending=[False, True, False, True]
    )

    def share(k: float) -> str:
        return fmt_pct(100 * k / nu) if nu else DASH

    out: list[dict[str, str]] = []
    kinds: list[RowKind] = []
    n_flag = 0
    for component, group in rows.groupby("component", sort=False):
        for r in group.itertuples():
            cells = {
                "Category": r.category,
                "Component": component,
                "Count": fmt_int(r.count),
                "Share %": share(r.count),
            }
            kind: RowKind = ""
            if ref is not None:
                rr = ref.loc[r.category] if r.category in ref.index else None
                cells |= {
                    "Published": fmt_int(rr["count"]) if rr is not None else DASH,
                    "Printed %": fmt_pct(rr["pct_printed"]) if rr is not None else DASH,
                    "% from count": fmt_pct(rr["pct_from_count"]) if rr is not None else DASH,
                }
                cells["Check"], flagged = _check_cell(r.count, rr)
                kind = "flag" if flagged else ""
                n_flag += flagged
            out.append(cells)
            kinds.append(kind)
        if len(group) > 1 or ref is not None:
            sub = {
                "Category": "Subtotal",
                "Component": str(component),
                "Count": fmt_int(group["count"].sum()),
                "Share %": share(group["count"].sum()),
            }
            if ref is not None:
                rsub = ref[ref["component"] == component]
                sub |= {
                    "Published": fmt_int(rsub["count"].sum()),
                    "Printed %": fmt_pct(rsub["pct_printed"].sum()),
                    "% from count": fmt_pct(rsub["pct_from_count"].sum()),
                    "Check": "",
                }
            out.append(sub)
            kinds.append("subtotal")
    grand = {
        "Category": "Total unexpected",
        "Component": "",
        "Count": fmt_int(nu),
        "Share %": "100.0" if nu else DASH,
    }
    if ref is not None:
        grand |= {
            "Published": fmt_int(ref["count"].sum()),
            "Printed %": fmt_pct(ref["pct_printed"].sum()),
            "% from count": fmt_pct(ref["pct_from_count"].sum()),
            "Check": "✓"
            if nu == int(ref["count"].sum())
            else f"✗ {nu - int(ref['count'].sum()):+d}",
        }
    out.append(grand)
    kinds.append("total")
    data = pd.DataFrame(out)
    numeric = tuple(c for c in data.columns if c not in ("Category", "Component", "Check"))
    blocks: list[Block] = []
    if ref is not None:
        n_ref = len(ref)
        same = sum(int(counts.get(c, 0)) == int(ref.loc[c, "count"]) for c in ref.index)
        blocks.append(
            Text(
                f"Recomputed counts reproduce {same} of {n_ref} published counts. "
                f"{n_flag} row(s) are flagged (✗): a count that differs from the reference, a "
                "category the reference does not have, or a share the reference misprints."
            )
        )
        for note in _misprint_notes(reference):  # type: ignore[arg-type]
            blocks.append(Text(note, kind="note"))
    caption = (
        "Unexpected interruptions only (planned work is excluded, as in Llama 3 Table 5). "
        "Categories grouped by component class, largest first, with subtotals."
    )
    if ref is not None:
        caption += (
            " Published: count in the reference; Printed %: share as printed there; "
            "% from count: the reference's count divided by its total."
        )
    blocks.append(
        Table(
            "Root-cause categories",
            data,
            caption,
            numeric=numeric,
            row_kinds=tuple(kinds),
            swatch_column="Component",
            swatches=_swatches(),
        )
    )
    return Section("Root-cause categories (Table 5)", tuple(blocks), key="categories")


def _timeline_section(df: pd.DataFrame) -> Section:
    if df.empty:
        return Section("Timeline", (Text("No interruptions in the input."),), key="timeline")
    fig = plots.plot_timeline(df)
    cap = (
        "Each tick is one interruption, on the row of its category; colour is the component "
        "class, grey is planned work. Row labels give the count. Clusters of ticks across "
        "rows point to shared causes (a maintenance window, a network event)."
    )
    return Section(
        "Timeline",
        (
            Figure(
                "Interruptions over time",
                fig,
                cap,
                alt="Event plot of interruptions per category over time",
            ),
        ),
        key="timeline",
    )


_RATE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("rate_per_1k_gpu_days", "Rate / 1k GPU-days"),
    ("rate_per_1k_node_days", "Rate / 1k node-days"),
    ("mtbf_gpu_hours", "MTBF (GPU-h)"),
    ("mtti_job_hours", "MTTI (job-h)"),
    ("afr_pct", "AFR %"),
)


def _rates_section(summary: pd.DataFrame, conf: float, components: Mapping[str, str]) -> Section:
    body = summary[summary["category"].astype(str) != "Total"].sort_values(
        "count", ascending=False, kind="stable"
    )
    ordered = pd.concat(
        [body, summary[summary["category"].astype(str) == "Total"]], ignore_index=True
    )
    rows = []
    for r in ordered.to_dict(orient="records"):
        cells = {
            "Category": str(r["category"]),
            "Events": fmt_int(r["count"]),
            "Share %": fmt_pct(r.get("share_pct")),
        }
        for col, label in _RATE_COLUMNS:
            if col in r:
                cells[label] = fmt_interval(r[col], r.get(f"{col}_low"), r.get(f"{col}_high"))
        rows.append(cells)
    data = pd.DataFrame(rows)
    kinds: tuple[RowKind, ...] = tuple("total" if c == "Total" else "" for c in data["Category"])
    numeric = tuple(c for c in data.columns if c != "Category")
    fig = plots.plot_rates(ordered, components=components, conf_level=conf)
    table = Table(
        "Rates by category",
        data,
        f"Point estimate [{conf:.0%} interval]. MTBF: GPU-hours at risk per interruption; "
        "MTTI: wall-clock hours between interruptions of a job spanning the whole fleet; AFR: "
        "interruptions per 100 GPU-years.",
        numeric=numeric,
        row_kinds=kinds,
    )
    figure = Figure(
        "Rate per 1,000 GPU-days",
        fig,
        f"Dots: point estimates; bars: {conf:.0%} intervals, on a log scale so that rare and "
        "common categories fit together. Wide bars mean few events, not a high rate.",
        alt="Forest plot of interruption rates per category with intervals",
    )
    return Section("Rates and intervals", (figure, table), key="rates")


def _daily_section(df: pd.DataFrame) -> Section:
    if df.empty:
        return Section(
            "Interruptions per day", (Text("No interruptions in the input."),), key="daily"
        )
    fig = plots.plot_daily_counts(df)
    per_day = df["time"].dt.floor("D").value_counts()
    days = (df["time"].max().floor("D") - df["time"].min().floor("D")).days + 1
    text = Text(
        f"{len(df):,} interruptions over {days} UTC days: {len(df) / days:.1f} per day on "
        f"average, at most {int(per_day.max())} on {per_day.idxmax():%Y-%m-%d}."
    )
    cap = (
        "Bars: interruptions per UTC day, stacked by component class (grey: planned). "
        "Line: centred 7-day mean of the daily total."
    )
    return Section(
        "Interruptions per day",
        (
            text,
            Figure(
                "Daily interruptions by component",
                fig,
                cap,
                alt="Stacked bar chart of interruptions per day",
            ),
        ),
        key="daily",
    )


def _policy_sentence(ingest: IngestLike) -> tuple[str | None, tuple[str, ...]]:
    """The interruption policy as the ingest result states it, and its other notes.

    Warnings are left out: the data-quality section shows them.
    """
    notes = tuple(str(n) for n in getattr(ingest, "notes", ()))
    stated = next((n for n in notes if n.startswith("Interruption policy")), None)
    policy = getattr(ingest, "policy", None)
    if stated is None and policy is not None:
        from reliab.taxonomy._policy import describe

        stated = describe(policy)
    rest = tuple(n for n in notes if n != stated and not n.startswith("Warning: "))
    return stated, rest


def _methods_section(
    rates: RatesLike, reference: pd.DataFrame | None, meta: Mapping[str, str],
    policy: str | None = None, counts: tuple[str, ...] = (),
) -> Section:
    conf = float(rates.conf_level)
    method = getattr(rates, "method", None)
    window = next((v for k, v in meta.items() if "attribution" in k.lower()), DEFAULT_WINDOW)
    blocks: list[Block] = [
        Text(
            f"Intervals are two-sided at the {conf:.0%} level."
            + (f" Method: {method.rstrip('.')}." if method else "")
            + " Rates divide event counts by the exposure (GPU-days or node-days at risk); "
            "MTBF and MTTI are their reciprocals in hours, so their limits are the "
            "reciprocal limits of the rate."
            + (" Notes from the rates estimate:" if rates.notes else ""),
            items=tuple(str(n) for n in rates.notes),
        ),
        Text(
            f"Attribution: evidence signals are linked to a job interruption when logged "
            f"within {window}. Storms of repeated signals collapse into one episode, and the "
            "root cause is chosen by rule priority (a hardware Xid beats the NCCL timeout it "
            "caused). Parsers never assign categories; the taxonomy rules do."
        ),
    ]
    if policy:
        blocks.append(Text(policy, items=counts))
    if reference is not None:
        blocks.append(
            Text(
                "Reference: Llama 3 Herd of Models (arXiv 2407.21783), Table 5, root causes of 419 "
                "unexpected interruptions in 54 days of pre-training on 16,384 H100 GPUs.",
                items=tuple(_misprint_notes(reference)),
            )
        )
    return Section("Methods and notes", tuple(blocks), key="methods")


# ---------------------------------------------------------------------------- entry point
def assemble(
    ingest: IngestLike,
    *,
    rates: RatesLike,
    reference: pd.DataFrame | None = None,
    title: str = "Cluster reliability report",
    subtitle: str | None = None,
    meta: Mapping[str, Any] | None = None,
    max_quarantine: int = 20,
    job_costs: Any | None = None,
    replay: Any | None = None,
    job_mttf: Any | None = None,
    plan: Any | None = None,
    environment: Any | None = None,
) -> Report:
    """Build the report document; see :func:`reliab.report.build_report`."""
    df = _interruptions(ingest)
    summary = rates.summary()
    conf = float(rates.conf_level)
    meta_s = {str(k): str(v) for k, v in (meta or {}).items()}
    meta_s.setdefault("reliab version", __version__)
    components = _component_map(df)
    sections = (
        _summary_section(df, summary, conf, reference),
        _categories_section(df, reference),
        _timeline_section(df),
        _rates_section(summary, conf, components),
        _daily_section(df),
        *((job_section(job_costs, replay, mttf=job_mttf, plan=plan),) if job_costs is not None else ()),
        quality_section(
            getattr(ingest, "accounting", None), getattr(ingest, "quarantine", None), max_quarantine,
            interruptions=getattr(ingest, "interruptions", None),
            notes=tuple(getattr(ingest, "notes", ())),
            tables={t: getattr(ingest, t, None) for t in ("signals", "jobs", "telemetry")},
        ),
        _methods_section(rates, reference, meta_s, *_policy_sentence(ingest)),
    )
    if environment is not None:  # shown only when telemetry was analysed
        from reliab.report.environment import environment_section

        sections = (*sections[:-1], environment_section(environment), sections[-1])
    return Report(title=title, sections=sections, subtitle=subtitle, meta=tuple(meta_s.items()))


__all__ = [
    "assemble",
    "clean_text",
    "fmt_int",
    "fmt_interval",
    "fmt_num",
    "fmt_pct",
    "IngestLike",
    "RatesLike",
    "DEFAULT_WINDOW",
]
