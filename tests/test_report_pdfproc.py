"""The PDF laid out in a second process: the same bytes as in this one, and never a lost PDF."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure as MplFigure

import reliab.report.pdf as pdfproc
from reliab.report import Figure, Report, Section, Text, render_html, render_pdf
from reliab.report.pdf import PdfProcess


def _report() -> Report:
    fig = MplFigure(figsize=(4, 2.5))
    ax = fig.add_subplot()
    ax.plot([0, 1, 2, 3], [3, 1, 2, 0])
    ax.set_title("interruptions per day")
    return Report("Process test", (Section("Notes", (
        Text("a node named <b>gpu-001</b> and a URL http://example.invalid/x stay text"),
        Figure("A line", fig, caption="four points")), key="notes"),))


def test_second_process_gives_the_bytes_of_render_pdf():
    report = _report()
    here = render_pdf(report)
    with PdfProcess() as proc:
        proc.send(render_html(report, target="print"))
        there = proc.pdf()
    assert there is not None and there.startswith(b"%PDF-")
    assert there == here


def _figures(n: int) -> list[Figure]:
    out = []
    for i in range(n):
        fig = MplFigure(figsize=(3 + i, 2))
        fig.add_subplot().plot(range(5 + i), [(k * (i + 2)) % 7 for k in range(5 + i)])
        out.append(Figure(f"chart {i}", fig, caption="points"))
    return out


def test_figures_encoded_beside_the_layout_give_the_same_bytes():
    """The process encodes every figure for the PDF on threads while WeasyPrint lays the page
    out, and WeasyPrint reuses each encoding: the bytes are those of render_pdf."""
    figs = _figures(3)
    report = Report("Images", (Section("Charts", (*figs, figs[0]), key="charts"),))  # one twice
    here = render_pdf(report)
    with PdfProcess() as proc:
        proc.send(render_html(report, target="print"))
        there = proc.pdf()
        log = proc._out[1].decode()  # noqa: SLF001
    assert there == here
    assert "reused 3 of 3 images" in log  # one PDF image per distinct PNG (the twice-placed one too)


def test_failed_process_gives_none(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(pdfproc, "SCRIPT", "import sys; sys.exit(3)")
    with PdfProcess() as proc:
        proc.send("<p>x</p>")
        assert proc.pdf() is None


def test_process_never_given_a_page_is_stopped():
    proc = PdfProcess()
    assert proc.pdf() is None  # nothing sent: nothing to wait for
    proc.close()
    assert proc._proc is not None and proc._proc.returncode is not None  # noqa: SLF001


def test_run_report_lays_the_pdf_out_itself_when_the_process_fails(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    import reliab

    monkeypatch.setattr(pdfproc, "SCRIPT", "import sys; sys.exit(3)")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "note.txt").write_text("nothing to read here\n")
    run = reliab.run_report(tmp_path / "logs", out=tmp_path / "out", pdf=True, tables=False)
    pdf = run.files["report.pdf"]
    assert pdf.read_bytes().startswith(b"%PDF-")
    assert list(run.files)[:2] == ["report.html", "report.pdf"]
    assert "pdf" in run.timings


def test_run_report_starts_the_pdf_process_before_the_analyses(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """WeasyPrint is imported by the PDF process while this one runs the analyses."""
    import reliab
    import reliab.study._run as run

    order = []
    real_init, real_analyze = PdfProcess.__init__, run.analyze

    def init(self):
        order.append("pdf process")
        real_init(self)

    def analyze(*args, **kwargs):
        order.append("analyses")
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr(PdfProcess, "__init__", init)
    monkeypatch.setattr(run, "analyze", analyze)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "note.txt").write_text("nothing to read here\n")
    made = reliab.run_report(tmp_path / "logs", out=tmp_path / "out", pdf=True, tables=False)
    assert order == ["pdf process", "analyses"]
    assert made.files["report.pdf"].read_bytes().startswith(b"%PDF-")
