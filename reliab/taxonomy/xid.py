"""The NVIDIA XID catalog as shipped data: mnemonic, resolution buckets, reliab's mapping.

Rows come from NVIDIA's "Analyzing Xid Catalog"
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; full table read through its
machine transcription ``leptonai/gpud``
``components/accelerator/nvidia/xid/catalog_generated.go``) with the cause flags (HW, DRV,
APP, SYSMEM, BUS, THERM, FB) of NVIDIA's older "Xid error listing" r555 (Sep 2024; as
transcribed in ``leptonai/gpud`` ``pkg/nvidia-query/xid/xid.go`` and Meta's
``facebookresearch/gcm`` ``gcm/health_checks/check_utils/xid_error_codes.py``) and reliab's
own mapping to a Table-5 category with a confidence level (this project's proposal, not a
published mapping).  Codes 155–169 are known by name only; their mapping is unverified.
The taxonomy *rules* decide classification; this table documents each code and is checked
against the rules by the tests.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from io import StringIO
from typing import Any

import pandas as pd


@cache
def _catalog() -> pd.DataFrame:
    text = resources.files("reliab.taxonomy").joinpath("xid_catalog.csv").read_text(encoding="utf-8")
    df = pd.read_csv(StringIO(text), keep_default_na=False, dtype=str)
    df["xid"] = df["xid"].astype(int)
    df["root_cause"] = df["root_cause"].str.lower() == "true"
    return df.set_index("xid", drop=False)


def xid_catalog() -> pd.DataFrame:
    """Every XID reliab knows: catalog fields, resolution buckets and the mapped category."""
    return _catalog().reset_index(drop=True).copy()


def catalog_entry(signal: str) -> dict[str, Any] | None:
    """Catalog row for a signal key ``xid:<code>``; ``None`` for other keys or unknown codes."""
    if not signal.startswith("xid:"):
        return None
    try:
        code = int(signal[4:])
    except ValueError:
        return None
    cat = _catalog()
    return None if code not in cat.index else {k: (v.item() if hasattr(v, "item") else v)
                                                for k, v in cat.loc[code].items()}


__all__ = ["xid_catalog", "catalog_entry"]
