"""Quarterly reliability analysis, scripted with reliab's public API only.

    python analyses/quarterly/run.py [LOG_DIR] [--period 27D] [--out analyses/quarterly/out]

Reads a cluster's raw logs (default: the bundled Llama-3-scale sample), then writes to
``out/``: rates per category and period with exact intervals, the period-over-period
rate comparison, trend tests and the Crow-AMSAA fit of unexpected interruptions, the
lemon-node ranking, and the HTML report.  Re-run it every quarter on the new logs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

import reliab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="?", default=None, help="raw log folder (default: bundled sample)")
    ap.add_argument("--period", default="27D", help="pandas frequency of a reporting period (e.g. QS, 27D)")
    ap.add_argument("--gpus", type=int, default=16384, help="GPUs in service")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    ap.add_argument("--policy", choices=("fleet", "training-run"), default=None,
                    help="what counts as an interruption (default: training-run for the bundled "
                         "sample, one training run; fleet for a cluster's logs)")
    ap.add_argument("--job-name", default=None, help="the training run, for --policy training-run")
    args = ap.parse_args()
    logs = Path(args.logs) if args.logs else reliab.sample_path()
    policy = args.policy or ("fleet" if args.logs else "training-run")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    res = reliab.ingest(logs, policy=policy, job_name=args.job_name)
    inter = res.interruptions
    start, end = res.jobs["start"].min(), res.jobs["end"].max()
    inter = inter.assign(period=inter["time"].dt.tz_localize(None).dt.to_period(args.period).astype(str)
                         if args.period.endswith(("Q", "QS", "M", "MS")) else
                         ((inter["time"] - start) // pd.Timedelta(args.period)).astype(int).map(lambda k: f"P{k + 1}"))

    # rates per category within each period, exposure = GPUs x period length
    tables = []
    for period, grp in inter.groupby("period"):
        days = min(pd.Timedelta(args.period), end - grp["time"].min()) / pd.Timedelta(days=1)
        r = reliab.estimate_rates(grp, gpu_days=args.gpus * days, job_hours=days * 24).summary()
        tables.append(r.assign(period=period, days=days))
    rates = pd.concat(tables, ignore_index=True)
    rates.to_csv(out / "rates_by_period.csv", index=False)

    # first vs last period, all unexpected causes: exact conditional test on the rate ratio
    totals = rates[rates["category"] == "Total"].set_index("period")
    first, last = totals.iloc[0], totals.iloc[-1]
    cmp = reliab.compare_rates(int(last["count"]), float(last["gpu_days"]), int(first["count"]), float(first["gpu_days"]))

    # trend of unexpected interruptions over the window (hours since start)
    hours = ((inter.loc[~inter["planned"], "time"] - start).dt.total_seconds() / 3600).sort_values().to_numpy()
    window_h = (end - start).total_seconds() / 3600
    trends = {m: reliab.trend_test(hours, end=window_h, method=m).to_dict()
              for m in ("laplace", "mil-hdbk-189", "reverse-arrangement")}
    growth = reliab.crow_amsaa(hours, end=window_h)

    hours_per_node = reliab.node_hours(res.jobs, end=end)
    lemons = reliab.find_lemons(res.signals, inter, node_hours=hours_per_node, jobs=res.jobs)
    lemons.top(25).to_csv(out / "lemons.csv", index=False)

    (out / "summary.json").write_text(json.dumps({
        "logs": str(logs), "policy": res.policy, "periods": sorted(inter["period"].unique()),
        "rate_ratio_last_vs_first": cmp.to_dict(), "trend_tests": trends,
        "crow_amsaa": growth.to_dict(), "lemons_flagged": lemons.lemons,
    }, indent=2, default=str))
    report = reliab.build_report(res, rates=reliab.estimate_rates(inter, gpu_days=args.gpus * window_h / 24,
                                                                  job_hours=window_h),
                                 title="Quarterly reliability report", meta={"logs": str(logs)})
    reliab.write_html(report, out / "report.html")
    print(f"wrote {out}: rates_by_period.csv, lemons.csv, summary.json, report.html")


if __name__ == "__main__":
    main()
