"""Shared fixtures: the bundled sample is ingested once per test session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sample_ingest():
    """``reliab.ingest`` of the bundled Llama-3-scale sample (read-only: do not mutate).

    The sample is one training run, counted as Llama 3 counted (policy ``training-run``).
    """
    import reliab

    return reliab.ingest(reliab.sample_path(), policy="training-run")
