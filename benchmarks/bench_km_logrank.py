"""Kaplan–Meier by group and the log-rank test at 1e6 rows, beside R's survival and lifelines.

Run on demand: ``python benchmarks/bench_km_logrank.py``.  The same data (1e6 units, times on a
0.1 grid so ties occur, 70 % events, 4 groups, 10 strata) is written to a CSV that R reads
before timing; R times ``survfit(Surv(t, d) ~ g)``, ``survdiff(Surv(t, d) ~ g)`` and
``survdiff(Surv(t, d) ~ g + strata(s))`` with ``system.time`` (median of the runs); lifelines
times one ``KaplanMeierFitter`` per group and ``multivariate_logrank_test``.  Target (issue 23):
KM with groups and log-rank under 0.5 s each.  Medians of interleaved runs; the machine is
shared, read the ratios.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SECTION = "survival"
N = 1_000_000
R_SCRIPT = """
suppressPackageStartupMessages(library(survival))
a <- commandArgs(trailingOnly = TRUE)
df <- read.csv(a[1]); runs <- as.integer(a[2])
med <- function(expr) median(replicate(runs, system.time(eval(expr))[["elapsed"]]))
cat(med(quote(survfit(Surv(t, d) ~ g, data = df))),
    med(quote(survdiff(Surv(t, d) ~ g, data = df))),
    med(quote(survdiff(Surv(t, d) ~ g + strata(s), data = df))), "\\n")
"""


def data(n: int = N, seed: int = 7) -> pd.DataFrame:
    """Weibull times on a 0.1 grid (ties), 70 % events, 4 groups, 10 strata."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, n)
    t = np.round(1000 * rng.weibull(1.2, n) * (1 + 0.1 * g), 1) + 0.1
    return pd.DataFrame({"t": t, "d": (rng.random(n) < 0.7).astype(int), "g": g,
                         "s": rng.integers(0, 10, n)})


def timed_together(fns: list[Callable[[], object]], runs: int) -> list[float]:
    """Median wall time of each function, calls interleaved so load spikes hit all alike."""
    for fn in fns:
        fn()
    out: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, times in zip(fns, out, strict=True):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return [statistics.median(x) for x in out]


def r_times(df: pd.DataFrame, runs: int) -> tuple[float, float, float] | None:
    """R's median seconds for survfit by group, survdiff, stratified survdiff (None: no R)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "km.csv", Path(tmp) / "km.R"
        df.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv), str(runs)], capture_output=True,
                             text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def measure(n: int = N, runs: int = 5) -> dict[str, float | None]:
    """Median seconds of reliab, lifelines and R on the same data."""
    from lifelines import KaplanMeierFitter
    from lifelines.statistics import multivariate_logrank_test

    from reliab.models import estimate_kaplan_meier, logrank_test

    df = data(n)
    t, d, g, s = (df[c].to_numpy() for c in ("t", "d", "g", "s"))

    def ll_km() -> None:
        for k in range(4):
            KaplanMeierFitter().fit(t[g == k], d[g == k])

    km, lr, lrs, both = timed_together([
        lambda: estimate_kaplan_meier(t, d, groups=g), lambda: logrank_test(t, d, g),
        lambda: logrank_test(t, d, g, strata=s),
        lambda: (estimate_kaplan_meier(t, d, groups=g), logrank_test(t, d, g))], runs)
    ll_k, ll_l = timed_together([ll_km, lambda: multivariate_logrank_test(t, g, d)], max(1, runs // 2))
    r = r_times(df, runs)
    return {"km_groups": km, "logrank": lr, "logrank_strata": lrs, "km_and_logrank": both,
            "lifelines_km_groups": ll_k, "lifelines_logrank": ll_l,
            "r_survfit_groups": r[0] if r else None, "r_survdiff": r[1] if r else None,
            "r_survdiff_strata": r[2] if r else None}


def run() -> list:
    """Figures for the benchmark suite."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks._suite import Figure

    m = measure(runs=3)
    note = (f"lifelines KM by group {m['lifelines_km_groups']:.3f} s, "
            f"multivariate_logrank_test {m['lifelines_logrank']:.3f} s")
    return [
        Figure(SECTION, "Kaplan-Meier 1e6, 4 groups", m["km_groups"], "s", "R survfit ~ g",
               m["r_survfit_groups"], "<= 0.5 s", m["km_groups"] <= 0.5, note=note),
        Figure(SECTION, "log-rank 1e6, 4 groups", m["logrank"], "s", "R survdiff", m["r_survdiff"],
               "<= 0.5 s", m["logrank"] <= 0.5),
        Figure(SECTION, "log-rank 1e6, 4 groups, 10 strata", m["logrank_strata"], "s",
               "R survdiff + strata()", m["r_survdiff_strata"]),
    ]


if __name__ == "__main__":
    res = measure()
    for key, val in res.items():
        print(f"{key:22s} {'n/a' if val is None else f'{val:.3f} s'}")
