"""The README's notebook-style example runs as written (it is the first thing a newcomer tries)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.skipif(not README.exists(), reason="README not in this checkout")
def test_readme_python_example_runs(capsys, tmp_path, monkeypatch, sample_ingest) -> None:
    """Regression: the README's Python block executes and prints the explanation of xid:79."""
    import reliab

    block = re.search(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert block is not None
    # the block's ingest of the sample is the session's (tests/conftest.py sample_ingest, the same
    # call): reused, not read again; any other ingest call runs as written
    ingest = reliab.ingest

    def reused(path, **options):
        same = str(path) == str(reliab.sample_path()) and options == {"policy": "training-run"}
        return sample_ingest if same else ingest(path, **options)

    monkeypatch.setattr(reliab, "ingest", reused)
    monkeypatch.chdir(tmp_path)  # the example writes my-report/report.html
    exec(compile(block.group(1), str(README), "exec"), {})  # noqa: S102 - our own README
    assert "Faulty GPU" in capsys.readouterr().out
    assert (tmp_path / "my-report" / "report.html").stat().st_size > 0
