"""Write two quarters of sample logs: 2024Q1 and 2024Q2, with one category's rate tripled.

Usage::

    python data/quarters/generate.py [OUT_DIR]     # default: this folder

Uses only the public API of ``reliab.datasets`` (synthetic data; see SOURCE.md).  A 1,024-GPU
training cluster (128 nodes x 8) is simulated for 91 days per quarter with Poisson counts
whose means follow the shares of Llama 3 Table 5 (arXiv 2407.21783) at 150 unexpected
interruptions per quarter; in 2024Q2 the mean of ``GPU HBM3 Memory`` is three times that of
2024Q1, so the quarterly comparison must flag that category.  Telemetry is dropped and the
logs are gzip-compressed (reliab reads them transparently) to keep the folder small.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

from reliab.datasets import simulate_cluster
from reliab.taxonomy.vocabulary import table5

QUARTERS = {"2024Q1": ("2024-01-01T00:00:00Z", 91.0, 20240101),
            "2024Q2": ("2024-04-01T00:00:00Z", 91.0, 20240401)}
CHANGED, FACTOR = "GPU HBM3 Memory", 3.0
N_GPUS, PER_QUARTER, PLANNED = 1024, 150.0, 10.0


def rates(quarter: str) -> dict[str, float]:
    """Expected interruptions per category over the quarter."""
    t5 = table5()
    means = {r.category: PER_QUARTER * r.count / t5["count"].sum() for r in t5.itertuples()}
    if quarter == "2024Q2":
        means[CHANGED] *= FACTOR
    return {**means, "Planned": PLANNED}


def write(out: Path) -> dict[str, Path]:
    """Write both quarters under ``out/<quarter>/`` and return the folders."""
    folders = {}
    for quarter, (start, days, seed) in QUARTERS.items():
        folder = out / quarter
        shutil.rmtree(folder, ignore_errors=True)
        sim = simulate_cluster(n_gpus=N_GPUS, days=days, start=start, counts="expected", seed=seed,
                               rates=rates(quarter), telemetry_nodes=1, other_jobs_per_day=1.0)
        sim.write(folder)
        shutil.rmtree(folder / "telemetry", ignore_errors=True)
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "truth" not in path.parts and path.suffix != ".gz" \
                    and path.name not in ("cluster.json", "reliab.toml"):
                with path.open("rb") as src, gzip.GzipFile(path.with_name(path.name + ".gz"), "wb",
                                                             mtime=0) as dst:
                    shutil.copyfileobj(src, dst)
                path.unlink()
        (folder / "cluster.json").write_text(json.dumps({"n_gpus": N_GPUS, "gpus_per_node": 8,
                                                         "start": start, "days": days}, indent=1))
        folders[quarter] = folder
    return folders


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
