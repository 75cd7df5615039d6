"""The executive summary and the root-cause table, read from the results (never recounted).

Counts, shares, MTTI and MTBF come from the rates result (:func:`reliab.estimate_rates`),
the change since the previous period from the period comparison, ETTR and lost GPU-hours
from whichever result carries them (the job-level cost model).  Missing results show as
"not available" with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reliab._result import NotAvailable
from reliab.report.document import Block, Callout, Figure, RowKind, Section, Table, Text
from reliab.report.formatting import (
    DASH,
    clean_text,
    finite,
    fmt_hours,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_p,
    fmt_pct,
)

TOTAL = "Total"
#: component classes in the executive summary's rate table
TOP = 3


def _ok(results: Mapping[str, Any], key: str) -> Any | None:
    r = results.get(key)
    return None if r is None or isinstance(r, NotAvailable) else r


def _total(rates: Any) -> pd.Series:
    s = rates.summary()
    return s[s[list(rates.by)].astype(str).eq(TOTAL).all(axis=1)].iloc[0]


def _with_attr(results: Mapping[str, Any], name: str) -> Any | None:
    return next((r for r in results.values() if not isinstance(r, NotAvailable)
                 and hasattr(r, name) and not callable(getattr(r, name))), None)


def _interval_callout(label: str, row: pd.Series, col: str, unit: str, conf: float) -> Callout:
    value = fmt_hours(row[col], unit)
    detail = f"{conf:.0%} CI {fmt_hours(row[f'{col}_low'], unit)} to {fmt_hours(row[f'{col}_high'], unit)}"
    return Callout(label, value, detail)


def _lost_callout(cost: Any | None) -> Callout:
    """The lost GPU-hours tile: the cost model's total, or why there is none."""
    if cost is None:
        return Callout("Lost GPU-hours", DASH, "needs the job-level cost model")
    if not finite(cost.lost_gpu_hours):
        return Callout("Lost GPU-hours", DASH, "not known: no interruption has a GPU count and a known downtime")
    return Callout("Lost GPU-hours", fmt_num(cost.lost_gpu_hours), "work, downtime, restarts")


#: files named in the summary's reading line before "and N more"
_NAMED = 5


def _named(items: list[str]) -> str:
    more = len(items) - _NAMED
    return ", ".join(items[:_NAMED]) + (f" and {more:,} more" if more > 0 else "")


def reading_text(ingest: Any) -> Text | None:
    """What the run did not read, as the command line says it: the files not read and why, the
    quarantined lines and the times inferred (a year or a time taken from a file's modification
    time), read from the ingest result's accounting, quarantine and parser notes."""
    from reliab.io import inferred_times, quarantined_lines, set_aside
    from reliab.report.quality import relative_paths

    acc = getattr(ingest, "accounting", None)
    if acc is None or not len(acc):
        return None
    unread, _ = set_aside(acc)
    quarantine = getattr(ingest, "quarantine", None)
    lines = quarantined_lines(quarantine) if quarantine is not None and len(quarantine) else 0
    inferred = inferred_times(getattr(ingest, "sources", {}) or {})
    names = relative_paths(unread["path"], acc) if len(unread) else []
    parts = [f"{len(acc) - len(unread):,} of {len(acc):,} input file(s) read",
             f"{len(unread):,} file(s) not read" + (": " + _named(
                 [f"{clean_text(n, 60)} ({s})" for n, s in zip(names, unread["source"].astype(str), strict=True)])
                 if len(unread) else ""),
             f"{lines:,} line(s) quarantined"]
    text = "What was read: " + "; ".join(parts) + " (the data-quality section lists them)."
    if inferred:
        where = relative_paths([p for p, _ in inferred], acc)
        text += " Times inferred, not read: " + "; ".join(
            f"{clean_text(w, 60)}: {clean_text(n, 200)}" for w, (_, n) in zip(where, inferred, strict=True)) + "."
    return Text(text, kind="note" if len(unread) or lines or inferred else "paragraph")


