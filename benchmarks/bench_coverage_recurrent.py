"""Coverage of reliab's 95 % intervals for MTBF, Crow–AMSAA and the Nelson MCF, by simulation.

Run: ``python benchmarks/bench_coverage_recurrent.py [--reps 2000] [--seed 2024]``.

Each line prints the empirical coverage of a nominal 95 % two-sided interval with its
Clopper–Pearson 95 % interval, beside a baseline measured in the same run on the same data:

* MTBF: the large-sample normal (Wald) interval ``θ̂ (1 ± z/√r)``;
* Crow–AMSAA β: a Wald interval on log β with ``se = 1/√n``;
* MCF: the same bounds with the one-sided ``z = 1.645`` used by ``reliability``'s
  ``MCF_nonparametric`` (``reliability/Repairable_systems.py``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from reliab.models import crow_amsaa
from reliab.models.mcf import nelson_mcf
from reliab.models.mtbf import chi2_mtbf_bounds

Z = stats.norm.ppf(0.975)


def _fmt(name: str, hits: int, n: int, base_hits: int | None = None, base: str = "") -> str:
    lo, hi = proportion_confint(hits, n, alpha=0.05, method="beta")
    line = f"{name:<52s} {hits / n:6.3f}  [{lo:.3f}, {hi:.3f}]  n={n}"
    if base_hits is not None:
        line += f"   baseline {base}: {base_hits / n:.3f}"
    return line


def bench_mtbf(rng: np.random.Generator, reps: int) -> list[str]:
    """Exponential MTBF, time-terminated, expected failures 3 / 10 / 50."""
    out = []
    theta = 100.0
    for mu in (3, 10, 50):
        t = mu * theta
        r = rng.poisson(mu, size=reps)
        r = r[r > 0]
        low, high = chi2_mtbf_bounds(r, t)
        est = t / r
        hits = int(np.sum((low <= theta) & (theta <= high)))
        wald = int(np.sum(np.abs(est - theta) <= Z * est / np.sqrt(r)))
        out.append(_fmt(f"MTBF chi-square, time-terminated, E[r]={mu}", hits, r.size, wald, "Wald"))
    return out


def _power_law_time(rng: np.random.Generator, beta: float, mu: float, end: float) -> np.ndarray:
    n = rng.poisson(mu)
    return np.sort(end * rng.uniform(size=n) ** (1 / beta))


def bench_crow(rng: np.random.Generator, reps: int) -> list[str]:
    """Crow–AMSAA β, instantaneous and cumulative MTBF, time- and failure-terminated."""
    out = []
    lam = 1.0
    for termination in ("time", "failure"):
        for beta in (0.5, 1.5):
            hits = base = inst = cum = used = 0
            end = 100.0
            mu = 20.0
            for _ in range(reps):
                if termination == "time":
                    t = _power_law_time(rng, beta, mu, end)
                    if t.size < 2:
                        continue
                    fit = crow_amsaa(t, end=end)
                    tend = end
                    lam_true = mu / end**beta
                else:
                    t = (np.cumsum(rng.exponential(size=20)) / lam) ** (1 / beta)
                    fit = crow_amsaa(t)
                    tend, lam_true = t[-1], lam
                used += 1
                p = fit.params.loc["beta"]
                hits += p["low"] <= beta <= p["high"]
                se = 1 / np.sqrt(fit.n)
                base += abs(np.log(fit.beta) - np.log(beta)) <= Z * se
                m_true = 1 / (lam_true * beta * tend ** (beta - 1))
                inst += fit.mtbf_instantaneous[1] <= m_true <= fit.mtbf_instantaneous[2]
                c_true = tend ** (1 - beta) / lam_true
                cum += fit.mtbf_cumulative[1] <= c_true <= fit.mtbf_cumulative[2]
            tag = f"Crow-AMSAA {termination}-terminated β={beta}"
            out.append(_fmt(f"{tag}: beta", int(hits), used, int(base), "Wald log β"))
            out.append(_fmt(f"{tag}: instantaneous MTBF", int(inst), used))
            out.append(_fmt(f"{tag}: cumulative MTBF", int(cum), used))
    return out


def bench_mcf(rng: np.random.Generator, reps: int) -> list[str]:
    """Nelson MCF at t0 = 8, staggered windows, power-law recurrences (β = 1.5, θ = 10)."""
    out = []
    beta, theta, t0 = 1.5, 10.0, 8.0
    truth = (t0 / theta) ** beta
    z1 = stats.norm.ppf(0.95)
    for m in (20, 40, 100, 300):
        hits = base = 0
        for _ in range(reps):
            start, end = rng.uniform(0, 4, m), rng.uniform(8, 16, m)
            lo_c, hi_c = (start / theta) ** beta, (end / theta) ** beta
            counts = rng.poisson(hi_c - lo_c)
            unit = np.repeat(np.arange(m), counts)
            cum = rng.uniform(np.repeat(lo_c, counts), np.repeat(hi_c, counts))
            times, _, _, mcf, var = nelson_mcf(unit, theta * cum ** (1 / beta), start, end)
            k = np.searchsorted(times, t0, side="right") - 1
            est, se = mcf[k], np.sqrt(var[k])
            hits += est * np.exp(-Z * se / est) <= truth <= est * np.exp(Z * se / est)
            base += est * np.exp(-z1 * se / est) <= truth <= est * np.exp(z1 * se / est)
        out.append(_fmt(f"MCF(8) two-sided log bounds, {m} units", int(hits), reps, int(base),
                        "one-sided z=1.645"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"nominal 95 % two-sided intervals; {args.reps} replications; seed {args.seed}")
    print(f"{'interval':<52s} {'cover':>6s}  [95 % Clopper-Pearson]")
    for bench in (bench_mtbf, bench_crow, bench_mcf):
        t0 = time.perf_counter()
        for line in bench(rng, args.reps):
            print(line)
        print(f"  ({bench.__name__}: {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
