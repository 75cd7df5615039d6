"""Scripted analyses: the two bundled quarters end to end, and the walkthrough notebook.

Regression tests on the synthetic quarters of ``data/quarters`` (``generate.py`` triples the
mean of GPU HBM3 Memory in 2024Q2): the quarterly run writes both reports and archives, and
the Q2 comparison flags exactly that category.  The notebook runs top to bottom.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _cli import run_in_process

ROOT = Path(__file__).resolve().parents[1]
QUARTERLY = ROOT / "analyses" / "quarterly"
NOTEBOOK = ROOT / "analyses" / "notebooks" / "walkthrough.ipynb"
pytestmark = pytest.mark.skipif(not QUARTERLY.exists(), reason="analyses/ not in this checkout")


def _reliab(*args: str) -> subprocess.CompletedProcess[str]:
    """``reliab ARGS`` through the command line, in this process (tests/_cli.py)."""
    return run_in_process(*args)


@pytest.fixture(scope="session")  # (torn down only at the end: xdist may interleave other tests)
def quarters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quarters")
    q1 = _reliab("report", "--config", str(QUARTERLY / "2024Q1.toml"), "--out", str(out / "q1"), "-q")
    assert q1.returncode == 0, q1.stderr[-3000:]
    q2 = _reliab("report", "--config", str(QUARTERLY / "2024Q2.toml"), "--out", str(out / "q2"),
                 "--previous", str(out / "q1" / "results.json"), "-q")
    assert q2.returncode == 0, q2.stderr[-3000:]
    assert "Traceback" not in q1.stderr + q2.stderr
    return out


def test_both_quarters_write_reports_and_archives(quarters: Path) -> None:
    for q in ("q1", "q2"):
        for name in ("report.html", "report.pdf", "results.json", "inputs.sha256"):
            assert (quarters / q / name).stat().st_size > 0, (q, name)
    archive = json.loads((quarters / "q2" / "results.json").read_text())
    assert archive["label"] == "2024Q2" and archive["format"] == "reliab-results/1"
    assert [h[0] for h in archive["history"]] == ["2024Q1", "2024Q2"]


def test_q2_flags_the_category_whose_rate_changed(quarters: Path) -> None:
    archive = json.loads((quarters / "q2" / "results.json").read_text())
    table = archive["results"]["period_comparison"]["summary"]
    changed = [r["category"] for r in table if r["changed"] and r["category"] != "Total"]
    assert changed == ["GPU HBM3 Memory"]
    row = next(r for r in table if r["category"] == "GPU HBM3 Memory")
    assert 1.5 < row["ratio"] < 6 and row["low"] > 1
    html = (quarters / "q2" / "report.html").read_text()
    assert "Change since the previous period" in html and "Rates per period and lifetime" in html
    assert "GPU HBM3 Memory changed significantly" in html
    assert "Lifetime" in html


def test_q1_has_no_comparison_and_says_so(quarters: Path) -> None:
    html = (quarters / "q1" / "report.html").read_text()
    assert "no earlier period given" in html and "Rate ratio per category" not in html


@pytest.mark.slow
@pytest.mark.skipif(not NOTEBOOK.exists(), reason="notebook not in this checkout")
def test_walkthrough_notebook_runs(tmp_path: Path) -> None:
    """Regression: the notebook executes top to bottom with the public API only."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "import reliab." not in source and "from reliab" not in source  # public API only
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert (tmp_path / "walkthrough-report" / "report.html").exists()


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="notebook not in this checkout")
def test_walkthrough_notebook_calls_only_the_public_api() -> None:
    """The notebook run's sibling in the default tier: every ``reliab.<name>`` its code cells
    use is exported by ``reliab`` (the slow tier executes the notebook)."""
    import ast

    import reliab

    nb = json.loads(NOTEBOOK.read_text())
    source = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    used = {node.attr for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "reliab"}
    assert {"ingest", "analyze", "build_report", "write_html"} <= used
    assert not [name for name in sorted(used) if name not in reliab.__all__ or not hasattr(reliab, name)]
