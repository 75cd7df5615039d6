"""The report's generic path on small inputs: assembly, formatting, HTML, PDF, escaping.

Regression/structure tests: they check what the report contains and that it is
self-contained and safe, not pixels.  Results are real (``estimate_rates`` and friends on a
Table-5-sized synthetic interruption table); the ingest is a small stand-in object.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reliab
from reliab import schema
from reliab.report import Entry, build_report, render_html, write_html, write_pdf
from reliab.report.document import Callout, Figure, Report, Table, Text
from reliab.report.formatting import fmt_hours, fmt_interval, fmt_num
from reliab.taxonomy.vocabulary import COMPONENT_OF, table5

N_GPUS, DAYS = 16_384, 54
START = pd.Timestamp("2024-03-01", tz="UTC")
HOSTILE = ("<script>alert('x')</script>", '<img src=x onerror="alert(1)">', "</table><b>bold</b>",
           '<img src="file:///etc/passwd">', '<link rel="stylesheet" href="http://example.com/x.css">')


@dataclass(frozen=True)
class FakeIngest:
    signals: pd.DataFrame
    interruptions: pd.DataFrame
    accounting: pd.DataFrame
    quarantine: pd.DataFrame
    notes: tuple[str, ...] = field(default=())
    policy: str = "training-run"


def make_interruptions(seed: int = 0) -> pd.DataFrame:
    """Table 5 counts (419 unexpected) plus 47 planned, uniform over 54 days."""
    rng = np.random.default_rng(seed)
    ref = table5()
    cats = list(ref["category"].repeat(ref["count"])) + ["Planned"] * 47
    rng.shuffle(cats)
    n = len(cats)
    return schema.conform(pd.DataFrame({
        "time": START + pd.to_timedelta(np.sort(rng.uniform(0, DAYS * 24, n)), unit="h"),
        "job_id": [f"{1000 + i}" for i in range(n)],
        "hosts": [f"node{rng.integers(1, 2049):04d}" for _ in range(n)],
        "planned": [c == "Planned" for c in cats], "category": cats,
        "component": [COMPONENT_OF[c] for c in cats], "attribution": "rule:test",
        "downtime_h": rng.exponential(1.0, n), "lost_gpu_hours": rng.exponential(5000.0, n),
    }), "interruptions")


def make_ingest(hostile: bool = True) -> FakeIngest:
    accounting = pd.DataFrame({
        "path": ["logs/kern.log", "logs/sacct.txt", "logs/train.log", "logs/tickets.csv"],
        "source": ["kernel", "sacct", "nccl", "tickets"],
        "lines": [120_000, 5_400, 88_000, 61], "parsed": [2_100, 5_390, 700, 58],
        "irrelevant": [117_880, 0, 87_290, 0],
        "malformed": [20, 10, 10, 2],  # tickets: 58 + 0 + 2 != 61 -> identity fails
    })
    q = [("logs/kern.log", i * 97 + 3, "kernel", "no Xid code", f"NVRM: Xid (PCI:0000:{i:02x}:00): ")
         for i in range(20)]
    if hostile:
        q = [("logs/tickets.csv", 17 + i, "tickets", f"bad row {t}", t) for i, t in enumerate(HOSTILE)] + q
    q.insert(4, ("logs/very/deep/train-rank-00017.log", 123_456, "nccl", "truncated record",
                 "x" * 50 + "\x00\x1b[31m" + "y" * 250))
    quarantine = pd.DataFrame(q, columns=["path", "lineno", "source", "reason", "text"])
    return FakeIngest(schema.empty("signals"), make_interruptions(), accounting, quarantine,
                      notes=("Interruption policy 'training-run': every unplanned end of the run.",))


def make_results(inter: pd.DataFrame) -> dict[str, object]:
    unexpected = inter[~inter["planned"]]
    hours = ((unexpected["time"] - START) / pd.Timedelta(hours=1)).to_numpy()
    common = {"gpu_days": N_GPUS * DAYS, "job_hours": DAYS * 24.0}
    return {
        "rates": reliab.estimate_rates(inter, by=["component", "category"], **common),
        "rates_by_component": reliab.estimate_rates(inter, by="component", **common),
        "tbi_weibull": reliab.fit_weibull(np.diff(np.r_[0, hours]), None),
        "crow_amsaa": reliab.fit_crow_amsaa(hours, end=DAYS * 24.0),
        "trend_laplace": reliab.trend_test(hours, end=DAYS * 24.0),
        "job_km": reliab.NotAvailable("survival of job allocations", "no job records in this test"),
    }


@pytest.fixture(scope="module")
def ingest() -> FakeIngest:
    return make_ingest()


@pytest.fixture(scope="module")
def results(ingest: FakeIngest) -> dict[str, object]:
    return make_results(ingest.interruptions)


@pytest.fixture(scope="module")
def report(ingest: FakeIngest, results: dict[str, object]) -> Report:
    return build_report(results, ingest=ingest, reference=table5(), subtitle="Fake Llama 3 window",
                        meta={"Fleet": "16,384 GPUs"})


@pytest.fixture(scope="module")
def html(report: Report) -> str:
    return render_html(report)


# ------------------------------------------------------------------ assembly
def test_sections_in_order_and_only_with_inputs(report: Report) -> None:
    keys = [s.key for s in report.sections]
    assert keys == ["summary", "taxonomy", "rates", "tbi", "survival", "trends", "data-quality",
                    "methods"]
    assert "lemons" not in keys and "change" not in keys  # no lemons result, no previous period


def test_summary_reads_the_rates_result(report: Report, results: dict) -> None:
    values = {c.label: c.value for c in report.section("summary").blocks if isinstance(c, Callout)}
    assert values["Interruptions"] == "466" and values["Unexpected"] == "419"
    tot = results["rates"].summary().iloc[-1]
    assert values["Mean time to interruption"] == fmt_hours(tot["mtti_job_hours"]) == "3.09 h"
    assert values["GPU-level MTBF"] == "50,700 GPU-h"
    assert values["Effective training time"] == "—"  # no cost model given: said, not invented


def test_table5_comparison_only_when_asked(report: Report, ingest, results) -> None:
    table = next(b for b in report.section("taxonomy").blocks if isinstance(b, Table))
    df = table.data.set_index("Category")
    assert df.loc["Faulty GPU", "Count"] == "148" and df.loc["Faulty GPU", "Printed %"] == "30.1"
    assert "misprinted" in df.loc["Faulty GPU", "Check"]
    assert df.loc["GPU HBM3 Memory", "Check"] == "✓"
    plain = build_report(results, ingest=ingest)
    t2 = next(b for b in plain.section("taxonomy").blocks if isinstance(b, Table))
    assert "Published" not in t2.data.columns and "Llama" not in render_html(plain).split("Methods")[0]


def test_any_grouping_of_rates_renders() -> None:
    """Regression: build_report raised KeyError 'category' on per-component rates."""
    inter = make_interruptions()
    rates = reliab.estimate_rates(inter, by="component", gpu_days=1000.0)
    page = render_html(build_report({"by_component": rates}))
    assert "GPU" in page and "Rates and MTBF" in page


def test_unknown_result_lands_in_further_results_and_entry_places_it() -> None:
    @dataclass(frozen=True)
    class NewModel(reliab._result.ResultMixin):
        n: int = 3
        conf_level: float = 0.9
        method: str = "a brand-new estimator (Someone 2031)"
        notes: tuple[str, ...] = ("a note",)

        def summary(self) -> pd.DataFrame:
            return pd.DataFrame({"quantity": ["x"], "estimate": [1.234], "low": [1.0], "high": [1.5]})

        def plot(self, ax=None):
            fig, ax = reliab._result.new_figure(ax)
            ax.plot([0, 1], [0, 1])
            return fig

    rep = build_report({"brand_new": NewModel()})
    assert [s.key for s in rep.sections] == ["other", "methods"]
    page = render_html(rep)
    assert "Someone 2031" in page and "1.23 <span class=\"ci\">[1.00, 1.50]" in page and "a note" in page
    placed = build_report({"x": Entry(NewModel(), section="trends", title="Placed by hand")})
    assert placed.sections[0].key == "trends" and "Placed by hand" in render_html(placed)


def test_not_available_says_why(report: Report) -> None:
    texts = [b.body for b in report.section("survival").blocks if isinstance(b, Text)]
    assert any("not available: no job records in this test" in t for t in texts)
    methods = " ".join(" ".join(b.items) for b in report.section("methods").blocks if isinstance(b, Text))
    assert "no job records in this test" in methods


def test_interval_cells_and_bars(report: Report) -> None:
    table = next(b for b in report.section("rates").blocks if isinstance(b, Table)
                 and "Rate / 1k GPU-days" in b.data.columns)
    cell = table.data["Rate / 1k GPU-days"].iloc[-1]
    assert re.fullmatch(r"0\.474 \[0\.429, 0\.521\]", cell), cell
    bars = dict(table.intervals)["Rate / 1k GPU-days"]
    assert len(bars) == len(table.data) and all(lo <= est <= hi for est, lo, hi in bars)


def test_shape_meaning_and_trend_verdict(report: Report) -> None:
    tbi = " ".join(b.body for b in report.section("tbi").blocks if isinstance(b, Text))
    # a renewal fit of the gaps reads their spread, never a trend on its own (issue 20 item 4)
    assert "Shape" in tbi and "as a renewal fit" in tbi and "trend verdict" in tbi
    assert "wear-out (increasing hazard)" not in tbi and "burn-in / infant" not in tbi
    assert "B10 life" in tbi
    trends = report.section("trends").blocks[0].body
    assert trends.startswith(("Neither", "Wearing out", "Burning in", "The tests disagree"))


def test_identity_failure_is_flagged(report: Report) -> None:
    acc = next(b for b in report.section("data-quality").blocks
               if isinstance(b, Table) and b.title.startswith("Line accounting"))
    flagged = [acc.data.iloc[i]["Files"] for i, k in enumerate(acc.row_kinds) if k == "flag"]
    assert len(flagged) == 1 and flagged[0].endswith("tickets.csv")


def test_empty_results_do_not_crash() -> None:
    rep = build_report({})
    assert [s.key for s in rep.sections] == ["methods"]
    assert "no input file was read" in render_html(rep)


# ------------------------------------------------------------------ formatting
@pytest.mark.parametrize("value, text", [(0.16731, "0.167"), (50677.3, "50,700"), (3.0927, "3.09"),
                                         (float("inf"), "∞"), (float("nan"), "—"), (1.5e-9, "1.50e-09")])
def test_three_significant_figures(value: float, text: str) -> None:
    assert fmt_num(value) == text


def test_large_mtbf_in_gpu_years_and_interval_decimals() -> None:
    assert fmt_hours(1.06e7, "GPU-h") == "1,210 GPU-years"
    assert fmt_hours(0.25) == "15.0 min" and fmt_hours(2500) == "104 days"
    assert fmt_interval(0.16731, 0.14142, 0.19661) == "0.167 [0.141, 0.197]"


def test_rare_category_mtbf_column_switches_to_years(report: Report) -> None:
    table = next(b for b in report.section("rates").blocks if isinstance(b, Table)
                 and b.title.startswith("Rates per category"))
    assert "MTBF (GPU-years)" in table.data.columns


# ------------------------------------------------------------------ HTML
def test_self_contained(html: str) -> None:
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html)
    assert refs and all(r.startswith(("#", "data:image/png;base64,")) for r in refs)
    assert "<script" not in html.lower() and "<link" not in html and "@import" not in html


def test_log_text_is_escaped(html: str) -> None:
    for raw in HOSTILE:
        assert raw not in html
    assert "&lt;script&gt;alert(" in html and "&lt;/table&gt;&lt;b&gt;bold" in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html
    assert "file:///etc/passwd" in html and 'src="file:' not in html


def test_inline_svg_ids_unique(html: str) -> None:
    assert html.count("<svg") >= 5
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_binary_and_long_lines_are_visible_and_cut(report: Report) -> None:
    table = next(b for b in report.section("data-quality").blocks
                 if isinstance(b, Table) and b.title == "Quarantined lines")
    texts = list(table.data["Text"])
    assert any(t.endswith("…") and len(t) == 160 for t in texts)
    assert any("x\\x00\\x1b[31m" in t for t in texts) and not any("\x00" in t for t in texts)


def test_readable_at_760px(html: str) -> None:
    css = re.search(r"<style>(.*)</style>", html, re.S).group(1)
    assert "max-width: 100%" in css and ".table-scroll { overflow-x: auto; }" in css
    assert re.search(r"@media screen and \(max-width: 720px\)", css)


# ------------------------------------------------------------------ PDF
def test_pdf_fetches_nothing_and_keeps_log_text(report: Report, tmp_path: Path) -> None:
    from weasyprint.urls import URLFetcher

    calls: list[str] = []

    class Recording(URLFetcher):  # WeasyPrint's own fetcher, every URL it is asked for noted
        def fetch(self, url: str, headers=None):
            calls.append(url)
            if not url.startswith("data:"):
                raise ValueError(f"refused {url}")
            return super().fetch(url, headers)

    fetcher = Recording(allowed_protocols=("data",))
    path = write_pdf(report, tmp_path / "r.pdf", url_fetcher=fetcher)
    assert path.read_bytes()[:5] == b"%PDF-"
    assert not [c for c in calls if not c.startswith("data:")], calls
    # the figures reach the PDF as PNG images, one per figure of the document
    n_figures = sum(isinstance(b, Figure) for s in report.sections for b in s.blocks)
    assert sum(c.startswith("data:image/png;base64,") for c in calls) == n_figures > 0
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                              text=True, check=True).stdout
        assert "<script>alert('x')</script>" in text and "</table><b>bold</b>" in text
        assert "Page 1 of" in text and "Executive summary" in text


def test_write_html(report: Report, tmp_path: Path) -> None:
    path = write_html(report, tmp_path / "sub" / "r.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert any(isinstance(b, Figure) for s in report.sections for b in s.blocks)


def test_hostile_host_and_job_names_render_as_text() -> None:
    """Regression: hosts and job names from logs are text in HTML and PDF."""
    inter = make_interruptions().head(60).copy()
    inter["hosts"] = [HOSTILE[i % 3] if i % 4 == 0 else f"node{i % 7:03d}" for i in range(len(inter))]
    inter["job_id"] = [f"{HOSTILE[2]}-{i}" for i in range(len(inter))]
    signals = schema.conform(pd.DataFrame({
        "time": inter["time"], "host": inter["hosts"], "source": "tickets", "signal": "ticket:incident",
        "severity": "info", "message": HOSTILE[0], "origin": [f"t.csv:{i}" for i in range(len(inter))]}),
        "signals")
    lemons = reliab.find_lemons(signals, inter, node_hours=100.0, anomaly=False)
    page = render_html(build_report({"lemons": lemons}))
    assert HOSTILE[0] not in page and HOSTILE[1] not in page and "<table><b>" not in page
    assert page.count("<table") == page.count("</table>")
    assert "&lt;script&gt;" in page


def test_composite_results_expand_into_their_section() -> None:
    """Regression: a study holding several results (as the environment study does) renders
    each part through the generic path and each skipped part with its reason."""
    @dataclass(frozen=True)
    class EnvironmentStudy(reliab._result.ResultMixin):
        results: tuple = ()
        skipped: tuple = ()
        n: int = 1
        conf_level: float = 0.95
        method: str = "several analyses"
        notes: tuple = ()

        def summary(self) -> pd.DataFrame:
            return pd.DataFrame({"analysis": ["diurnal"]})

    fit = reliab.fit_weibull([54, 187, 216, 240, 500, 500], [1, 1, 1, 1, 0, 0])
    study = EnvironmentStudy(results=(("diurnal", fit),), skipped=(("failure_glm", "too few failures"),))
    rep = build_report({"environment": study})
    assert [s.key for s in rep.sections] == ["environment", "methods"]
    page = render_html(rep)
    assert "Failure glm: not available: too few failures" in page and "Diurnal" in page


def test_files_not_read_are_listed_with_the_reason(tmp_path: Path) -> None:
    """Regression: unrecognised and binary files of a folder show in data quality with why."""
    (tmp_path / "notes.txt").write_text("hello world\nfoo bar\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    res = reliab.ingest(tmp_path)
    page = render_html(build_report({}, ingest=res))
    assert "Files not read" in page and "blob.bin" in page and "notes.txt" in page


# ------------------------------------------------------------------ tables as a reader sees them
def test_parameter_rows_keep_their_names_without_bars_or_empty_intervals(results) -> None:
    """Regression: the Crow-AMSAA table showed five unnamed numbers, '[—, —]' for the
    unbiased beta and interval bars that put beta, lambda and MTBF on one scale."""
    from reliab.report.generic import summary_table

    table = summary_table(results["crow_amsaa"], "Crow-AMSAA")
    first = list(table.data.iloc[:, 0])
    assert first[:2] == ["Beta", "Lambda"] and "MTBF instantaneous" in first
    assert not table.intervals  # different quantities share no scale
    cells = table.data.to_numpy().ravel().tolist()
    assert not any("[—" in c for c in cells)
    unbiased = table.data.set_index(table.data.columns[0]).loc["Beta unbiased"].iloc[0]
    assert re.fullmatch(r"\d\.\d\d", unbiased)  # the estimate alone, no interval


def test_rounding_noise_names_and_several_intervals() -> None:
    from reliab.report.generic import frame_table, label

    replay = pd.DataFrame({"scenario": ["observed", "replay"], "ettr_change_pp": [0.0, 1.77],
                           "saved_gpu_hours": [-9.313226e-10, 2.47e6]}, index=[0, 11])
    t = frame_table(replay, "Replay")
    # not -9.31e-10; no row numbers; GPU-hours past ten years shown in GPU-years, and said so
    assert list(t.data.columns) == ["Scenario", "ETTR change (pp)", "Saved GPU-years"]
    assert list(t.data["Saved GPU-years"]) == ["0", "282"]
    thr = pd.DataFrame({"effect": ["total"], "pct_per_c": [-0.229824], "low_naive": [-0.230466],
                        "high_naive": [-0.229182], "low_hac": [-0.230504], "high_hac": [-0.229144],
                        "p_hac": [0.0]})
    t = frame_table(thr, "Throughput")
    assert list(t.data.columns) == ["Effect", "% per °C", "Naive interval", "HAC interval", "p (HAC)"]
    assert t.data.iloc[0].tolist() == ["Total", "-0.230", "[-0.230, -0.229]", "[-0.231, -0.229]", "<0.001"]
    assert label("hour_of_min") == "Hour of min" and label("mttf_h") == "MTTF (h)"
    mttf = pd.DataFrame({"n_gpus": [8, 16], "mttf_h": [6334.6, 3167.3], "mttf_low_h": [5756.2, 2878.1],
                         "mttf_high_h": [6987.8, 3493.9]})
    t = frame_table(mttf, "MTTF")
    assert list(t.data.columns) == ["GPUs", "MTTF (h)"] and t.data.iloc[0, 1] == "6,330 [5,760, 6,990]"
    assert [name for name, _ in t.intervals] == ["MTTF (h)"]  # one quantity per column: bars kept


def test_each_result_heading_leads_its_reading_figure_and_table(report: Report) -> None:
    blocks = report.section("tbi").blocks
    i = next(k for k, b in enumerate(blocks) if isinstance(b, Text) and b.title == "Weibull fit")
    assert isinstance(blocks[i + 1], Figure) and blocks[i + 1].title == ""
    assert isinstance(blocks[i + 2], Table) and blocks[i + 2].title == "Weibull fit: estimates"
    page = render_html(report)
    assert page.index("<h3 class=\"result\">Weibull fit</h3>") < page.index("Weibull fit: estimates")