def _mtbf_callout(results: Mapping[str, Any], tot: pd.Series, conf: float) -> Callout:
    """GPU-level MTBF, unless the exposure covers too little of the fleet to divide by."""
    cov = results.get("exposure_coverage")
    if cov is not None and not isinstance(cov, NotAvailable) and not cov.adequate:
        return Callout("GPU-level MTBF", DASH, f"not shown: the exposure is {100 * cov.coverage:.2g}% "
                       "of the fleet's GPU-time (Rates and MTBF)")
    return _interval_callout("GPU-level MTBF", tot, "mtbf_gpu_hours", "GPU-h", conf)


def _rate(row: pd.Series) -> str:
    """``rate [low, high]`` per 1,000 GPU-days of one rates row."""
    c = "rate_per_1k_gpu_days"
    return fmt_interval(row[c], row[f"{c}_low"], row[f"{c}_high"])


def _trend_callout(results: Mapping[str, Any]) -> Callout:
    """The one verdict on the interruption rate (falling, flat, rising)."""
    verdict = next((r for r in results.values() if type(r).__name__ == "TrendVerdict"), None)
    if verdict is None:
        why = results.get("trend_verdict")
        return Callout("Interruption rate trend", DASH, why.reason[:80] if isinstance(why, NotAvailable)
                       else "needs the trend tests")
    ev = verdict.evidence.set_index("evidence")
    detail = "point-process tests and Crow-AMSAA"
    if "Crow-AMSAA beta" in ev.index:
        b = ev.loc["Crow-AMSAA beta"]
        detail = f"Crow-AMSAA beta {fmt_interval(b['estimate'], b['low'], b['high'])}"
    tone = {"rising": "bad", "falling": "good"}.get(verdict.verdict, "neutral")
    return Callout("Interruption rate trend", verdict.verdict.capitalize(), detail, tone)


def _lemon_callout(results: Mapping[str, Any]) -> Callout:
    """How many nodes the excess-failure test flags, of how many."""
    lemons = _ok(results, "lemons")
    if lemons is None:
        why = results.get("lemons")
        return Callout("Lemon nodes", DASH, why.reason[:80] if isinstance(why, NotAvailable)
                       else "needs the lemon analysis")
    n = len(lemons.lemons)
    return Callout("Lemon nodes", fmt_int(n), f"of {lemons.n_nodes:,} nodes, FDR {lemons.fdr:.0%}",
                   "warn" if n else "good")


def _component_table(results: Mapping[str, Any]) -> Table | None:
    """Rates per component class with exact intervals, largest first (the top of the rates
    section, on the first page)."""
    rates = _ok(results, "rates_by_component")
    if rates is None or "component" not in rates.by:
        return None
    s = rates.summary()
    s = s[s["component"].astype(str) != TOTAL].sort_values("count", ascending=False, kind="stable")
    n_all, s = len(s), s.head(TOP)
    conf = float(rates.conf_level)
    data = pd.DataFrame({
        "Component": s["component"].astype(str).to_numpy(),
        "Count": [fmt_int(v) for v in s["count"]],
        "Share %": [fmt_pct(v) for v in s["share_pct"]],
        "Rate per 1,000 GPU-days": [_rate(r) for _, r in s.iterrows()],
        "MTTI (h)": [fmt_interval(r["mtti_job_hours"], r["mtti_job_hours_low"], r["mtti_job_hours_high"])
                     for _, r in s.iterrows()]})
    more = f" The top {len(s)} of {n_all} classes; all in Rates and MTBF." if n_all > len(s) else ""
    return Table("Interruption rates of the top component classes", data,
                 f"Unexpected interruptions per 1,000 GPU-days with exact Poisson {conf:.0%} "
                 "intervals; MTTI: hours between interruptions of a job on the whole fleet." + more,
                 numeric=("Count", "Share %", "Rate per 1,000 GPU-days", "MTTI (h)"))


