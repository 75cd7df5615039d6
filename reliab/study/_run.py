"""``reliab report``: logs in, report and archive out, for the user's own cluster.

:func:`run_report` is the whole path behind the command and behind ``reliab demo`` (the same
run on the bundled sample with the Llama 3 comparison): ingest, fleet and exposure, every
analysis (:func:`reliab.study.analyze`), the input files' hashes, the report (HTML and PDF),
the JSON archive and the canonical tables.  Missing inputs never raise: the report says
what could not be computed and why.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from reliab._atomic import write_atomic
from reliab._checks import Check, equal, verify, verify_across
from reliab._result import NotAvailable
from reliab.errors import InputFileError
from reliab.io import NOT_OPENED
from reliab.study._analyses import analyze, in_window
from reliab.study._archive import archive, load_archive, write_archive
from reliab.study._fleet import Fleet, fleet_facts, read_inventory
from reliab.study._lean import lean_ingest, should_stream
from reliab.study._timespan import set_aside_implausible

Compare = Literal["llama3"]


@dataclass(frozen=True)
class ReportRun:
    """What :func:`run_report` wrote and computed.

    Attributes
    ----------
    files : dict of str to Path
        ``report.html``, ``report.pdf`` (unless ``pdf=False``), ``results.json``,
        ``inputs.sha256`` and the Parquet tables.
    results : dict
        The analyses by key (results or :class:`~reliab.NotAvailable`); a result that failed
        one of its invariants (:mod:`reliab._checks`) is a NotAvailable naming the check.
    fleet : Fleet or NotAvailable
        Window and exposure.
    ingest : IngestResult
        The canonical tables and accounting.
    timings : dict of str to float
        Seconds per stage.
    failed_checks : tuple of (str, Check)
        Invariants of published numbers that failed (:mod:`reliab._checks`), by result; each
        result concerned is not shown.
    """

    files: dict[str, Path]
    results: dict[str, Any]
    fleet: Fleet | NotAvailable
    ingest: Any = field(repr=False)
    timings: dict[str, float] = field(default_factory=dict)
    failed_checks: tuple[tuple[str, Check], ...] = ()

    @property
    def interruptions(self) -> pd.DataFrame:
        """The interruptions the report counts: those inside the window (all, without one)."""
        inter = self.ingest.interruptions
        return inter if isinstance(self.fleet, NotAvailable) else in_window(inter, self.fleet)

    @property
    def n_interruptions(self) -> int:
        """Interruptions counted in the window (planned included)."""
        return len(self.interruptions)

    @property
    def n_unexpected(self) -> int:
        """Unexpected interruptions in the window."""
        inter = self.interruptions
        return int((~inter["planned"].astype(bool)).sum()) if len(inter) else 0

    def headline(self) -> str:
        """One line for the command line: counts, fleet and time taken."""
        fleet = ("exposure not available" if isinstance(self.fleet, NotAvailable) else
                 f"{self.fleet.gpu_days:,.0f} GPU-days over {self.fleet.days:,.1f} days")
        missing = sum(isinstance(r, NotAvailable) for r in self.results.values())
        records = len(getattr(self.ingest, "failures", ()))
        failures = f"{records:,} failure records; " if records else ""
        return (f"{failures}{self.n_interruptions:,} interruptions ({self.n_unexpected:,} unexpected) "
                f"[policy {self.ingest.policy}]; {fleet}; {len(self.results) - missing} of "
                f"{len(self.results)} analyses done; {sum(self.timings.values()):.1f} s"
                + (f"; {len(self.failed_checks)} failed check(s) of published numbers, listed "
                   "under Data quality" if self.failed_checks else ""))


def _common_root(paths: Sequence[Path]) -> Path | None:
    existing = [p.resolve() for p in paths if p.exists()]
    if not existing:
        return None
    roots = [p if p.is_dir() else p.parent for p in existing]
    return Path(os.path.commonpath([str(r) for r in roots]))


def input_digests(accounting: pd.DataFrame, root: Path | None) -> pd.DataFrame:
    """SHA-256 and size of every input file the run read, paths relative to ``root``.

    Rows of files never opened (skipped, special, unreadable, duplicate, outside: a 200 GB
    hidden core dump, a link leading out of the folder) are listed without a digest.
    """
    rows = []
    sources = accounting["source"].astype(str) if "source" in accounting else [""] * len(accounting)
    for path, source in zip(accounting["path"].astype(str), sources, strict=True) if len(accounting) else []:
        p = Path(path)
        rel = os.path.relpath(path, root) if root is not None and p.is_absolute() else path
        if "://" in path or source in NOT_OPENED or not p.is_file():
            rows.append({"path": rel, "bytes": None, "sha256": None})
            continue
        h = hashlib.sha256()
        try:
            with p.open("rb") as fh:
                for block in iter(lambda f=fh: f.read(1 << 20), b""):
                    h.update(block)
            rows.append({"path": rel, "bytes": p.stat().st_size, "sha256": h.hexdigest()})
        except OSError:
            rows.append({"path": rel, "bytes": None, "sha256": None})
    return pd.DataFrame(rows, columns=["path", "bytes", "sha256"])


def count_checks(results: dict[str, Any], interruptions: pd.DataFrame
                 ) -> list[tuple[tuple[str, ...], Check]]:
    """Counts conserved across results: the rate tables per category and per component both
    total the unexpected interruptions of the ingest."""
    unexpected = (int((~interruptions["planned"].astype(bool)).sum())
                  if len(interruptions) and "planned" in interruptions else 0)
    return [((key,), equal(f"{key}_total_is_unexpected_interruptions", results[key].n,
                           unexpected, what="rate table total, unexpected interruptions"))
            for key in ("rates", "rates_by_component")
            if key in results and not isinstance(results[key], NotAvailable)]


def run_report(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    out: str | os.PathLike[str] = "report",
    gpus: int | None = None,
    inventory: str | os.PathLike[str] | None = None,
    window: tuple[Any, Any] | None = None,
    gpus_per_node: int = 8,
    policy: str | None = None,
    job_name: str | None = None,
    compare: Compare | None = None,
    previous: str | os.PathLike[str] | None = None,
    label: str | None = None,
    title: str | None = None,
    subtitle: str | None = None,
    conf_level: float = 0.95,
    pdf: bool = True,
    tables: bool = True,
    progress: bool = False,
    config_text: str | None = None,
    data_label: str | None = None,
    strict: bool = False,
    manifest: bool | str | os.PathLike[str] = True,
    source: str | None = None,
    stream: bool | None = None,
    **options: Any,
) -> ReportRun:
    """Ingest logs, run every analysis and write the report, the archive and the tables.

    Parameters
    ----------
    paths : path or sequence of paths
        Log files or folders (every file accounted for).
    out : path
        Output folder (created).
    gpus, inventory : int or path, optional
        Fleet size over the window, or an inventory CSV (:func:`reliab.study.read_inventory`).
        Without either, GPU-days come from the job records, and the report says so.
    window : (start, end), optional
        Observation window; default the span of the job records, else of the logs.
    gpus_per_node : int
        GPUs per node.
    policy, job_name : str, optional
        Interruption policy (:func:`reliab.ingest`).
    compare : {"llama3"}, optional
        Compare the category counts with Llama 3 Table 5.
    previous : path, optional
        ``results.json`` of the previous period: adds the change since then.
    label, title, subtitle : str, optional
        Name of the period (for the archive's history) and the report's heading.
    conf_level : float
        Level of every interval.
    pdf, tables : bool
        Also write ``report.pdf``; also write the canonical tables as Parquet.
    progress : bool
        Show progress bars while reading.
    config_text : str, optional
        The configuration file's text, quoted in the report's methods.
    data_label : str, optional
        How the report names the input (default: the folder names given).
    strict : bool
        Fail on the first malformed line or file not read (:func:`reliab.ingest`), instead of
        reporting them in the data-quality section.
    manifest, source : optional
        The hand-over manifest and a forced format, as :func:`reliab.ingest` takes them.
    stream : bool, optional
        Stream the tables to ``out/tables`` while reading (``reliab.ingest(..., output=)``,
        partitioned Parquet) and read back only the signal rows the analyses use
        (:mod:`reliab.study._lean`): memory does not grow with the logs, and every result is
        the same.  Default: when the inputs hold at least 256 MiB (a compressed file counted
        ten times its size).
    **options
        Every other keyword of :func:`reliab.ingest` (``rules``, ``before``, ``after``,
        ``quarantine_limit``) and every reader option (``boot_time``, ``tz``, ``year``,
        ``host``, ``fields``…, :func:`reliab.io._options.reader_options`): the logs are read
        exactly as ``reliab.ingest`` reads them.

    Returns
    -------
    ReportRun
    """
    import reliab
    from reliab.report import build_report, render_html, write_html, write_pdf
    from reliab.report.pdf import PdfProcess
    from reliab.report.shared_draw import SharedDraw, report_figures

    if not 0.0 < conf_level < 1.0:
        raise ValueError(f"conf_level must be in (0, 1), got {conf_level}")
    plist = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputFileError(f"{out}: is a file; the report's output (out=, --out) must be a folder")
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    prev = load_archive(previous) if previous is not None else None  # fail early on a bad path
    inv = read_inventory(inventory) if inventory is not None else None

    t0 = time.perf_counter()
    streamed = should_stream(plist, stream)
    if streamed:
        options["output"] = out / "tables"
    res = reliab.ingest(plist, progress=progress, policy=policy, job_name=job_name, strict=strict,
                        manifest=manifest, source=source, **options)
    res = set_aside_implausible(lean_ingest(res) if streamed else res)
    timings["ingest"] = time.perf_counter() - t0

    # the PDF is laid out by a second process, started now (it imports WeasyPrint beside the
    # analyses and the document), beside the screen page, the archive and the tables: the
    # same bytes as write_pdf
    with PdfProcess() if pdf else nullcontext() as pdf_process:
        t0 = time.perf_counter()
        fleet = fleet_facts(jobs=res.jobs, signals=res.signals, gpus=gpus, inventory=inv,
                            window=window, gpus_per_node=gpus_per_node)
        label = label or (f"{fleet.start:%Y-%m-%d} to {fleet.end:%Y-%m-%d}"
                          if isinstance(fleet, Fleet) else "this period")
        results = analyze(res, fleet, conf_level=conf_level, policy=res.policy, previous=prev,
                          labels=(str((prev or {}).get("label", "previous")), label))
        if window is not None and isinstance(fleet, NotAvailable) and len(res.lifetimes):
            # without an exposure there is no Fleet to carry the window: the lives still get it
            from reliab.models.lifetimes import analyze_lifetimes

            results.update(analyze_lifetimes(res.lifetimes, start=window[0], end=window[1], conf_level=conf_level))
        # every published number is checked before anything is rendered or archived
        results, failed = verify(results)
        results, across = verify_across(results, count_checks(
            results, res.interruptions if isinstance(fleet, NotAvailable) else in_window(res.interruptions, fleet)))
        failed += across
        timings["analyses"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        root = _common_root(plist)
        inputs = input_digests(res.accounting, root)
        timings["hashes"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        meta = {
            "Data": data_label or ", ".join(p.name or str(p) for p in plist),
            "Fleet": ("not available" if isinstance(fleet, NotAvailable) else
                      (f"{fleet.n_gpus:,} GPUs ({fleet.n_gpus // fleet.gpus_per_node:,} nodes x "
                       f"{fleet.gpus_per_node})" if fleet.n_gpus else
                       f"{fleet.gpu_days:,.0f} GPU-days from job records")),
            "Window": ("not available" if isinstance(fleet, NotAvailable) else
                       f"{fleet.start:%Y-%m-%d %H:%M} to {fleet.end:%Y-%m-%d %H:%M} UTC ({fleet.days:,.1f} d)"),
            "Input files": f"{len(res.accounting):,} ({int(res.accounting['lines'].sum()) if len(res.accounting) else 0:,} lines)",
            "Policy": res.policy,
            "Generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
        reference = None
        if compare == "llama3":
            from reliab.taxonomy.vocabulary import table5

            reference = table5()
        elif compare is not None:
            raise ValueError(f"compare must be 'llama3' or None, got {compare!r}")
        report = build_report(results, ingest=res, title=title or "Cluster reliability report",
                              subtitle=subtitle or label, meta=meta, reference=reference, fleet=fleet,
                              inputs=inputs, config=config_text, failed_checks=failed)
        # the figures are drawn here and in a forked copy at once (reliab.report.shared_draw)
        with SharedDraw(report_figures(report), close_in_copy=(
                pdf_process.input_fds() if pdf_process is not None else ())) as shared:
            shared.pngs()
            if pdf_process is not None:
                pdf_process.send(render_html(report, target="print"))
            shared.svgs()
        files = {"report.html": write_html(report, out / "report.html")}
        timings["html"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        files.update(_write_archive(res, results, out, label=label, fleet=fleet, previous=prev,
                                    inputs=inputs, config_text=config_text, failed=failed,
                                    streamed=streamed, tables=tables))
        timings["archive"] = time.perf_counter() - t0
        if pdf_process is not None:
            t0 = time.perf_counter()
            made = pdf_process.pdf()
            path = write_atomic(out / "report.pdf", made) if made is not None else write_pdf(
                report, out / "report.pdf")
            files = {"report.html": files.pop("report.html"), "report.pdf": path, **files}
            timings["pdf"] = time.perf_counter() - t0
    return ReportRun(files=files, results=results, fleet=fleet, ingest=res, timings=timings,
                     failed_checks=tuple(failed))


def _write_archive(res: Any, results: dict[str, Any], out: Path, *, label: str,
                   fleet: Fleet | NotAvailable, previous: dict[str, Any] | None,
                   inputs: pd.DataFrame, config_text: str | None, failed: list[tuple[str, Check]],
                   streamed: bool, tables: bool) -> dict[str, Path]:
    """``results.json``, ``inputs.sha256`` and the canonical tables (Parquet) in ``out``."""
    files: dict[str, Path] = {}
    files["results.json"] = write_archive(
        archive(results, label=label, fleet=fleet, previous=previous,
                inputs=inputs.to_dict(orient="records"), config={"text": config_text or ""},
                failed_checks=failed),
        out / "results.json")
    digest_lines = [f"{r.sha256}  {r.path}" for r in inputs.itertuples() if r.sha256]
    # names as the file system gives them (bytes that are not UTF-8 too), so `sha256sum -c` checks them
    (out / "inputs.sha256").write_text("\n".join(digest_lines) + ("\n" if digest_lines else ""),
                                       encoding="utf-8", errors="surrogateescape")
    files["inputs.sha256"] = out / "inputs.sha256"
    if streamed:
        files["tables"] = out / "tables"
    elif tables:
        for name, path in res.write_parquet(out).items():
            files[f"{name}.parquet"] = Path(path)
    return files


__all__ = ["ReportRun", "count_checks", "input_digests", "run_report"]
