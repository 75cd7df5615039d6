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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
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
