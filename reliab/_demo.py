"""``reliab demo``: ``reliab report`` on the bundled Llama-3-scale sample, with ``--compare llama3``.

The sample's ``cluster.json`` gives what an operator knows without reading a log — 16,384
GPUs, 8 per node, the 54-day window — and the sample is one training run, so it is counted
as Llama 3 did (``policy="training-run"``: 466 interruptions, 47 planned, the 18 Table 5
counts).  Everything else is :func:`reliab.run_report`.
"""

from __future__ import annotations

import json
from pathlib import Path

from reliab.study import ReportRun, run_report


def demo(out: str | Path = "demo-report", *, data: str | Path | None = None, pdf: bool = True,
         progress: bool = False, policy: str = "training-run",
         job_name: str | None = None) -> ReportRun:
    """Run ``reliab report`` on the bundled sample and write everything to ``out``.

    Parameters
    ----------
    out : path
        Output folder; created if needed.
    data : path, optional
        A sample folder with a ``cluster.json`` (``n_gpus``, ``gpus_per_node``, ``start``,
        ``end``); default the bundled ``llama3-54d`` (synthetic, calibrated to Llama 3 Table 5).
    pdf : bool
        Also render ``report.pdf`` with WeasyPrint.
    progress : bool
        Show progress bars while reading.
    policy, job_name : str, str or None
        What counts as an interruption (:func:`reliab.job_outcomes`); the sample is one
        training run (``training-run``).

    Returns
    -------
    ReportRun
        Files written (``report.html``, ``report.pdf``, ``results.json``, ``inputs.sha256``,
        Parquet tables), the results and timings.
    """
    from reliab.datasets import sample_path

    data = Path(data) if data is not None else sample_path()
    facts = data / "cluster.json"
    meta = json.loads(facts.read_text()) if facts.is_file() else {}
    window = (meta["start"], meta["end"]) if "start" in meta and "end" in meta else None
    return run_report(
        data, out=out, gpus=meta.get("n_gpus"), gpus_per_node=int(meta.get("gpus_per_node", 8)),
        window=window, policy=policy, job_name=job_name, compare="llama3", pdf=pdf,
        progress=progress, label="54-day sample window",
        title="Reliability report: Llama-3-scale sample cluster",
        subtitle="Synthetic logs calibrated to Llama 3 Table 5 (arXiv 2407.21783)",
        data_label="bundled sample llama3-54d" if data == sample_path() else data.name)


__all__ = ["demo"]
