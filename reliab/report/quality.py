"""The data-quality section: line accounting per folder and format, the quarantine, evidence coverage."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pandas as pd

from reliab._checks import Check
from reliab.report.document import Block, Callout, RowKind, Section, Table, Text
from reliab.report.formatting import DASH, clean_text, fmt_int


def _accounting_groups(acc: pd.DataFrame, nums: pd.DataFrame, diff: Any) -> pd.DataFrame:
    """Per-file accounting summed per (folder, format); files with malformed lines kept apart."""
    paths = [str(p) for p in acc["path"]]
    root = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0]) if paths else ""
    rel = [os.path.relpath(p, root) if root else p for p in paths]
    alone = (nums["malformed"].to_numpy() > 0) | (diff != 0)
    folder = [r if a else (os.path.dirname(r) or ".") for r, a in zip(rel, alone, strict=True)]
    frame = nums.assign(folder=folder, source=acc["source"].astype(str).to_numpy(), diff=diff, files=1, alone=alone)
    g = frame.groupby(["folder", "source", "alone"], sort=True, dropna=False).sum(numeric_only=True).reset_index()
    g["label"] = [f if a or n == 1 and not f.endswith("/") else f"{f}/*" for f, a, n in
                  zip(g["folder"], g["alone"], g["files"], strict=True)]
    single = (g["files"] == 1) & ~g["alone"]
    if single.any():  # a folder with one file of that format: name the file itself
        names = {(os.path.dirname(r) or ".", s): r for r, s, a in zip(rel, frame["source"], alone, strict=True)
                 if not a}  # a file listed alone (malformed lines) is not its folder's other file
        g.loc[single, "label"] = [names.get((f, s), f) for f, s in zip(g.loc[single, "folder"], g.loc[single, "source"], strict=True)]
    return g


def _provenance_block(acc: pd.DataFrame, tables: dict[str, pd.DataFrame | None] | None,
                      spans: Any = None) -> list[Block]:
    """The source and window of each table (:mod:`reliab.report.provenance`), if any table."""
    from reliab.report.provenance import provenance

    where = provenance(acc, tables or {}, spans)
    if not len(where):
        return []
    return [Table(
        "Where each table comes from", where,
        "Per table, the sources its rows were read from (live sources by location, files by "
        "folder and format), the time its rows span, and the window a live source was asked for.",
        numeric=("Rows",), monospace=("From",))]


#: evidence kinds of the ``interruptions`` table and how the report names them
#: characters of a quarantined line shown in the report (the full line is in quarantine.parquet)
QUARANTINE_TEXT = 160
_KINDS = (("hardware", "Hardware evidence"), ("other", "Other evidence only"),
          ("nccl", "NCCL evidence only"), ("none", "No evidence"))


def coverage_blocks(interruptions: pd.DataFrame | None, notes: tuple[str, ...]) -> list[Block]:
    """Evidence coverage: interruptions per evidence kind, and every coverage warning."""
    blocks: list[Block] = []
    df = interruptions if interruptions is not None else pd.DataFrame()
    if len(df) and "evidence_kind" in df:
        kinds = df["evidence_kind"].astype("string").fillna("none").value_counts()
        n = len(df)
        rows = [{"Attributed by": label, "Interruptions": fmt_int(int(kinds.get(k, 0))),
                 "Share": f"{100 * int(kinds.get(k, 0)) / n:.1f}%"} for k, label in _KINDS]
        blocks.append(Table(
            "Evidence coverage", pd.DataFrame(rows),
            "Hardware: some evidence names a GPU, host, network or host-maintenance cause; other: "
            "only software, dependency, operator or scheduler evidence; NCCL only: nothing but "
            "collective timeouts; none: no evidence in the attribution window.",
            numeric=("Interruptions", "Share")))
    warnings = tuple(n.removeprefix("Warning: ") for n in notes if n.startswith("Warning: "))
    if warnings:
        blocks.append(Text("Evidence coverage warnings:", items=warnings, kind="note"))
    return blocks


def relative_paths(paths: Any, accounting: pd.DataFrame) -> list[str]:
    """``paths`` relative to the folder all input files share (no install paths in the report);
    live locations (``scheme://``) stay as they are."""
    files = [str(p) for p in accounting["path"] if "://" not in str(p)] if len(accounting) else []
    root = os.path.commonpath(files) if len(files) > 1 else os.path.dirname(files[0]) if files else ""
    out = []
    for p in paths:
        text = str(p)
        out.append(os.path.relpath(text, root) if root and "://" not in text and os.path.isabs(text)
                   and text.startswith(root) else text)
    return out


def strip_root(text: str, accounting: pd.DataFrame | None) -> str:
    """``text`` with the input folder's absolute path taken out (notes naming files)."""
    if accounting is None or not len(accounting):
        return text
    files = [str(p) for p in accounting["path"] if "://" not in str(p)]
    root = os.path.commonpath(files) if len(files) > 1 else os.path.dirname(files[0]) if files else ""
    return text.replace(root + os.sep, "") if root and root != os.sep else text


def _not_read(acc: pd.DataFrame) -> list[Block]:
    """Files no parser read (unrecognised, binary, special, unreadable, skipped), with why."""
    if "reason" not in acc.columns:
        return []
    reason = acc["reason"].astype("string")
    bad = acc[(reason.fillna("").str.len() > 0).to_numpy() & (acc["parsed"].to_numpy() == 0)]
    if not len(bad):
        return []
    shown = bad.head(30)
    data = pd.DataFrame({"File": [clean_text(p, 100) for p in relative_paths(shown["path"], acc)],
                         "As": shown["source"].astype(str).tolist(),
                         "Reason": [clean_text(r, 100) for r in shown["reason"]]})
    return [Table("Files not read", data, f"{len(bad):,} input file(s) gave no record; the first "
                  f"{len(shown):,} are listed with the reason (all are in accounting.parquet).",
                  monospace=("File",))]


def _per_source(ingest: Any) -> list[Block]:
    try:
        summary = ingest.summary()
    except (AttributeError, KeyError, TypeError):
        return []
    if not len(summary):
        return []
    data = pd.DataFrame({"Format": summary["source"].astype(str)} | {
        c.capitalize(): [fmt_int(v) for v in summary[c]] for c in summary.columns if c != "source"})
    return [Table("Per input format", data, "Files, line accounting and signal rows per format.",
                  numeric=tuple(c for c in data.columns if c != "Format"))]


def failed_checks_blocks(failed: Sequence[tuple[str, Check]]) -> list[Block]:
    """The table "Failed checks" (result, check, detail), only when a check failed."""
    if not failed:
        return []
    data = pd.DataFrame({"Result": [str(k) for k, _ in failed],
                         "Check": [c.name for _, c in failed],
                         "Detail": [clean_text(c.detail, 160) for _, c in failed]})
    return [Table(
        "Failed checks", data,
        f"{len(failed):,} invariant(s) of published numbers failed; each result concerned is "
        "not shown (its section says which check failed). A failed check is a defect in "
        "reliab, not in the data: please report it with results.json.",
        monospace=("Check",))]


def quality_section(ingest: Any, max_quarantine: int = 20,
                    failed: Sequence[tuple[str, Check]] = ()) -> Section:
    """Section ``data-quality`` of an ingest result: failed checks of the results, accounting,
    formats, files not read, quarantine, evidence coverage (only the failed checks when
    ``ingest`` is None)."""
    if ingest is None:
        return Section("Data quality", tuple(failed_checks_blocks(failed)), key="data-quality")
    accounting = getattr(ingest, "accounting", None)
    quarantine = getattr(ingest, "quarantine", None)
    interruptions = getattr(ingest, "interruptions", None)
    notes = tuple(strip_root(str(n), accounting) for n in getattr(ingest, "notes", ()))
    tables = {t: getattr(ingest, t, None) for t in ("signals", "jobs", "telemetry")}
    blocks: list[Block] = failed_checks_blocks(failed)
    acc = accounting if accounting is not None else pd.DataFrame()
    if acc.empty:
        blocks.append(Text("No input file was read: the line accounting is empty.", kind="note"))
    else:
        cols = ["lines", "parsed", "irrelevant", "malformed"]
        nums = acc[cols].astype("int64")
        diff = (nums["lines"] - nums["parsed"] - nums["irrelevant"] - nums["malformed"]).to_numpy()
        tot = nums.sum()
        n_bad = int((diff != 0).sum())
        blocks += [
            Callout("Input files", fmt_int(len(acc))),
            Callout("Lines read", fmt_int(tot["lines"]), f"{fmt_int(tot['parsed'])} parsed"),
            Callout(
                "Malformed",
                fmt_int(tot["malformed"]),
                f"{100 * tot['malformed'] / tot['lines']:.3f}% of lines" if tot["lines"] else "",
                "warn" if tot["malformed"] else "good",
            ),
            Callout(
                "Identity failures",
                fmt_int(n_bad),
                "lines ≠ parsed + irrelevant + malformed",
                "bad" if n_bad else "good",
            ),
        ]

        def check(d: int) -> str:
            return (
                "✓"
                if d == 0
                else f"✗ {abs(d):,} line(s) {'unaccounted' if d > 0 else 'over-counted'}"
            )

        groups = _accounting_groups(acc, nums, diff)
        rows = [
            {
                "Files": r.label,
                "Count": fmt_int(r.files),
                "Source": str(r.source),
                "Lines": fmt_int(r.lines),
                "Parsed": fmt_int(r.parsed),
                "Irrelevant": fmt_int(r.irrelevant),
                "Malformed": fmt_int(r.malformed),
                "Check": check(int(r.diff)),
            }
            for r in groups.itertuples(index=False)
        ]
        diff = groups["diff"].to_numpy()
        rows.append(
            {
                "Files": "Total",
                "Count": fmt_int(len(acc)),
                "Source": "",
                "Lines": fmt_int(tot["lines"]),
                "Parsed": fmt_int(tot["parsed"]),
                "Irrelevant": fmt_int(tot["irrelevant"]),
                "Malformed": fmt_int(tot["malformed"]),
                "Check": "✓" if n_bad == 0 else f"✗ {n_bad} file(s)",
            }
        )
        kinds: tuple[RowKind, ...] = (*("flag" if d else "" for d in diff), "total")
        blocks += _per_source(ingest)
        blocks += _not_read(acc)
        blocks.append(
            Table(
                "Line accounting per input folder and format",
                pd.DataFrame(rows),
                "Every input line is counted once: lines = parsed + irrelevant + malformed. Files "
                "of one format in one folder are summed (the per-file table is accounting.parquet); "
                "a file with malformed lines is listed on its own. A ✗ marks a group where the "
                "identity fails (lines were lost or double-counted).",
                numeric=("Count", "Lines", "Parsed", "Irrelevant", "Malformed"),
                row_kinds=kinds,
                monospace=("Files",),
            )
        )
        blocks += _provenance_block(acc, tables, getattr(ingest, "origin_spans", None))
    q = quarantine if quarantine is not None else pd.DataFrame()
    if q.empty:
        blocks.append(Text("The quarantine is empty: no malformed line was set aside."))
    else:
        head = q.head(max_quarantine)
        data = pd.DataFrame(
            {
                "Line": [
                    f"{p}:{int(n)}" if pd.notna(n) else str(p)
                    for p, n in zip(relative_paths(head["path"], acc), head["lineno"], strict=True)
                ],
                "Source": [
                    str(s) if pd.notna(s) else DASH for s in head.get("source", [None] * len(head))
                ],
                "Reason": [clean_text(r, 80) for r in head["reason"]],
                "Text": [clean_text(t, QUARANTINE_TEXT) for t in head["text"]],
            }
        )
        blocks.append(
            Table(
                "Quarantined lines",
                data,
                f"The first {len(head):,} of {len(q):,} quarantined line(s): untrusted text copied from"
                " the input files, not written by reliab (control characters shown as \\xNN, long"
                f" lines cut at {QUARANTINE_TEXT} characters).",
                monospace=("Line", "Text"),
            )
        )
    blocks += coverage_blocks(interruptions, notes)
    return Section("Data quality", tuple(blocks), key="data-quality")
