"""Where a report's exposure comes from: an inventory, the user's GPU count, or job records.

Closed-form checks (issue 11 item 1): GPU-days are counted by hand for a tiny fleet and must
match, and the sentence for the report's methods names the source.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from reliab import schema
from reliab._result import NotAvailable
from reliab.errors import InputFileError
from reliab.study import fleet_facts, read_inventory

WINDOW = ("2024-06-01T00:00:00Z", "2024-06-11T00:00:00Z")  # 10 days


def _jobs() -> pd.DataFrame:
    t0 = pd.Timestamp("2024-06-02", tz="UTC")
    return schema.conform(pd.DataFrame({
        "job_id": ["1", "2"], "name": ["a", "b"], "start": [t0, t0 + pd.Timedelta(days=9)],
        "end": [t0 + pd.Timedelta(days=1), t0 + pd.Timedelta(days=12)],  # the second runs past the window
        "state": ["COMPLETED", "FAILED"], "ngpus": [16, 8], "nnodes": [2, 1]}), "jobs")


def test_inventory_counts_each_unit_while_in_service(tmp_path: Path) -> None:
    csv = tmp_path / "inventory.csv"
    csv.write_text("unit,kind,installed,removed\n"
                   "g1,gpu,2024-01-01T00:00:00Z,\n"                      # whole window: 10 days
                   "g2,gpu,2024-06-06T00:00:00Z,\n"                      # from day 5: 5 days
                   "g3,gpu,2024-01-01T00:00:00Z,2024-06-03T12:00:00Z\n")  # until day 2.5
    fleet = fleet_facts(jobs=schema.empty("jobs"), signals=schema.empty("signals"),
                        inventory=read_inventory(csv), window=WINDOW)
    assert fleet.exposure_source == "inventory" and fleet.gpu_days == pytest.approx(17.5)
    assert "from the inventory" in fleet.describe() and "18 GPU-days" in fleet.describe()


def test_user_number_and_job_records() -> None:
    given = fleet_facts(jobs=_jobs(), signals=schema.empty("signals"), gpus=16, window=WINDOW)
    assert given.gpu_days == pytest.approx(160.0) and "16 GPUs (the number given)" in given.describe()
    from_jobs = fleet_facts(jobs=_jobs(), signals=schema.empty("signals"), window=WINDOW)
    # 16 GPUs x 1 day + 8 GPUs x the 0 days the second job overlaps the window (it starts on day 10)
    assert from_jobs.exposure_source == "jobs" and from_jobs.gpu_days == pytest.approx(16.0)
    assert "from the job records" in from_jobs.describe()


def test_nothing_to_derive_it_from_says_why(tmp_path: Path) -> None:
    out = fleet_facts(jobs=schema.empty("jobs"), signals=schema.empty("signals"), window=WINDOW)
    assert isinstance(out, NotAvailable) and "--gpus N" in out.reason
    bad = tmp_path / "inv.csv"
    bad.write_text("unit,installed\ng1,2024-01-01\n")
    with pytest.raises(InputFileError, match="kind"):
        read_inventory(bad)
    with pytest.raises(ValueError, match="gpus"):
        fleet_facts(jobs=_jobs(), signals=schema.empty("signals"), gpus=0, window=WINDOW)
