"""The default category vocabulary: Llama 3 Table 5, plus NVLink, Planned and Unclassified.

Source: Llama 3 Herd of Models (arXiv 2407.21783, first release), §3.3.4 and Table 5
("Root-cause categorization of unexpected interruptions during a 54-day period of Llama 3
405B pre-training"); the derived figures in the comments are computed from that table.
"""

from __future__ import annotations

from types import MappingProxyType

import pandas as pd

# (category, component, published count, percentage as printed in the paper)
_TABLE5_ROWS: tuple[tuple[str, str, int, float], ...] = (
    ("Faulty GPU", "GPU", 148, 30.1),  # printed 30.1 %, but 148/419 = 35.3 % (computed)
    ("GPU HBM3 Memory", "GPU", 72, 17.2),
    ("Software Bug", "Dependency", 54, 12.9),
    ("Network Switch/Cable", "Network", 35, 8.4),
    ("Host Maintenance", "Unplanned Maintenance", 32, 7.6),
    ("GPU SRAM Memory", "GPU", 19, 4.5),
    ("GPU System Processor", "GPU", 17, 4.1),
    ("NIC", "Host", 7, 1.7),
    ("NCCL Watchdog Timeouts", "Unknown", 7, 1.7),
    ("Silent Data Corruption", "GPU", 6, 1.4),
    ("GPU Thermal Interface + Sensor", "GPU", 6, 1.4),
    ("SSD", "Host", 3, 0.7),
    ("Power Supply", "Host", 3, 0.7),
    ("Server Chassis", "Host", 2, 0.5),
    ("IO Expansion Board", "Host", 2, 0.5),
    ("Dependency", "Dependency", 2, 0.5),
    ("CPU", "Host", 2, 0.5),
    ("System Memory", "Host", 2, 0.5),
)

#: Llama 3 §3.3.4: 466 interruptions in 54 days, 47 planned, 419 unexpected.
LLAMA3_DAYS = 54
LLAMA3_GPUS = 16_384
LLAMA3_GPUS_PER_NODE = 8
LLAMA3_PLANNED = 47
LLAMA3_UNEXPECTED = 419
LLAMA3_TOTAL = 466

#: Extra categories beyond Table 5.
EXTRA_CATEGORIES: MappingProxyType[str, str] = MappingProxyType(
    {"NVLink": "GPU", "Planned": "Planned", "Unclassified": "Unknown"}
)

#: category -> component class, for every category reliab knows.
COMPONENT_OF: MappingProxyType[str, str] = MappingProxyType(
    {**{row[0]: row[1] for row in _TABLE5_ROWS}, **EXTRA_CATEGORIES}
)

#: category -> published count (unexpected interruptions only).
TABLE5_COUNTS: MappingProxyType[str, int] = MappingProxyType({r[0]: r[2] for r in _TABLE5_ROWS})


def table5() -> pd.DataFrame:
    """Llama 3 Table 5 as published, with shares recomputed from the counts.

    Returns
    -------
    pandas.DataFrame
        Columns ``category``, ``component``, ``count``, ``pct_printed`` and
        ``pct_from_count`` (count / 419 × 100). The two percentage columns differ only for
        *Faulty GPU* (30.1 printed, 35.3 by count) — a misprint in the paper.
    """
    df = pd.DataFrame(_TABLE5_ROWS, columns=["category", "component", "count", "pct_printed"])
    df["pct_from_count"] = 100.0 * df["count"] / df["count"].sum()
    return df


__all__ = ["table5", "COMPONENT_OF", "TABLE5_COUNTS", "EXTRA_CATEGORIES", "LLAMA3_DAYS",
           "LLAMA3_GPUS", "LLAMA3_GPUS_PER_NODE", "LLAMA3_PLANNED", "LLAMA3_UNEXPECTED",
           "LLAMA3_TOTAL"]
