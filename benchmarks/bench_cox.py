"""Cox regression timed beside R ``survival::coxph`` and lifelines, same data, same run.

Run on demand: ``python benchmarks/bench_cox.py`` (or ``python -m benchmarks --only cox``).
1e5 rows x 5 covariates, failure times binned to 1/50 of the scale (about 600 distinct times,
so Efron's tie correction does real work), three fits:

* Efron ties;
* Efron ties with 10 strata (``strata(site)``);
* Efron ties with the robust sandwich variance clustered on 1000 units (``cluster(unit)``).

R is timed inside R with ``system.time`` around the ``coxph`` call only (the CSV read is not
timed); reliab and lifelines are timed in Python around the fit call (from the data frame).
Each figure is the median of several runs; target: reliab no slower than R.  Skipped (R
column NaN) when ``Rscript`` is not installed.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from lifelines import CoxPHFitter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reliab.models import fit_cox  # noqa: E402

SECTION = "cox"
COLS = [f"x{i}" for i in range(5)]
CASES = {  # name: (fit_cox keyword arguments, R formula tail, lifelines fit keyword arguments)
    "Cox 1e5 x 5, Efron": ({}, "", {}),
    "Cox 1e5 x 5, Efron, 10 strata": ({"strata": "site"}, " + strata(site)",
                                      {"strata": ["site"]}),
    "Cox 1e5 x 5, Efron, robust SE (1000 clusters)": ({"cluster": "unit"}, " + cluster(unit)",
                                                      {"cluster_col": "unit"}),
}

R_SCRIPT = """
suppressPackageStartupMessages(library(survival))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1]); runs <- as.integer(args[2])
tails <- strsplit(args[3], ";", fixed = TRUE)[[1]]
for (tail in tails) {
  f <- as.formula(paste("Surv(T, E) ~ x0 + x1 + x2 + x3 + x4", tail))
  fit <- coxph(f, d, ties = "efron")
  el <- replicate(runs, system.time(coxph(f, d, ties = "efron"))[["elapsed"]])
  cat(sprintf("%.6f %s\\n", median(el), paste(sprintf("%.17g", coef(fit)), collapse = " ")))
}
"""


def data(n: int = 100_000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    site = rng.integers(0, 10, n)
    unit = rng.integers(0, 1000, n)
    t = rng.exponential(np.exp(-x @ np.array([0.5, -0.3, 0.2, 0.0, 0.1]) - 0.1 * site))
    c = rng.exponential(2.0, n)
    df = pd.DataFrame(x, columns=COLS)
    df["T"] = np.ceil(np.minimum(t, c) * 50) / 50
    df["E"] = (t <= c).astype(int)
    df["site"], df["unit"] = site, unit
    return df


def median_time(fn: Callable[[], object], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def r_times(df: pd.DataFrame, runs: int) -> list[tuple[float, np.ndarray]]:
    """(median seconds, coefficients) of R coxph per case; NaN when R is missing."""
    if shutil.which("Rscript") is None:
        return [(float("nan"), np.full(5, np.nan)) for _ in CASES]
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "bench.R"
        df.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        tails = ";".join(tail for _, tail, _ in CASES.values())
        out = subprocess.run(["Rscript", str(script), str(csv), str(runs), tails],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    rows = [line.split() for line in out if line.strip()]
    return [(float(r[0]), np.array(r[1:], float)) for r in rows]


def measure(runs: int = 5, lifelines_runs: int = 3) -> list[dict]:
    df = data()
    r = r_times(df, runs)
    out = []
    for (name, (kw, _, llkw)), (r_sec, r_coef) in zip(CASES.items(), r, strict=True):
        fit = fit_cox(df, duration="T", event="E", covariates=COLS, **kw)
        ours = median_time(lambda kw=kw: fit_cox(df, duration="T", event="E", covariates=COLS,
                                                 **kw), runs)
        cols = COLS + ["T", "E"] + [c for c in ("site", "unit") if c in str(llkw)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ll = median_time(lambda llkw=llkw, cols=cols: CoxPHFitter().fit(
                df[cols], "T", "E", **llkw), lifelines_runs)
        diff = float(np.max(np.abs(fit.table["coef"].to_numpy() / r_coef - 1)))
        out.append({"name": name, "reliab": ours, "R": r_sec, "lifelines": ll, "coef_rel": diff})
    return out


def run() -> list:
    """Figures for the suite (``python -m benchmarks --only cox``)."""
    from benchmarks._suite import Figure

    return [Figure(SECTION, m["name"], m["reliab"], "s", "R survival::coxph", m["R"],
                   "no slower than R", bool(m["reliab"] <= m["R"]),
                   note=f"lifelines {m['lifelines']:.3f} s; max |rel diff| of coef vs R "
                        f"{m['coef_rel']:.1e}")
            for m in measure()]


if __name__ == "__main__":
    for m in measure():
        print(f"{m['name']}: reliab {m['reliab']:.3f} s, R coxph {m['R']:.3f} s "
              f"(R/reliab {m['R'] / m['reliab']:.1f}x), lifelines {m['lifelines']:.3f} s "
              f"(lifelines/reliab {m['lifelines'] / m['reliab']:.1f}x); coef vs R "
              f"{m['coef_rel']:.1e}")
