"""Ticket category suggestions: trained on rule labels, validated, never applied."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliab import schema
from reliab.errors import InsufficientDataError
from reliab.taxonomy.suggest import suggest_ticket_categories

TEMPLATES = {
    "Faulty GPU": ["faulty GPU {g} replaced after it fell off the bus", "GPU swap on slot {g}: faulty GPU, RMA opened"],
    "Power Supply": ["power supply PSU{g} failed, replaced", "PSU {g} lost AC input, power supply swapped"],
    "Network Switch/Cable": ["switch port flapping, cable {g} reseated", "bad optic transceiver on switch leaf{g}, cable replaced"],
    "SSD": ["SSD nvme{g} failing, disk replaced", "local disk nvme{g} I/O errors, SSD swapped"],
}
UNMATCHED = ["GPU {g} dropped off, board RMA", "AC input lost on feed {g}, unit swapped"]


def _signals(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    t0 = pd.Timestamp("2024-06-01", tz="UTC")
    for cat, temps in TEMPLATES.items():
        for i in range(12):
            rows.append({"message": temps[i % 2].format(g=int(rng.integers(0, 8))), "truth": cat})
    for i, text in enumerate(UNMATCHED * 3):
        rows.append({"message": text.format(g=i), "truth": None})
    df = pd.DataFrame(rows)
    df["time"] = t0 + pd.to_timedelta(np.arange(len(df)), unit="h")
    df["host"], df["gpu"], df["job_id"] = "node0001", None, None
    df["source"], df["signal"], df["severity"] = "tickets", "ticket:incident", "info"
    df["origin"] = [f"tickets.csv:{i + 2}" for i in range(len(df))]
    return schema.conform(df.drop(columns="truth"), "signals")


def test_suggestions_for_unmatched_tickets() -> None:
    """Regression: rule-labelled tickets train a classifier that beats the baseline under CV."""
    sig = _signals()
    before = sig.copy()
    res = suggest_ticket_categories(sig)
    pd.testing.assert_frame_equal(sig, before)  # never applied, input untouched
    assert res.n_labelled == 48 and res.n_unlabelled == 6
    assert res.cv_accuracy > res.baseline_accuracy + 0.3
    assert set(res.table["suggested_category"]) <= set(TEMPLATES)
    assert res.table["probability"].between(0, 1).all()
    gpu_rows = res.table[res.table["message"].str.startswith("GPU")]
    assert (gpu_rows["suggested_category"] == "Faulty GPU").all()
    assert res.to_dict()["n_unlabelled"] == 6


def test_one_category_is_insufficient() -> None:
    """Edge: with a single trainable category there is nothing to learn."""
    sig = _signals()
    only = sig[sig["message"].str.contains("PSU|power supply")]
    with pytest.raises(InsufficientDataError):
        suggest_ticket_categories(only)
