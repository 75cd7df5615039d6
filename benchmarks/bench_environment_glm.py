"""Speed of the failure GLM: 1e6 node-windows beside statsmodels on the raw rows; 1e8 as cells.

Node-windows are drawn chunk by chunk (node temperature offset + a diurnal cycle + noise, at
0.1 °C resolution as telemetry reports it; failures Poisson with a true IRR of 1.08 per °C),
so 1e8 rows never exist at once: ``aggregate_cells`` keeps only the covariate cells.

Measured in one run, on whatever the machine is doing (report medians of ``repeat`` runs):

* baseline — ``statsmodels`` ``GLM(Poisson, exposure=)`` on the 1e6 raw rows;
* ``fit_failure_glm(..., cells=True)`` on the same rows (aggregation + fit), and the full
  row fit (Poisson + NB2 + overdispersion test);
* the cell fit on 1e8 rows streamed in 1e6-row chunks: wall time and peak memory
  (``tracemalloc`` peak of Python allocations and the process's max RSS), beside the memory
  a 1e8-row table of the same columns would need.

``python benchmarks/bench_environment_glm.py [rows_big] [repeat]`` (default 1e8, 3).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pandas as pd
import statsmodels.api as sm

from reliab import aggregate_cells, fit_failure_glm

IRR = 1.08
CHUNK = 1_000_000
COLS = ["temp_c_mean", "power_swings_count"]


def chunk(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """``n`` node-windows: temperature, checkpoint swings, one hour of exposure, failures."""
    hour = rng.integers(0, 24, n)
    temp = np.round(58 + rng.normal(0, 2, n) + 3.5 * np.cos(2 * np.pi * (hour - 15) / 24)
                    + rng.normal(0, 0.5, n), 1)
    swings = rng.choice([0, 2, 4], n, p=[0.05, 0.15, 0.8])
    lam = 2e-3 * IRR ** (temp - 60.0)
    return pd.DataFrame({"temp_c_mean": temp, "power_swings_count": swings, "hours": 1.0,
                         "failures": rng.poisson(lam)})


def stream(rows: int, seed: int) -> Iterator[pd.DataFrame]:
    rng = np.random.default_rng(seed)
    for start in range(0, rows, CHUNK):
        yield chunk(rng, min(CHUNK, rows - start))


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def small(repeat: int) -> dict:
    """1e6 rows: statsmodels on the raw rows (baseline) beside the cell fit and the row fit."""
    df = chunk(np.random.default_rng(0), CHUNK)
    x = sm.add_constant(df[COLS].to_numpy(float))
    y, e = df["failures"].to_numpy(float), df["hours"].to_numpy(float)
    t_sm, ref = timed(lambda: sm.GLM(y, x, family=sm.families.Poisson(), exposure=e).fit(), repeat)
    t_cells, cells = timed(lambda: fit_failure_glm(df, COLS, cells=True), repeat)
    t_rows, rows = timed(lambda: fit_failure_glm(df, COLS), 1)
    b_ref = float(ref.params[1])
    b_cells = float(cells.irr("temp_c_mean")["estimate"])
    b_rows = float(rows.irr("temp_c_mean", model="poisson")["estimate"])
    print(f"1e6 node-windows ({int(y.sum())} failures), median of {repeat}:")
    print(f"  statsmodels GLM on raw rows (baseline) {t_sm:7.2f} s   log IRR {b_ref:.6f}")
    print(f"  fit_failure_glm cells=True             {t_cells:7.2f} s   log IRR {b_cells:.6f} "
          f"({cells.n_cells} cells; {t_sm / t_cells:.1f}x faster; |diff| {abs(b_ref - b_cells):.1e})")
    print(f"  fit_failure_glm on rows (+NB2, CT test) {t_rows:6.2f} s   (1 run; {t_rows / t_sm:.1f}x "
          "the baseline)")
    return {"rows": CHUNK, "failures": int(y.sum()), "repeat": repeat,
            "statsmodels_raw_rows_s": t_sm, "cells_fit_s": t_cells, "rows_fit_nb2_s": t_rows,
            "cells": int(cells.n_cells), "cells_speedup": t_sm / t_cells,
            "log_irr_statsmodels": b_ref, "log_irr_cells": b_cells, "log_irr_rows": b_rows,
            "abs_diff_cells_vs_statsmodels": abs(b_ref - b_cells)}


def big(rows_big: int) -> dict:
    """``rows_big`` rows streamed into cells: time and peak memory (run first: clean RSS)."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    t = time.perf_counter()
    cells = aggregate_cells(stream(rows_big, 1), COLS)
    fit = fit_failure_glm(cells, COLS, count="failures", exposure="hours")
    secs = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = fit.irr("temp_c_mean")
    table_gb = rows_big * (len(COLS) + 2) * 8 / 1e9
    print(f"{rows_big:.0e} node-windows streamed in {CHUNK:.0e}-row chunks -> {len(cells):,} cells:")
    print(f"  aggregate + fit {secs:7.1f} s; peak traced memory {peak / 2**20:,.0f} MiB; "
          f"process max RSS {rss:,.0f} MiB (before: {rss0:,.0f} MiB)")
    print(f"  IRR per °C {row['irr']:.4f} [{row['irr_low']:.4f}, {row['irr_high']:.4f}] "
          f"(truth {IRR}); {int(fit.events):,} failures")
    print(f"  the rows as one float64 table would need {table_gb:,.1f} GB")
    return {"rows": rows_big, "chunk_rows": CHUNK, "cells": len(cells), "seconds": secs,
            "peak_traced_mib": peak / 2**20, "max_rss_mib": rss, "rss_before_mib": rss0,
            "irr": float(row["irr"]), "irr_low": float(row["irr_low"]),
            "irr_high": float(row["irr_high"]), "irr_truth": IRR, "failures": int(fit.events),
            "row_table_gb": table_gb}


def main(argv: list[str] | None = None) -> dict:
    """Run both parts; print the figures and return them as a JSON-safe dict.

    ``argv``: ``[rows_big] [repeat]`` (defaults 1e8 and 3).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    rows_big = int(float(args[0])) if args else 100_000_000
    repeat = int(args[1]) if len(args) > 1 else 3
    out = {"big": big(rows_big), "small": small(repeat)}
    t_sm = out["small"]["statsmodels_raw_rows_s"]
    out["statsmodels_big_extrapolated_min"] = t_sm * rows_big / CHUNK / 60
    print(f"statsmodels on {rows_big:.0e} raw rows would take ~{t_sm * rows_big / CHUNK / 60:,.0f} "
          "min at the 1e6 rate (not run)")
    return out


if __name__ == "__main__":
    main()
