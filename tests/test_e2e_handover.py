"""End-to-end hand-over audit: real corpus text laid out as a cluster team hands it over.

Each test builds a small hand-over folder under ``tmp_path`` from verbatim files of
``tests/reference/real_world/`` (per-host folders, archives, links, snapshots) and checks
what a user of ``reliab.ingest`` / ``reliab report`` sees.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import reliab
from reliab import analyze_environment

CORPUS = Path(__file__).parent / "reference" / "real_world"
SMI_Q_H100 = CORPUS / "nvidia_smi" / "gpud-nvidia-smi-q-535-h100x8.txt"


def _place(root: Path, layout: dict[str, Path]) -> Path:
    """Copy corpus files to ``root/<relative path>`` and return ``root``."""
    for rel, src in layout.items():
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return root


def test_environment_on_one_nvidia_smi_snapshot_says_why(tmp_path: Path) -> None:
    """An ``nvidia-smi -q`` snapshot (one sample per GPU) has no sampling interval: the
    power analyses are skipped with that reason, the study still runs, and no NumPy
    warning reaches the user (it used to fail whole: 'cannot convert float NaN to integer')."""
    res = reliab.ingest(_place(tmp_path, {"node-1/nvidia-smi-q.txt": SMI_Q_H100}))
    assert res.telemetry["power_w"].notna().sum() == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        study = analyze_environment(res.telemetry, min_step_w=100.0)
    skipped = dict(study.skipped)
    assert "one power sample per series" in skipped["power_swings"]
    assert "8 series" in skipped["power_swings"]
