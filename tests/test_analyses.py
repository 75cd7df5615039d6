"""Scripted analyses run end to end on the bundled sample using the public API only."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "analyses" / "quarterly" / "run.py"


@pytest.mark.skipif(not SCRIPT.exists(), reason="analyses/ not in this checkout")
def test_quarterly_uses_public_api_only() -> None:
    """Regression: the script imports nothing from reliab's private modules."""
    tree = ast.parse(SCRIPT.read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert all(not m.startswith("reliab.") for m in names), names


@pytest.mark.skipif(not SCRIPT.exists(), reason="analyses/ not in this checkout")
def test_quarterly_runs(tmp_path: Path) -> None:
    """Regression: the quarterly study writes its tables, summary and report on the sample."""
    import os

    import reliab

    env = {**os.environ, "PYTHONPATH": str(Path(reliab.__file__).parents[1])}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["trend_tests"]["laplace"]["n"] == 419
    assert summary["crow_amsaa"]["type"] == "CrowAMSAAResult"
    for name in ("rates_by_period.csv", "lemons.csv", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
