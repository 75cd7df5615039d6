"""The methods section: exposure, policy, every result's method, versions, configuration, inputs.

A quarterly report must say exactly what it was computed from: how GPU-days were derived,
which interruption policy counted what, the method of every number, the versions of reliab
and the libraries under it, the configuration file, and a SHA-256 of every input file
(in full in the HTML page and in ``inputs.sha256``; summed up per folder in the PDF).
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import pandas as pd

from reliab._result import NotAvailable
from reliab._version import __version__
from reliab.report.document import Block, Section, Table, Text
from reliab.report.formatting import fmt_int

DEFAULT_WINDOW = "10 minutes before to 5 minutes after the job's end (as in Meta's RSC study)"
LIBRARIES = ("numpy", "pandas", "scipy", "statsmodels", "lifelines", "scikit-learn", "matplotlib",
             "polars", "pyarrow", "jinja2", "weasyprint")


def versions() -> pd.DataFrame:
    """reliab, Python and the installed version of each library reliab computes with."""
    rows = [("reliab", __version__), ("python", platform.python_version())]
    for lib in LIBRARIES:
        try:
            rows.append((lib, metadata.version(lib)))
        except metadata.PackageNotFoundError:
            rows.append((lib, "not installed"))
    return pd.DataFrame(rows, columns=["Package", "Version"])


def inputs_digest(inputs: pd.DataFrame) -> str:
    """One SHA-256 over the sorted ``sha256  path`` lines (what ``inputs.sha256`` holds)."""
    lines = sorted(f"{r.sha256}  {r.path}" for r in inputs.itertuples() if r.sha256)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _folders(inputs: pd.DataFrame) -> pd.DataFrame:
    folder = [os.path.dirname(str(p)) or "." for p in inputs["path"]]
    g = inputs.assign(folder=folder).groupby("folder", sort=True)
    out = pd.DataFrame({"Folder": list(g.groups), "Files": [fmt_int(v) for v in g.size()],
                        "Bytes": [fmt_int(v) for v in g["bytes"].sum(min_count=1)],
                        "SHA-256 of the folder's lines": [
                            hashlib.sha256("\n".join(sorted(f"{r.sha256}  {r.path}" for r in grp.itertuples()
                                                            if r.sha256)).encode("utf-8", "surrogateescape")
                                           ).hexdigest()[:16] + "…" for _, grp in g]})
    return out


def _inputs_blocks(inputs: pd.DataFrame | None) -> list[Block]:
    if inputs is None or not len(inputs):
        return [Text("Inputs: no input file was read.")]
    hashed = int(inputs["sha256"].notna().sum())
    blocks: list[Block] = [
        Text(f"Inputs: {len(inputs):,} file(s), {fmt_int(inputs['bytes'].sum(min_count=1))} bytes; "
             f"SHA-256 of the sorted list of per-file hashes: {inputs_digest(inputs)}. "
             f"{hashed:,} file(s) hashed; the per-file list is inputs.sha256 beside this report "
             "(check it with `sha256sum -c inputs.sha256` from the logs' folder)."),
        Table("Input files per folder", _folders(inputs), "Files, bytes and a digest of each folder's "
              "per-file hashes.", numeric=("Files", "Bytes"), monospace=("Folder", "SHA-256 of the folder's lines")),
        Table("Every input file", pd.DataFrame({
            "File": inputs["path"].astype(str), "Bytes": [fmt_int(b) for b in inputs["bytes"]],
            "SHA-256": inputs["sha256"].fillna("not a regular file").astype(str)}),
            "One row per input file (HTML only; the PDF leaves this listing out).",
            numeric=("Bytes",), monospace=("File", "SHA-256"), screen_only=True),
    ]
    return blocks


def methods_section(
    results: Mapping[str, Any],
    titles: Mapping[str, str],
    *,
    fleet: Any = None,
    ingest: Any = None,
    reference: pd.DataFrame | None = None,
    inputs: pd.DataFrame | None = None,
    config: str | None = None,
) -> Section:
    """Section ``methods``; ``titles`` names each result key as the report shows it."""
    done = {k: r for k, r in results.items() if not isinstance(r, NotAvailable)}
    missing = {k: r for k, r in results.items() if isinstance(r, NotAvailable)}
    levels = sorted({float(r.conf_level) for r in done.values() if getattr(r, "conf_level", None)})
    blocks: list[Block] = [Text(
        "Every interval is two-sided" + (f" at {', '.join(f'{c:.0%}' for c in levels)}" if levels else "")
        + "; numbers are shown to 3 significant figures and counts exactly. Rates divide counts by "
        "the exposure and assume a constant rate within the window; MTBF and MTTI are their "
        "reciprocals, so their limits are the reciprocal limits of the rate.")]
    if fleet is None or isinstance(fleet, NotAvailable):
        why = fleet.reason if isinstance(fleet, NotAvailable) else "no fleet facts were given"
        blocks.append(Text(f"Exposure: not available: {why}", kind="note"))
    else:
        blocks.append(Text(f"Exposure: {fleet.describe()}"))
    from reliab.report.quality import strip_root

    acc = getattr(ingest, "accounting", None)
    notes = tuple(strip_root(str(n), acc) for n in getattr(ingest, "notes", ()))
    policy = next((n for n in notes if n.startswith("Interruption policy")), None)
    if policy:
        blocks.append(Text(policy, items=tuple(n for n in notes if n != policy and not n.startswith("Warning: "))))
    blocks.append(Text(f"Attribution: evidence is linked to a job interruption when logged within "
                       f"{DEFAULT_WINDOW}; storms of repeated signals collapse into one episode and "
                       "the root cause is chosen by rule priority (a hardware Xid beats the NCCL "
                       "timeout it caused). Parsers never assign categories; the taxonomy rules do."))
    if done:
        blocks.append(Text("Method of each result:", items=tuple(
            f"{titles.get(k, k)}: {getattr(r, 'method', type(r).__name__)}" for k, r in done.items())))
    if missing:
        blocks.append(Text("Not computed, and why:", items=tuple(
            f"{titles.get(k, k)}: {r.reason}" for k, r in missing.items()), kind="note"))
    if reference is not None:
        blocks.append(Text("Reference: Llama 3 Herd of Models (arXiv 2407.21783), §3.3.4 and "
                           "Table 5: root causes of 419 unexpected interruptions in 54 days of "
                           "pre-training on 16,384 H100 GPUs. Shares are recomputed from its counts."))
    blocks.append(Table("Versions", versions(), "The software this report was computed with.",
                        monospace=("Version",)))
    if config:
        blocks.append(Text("Configuration:", items=(), kind="paragraph"))
        blocks.append(Text(config, kind="code"))
    blocks += _inputs_blocks(inputs)
    return Section("Methods, versions and inputs", tuple(blocks), key="methods")


__all__ = ["DEFAULT_WINDOW", "inputs_digest", "methods_section", "versions"]
