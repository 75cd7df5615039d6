"""Tests of reliab.report: document assembly, HTML, PDF and (optionally) a headless browser.

All regression/structure tests: they check what the report contains and that it is
self-contained and safe, not pixels.  The data are a fake Llama-3-sized ingest built here.
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
from scipy.stats import chi2

from reliab.report import build_report, render_html, write_html, write_pdf
from reliab.report.document import Callout, Figure, Report, Table, Text
from reliab.taxonomy.vocabulary import COMPONENT_OF, table5

N_GPUS = 16_384
DAYS = 54
START = pd.Timestamp("2024-03-01", tz="UTC")
SCRIPT = "<script>alert('x')</script> Xid 79 & garbage"


@dataclass(frozen=True)
class FakeIngest:
    signals: pd.DataFrame
    interruptions: pd.DataFrame
    accounting: pd.DataFrame
    quarantine: pd.DataFrame


@dataclass(frozen=True)
class FakeRates:
    table: pd.DataFrame
    conf_level: float = 0.95
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> pd.DataFrame:
        return self.table.copy()


def make_interruptions(seed: int = 0) -> pd.DataFrame:
    """Table 5 counts (419 unexpected) plus 47 planned, uniform over 54 days."""
    rng = np.random.default_rng(seed)
    ref = table5()
    cats = list(ref["category"].repeat(ref["count"])) + ["Planned"] * 47
    n = len(cats)
    offsets = np.sort(rng.uniform(0, DAYS * 24, n))
    rng.shuffle(cats)
    planned = np.array([c == "Planned" for c in cats])
    return pd.DataFrame(
        {
            "time": START + pd.to_timedelta(offsets, unit="h"),
            "job_id": pd.array([f"{1000 + i}" for i in range(n)], dtype="string"),
            "hosts": pd.array(
                [f"node{rng.integers(1, 2049):04d}" for _ in range(n)], dtype="string"
            ),
            "gpu": pd.array([str(rng.integers(0, 8)) for _ in range(n)], dtype="string"),
            "planned": planned,
            "category": pd.array(cats, dtype="string"),
            "component": pd.array([COMPONENT_OF[c] for c in cats], dtype="string"),
            "root_signal": pd.array(["xid:79"] * n, dtype="string"),
            "evidence": pd.array(["kern.log:1"] * n, dtype="string"),
            "attribution": pd.array(["rule:test"] * n, dtype="string"),
            "job_state": pd.array(["NODE_FAIL"] * n, dtype="string"),
            "downtime_h": rng.exponential(1.0, n),
            "lost_gpu_hours": rng.exponential(5000.0, n),
        }
    )


def make_ingest() -> FakeIngest:
    accounting = pd.DataFrame(
        {
            "path": ["logs/kern.log", "logs/sacct.txt", "logs/train.log", "logs/tickets.csv"],
            "source": ["xid", "slurm", "nccl", "tickets"],
            "lines": [120_000, 5_400, 88_000, 61],
            "parsed": [2_100, 5_390, 700, 58],
            "irrelevant": [117_880, 0, 87_290, 0],
            "malformed": [20, 10, 10, 2],  # tickets: 58 + 0 + 2 != 61 -> identity fails
        }
    )
    q = [
        ("logs/kern.log", i * 97 + 3, "xid", "no Xid code", f"NVRM: Xid (PCI:0000:{i:02x}:00): ")
        for i in range(20)
    ]
    q.insert(2, ("logs/tickets.csv", 17, "tickets", "unparseable time", SCRIPT))
    q.insert(
        4,
        (
            "logs/very/deep/directory/structure/of/the/cluster/train-rank-00017.log",
            123_456,
            "nccl",
            "truncated record",
            "x" * 50 + "\x00\x1b[31m" + "y" * 250,
        ),
    )
    quarantine = pd.DataFrame(q, columns=["path", "lineno", "source", "reason", "text"])
    return FakeIngest(
        signals=pd.DataFrame(),
        interruptions=make_interruptions(),
        accounting=accounting,
        quarantine=quarantine,
    )


def _poisson(k: np.ndarray, conf: float) -> tuple[np.ndarray, np.ndarray]:
    a = 1 - conf
    low = np.where(k > 0, chi2.ppf(a / 2, 2 * k) / 2, 0.0)
    high = chi2.ppf(1 - a / 2, 2 * k + 2) / 2
    return low, high


def make_rates(interruptions: pd.DataFrame, conf: float = 0.95) -> FakeRates:
    """Exact Poisson rates per category over the whole fleet (unexpected only)."""
    un = interruptions[~interruptions["planned"]]
    counts = un["category"].value_counts()
    counts = pd.concat([counts, pd.Series({"Total": counts.sum()})])
    k = counts.to_numpy(dtype=float)
    low, high = _poisson(k, conf)
    gpu_days = float(N_GPUS * DAYS)
    node_days = gpu_days / 8
    df = pd.DataFrame({"category": counts.index, "count": k.astype(int)})
    df["share_pct"] = 100 * k / k[-1]
    df["gpu_days"] = gpu_days
    for name, expo in (
        ("rate_per_1k_gpu_days", gpu_days / 1e3),
        ("rate_per_1k_node_days", node_days / 1e3),
    ):
        df[name], df[f"{name}_low"], df[f"{name}_high"] = k / expo, low / expo, high / expo
    with np.errstate(divide="ignore"):
        for name, expo in (("mtbf_gpu_hours", gpu_days * 24), ("mtti_job_hours", DAYS * 24.0)):
            df[name], df[f"{name}_low"], df[f"{name}_high"] = expo / k, expo / high, expo / low
    years = gpu_days / 365.25
    df["afr_pct"], df["afr_pct_low"], df["afr_pct_high"] = (
        100 * k / years,
        100 * low / years,
        100 * high / years,
    )
    return FakeRates(
        df, conf, ("exact Poisson (Garwood) intervals", "exposure: 16,384 GPUs × 54 days")
    )


META = {
    "GPUs": "16,384",
    "Nodes": "2,048",
    "Days": "54",
    "Window": "2024-03-01 → 2024-04-24",
    "Input files": "4",
}


@pytest.fixture(scope="module")
def ingest() -> FakeIngest:
    return make_ingest()


@pytest.fixture(scope="module")
def report(ingest: FakeIngest) -> Report:
    return build_report(
        ingest,
        rates=make_rates(ingest.interruptions),
        reference=table5(),
        subtitle="Fake Llama 3 window",
        meta=META,
    )


@pytest.fixture(scope="module")
def html(report: Report) -> str:
    return render_html(report)


@pytest.fixture(scope="module")
def pdf_path(report: Report, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pdf(report, tmp_path_factory.mktemp("pdf") / "report.pdf")


class TestAssemble:
    def test_sections_in_order(self, report: Report) -> None:
        keys = [s.key for s in report.sections]
        assert keys == [
            "summary",
            "categories",
            "timeline",
            "rates",
            "daily",
            "data-quality",
            "methods",
        ]

    def test_summary_callouts(self, report: Report) -> None:
        callouts = [b for b in report.section("summary").blocks if isinstance(b, Callout)]
        values = {c.label: c.value for c in callouts}
        assert values["Interruptions"] == "466"
        assert values["Unexpected"] == "419"
        assert values["Planned"] == "47"
        gpu = next(c for c in callouts if "GPU" in c.label and "share" in c.label.lower())
        assert gpu.value == "64.0%"

    def test_table5_counts_match_reference(self, report: Report) -> None:
        table = next(b for b in report.section("categories").blocks if isinstance(b, Table))
        df = table.data.set_index("Category")
        assert df.loc["Faulty GPU", "Count"] == "148"
        assert df.loc["Faulty GPU", "Printed %"] == "30.1"
        assert df.loc["Faulty GPU", "% from count"] == "35.3"
        assert "printed" in df.loc["Faulty GPU", "Check"]
        assert df.loc["GPU HBM3 Memory", "Check"] == "✓"
        assert "subtotal" in table.row_kinds and table.row_kinds[-1] == "total"

    def test_count_mismatch_and_unknown_category_flagged(self, ingest: FakeIngest) -> None:
        df = ingest.interruptions.copy()
        idx = df.index[df["category"] == "Faulty GPU"][:3]
        df.loc[idx, "category"] = "NVLink"
        changed = FakeIngest(ingest.signals, df, ingest.accounting, ingest.quarantine)
        report = build_report(changed, rates=make_rates(df), reference=table5())
        table = next(b for b in report.section("categories").blocks if isinstance(b, Table))
        data = table.data.set_index("Category")
        assert data.loc["Faulty GPU", "Check"] == "✗ count -3; misprinted share"
        assert data.loc["NVLink", "Check"] == "✗ not in reference"
        assert data.loc["NVLink", "Published"] == "—"
        flagged = {
            table.data.iloc[i]["Category"] for i, k in enumerate(table.row_kinds) if k == "flag"
        }
        assert flagged == {"Faulty GPU", "NVLink"}

    def test_faulty_gpu_note_only_with_reference(
        self, report: Report, html: str, ingest: FakeIngest
    ) -> None:
        notes = [
            b.body
            for b in report.section("categories").blocks
            if isinstance(b, Text) and b.kind == "note"
        ]
        assert any("30.1%" in n and "35.3%" in n and "148/419" in n for n in notes)
        assert "148/419" in html
        without = build_report(ingest, rates=make_rates(ingest.interruptions))
        texts = [
            b.body + " ".join(b.items)
            for s in without.sections
            for b in s.blocks
            if isinstance(b, Text)
        ]
        assert not any("148/419" in t for t in texts)

    def test_identity_failure_is_flagged(self, report: Report) -> None:
        tables = [b for b in report.section("data-quality").blocks if isinstance(b, Table)]
        acc = tables[0]
        flagged = [i for i, k in enumerate(acc.row_kinds) if k == "flag"]
        labels = [acc.data.iloc[i]["Files"] for i in flagged]
        assert len(labels) == 1 and labels[0].endswith("tickets.csv")
        assert acc.data.iloc[flagged[0]]["Check"].startswith("✗")

    def test_rates_intervals_formatted(self, report: Report) -> None:
        table = next(b for b in report.section("rates").blocks if isinstance(b, Table))
        cell = table.data.set_index("Category").loc["Total", "Rate / 1k GPU-days"]
        assert re.fullmatch(r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", cell), cell

    def test_methods_mention_conf_level_and_notes(self, report: Report) -> None:
        texts = " ".join(
            b.body + " ".join(b.items)
            for b in report.section("methods").blocks
            if isinstance(b, Text)
        )
        assert "95%" in texts and "Garwood" in texts and "10 minutes before" in texts

    def test_figures_present(self, report: Report) -> None:
        figs = [b for s in report.sections for b in s.blocks if isinstance(b, Figure)]
        assert len(figs) >= 3

    def test_empty_tables_do_not_crash(self, ingest: FakeIngest) -> None:
        empty = FakeIngest(
            pd.DataFrame(),
            ingest.interruptions.iloc[:0],
            ingest.accounting.iloc[:0],
            ingest.quarantine.iloc[:0],
        )
        rates = make_rates(ingest.interruptions)
        out = render_html(build_report(empty, rates=rates))
        assert "No interruptions" in out


class TestHTML:
    def test_title_and_meta(self, html: str) -> None:
        assert "<title>Cluster reliability report</title>" in html
        assert "16,384" in html and "Fake Llama 3 window" in html

    def test_no_external_resources(self, html: str) -> None:
        refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html)
        assert refs, "expected at least the table-of-contents links"
        assert not [r for r in refs if re.match(r"(?i)(https?:)?//", r)]
        assert "<script" not in html.lower()
        assert "@import" not in html and "<link" not in html

    def test_quarantine_text_is_escaped(self, html: str) -> None:
        assert "&lt;script&gt;alert(" in html
        assert "<script>alert" not in html

    def test_figures_inline_svg_with_unique_ids(self, html: str) -> None:
        assert html.count("<svg") >= 4
        ids = re.findall(r'\sid="([^"]+)"', html)
        assert len(ids) == len(set(ids))

    def test_long_and_binary_lines_are_cut_and_visible(self, report: Report) -> None:
        table = [b for b in report.section("data-quality").blocks if isinstance(b, Table)][-1]
        texts = list(table.data["Text"])
        assert any(t.endswith("…") and len(t) == 160 for t in texts)
        assert not any("\x00" in t for t in texts)
        assert any("x\\x00\\x1b[31m" in t for t in texts)  # shown as \\xNN

    def test_write_html(self, report: Report, tmp_path: Path) -> None:
        path = write_html(report, tmp_path / "sub" / "r.html")
        assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _page_count(path: Path) -> int:
    if shutil.which("pdfinfo"):
        out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
        return int(re.search(r"^Pages:\s+(\d+)", out.stdout, re.M).group(1))
    return len(re.findall(rb"/Type\s*/Page(?!s)", path.read_bytes()))


class TestPDF:
    def test_pdf_is_pdf_with_pages(self, pdf_path: Path) -> None:
        assert pdf_path.read_bytes()[:5] == b"%PDF-"
        assert _page_count(pdf_path) >= 2


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (headless browser)")
def test_browser_renders_without_errors(report: Report, tmp_path: Path) -> None:
    page = write_html(report, tmp_path / "report.html")
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        page.as_uri(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Cluster reliability report" in out.stdout
    bad = [
        ln
        for ln in out.stderr.splitlines()
        if "Uncaught" in ln or ("CONSOLE" in ln and "report.html" in ln)
    ]
    assert not bad, bad
