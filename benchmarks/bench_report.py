"""Report generation time for the Llama-3-scale demo, beside the ingest of the same data.

Run on demand:  python benchmarks/bench_report.py [--runs 3]

One ingest of the bundled sample (1,4xx files, the baseline measured in the same run), then
``--runs`` repetitions of each report stage on that ingest: every analysis
(:func:`reliab.analyze`), the document (:func:`reliab.build_report`), the HTML page and the
PDF.  Prints medians and the ratio of the report alone (document + HTML + PDF; aim < 10 s)
and of analyses + report to the ingest.  Machine load matters: compare ratios, not seconds.

Also in each run, as the "before" reference: the PDF laid out from the screen page (inline
SVG figures, freshly built so each is drawn for it), which is how the PDF was made before
the print page carried PNG figures.

``--week``: instead, ``reliab report`` end to end (fresh processes, HTML and PDF) on a
simulated 64-node week (512 GPUs, 7 days, precursors before 80 % of the hardware failures),
the issue 24 target: under 10 s on a quiet 2-core machine.  Wall and CPU time (user + sys,
the PDF process included) and the load average of each run are printed; the baseline is the
bare import of the libraries the report uses.  Results:
benchmarks/results/2026-12-06-demo-report.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import reliab
from reliab.report import build_report, render_html, write_html, write_pdf


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _svg_page_pdf(report) -> bytes:
    """The former PDF path: WeasyPrint lays out the screen page, figures as inline SVG."""
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    return HTML(string=render_html(report), base_url=None,
                url_fetcher=URLFetcher(allowed_protocols=("data",))).write_pdf()


def week(runs: int) -> None:
    """``reliab report`` on a simulated 64-node week, in fresh processes (module docstring)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_demo import timed
    from reliab.datasets import simulate_cluster

    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "week"
        simulate_cluster(n_gpus=512, days=7, seed=7, precursor_fraction=0.8).write(logs)
        rows = []
        for i in range(runs):
            rows.append(timed([sys.executable, "-m", "reliab", "report", str(logs), "--gpus", "512",
                               "--out", str(Path(tmp) / f"out{i}"), "-q"]))
        pdf = (Path(tmp) / "out0" / "report.pdf").stat().st_size
    imports = statistics.median(timed([sys.executable, "-c", "import pandas, matplotlib.figure, scipy.stats, "
                                       "statsmodels.api, weasyprint"])[0] for _ in range(runs))
    wall = statistics.median(r[0] for r in rows)
    print(f"reliab report, 64-node week  median {wall:7.2f} s   runs "
          f"{', '.join(f'{r[0]:.2f}' for r in rows)}   {'within' if wall < 10 else 'over'} the 10 s aim")
    print(f"  CPU (user+sys)             median {statistics.median(r[1] for r in rows):7.2f} s   runs "
          f"{', '.join(f'{r[1]:.2f}' for r in rows)}   load {', '.join(r[2] for r in rows)}")
    print(f"library imports (baseline)   median {imports:7.2f} s   ratio {wall / imports:5.1f}x"
          f"   (PDF {pdf / 1e6:.1f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--week", action="store_true", help="reliab report on a 64-node week instead")
    args = ap.parse_args()
    if args.week:
        week(args.runs)
        return
    t_ingest, res = _time(lambda: reliab.ingest(reliab.sample_path(), policy="training-run"))
    fleet = reliab.fleet_facts(jobs=res.jobs, signals=res.signals, gpus=16_384,
                               window=("2024-06-01T00:00:00Z", "2024-07-25T00:00:00Z"))
    stages: dict[str, list[float]] = {"analyses": [], "document": [], "html": [], "pdf": [],
                                      "pdf from SVG page (before)": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            t, results = _time(lambda: reliab.analyze(res, fleet))
            stages["analyses"].append(t)
            t, report = _time(lambda r=results: build_report(r, ingest=res, fleet=fleet,
                                                             reference=reliab.table5()))
            stages["document"].append(t)
            stages["html"].append(_time(lambda r=report: write_html(r, Path(tmp) / "r.html"))[0])
            stages["pdf"].append(_time(lambda r=report: write_pdf(r, Path(tmp) / "r.pdf"))[0])
            fresh = build_report(results, ingest=res, fleet=fleet, reference=reliab.table5())
            stages["pdf from SVG page (before)"].append(_time(lambda r=fresh: _svg_page_pdf(r))[0])
    med = {k: statistics.median(v) for k, v in stages.items()}
    alone = med["document"] + med["html"] + med["pdf"]
    print(f"ingest (baseline, 1 run)      {t_ingest:7.2f} s")
    for k, v in stages.items():
        print(f"{k:<29} {med[k]:7.2f} s   runs {', '.join(f'{x:.2f}' for x in v)}")
    print(f"report alone (doc+html+pdf)   {alone:7.2f} s   ratio to ingest {alone / t_ingest:5.2f}x"
          f"   {'within' if alone < 10 else 'over'} the 10 s aim")
    print(f"analyses + report             {alone + med['analyses']:7.2f} s   ratio to ingest "
          f"{(alone + med['analyses']) / t_ingest:5.2f}x")
    before = med["pdf from SVG page (before)"]
    print(f"PDF: print page (PNG) {med['pdf']:.2f} s against the SVG page {before:.2f} s: "
          f"{before / med['pdf']:.1f}x faster (figures drawn in the HTML stage for the new path)")


if __name__ == "__main__":
    main()