def summary_section(results: Mapping[str, Any], ingest: Any = None) -> Section:
    """Section ``summary``: headline numbers and what they mean; with ``ingest``, what was not
    read (:func:`reading_text`)."""
    rates = _ok(results, "rates")
    if rates is None:
        why = results["rates"].reason if isinstance(results.get("rates"), NotAvailable) else \
            "no rates result was given"
        reading = reading_text(ingest) if ingest is not None else None
        return Section("Executive summary", (Text(f"Interruption counts and rates: not available: "
                                                  f"{why}", kind="note"), *([reading] if reading else [])),
                       key="summary")
    tot = _total(rates)
    conf = float(rates.conf_level)
    nu, npl = int(tot["count"]), int(rates.n_planned)
    blocks: list[Block] = [
        Callout("Interruptions", fmt_int(nu + npl), f"{fmt_int(npl)} planned"),
        Callout("Unexpected", fmt_int(nu), f"{100 * nu / (nu + npl):.1f}% of all" if nu + npl else "",
                "bad" if nu else "good"),
        _interval_callout("Mean time to interruption", tot, "mtti_job_hours", "h", conf),
        _mtbf_callout(results, tot, conf),
    ]
    cost = _with_attr(results, "ettr")
    blocks.append(Callout("Effective training time", f"{100 * cost.ettr:.1f}%",
                          "productive / wall time" + (f" of run {clean_text(str(cost.job_name), 40)}"
                                                      if getattr(cost, "job_name", None) else ""))
                  if cost is not None else Callout("Effective training time", DASH, "needs the job-level cost model"))
    blocks.append(_lost_callout(_with_attr(results, "lost_gpu_hours")))
    blocks += [_trend_callout(results), _lemon_callout(results)]
    body = rates.summary()
    body = body[~body[list(rates.by)].astype(str).eq(TOTAL).all(axis=1)].sort_values(
        "count", ascending=False, kind="stable")
    key = rates.by[-1]
    top = [f"{r[key]} ({int(r['count']):,} interruptions, {r['share_pct']:.1f}%; "
           f"{_rate(r)} per 1,000 GPU-days)" for _, r in body.head(3).iterrows()]
    text = (f"{nu:,} unexpected interruptions in {rates.gpu_days:,.0f} GPU-days: one every "
            f"{fmt_hours(tot['mtti_job_hours'])} for a job on the whole fleet "
            f"({fmt_interval(tot['mtti_job_hours'], tot['mtti_job_hours_low'], tot['mtti_job_hours_high'])} h, "
            f"{conf:.0%} interval).")
    blocks.append(Text(text + (" Top causes: " + "; ".join(top) + "." if top else "")))
    verdict = next((r for r in results.values() if type(r).__name__ == "TrendVerdict"), None)
    if verdict is not None:
        blocks.append(Text(verdict.statement + (
            " The renewal fit of the gaps reads otherwise at first sight; why it does not change "
            "the verdict: Trends." if verdict.disagreements else "")))
    table = _component_table(results)
    if table is not None:
        blocks.append(table)
    blocks.append(_change_text(results))
    reading = reading_text(ingest) if ingest is not None else None
    if reading is not None:
        blocks.append(reading)
    return Section("Executive summary", tuple(blocks), key="summary")


def _change_text(results: Mapping[str, Any]) -> Text:
    cmp = results.get("period_comparison")
    if cmp is None:
        return Text("Change since the previous period: no earlier period given (see the quarterly "
                    "configuration's 'previous').", kind="paragraph")
    if isinstance(cmp, NotAvailable):
        return Text(f"Change since the previous period: not available: {cmp.reason}", kind="note")
    t = cmp.summary()
    tot = t[t[cmp.by] == TOTAL].iloc[0]
    sig = "significant" if tot["pvalue"] < 1 - cmp.conf_level else "not significant"
    changed = cmp.changed
    head = (f"Since {cmp.labels[0]}: the interruption rate changed by a factor "
            f"{fmt_interval(tot['ratio'], tot['low'], tot['high'])} (p = {fmt_p(tot['pvalue'])}, "
            f"{sig}).")
    items = tuple(f"{r[cmp.by]}: {int(r['count_previous'])} -> {int(r['count_current'])}, ratio "
                  f"{fmt_interval(r['ratio'], r['low'], r['high'])}, q = {fmt_p(r['qvalue'])}"
                  for _, r in t[t[cmp.by].isin(changed)].iterrows())
    return Text(head + (" Changed categories:" if items else " No category changed significantly."),
                items=items, kind="note" if items else "paragraph")


def _check(count: int, ref: pd.Series | None) -> tuple[str, bool]:
    if ref is None:
        return "✗ not in reference", True
    problems = []
    if count != int(ref["count"]):
        problems.append(f"count {count - int(ref['count']):+d}")
    if abs(float(ref["pct_printed"]) - float(ref["pct_from_count"])) > 0.051:
        problems.append("misprinted share")
    return ("✗ " + "; ".join(problems), True) if problems else ("✓", False)


