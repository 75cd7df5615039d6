"""The committed R reference values (``tests/reference/r/*_values.csv``), read once per file.

Each CSV row is ``case, quantity, value``; a vector quantity is written as ``name[1]``,
``name[2]``…, and is returned as the list of its elements in file order.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

REF = Path(__file__).parent / "reference" / "r"


@cache
def r_values(name: str) -> dict[tuple[str, str], list[float]]:
    """``(case, quantity) -> values`` of ``tests/reference/r/{name}_values.csv``."""
    out: dict[tuple[str, str], list[float]] = {}
    with (REF / f"{name}_values.csv").open(newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault((row["case"], row["quantity"].split("[")[0]), []).append(float(row["value"]))
    return out