def taxonomy_section(results: Mapping[str, Any], reference: pd.DataFrame | None) -> Section | None:
    """Section ``taxonomy``: categories grouped by component, counts and shares from the rates
    result, and with ``reference`` (Llama 3 Table 5) the published counts beside them."""
    rates = _ok(results, "rates")
    if rates is None or "category" not in rates.by:
        return None
    s = rates.summary()
    body = s[s["category"].astype(str) != TOTAL].copy()
    if "component" not in body:
        body["component"] = ""
    ref = reference.set_index("category") if reference is not None else None
    if ref is not None:
        extra = [c for c in ref.index if c not in set(body["category"])]
        body = pd.concat([body, pd.DataFrame({"category": extra, "component": ref.loc[extra, "component"].to_numpy(),
                                              "count": 0, "share_pct": 0.0})], ignore_index=True)
    body["_ct"] = body.groupby("component")["count"].transform("sum")
    body = body.sort_values(["_ct", "component", "count", "category"], ascending=[False, True, False, True])
    rows, kinds, n_flag = [], [], 0
    for comp, grp in body.groupby("component", sort=False):
        for r in grp.itertuples():
            cells = {"Category": str(r.category), "Component": str(comp), "Count": fmt_int(r.count),
                     "Share %": fmt_pct(r.share_pct)}
            kind: RowKind = ""
            if ref is not None:
                rr = ref.loc[r.category] if r.category in ref.index else None
                cells |= {"Published": fmt_int(rr["count"]) if rr is not None else DASH,
                          "Printed %": fmt_pct(rr["pct_printed"]) if rr is not None else DASH}
                cells["Check"], flagged = _check(int(r.count), rr)
                kind = "flag" if flagged else ""
                n_flag += flagged
            rows.append(cells)
            kinds.append(kind)
        rows.append({"Category": "Subtotal", "Component": str(comp), "Count": fmt_int(grp["count"].sum()),
                     "Share %": fmt_pct(grp["share_pct"].sum()),
                     **({"Published": fmt_int(ref[ref["component"] == comp]["count"].sum()),
                         "Printed %": fmt_pct(ref[ref["component"] == comp]["pct_printed"].sum()),
                         "Check": ""} if ref is not None else {})})
        kinds.append("subtotal")
    tot = _total(rates)
    rows.append({"Category": "Total unexpected", "Component": "", "Count": fmt_int(tot["count"]),
                 "Share %": "100.0", **({"Published": fmt_int(ref["count"].sum()),
                                         "Printed %": fmt_pct(ref["pct_printed"].sum()),
                                         "Check": "✓" if int(tot["count"]) == int(ref["count"].sum())
                                         else f"✗ {int(tot['count']) - int(ref['count'].sum()):+d}"}
                                      if ref is not None else {})})
    kinds.append("total")
    data = pd.DataFrame(rows)
    blocks: list[Block] = []
    if ref is not None:
        same = sum(int(body.loc[body["category"] == c, "count"].sum()) == int(ref.loc[c, "count"]) for c in ref.index)
        blocks.append(Text(f"Compared with Llama 3 Table 5 (arXiv 2407.21783): {same} of {len(ref)} "
                           f"published counts reproduced; {n_flag} row(s) flagged (✗: a different "
                           "count, a category the paper lacks, or a share the paper misprints)."))
    blocks.append(Figure("Unexpected interruptions per category", rates.plot(measure="count"),
                         "Count and share of unexpected interruptions per category, coloured by "
                         "component class.", alt="Bar chart of interruptions per category"))
    blocks.append(Table("Root-cause categories", data,
                        "Unexpected interruptions only (planned work excluded, as in Llama 3 Table 5), "
                        "grouped by component class, largest first." + (
                            " Published and Printed %: the reference's count and printed share."
                            if ref is not None else ""),
                        numeric=tuple(c for c in data.columns if c not in ("Category", "Component", "Check")),
                        row_kinds=tuple(kinds)))
    return Section("Root causes", tuple(blocks), key="taxonomy")


__all__ = ["summary_section", "taxonomy_section"]
